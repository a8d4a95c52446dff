/*
 * llama/grammar.h -- constrained generation: GBNF grammars, a matcher over
 * code points, token masks over a vocabulary.
 *
 * Link llama-grammar. Messages of failed calls: llm_grammar_last_error().
 */
#ifndef LLAMA_GRAMMAR_H
#define LLAMA_GRAMMAR_H

#include "llama/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string, e.g. "0.1.0". Never NULL. */
const char *llm_grammar_version(void);

/* The calling thread's message of the last failed llm_grammar_* or
 * llm_json_schema_* call ("" when none). Valid until the thread's next
 * failing call of this library. */
const char *llm_grammar_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_GRAMMAR_H */
