/*
 * cpu/threadpool.c -- persistent workers: spin briefly, then sleep on a condvar.
 *
 * A job is published by bumping `generation`. Workers that are spinning see it
 * at once (decode issues hundreds of small ops per token, so wake-up latency
 * matters); workers that went to sleep are woken by a broadcast. The lost
 * wake-up race is closed by seq_cst ordering: a worker announces itself in
 * n_sleeping before re-checking the generation under the mutex, the publisher
 * bumps the generation before reading n_sleeping and broadcasts under the mutex.
 */
#define _POSIX_C_SOURCE 200809L
#include "cpu/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define LLM_CPU_RELAX() _mm_pause()
#else
#define LLM_CPU_RELAX() ((void)0)
#endif

/* How long a worker spins for the next job before it parks, and the caller
 * for the workers before it starts yielding. Measured in time, not in pause
 * instructions (a pause takes 10 to 140 cycles depending on the CPU): 2000
 * pauses were ~40 us here, shorter than some gaps between the ops of one
 * decode step, so a worker parked and woke (a futex round trip) hundreds of
 * times per token and 2-thread decode ran at half speed about one run in two.
 * 300 us bridges every such gap; an idle engine still parks within 0.3 ms. */
#define SPIN_NS 300000

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Spin-wait bookkeeping: reads the clock once every 64 pauses. */
typedef struct {
    uint64_t t0;
    unsigned n;
} spin_clock;

static int spin_expired(spin_clock *c) {
    if ((++c->n & 63) != 0) {
        return 0;
    }
    uint64_t t = now_ns();
    if (c->t0 == 0) {
        c->t0 = t;
        return 0;
    }
    return t - c->t0 > SPIN_NS;
}

struct llm__threadpool {
    int n_threads;
    pthread_t *threads; /* [n_threads - 1] */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_uint generation;
    atomic_int n_pending;
    atomic_int n_sleeping;
    atomic_int quit;
    /* The current job; written before generation is bumped. */
    llm__task_fn fn;
    void *ctx;
    int nth;
};

typedef struct {
    llm__threadpool *tp;
    int ith;
} worker_arg;

static void *worker_main(void *p) {
    llm__threadpool *tp = ((worker_arg *)p)->tp;
    int ith = ((worker_arg *)p)->ith;
    free(p);
    unsigned seen = 0;
    for (;;) {
        unsigned gen = atomic_load(&tp->generation);
        spin_clock sc = {0, 0};
        while (gen == seen && !atomic_load(&tp->quit) && !spin_expired(&sc)) {
            LLM_CPU_RELAX();
            gen = atomic_load(&tp->generation);
        }
        if (gen == seen && !atomic_load(&tp->quit)) {
            pthread_mutex_lock(&tp->mu);
            atomic_fetch_add(&tp->n_sleeping, 1);
            while ((gen = atomic_load(&tp->generation)) == seen && !atomic_load(&tp->quit)) {
                pthread_cond_wait(&tp->cv, &tp->mu);
            }
            atomic_fetch_sub(&tp->n_sleeping, 1);
            pthread_mutex_unlock(&tp->mu);
        }
        if (atomic_load(&tp->quit)) {
            break;
        }
        seen = gen;
        if (ith < tp->nth) {
            tp->fn(tp->ctx, ith, tp->nth);
        }
        atomic_fetch_sub(&tp->n_pending, 1);
    }
    return NULL;
}

llm_status llm__threadpool_create(int n_threads, llm__threadpool **out) {
    *out = NULL;
    if (n_threads < 1) {
        n_threads = 1;
    }
    llm__threadpool *tp = calloc(1, sizeof(*tp));
    if (!tp) {
        return LLM_ERR_NO_MEMORY;
    }
    tp->n_threads = n_threads;
    pthread_mutex_init(&tp->mu, NULL);
    pthread_cond_init(&tp->cv, NULL);
    atomic_init(&tp->generation, 0);
    atomic_init(&tp->n_pending, 0);
    atomic_init(&tp->n_sleeping, 0);
    atomic_init(&tp->quit, 0);
    if (n_threads > 1) {
        tp->threads = calloc((size_t)(n_threads - 1), sizeof(pthread_t));
        if (!tp->threads) {
            llm__threadpool_free(tp);
            return LLM_ERR_NO_MEMORY;
        }
        for (int i = 1; i < n_threads; i++) {
            worker_arg *a = malloc(sizeof(*a));
            if (a) {
                a->tp = tp;
                a->ith = i;
            }
            if (!a || pthread_create(&tp->threads[i - 1], NULL, worker_main, a) != 0) {
                free(a);
                tp->n_threads = i; /* only i - 1 workers exist; free joins those */
                llm__threadpool_free(tp);
                return LLM_ERR_NO_MEMORY;
            }
        }
    }
    *out = tp;
    return LLM_OK;
}

void llm__threadpool_free(llm__threadpool *tp) {
    if (!tp) {
        return;
    }
    pthread_mutex_lock(&tp->mu);
    atomic_store(&tp->quit, 1);
    pthread_cond_broadcast(&tp->cv);
    pthread_mutex_unlock(&tp->mu);
    for (int i = 1; i < tp->n_threads; i++) {
        pthread_join(tp->threads[i - 1], NULL);
    }
    pthread_cond_destroy(&tp->cv);
    pthread_mutex_destroy(&tp->mu);
    free(tp->threads);
    free(tp);
}

int llm__threadpool_n_threads(const llm__threadpool *tp) { return tp ? tp->n_threads : 1; }

void llm__threadpool_run(llm__threadpool *tp, llm__task_fn fn, void *ctx, int nth) {
    if (nth <= 0 || nth > tp->n_threads) {
        nth = tp->n_threads;
    }
    if (tp->n_threads == 1 || nth == 1) {
        fn(ctx, 0, 1);
        return;
    }
    tp->fn = fn;
    tp->ctx = ctx;
    tp->nth = nth;
    atomic_store(&tp->n_pending, tp->n_threads - 1);
    atomic_fetch_add(&tp->generation, 1);
    if (atomic_load(&tp->n_sleeping) > 0) {
        pthread_mutex_lock(&tp->mu);
        pthread_cond_broadcast(&tp->cv);
        pthread_mutex_unlock(&tp->mu);
    }
    fn(ctx, 0, nth);
    spin_clock sc = {0, 0};
    int yielding = 0;
    while (atomic_load(&tp->n_pending) > 0) {
        if (yielding || (yielding = spin_expired(&sc))) {
            sched_yield(); /* the machine may be oversubscribed: let the worker run */
        } else {
            LLM_CPU_RELAX();
        }
    }
}
