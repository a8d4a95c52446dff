/*
 * llama/engine_sched.h -- the scheduler: continuous batching of many
 * generation requests on one model loaded with llama/engine.h.
 *
 * A scheduler runs many generation requests on one model at once, in the
 * way vLLM's does. It owns one worker thread that repeats a step: requests
 * join (from a bounded waiting queue) and leave between steps, and each step
 * is ONE forward pass holding the next token of every decoding request
 * first, then chunks of pending prompts up to a token budget. Weight rows
 * are thus read once per step for all requests. Requests share the model's
 * prefix cache (full KV blocks of identical prompt prefixes are computed
 * once). When KV blocks run out, a decoding request preempts the youngest
 * running request, which goes back to the head of the queue and is
 * recomputed later from its tokens (its sampler state and output so far are
 * kept, so its text continues where it was); nothing is ever corrupted. A
 * cancelled request leaves at the next step and its blocks return to the
 * pool. Each request samples with its own sampler and seed
 * (llm_sampling_params, llama/engine.h), and may carry a constraint (a
 * grammar or a JSON schema, llm_constraint) with its own matcher.
 *
 * Determinism: the forward treats every sequence of a batch on its own, so
 * with the CPU backend a request's logits, and so its tokens for a given
 * seed, do not depend on what else is in the step (tested in
 * tests/engine/test_engine_sched.c). A preempted request's recomputed
 * prefix goes through prompt-sized passes instead of one-token steps, which
 * sums in another order; preemption may therefore change later tokens.
 *
 * Usage (error checks shortened; `toks`/`n` from llm_tokenize):
 *
 *     static void on_event(const llm_sched_event *ev, void *user) {
 *         if (ev->kind == LLM_SCHED_TEXT) {        // on the worker thread
 *             fwrite(ev->text, 1, ev->len, stdout);
 *         } else {                                 // DONE: the last event
 *             printf("\n[%d tokens]\n", ev->completion_tokens);
 *             signal_done(user);                   // e.g. a condition variable
 *         }
 *     }
 *
 *     llm_sched *sc;
 *     llm_sched_new(model, NULL, &sc);             // starts the worker thread
 *     llm_sched_request r = llm_sched_default_request();
 *     r.prompt = toks; r.n_prompt = n; r.max_tokens = 64;
 *     r.callback = on_event; r.user = ctx;
 *     uint64_t id;
 *     if (llm_sched_submit(sc, &r, &id) == LLM_OK)
 *         wait_done(ctx);                          // llm_sched_cancel(sc, id) ends it early
 *     llm_sched_free(sc);                          // cancels what still runs
 *
 * Threads: every function may be called from any thread; llm_sched_cancel
 * may also be called from within a callback. Errors and ownership follow
 * llama/engine.h (messages in llm_last_error()).
 */
#ifndef LLAMA_ENGINE_SCHED_H
#define LLAMA_ENGINE_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "llama/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct llm_sched llm_sched; /* opaque: queue, running set, worker thread */

typedef struct llm_sched_params {
    int32_t max_running;  /* requests in the running set at once (llama.cpp's -np); default 4 */
    int32_t max_waiting;  /* requests queued behind them; a submit beyond is refused; default 64 */
    int32_t token_budget; /* most tokens per step (decodes + prompt chunks); 0 = the model's
                             n_batch (also the upper bound) */
} llm_sched_params;

/* Default scheduler parameters (see each field). Never fails. */
llm_sched_params llm_sched_default_params(void);

/* What a request's callback receives. */
typedef enum llm_sched_event_kind {
    LLM_SCHED_TEXT = 0, /* a generated token and the text that became ready */
    LLM_SCHED_DONE = 1  /* the request ended; the last event it gets */
} llm_sched_event_kind;

/* Why a request ended. */
typedef enum llm_finish_reason {
    LLM_FINISH_STOP = 0,      /* end-of-generation token or a stop string */
    LLM_FINISH_LENGTH = 1,    /* max_tokens reached, or the context is full */
    LLM_FINISH_CANCELLED = 2, /* llm_sched_cancel / llm_sched_cancel_all / llm_sched_free */
    LLM_FINISH_ERROR = 3      /* see status and message */
} llm_finish_reason;

typedef struct llm_sched_event {
    llm_sched_event_kind kind;
    uint64_t id;             /* the request's id */
    const char *text;        /* TEXT (and DONE: held-back text released at the end): bytes,
                                not NUL-terminated, valid during the call; may be empty */
    size_t len;
    llm_token token;         /* TEXT: the token sampled (DONE: LLM_TOKEN_NULL) */
    /* DONE only: */
    llm_finish_reason finish;
    llm_status status;       /* LLM_OK unless finish is ERROR */
    const char *message;     /* ERROR: English text; else "" */
    int32_t prompt_tokens;   /* tokens of the prompt */
    int32_t cached_tokens;   /* prompt tokens taken from the prefix cache at admission */
    int32_t completion_tokens; /* tokens sampled (an end-of-generation token included) */
    double queue_ms;         /* submit to first admission into the running set */
    double ttft_ms;          /* submit to the first sampled token (0 if none) */
    int32_t preemptions;     /* times the request was preempted and recomputed */
} llm_sched_event;

/* Called on the scheduler's worker thread for every event of a request, in
 * order: zero or more TEXT, then exactly one DONE (after which the scheduler
 * never uses `user` again). It must return quickly (it delays the step of
 * every request) and may call llm_sched_cancel / llm_sched_get_stats only. */
typedef void (*llm_sched_callback)(const llm_sched_event *ev, void *user);

/* One entry of a request's logit bias: logit[token] += bias (-INFINITY bans it). */
typedef struct llm_token_bias {
    llm_token token;
    float bias;
} llm_token_bias;

/* A generation request. Every pointer is read (and copied) by
 * llm_sched_submit() only. */
typedef struct llm_sched_request {
    const llm_token *prompt;    /* [n_prompt] the whole prompt, special tokens included */
    int32_t n_prompt;           /* 1..n_ctx */
    int32_t max_tokens;         /* most tokens sampled; <= 0: until the end of the context */
    llm_sampling_params sampling; /* default llm_sampling_default_params() */
    const char *const *stops;   /* [n_stops] stop strings (see llm_session_set_stop) */
    size_t n_stops;
    const llm_token_bias *bias; /* [n_bias] */
    size_t n_bias;
    const llm_constraint *constraint; /* grammar or JSON schema the output must follow (see
                                   llm_session_set_constraint); NULL: none */
    llm_sched_callback callback; /* required */
    void *user;
} llm_sched_request;

/* A request with defaults: no prompt, max_tokens 0, default sampling, no
 * stops, no bias, no constraint, no callback. Never fails. */
llm_sched_request llm_sched_default_request(void);

/* Creates a scheduler on `model` (`params` may be NULL) and starts its
 * worker thread. The model must outlive it; sessions may still be used
 * beside it (each forward pass holds the model's lock). Returns LLM_OK,
 * LLM_ERR_INVALID_ARG (bad parameter, vocab_only or encoder model),
 * LLM_ERR_NO_MEMORY, LLM_ERR_INTERNAL (the thread could not start). */
llm_status llm_sched_new(llm_model *model, const llm_sched_params *params, llm_sched **out);

/* Cancels every request (each gets its DONE event, CANCELLED), stops the
 * worker thread and releases the scheduler. NULL is harmless. Not from a
 * callback. */
void llm_sched_free(llm_sched *sched);

/* Queues a request. On LLM_OK *id (may be NULL) is its id (never 0), and
 * its callback will receive exactly one DONE event. Otherwise no callback is
 * ever made. Returns LLM_OK; LLM_CONTEXT_FULL (n_prompt > the model's
 * n_ctx); LLM_ERR_EXHAUSTED (the waiting queue is full: try again later);
 * LLM_ERR_STATE (the scheduler is shutting down); LLM_ERR_INVALID_ARG (no
 * callback, empty prompt, a token id outside [0, n_vocab), bad stop string
 * or sampling parameter); a constraint's errors (LLM_ERR_BAD_FORMAT,
 * LLM_ERR_UNSUPPORTED, ... as llm_session_set_constraint); LLM_ERR_NO_MEMORY. The message is in
 * llm_last_error(). */
llm_status llm_sched_submit(llm_sched *sched, const llm_sched_request *req, uint64_t *id);

/* Asks request `id` to end: a waiting request ends at once, a running one
 * at the next step, with finish CANCELLED; its KV blocks return to the pool
 * (full prompt blocks stay in the prefix cache). An unknown or finished id
 * is ignored. */
void llm_sched_cancel(llm_sched *sched, uint64_t id);

/* Cancels every request queued or running now. */
void llm_sched_cancel_all(llm_sched *sched);

/* Counters of a scheduler (since creation unless said otherwise). */
typedef struct llm_sched_stats {
    int32_t running;           /* now: requests in the running set */
    int32_t waiting;           /* now: requests queued */
    int32_t kv_blocks_used;    /* now: blocks held by sequences */
    int32_t kv_blocks_cached;  /* now: unreferenced blocks kept for the prefix cache */
    int32_t kv_blocks_total;
    int32_t kv_swa_blocks_used;  /* now: blocks held in the sliding-window layers' own pool */
    int32_t kv_swa_blocks_total; /* that pool's blocks (0: the model has none) */
    int64_t steps;             /* forward passes run */
    int64_t preemptions;
    int64_t prompt_tokens;     /* prompt tokens of admitted requests */
    int64_t cached_prompt_tokens; /* of those, taken from the prefix cache */
    int64_t computed_tokens;   /* tokens computed by forward passes (prompts, recomputes, decodes) */
    int64_t generated_tokens;  /* tokens sampled */
    uint64_t prefix_queries;   /* prefix-cache lookups (model-wide) */
    uint64_t prefix_hit_blocks;  /* full blocks found (model-wide) */
    uint64_t prefix_miss_blocks; /* full blocks looked for and not found (model-wide) */
} llm_sched_stats;

/* Fills *out. LLM_OK or LLM_ERR_INVALID_ARG. */
llm_status llm_sched_get_stats(llm_sched *sched, llm_sched_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_ENGINE_SCHED_H */
