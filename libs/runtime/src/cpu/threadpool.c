/*
 * cpu/threadpool.c -- persistent workers: spin briefly, then sleep on a condvar;
 * the pieces of a job are claimed, not assigned.
 *
 * A job is published by bumping `generation`. Workers that are spinning see it
 * at once (decode issues hundreds of small ops per token, so wake-up latency
 * matters); workers that went to sleep are woken by a broadcast. The lost
 * wake-up race is closed by seq_cst ordering: a worker announces itself in
 * n_sleeping before re-checking the generation under the mutex, the publisher
 * bumps the generation before reading n_sleeping and broadcasts under the mutex.
 *
 * Pieces. A job of nth pieces (fn(ctx, i, nth) for i in [0, nth)) is not
 * handed out one piece per thread: every participant, the caller included,
 * claims the next unclaimed piece until none is left, and the caller returns
 * when all nth are done. On an idle machine each thread claims one piece, as
 * before. On an oversubscribed one (more runnable threads than cores) a worker
 * that is not running simply claims nothing: the caller runs its piece too,
 * instead of waiting a scheduler time slice for it: with a fixed assignment
 * every op of a decode would wait for the slowest thread's next time slice
 * (see docs/PERFORMANCE.md). Each piece still runs exactly once, on one
 * thread, so results do not change.
 * The claim word packs (job sequence, nth, next piece) so that a worker that
 * arrives late never claims a piece of a job that is already over.
 *
 * Spinning. A worker spins for the next job for up to `spin_ns` before it
 * parks. The budget adapts: when a worker wakes to a job whose pieces were all
 * claimed already (it was too late: the machine is busy), it halves its budget
 * (down to SPIN_MIN_NS), so an oversubscribed pool stops burning the CPU time
 * other threads need; when it gets a piece, the budget doubles back up to
 * SPIN_NS.
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
#define SPIN_MIN_NS 20000

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

static int spin_expired(spin_clock *c, uint64_t budget_ns) {
    if ((++c->n & 63) != 0) {
        return 0;
    }
    uint64_t t = now_ns();
    if (c->t0 == 0) {
        c->t0 = t;
        return 0;
    }
    return t - c->t0 > budget_ns;
}

/* The claim word: job sequence (32 bits), nth (16), next unclaimed piece (16). */
#define CLAIM(seq, nth, next) (((uint64_t)(seq) << 32) | ((uint64_t)(nth) << 16) | (uint64_t)(next))
#define CLAIM_NTH(w) ((int)(((w) >> 16) & 0xFFFF))
#define CLAIM_NEXT(w) ((int)((w)&0xFFFF))

struct llm__threadpool {
    int n_threads;
    pthread_t *threads; /* [n_threads - 1] */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_uint generation;
    atomic_uint_least64_t claim; /* CLAIM(seq, nth, next) of the current job */
    atomic_int n_done;           /* pieces of the current job finished */
    unsigned seq;                /* job sequence (caller only) */
    atomic_int n_sleeping;
    atomic_int quit;
    /* The current job; written before the claim word is published. */
    llm__task_fn fn;
    void *ctx;
};

/* Claims and runs pieces of the current job until none is left; returns how
 * many this thread ran. A piece is claimed by a compare-and-swap on the whole
 * word, so it belongs to the job that was current at that instant, and that
 * job cannot end (nor fn / ctx change) before the piece is counted done. */
static int run_pieces(llm__threadpool *tp) {
    int ran = 0;
    uint64_t w = atomic_load(&tp->claim);
    while (CLAIM_NEXT(w) < CLAIM_NTH(w)) {
        if (!atomic_compare_exchange_weak(&tp->claim, &w, w + 1)) {
            continue; /* w was reloaded */
        }
        tp->fn(tp->ctx, CLAIM_NEXT(w), CLAIM_NTH(w));
        atomic_fetch_add(&tp->n_done, 1);
        ran++;
        w = atomic_load(&tp->claim);
    }
    return ran;
}

typedef struct {
    llm__threadpool *tp;
    int ith;
} worker_arg;

static void *worker_main(void *p) {
    llm__threadpool *tp = ((worker_arg *)p)->tp;
    free(p);
    unsigned seen = 0;
    uint64_t budget = SPIN_NS;
    for (;;) {
        unsigned gen = atomic_load(&tp->generation);
        spin_clock sc = {0, 0};
        while (gen == seen && !atomic_load(&tp->quit) && !spin_expired(&sc, budget)) {
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
        if (run_pieces(tp) > 0) {
            budget = budget * 2 < SPIN_NS ? budget * 2 : SPIN_NS;
        } else {
            budget = budget / 2 > SPIN_MIN_NS ? budget / 2 : SPIN_MIN_NS;
        }
    }
    return NULL;
}

llm_status llm__threadpool_create(int n_threads, llm__threadpool **out) {
    *out = NULL;
    if (n_threads < 1) {
        n_threads = 1;
    }
    if (n_threads > 0xFFFF) {
        n_threads = 0xFFFF; /* nth must fit the claim word */
    }
    llm__threadpool *tp = calloc(1, sizeof(*tp));
    if (!tp) {
        return LLM_ERR_NO_MEMORY;
    }
    tp->n_threads = n_threads;
    pthread_mutex_init(&tp->mu, NULL);
    pthread_cond_init(&tp->cv, NULL);
    atomic_init(&tp->generation, 0);
    atomic_init(&tp->claim, CLAIM(0, 0, 0));
    atomic_init(&tp->n_done, 0);
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

void llm__threadpool_run(llm__threadpool *tp, llm__task_fn fn, void *ctx, int nth) {
    if (nth <= 0) {
        nth = tp->n_threads;
    }
    if (nth > 0xFFFF) {
        nth = 0xFFFF;
    }
    if (tp->n_threads == 1 || nth == 1) {
        for (int i = 0; i < nth; i++) fn(ctx, i, nth);
        return;
    }
    tp->fn = fn;
    tp->ctx = ctx;
    atomic_store(&tp->n_done, 0);
    tp->seq++;
    atomic_store(&tp->claim, CLAIM(tp->seq, nth, 0));
    atomic_fetch_add(&tp->generation, 1);
    if (atomic_load(&tp->n_sleeping) > 0) {
        pthread_mutex_lock(&tp->mu);
        pthread_cond_broadcast(&tp->cv);
        pthread_mutex_unlock(&tp->mu);
    }
    run_pieces(tp);
    /* Only pieces a worker claimed and is still running are left. */
    spin_clock sc = {0, 0};
    int yielding = 0;
    while (atomic_load(&tp->n_done) < nth) {
        if (yielding || (yielding = spin_expired(&sc, SPIN_NS))) {
            sched_yield(); /* the machine may be oversubscribed: let the worker run */
        } else {
            LLM_CPU_RELAX();
        }
    }
}
