/*
 * util.c -- the error text every reader in llama-models shares (the file
 * mapping, name index and UTF-8 check are llama-common's llama/fileutil.h).
 */
#include <stdarg.h>

#include "formats/formats_internal.h"
#include "llama/error.h"

const char *llm_models_last_error(void) {
    return llm__err_get(LLM__ERR_MODELS);
}

void llm__models_clear_error(void) {
    llm__err_clear(LLM__ERR_MODELS);
}

llm_status llm__models_gguf_error(llm_status st) {
    return llm__models_error(st, "%s", llm_gguf_last_error());
}

LLM__DEFINE_FAIL(llm__models_error, LLM__ERR_MODELS)
