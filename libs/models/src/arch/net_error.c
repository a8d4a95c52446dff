/*
 * arch/net_error.c -- the net's error channel: the thread-local message of
 * llm_net_last_error, set by every net*.c file and the architectures. A
 * leaf: it calls nothing of libs/models.
 */
#include <stdarg.h>

#include "arch/net_internal.h"
#include "llama/error.h"

const char *llm_net_last_error(void) { return llm__err_get(LLM__ERR_NET); }

LLM__DEFINE_FAIL(llm__net_err, LLM__ERR_NET)

llm_status llm__net_op(llm_status st) {
    if (st < 0) {
        llm__err_set(LLM__ERR_NET, st, "%s", llm_runtime_last_error());
    }
    return st;
}
