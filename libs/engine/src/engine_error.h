/* Private to llama-engine: error recording (no engine types, so files that
 * cannot include llama/engine.h next to a lower header can use it too). */
#ifndef LLM_ENGINE_ERROR_H
#define LLM_ENGINE_ERROR_H

#include "llama/status.h"

#define LLM__ERR_CAP 512

/* Records a printf-style message as this thread's last error (the engine's
 * slot of llama/error.h, read by llm_last_error()) and, when handle_buf is
 * not NULL, in that handle's buffer (LLM__ERR_CAP bytes). Returns st so
 * callers can write `return llm__fail(...)`.
 *
 * Pass a handle's buffer only from a call that has the handle to itself (a
 * non-const model or session call). A call documented as const and
 * thread-safe (llm_tokenize, llm_detokenize, llm_chat_apply, ...) passes
 * NULL: several threads may run it on one model at once, and a shared buffer
 * written by two threads is a data race. Its message is in llm_last_error(). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
llm_status llm__fail(char *handle_buf, llm_status st, const char *fmt, ...);
void llm__clear_error(void);

#endif
