/* llm_embed: one vector per text from the last hidden states, pooled and
 * optionally L2-normalized.
 *
 * A decoder runs each text alone in a temporary KV sequence, through the
 * same batch loop as sessions (llm__compute); the sequence is not committed
 * to the prefix index (embedding traffic must not evict chat prefixes). An
 * encoder (bert) has no cache: whole texts are packed back to back into
 * forward passes of up to n_pass tokens, no padding, each text attending
 * only to itself (llm__fwd_encode). Either way every op computes a row, a
 * (query, head) pair or an element on its own in a fixed order, so a text's
 * vector never depends on what it was batched with.
 *
 * Texts longer than the model's max_tokens are truncated as
 * sentence-transformers does (first tokens, then the closing special
 * tokens) and counted in the model's embedding telemetry. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

/* Pools rows[n][d] into out[d] (in double, token order), then normalizes.
 * MAX takes each dimension's largest value; MEAN_SQRT_LEN scales the sum by
 * 1 / sqrt(n) (sentence-transformers' Pooling). */
static void pool_rows(const float *rows, int32_t n, int32_t d, llm_pooling pooling, bool normalize, double *acc,
                      float *out) {
    memset(acc, 0, (size_t)d * sizeof *acc);
    if (pooling == LLM_POOLING_MAX) {
        for (int32_t k = 0; k < d; k++) acc[k] = rows[k];
        for (int32_t p = 1; p < n; p++)
            for (int32_t k = 0; k < d; k++)
                if (rows[(size_t)p * (size_t)d + (size_t)k] > acc[k]) acc[k] = rows[(size_t)p * (size_t)d + (size_t)k];
    }
    for (int32_t p = 0; p < n && pooling != LLM_POOLING_MAX; p++) {
        bool take = pooling == LLM_POOLING_MEAN || pooling == LLM_POOLING_MEAN_SQRT_LEN ||
                    (pooling == LLM_POOLING_CLS && p == 0) ||
                    (pooling == LLM_POOLING_LAST && p == n - 1);
        if (!take) continue;
        const float *h = rows + (size_t)p * (size_t)d;
        for (int32_t k = 0; k < d; k++) acc[k] += h[k];
    }
    double scale = pooling == LLM_POOLING_MEAN ? 1.0 / n : pooling == LLM_POOLING_MEAN_SQRT_LEN ? 1.0 / sqrt(n) : 1.0;
    double norm = 0;
    for (int32_t k = 0; k < d; k++) {
        acc[k] *= scale;
        norm += acc[k] * acc[k];
    }
    norm = sqrt(norm);
    double inv = normalize && norm > 0 ? 1.0 / norm : 1.0;
    for (int32_t k = 0; k < d; k++) out[k] = (float)(acc[k] * inv);
}

/* A growing token buffer. */
typedef struct tokbuf {
    llm_token *t;
    int32_t n, cap;
} tokbuf;

static llm_status tb_reserve(llm_model *m, tokbuf *b, int32_t more) {
    if (b->n + more <= b->cap) return LLM_OK;
    int32_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more) cap *= 2;
    llm_token *t = realloc(b->t, (size_t)cap * sizeof *t);
    if (!t) return llm__fail(m->err, LLM_ERR_NO_MEMORY, "out of memory");
    b->t = t;
    b->cap = cap;
    return LLM_OK;
}

/* Appends the tokens of texts[i] to b (truncated to max_tokens when the
 * model has one, counted in trunc[0] texts and trunc[1] tokens); *nt
 * receives their count. */
static llm_status tokenize_text(llm_model *m, const char *const *texts, size_t i, tokbuf *b, int32_t *nt,
                                int64_t trunc[2]) {
    if (!texts[i]) return llm__fail(m->err, LLM_ERR_INVALID_ARG, "llm_embed: text %zu is NULL", i);
    const size_t len = strlen(texts[i]);
    llm_status st = tb_reserve(m, b, 64);
    if (st == LLM_OK) st = llm_tokenize(m, texts[i], len, LLM_ENCODE_ADD_SPECIAL, b->t + b->n, b->cap - b->n, nt);
    if (st == LLM_ERR_BUFFER_TOO_SMALL) {
        st = tb_reserve(m, b, -*nt);
        if (st == LLM_OK)
            st = llm_tokenize(m, texts[i], len, LLM_ENCODE_ADD_SPECIAL, b->t + b->n, b->cap - b->n, nt);
    }
    if (st != LLM_OK) return llm__fail(m->err, st, "text %zu: %s", i, llm_last_error());
    if (*nt == 0) return llm__fail(m->err, LLM_ERR_INVALID_ARG, "text %zu is empty", i);
    const int32_t max = m->embed.info.max_tokens;
    if (max > 0 && *nt > max) {
        /* sentence-transformers: the first max - suffix tokens, then the
         * closing special tokens ([SEP]). */
        const int32_t suf = m->embed.n_suffix < max ? m->embed.n_suffix : 0;
        llm_token *t = b->t + b->n;
        memmove(t + max - suf, t + *nt - suf, (size_t)suf * sizeof *t);
        trunc[0]++;
        trunc[1] += *nt - max;
        *nt = max;
    } else if (max == 0 && *nt > m->n_ctx) {
        return llm__fail(m->err, LLM_CONTEXT_FULL,
                         "text %zu is %d tokens, longer than the context (%d); it is not truncated", i, *nt,
                         m->n_ctx);
    }
    return LLM_OK;
}

/* Decoder: one text, its own temporary KV sequence, hidden states of every
 * token through the engine's batch loop. The model lock is held. */
static llm_status embed_one_decoder(llm_model *m, const llm_token *toks, int32_t n, float *hidden /* [n][n_embd] */) {
    llm__job job = {.tokens = toks, .n = n, .index = false, .what = LLM__FWD_HIDDEN_ALL, .rows = hidden};
    llm_status st = llm__kvs_create(m, &job.seq, m->err);
    if (st != LLM_OK) return st;
    st = llm__compute(m, &job, m->err);
    llm__kvs_free(m, &job.seq);
    m->embed.stats.forwards += (n + m->n_batch - 1) / m->n_batch;
    return st;
}

/* Encoder: the packed texts of one forward. */
typedef struct pack {
    tokbuf tok;          /* [n] tokens of the packed texts, back to back */
    int32_t *pos, *lens; /* [n_pass] positions; [n_pass] lengths */
    size_t *idx;         /* [n_pass] text index of each packed text */
    int32_t n_seqs;
} pack;

static llm_status run_pack(llm_model *m, pack *p, float *hidden, double *acc, llm_pooling pooling, bool normalize,
                           float *out, size_t dim) {
    if (!p->n_seqs) return LLM_OK;
    for (int32_t s = 0, t = 0; s < p->n_seqs; s++)
        for (int32_t i = 0; i < p->lens[s]; i++) p->pos[t++] = i;
    char ferr[LLM__ERR_CAP];
    pthread_mutex_lock(&m->lock);
    llm_status st = llm__fwd_encode(m->fwd, p->tok.t, p->pos, p->tok.n, p->lens, p->n_seqs, hidden, NULL, ferr,
                                    sizeof ferr);
    m->embed.stats.forwards++;
    pthread_mutex_unlock(&m->lock);
    if (st != LLM_OK) return llm__fail(m->err, st, "%s", ferr);
    for (int32_t s = 0, t = 0; s < p->n_seqs; s++) {
        pool_rows(hidden + (size_t)t * dim, p->lens[s], (int32_t)dim, pooling, normalize, acc, out + p->idx[s] * dim);
        t += p->lens[s];
    }
    p->tok.n = 0;
    p->n_seqs = 0;
    return LLM_OK;
}

llm_status llm_embed(llm_model *m, const char *const *texts, size_t n, llm_pooling pooling,
                     bool normalize, float *out, size_t dim) {
    if (!m || (!texts && n) || (!out && n))
        return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_embed: NULL argument");
    if (m->vocab_only) return llm__fail(NULL, LLM_ERR_STATE, "llm_embed: the model was loaded vocab_only");
    if (dim != (size_t)m->info.n_embd)
        return llm__fail(m->err, LLM_ERR_INVALID_ARG, "llm_embed: dim %zu but the model's n_embd is %d",
                         dim, m->info.n_embd);
    if (pooling == LLM_POOLING_MODEL) {
        if (m->embed.unsupported[0])
            return llm__fail(m->err, LLM_ERR_UNSUPPORTED, "llm_embed: the model's pooling is not implemented: %s",
                             m->embed.unsupported);
        pooling = m->embed.info.pooling;
    }
    if (pooling != LLM_POOLING_MEAN && pooling != LLM_POOLING_CLS && pooling != LLM_POOLING_LAST &&
        pooling != LLM_POOLING_MAX && pooling != LLM_POOLING_MEAN_SQRT_LEN)
        return llm__fail(m->err, LLM_ERR_INVALID_ARG, "llm_embed: unknown pooling %d", (int)pooling);
    const double t0 = llm__now_ms();
    const int32_t d = m->info.n_embd;
    const bool encoder = m->info.is_encoder;
    /* Hidden rows: a whole pass for an encoder, the longest text for a decoder (grown). */
    size_t hidden_rows = encoder ? (size_t)m->n_pass : 0;
    float *hidden = encoder ? malloc(hidden_rows * (size_t)d * sizeof *hidden) : NULL;
    double *acc = malloc((size_t)d * sizeof *acc);
    pack p = {0};
    if (encoder) {
        p.pos = malloc((size_t)m->n_pass * sizeof *p.pos);
        p.lens = malloc((size_t)m->n_pass * sizeof *p.lens);
        p.idx = malloc((size_t)m->n_pass * sizeof *p.idx);
    }
    llm_status st = LLM_OK;
    if (!acc || (encoder && (!hidden || !p.pos || !p.lens || !p.idx)))
        st = llm__fail(m->err, LLM_ERR_NO_MEMORY, "out of memory");
    int64_t n_tok = 0, trunc[2] = {0, 0};
    for (size_t i = 0; i < n && st == LLM_OK; i++) {
        int32_t nt = 0;
        const int32_t before = p.tok.n;
        st = tokenize_text(m, texts, i, &p.tok, &nt, trunc);
        if (st != LLM_OK) break;
        n_tok += nt;
        if (!encoder) {
            if ((size_t)nt > hidden_rows) {
                float *h2 = realloc(hidden, (size_t)nt * (size_t)d * sizeof *h2);
                if (!h2) {
                    st = llm__fail(m->err, LLM_ERR_NO_MEMORY, "out of memory");
                    break;
                }
                hidden = h2;
                hidden_rows = (size_t)nt;
            }
            pthread_mutex_lock(&m->lock);
            st = embed_one_decoder(m, p.tok.t, nt, hidden);
            pthread_mutex_unlock(&m->lock);
            if (st == LLM_OK) pool_rows(hidden, nt, d, pooling, normalize, acc, out + i * dim);
            p.tok.n = 0;
            continue;
        }
        if (nt > m->n_batch) {
            st = llm__fail(m->err, LLM_CONTEXT_FULL, "text %zu is %d tokens, more than one pass (n_batch %d)", i, nt,
                           m->n_batch);
            break;
        }
        if (before + nt > m->n_pass) { /* the pass is full: run the texts before this one */
            llm_token *mine = malloc((size_t)nt * sizeof *mine);
            if (!mine) {
                st = llm__fail(m->err, LLM_ERR_NO_MEMORY, "out of memory");
                break;
            }
            memcpy(mine, p.tok.t + before, (size_t)nt * sizeof *mine);
            p.tok.n = before;
            st = run_pack(m, &p, hidden, acc, pooling, normalize, out, dim);
            if (st == LLM_OK) memcpy(p.tok.t, mine, (size_t)nt * sizeof *mine);
            free(mine);
            if (st != LLM_OK) break;
        }
        p.tok.n += nt;
        p.lens[p.n_seqs] = nt;
        p.idx[p.n_seqs++] = i;
    }
    if (st == LLM_OK && encoder) st = run_pack(m, &p, hidden, acc, pooling, normalize, out, dim);
    pthread_mutex_lock(&m->lock);
    if (st == LLM_OK) {
        m->embed.stats.texts += (int64_t)n;
        m->embed.stats.tokens += n_tok;
    }
    m->embed.stats.truncated_texts += trunc[0]; /* counted even when a later text failed */
    m->embed.stats.truncated_tokens += trunc[1];
    m->embed.stats.ms += llm__now_ms() - t0;
    pthread_mutex_unlock(&m->lock);
    free(hidden);
    free(acc);
    free(p.tok.t);
    free(p.pos);
    free(p.lens);
    free(p.idx);
    return st;
}
