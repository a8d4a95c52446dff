/* llama/kv.h -- placeholder; the owner of libs/kv replaces this. */
#ifndef LLAMA_KV_H
#define LLAMA_KV_H
#include "llama/status.h"
#ifdef __cplusplus
extern "C" {
#endif
/* The library's version string, e.g. "0.1.0". */
const char *llm_kv_version(void);
#ifdef __cplusplus
}
#endif
#endif
