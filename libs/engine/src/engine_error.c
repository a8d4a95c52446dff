/* Error text of the engine (llama/error.h): the thread's LLM__ERR_ENGINE slot
 * behind llm_last_error(), plus per-handle copies (model, session) written by
 * calls that own the handle, through llm__fail. */
#include <stdarg.h>

#include "llama/engine.h"
#include "llama/error.h"
#include "engine_error.h"

const char *llm_last_error(void) { return llm__err_get(LLM__ERR_ENGINE); }

llm_status llm__fail(char *handle_buf, llm_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    llm__err_vset_handle(LLM__ERR_ENGINE, handle_buf, handle_buf ? LLM__ERR_CAP : 0, st, fmt, ap);
    va_end(ap);
    return st;
}

void llm__clear_error(void) { llm__err_clear(LLM__ERR_ENGINE); }
