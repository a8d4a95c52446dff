/* llama/runtime.h -- placeholder; the owner of libs/runtime replaces this. */
#ifndef LLAMA_RUNTIME_H
#define LLAMA_RUNTIME_H
#include "llama/status.h"
#ifdef __cplusplus
extern "C" {
#endif
/* The library's version string, e.g. "0.1.0". */
const char *llm_runtime_version(void);
#ifdef __cplusplus
}
#endif
#endif
