/* Private to llama-engine: the scheduler's objects (llama/engine_sched.h),
 * shared by engine_sched.c (queue, worker thread, API) and
 * engine_sched_step.c (one step: batch, forward, sampling). */
#ifndef LLM_ENGINE_SCHED_INTERNAL_H
#define LLM_ENGINE_SCHED_INTERNAL_H

#include "engine_internal.h"
#include "llama/engine_sched.h"

/* One request. Owned by the scheduler from submit to the end of the
 * worker's pass that saw it finished. */
typedef struct llm__sreq {
    uint64_t id;
    llm_session *s;            /* its session: context (prompt + sampled tokens), sampler,
                                  stop matcher, detokenizer; seq -1 while not computed */
    int32_t n_prompt, max_tokens, n_gen, cached, preemptions;
    bool attached;             /* the prefix cache was consulted once (cached is final) */
    bool finished;             /* DONE delivered: remove from the running set */
    bool preempted;            /* blocks released: move back to the waiting queue */
    bool admitted;             /* admitted once (queue time measured) */
    atomic_int cancel;
    llm_sched_callback cb;
    void *user;
    double t_submit, t_admit, t_first;
    uint64_t order;            /* admission number: the youngest is preempted first */
    struct llm__sreq *next;    /* waiting queue link */
} llm__sreq;

struct llm_sched {
    llm_model *m;
    llm_sched_params p;
    pthread_t thread;
    pthread_mutex_t lock;      /* the queue, the running set's membership, counters, flags */
    pthread_cond_t cond;
    llm__sreq *wait_head, *wait_tail;
    int32_t n_waiting;
    llm__sreq **run;           /* [max_running], admission order; membership changes under lock,
                                  the requests themselves are used by the worker only */
    int32_t n_run;
    bool stop, cancel_all, started;
    uint64_t next_id, next_order;
    int64_t steps, preemptions, prompt_tokens, cached_tokens, computed_tokens, gen_tokens;
    /* step scratch (worker only): */
    int32_t *tokens, *pos;     /* [budget] */
    llm__fwd_seq *seqs;        /* [max_running] */
    llm__sreq **jobs;          /* [max_running] */
    int32_t *job_pos0;         /* [max_running] first position of each job */
    float *logits;             /* [max_running][n_vocab] */
    char err[LLM__ERR_CAP];
};

/* Runs one step over the running set (worker thread, sched lock NOT held):
 * builds the batch, preempts on KV exhaustion (marking `preempted`), runs
 * the forward, samples, delivers events and marks finished requests. */
void llm__sched_step(llm_sched *sc);

/* Ends a request: frees its session, delivers DONE with `finish`/`st`
 * (message `msg`, may be NULL) and marks it finished. Worker only; defined
 * in engine_sched_step.c so that calls go one way, engine_sched.c ->
 * engine_sched_step.c. */
void llm__sched_finish(llm_sched *sc, llm__sreq *r, llm_finish_reason finish, llm_status st, const char *msg);

#endif
