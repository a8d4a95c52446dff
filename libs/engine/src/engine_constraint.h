/* Private to llama-engine: constrained generation (llama/engine.h's
 * llm_constraint) on the grammar library. engine_constraint.c is a leaf:
 * sessions, decoding and the scheduler call it, it calls none of them. */
#ifndef LLM_ENGINE_CONSTRAINT_H
#define LLM_ENGINE_CONSTRAINT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "llama/engine.h"
#include "llama/grammar.h"

typedef struct llm__cgram llm__cgram; /* a compiled grammar + prototype matcher, shared */

/* Most compiled constraints a model keeps for reuse (keyed by their text). */
#define LLM__CGRAM_CACHE 16

/* A model's grammar state, created lazily on the first constraint (lock). */
typedef struct llm__model_grammar {
    pthread_mutex_t lock;          /* guards everything below */
    llm_grammar_vocab *vocab;      /* token bytes + EOG / special flags, or NULL until needed */
    llm__cgram *cache[LLM__CGRAM_CACHE]; /* most recently used last; NULL slots first */
} llm__model_grammar;

/* One session's (or scheduler request's) constraint. The matcher's step k
 * is the context token at index anchor + k (an end-of-generation token,
 * which never enters the context, may be the last step). */
typedef struct llm__constraint {
    llm__cgram *cg;           /* shared, one reference held */
    llm_grammar_matcher *m;   /* this sequence's matcher (a clone of the prototype) */
    int32_t anchor;           /* context index of the first constrained token; -1 before it */
    int32_t n_vocab;
    uint32_t *mask;           /* [LLM_GRAMMAR_MASK_WORDS(n_vocab)] scratch of the mask hook */
} llm__constraint;

void llm__model_grammar_init(llm__model_grammar *g);
/* Frees the vocabulary and the cache; every constraint must be freed. */
void llm__model_grammar_free(llm__model_grammar *g);

struct llm_model;
/* Compiles `c` (a JSON schema is converted to GBNF first) on `m`'s
 * vocabulary, taking it from the model's cache when the same text was
 * compiled before, and returns a constraint at the grammar's start in *out.
 * Errors: LLM_ERR_INVALID_ARG (both or neither of grammar / json_schema,
 * bad trigger lists), LLM_ERR_BAD_FORMAT, LLM_ERR_BAD_UTF8,
 * LLM_ERR_UNSUPPORTED, LLM_ERR_EXHAUSTED, LLM_ERR_NO_MEMORY; the message
 * (naming the grammar library's complaint) goes to `err` and the thread. */
llm_status llm__constraint_new(struct llm_model *m, const llm_constraint *c, llm__constraint **out, char *err);
/* A copy with the same state and history (llm_session_fork). */
llm_status llm__constraint_clone(const llm__constraint *c, llm__constraint **out, char *err);
void llm__constraint_free(llm__constraint *c);

/* The sampler chain's mask hook (llama/sampling.h); user is the constraint. */
llm_status llm__constraint_mask(void *user, const int32_t *ids, float *logits, size_t n);
/* Advances the matcher by `tok`, sampled for context index `pos`. */
llm_status llm__constraint_accept(llm__constraint *c, int32_t pos, llm_token tok, char *err);
/* Back to the grammar's start (a new answer begins). NULL is harmless. */
void llm__constraint_restart(llm__constraint *c);
/* The context was cut to n_keep tokens: roll back the steps of the tokens
 * cut, or restart when the cut reaches the first constrained token. */
void llm__constraint_truncate(llm__constraint *c, int32_t n_keep);

#endif
