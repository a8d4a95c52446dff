/* Sessions: one conversation each. A session owns a KV sequence in the
 * model's pool, the tokens it holds, the logits of its last computed token,
 * a sampler chain, a stop matcher and a streaming detokenizer.
 *
 * Lazy decode: a sampled token is "pending" until the next step computes it.
 * So when generation stops (end-of-generation token, limit, cancel) the
 * context holds exactly the tokens that were computed, and an EOG token is
 * never written into the KV cache. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

#define SFAIL(s, st, ...) llm__fail((s)->err, (st), __VA_ARGS__)

/* ---- sampler / stop / detok setup --------------------------------------- */

static llm_status build_chain(llm_session *s) {
    llm_sampler_params p = llm__sampler_params_from(&s->sp, s->m->info.n_vocab);
    llm_sampler_chain *ch = NULL;
    llm_status st = llm_sampler_chain_from_params(&p, &ch);
    if (st != LLM_OK) return SFAIL(s, st, "sampler: %s", llm_sampling_last_error());
    llm_sampler_chain_free(s->chain);
    s->chain = ch;
    return LLM_OK;
}

static llm_status build_stop(llm_session *s) {
    llm_stop_matcher *sm = NULL;
    llm_status st = llm_stop_matcher_create((const char *const *)s->stops, s->n_stops, &sm);
    if (st != LLM_OK) return SFAIL(s, st, "stop strings: %s", llm_sampling_last_error());
    llm_stop_matcher_free(s->stop);
    s->stop = sm;
    return LLM_OK;
}

llm_status llm_session_new(llm_model *m, const llm_session_params *params, llm_session **out) {
    if (out) *out = NULL;
    if (!m || !out) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_session_new: NULL argument");
    if (m->vocab_only) return llm__fail(NULL, LLM_ERR_STATE, "llm_session_new: the model was loaded vocab_only");
    llm_session_params p = params ? *params : llm_session_default_params();
    if (p.n_ctx < 0 || p.n_ctx > m->n_ctx)
        return llm__fail(m->err, LLM_ERR_INVALID_ARG, "session n_ctx %d outside [0, %d]", p.n_ctx, m->n_ctx);
    llm_session *s = calloc(1, sizeof *s);
    if (!s) return llm__fail(NULL, LLM_ERR_NO_MEMORY, "out of memory");
    s->m = m;
    s->seq = -1;
    s->n_ctx = p.n_ctx ? p.n_ctx : m->n_ctx;
    s->sp = p.sampling;
    atomic_init(&s->cancel, 0);
    s->logits = malloc((size_t)m->info.n_vocab * sizeof *s->logits);
    s->pos = malloc((size_t)(m->n_batch > 0 ? m->n_batch : 1) * sizeof *s->pos);
    s->cap_ctx = 256;
    s->ctx = malloc((size_t)s->cap_ctx * sizeof *s->ctx);
    llm_status st = LLM_ERR_NO_MEMORY;
    if (!s->logits || !s->ctx || !s->pos) goto fail;
    if ((st = build_chain(s)) != LLM_OK) goto fail;
    if ((st = build_stop(s)) != LLM_OK) goto fail;
    st = llm_detokenizer_create(m->tok, LLM_DETOKENIZE_SKIP_SPECIAL, &s->detok);
    if (st != LLM_OK) goto fail;
    *out = s;
    return LLM_OK;
fail:
    llm__fail(m->err, st, "cannot create session: %s", llm_status_str(st));
    llm_session_free(s);
    return st;
}

static llm_status ctx_reserve(llm_session *s, int32_t n);

llm_status llm_session_fork(const llm_session *src, llm_session **out) {
    if (out) *out = NULL;
    if (!src || !out) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_session_fork: NULL argument");
    llm_session_params p = llm_session_default_params();
    p.n_ctx = src->n_ctx;
    p.sampling = src->sp;
    llm_session *s;
    llm_status st = llm_session_new(src->m, &p, &s);
    if (st != LLM_OK) return st;
    if ((st = ctx_reserve(s, src->n_past)) != LLM_OK ||
        (st = llm_session_set_stop(s, (const char *const *)src->stops, src->n_stops)) != LLM_OK) {
        llm__fail(NULL, st, "llm_session_fork: %s", s->err);
        llm_session_free(s);
        return st;
    }
    if (src->seq >= 0) {
        /* Share every block; the copy-on-write copies the pool reports on a
         * later append are done by compute_locked(), as for any append. */
        pthread_mutex_lock(&src->m->lock);
        st = llm_kv_seq_fork(src->m->pool, src->seq, &s->seq);
        pthread_mutex_unlock(&src->m->lock);
        if (st != LLM_OK) {
            s->seq = -1;
            llm__fail(NULL, st, "llm_session_fork: KV cache: %s", llm_kv_last_error());
            llm_session_free(s);
            return st;
        }
    }
    if (src->n_past) memcpy(s->ctx, src->ctx, (size_t)src->n_past * sizeof *s->ctx);
    s->n_past = src->n_past;
    memcpy(s->logits, src->logits, (size_t)src->m->info.n_vocab * sizeof *s->logits);
    s->logits_ready = src->logits_ready;
    s->pending = src->pending;
    s->has_pending = src->has_pending;
    *out = s;
    return LLM_OK;
}

static void release_seq(llm_session *s) {
    if (s->seq >= 0) {
        pthread_mutex_lock(&s->m->lock);
        llm_kv_seq_free(s->m->pool, s->seq);
        pthread_mutex_unlock(&s->m->lock);
        s->seq = -1;
    }
}

void llm_session_free(llm_session *s) {
    if (!s) return;
    release_seq(s);
    llm_sampler_chain_free(s->chain);
    llm_stop_matcher_free(s->stop);
    llm_detokenizer_free(s->detok);
    for (size_t i = 0; i < s->n_stops; i++) free(s->stops[i]);
    free(s->stops);
    free(s->logits);
    free(s->pos);
    free(s->ctx);
    free(s->text);
    free(s);
}

static void start_generation(llm_session *s) {
    llm_stop_matcher_reset(s->stop);
    llm_detokenizer_reset(s->detok);
    s->stopped = false;
}

llm_status llm_session_reset(llm_session *s) {
    if (!s) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_session_reset: NULL session");
    release_seq(s);
    s->n_past = 0;
    s->logits_ready = false;
    s->has_pending = false;
    llm_sampler_chain_reset(s->chain);
    start_generation(s);
    atomic_store(&s->cancel, 0);
    return LLM_OK;
}

llm_status llm_session_set_sampler(llm_session *s, const llm_sampling_params *p) {
    if (!s || !p) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_session_set_sampler: NULL argument");
    llm_sampling_params old = s->sp;
    s->sp = *p;
    llm_status st = build_chain(s);
    if (st != LLM_OK) s->sp = old;
    return st;
}

llm_status llm_session_set_stop(llm_session *s, const char *const *stops, size_t n) {
    if (!s || (!stops && n)) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_session_set_stop: NULL argument");
    for (size_t i = 0; i < n; i++)
        if (!stops[i] || !*stops[i])
            return SFAIL(s, LLM_ERR_INVALID_ARG, "stop string %zu is NULL or empty", i);
    char **copy = n ? calloc(n, sizeof *copy) : NULL;
    if (n && !copy) return SFAIL(s, LLM_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        copy[i] = strdup(stops[i]);
        if (!copy[i]) {
            for (size_t k = 0; k < i; k++) free(copy[k]);
            free(copy);
            return SFAIL(s, LLM_ERR_NO_MEMORY, "out of memory");
        }
    }
    char **old = s->stops;
    size_t old_n = s->n_stops;
    s->stops = copy;
    s->n_stops = n;
    llm_status st = build_stop(s);
    if (st != LLM_OK) {
        s->stops = old;
        s->n_stops = old_n;
        old = copy;
        old_n = n;
    }
    for (size_t i = 0; i < old_n; i++) free(old[i]);
    free(old);
    return st;
}

void llm_session_cancel(llm_session *s) {
    if (s) atomic_store(&s->cancel, 1);
}

void llm_session_clear_cancel(llm_session *s) {
    if (s) atomic_store(&s->cancel, 0);
}

/* Consumes a pending cancel request. */
static bool take_cancel(llm_session *s) { return atomic_exchange(&s->cancel, 0) != 0; }

int32_t llm_session_n_past(const llm_session *s) { return s ? s->n_past : 0; }
int32_t llm_session_n_ctx(const llm_session *s) { return s ? s->n_ctx : 0; }

int32_t llm_session_tokens(const llm_session *s, llm_token *out, int32_t cap) {
    if (!s) return 0;
    if (cap < s->n_past || (!out && s->n_past)) return -s->n_past;
    if (s->n_past) memcpy(out, s->ctx, (size_t)s->n_past * sizeof *out);
    return s->n_past;
}

const char *llm_session_last_error(const llm_session *s) { return s ? s->err : ""; }

const float *llm_session_logits(const llm_session *s) { return s && s->logits_ready ? s->logits : NULL; }

/* ---- KV-level helpers (model lock held) --------------------------------- */

static llm_status ensure_seq(llm_session *s) {
    if (s->seq >= 0) return LLM_OK;
    llm_status st = llm_kv_seq_create(s->m->pool, &s->seq);
    if (st != LLM_OK) {
        s->seq = -1;
        return SFAIL(s, st, "kv: %s", llm_kv_last_error());
    }
    return LLM_OK;
}

/* Drops the context back to n_keep tokens (KV and token list). */
static void truncate_locked(llm_session *s, int32_t n_keep) {
    if (s->seq >= 0 && n_keep < llm_kv_seq_len(s->m->pool, s->seq)) {
        if (n_keep == 0) {
            llm_kv_seq_free(s->m->pool, s->seq);
            s->seq = -1;
        } else {
            llm_kv_seq_truncate(s->m->pool, s->seq, n_keep);
        }
    }
    if (n_keep < s->n_past) s->n_past = n_keep;
}

static llm_status ctx_reserve(llm_session *s, int32_t n) {
    if (n <= s->cap_ctx) return LLM_OK;
    int32_t cap = s->cap_ctx;
    while (cap < n) cap *= 2;
    llm_token *c = realloc(s->ctx, (size_t)cap * sizeof *c);
    if (!c) return SFAIL(s, LLM_ERR_NO_MEMORY, "out of memory");
    s->ctx = c;
    s->cap_ctx = cap;
    return LLM_OK;
}

/* Computes tokens[0..n) after the current context, in batches; the model
 * lock is held by the caller. On success the logits of the last token are in
 * s->logits. With `all` (llm_prefill_all_logits), the logits of every token
 * from index `skip` on are also written to all ([n - skip][n_vocab]). The
 * first `skip` tokens (a pending sampled token the caller gets no row for;
 * skip <= 1) stay in the first batch, exactly as llm_prefill batches them,
 * because the CPU attention sums a lone token in another order than a batch:
 * that batch's rows go through a scratch and all but the skipped ones are
 * copied out. On failure or cancel the context is left at the last fully
 * computed batch (and `all` holds the rows of the batches computed before). */
static llm_status compute_locked(llm_session *s, const llm_token *tokens, int32_t n, float *all,
                                 int32_t skip) {
    llm_model *m = s->m;
    llm_status st = ensure_seq(s);
    if (st != LLM_OK) return st;
    int32_t *pos = s->pos; /* [n_batch], allocated once: no allocation per token */
    const size_t nv = (size_t)m->info.n_vocab;
    const float *last = m->logits; /* where the last batch left its last row */
    float *first = NULL;           /* [first batch][n_vocab] when skipping rows */
    if (all && skip > 0) {
        first = malloc((size_t)(n < m->n_batch ? n : m->n_batch) * nv * sizeof *first);
        if (!first) return SFAIL(s, LLM_ERR_NO_MEMORY, "out of memory for the first batch's logits");
    }
    int32_t done = 0;
    while (done < n) {
        int32_t nb = n - done < m->n_batch ? n - done : m->n_batch;
        float *rows = !all ? NULL : done == 0 && first ? first : all + (size_t)(done - skip) * nv;
        const llm_token *tk = tokens + done;
        llm_kv_cow cow;
        st = llm_kv_seq_append(m->pool, s->seq, tk, nb, &cow);
        if (st != LLM_OK) {
            st = SFAIL(s, st, "KV cache: %s", llm_kv_last_error());
            break;
        }
        char err[LLM__ERR_CAP];
        if (cow.src >= 0) {
            st = llm__fwd_copy_block(m->fwd, cow.src, cow.dst, cow.n_tokens, err, sizeof err);
            if (st != LLM_OK) {
                llm_kv_seq_truncate(m->pool, s->seq, s->n_past);
                st = SFAIL(s, st, "%s", err);
                break;
            }
        }
        const int32_t *tbl;
        int32_t n_tbl;
        llm_kv_seq_block_table(m->pool, s->seq, &tbl, &n_tbl);
        for (int32_t i = 0; i < nb; i++) pos[i] = s->n_past + i;
        st = llm__fwd_run(m->fwd, tk, pos, nb, tbl, n_tbl, rows ? LLM__FWD_LOGITS_ALL : LLM__FWD_LOGITS_LAST,
                          rows ? rows : m->logits, &s->cancel, err, sizeof err);
        if (st != LLM_OK) {
            llm_kv_seq_truncate(m->pool, s->seq, s->n_past);
            if (st == LLM_CANCELLED) {
                atomic_store(&s->cancel, 0);
                SFAIL(s, st, "cancelled");
            } else {
                SFAIL(s, st, "%s", err);
            }
            break;
        }
        last = rows ? rows + (size_t)(nb - 1) * nv : m->logits;
        if (rows && rows == first && nb > skip)
            memcpy(all, first + (size_t)skip * nv, (size_t)(nb - skip) * nv * sizeof *all);
        memcpy(s->ctx + s->n_past, tk, (size_t)nb * sizeof *tk);
        s->n_past += nb;
        llm_kv_seq_commit(m->pool, s->seq, s->n_past);
        done += nb;
        if (done < n && take_cancel(s)) {
            st = SFAIL(s, LLM_CANCELLED, "cancelled");
            break;
        }
    }
    if (st == LLM_OK) {
        memcpy(s->logits, last, nv * sizeof *s->logits);
        s->logits_ready = true;
    }
    free(first);
    return st;
}

static void begin_prefill_telemetry(llm_session *s) {
    s->t_prefill_start = llm__now_ms();
    s->t_first_token = 0;
    s->decode_tokens = 0;
    s->decode_ms = 0;
    s->ttft_ms = 0;
}

static void end_prefill_telemetry(llm_session *s, int32_t computed, int32_t reused) {
    s->prefill_ms = llm__now_ms() - s->t_prefill_start;
    s->prefill_tokens = computed;
    s->reused_tokens = reused;
    s->total_prefill += computed;
    s->total_reused += reused;
}

static llm_status check_tokens(llm_session *s, const llm_token *t, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        if (t[i] < 0 || t[i] >= s->m->info.n_vocab)
            return SFAIL(s, LLM_ERR_INVALID_ARG, "token id %d at index %d is outside [0, %d)", t[i], i,
                         s->m->info.n_vocab);
    return LLM_OK;
}

/* Shared tail of the prefill entry points: the context already holds
 * tokens[0..keep); compute the rest (using the prefix cache when the
 * context is empty, except with `all`: every position's logits are wanted,
 * so nothing may be skipped; see compute_locked for `all` and `skip`). */
static llm_status prefill_from(llm_session *s, const llm_token *tokens, int32_t n, int32_t keep,
                               float *all, int32_t skip) {
    llm_model *m = s->m;
    llm_status st = ctx_reserve(s, n);
    if (st != LLM_OK) return st;
    begin_prefill_telemetry(s);
    pthread_mutex_lock(&m->lock);
    truncate_locked(s, keep);
    int32_t reused = keep;
    if (s->n_past == 0 && n > 1 && !all) {
        /* Fresh context: take whole cached blocks of this prompt from the
         * prefix index, leaving at least one token to compute for logits. */
        st = ensure_seq(s);
        int32_t cached = 0;
        if (st == LLM_OK && llm_kv_seq_len(m->pool, s->seq) == 0 &&
            llm_kv_seq_attach_prefix(m->pool, s->seq, tokens, n - 1, &cached) == LLM_OK && cached > 0) {
            memcpy(s->ctx, tokens, (size_t)cached * sizeof *tokens);
            s->n_past = cached;
            reused = cached;
        }
    }
    /* Admission: refuse before computing anything if the pool cannot hold it. */
    if (st == LLM_OK && s->seq >= 0) {
        llm_kv_stats ks;
        llm_kv_pool_stats(m->pool, &ks);
        int32_t need = llm_kv_seq_blocks_needed(m->pool, s->seq, n - s->n_past);
        if (need > ks.n_free + ks.n_cached)
            st = SFAIL(s, LLM_ERR_EXHAUSTED,
                       "KV cache pool exhausted: %d blocks needed, %d available (other sessions hold "
                       "the rest; raise kv_tokens)", need, ks.n_free + ks.n_cached);
    }
    int32_t before = s->n_past;
    if (st == LLM_OK) st = compute_locked(s, tokens + s->n_past, n - s->n_past, all, skip);
    pthread_mutex_unlock(&m->lock);
    end_prefill_telemetry(s, s->n_past - before, reused);
    start_generation(s);
    return st;
}

/* llm_prefill, and with `all` llm_prefill_all_logits (arguments checked). */
static llm_status prefill_append(llm_session *s, const llm_token *tokens, int32_t n, float *all) {
    llm_status st = check_tokens(s, tokens, n);
    if (st != LLM_OK) return st;
    /* A pending non-EOG token was shown to the user: it belongs before the
     * new text. An EOG token is dropped. */
    bool pend = s->has_pending && !llm__model_is_eog(s->m, s->pending);
    int32_t extra = pend ? 1 : 0;
    if (n + extra == 0) {
        if (s->n_past == 0) return SFAIL(s, LLM_ERR_INVALID_ARG, "llm_prefill: nothing to compute");
        n = 0;
    }
    if ((int64_t)s->n_past + n + extra > s->n_ctx)
        return SFAIL(s, LLM_CONTEXT_FULL,
                     "prompt does not fit: %d tokens in context + %d new > context size %d",
                     s->n_past, n + extra, s->n_ctx);
    if (take_cancel(s)) return SFAIL(s, LLM_CANCELLED, "cancelled");
    int32_t total = s->n_past + extra + n;
    st = ctx_reserve(s, total);
    if (st != LLM_OK) return st;
    if (pend) s->ctx[s->n_past] = s->pending;
    if (n) memcpy(s->ctx + s->n_past + extra, tokens, (size_t)n * sizeof *tokens);
    s->has_pending = false;
    s->logits_ready = false;
    if (n + extra == 0) {
        /* Recompute the last token to have logits. */
        int32_t keep = s->n_past - 1;
        llm_token *copy = malloc((size_t)s->n_past * sizeof *copy);
        if (!copy) return SFAIL(s, LLM_ERR_NO_MEMORY, "out of memory");
        memcpy(copy, s->ctx, (size_t)s->n_past * sizeof *copy);
        st = prefill_from(s, copy, s->n_past, keep, NULL, 0);
        free(copy);
        return st;
    }
    /* s->ctx now holds the full wanted context; prefill_from copies from its
     * argument into s->ctx, so pass a private copy. */
    llm_token *want = malloc((size_t)total * sizeof *want);
    if (!want) return SFAIL(s, LLM_ERR_NO_MEMORY, "out of memory");
    memcpy(want, s->ctx, (size_t)total * sizeof *want);
    st = prefill_from(s, want, total, s->n_past, all, extra);
    free(want);
    return st;
}

llm_status llm_prefill(llm_session *s, const llm_token *tokens, int32_t n) {
    if (!s || n < 0 || (!tokens && n)) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_prefill: invalid argument");
    return prefill_append(s, tokens, n, NULL);
}

llm_status llm_prefill_all_logits(llm_session *s, const llm_token *tokens, int32_t n, float *logits,
                                  size_t cap) {
    if (!s) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_prefill_all_logits: NULL session");
    if (!tokens || n <= 0)
        return SFAIL(s, LLM_ERR_INVALID_ARG, "llm_prefill_all_logits: need at least one token (n = %d%s)", n,
                     tokens ? "" : ", tokens NULL");
    if (!logits) return SFAIL(s, LLM_ERR_INVALID_ARG, "llm_prefill_all_logits: logits is NULL");
    const size_t need = (size_t)n * (size_t)s->m->info.n_vocab;
    if (cap < need)
        return SFAIL(s, LLM_ERR_BUFFER_TOO_SMALL,
                     "llm_prefill_all_logits: logits holds %zu floats, %d tokens x %d vocab need %zu", cap, n,
                     s->m->info.n_vocab, need);
    return prefill_append(s, tokens, n, logits);
}

llm_status llm_prefill_context(llm_session *s, const llm_token *tokens, int32_t n) {
    if (!s || n <= 0 || !tokens)
        return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_prefill_context: need at least one token");
    llm_status st = check_tokens(s, tokens, n);
    if (st != LLM_OK) return st;
    if (n > s->n_ctx)
        return SFAIL(s, LLM_CONTEXT_FULL, "prompt does not fit: %d tokens > context size %d", n, s->n_ctx);
    if (take_cancel(s)) return SFAIL(s, LLM_CANCELLED, "cancelled");
    int32_t keep = 0;
    while (keep < s->n_past && keep < n && s->ctx[keep] == tokens[keep]) keep++;
    if (keep == n) keep = n - 1; /* recompute the last token for its logits */
    s->has_pending = false;
    s->logits_ready = false;
    return prefill_from(s, tokens, n, keep, NULL, 0);
}

llm_status llm_session_truncate(llm_session *s, int32_t n_keep) {
    if (!s || n_keep < 0 || n_keep > s->n_past)
        return llm__fail(s ? s->err : NULL, LLM_ERR_INVALID_ARG, "llm_session_truncate: n_keep out of range");
    pthread_mutex_lock(&s->m->lock);
    truncate_locked(s, n_keep);
    pthread_mutex_unlock(&s->m->lock);
    s->logits_ready = false;
    s->has_pending = false;
    return LLM_OK;
}

/* ---- decoding ----------------------------------------------------------- */

/* The pull API's text buffer: cleared per token, then appended to. The
 * sources (detokenizer, stop matcher) own their text only until their next
 * call, so it is copied here right away. */
static llm_status text_append(llm_session *s, size_t *used, const char *a, size_t na) {
    if (*used + na + 1 > s->text_cap) {
        size_t cap = s->text_cap ? s->text_cap : 64;
        while (cap < *used + na + 1) cap *= 2;
        char *t = realloc(s->text, cap);
        if (!t) return SFAIL(s, LLM_ERR_NO_MEMORY, "out of memory");
        s->text = t;
        s->text_cap = cap;
    }
    if (na) memcpy(s->text + *used, a, na);
    *used += na;
    s->text[*used] = '\0';
    return LLM_OK;
}

llm_status llm_session_next_token(llm_session *s, llm_token *tok_out, const char **text, size_t *len) {
    if (tok_out) *tok_out = LLM_TOKEN_NULL;
    if (text) *text = "";
    if (len) *len = 0;
    if (!s) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_session_next_token: NULL session");
    if (take_cancel(s)) return SFAIL(s, LLM_CANCELLED, "cancelled");
    if (s->stopped) return SFAIL(s, LLM_END_OF_STREAM, "a stop string ended the generation");
    llm_model *m = s->m;
    double t0 = llm__now_ms();
    if (s->has_pending) {
        if (s->n_past >= s->n_ctx)
            return SFAIL(s, LLM_CONTEXT_FULL, "context full (%d tokens)", s->n_ctx);
        llm_status st = ctx_reserve(s, s->n_past + 1);
        if (st != LLM_OK) return st;
        pthread_mutex_lock(&m->lock);
        st = compute_locked(s, &s->pending, 1, NULL, 0);
        pthread_mutex_unlock(&m->lock);
        if (st != LLM_OK) return st;
        s->has_pending = false;
    }
    if (!s->logits_ready)
        return SFAIL(s, LLM_ERR_STATE, "no logits: prefill a prompt before decoding");
    int32_t tok;
    llm_status st = llm_sampler_chain_sample(s->chain, s->logits, m->info.n_vocab, &tok);
    if (st != LLM_OK) return SFAIL(s, st, "sampling: %s", llm_sampling_last_error());
    llm_sampler_chain_accept(s->chain, tok);
    s->logits_ready = false;
    s->pending = tok;
    s->has_pending = true;
    double t1 = llm__now_ms();
    if (s->decode_tokens == 0) {
        s->t_first_token = t1;
        s->ttft_ms = t1 - s->t_prefill_start;
    }
    s->decode_tokens++;
    s->total_decode++;
    s->decode_ms += t1 - t0;
    if (tok_out) *tok_out = tok;

    const char *piece = "", *out = "";
    size_t npiece = 0, nout = 0, used = 0;
    st = text_append(s, &used, "", 0);
    if (st != LLM_OK) return st;
    llm_status ms;
    if (llm__model_is_eog(m, tok)) {
        s->has_pending = false; /* never computed, never shown */
        s->stopped = true;
        /* Release what the detokenizer and the stop matcher still hold. */
        llm_detokenizer_flush(s->detok, &piece, &npiece);
        ms = llm_stop_matcher_feed(s->stop, piece, npiece, &out, &nout);
        if (ms >= 0) st = text_append(s, &used, out, nout);
        if (st == LLM_OK && ms == LLM_OK && llm_stop_matcher_flush(s->stop, &out, &nout) == LLM_OK)
            st = text_append(s, &used, out, nout);
        if (st != LLM_OK) return st;
        if (text) *text = s->text;
        if (len) *len = used;
        return SFAIL(s, LLM_END_OF_STREAM, "end-of-generation token %d", tok);
    }
    st = llm_detokenizer_push(s->detok, tok, &piece, &npiece);
    if (st != LLM_OK) return SFAIL(s, st, "%s", llm_tokenizer_last_error());
    ms = llm_stop_matcher_feed(s->stop, piece, npiece, &out, &nout);
    if (ms < 0) return SFAIL(s, ms, "%s", llm_sampling_last_error());
    st = text_append(s, &used, out, nout);
    if (st != LLM_OK) return st;
    if (text) *text = s->text;
    if (len) *len = used;
    if (ms == LLM_END_OF_STREAM) {
        s->stopped = true;
        return SFAIL(s, LLM_END_OF_STREAM, "stop string matched");
    }
    return LLM_OK;
}

llm_status llm_decode(llm_session *s, int32_t max_tokens, llm_token_callback cb, void *user) {
    if (!s) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_decode: NULL session");
    for (int32_t i = 0; max_tokens <= 0 || i < max_tokens; i++) {
        llm_token tok;
        const char *text;
        size_t len;
        llm_status st = llm_session_next_token(s, &tok, &text, &len);
        if (st == LLM_OK || st == LLM_END_OF_STREAM) {
            if (cb && (len || st == LLM_OK) && !cb(text, len, tok, user)) return LLM_OK;
            if (st == LLM_END_OF_STREAM) return st;
            continue;
        }
        return st;
    }
    return LLM_OK;
}

/* ---- telemetry ---------------------------------------------------------- */

llm_status llm_session_telemetry(const llm_session *s, llm_telemetry *t) {
    if (!s || !t) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_session_telemetry: NULL argument");
    memset(t, 0, sizeof *t);
    llm_model *m = s->m;
    t->load_ms = m->load_ms;
    t->ttft_ms = s->ttft_ms;
    t->prefill_tokens = s->prefill_tokens;
    t->reused_tokens = s->reused_tokens;
    t->prefill_ms = s->prefill_ms;
    t->prefill_tok_s = s->prefill_ms > 0 ? s->prefill_tokens * 1e3 / s->prefill_ms : 0;
    t->decode_tokens = s->decode_tokens;
    t->decode_ms = s->decode_ms;
    t->decode_tok_s = s->decode_ms > 0 ? s->decode_tokens * 1e3 / s->decode_ms : 0;
    t->total_prefill_tokens = s->total_prefill;
    t->total_reused_tokens = s->total_reused;
    t->total_decode_tokens = s->total_decode;
    t->n_past = s->n_past;
    t->n_ctx = s->n_ctx;
    llm_kv_stats ks;
    pthread_mutex_lock(&m->lock);
    llm_status st = llm_kv_pool_stats(m->pool, &ks);
    pthread_mutex_unlock(&m->lock);
    if (st == LLM_OK) {
        t->kv_blocks_used = ks.n_used;
        t->kv_blocks_total = ks.n_blocks;
    }
    t->kv_bytes = m->kv_bytes;
    t->weights_bytes = m->info.weights_bytes;
    t->peak_memory_bytes = llm__peak_rss();
    return LLM_OK;
}
