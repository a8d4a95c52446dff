/*
 * llama/status.h -- the one status vocabulary shared by every llm library.
 *
 * Every fallible function in llm returns an llm_status: 0 is success,
 * negative values are errors, positive values are non-fatal outcomes that the
 * caller may want to act on (the work was cancelled, the context is full).
 *
 *     llm_status st = llm_tokenizer_encode(tok, text, len, ids, cap, &n);
 *     if (st < 0) fprintf(stderr, "%s\n", llm_tokenizer_last_error());
 *
 * Each library keeps the text of its last error per thread (or per handle,
 * where a handle exists) and documents how to read it. This header includes
 * only standard C headers and is safe to include from C11 and C++.
 */
#ifndef LLAMA_STATUS_H
#define LLAMA_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum llm_status {
    LLM_OK = 0,

    /* Non-fatal outcomes (> 0). */
    LLM_CANCELLED = 1,     /* the caller's cancel flag stopped the work; state is usable */
    LLM_CONTEXT_FULL = 2,  /* no room for more tokens in this sequence */
    LLM_END_OF_STREAM = 3, /* an end-of-generation token or stop sequence was reached */

    /* Errors (< 0). */
    LLM_ERR_INVALID_ARG = -1,   /* a NULL or out-of-range argument: a programming error */
    LLM_ERR_NO_MEMORY = -2,     /* an allocation failed; nothing was changed */
    LLM_ERR_IO = -3,            /* a file could not be opened, read, mapped or written */
    LLM_ERR_BAD_FORMAT = -4,    /* malformed input file or text (bad magic, truncated, lies) */
    LLM_ERR_UNSUPPORTED = -5,   /* a valid input using a feature we do not implement */
    LLM_ERR_NOT_FOUND = -6,     /* a named key, tensor or token does not exist */
    LLM_ERR_BAD_UTF8 = -7,      /* text that is not valid UTF-8 */
    LLM_ERR_BUFFER_TOO_SMALL = -8, /* the caller's buffer is too small (see the function) */
    LLM_ERR_EXHAUSTED = -9,     /* a pool (KV blocks, arena) has no room left */
    LLM_ERR_BACKEND = -10,      /* the compute backend failed (e.g. a CUDA error) */
    LLM_ERR_STATE = -11,        /* the call is not valid in the object's current state */
    LLM_ERR_INTERNAL = -12      /* a bug: an invariant did not hold */
} llm_status;

/* A short, static, English name for a status code ("ok", "bad format", ...).
 * Never NULL; unknown codes give "unknown status". */
static inline const char *llm_status_str(llm_status st) {
    switch (st) {
    case LLM_OK: return "ok";
    case LLM_CANCELLED: return "cancelled";
    case LLM_CONTEXT_FULL: return "context full";
    case LLM_END_OF_STREAM: return "end of stream";
    case LLM_ERR_INVALID_ARG: return "invalid argument";
    case LLM_ERR_NO_MEMORY: return "out of memory";
    case LLM_ERR_IO: return "I/O error";
    case LLM_ERR_BAD_FORMAT: return "bad format";
    case LLM_ERR_UNSUPPORTED: return "unsupported";
    case LLM_ERR_NOT_FOUND: return "not found";
    case LLM_ERR_BAD_UTF8: return "invalid UTF-8";
    case LLM_ERR_BUFFER_TOO_SMALL: return "buffer too small";
    case LLM_ERR_EXHAUSTED: return "pool exhausted";
    case LLM_ERR_BACKEND: return "backend error";
    case LLM_ERR_STATE: return "invalid state";
    case LLM_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_STATUS_H */
