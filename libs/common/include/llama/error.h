/*
 * llama/error.h -- the one error-message facility of the llm libraries.
 *
 * For the libraries themselves, not for applications: every name here is
 * internal (llm__) and may change between versions. Applications read
 * messages through each library's public *_last_error() function, which is
 * a one-line wrapper around llm__err_get().
 *
 * Each library owns one slot; each thread has its own copy of every slot, so
 * a message is never shared between threads and a message of one library is
 * never overwritten by another library. A library records a failure with
 *
 *     return llm__err_set(LLM__ERR_KV, LLM_ERR_EXHAUSTED, "no free block for seq %d", id);
 *
 * and its public function returns the slot:
 *
 *     const char *llm_kv_last_error(void) { return llm__err_get(LLM__ERR_KV); }
 *
 * Objects that keep their own message (a model, a session) pass a
 * handle-owned buffer to llm__err_set_handle(), which records the message in
 * the slot and copies it into the buffer. Only a call that owns the handle
 * exclusively may write its buffer: a call documented as const and
 * thread-safe records into the thread's slot only.
 *
 * The arguments may point into any slot (llm__err_set(S, st, "%s",
 * llm__err_get(S)) is fine): the message is formatted into a temporary first.
 * Messages longer than LLM__ERR_MSG_CAP - 1 bytes are truncated.
 *
 * Includes only standard C headers and llama/status.h; C11 and C++.
 */
#ifndef LLAMA_ERROR_H
#define LLAMA_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#include "llama/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size of one slot's buffer, NUL included. */
#define LLM__ERR_MSG_CAP 1024

/* One slot per library (and per separately documented message). */
typedef enum llm__err_slot {
    LLM__ERR_KV = 0,    /* llm_kv_last_error */
    LLM__ERR_SAMPLING,  /* llm_sampling_last_error */
    LLM__ERR_TOKENIZER, /* llm_tokenizer_last_error */
    LLM__ERR_CHAT,      /* llm_chat_last_error */
    LLM__ERR_RUNTIME,   /* llm_runtime_last_error */
    LLM__ERR_MODELS,    /* llm_models_last_error */
    LLM__ERR_NET,       /* llm_net_last_error */
    LLM__ERR_ENGINE,    /* llm_last_error */
    LLM__ERR_GGUF,      /* llm_gguf_last_error */
    LLM__ERR_GRAMMAR,   /* llm_grammar_last_error */
    LLM__ERR_N_SLOTS
} llm__err_slot;

#if defined(__GNUC__)
#define LLM__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define LLM__PRINTF(f, a)
#endif

/* Records a printf-style message in `slot` for the calling thread and
 * returns `st`, so a caller can write `return llm__err_set(...)`. An
 * out-of-range slot is ignored. */
LLM__PRINTF(3, 4)
llm_status llm__err_set(llm__err_slot slot, llm_status st, const char *fmt, ...);
llm_status llm__err_vset(llm__err_slot slot, llm_status st, const char *fmt, va_list ap);

/* Defines `name`, a library's printf-style failure wrapper: it records the
 * message in `slot` (llm__err_vset) and returns its status, so a library
 * writes `return llm__kv_fail(LLM_ERR_EXHAUSTED, "no free block")`. One
 * line per library instead of a copy of the same varargs body:
 *
 *     LLM__DEFINE_FAIL(llm__kv_fail, LLM__ERR_KV)          (kv_error.c)
 *
 * declared in the library's private header with LLM__PRINTF(2, 3) so every
 * call's format is checked. Prefix it with `static` for a file's own. */
#define LLM__DEFINE_FAIL(name, slot)                                        \
    llm_status name(llm_status st, const char *fmt, ...) {                  \
        va_list ap_;                                                        \
        va_start(ap_, fmt);                                                 \
        llm__err_vset((slot), st, fmt, ap_);                                \
        va_end(ap_);                                                        \
        return st;                                                          \
    }

/* As llm__err_set, and when `buf` is not NULL also copies the message into
 * the handle-owned buffer buf[cap] (NUL-terminated, truncated to fit). */
LLM__PRINTF(5, 6)
llm_status llm__err_set_handle(llm__err_slot slot, char *buf, size_t cap, llm_status st,
                               const char *fmt, ...);
llm_status llm__err_vset_handle(llm__err_slot slot, char *buf, size_t cap, llm_status st,
                                const char *fmt, va_list ap);

/* The calling thread's message in `slot`: "" when none was recorded (or
 * after llm__err_clear). Never NULL; valid until the thread's next
 * llm__err_set* on that slot, and until the thread exits. */
const char *llm__err_get(llm__err_slot slot);

/* Empties the calling thread's message in `slot`. */
void llm__err_clear(llm__err_slot slot);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_ERROR_H */
