/*
 * gguf_util.c -- the reader's error slot (llm_gguf_last_error) and page
 * release; the file mapping and name index are llama/fileutil.h's.
 */
#include <stdarg.h>

#include "gguf_internal.h"
#include "llama/error.h"

const char *llm_gguf_last_error(void) { return llm__err_get(LLM__ERR_GGUF); }

void llm__gguf_clear_error(void) { llm__err_clear(LLM__ERR_GGUF); }

LLM__DEFINE_FAIL(llm__gguf_error, LLM__ERR_GGUF)

void llm_gguf_release_pages(const llm_gguf *g, const void *p, size_t n) {
    if (g) llm__mapped_release(&g->map, p, n);
}
