/*
 * cpu/threadpool.h -- a persistent pool of worker threads for the CPU backend.
 *
 * Threads are created once with the backend and parked between jobs, so an op
 * costs one wake-up, not a thread creation. A job is `fn(ctx, ith, nth)` run
 * for every piece ith in [0, nth), each piece by one participant (the caller
 * is one of them). Kernels split their output
 * into fixed contiguous ranges by (ith, nth), and each output element is
 * computed entirely by one thread with a fixed reduction order, so results do
 * not depend on the thread count.
 */
#ifndef LLM_CPU_THREADPOOL_H
#define LLM_CPU_THREADPOOL_H

#include <stdint.h>

#include "llama/status.h"

typedef struct llm__threadpool llm__threadpool;

/* Runs on every participant; ith in [0, nth). */
typedef void (*llm__task_fn)(void *ctx, int ith, int nth);

/* Creates a pool with n_threads participants in total (n_threads - 1 workers
 * plus the calling thread). n_threads < 1 is treated as 1. */
llm_status llm__threadpool_create(int n_threads, llm__threadpool **out);
void llm__threadpool_free(llm__threadpool *tp);

/* Runs fn(ctx, i, nth) once for every piece i in [0, nth) (nth <= 0 means
 * n_threads; at most 65535) and returns when all are done. nth may exceed
 * n_threads: smaller pieces balance better on a busy machine, but then a task
 * must not index per-thread scratch by i (size it by nth).
 * Pieces are claimed by whichever participant is free (threadpool.c), so a
 * piece may run on any thread and two pieces may run one after the other on
 * the same thread: a task must not wait for another piece of the same job
 * (no barriers inside a job); per-piece scratch indexed by i is safe. Not
 * reentrant: call from one thread at a time. */
void llm__threadpool_run(llm__threadpool *tp, llm__task_fn fn, void *ctx, int nth);

/* Splits [0, n) into nth contiguous ranges; gives the range of participant ith. */
static inline void llm__split_range(int64_t n, int ith, int nth, int64_t *begin, int64_t *end) {
    int64_t per = n / nth, rem = n % nth;
    int64_t b = ith * per + (ith < rem ? ith : rem);
    *begin = b;
    *end = b + per + (ith < rem ? 1 : 0);
}

#endif
