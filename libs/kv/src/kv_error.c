/* kv_error.c -- the kv library's error messages (llama/error.h): a leaf that
 * every other file of the library calls and that calls none of them. */
#include <stdarg.h>

#include "kv_internal.h"
#include "llama/error.h"

/* The last error text of this thread: the pool is single-threaded, but two
 * threads using two pools must not see each other's messages. */
const char *llm_kv_last_error(void) { return llm__err_get(LLM__ERR_KV); }

LLM__DEFINE_FAIL(llm__kv_fail, LLM__ERR_KV)
