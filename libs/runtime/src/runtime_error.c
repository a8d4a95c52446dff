/* runtime_error.c -- the runtime's error message (llama/error.h slot
 * LLM__ERR_RUNTIME): llm__err for every file of the library, and the public
 * llm_runtime_last_error. A leaf: it calls nothing else of the runtime, so
 * the backends can use it without calling back into runtime.c. */
#include <stdarg.h>

#include "backend.h"
#include "llama/error.h"

const char *llm_runtime_last_error(void) { return llm__err_get(LLM__ERR_RUNTIME); }

llm_status llm__err(llm_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    llm__err_vset(LLM__ERR_RUNTIME, st, fmt, ap);
    va_end(ap);
    return st;
}
