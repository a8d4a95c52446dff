/* llama/engine.h -- placeholder; the owner of libs/engine replaces this. */
#ifndef LLAMA_ENGINE_H
#define LLAMA_ENGINE_H
#include "llama/status.h"
#ifdef __cplusplus
extern "C" {
#endif
/* The library's version string, e.g. "0.1.0". */
const char *llm_engine_version(void);
#ifdef __cplusplus
}
#endif
#endif
