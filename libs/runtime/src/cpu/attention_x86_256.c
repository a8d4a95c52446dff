/*
 * cpu/attention_x86_256.c -- the grouped attention products (attention_x86.h)
 * in 8-lane registers: AVX2 + FMA + F16C, compiled with -mavx2 -mfma -mf16c
 * (sources.cmake); registered by llm__cpu_kernels_x86.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include "cpu/attention_x86.h"

/* Dot-product order (hd a multiple of 32), query j of key row r: four
 * accumulators, chunk c into accumulator c % 4 from +0, then the first step
 * of reduce4, (a0 + a2) + (a1 + a3), into X[j * 8]; the rest of reduce4 is
 * done for 8 keys at once (reduce8_keys). For up to 4 queries at once, in
 * two halves: accumulators 0 and 2 (chunks 0, 2, 4, 6, ...) then 1 and 3,
 * so each row chunk is converted once for all the queries and 8
 * accumulators, 2 row chunks and the 4 sums a0 + a2 are live (14 ymm); q is
 * read from L1 by the FMAs. Each accumulator still takes its chunks in
 * ascending order, so the bits are unchanged. */
INLINE void key4_half(const uint16_t *r, int64_t hd, const float *qf, const int nq, const int half, __m256 *h) {
    const int64_t nc = hd / 8;
    __m256 a[4][2];
    for (int j = 0; j < nq; j++) a[j][0] = a[j][1] = _mm256_setzero_ps();
    for (int64_t c = half; c < nc; c += 4) {
        const __m256 k0 = load_h8(r + 8 * c), k2 = load_h8(r + 8 * (c + 2));
        for (int j = 0; j < nq; j++) {
            const float *q = qf + j * hd + 8 * c;
            a[j][0] = _mm256_fmadd_ps(_mm256_loadu_ps(q), k0, a[j][0]);
            a[j][1] = _mm256_fmadd_ps(_mm256_loadu_ps(q + 16), k2, a[j][1]);
        }
    }
    for (int j = 0; j < nq; j++) h[j] = _mm256_add_ps(a[j][0], a[j][1]); /* a0 + a2, or a1 + a3 */
}

INLINE void scores32_key4(const uint16_t *r, int64_t hd, const float *qf, const int nq, __m256 *X) {
    __m256 s02[4], s13[4];
    key4_half(r, hd, qf, nq, 0, s02);
    key4_half(r, hd, qf, nq, 1, s13);
    for (int j = 0; j < nq; j++) X[j * 8] = _mm256_add_ps(s02[j], s13[j]);
}

/* hd == 64: the 8 chunks of a K row are converted once, kept in registers,
 * and feed up to 4 queries; per query the chains of scores32_key (chunk c
 * into accumulator c % 4, from +0, then (a0 + a2) + (a1 + a3)) with q read
 * from L1 by the FMAs. 8 row chunks + 4 partials live: 12 ymm. */
INLINE void scores64_key(const uint16_t *r, const float *qf, const int nq, __m256 *X) {
    const __m256 k0 = load_h8(r), k1 = load_h8(r + 8), k2 = load_h8(r + 16), k3 = load_h8(r + 24);
    const __m256 k4 = load_h8(r + 32), k5 = load_h8(r + 40), k6 = load_h8(r + 48), k7 = load_h8(r + 56);
    const __m256 z = _mm256_setzero_ps();
    for (int j = 0; j < nq; j++) {
        const float *q = qf + 64 * j;
        __m256 a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q), k0, z);
        __m256 a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 8), k1, z);
        __m256 a2 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 16), k2, z);
        __m256 a3 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 24), k3, z);
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 32), k4, a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 40), k5, a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 48), k6, a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 56), k7, a3);
        X[j * 8] = _mm256_add_ps(_mm256_add_ps(a0, a2), _mm256_add_ps(a1, a3));
    }
}

INLINE void attn_key_scores(const uint16_t *r, int64_t hd, const float *qf, const int nq, __m256 *X) {
    if (hd == 64) scores64_key(r, qf, nq, X);
    else scores32_key4(r, hd, qf, nq, X);
}

static void attn_scores_tiled(const llm__kv_rows *k, int64_t len, int64_t hd, const float *qf, int64_t nq,
                              float scale, float *scores, int64_t sstride) {
    scores8_groups(k, len, hd, qf, nq, scale, scores, sstride);
}

/* slot_block's chain (F16 rows, S = 32, from the partials in P)
 * for up to 4 queries (nq, a constant) and 16 dims d0 .. d0 + 15: each row
 * chunk is converted once for all 4 (slot_block takes 3 queries and 32
 * dims, so a group of 4 converted every chunk twice). 8 accumulators, 4
 * probabilities, 2 row chunks: 14 ymm. */
INLINE void slot_block4(const llm__kv_rows *v, int64_t sl, int64_t t_start, int64_t nslot, int64_t hd, int64_t d0,
                        const float *p, int64_t pstride, float *P, const int nq, const int first) {
    float *o = P + sl * hd + d0;
    const int64_t js = 32 * hd; /* one query's partials */
    __m256 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
    if (!first) { /* first: the chains start here, from +0 (P not read) */
        a00 = _mm256_loadu_ps(o), a01 = _mm256_loadu_ps(o + 8);
        if (nq > 1) a10 = _mm256_loadu_ps(o + js), a11 = _mm256_loadu_ps(o + js + 8);
        if (nq > 2) a20 = _mm256_loadu_ps(o + 2 * js), a21 = _mm256_loadu_ps(o + 2 * js + 8);
        if (nq > 3) a30 = _mm256_loadu_ps(o + 3 * js), a31 = _mm256_loadu_ps(o + 3 * js + 8);
    }
    for (int64_t t = slot_first(sl, t_start, 32); t < nslot; t += 32) {
        const uint16_t *r = (const uint16_t *)v->base + v->offs[t] + v->head_off + d0;
        const __m256 x0 = load_h8(r), x1 = load_h8(r + 8);
        const __m256 p0 = _mm256_broadcast_ss(p + t);
        a00 = _mm256_fmadd_ps(x0, p0, a00);
        a01 = _mm256_fmadd_ps(x1, p0, a01);
        if (nq > 1) {
            const __m256 p1 = _mm256_broadcast_ss(p + pstride + t);
            a10 = _mm256_fmadd_ps(x0, p1, a10);
            a11 = _mm256_fmadd_ps(x1, p1, a11);
        }
        if (nq > 2) {
            const __m256 p2 = _mm256_broadcast_ss(p + 2 * pstride + t);
            a20 = _mm256_fmadd_ps(x0, p2, a20);
            a21 = _mm256_fmadd_ps(x1, p2, a21);
        }
        if (nq > 3) {
            const __m256 p3 = _mm256_broadcast_ss(p + 3 * pstride + t);
            a30 = _mm256_fmadd_ps(x0, p3, a30);
            a31 = _mm256_fmadd_ps(x1, p3, a31);
        }
    }
    _mm256_storeu_ps(o, a00);
    _mm256_storeu_ps(o + 8, a01);
    if (nq > 1) _mm256_storeu_ps(o + js, a10), _mm256_storeu_ps(o + js + 8, a11);
    if (nq > 2) _mm256_storeu_ps(o + 2 * js, a20), _mm256_storeu_ps(o + 2 * js + 8, a21);
    if (nq > 3) _mm256_storeu_ps(o + 3 * js, a30), _mm256_storeu_ps(o + 3 * js + 8, a31);
}

INLINE void attn_stretch_slot(const llm__kv_rows *v, int64_t sl, int64_t lo, int64_t hi, int64_t hd,
                              const float *pj, int64_t pstride, float *P, int64_t m, int first) {
    for (int64_t d0 = 0; d0 < hd; d0 += 16) {
#define SB4(NQ)                                                                            \
    if (first) slot_block4(v, sl, lo, hi, hd, d0, pj, pstride, P, NQ, 1);                 \
    else slot_block4(v, sl, lo, hi, hd, d0, pj, pstride, P, NQ, 0);
        if (m == 4) { SB4(4) }
        else if (m == 3) { SB4(3) }
        else if (m == 2) { SB4(2) }
        else { SB4(1) }
#undef SB4
    }
}

static int attn_slots8_wide(const llm__kv_rows *v, int64_t t_start, int64_t nslot, int64_t hd, const float *p,
                            int64_t pstride, int64_t nq, float *scratch) {
    (void)v, (void)t_start, (void)nslot, (void)hd, (void)p, (void)pstride, (void)nq, (void)scratch;
    return 0; /* slot_dispatch's 8-lane blocks */
}

void llm__cpu_kernels_attn_x86_256(llm__cpu_kernels *k) {
    k->attn_scores_f16_g = attn_scores_f16_g_x86;
    k->attn_wsum_g = attn_wsum_g_x86;
}

#else /* no AVX2 build: never selected (llm__cpu_features() has no LLM__CPU_AVX2) */

void llm__cpu_kernels_attn_x86_256(llm__cpu_kernels *k) { (void)k; }

#endif
