/* llm_embed: one vector per text from the last hidden states (after the
 * final norm), pooled and optionally L2-normalized. Each text runs alone in
 * a temporary KV sequence, through the same batch loop as sessions
 * (llm__compute), so a vector never depends on batch composition.
 * The sequence is not committed to the prefix index (embedding traffic must
 * not evict chat prefixes). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

/* Embeds one text: its own temporary KV sequence, hidden states of every
 * token through the engine's batch loop, then pooling in token order. The
 * model lock is held by the caller. */
static llm_status embed_one(llm_model *m, const llm_token *toks, int32_t n, llm_pooling pooling,
                            bool normalize, float *hidden /* [n][n_embd] */, float *out /* [n_embd] */) {
    const int32_t d = m->info.n_embd;
    llm__job job = {.tokens = toks, .n = n, .index = false, .what = LLM__FWD_HIDDEN_ALL, .rows = hidden};
    llm_status st = llm_kv_seq_create(m->pool, &job.seq);
    if (st != LLM_OK) return llm__fail(m->err, st, "kv: %s", llm_kv_last_error());
    double *acc = calloc((size_t)d, sizeof *acc);
    st = acc ? llm__compute(m, &job, m->err) : llm__fail(m->err, LLM_ERR_NO_MEMORY, "out of memory");
    llm_kv_seq_free(m->pool, job.seq);
    if (st == LLM_OK) {
        for (int32_t p = 0; p < n; p++) {
            bool take = pooling == LLM_POOLING_MEAN || (pooling == LLM_POOLING_CLS && p == 0) ||
                        (pooling == LLM_POOLING_LAST && p == n - 1);
            if (!take) continue;
            const float *h = hidden + (size_t)p * (size_t)d;
            for (int32_t k = 0; k < d; k++) acc[k] += h[k];
        }
        double scale = pooling == LLM_POOLING_MEAN ? 1.0 / n : 1.0;
        double norm = 0;
        for (int32_t k = 0; k < d; k++) {
            acc[k] *= scale;
            norm += acc[k] * acc[k];
        }
        norm = sqrt(norm);
        double inv = normalize && norm > 0 ? 1.0 / norm : 1.0;
        for (int32_t k = 0; k < d; k++) out[k] = (float)(acc[k] * inv);
    }
    free(acc);
    return st;
}

llm_status llm_embed(llm_model *m, const char *const *texts, size_t n, llm_pooling pooling,
                     bool normalize, float *out, size_t dim) {
    if (!m || (!texts && n) || (!out && n))
        return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_embed: NULL argument");
    if (m->vocab_only) return llm__fail(NULL, LLM_ERR_STATE, "llm_embed: the model was loaded vocab_only");
    if (dim != (size_t)m->info.n_embd)
        return llm__fail(m->err, LLM_ERR_INVALID_ARG, "llm_embed: dim %zu but the model's n_embd is %d",
                         dim, m->info.n_embd);
    if (pooling != LLM_POOLING_MEAN && pooling != LLM_POOLING_CLS && pooling != LLM_POOLING_LAST)
        return llm__fail(m->err, LLM_ERR_INVALID_ARG, "llm_embed: unknown pooling %d", (int)pooling);
    const int32_t d = m->info.n_embd;
    float *hidden = NULL; /* [n_hidden][n_embd]: grows to the longest text's tokens */
    int32_t n_hidden = 0, cap = 256;
    llm_token *toks = malloc((size_t)cap * sizeof *toks);
    llm_status st = LLM_OK;
    if (!toks) st = llm__fail(m->err, LLM_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n && st == LLM_OK; i++) {
        if (!texts[i]) {
            st = llm__fail(m->err, LLM_ERR_INVALID_ARG, "llm_embed: text %zu is NULL", i);
            break;
        }
        size_t len = strlen(texts[i]);
        int32_t nt = 0;
        st = llm_tokenize(m, texts[i], len, LLM_ENCODE_ADD_SPECIAL, toks, cap, &nt);
        if (st == LLM_ERR_BUFFER_TOO_SMALL) {
            cap = -nt;
            llm_token *t2 = realloc(toks, (size_t)cap * sizeof *t2);
            if (!t2) {
                st = llm__fail(m->err, LLM_ERR_NO_MEMORY, "out of memory");
                break;
            }
            toks = t2;
            st = llm_tokenize(m, texts[i], len, LLM_ENCODE_ADD_SPECIAL, toks, cap, &nt);
        }
        if (st != LLM_OK) {
            llm__fail(m->err, st, "text %zu: %s", i, m->err);
            break;
        }
        if (nt == 0) {
            st = llm__fail(m->err, LLM_ERR_INVALID_ARG, "text %zu is empty", i);
            break;
        }
        if (nt > m->n_ctx) {
            st = llm__fail(m->err, LLM_CONTEXT_FULL,
                           "text %zu is %d tokens, longer than the context (%d); it is not truncated",
                           i, nt, m->n_ctx);
            break;
        }
        if (nt > n_hidden) {
            float *h2 = realloc(hidden, (size_t)nt * (size_t)d * sizeof *h2);
            if (!h2) {
                st = llm__fail(m->err, LLM_ERR_NO_MEMORY, "out of memory");
                break;
            }
            hidden = h2;
            n_hidden = nt;
        }
        pthread_mutex_lock(&m->lock);
        st = embed_one(m, toks, nt, pooling, normalize, hidden, out + i * dim);
        pthread_mutex_unlock(&m->lock);
    }
    free(hidden);
    free(toks);
    return st;
}
