/* The scheduler (llama/engine_sched.h): a bounded waiting queue, a
 * running set of at most max_running requests, and one worker thread that
 * admits, steps (engine_sched_step.c) and retires requests. Calls go one
 * way: this file calls the step file (llm__sched_step, llm__sched_finish),
 * never the reverse.
 *
 * Locking: sc->lock guards the queue, the running set's membership, the
 * flags and the counters; the worker releases it for the step, during which
 * other threads may only queue new requests and raise cancel flags. The
 * model's lock is taken inside the step around the KV pool and the forward
 * pass, never while holding sc->lock. Callbacks run with neither lock. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "engine_sched_internal.h"

_Static_assert(sizeof(llm_token_bias) == sizeof(llm_logit_bias), "llm_token_bias mirrors llm_logit_bias");

llm_sched_params llm_sched_default_params(void) {
    llm_sched_params p;
    memset(&p, 0, sizeof p);
    p.max_running = 4;
    p.max_waiting = 64;
    p.token_budget = 0;
    return p;
}

llm_sched_request llm_sched_default_request(void) {
    llm_sched_request r;
    memset(&r, 0, sizeof r);
    r.sampling = llm_sampling_default_params();
    return r;
}

/* ---- requests ------------------------------------------------------------ */

static void sreq_free(llm__sreq *r) {
    if (!r) return;
    llm_session_free(r->s);
    free(r);
}

/* Builds the request's session: the prompt as its context (nothing
 * computed), its sampler (with logit bias and constraint) and stop strings. */
static llm_status sreq_make(llm_sched *sc, const llm_sched_request *q, llm__sreq **out) {
    llm_model *m = sc->m;
    *out = NULL;
    llm__sreq *r = calloc(1, sizeof *r);
    if (!r) return llm__fail(NULL, LLM_ERR_NO_MEMORY, "out of memory");
    llm_session_params sp = llm_session_default_params();
    sp.sampling = q->sampling;
    llm_status st = llm_session_new(m, &sp, &r->s);
    if (st != LLM_OK) {
        free(r);
        return llm__fail(NULL, st, "request: %s", llm_model_last_error(m));
    }
    llm_session *s = r->s;
    if (q->n_stops && (st = llm_session_set_stop(s, q->stops, q->n_stops)) != LLM_OK) {
        llm__fail(NULL, st, "request: %s", s->err);
        sreq_free(r);
        return st;
    }
    if (q->n_bias) {
        s->gen.bias = malloc(q->n_bias * sizeof *s->gen.bias);
        if (!s->gen.bias) {
            llm__fail(NULL, LLM_ERR_NO_MEMORY, "out of memory");
            sreq_free(r);
            return LLM_ERR_NO_MEMORY;
        }
        memcpy(s->gen.bias, q->bias, q->n_bias * sizeof *s->gen.bias);
        s->gen.n_bias = q->n_bias;
    }
    if (q->constraint && (q->constraint->grammar || q->constraint->json_schema) &&
        (st = llm__constraint_new(m, q->constraint, &s->gen.con, s->err)) != LLM_OK) {
        llm__fail(NULL, st, "%s", s->err);
        sreq_free(r);
        return st;
    }
    if ((q->n_bias || s->gen.con) && (st = llm__session_build_chain(s)) != LLM_OK) {
        llm__fail(NULL, st, "%s", s->err);
        sreq_free(r);
        return st;
    }
    if ((st = llm__ctx_reserve(s, q->n_prompt + 1)) != LLM_OK) {
        llm__fail(NULL, st, "out of memory");
        sreq_free(r);
        return st;
    }
    memcpy(s->ctx.tokens, q->prompt, (size_t)q->n_prompt * sizeof *q->prompt);
    s->ctx.n = q->n_prompt;
    s->ctx.n_cached = 0;
    llm__session_start_generation(s);
    r->n_prompt = q->n_prompt;
    r->max_tokens = q->max_tokens;
    r->cb = q->callback;
    r->user = q->user;
    atomic_init(&r->cancel, 0);
    *out = r;
    return LLM_OK;
}

/* ---- the worker ---------------------------------------------------------- */

/* Takes cancelled requests out of the queue and the running set (sc->lock
 * held) into *dead; running ones are marked and retired by the caller. */
static void collect_cancelled(llm_sched *sc, llm__sreq **dead) {
    llm__sreq **pp = &sc->wait_head, *last = NULL;
    while (*pp) {
        llm__sreq *r = *pp;
        if (sc->stop || sc->cancel_all || atomic_load(&r->cancel)) {
            *pp = r->next;
            r->next = *dead;
            *dead = r;
            sc->n_waiting--;
        } else {
            last = r;
            pp = &r->next;
        }
    }
    sc->wait_tail = last;
    for (int32_t i = 0; i < sc->n_run; i++)
        if (sc->stop || sc->cancel_all) atomic_store(&sc->run[i]->cancel, 1);
    sc->cancel_all = false;
}

/* Removes finished requests from the running set and puts preempted ones
 * back at the head of the queue, oldest first (sc->lock held). */
static void compact_running(llm_sched *sc) {
    int32_t k = 0;
    llm__sreq *back = NULL, *back_last = NULL;
    for (int32_t i = 0; i < sc->n_run; i++) {
        llm__sreq *r = sc->run[i];
        if (r->finished) {
            sreq_free(r);
        } else if (r->preempted) {
            r->preempted = false;
            r->next = NULL;
            if (back_last) back_last->next = r;
            else back = r;
            back_last = r;
            sc->n_waiting++;
        } else {
            sc->run[k++] = r;
        }
    }
    sc->n_run = k;
    if (back) {
        back_last->next = sc->wait_head;
        if (!sc->wait_head) sc->wait_tail = back_last;
        sc->wait_head = back;
    }
}

static void *worker(void *arg) {
    llm_sched *sc = arg;
    pthread_mutex_lock(&sc->lock);
    for (;;) {
        llm__sreq *dead = NULL;
        collect_cancelled(sc, &dead);
        while (sc->n_run < sc->p.max_running && sc->wait_head) {
            llm__sreq *r = sc->wait_head;
            sc->wait_head = r->next;
            if (!sc->wait_head) sc->wait_tail = NULL;
            sc->n_waiting--;
            r->next = NULL;
            r->order = ++sc->next_order;
            if (!r->admitted) {
                r->admitted = true;
                r->t_admit = llm__now_ms();
                sc->prompt_tokens += r->n_prompt;
            }
            sc->run[sc->n_run++] = r;
        }
        if (!dead && sc->n_run == 0) {
            if (sc->stop) break;
            pthread_cond_wait(&sc->cond, &sc->lock);
            continue;
        }
        pthread_mutex_unlock(&sc->lock);
        while (dead) {
            llm__sreq *r = dead;
            dead = r->next;
            llm__sched_finish(sc, r, LLM_FINISH_CANCELLED, LLM_OK, NULL);
            sreq_free(r);
        }
        if (sc->n_run) llm__sched_step(sc); /* n_run changes only on this thread */
        pthread_mutex_lock(&sc->lock);
        compact_running(sc);
    }
    pthread_mutex_unlock(&sc->lock);
    return NULL;
}

/* ---- API ----------------------------------------------------------------- */

llm_status llm_sched_new(llm_model *m, const llm_sched_params *params, llm_sched **out) {
    if (out) *out = NULL;
    if (!m || !out) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_sched_new: NULL argument");
    if (m->vocab_only || m->info.is_encoder)
        return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_sched_new: the model cannot generate (%s)",
                         m->vocab_only ? "vocab_only" : "encoder");
    llm_sched_params p = params ? *params : llm_sched_default_params();
    if (p.max_running < 1 || p.max_running > 1024 || p.max_waiting < 0 || p.token_budget < 0)
        return llm__fail(NULL, LLM_ERR_INVALID_ARG,
                         "llm_sched_new: max_running %d (1..1024), max_waiting %d, token_budget %d", p.max_running,
                         p.max_waiting, p.token_budget);
    if (p.token_budget == 0 || p.token_budget > m->n_batch) p.token_budget = m->n_batch;
    if (p.max_running > p.token_budget) p.max_running = p.token_budget;
    llm_sched *sc = calloc(1, sizeof *sc);
    if (!sc) return llm__fail(NULL, LLM_ERR_NO_MEMORY, "out of memory");
    sc->m = m;
    sc->p = p;
    const size_t R = (size_t)p.max_running, B = (size_t)p.token_budget;
    sc->run = calloc(R, sizeof *sc->run);
    sc->tokens = malloc(B * sizeof *sc->tokens);
    sc->pos = malloc(B * sizeof *sc->pos);
    sc->seqs = malloc(R * sizeof *sc->seqs);
    sc->jobs = malloc(R * sizeof *sc->jobs);
    sc->job_pos0 = malloc(R * sizeof *sc->job_pos0);
    sc->logits = malloc(R * (size_t)m->info.n_vocab * sizeof *sc->logits);
    if (!sc->run || !sc->tokens || !sc->pos || !sc->seqs || !sc->jobs || !sc->job_pos0 || !sc->logits) {
        llm_sched_free(sc);
        return llm__fail(NULL, LLM_ERR_NO_MEMORY, "out of memory");
    }
    pthread_mutex_init(&sc->lock, NULL);
    pthread_cond_init(&sc->cond, NULL);
    if (pthread_create(&sc->thread, NULL, worker, sc) != 0) {
        pthread_mutex_destroy(&sc->lock);
        pthread_cond_destroy(&sc->cond);
        llm_sched_free(sc);
        return llm__fail(NULL, LLM_ERR_INTERNAL, "llm_sched_new: cannot start the worker thread");
    }
    sc->started = true;
    *out = sc;
    return LLM_OK;
}

void llm_sched_free(llm_sched *sc) {
    if (!sc) return;
    if (sc->started) {
        pthread_mutex_lock(&sc->lock);
        sc->stop = true;
        pthread_cond_signal(&sc->cond);
        pthread_mutex_unlock(&sc->lock);
        pthread_join(sc->thread, NULL);
        pthread_mutex_destroy(&sc->lock);
        pthread_cond_destroy(&sc->cond);
    }
    free(sc->run);
    free(sc->tokens);
    free(sc->pos);
    free(sc->seqs);
    free(sc->jobs);
    free(sc->job_pos0);
    free(sc->logits);
    free(sc);
}

llm_status llm_sched_submit(llm_sched *sc, const llm_sched_request *q, uint64_t *id) {
    if (id) *id = 0;
    if (!sc || !q) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_sched_submit: NULL argument");
    if (!q->callback) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_sched_submit: no callback");
    if (q->n_prompt <= 0 || !q->prompt) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_sched_submit: empty prompt");
    if ((q->n_stops && !q->stops) || (q->n_bias && !q->bias))
        return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_sched_submit: NULL stops or bias");
    const int32_t V = sc->m->info.n_vocab;
    for (int32_t i = 0; i < q->n_prompt; i++)
        if (q->prompt[i] < 0 || q->prompt[i] >= V)
            return llm__fail(NULL, LLM_ERR_INVALID_ARG, "token id %d at index %d is outside [0, %d)", q->prompt[i], i,
                             V);
    for (size_t i = 0; i < q->n_bias; i++)
        if (q->bias[i].token < 0 || q->bias[i].token >= V)
            return llm__fail(NULL, LLM_ERR_INVALID_ARG, "logit bias token %d is outside [0, %d)", q->bias[i].token, V);
    if (q->n_prompt > sc->m->n_ctx)
        return llm__fail(NULL, LLM_CONTEXT_FULL, "the prompt has %d tokens, more than the context size %d",
                         q->n_prompt, sc->m->n_ctx);
    /* Cheap refusals before building anything. */
    pthread_mutex_lock(&sc->lock);
    bool stopping = sc->stop, full = sc->n_waiting >= sc->p.max_waiting + (sc->p.max_running - sc->n_run);
    pthread_mutex_unlock(&sc->lock);
    if (stopping) return llm__fail(NULL, LLM_ERR_STATE, "the scheduler is shutting down");
    if (full) return llm__fail(NULL, LLM_ERR_EXHAUSTED, "the queue is full (%d requests waiting)", sc->p.max_waiting);
    llm__sreq *r;
    llm_status st = sreq_make(sc, q, &r);
    if (st != LLM_OK) return st;
    pthread_mutex_lock(&sc->lock);
    if (sc->stop) {
        pthread_mutex_unlock(&sc->lock);
        sreq_free(r);
        return llm__fail(NULL, LLM_ERR_STATE, "the scheduler is shutting down");
    }
    /* The queue bound counts what is waiting beyond the free running slots. */
    if (sc->n_waiting >= sc->p.max_waiting + (sc->p.max_running - sc->n_run)) {
        pthread_mutex_unlock(&sc->lock);
        sreq_free(r);
        return llm__fail(NULL, LLM_ERR_EXHAUSTED, "the queue is full (%d requests waiting)", sc->p.max_waiting);
    }
    r->id = ++sc->next_id;
    r->t_submit = llm__now_ms();
    if (sc->wait_tail) sc->wait_tail->next = r;
    else sc->wait_head = r;
    sc->wait_tail = r;
    sc->n_waiting++;
    if (id) *id = r->id;
    pthread_cond_signal(&sc->cond);
    pthread_mutex_unlock(&sc->lock);
    return LLM_OK;
}

void llm_sched_cancel(llm_sched *sc, uint64_t id) {
    if (!sc || !id) return;
    pthread_mutex_lock(&sc->lock);
    for (llm__sreq *r = sc->wait_head; r; r = r->next)
        if (r->id == id) atomic_store(&r->cancel, 1);
    for (int32_t i = 0; i < sc->n_run; i++)
        if (sc->run[i]->id == id) atomic_store(&sc->run[i]->cancel, 1);
    pthread_cond_signal(&sc->cond);
    pthread_mutex_unlock(&sc->lock);
}

void llm_sched_cancel_all(llm_sched *sc) {
    if (!sc) return;
    pthread_mutex_lock(&sc->lock);
    sc->cancel_all = true;
    pthread_cond_signal(&sc->cond);
    pthread_mutex_unlock(&sc->lock);
}

llm_status llm_sched_get_stats(llm_sched *sc, llm_sched_stats *out) {
    if (!sc || !out) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_sched_get_stats: NULL argument");
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&sc->lock);
    out->running = sc->n_run;
    out->waiting = sc->n_waiting;
    out->steps = sc->steps;
    out->preemptions = sc->preemptions;
    out->prompt_tokens = sc->prompt_tokens;
    out->cached_prompt_tokens = sc->cached_tokens;
    out->computed_tokens = sc->computed_tokens;
    out->generated_tokens = sc->gen_tokens;
    pthread_mutex_unlock(&sc->lock);
    llm__kvs_usage u;
    pthread_mutex_lock(&sc->m->lock);
    llm__kvs_usage_get(sc->m, &u);
    pthread_mutex_unlock(&sc->m->lock);
    out->kv_blocks_used = u.used;
    out->kv_blocks_cached = u.cached;
    out->kv_blocks_total = u.total;
    out->kv_swa_blocks_used = u.swa_used;
    out->kv_swa_blocks_total = u.swa_total;
    out->prefix_queries = u.lookups;
    out->prefix_hit_blocks = u.hit_blocks;
    out->prefix_miss_blocks = u.miss_blocks;
    return LLM_OK;
}
