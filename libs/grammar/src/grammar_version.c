#include "llama/error.h"
#include "llama/grammar.h"

const char *llm_grammar_version(void) { return "0.1.0"; }

const char *llm_grammar_last_error(void) { return llm__err_get(LLM__ERR_GRAMMAR); }
