/* Error text: one thread-local buffer for llm_last_error(), plus per-handle
 * copies written by the model and session code through llm__set_error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "llama/engine.h"
#include "engine_error.h"

static _Thread_local char tls_error[LLM__ERR_CAP];

const char *llm_last_error(void) { return tls_error; }

llm_status llm__fail(char *handle_buf, llm_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tls_error, sizeof tls_error, fmt, ap);
    va_end(ap);
    if (handle_buf) {
        memcpy(handle_buf, tls_error, LLM__ERR_CAP);
    }
    return st;
}

void llm__clear_error(void) { tls_error[0] = '\0'; }
