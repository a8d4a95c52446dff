/*
 * sampling_test_util.h -- helpers shared by the sampling tests: building a
 * chain, reading its candidate set, an independent double-precision softmax
 * and the chi-square statistic.
 */
#ifndef SAMPLING_TEST_UTIL_H
#define SAMPLING_TEST_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llama/sampling.h"

static inline llm_sampler_chain *tu_chain(int32_t n_vocab_max, uint64_t seed) {
    llm_sampler_chain_params cp = llm_sampler_chain_default_params();
    cp.n_vocab_max = n_vocab_max;
    cp.seed = seed;
    llm_sampler_chain *ch = NULL;
    cr_assert_eq(llm_sampler_chain_create(&cp, &ch), LLM_OK, "%s", llm_sampling_last_error());
    return ch;
}

/* Run the chain (which ends with greedy) and return the candidate set the
 * selector saw: ids/x get up to cap entries, the count is returned. */
static inline size_t tu_cands(llm_sampler_chain *ch, const float *logits, int32_t n,
                              int32_t *ids, float *x, size_t cap) {
    int32_t tok;
    cr_assert_eq(llm_sampler_chain_sample(ch, logits, n, &tok), LLM_OK, "%s",
                 llm_sampling_last_error());
    return llm_sampler_chain_last_candidates(ch, ids, x, cap);
}

/* Is id in ids[0..n)? */
static inline int tu_has(const int32_t *ids, size_t n, int32_t id) {
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id) return 1;
    return 0;
}

/* Independent reference: p[i] = softmax(x[i] / t) in double with libm. */
static inline void tu_softmax(const double *x, size_t n, double t, double *p) {
    double m = -INFINITY, z = 0.0;
    for (size_t i = 0; i < n; i++)
        if (x[i] > m) m = x[i];
    for (size_t i = 0; i < n; i++) {
        p[i] = isfinite(x[i]) ? exp((x[i] - m) / t) : 0.0;
        z += p[i];
    }
    for (size_t i = 0; i < n; i++) p[i] /= z;
}

/* Pearson chi-square of observed counts against expected probabilities over
 * the categories with p > 0; tokens with p == 0 must never be observed
 * (returns INFINITY if one was). *df gets (categories - 1). */
static inline double tu_chi2(const long *obs, const double *p, size_t n, long total, int *df) {
    double chi = 0.0;
    int k = 0;
    for (size_t i = 0; i < n; i++) k += p[i] > 0.0;
    *df = k - 1;
    for (size_t i = 0; i < n; i++) {
        if (p[i] <= 0.0) {
            if (obs[i] != 0) return INFINITY;
            continue;
        }
        double e = p[i] * (double)total;
        chi += ((double)obs[i] - e) * ((double)obs[i] - e) / e;
    }
    return chi;
}

/* Chi-square critical values at p = 0.001 for df = 1..20 (standard tables). */
static inline double tu_chi2_crit_001(int df) {
    static const double c[21] = {0,      10.828, 13.816, 16.266, 18.467, 20.515, 22.458,
                                 24.322, 26.124, 27.877, 29.588, 31.264, 32.909, 34.528,
                                 36.123, 37.697, 39.252, 40.790, 42.312, 43.820, 45.315};
    cr_assert(df >= 1 && df <= 20, "df %d outside the table", df);
    return c[df];
}

/* Small deterministic generator for test inputs (splitmix64). */
static inline uint64_t tu_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline double tu_unif(uint64_t *s) { return (double)(tu_next(s) >> 11) * 0x1p-53; }
static inline double tu_gauss(uint64_t *s) {
    double u1 = tu_unif(s), u2 = tu_unif(s);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
