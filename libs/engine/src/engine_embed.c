/* llm_embed: one vector per text from the last hidden states (after the
 * final norm), pooled and optionally L2-normalized. Each text runs alone in
 * a temporary KV sequence, so a vector never depends on batch composition.
 * The sequence is not committed to the prefix index (embedding traffic must
 * not evict chat prefixes). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

static llm_status embed_one(llm_model *m, const llm_token *toks, int32_t n, llm_pooling pooling,
                            bool normalize, float *hidden /* [n_batch][n_embd] */,
                            float *out /* [n_embd] */) {
    const int32_t d = m->info.n_embd;
    llm_kv_seq_id seq;
    llm_status st = llm_kv_seq_create(m->pool, &seq);
    if (st != LLM_OK) return llm__fail(m->err, st, "kv: %s", llm_kv_last_error());
    int32_t pos[1024];
    double *acc = calloc((size_t)d, sizeof *acc);
    if (!acc) {
        llm_kv_seq_free(m->pool, seq);
        return llm__fail(m->err, LLM_ERR_NO_MEMORY, "out of memory");
    }
    int32_t step = m->n_batch < 1024 ? m->n_batch : 1024;
    for (int32_t done = 0; done < n && st == LLM_OK; done += step) {
        int32_t nb = n - done < step ? n - done : step;
        llm_kv_cow cow;
        st = llm_kv_seq_append(m->pool, seq, NULL, nb, &cow); /* NULL: never indexed */
        if (st != LLM_OK) {
            llm__fail(m->err, st, "KV cache: %s", llm_kv_last_error());
            break;
        }
        const int32_t *tbl;
        int32_t n_tbl;
        llm_kv_seq_block_table(m->pool, seq, &tbl, &n_tbl);
        for (int32_t i = 0; i < nb; i++) pos[i] = done + i;
        char err[LLM__ERR_CAP];
        st = llm__fwd_run(m->fwd, toks + done, pos, nb, tbl, n_tbl, LLM__FWD_HIDDEN_ALL, hidden, NULL,
                          err, sizeof err);
        if (st != LLM_OK) {
            llm__fail(m->err, st, "%s", err);
            break;
        }
        for (int32_t i = 0; i < nb; i++) {
            int32_t p = done + i;
            bool take = pooling == LLM_POOLING_MEAN || (pooling == LLM_POOLING_CLS && p == 0) ||
                        (pooling == LLM_POOLING_LAST && p == n - 1);
            if (!take) continue;
            const float *h = hidden + (size_t)i * (size_t)d;
            for (int32_t k = 0; k < d; k++) acc[k] += h[k];
        }
    }
    llm_kv_seq_free(m->pool, seq);
    if (st == LLM_OK) {
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
    float *hidden = malloc((size_t)(m->n_batch < 1024 ? m->n_batch : 1024) * (size_t)d * sizeof *hidden);
    int32_t cap = 256;
    llm_token *toks = malloc((size_t)cap * sizeof *toks);
    llm_status st = LLM_OK;
    if (!hidden || !toks) st = llm__fail(m->err, LLM_ERR_NO_MEMORY, "out of memory");
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
        pthread_mutex_lock(&m->lock);
        st = embed_one(m, toks, nt, pooling, normalize, hidden, out + i * dim);
        pthread_mutex_unlock(&m->lock);
    }
    free(hidden);
    free(toks);
    return st;
}
