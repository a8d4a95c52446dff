/*
 * arch/net_error.c -- the net's error channel: the thread-local message of
 * llm_net_last_error, set by every net*.c file and the architectures. A
 * leaf: it calls nothing of libs/models.
 */
#include <stdarg.h>

#include "arch/net_internal.h"
#include "llama/error.h"

const char *llm_net_last_error(void) { return llm__err_get(LLM__ERR_NET); }

llm_status llm__net_err(llm_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    llm__err_vset(LLM__ERR_NET, st, fmt, ap);
    va_end(ap);
    return st;
}

llm_status llm__net_op(llm_status st) {
    if (st < 0) {
        llm__err_set(LLM__ERR_NET, st, "%s", llm_runtime_last_error());
    }
    return st;
}
