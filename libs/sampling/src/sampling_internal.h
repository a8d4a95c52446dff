/*
 * sampling_internal.h -- private declarations shared by the files of
 * libs/sampling: error text, deterministic float math, candidate kernels.
 */
#ifndef LLM_SAMPLING_INTERNAL_H
#define LLM_SAMPLING_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h> /* INFINITY only; no libm function is called */
#include <string.h>

#include "llama/sampling.h"

/* Set the thread-local error text (printf-style) and return st. */
llm_status llm__sampling_fail(llm_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* u in [0, 1) from one stream word: (w >> 8) * 2^-24. */
float llm__uniform_from_word(uint32_t w);

/* ---- deterministic math (no libm): see the header's "Float determinism" */

static inline uint32_t llm__f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline float llm__u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* exp(x) for x <= 0 (callers pass x - max). Inputs below -80, above 0 or NaN
 * give 0 (no subnormal result is ever produced),
 * so a masked or non-finite logit has zero weight. Relative error < 2e-7.
 * Branch-free so loops over it vectorize; the result is the same scalar or
 * vectorized because every step is one IEEE binary32 operation. */
static inline float llm__expf_neg(float x) {
    const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to integer */
    float xc = x >= -80.0f ? x : -80.0f;    /* NaN compares false -> -80 */
    xc = xc <= 0.0f ? xc : 0.0f;
    float t = xc * 1.44269504088896341f + magic;
    float n = t - magic;
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    /* 2^n from the integer held in t's low mantissa bits (n in [-116, 0]). */
    int32_t ni = (int32_t)(llm__f2u(t) - llm__f2u(magic));
    float scale = llm__u2f((uint32_t)(ni + 127) << 23);
    float e = p * scale;
    return ((x >= -80.0f) & (x <= 0.0f)) ? e : 0.0f;
}

static inline bool is_finite_f(float v) {
    return v > -INFINITY && v < INFINITY;
}

/* Natural log of a positive finite double, without libm (atanh series). */
double llm__log(double x);

/* ---- candidate kernels (select.c) ----------------------------------- */

/* A candidate set. Dense: ids == NULL and position i is token i. A dense
 * set may carry np patches: token pid[j] has logit pval[j] instead of
 * x[pid[j]], and pslot[t] is j for a patched token t, -1 otherwise. Only
 * llm__top_k reads patches; every other kernel requires np == 0. */
typedef struct llm__cands {
    const int32_t *ids; /* [n] or NULL */
    const float *x;     /* [n] logits */
    size_t n;
    const int32_t *pslot; /* [n] */
    const int32_t *pid;   /* [np] */
    const float *pval;    /* [np] */
    size_t np;
} llm__cands;

/* Output of a filter: caller-provided arrays of capacity >= input n. */
typedef struct llm__out {
    int32_t *ids; /* [cap] */
    float *x;     /* [cap] */
    size_t n;
} llm__out;

/* Scratch owned by a chain, sized for n_vocab_max at create time. */
typedef struct llm__scratch {
    uint64_t *keys; /* [n_vocab_max] packed (order key << 32 | position) */
    float *blocks;  /* [n_vocab_max / 256 + 1] block sums of a draw */
} llm__scratch;

/* Max finite logit and its first position; returns false if none finite. */
bool llm__argmax(const llm__cands *in, size_t *pos, float *max);

/* The k best by (logit desc, position asc), finite only, written sorted. */
void llm__top_k(const llm__cands *in, size_t k, llm__scratch *s, llm__out *out);

/* Keep x >= thr (finite) in order; if fewer than min_keep survive, the
 * min_keep best instead. */
void llm__keep_above(const llm__cands *in, float thr, size_t min_keep, llm__scratch *s,
                     llm__out *out);

/* Top-p (typical == false) or typical-p (typical == true) by mass histogram. */
void llm__mass_select(const llm__cands *in, float p, size_t min_keep, bool typical,
                      llm__scratch *s, llm__out *out);

/* The draw of the header's "Draw" section; returns a position. Requires at
 * least one finite logit. */
size_t llm__draw(const llm__cands *in, float u, llm__scratch *s);

#endif
