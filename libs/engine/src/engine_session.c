/* Sessions: one conversation each (llama/engine.h). A session holds its
 * context (every token, and how many are in its KV sequence), the logits of
 * its last computed token, and what turns logits into text (sampler chain,
 * stop matcher, streaming detokenizer). This file creates, forks, resets
 * and reports on sessions; engine_prefill.c and engine_decode.c edit the
 * context. All three run the one compute step (llm__session_compute) of
 * engine_context.c, which calls none of them. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

#define SFAIL(s, st, ...) llm__fail((s)->err, (st), __VA_ARGS__)

/* ---- sampler / stop / detok setup --------------------------------------- */

llm_status llm__session_build_chain(llm_session *s) {
    llm_sampler_params p = llm__sampler_params_from(&s->gen.sp, s->m->info.n_vocab);
    p.logit_bias = s->gen.bias;
    p.n_logit_bias = s->gen.n_bias;
    if (s->gen.con) {
        p.mask = llm__constraint_mask;
        p.mask_user = s->gen.con;
    }
    llm_sampler_chain *ch = NULL;
    llm_status st = llm_sampler_chain_from_params(&p, &ch);
    if (st != LLM_OK) return SFAIL(s, st, "sampler: %s", llm_sampling_last_error());
    llm_sampler_chain_free(s->gen.chain);
    s->gen.chain = ch;
    return LLM_OK;
}

static llm_status build_stop(llm_session *s) {
    llm_stop_matcher *sm = NULL;
    llm_status st = llm_stop_matcher_create((const char *const *)s->gen.stops, s->gen.n_stops, &sm);
    if (st != LLM_OK) return SFAIL(s, st, "stop strings: %s", llm_sampling_last_error());
    llm_stop_matcher_free(s->gen.stop);
    s->gen.stop = sm;
    return LLM_OK;
}

/* ---- lifecycle ---------------------------------------------------------- */

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
    s->n_ctx = p.n_ctx ? p.n_ctx : m->n_ctx;
    s->ctx.seq = LLM__KVSEQ_NONE;
    s->ctx.cap = 256;
    s->ctx.tokens = malloc((size_t)s->ctx.cap * sizeof *s->ctx.tokens);
    s->gen.sp = p.sampling;
    atomic_init(&s->cancel, 0);
    s->logits = malloc((size_t)m->info.n_vocab * sizeof *s->logits);
    llm_status st = LLM_ERR_NO_MEMORY;
    if (!s->logits || !s->ctx.tokens) goto fail;
    if ((st = llm__session_build_chain(s)) != LLM_OK) goto fail;
    if ((st = build_stop(s)) != LLM_OK) goto fail;
    st = llm_detokenizer_create(m->tok, LLM_DETOKENIZE_SKIP_SPECIAL, &s->gen.detok);
    if (st != LLM_OK) goto fail;
    *out = s;
    return LLM_OK;
fail:
    llm__fail(m->err, st, "cannot create session: %s", llm_status_str(st));
    llm_session_free(s);
    return st;
}

llm_status llm_session_fork(const llm_session *src, llm_session **out) {
    if (out) *out = NULL;
    if (!src || !out) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_session_fork: NULL argument");
    llm_session_params p = llm_session_default_params();
    p.n_ctx = src->n_ctx;
    p.sampling = src->gen.sp;
    llm_session *s;
    llm_status st = llm_session_new(src->m, &p, &s);
    if (st != LLM_OK) return st;
    if ((st = llm__ctx_reserve(s, src->ctx.n)) != LLM_OK ||
        (st = llm_session_set_stop(s, (const char *const *)src->gen.stops, src->gen.n_stops)) != LLM_OK) {
        llm__fail(NULL, st, "llm_session_fork: %s", s->err);
        llm_session_free(s);
        return st;
    }
    if (src->gen.n_bias && (s->gen.bias = malloc(src->gen.n_bias * sizeof *s->gen.bias)) != NULL) {
        memcpy(s->gen.bias, src->gen.bias, src->gen.n_bias * sizeof *s->gen.bias);
        s->gen.n_bias = src->gen.n_bias;
    }
    if ((src->gen.n_bias && !s->gen.bias) ||
        (src->gen.con && (st = llm__constraint_clone(src->gen.con, &s->gen.con, s->err)) != LLM_OK) ||
        ((src->gen.n_bias || src->gen.con) && (st = llm__session_build_chain(s)) != LLM_OK)) {
        if (st == LLM_OK) st = LLM_ERR_NO_MEMORY;
        llm__fail(NULL, st, "llm_session_fork: %s", s->err);
        llm_session_free(s);
        return st;
    }
    if (llm__kvs_live(&src->ctx.seq)) {
        /* Share every block of every layer group; the copy-on-write copies
         * the pools report on a later append are done by llm__kvs_append(). */
        char kerr[LLM__ERR_CAP];
        pthread_mutex_lock(&src->m->lock);
        st = llm__kvs_fork(src->m, &src->ctx.seq, &s->ctx.seq, kerr);
        pthread_mutex_unlock(&src->m->lock);
        if (st != LLM_OK) {
            llm__fail(NULL, st, "llm_session_fork: %s", kerr);
            llm_session_free(s);
            return st;
        }
    }
    if (src->ctx.n) memcpy(s->ctx.tokens, src->ctx.tokens, (size_t)src->ctx.n * sizeof *s->ctx.tokens);
    s->ctx.n = src->ctx.n;
    s->ctx.n_cached = src->ctx.n_cached;
    memcpy(s->logits, src->logits, (size_t)src->m->info.n_vocab * sizeof *s->logits);
    s->logits_ready = src->logits_ready;
    *out = s;
    return LLM_OK;
}

static void release_seq(llm_session *s) {
    if (llm__kvs_live(&s->ctx.seq)) {
        pthread_mutex_lock(&s->m->lock);
        llm__kvs_free(s->m, &s->ctx.seq);
        pthread_mutex_unlock(&s->m->lock);
    }
}

void llm_session_free(llm_session *s) {
    if (!s) return;
    release_seq(s);
    llm_sampler_chain_free(s->gen.chain);
    llm__constraint_free(s->gen.con);
    free(s->gen.bias);
    llm_stop_matcher_free(s->gen.stop);
    llm_detokenizer_free(s->gen.detok);
    for (size_t i = 0; i < s->gen.n_stops; i++) free(s->gen.stops[i]);
    free(s->gen.stops);
    free(s->gen.text);
    free(s->logits);
    free(s->ctx.tokens);
    free(s);
}

llm_status llm_session_reset(llm_session *s) {
    if (!s) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_session_reset: NULL session");
    release_seq(s);
    s->ctx.n = s->ctx.n_cached = 0;
    s->logits_ready = false;
    llm_sampler_chain_reset(s->gen.chain);
    llm__constraint_restart(s->gen.con);
    llm__session_start_generation(s);
    atomic_store(&s->cancel, 0);
    return LLM_OK;
}

llm_status llm_session_truncate(llm_session *s, int32_t n_keep) {
    if (!s || n_keep < 0 || n_keep > s->ctx.n_cached)
        return llm__fail(s ? s->err : NULL, LLM_ERR_INVALID_ARG, "llm_session_truncate: n_keep out of range");
    s->ctx.n = s->ctx.n_cached = n_keep;
    llm__constraint_truncate(s->gen.con, n_keep);
    if (n_keep == 0) {
        release_seq(s);
    } else if (llm__kvs_live(&s->ctx.seq)) {
        pthread_mutex_lock(&s->m->lock);
        s->ctx.n_cached = llm__kvs_keep(s->m, &s->ctx.seq, n_keep);
        pthread_mutex_unlock(&s->m->lock);
        if (s->ctx.n_cached < n_keep) {
            /* The cut reached into window blocks already released: the
             * window layers cannot resume there, so the kept tokens are
             * recomputed now (from the prefix cache where it can). */
            llm_status st = llm__session_compute(s, NULL, 0, false);
            s->logits_ready = false;
            return st;
        }
    }
    s->logits_ready = false;
    return LLM_OK;
}

/* ---- settings ----------------------------------------------------------- */

llm_status llm_session_set_sampler(llm_session *s, const llm_sampling_params *p) {
    if (!s || !p) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_session_set_sampler: NULL argument");
    llm_sampling_params old = s->gen.sp;
    s->gen.sp = *p;
    llm_status st = llm__session_build_chain(s);
    if (st != LLM_OK) s->gen.sp = old;
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
    char **old = s->gen.stops;
    size_t old_n = s->gen.n_stops;
    s->gen.stops = copy;
    s->gen.n_stops = n;
    llm_status st = build_stop(s);
    if (st != LLM_OK) {
        s->gen.stops = old;
        s->gen.n_stops = old_n;
        old = copy;
        old_n = n;
    }
    for (size_t i = 0; i < old_n; i++) free(old[i]);
    free(old);
    return st;
}

llm_status llm_session_set_constraint(llm_session *s, const llm_constraint *c) {
    if (!s) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_session_set_constraint: NULL session");
    llm__constraint *k = NULL;
    if (c && (c->grammar || c->json_schema)) {
        llm_status st = llm__constraint_new(s->m, c, &k, s->err);
        if (st != LLM_OK) return st;
    }
    llm__constraint *old = s->gen.con;
    s->gen.con = k;
    llm_status st = llm__session_build_chain(s);
    if (st != LLM_OK) {
        s->gen.con = old;
        llm__constraint_free(k);
        return st;
    }
    llm__constraint_free(old);
    return LLM_OK;
}

void llm_session_cancel(llm_session *s) {
    if (s) atomic_store(&s->cancel, 1);
}

/* ---- inspection --------------------------------------------------------- */

int32_t llm_session_n_past(const llm_session *s) { return s ? s->ctx.n_cached : 0; }
int32_t llm_session_n_ctx(const llm_session *s) { return s ? s->n_ctx : 0; }

int32_t llm_session_tokens(const llm_session *s, llm_token *out, int32_t cap) {
    if (!s) return 0;
    const int32_t n = s->ctx.n_cached;
    if (cap < n || (!out && n)) return -n;
    if (n) memcpy(out, s->ctx.tokens, (size_t)n * sizeof *out);
    return n;
}

const char *llm_session_last_error(const llm_session *s) { return s ? s->err : ""; }

const float *llm_session_logits(const llm_session *s) { return s && s->logits_ready ? s->logits : NULL; }

llm_status llm_session_telemetry(const llm_session *s, llm_telemetry *t) {
    if (!s || !t) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_session_telemetry: NULL argument");
    memset(t, 0, sizeof *t);
    const llm_model *m = s->m;
    const llm__session_stats *x = &s->stats;
    t->load_ms = m->load_ms;
    t->ttft_ms = x->ttft_ms;
    t->prefill_tokens = x->prefill_tokens;
    t->reused_tokens = x->reused_tokens;
    t->prefill_ms = x->prefill_ms;
    t->prefill_tok_s = x->prefill_ms > 0 ? x->prefill_tokens * 1e3 / x->prefill_ms : 0;
    t->decode_tokens = x->decode_tokens;
    t->decode_ms = x->decode_ms;
    t->decode_tok_s = x->decode_ms > 0 ? x->decode_tokens * 1e3 / x->decode_ms : 0;
    t->total_prefill_tokens = x->total_prefill;
    t->total_reused_tokens = x->total_reused;
    t->total_decode_tokens = x->total_decode;
    t->n_past = s->ctx.n_cached;
    t->n_ctx = s->n_ctx;
    llm__kvs_usage u;
    pthread_mutex_lock(&s->m->lock);
    llm__kvs_usage_get(m, &u);
    pthread_mutex_unlock(&s->m->lock);
    t->kv_blocks_used = u.used;
    t->kv_blocks_total = u.total;
    t->kv_swa_blocks_used = u.swa_used;
    t->kv_swa_blocks_total = u.swa_total;
    t->kv_bytes = m->kv_bytes;
    t->weights_bytes = m->info.weights_bytes;
    t->peak_memory_bytes = llm__peak_rss();
    return LLM_OK;
}
