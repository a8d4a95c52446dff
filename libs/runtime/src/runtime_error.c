/* runtime_error.c -- the runtime's error message (llama/error.h slot
 * LLM__ERR_RUNTIME): llm__err for every file of the library, and the public
 * llm_runtime_last_error. A leaf: it calls nothing else of the runtime, so
 * the backends can use it without calling back into runtime.c. */
#include <stdarg.h>

#include "backend.h"
#include "llama/error.h"

const char *llm_runtime_last_error(void) { return llm__err_get(LLM__ERR_RUNTIME); }

LLM__DEFINE_FAIL(llm__err, LLM__ERR_RUNTIME)
