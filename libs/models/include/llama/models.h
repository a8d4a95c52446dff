/* llama/models.h -- placeholder; the owner of libs/models replaces this. */
#ifndef LLAMA_MODELS_H
#define LLAMA_MODELS_H
#include "llama/status.h"
#ifdef __cplusplus
extern "C" {
#endif
/* The library's version string, e.g. "0.1.0". */
const char *llm_models_version(void);
#ifdef __cplusplus
}
#endif
#endif
