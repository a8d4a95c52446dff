/* One scheduler step (llama/engine_sched.h): what vLLM's scheduler
 * does, on the engine's sessions.
 *
 *   1. Cancelled requests leave (their session, and so their KV blocks, is
 *      freed).
 *   2. Jobs are packed into one batch of at most token_budget tokens:
 *      first every request with one token to compute (a decode: the token
 *      sampled last step), then chunks of pending prompts, oldest first.
 *      Each job appends its tokens to its KV sequence (a new sequence first
 *      takes the full blocks of its prompt that the prefix cache holds).
 *      When the pool is exhausted, a decode preempts the youngest running
 *      request that is not in this batch (its sequence is freed, its
 *      context kept: it is recomputed when admitted again; its full blocks
 *      usually survive in the prefix cache) and a prompt chunk shrinks to
 *      what fits or waits.
 *   3. One forward pass (llm__fwd_run_seqs) computes every job; each
 *      sequence gets its last token's logits.
 *   4. Jobs whose context is now fully computed sample their next token
 *      through the session's own sampler, stop matcher and detokenizer
 *      (llm_session_next_token), and their callbacks receive the text. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "engine_sched_internal.h"

void llm__sched_finish(llm_sched *sc, llm__sreq *r, llm_finish_reason finish, llm_status st, const char *msg) {
    llm_session_free(r->s); /* its blocks return to the pool; full ones stay in the prefix cache */
    r->s = NULL;
    llm_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = LLM_SCHED_DONE;
    ev.id = r->id;
    ev.text = "";
    ev.token = LLM_TOKEN_NULL;
    ev.finish = finish;
    ev.status = st;
    ev.message = msg ? msg : "";
    ev.prompt_tokens = r->n_prompt;
    ev.cached_tokens = r->cached;
    ev.completion_tokens = r->n_gen;
    ev.queue_ms = r->admitted ? r->t_admit - r->t_submit : llm__now_ms() - r->t_submit;
    ev.ttft_ms = r->t_first > 0 ? r->t_first - r->t_submit : 0;
    ev.preemptions = r->preemptions;
    r->finished = true;
    (void)sc;
    r->cb(&ev, r->user);
}

/* Releases a request's KV sequence, keeping its context for a recompute
 * (model lock held). */
static void preempt_locked(llm_sched *sc, llm__sreq *r) {
    llm_session *s = r->s;
    llm__kvs_free(sc->m, &s->ctx.seq);
    s->ctx.n_cached = 0;
    s->logits_ready = false;
    r->preempted = true;
    r->preemptions++;
}

static bool in_batch(const llm_sched *sc, int32_t nj, const llm__sreq *r) {
    for (int32_t j = 0; j < nj; j++)
        if (sc->jobs[j] == r) return true;
    return false;
}

/* The youngest running request holding KV blocks that is neither in the
 * batch nor `except`, or NULL. */
static llm__sreq *pick_victim(llm_sched *sc, int32_t nj, const llm__sreq *except) {
    llm__sreq *v = NULL;
    for (int32_t i = 0; i < sc->n_run; i++) {
        llm__sreq *r = sc->run[i];
        if (r == except || r->finished || r->preempted || !r->s || !llm__kvs_live(&r->s->ctx.seq) || in_batch(sc, nj, r)) continue;
        if (!v || r->order > v->order) v = r;
    }
    return v;
}

/* Creates the sequence of a request that has none, taking cached prefix
 * blocks (model lock held). */
static llm_status ensure_seq_locked(llm_sched *sc, llm__sreq *r) {
    llm__context *c = &r->s->ctx;
    if (llm__kvs_live(&c->seq)) return LLM_OK;
    llm_status st = llm__kvs_create(sc->m, &c->seq, sc->err);
    if (st != LLM_OK) return st;
    c->n_cached = 0;
    int32_t got = 0;
    if (c->n > 1) llm__kvs_attach(sc->m, &c->seq, c->tokens, c->n - 1, &got);
    c->n_cached = got;
    if (!r->attached) {
        r->attached = true;
        r->cached = got < r->n_prompt ? got : r->n_prompt;
    }
    return LLM_OK;
}

/* Appends `n` tokens of r's context to its sequence, with the block copy
 * the pool asks for (model lock held). LLM_ERR_EXHAUSTED leaves everything
 * as it was. */
static llm_status append_locked(llm_sched *sc, llm__sreq *r, int32_t n) {
    llm__context *c = &r->s->ctx;
    return llm__kvs_append(sc->m, &c->seq, c->tokens + c->n_cached, n, sc->err);
}

/* Flushes what the detokenizer and the stop matcher hold back (the end of a
 * request that did not end on a stop) and delivers it as a TEXT event. */
static void flush_text(llm__sreq *r) {
    llm__generation *g = &r->s->gen;
    const char *piece = "", *out = "", *tail = "";
    size_t npiece = 0, nout = 0, ntail = 0;
    llm_detokenizer_flush(g->detok, &piece, &npiece);
    char *buf = NULL;
    size_t nbuf = 0;
    if (llm_stop_matcher_feed(g->stop, piece, npiece, &out, &nout) >= 0 && nout) {
        buf = malloc(nout);
        if (buf) {
            memcpy(buf, out, nout);
            nbuf = nout;
        }
    }
    if (llm_stop_matcher_flush(g->stop, &tail, &ntail) == LLM_OK && ntail) {
        char *b = realloc(buf, nbuf + ntail);
        if (b) {
            memcpy(b + nbuf, tail, ntail);
            buf = b;
            nbuf += ntail;
        }
    }
    if (nbuf) {
        llm_sched_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = LLM_SCHED_TEXT;
        ev.id = r->id;
        ev.text = buf;
        ev.len = nbuf;
        ev.token = LLM_TOKEN_NULL;
        r->cb(&ev, r->user);
    }
    free(buf);
}

/* Samples r's next token from its fresh logits and delivers the events. */
static void sample_one(llm_sched *sc, llm__sreq *r, int64_t *n_gen) {
    llm_session *s = r->s;
    llm_token tok;
    const char *text;
    size_t len;
    llm_status st = llm_session_next_token(s, &tok, &text, &len);
    if (st != LLM_OK && st != LLM_END_OF_STREAM) {
        char msg[LLM__ERR_CAP];
        memcpy(msg, s->err, sizeof msg);
        llm__sched_finish(sc, r, LLM_FINISH_ERROR, st, msg);
        return;
    }
    r->n_gen++;
    (*n_gen)++;
    if (r->t_first <= 0) r->t_first = llm__now_ms();
    if (len || st == LLM_OK) {
        llm_sched_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = LLM_SCHED_TEXT;
        ev.id = r->id;
        ev.text = text;
        ev.len = len;
        ev.token = tok;
        r->cb(&ev, r->user);
    }
    if (st == LLM_END_OF_STREAM) {
        llm__sched_finish(sc, r, LLM_FINISH_STOP, LLM_OK, NULL);
    } else if ((r->max_tokens > 0 && r->n_gen >= r->max_tokens) || s->ctx.n > s->n_ctx) {
        flush_text(r);
        llm__sched_finish(sc, r, LLM_FINISH_LENGTH, LLM_OK, NULL);
    }
}

void llm__sched_step(llm_sched *sc) {
    llm_model *m = sc->m;
    const int32_t budget = sc->p.token_budget, V = m->info.n_vocab;
    int32_t nt = 0, nj = 0;
    int64_t n_preempt = 0, n_gen = 0, n_cached_new = 0;
    bool starved = false; /* a prompt chunk could not get blocks */

    for (int32_t i = 0; i < sc->n_run; i++) {
        llm__sreq *r = sc->run[i];
        if (!r->finished && atomic_load(&r->cancel)) llm__sched_finish(sc, r, LLM_FINISH_CANCELLED, LLM_OK, NULL);
    }

    pthread_mutex_lock(&m->lock);
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t i = 0; i < sc->n_run && nt < budget; i++) {
            llm__sreq *r = sc->run[i];
            if (r->finished || r->preempted) continue;
            llm__context *c = &r->s->ctx;
            const bool was_attached = r->attached;
            const int32_t pending = c->n - (llm__kvs_live(&c->seq) ? c->n_cached : 0);
            if ((pass == 0) != (pending == 1)) continue; /* decodes first, then prompts */
            llm_status st = ensure_seq_locked(sc, r);
            if (st == LLM_OK && !was_attached) n_cached_new += r->cached;
            int32_t chunk = c->n - c->n_cached;
            if (chunk > budget - nt) chunk = budget - nt;
            while (st == LLM_OK) {
                st = append_locked(sc, r, chunk);
                if (st != LLM_ERR_EXHAUSTED) break;
                if (pass == 1 && chunk > 1) { /* a prompt chunk shrinks to what fits */
                    chunk /= 2;
                    st = LLM_OK;
                    continue;
                }
                llm__sreq *v = pass == 0 ? pick_victim(sc, nj, r) : NULL;
                if (!v) break;
                preempt_locked(sc, v);
                n_preempt++;
                st = LLM_OK;
            }
            if (st == LLM_ERR_EXHAUSTED) {
                if (pass == 0 && nj > 0) { /* the batch holds the rest: wait, recomputing later */
                    preempt_locked(sc, r);
                    n_preempt++;
                }
                starved = true;
                continue;
            }
            if (st != LLM_OK) {
                char msg[LLM__ERR_CAP];
                memcpy(msg, sc->err, sizeof msg);
                pthread_mutex_unlock(&m->lock);
                llm__sched_finish(sc, r, LLM_FINISH_ERROR, st, msg);
                pthread_mutex_lock(&m->lock);
                continue;
            }
            sc->jobs[nj] = r;
            sc->job_pos0[nj] = c->n_cached;
            sc->seqs[nj].n = chunk;
            for (int32_t k = 0; k < chunk; k++) {
                sc->tokens[nt + k] = c->tokens[c->n_cached + k];
                sc->pos[nt + k] = c->n_cached + k;
            }
            nt += chunk;
            nj++;
        }
    }
    if (nj == 0 && starved) {
        /* Nothing fits while requests hold blocks: the youngest yields. */
        llm__sreq *v = pick_victim(sc, 0, NULL);
        if (v) {
            preempt_locked(sc, v);
            n_preempt++;
        }
    }
    llm_status st = LLM_OK;
    char ferr[LLM__ERR_CAP] = "";
    if (nj > 0) {
        for (int32_t j = 0; j < nj; j++)
            llm__kvs_tables(m, &sc->jobs[j]->s->ctx.seq, &sc->seqs[j]);
        st = llm__fwd_run_seqs(m->fwd, sc->tokens, sc->pos, nt, sc->seqs, nj, sc->logits, ferr, sizeof ferr);
        for (int32_t j = 0; j < nj; j++) {
            llm__context *c = &sc->jobs[j]->s->ctx;
            if (st == LLM_OK) {
                llm__kvs_commit(m, &c->seq, sc->job_pos0[j] + sc->seqs[j].n);
                c->n_cached = sc->job_pos0[j] + sc->seqs[j].n;
            } else {
                llm__kvs_keep(m, &c->seq, sc->job_pos0[j]);
            }
        }
    }
    pthread_mutex_unlock(&m->lock);

    for (int32_t j = 0; j < nj; j++) {
        llm__sreq *r = sc->jobs[j];
        if (st != LLM_OK) {
            llm__sched_finish(sc, r, LLM_FINISH_ERROR, st, ferr);
            continue;
        }
        llm_session *s = r->s;
        if (s->ctx.n_cached < s->ctx.n) continue; /* more prompt next step */
        memcpy(s->logits, sc->logits + (size_t)j * (size_t)V, (size_t)V * sizeof *s->logits);
        s->logits_ready = true;
        sample_one(sc, r, &n_gen);
    }

    pthread_mutex_lock(&sc->lock);
    sc->steps += nj > 0;
    sc->computed_tokens += st == LLM_OK ? nt : 0;
    sc->gen_tokens += n_gen;
    sc->preemptions += n_preempt;
    sc->cached_tokens += n_cached_new;
    pthread_mutex_unlock(&sc->lock);
}
