/* llama/tokenizer.h -- placeholder; the owner of libs/tokenizer replaces this. */
#ifndef LLAMA_TOKENIZER_H
#define LLAMA_TOKENIZER_H
#include "llama/status.h"
#ifdef __cplusplus
extern "C" {
#endif
/* The library's version string, e.g. "0.1.0". */
const char *llm_tokenizer_version(void);
#ifdef __cplusplus
}
#endif
#endif
