/*
 * simd.h -- the two full-vocabulary primitives gcc does not vectorize on its
 * own: "does any of 16 logits pass a threshold" (the skip test of top-k and
 * min-p) and "max and its first position". SSE2 (baseline on x86-64) with a
 * scalar fallback; both give identical answers because they only compare.
 */
#ifndef LLM_SAMPLING_SIMD_H
#define LLM_SAMPLING_SIMD_H

#include <stddef.h>
#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Any of x[0..16) > thr (ge == 0) or >= thr (ge != 0)? NaN never passes. */
static inline int llm__any16(const float *x, float thr, int ge) {
#if defined(__SSE2__)
    __m128 t = _mm_set1_ps(thr);
    __m128 a = _mm_loadu_ps(x), b = _mm_loadu_ps(x + 4);
    __m128 c = _mm_loadu_ps(x + 8), d = _mm_loadu_ps(x + 12);
    __m128 r;
    if (ge)
        r = _mm_or_ps(_mm_or_ps(_mm_cmpge_ps(a, t), _mm_cmpge_ps(b, t)),
                      _mm_or_ps(_mm_cmpge_ps(c, t), _mm_cmpge_ps(d, t)));
    else
        r = _mm_or_ps(_mm_or_ps(_mm_cmpgt_ps(a, t), _mm_cmpgt_ps(b, t)),
                      _mm_or_ps(_mm_cmpgt_ps(c, t), _mm_cmpgt_ps(d, t)));
    return _mm_movemask_ps(r) != 0;
#else
    int any = 0;
    if (ge) {
        for (int j = 0; j < 16; j++) any |= x[j] >= thr;
    } else {
        for (int j = 0; j < 16; j++) any |= x[j] > thr;
    }
    return any;
#endif
}

/* Max of x[0..n) ignoring NaN (-INFINITY if none or n == 0); +INFINITY is
 * included (callers handle it). */
static inline float llm__max_raw(const float *x, size_t n) {
    size_t i = 0;
#if defined(__SSE2__)
    __m128 m0 = _mm_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
    for (; i + 16 <= n; i += 16) {
        /* maxps(v, m) returns m when v is NaN */
        m0 = _mm_max_ps(_mm_loadu_ps(x + i), m0);
        m1 = _mm_max_ps(_mm_loadu_ps(x + i + 4), m1);
        m2 = _mm_max_ps(_mm_loadu_ps(x + i + 8), m2);
        m3 = _mm_max_ps(_mm_loadu_ps(x + i + 12), m3);
    }
    float lanes[4];
    _mm_storeu_ps(lanes, _mm_max_ps(_mm_max_ps(m0, m1), _mm_max_ps(m2, m3)));
    float m = lanes[0];
    for (int j = 1; j < 4; j++) m = lanes[j] > m ? lanes[j] : m;
#else
    float m = -INFINITY;
#endif
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}

/* First position in x[0..n) equal to v (v not NaN), or n. */
static inline size_t llm__find_first(const float *x, size_t n, float v) {
    size_t i = 0;
#if defined(__SSE2__)
    __m128 t = _mm_set1_ps(v);
    for (; i + 16 <= n; i += 16) {
        __m128 r = _mm_or_ps(
            _mm_or_ps(_mm_cmpeq_ps(_mm_loadu_ps(x + i), t), _mm_cmpeq_ps(_mm_loadu_ps(x + i + 4), t)),
            _mm_or_ps(_mm_cmpeq_ps(_mm_loadu_ps(x + i + 8), t),
                      _mm_cmpeq_ps(_mm_loadu_ps(x + i + 12), t)));
        if (_mm_movemask_ps(r)) break;
    }
#endif
    for (; i < n; i++)
        if (x[i] == v) return i;
    return n;
}

#endif
