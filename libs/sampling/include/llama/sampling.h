/* llama/sampling.h -- placeholder; the owner of libs/sampling replaces this. */
#ifndef LLAMA_SAMPLING_H
#define LLAMA_SAMPLING_H
#include "llama/status.h"
#ifdef __cplusplus
extern "C" {
#endif
/* The library's version string, e.g. "0.1.0". */
const char *llm_sampling_version(void);
#ifdef __cplusplus
}
#endif
#endif
