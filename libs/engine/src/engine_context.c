/* A session's context and the one compute step every entry point ends with
 * (engine_prefill.c, engine_decode.c, engine_session.c's truncate, the
 * scheduler's requests): growing the token array, starting a new answer,
 * and llm__session_compute, which brings the KV sequence to n_cached, takes
 * whole cached blocks from the prefix index when the context starts empty,
 * and computes tokens[n_cached..n) through the batch loop (engine_compute.c).
 * It calls no other session file: they all call down into it. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

#define SFAIL(s, st, ...) llm__fail((s)->err, (st), __VA_ARGS__)

void llm__session_start_generation(llm_session *s) {
    llm_stop_matcher_reset(s->gen.stop);
    llm_detokenizer_reset(s->gen.detok);
    s->gen.stopped = false;
}

llm_status llm__ctx_reserve(llm_session *s, int32_t n) {
    if (n <= s->ctx.cap) return LLM_OK;
    int32_t cap = s->ctx.cap;
    while (cap < n) cap *= 2;
    llm_token *c = realloc(s->ctx.tokens, (size_t)cap * sizeof *c);
    if (!c) return SFAIL(s, LLM_ERR_NO_MEMORY, "out of memory");
    s->ctx.tokens = c;
    s->ctx.cap = cap;
    return LLM_OK;
}

/* ---- the compute step --------------------------------------------------- */

/* Brings the sequence to exactly ctx.n_cached tokens (model lock held). A
 * cut the window layers cannot resume from drops the sequence: n_cached
 * becomes 0 and everything is recomputed (from the prefix cache if it can). */
static llm_status sync_seq_locked(llm_session *s) {
    llm_model *m = s->m;
    if (llm__kvs_live(&s->ctx.seq)) s->ctx.n_cached = llm__kvs_keep(m, &s->ctx.seq, s->ctx.n_cached);
    if (!llm__kvs_live(&s->ctx.seq)) {
        s->ctx.n_cached = 0;
        return llm__kvs_create(m, &s->ctx.seq, s->err);
    }
    return LLM_OK;
}

llm_status llm__session_compute(llm_session *s, float *all, int32_t rows_from, bool decoding) {
    llm_model *m = s->m;
    llm__context *c = &s->ctx;
    llm__session_stats *x = &s->stats;
    if (!decoding) {
        x->t_prefill_start = llm__now_ms();
        x->ttft_ms = x->decode_ms = 0;
        x->decode_tokens = 0;
    }
    s->logits_ready = false;
    pthread_mutex_lock(&m->lock);
    llm_status st = sync_seq_locked(s);
    int32_t reused = c->n_cached;
    if (st == LLM_OK && c->n_cached == 0 && c->n > 1 && !all) {
        /* Empty context: take whole cached blocks of this prompt from the
         * prefix index, leaving at least one token to compute for logits. */
        int32_t cached = 0;
        llm__kvs_attach(m, &c->seq, c->tokens, c->n - 1, &cached);
        c->n_cached = reused = cached;
    }
    /* Admission: refuse before computing anything if the pool cannot hold it. */
    if (st == LLM_OK) st = llm__kvs_admit(m, &c->seq, c->n - c->n_cached, s->err);
    const int32_t before = c->n_cached;
    if (st == LLM_OK) {
        llm__job job = {
            .seq = c->seq,
            .tokens = c->tokens + c->n_cached,
            .n = c->n - c->n_cached,
            .index = true,
            .what = all ? LLM__FWD_LOGITS_ALL : LLM__FWD_LOGITS_LAST,
            .rows = all,
            .rows_from = all ? rows_from - c->n_cached : 0,
            .last = s->logits,
            .cancel = &s->cancel,
        };
        st = llm__compute(m, &job, s->err);
        c->n_cached += job.done;
    }
    pthread_mutex_unlock(&m->lock);
    if (st == LLM_CANCELLED) atomic_store(&s->cancel, 0);
    if (st == LLM_OK) {
        s->logits_ready = true;
    } else if (!decoding) {
        c->n = c->n_cached; /* the tokens not computed leave the context */
    }
    if (!decoding) {
        x->prefill_ms = llm__now_ms() - x->t_prefill_start;
        x->prefill_tokens = c->n_cached - before;
        x->reused_tokens = reused;
        x->total_prefill += x->prefill_tokens;
        x->total_reused += reused;
    }
    return st;
}
