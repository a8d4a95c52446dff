/*
 * bench_sampling.c -- microseconds per token of llm_sampler_chain_sample()
 * (median of many calls, single thread) at vocabulary sizes 49,152,
 * 151,936 and 262,144 for:
 *   typical : penalties over 64 tokens + top-k 40 + top-p 0.95 + min-p 0.05
 *             + temperature 0.8 + dist
 *   greedy  : greedy only
 *   top-p   : top-p 0.95 + dist (no top-k: histogram path on the full vocab)
 *   temp    : temperature 0.8 + dist (full-vocabulary draw)
 * Logits: Gaussian (sigma 3) plus 5 peaks 2..6 above the Gaussian maximum,
 * four different arrays used in turn (fresh data each call, as after a
 * forward pass). The chain accepts each sampled token (penalty history).
 *
 * Usage: bench_sampling [calls-per-config (default 2001)]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama/sampling.h"

#define N_ARRAYS 4

static uint64_t rng_state = 0x1234567;
static double unif(void) { /* splitmix64 -> [0, 1) */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-53;
}
static double gauss(void) {
    double u1 = unif(), u2 = unif();
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { CH_TYPICAL, CH_GREEDY, CH_TOP_P, CH_TEMP, N_CHAINS };
static const char *const CHAIN_NAMES[N_CHAINS] = {"typical", "greedy", "top-p", "temp"};

static llm_sampler_chain *make_chain(int kind, int32_t v) {
    llm_sampler_chain *ch = NULL;
    llm_status st;
    if (kind == CH_TYPICAL) {
        llm_sampler_params sp = llm_sampler_default_params();
        sp.n_vocab_max = v;
        sp.seed = 42;
        sp.top_k = 40;
        sp.top_p = 0.95f;
        sp.min_p = 0.05f;
        sp.temperature = 0.8f;
        sp.repeat_penalty = 1.1f;
        sp.frequency_penalty = 0.1f;
        sp.presence_penalty = 0.1f;
        sp.penalty_window = 64;
        st = llm_sampler_chain_from_params(&sp, &ch);
    } else {
        llm_sampler_chain_params cp = llm_sampler_chain_default_params();
        cp.n_vocab_max = v;
        cp.seed = 42;
        st = llm_sampler_chain_create(&cp, &ch);
        if (st == LLM_OK && kind == CH_GREEDY) st = llm_sampler_chain_add_greedy(ch);
        if (st == LLM_OK && kind == CH_TOP_P) st = llm_sampler_chain_add_top_p(ch, 0.95f, 1);
        if (st == LLM_OK && kind == CH_TEMP) st = llm_sampler_chain_add_temperature(ch, 0.8f);
        if (st == LLM_OK && kind != CH_GREEDY) st = llm_sampler_chain_add_dist(ch);
    }
    if (st != LLM_OK) {
        fprintf(stderr, "chain: %s\n", llm_sampling_last_error());
        exit(1);
    }
    return ch;
}

int main(int argc, char **argv) {
    int calls = argc > 1 ? atoi(argv[1]) : 2001;
    if (calls < 1) calls = 1;
    static const int32_t sizes[3] = {49152, 151936, 262144};
    double *t = malloc((size_t)calls * sizeof *t);
    printf("sampling: us/token, median of %d calls (mean, p90), single thread\n", calls);
    printf("%-8s %8s %10s %10s %10s %8s\n", "chain", "n_vocab", "median", "mean", "p90", "kept");
    for (int si = 0; si < 3; si++) {
        int32_t v = sizes[si];
        float *x[N_ARRAYS];
        for (int a = 0; a < N_ARRAYS; a++) {
            x[a] = malloc((size_t)v * sizeof(float));
            float m = -INFINITY;
            for (int32_t i = 0; i < v; i++) {
                x[a][i] = (float)(3.0 * gauss());
                m = x[a][i] > m ? x[a][i] : m;
            }
            for (int p = 0; p < 5; p++) x[a][(int32_t)(unif() * v)] = m + 2.0f + (float)p;
        }
        for (int kind = 0; kind < N_CHAINS; kind++) {
            llm_sampler_chain *ch = make_chain(kind, v);
            for (int i = 0; i < 64; i++) llm_sampler_chain_accept(ch, (int32_t)(unif() * v));
            double kept = 0.0;
            for (int r = 0; r < calls; r++) {
                int32_t tok;
                double t0 = now_us();
                llm_status st = llm_sampler_chain_sample(ch, x[r % N_ARRAYS], v, &tok);
                t[r] = now_us() - t0;
                if (st != LLM_OK) {
                    fprintf(stderr, "sample: %s\n", llm_sampling_last_error());
                    return 1;
                }
                llm_sampler_chain_accept(ch, tok);
                kept += (double)llm_sampler_chain_last_candidates(ch, NULL, NULL, 0);
            }
            double mean = 0.0;
            for (int r = 0; r < calls; r++) mean += t[r];
            mean /= calls;
            qsort(t, (size_t)calls, sizeof *t, cmp_d);
            printf("%-8s %8d %10.1f %10.1f %10.1f %8.0f\n", CHAIN_NAMES[kind], (int)v,
                   t[calls / 2], mean, t[(calls * 9) / 10], kept / calls);
            llm_sampler_chain_free(ch);
        }
        for (int a = 0; a < N_ARRAYS; a++) free(x[a]);
    }
    free(t);
    return 0;
}
