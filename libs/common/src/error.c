/* error.c -- per-thread message slots behind llama/error.h. */
#include <stdio.h>
#include <string.h>

#include "llama/error.h"

/* [slot][LLM__ERR_MSG_CAP]: every thread has its own slots (9 KB). */
static _Thread_local char tls_msg[LLM__ERR_N_SLOTS][LLM__ERR_MSG_CAP];

static int slot_ok(llm__err_slot slot) {
    return (int)slot >= 0 && (int)slot < (int)LLM__ERR_N_SLOTS;
}

llm_status llm__err_vset_handle(llm__err_slot slot, char *buf, size_t cap, llm_status st,
                                const char *fmt, va_list ap) {
    /* Format into a temporary: the arguments may point into a slot or into
     * buf itself. */
    char tmp[LLM__ERR_MSG_CAP];
    if (!fmt) fmt = "";
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    if (n < 0) tmp[0] = '\0';
    if (slot_ok(slot)) memcpy(tls_msg[slot], tmp, strlen(tmp) + 1);
    if (buf && cap > 0) snprintf(buf, cap, "%s", tmp);
    return st;
}

llm_status llm__err_set_handle(llm__err_slot slot, char *buf, size_t cap, llm_status st,
                               const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    llm__err_vset_handle(slot, buf, cap, st, fmt, ap);
    va_end(ap);
    return st;
}

llm_status llm__err_vset(llm__err_slot slot, llm_status st, const char *fmt, va_list ap) {
    return llm__err_vset_handle(slot, NULL, 0, st, fmt, ap);
}

llm_status llm__err_set(llm__err_slot slot, llm_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    llm__err_vset_handle(slot, NULL, 0, st, fmt, ap);
    va_end(ap);
    return st;
}

const char *llm__err_get(llm__err_slot slot) {
    return slot_ok(slot) ? tls_msg[slot] : "";
}

void llm__err_clear(llm__err_slot slot) {
    if (slot_ok(slot)) tls_msg[slot][0] = '\0';
}
