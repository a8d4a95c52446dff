/* Constrained generation (llama/engine.h's llm_constraint): a GBNF grammar
 * or a JSON schema (converted to GBNF by llama/json_schema.h) restricts the
 * tokens a session or a scheduler request may sample.
 *
 * The model builds one llm_grammar_vocab from its tokenizer on the first
 * constraint, and keeps the last LLM__CGRAM_CACHE compiled constraints,
 * each a parsed grammar and a prototype matcher at its start: every
 * sequence clones the prototype, so all sequences of one grammar share its
 * table of token classes (the first mask in a new grammar context walks the
 * vocabulary, later ones reuse it; llama/grammar.h). A compiled constraint
 * is reference-counted: the cache holds one reference, every sequence one.
 *
 * Each sequence masks the logits through the sampler chain's mask hook,
 * placed first in the chain, and feeds every sampled token to its matcher. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "llama/json_schema.h"

struct llm__cgram {
    atomic_int refs;
    char *key;                  /* GBNF text, NUL, lazy flag, trigger words and tokens */
    size_t key_len;
    llm_grammar *g;
    llm_grammar_matcher *proto; /* at the grammar's start; only cloned, under the model's lock */
};

static void cgram_unref(llm__cgram *cg) {
    if (!cg || atomic_fetch_sub(&cg->refs, 1) != 1) return;
    llm_grammar_matcher_free(cg->proto);
    llm_grammar_free(cg->g);
    free(cg->key);
    free(cg);
}

void llm__model_grammar_init(llm__model_grammar *g) {
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->lock, NULL);
}

void llm__model_grammar_free(llm__model_grammar *g) {
    for (int i = 0; i < LLM__CGRAM_CACHE; i++) cgram_unref(g->cache[i]);
    llm_grammar_vocab_free(g->vocab);
    pthread_mutex_destroy(&g->lock);
}

/* The model's token bytes as the grammar sees them: EOG tokens end the
 * grammar, control (and unknown, unused) tokens match token references only
 * and never text (model grammar lock held). */
static llm_status build_vocab_locked(llm_model *m, char *err) {
    llm__model_grammar *mg = &m->grammar;
    if (mg->vocab) return LLM_OK;
    const int32_t n = m->info.n_vocab, n_tok = llm_tokenizer_n_tokens(m->tok);
    const char **bytes = calloc((size_t)n, sizeof *bytes);
    size_t *lens = calloc((size_t)n, sizeof *lens);
    uint8_t *flags = calloc((size_t)n, 1);
    llm_status st = LLM_ERR_NO_MEMORY;
    if (bytes && lens && flags) {
        for (int32_t t = 0; t < n; t++) {
            size_t len = 0;
            const char *b = t < n_tok ? llm_tokenizer_token_bytes(m->tok, t, &len) : NULL;
            bytes[t] = b ? b : "";
            lens[t] = b ? len : 0;
            const llm_token_type ty = t < n_tok ? llm_tokenizer_token_type(m->tok, t) : LLM_TOKEN_TYPE_UNUSED;
            if (t < n_tok && llm_tokenizer_is_eog(m->tok, t)) flags[t] |= LLM_GRAMMAR_TOKEN_EOG;
            if (ty == LLM_TOKEN_TYPE_CONTROL || ty == LLM_TOKEN_TYPE_UNKNOWN || ty == LLM_TOKEN_TYPE_UNUSED)
                flags[t] |= LLM_GRAMMAR_TOKEN_SPECIAL;
        }
        st = llm_grammar_vocab_create(bytes, lens, n, flags, &mg->vocab);
    }
    free(bytes);
    free(lens);
    free(flags);
    if (st != LLM_OK) return llm__fail(err, st, "the model's token table for grammars: %s", llm_grammar_last_error());
    return LLM_OK;
}

/* The cache key of a constraint: everything its prototype depends on. */
static char *make_key(const char *gbnf, size_t glen, const llm_constraint *c, size_t *len) {
    size_t n = glen + 2;
    for (size_t i = 0; i < c->n_trigger_words; i++) n += strlen(c->trigger_words[i]) + 1;
    n += 1 + c->n_trigger_tokens * sizeof(int32_t);
    char *k = malloc(n), *p = k;
    if (!k) return NULL;
    memcpy(p, gbnf, glen);
    p += glen;
    *p++ = '\0';
    *p++ = c->lazy ? 'L' : 'G';
    for (size_t i = 0; i < c->n_trigger_words; i++) {
        size_t w = strlen(c->trigger_words[i]) + 1;
        memcpy(p, c->trigger_words[i], w);
        p += w;
    }
    *p++ = '\0';
    if (c->n_trigger_tokens) memcpy(p, c->trigger_tokens, c->n_trigger_tokens * sizeof(int32_t));
    *len = n;
    return k;
}

/* Finds or compiles the constraint's grammar (model grammar lock held);
 * on LLM_OK *out holds a new reference. Takes ownership of key. */
static llm_status cgram_get_locked(llm_model *m, char *key, size_t key_len, size_t glen, const llm_constraint *c,
                                   llm__cgram **out, char *err) {
    llm__model_grammar *mg = &m->grammar;
    for (int i = LLM__CGRAM_CACHE - 1; i >= 0; i--) {
        llm__cgram *cg = mg->cache[i];
        if (!cg || cg->key_len != key_len || memcmp(cg->key, key, key_len) != 0) continue;
        memmove(mg->cache + i, mg->cache + i + 1, (size_t)(LLM__CGRAM_CACHE - 1 - i) * sizeof *mg->cache);
        mg->cache[LLM__CGRAM_CACHE - 1] = cg; /* most recently used last */
        atomic_fetch_add(&cg->refs, 1);
        free(key);
        *out = cg;
        return LLM_OK;
    }
    llm__cgram *cg = calloc(1, sizeof *cg);
    if (!cg) {
        free(key);
        return llm__fail(err, LLM_ERR_NO_MEMORY, "out of memory");
    }
    atomic_init(&cg->refs, 1);
    cg->key = key;
    cg->key_len = key_len;
    llm_status st = llm_grammar_parse(key, glen, mg->vocab, &cg->g);
    if (st != LLM_OK) {
        llm__fail(err, st, "grammar: %s", llm_grammar_last_error());
        cgram_unref(cg);
        return st;
    }
    llm_grammar_matcher_params mp = llm_grammar_matcher_default_params();
    mp.lazy = c->lazy;
    mp.trigger_words = c->trigger_words;
    mp.n_trigger_words = (int32_t)c->n_trigger_words;
    mp.trigger_tokens = c->trigger_tokens;
    mp.n_trigger_tokens = (int32_t)c->n_trigger_tokens;
    st = llm_grammar_matcher_create(cg->g, mg->vocab, &mp, &cg->proto);
    if (st != LLM_OK) {
        llm__fail(err, st, "grammar: %s", llm_grammar_last_error());
        cgram_unref(cg);
        return st;
    }
    cgram_unref(mg->cache[0]); /* the least recently used leaves (its users keep it alive) */
    memmove(mg->cache, mg->cache + 1, (LLM__CGRAM_CACHE - 1) * sizeof *mg->cache);
    mg->cache[LLM__CGRAM_CACHE - 1] = cg;
    atomic_fetch_add(&cg->refs, 1);
    *out = cg;
    return LLM_OK;
}

static llm_status constraint_alloc(int32_t n_vocab, llm__constraint **out, char *err) {
    llm__constraint *c = calloc(1, sizeof *c);
    if (c) c->mask = malloc(LLM_GRAMMAR_MASK_WORDS(n_vocab) * sizeof *c->mask);
    if (!c || !c->mask) {
        if (c) free(c);
        return llm__fail(err, LLM_ERR_NO_MEMORY, "out of memory");
    }
    c->anchor = -1;
    c->n_vocab = n_vocab;
    *out = c;
    return LLM_OK;
}

llm_status llm__constraint_new(llm_model *m, const llm_constraint *c, llm__constraint **out, char *err) {
    *out = NULL;
    if ((c->grammar != NULL) == (c->json_schema != NULL))
        return llm__fail(err, LLM_ERR_INVALID_ARG, "constraint: give exactly one of grammar and json_schema");
    if ((c->n_trigger_words && !c->trigger_words) || (c->n_trigger_tokens && !c->trigger_tokens) ||
        c->n_trigger_words > INT32_MAX || c->n_trigger_tokens > INT32_MAX)
        return llm__fail(err, LLM_ERR_INVALID_ARG, "constraint: bad trigger list");
    for (size_t i = 0; i < c->n_trigger_words; i++)
        if (!c->trigger_words[i] || !*c->trigger_words[i])
            return llm__fail(err, LLM_ERR_INVALID_ARG, "constraint: trigger word %zu is NULL or empty", i);
    for (size_t i = 0; i < c->n_trigger_tokens; i++)
        if (c->trigger_tokens[i] < 0 || c->trigger_tokens[i] >= m->info.n_vocab)
            return llm__fail(err, LLM_ERR_INVALID_ARG, "constraint: trigger token %d outside [0, %d)",
                             c->trigger_tokens[i], m->info.n_vocab);
    if (c->lazy && !c->n_trigger_words && !c->n_trigger_tokens)
        return llm__fail(err, LLM_ERR_INVALID_ARG, "constraint: a lazy grammar needs trigger words or tokens");
    char *schema_gbnf = NULL;
    const char *gbnf = c->grammar;
    size_t glen = 0;
    if (c->json_schema) {
        llm_status st = llm_json_schema_to_gbnf_alloc(c->json_schema, strlen(c->json_schema), NULL, &schema_gbnf,
                                                      &glen);
        if (st != LLM_OK) return llm__fail(err, st, "json_schema: %s", llm_grammar_last_error());
        gbnf = schema_gbnf;
    } else {
        glen = strlen(gbnf);
    }
    size_t key_len = 0;
    char *key = make_key(gbnf, glen, c, &key_len);
    llm_json_schema_free(schema_gbnf);
    if (!key) return llm__fail(err, LLM_ERR_NO_MEMORY, "out of memory");

    llm__model_grammar *mg = &m->grammar;
    llm__constraint *k = NULL;
    llm__cgram *cg = NULL;
    pthread_mutex_lock(&mg->lock);
    llm_status st = build_vocab_locked(m, err);
    if (st == LLM_OK) st = cgram_get_locked(m, key, key_len, glen, c, &cg, err);
    else free(key);
    if (st == LLM_OK) st = constraint_alloc(m->info.n_vocab, &k, err);
    if (st == LLM_OK && (st = llm_grammar_matcher_clone(cg->proto, &k->m)) != LLM_OK)
        llm__fail(err, st, "grammar: %s", llm_grammar_last_error());
    pthread_mutex_unlock(&mg->lock);
    if (st != LLM_OK) {
        if (k) free(k->mask);
        free(k);
        cgram_unref(cg);
        return st;
    }
    k->cg = cg;
    *out = k;
    return LLM_OK;
}

llm_status llm__constraint_clone(const llm__constraint *c, llm__constraint **out, char *err) {
    *out = NULL;
    llm__constraint *k = NULL;
    llm_status st = constraint_alloc(c->n_vocab, &k, err);
    if (st != LLM_OK) return st;
    if ((st = llm_grammar_matcher_clone(c->m, &k->m)) != LLM_OK) {
        free(k->mask);
        free(k);
        return llm__fail(err, st, "grammar: %s", llm_grammar_last_error());
    }
    atomic_fetch_add(&c->cg->refs, 1);
    k->cg = c->cg;
    k->anchor = c->anchor;
    *out = k;
    return LLM_OK;
}

void llm__constraint_free(llm__constraint *c) {
    if (!c) return;
    llm_grammar_matcher_free(c->m);
    cgram_unref(c->cg);
    free(c->mask);
    free(c);
}

llm_status llm__constraint_mask(void *user, const int32_t *ids, float *logits, size_t n) {
    llm__constraint *c = user;
    const size_t n_words = LLM_GRAMMAR_MASK_WORDS(c->n_vocab);
    llm_status st = llm_grammar_matcher_fill_mask(c->m, c->mask, n_words);
    if (st != LLM_OK) return st;
    const uint32_t *mask = c->mask;
    if (n == (size_t)c->n_vocab && (n == 0 || (ids[0] == 0 && ids[n - 1] == (int32_t)n - 1))) {
        /* The mask is the chain's first sampler: ids[i] == i. Whole words at
         * a time, skipping the all-allowed ones. */
        for (size_t w = 0; w < n_words; w++) {
            uint32_t bits = mask[w];
            if (bits == 0xFFFFFFFFu) continue;
            const size_t end = (w + 1) * 32 < n ? (w + 1) * 32 : n;
            for (size_t i = w * 32; i < end; i++)
                if (!((bits >> (i & 31)) & 1u)) logits[i] = -INFINITY;
        }
        return LLM_OK;
    }
    for (size_t i = 0; i < n; i++) {
        const int32_t t = ids[i];
        if (t < 0 || t >= c->n_vocab || !((mask[t >> 5] >> (t & 31)) & 1u)) logits[i] = -INFINITY;
    }
    return LLM_OK;
}

llm_status llm__constraint_accept(llm__constraint *c, int32_t pos, llm_token tok, char *err) {
    llm_status st = llm_grammar_matcher_accept_token(c->m, tok);
    if (st != LLM_OK) return llm__fail(err, st, "grammar refused token %d: %s", tok, llm_grammar_last_error());
    if (c->anchor < 0) c->anchor = pos;
    return LLM_OK;
}

void llm__constraint_restart(llm__constraint *c) {
    if (!c) return;
    llm_grammar_matcher_rollback(c->m, llm_grammar_matcher_n_steps(c->m));
    c->anchor = -1;
}

void llm__constraint_truncate(llm__constraint *c, int32_t n_keep) {
    if (!c || c->anchor < 0) return;
    if (n_keep <= c->anchor) {
        llm__constraint_restart(c);
        return;
    }
    const int32_t steps = llm_grammar_matcher_n_steps(c->m), keep = n_keep - c->anchor;
    if (keep < steps) llm_grammar_matcher_rollback(c->m, steps - keep);
}
