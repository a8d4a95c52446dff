/*
 * cpu/attention_x86.h -- PRIVATE: the grouped attention products of the x86
 * backends: several queries that read the same KV head (the query heads of
 * one GQA group) at once. Included by attention_x86_256.c (AVX2 + FMA +
 * F16C) and attention_x86_512.c (AVX-512F), each compiled with its own
 * instruction set, so each gets its own copy of these static functions.
 *
 * One query at a time, every K and V row is loaded and converted from F16
 * once per query head; with 3 heads per KV head that is 3 conversions per
 * element where 1 does. Here each row chunk is converted once and fed to the
 * FMA chains of all the queries of a group, q sits in L1 as floats (exact
 * values of its F16 rounding) and the value sums keep their slot partials in
 * registers. Every output keeps the very FMA sequence of the single-query
 * kernels in kernels/x86_256.c (same operands, same order, same folds), so
 * grouping changes no bit, in either register width
 * (tests/runtime/test_llama_order.c checks it).
 *
 * The includer defines, in its register width, the four hooks declared
 * below (the only places the two widths differ), then registers
 * attn_scores_f16_g_x86 and attn_wsum_g_x86. Include inside the includer's
 * AVX2 guard, after its compile flags are known.
 */
#ifndef LLM_CPU_ATTENTION_X86_H
#define LLM_CPU_ATTENTION_X86_H

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "cpu/vexp.h"

#define QB 3 /* queries per register block (16 ymm registers: see each kernel) */

#define INLINE static inline __attribute__((always_inline))

/* The hooks each includer defines (attention_x86_256.c, attention_x86_512.c).
 *
 * attn_key_scores: the dot-product order's partial sums of one key row r
 *   for nq (1..4, a constant) queries: X[j * 8] = (a0 + a2) + (a1 + a3) of
 *   query j's four chunk accumulators (reduce8_keys finishes them).
 * attn_scores_tiled: the tiled order's scores of nq queries over len keys
 *   (qf: [nq][hd] floats, hd % 8 == 0), as scores8_groups gives them.
 * attn_stretch_slot: wsum_stretches' chains of slot sl over keys lo..hi for
 *   m (1..4) queries, every d of the row; first: the chains start from +0.
 * attn_slots8_wide: the tiled order's 8 slot partials (wsum_slots_g, S 8)
 *   when the width has a faster form for them; returns 0 (nothing done)
 *   otherwise. */
INLINE void attn_key_scores(const uint16_t *r, int64_t hd, const float *qf, const int nq, __m256 *X);
static void attn_scores_tiled(const llm__kv_rows *k, int64_t len, int64_t hd, const float *qf, int64_t nq,
                              float scale, float *scores, int64_t sstride);
INLINE void attn_stretch_slot(const llm__kv_rows *v, int64_t sl, int64_t lo, int64_t hi, int64_t hd,
                              const float *pj, int64_t pstride, float *P, int64_t m, int first);
static int attn_slots8_wide(const llm__kv_rows *v, int64_t t_start, int64_t nslot, int64_t hd, const float *p,
                            int64_t pstride, int64_t nq, float *scratch);


INLINE const uint16_t *krow(const llm__kv_rows *k, int64_t t) {
    return (const uint16_t *)k->base + k->offs[t] + k->head_off;
}

/* When decoding (the dot-product order), K and V rows are usually out of
 * cache (the weights streamed through since the last step) and scattered
 * through the paged cache, pages apart, where no hardware prefetcher
 * follows; the loops ask for them ahead (the value sums a stretch ahead:
 * wsum_stretches). Asking for the value rows too while the keys stream by
 * made a decode's attention slower (measured: see docs/PERFORMANCE.md). A
 * prefill's rows stay in L2 from token to token, and there the extra
 * instructions cost more than they save, so the tiled kernels do not
 * prefetch. No effect on any value. */
#define PF_KEYS 48

INLINE void prefetch_row(const void *row, int64_t bytes) {
    for (int64_t b = 0; b < bytes; b += 64) {
        _mm_prefetch((const char *)row + b, _MM_HINT_T0);
    }
}

/* wsum_stretches' next stretch of value rows: into L2 (L1 could not hold
 * them until they are read). */
INLINE void prefetch_row_l2(const void *row, int64_t bytes) {
    for (int64_t b = 0; b < bytes; b += 64) {
        _mm_prefetch((const char *)row + b, _MM_HINT_T1);
    }
}

/* hsum8 of four accumulators at once, times scale: [r0 r1 r2 r3]. Each
 * r_i is summed exactly as hsum8 sums it (s_l = v_l + v_(l+4), then
 * (s0 + s2) + (s1 + s3); hadd adds the same pairs), so the bits are those of
 * four hsum8 calls; the shuffles only move values. */
INLINE __m128 hsum4_ps(__m256 a0, __m256 a1, __m256 a2, __m256 a3, __m128 scale) {
    __m256 b01 = _mm256_add_ps(_mm256_permute2f128_ps(a0, a1, 0x20), _mm256_permute2f128_ps(a0, a1, 0x31));
    __m256 b23 = _mm256_add_ps(_mm256_permute2f128_ps(a2, a3, 0x20), _mm256_permute2f128_ps(a2, a3, 0x31));
    b01 = _mm256_permute_ps(b01, 0xD8); /* (s0, s2, s1, s3) per 128-bit half */
    b23 = _mm256_permute_ps(b23, 0xD8);
    const __m256 c = _mm256_hadd_ps(b01, b23); /* (s0+s2, s1+s3) of a0, a2 | of a1, a3 */
    const __m256 d = _mm256_hadd_ps(c, c);     /* r0, r2, r0, r2 | r1, r3, r1, r3 */
    return _mm_mul_ps(_mm_unpacklo_ps(_mm256_castps256_ps128(d), _mm256_extractf128_ps(d, 1)), scale);
}

/* Tiled order, three queries by four keys: per (query, key) one accumulator
 * over the hd / 8 chunks ascending, then hsum8, then * scale. Live: 12
 * named accumulators (an array of vectors would live on the stack), the 3
 * q chunks and 1 row chunk = 16 ymm. */
static void scores8_q3(const llm__kv_rows *k, int64_t len, int64_t hd, const float *qf, float scale, float *scores,
                       int64_t sstride, int64_t *done) {
    const int64_t nc = hd / 8;
    const __m128 sc = _mm_set1_ps(scale);
    int64_t t = 0;
    for (; t + 4 <= len; t += 4) {
        const uint16_t *r0 = krow(k, t), *r1 = krow(k, t + 1), *r2 = krow(k, t + 2), *r3 = krow(k, t + 3);
        __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a03 = a00;
        __m256 a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        __m256 a20 = a00, a21 = a00, a22 = a00, a23 = a00;
        for (int64_t c = 0; c < nc; c++) {
            const __m256 q0 = _mm256_loadu_ps(qf + 8 * c), q1 = _mm256_loadu_ps(qf + hd + 8 * c);
            const __m256 q2 = _mm256_loadu_ps(qf + 2 * hd + 8 * c);
            __m256 x = load_h8(r0 + 8 * c);
            a00 = _mm256_fmadd_ps(q0, x, a00);
            a10 = _mm256_fmadd_ps(q1, x, a10);
            a20 = _mm256_fmadd_ps(q2, x, a20);
            x = load_h8(r1 + 8 * c);
            a01 = _mm256_fmadd_ps(q0, x, a01);
            a11 = _mm256_fmadd_ps(q1, x, a11);
            a21 = _mm256_fmadd_ps(q2, x, a21);
            x = load_h8(r2 + 8 * c);
            a02 = _mm256_fmadd_ps(q0, x, a02);
            a12 = _mm256_fmadd_ps(q1, x, a12);
            a22 = _mm256_fmadd_ps(q2, x, a22);
            x = load_h8(r3 + 8 * c);
            a03 = _mm256_fmadd_ps(q0, x, a03);
            a13 = _mm256_fmadd_ps(q1, x, a13);
            a23 = _mm256_fmadd_ps(q2, x, a23);
        }
        _mm_storeu_ps(scores + t, hsum4_ps(a00, a01, a02, a03, sc));
        _mm_storeu_ps(scores + sstride + t, hsum4_ps(a10, a11, a12, a13, sc));
        _mm_storeu_ps(scores + 2 * sstride + t, hsum4_ps(a20, a21, a22, a23, sc));
    }
    *done = t;
}

/* Tiled order, nq <= QB queries (3: scores8_q3 takes all but the last
 * len % 4 keys), nk keys at a time (nq * nk accumulators, nk row chunks and
 * nq q chunks live: at most 14 ymm): per (query, key) one accumulator over
 * the hd / 8 chunks ascending, then hsum8, then * scale. */
INLINE void scores8_block(const llm__kv_rows *k, int64_t len, int64_t hd, const float *qf, const int nq,
                          const int nk, float scale, float *scores, int64_t sstride) {
    const int64_t nc = hd / 8;
    int64_t t = 0;
    if (nq == 3) {
        scores8_q3(k, len, hd, qf, scale, scores, sstride, &t);
    }
    for (; t + nk <= len; t += nk) {
        const uint16_t *r[4];
        for (int i = 0; i < nk; i++) r[i] = krow(k, t + i);
        __m256 acc[QB][4];
        for (int j = 0; j < nq; j++)
            for (int i = 0; i < nk; i++) acc[j][i] = _mm256_setzero_ps();
        for (int64_t c = 0; c < nc; c++) {
            __m256 kv[4], qv[QB];
            for (int i = 0; i < nk; i++) kv[i] = load_h8(r[i] + 8 * c);
            for (int j = 0; j < nq; j++) qv[j] = _mm256_loadu_ps(qf + j * hd + 8 * c);
            for (int j = 0; j < nq; j++)
                for (int i = 0; i < nk; i++) acc[j][i] = _mm256_fmadd_ps(qv[j], kv[i], acc[j][i]);
        }
        for (int j = 0; j < nq; j++)
            for (int i = 0; i < nk; i++) scores[j * sstride + t + i] = hsum8(acc[j][i]) * scale;
    }
    for (; t < len; t++) {
        const uint16_t *r = krow(k, t);
        __m256 acc[QB];
        for (int j = 0; j < nq; j++) acc[j] = _mm256_setzero_ps();
        for (int64_t c = 0; c < nc; c++) {
            const __m256 kv = load_h8(r + 8 * c);
            for (int j = 0; j < nq; j++) acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(qf + j * hd + 8 * c), kv, acc[j]);
        }
        for (int j = 0; j < nq; j++) scores[j * sstride + t] = hsum8(acc[j]) * scale;
    }
}

/* Tiled order, m queries (any count) in groups of QB through scores8_block. */
static void scores8_groups(const llm__kv_rows *k, int64_t len, int64_t hd, const float *qf, int64_t m, float scale,
                           float *scores, int64_t sstride) {
    for (int64_t j0 = 0; j0 < m; j0 += QB) {
        const int64_t mm = m - j0 < QB ? m - j0 : QB;
        const float *q = qf + j0 * hd;
        float *s = scores + j0 * sstride;
        if (mm == 3) scores8_block(k, len, hd, q, 3, 4, scale, s, sstride);
        else if (mm == 2) scores8_block(k, len, hd, q, 2, 4, scale, s, sstride);
        else scores8_block(k, len, hd, q, 1, 4, scale, s, sstride);
    }
}

/* The rest of reduce4 for the 8 keys x[0..7], times scale: lane k of the
 * result is reduce4 of key k. reduce4 adds the halves (t = lo + hi), then
 * (t0 + t1) + (t2 + t3); here the halves of keys k and k + 4 are added in
 * one vector, and two rounds of hadd make the same pair sums in the same
 * order, so every lane has reduce4's bits (the shuffles only move values). */
INLINE __m256 reduce8_keys(const __m256 *x, __m256 scale) {
    __m256 y[4];
    for (int k = 0; k < 4; k++) {
        y[k] = _mm256_add_ps(_mm256_permute2f128_ps(x[k], x[k + 4], 0x20),
                             _mm256_permute2f128_ps(x[k], x[k + 4], 0x31));
    }
    const __m256 h01 = _mm256_hadd_ps(y[0], y[1]); /* k0: s01 s23, k1: s01 s23 | k4, k5 */
    const __m256 h23 = _mm256_hadd_ps(y[2], y[3]); /* k2, k3 | k6, k7 */
    return _mm256_mul_ps(_mm256_hadd_ps(h01, h23), scale);
}

/* Up to 4 queries of a group (nq, a constant), key by key: each K row comes
 * from memory once for all of them. The score of a key is reduce4(...) *
 * scale, as dot_f16_4acc then the scale; (float)(double) of a float changes
 * nothing. hd a multiple of 32 (64: scores64_key). */
INLINE void scores_pass4(const llm__kv_rows *k, int64_t len, int64_t hd, const float *qf,
                         const int nq, float scale, float *scores, int64_t sstride) {
    __m256 X[4 * 8]; /* [query][key of the 8] */
    const __m256 sc = _mm256_set1_ps(scale);
    int64_t t = 0;
    for (; t < len; t++) {
        if (t + PF_KEYS < len) prefetch_row(krow(k, t + PF_KEYS), 2 * hd);
        attn_key_scores(krow(k, t), hd, qf, nq, X + (t & 7));
        if ((t & 7) == 7) {
            for (int j = 0; j < nq; j++) {
                _mm256_storeu_ps(scores + j * sstride + t - 7, reduce8_keys(X + j * 8, sc));
            }
        }
    }
    for (int64_t t0 = t & ~(int64_t)7; t0 < t; t0++) { /* the last len % 8 keys */
        for (int j = 0; j < nq; j++) {
            scores[j * sstride + t0] = reduce4_rest(X[j * 8 + (t0 & 7)]) * scale;
        }
    }
}

/* m (1..4) queries through scores_pass4 with m a constant (and hd, where
 * the caller passes one). */
INLINE void scores_group(const llm__kv_rows *k, int64_t len, int64_t hd, const float *qf,
                         int m, float scale, float *scores, int64_t sstride) {
    switch (m) {
    case 4: scores_pass4(k, len, hd, qf, 4, scale, scores, sstride); break;
    case 3: scores_pass4(k, len, hd, qf, 3, scale, scores, sstride); break;
    case 2: scores_pass4(k, len, hd, qf, 2, scale, scores, sstride); break;
    default: scores_pass4(k, len, hd, qf, 1, scale, scores, sstride); break;
    }
}

static void scores32_all(const llm__kv_rows *k, int64_t len, int64_t hd, const float *qf,
                         int64_t nq, float scale, float *scores, int64_t sstride) {
    for (int64_t j0 = 0; j0 < nq; j0 += 4) {
        const float *q = qf + j0 * hd;
        float *s = scores + j0 * sstride;
        const int m = nq - j0 < 4 ? (int)(nq - j0) : 4;
        if (hd == 64) scores_group(k, len, 64, q, m, scale, s, sstride); /* hd a constant there */
        else scores_group(k, len, hd, q, m, scale, s, sstride);
    }
}

static void attn_scores_f16_g_x86(const llm__kv_rows *k, int64_t t_start, int64_t len,
                                   int64_t hd, const uint16_t *q16, int64_t nq, float scale, int tiled,
                                   float *scores, int64_t sstride, float *qf) {
    /* A score does not depend on its key's index: the loops below run over
     * a view that starts at key t_start (rows, offsets and scores shifted). */
    llm__kv_rows kw = *k;
    kw.offs += t_start;
    k = &kw;
    scores += t_start;
    len -= t_start;
    if (hd % (tiled ? 8 : 32) != 0) {
        for (int64_t j = 0; j < nq; j++) {
            for (int64_t t = 0; t < len; t++) {
                const uint16_t *q = q16 + j * hd, *r = krow(k, t);
                scores[j * sstride + t] = (tiled ? dot_f16_tiled(hd, q, r) : dot_f16_4acc(hd, q, r)) * scale;
            }
        }
        return;
    }
    for (int64_t i = 0; i < nq * hd; i += 8) {
        _mm256_storeu_ps(qf + i, load_h8(q16 + i)); /* exact: every F16 is a float */
    }
    if (!tiled) {
        scores32_all(k, len, hd, qf, nq, scale, scores, sstride);
        return;
    }
    attn_scores_tiled(k, len, hd, qf, nq, scale, scores, sstride);
}

/* --------------------------------------------------------- value sums -- */

/* First key t >= t_start of slot sl (t % S == sl): the keys before it are
 * outside a sliding window, with probability 0 (kernels.h, attn_wsum_g). */
INLINE int64_t slot_first(int64_t sl, int64_t t_start, int64_t S) {
    return sl >= t_start ? sl : sl + (t_start - sl + S - 1) / S * S;
}

/* For nq <= QB queries, slot sl, d in [d0, d0 + 8 nv): P_j[sl][d] = sum over
 * t_start <= t < nslot, t % S == sl, ascending, of fma(v_t[d], p_j[t], .) --
 * the chain of wsum_slots in kernels/x86_256.c, with the row chunk loaded once
 * for all nq queries. (Long F16 chains go in stretches instead: slot_block4.) */
INLINE void slot_block(const llm__kv_rows *v, int64_t sl, int64_t t_start, int64_t nslot, int64_t S, int64_t hd,
                       int64_t d0, const float *p, int64_t pstride, float *P, const int nq, const int nv,
                       const int f16) {
    /* Named accumulators a<query><chunk> rather than an array: GCC keeps
     * an array of vectors on the stack and stores it on every row. Unused
     * ones (j >= nq or c >= nv, constants here) are dead code. 4 nq
     * accumulators + nq probabilities + 1 row chunk <= 16 ymm. */
    __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a03 = a00;
    __m256 a10 = a00, a11 = a00, a12 = a00, a13 = a00;
    __m256 a20 = a00, a21 = a00, a22 = a00, a23 = a00;
    float *o = P + sl * hd + d0;
    for (int64_t t = slot_first(sl, t_start, S); t < nslot; t += S) {
        const size_t e = v->offs[t] + v->head_off + (size_t)d0;
        /* Ahead: this slot's row 4 steps on (the chunk this pass reads),
         * and the whole of row t + 1, which the next slot's passes read. */
        if (S == 32 && t + 4 * S < nslot) {
            const size_t ea = v->offs[t + 4 * S] + v->head_off + (size_t)d0;
            prefetch_row(f16 ? (const void *)((const uint16_t *)v->base + ea)
                             : (const void *)((const float *)v->base + ea),
                         nv * (f16 ? 16 : 32));
        }
        if (S == 32 && d0 == 0 && t + 1 < nslot) {
            const size_t ea = v->offs[t + 1] + v->head_off;
            prefetch_row(f16 ? (const void *)((const uint16_t *)v->base + ea)
                             : (const void *)((const float *)v->base + ea),
                         hd * (f16 ? 2 : 4));
        }
        const __m256 p0 = _mm256_broadcast_ss(p + t);
        const __m256 p1 = nq > 1 ? _mm256_broadcast_ss(p + pstride + t) : p0;
        const __m256 p2 = nq > 2 ? _mm256_broadcast_ss(p + 2 * pstride + t) : p0;
#define ROW(c, A0, A1, A2)                                                                               \
    if (nv > c) {                                                                                        \
        const __m256 x = f16 ? load_h8((const uint16_t *)v->base + e + 8 * c)                            \
                             : _mm256_loadu_ps((const float *)v->base + e + 8 * c);                      \
        A0 = _mm256_fmadd_ps(x, p0, A0);                                                                 \
        if (nq > 1) A1 = _mm256_fmadd_ps(x, p1, A1);                                                     \
        if (nq > 2) A2 = _mm256_fmadd_ps(x, p2, A2);                                                     \
    }
        ROW(0, a00, a10, a20)
        ROW(1, a01, a11, a21)
        ROW(2, a02, a12, a22)
        ROW(3, a03, a13, a23)
#undef ROW
    }
#define STORE(j, c, A) \
    if (nq > j && nv > c) _mm256_storeu_ps(o + j * S * hd + 8 * c, A);
    STORE(0, 0, a00) STORE(0, 1, a01) STORE(0, 2, a02) STORE(0, 3, a03)
    STORE(1, 0, a10) STORE(1, 1, a11) STORE(1, 2, a12) STORE(1, 3, a13)
    STORE(2, 0, a20) STORE(2, 1, a21) STORE(2, 2, a22) STORE(2, 3, a23)
#undef STORE
}

#define SLOT_CASE(NQ, NV)                                                                                \
    if (nq == NQ && nv == NV) {                                                                          \
        if (f16) slot_block(v, sl, t_start, nslot, S, hd, d0, p, pstride, P, NQ, NV, 1);                 \
        else slot_block(v, sl, t_start, nslot, S, hd, d0, p, pstride, P, NQ, NV, 0);                     \
        return;                                                                                          \
    }

static void slot_dispatch(const llm__kv_rows *v, int64_t sl, int64_t t_start, int64_t nslot, int64_t S, int64_t hd,
                          int64_t d0, const float *p, int64_t pstride, float *P, int64_t nq, int64_t nv) {
    const int f16 = v->f16;
    SLOT_CASE(3, 4) SLOT_CASE(3, 3) SLOT_CASE(3, 2) SLOT_CASE(3, 1)
    SLOT_CASE(2, 4) SLOT_CASE(2, 3) SLOT_CASE(2, 2) SLOT_CASE(2, 1)
    SLOT_CASE(1, 4) SLOT_CASE(1, 3) SLOT_CASE(1, 2) SLOT_CASE(1, 1)
}
#undef SLOT_CASE

/* Keys per stretch of wsum_stretches: 8 rows per slot. */
#define STRETCH 256

/* The 32 slot chains of the dot-product order over an F16 cache, hd % 32 ==
 * 0, in stretches of STRETCH keys: every slot's chain over the keys of one
 * stretch, its partials left in P, then the next stretch goes on from them.
 * Each chain still runs over its keys in ascending order, from +0, so the
 * sums are those of one pass per slot. Why: the rows of one slot are 32 keys
 * apart, in other blocks of the cache (two blocks of 16 on), so a slot's
 * whole chain would come from L3 or memory row by row. A stretch's rows (32
 * KB of one head at hd 64) stay in L2 for all its slots, and while one
 * stretch is summed the next is prefetched, in key order. Longer stretches
 * (512 or 1024 keys) were no faster. */
static void wsum_stretches(const llm__kv_rows *v, int64_t t_start, int64_t nslot, int64_t hd, const float *p,
                           int64_t pstride, int64_t nq, float *scratch) {
    const int64_t tb0 = t_start & ~(int64_t)31;
    if (tb0 >= nslot) { /* no stretch: every slot is empty */
        memset(scratch, 0, sizeof(float) * (size_t)(nq * 32 * hd));
        return;
    }
    /* The first stretch writes every slot's partials (its chains start from
     * +0, and a slot with no key there stores zeros), so P needs no zeroing. */
    for (int64_t tb = tb0; tb < nslot; tb += STRETCH) {
        const int64_t lo = tb > t_start ? tb : t_start, hi = tb + STRETCH < nslot ? tb + STRETCH : nslot;
        for (int64_t sl = 0; sl < 32; sl++) {
            for (int64_t t = hi + sl * (STRETCH / 32); t < hi + (sl + 1) * (STRETCH / 32) && t < nslot; t++) {
                prefetch_row_l2(llm__kv_row(v, t), 2 * hd);
            }
            for (int64_t j0 = 0; j0 < nq; j0 += 4) {
                const int64_t m = nq - j0 < 4 ? nq - j0 : 4;
                const float *pj = p + j0 * pstride;
                float *P = scratch + j0 * 32 * hd;
                attn_stretch_slot(v, sl, lo, hi, hd, pj, pstride, P, m, tb == tb0);
            }
        }
    }
}

/* Slot partials of nq queries into scratch [nq][S][hd]; slots with no cell
 * stay zero, as in wsum_slots. */
static void wsum_slots_g(const llm__kv_rows *v, int64_t t_start, int64_t nslot, int64_t S, int64_t hd,
                         const float *p, int64_t pstride, int64_t nq, float *scratch) {
    const int64_t hd8 = hd & ~(int64_t)7;
    if (S == 32 && v->f16 && hd % 32 == 0) {
        wsum_stretches(v, t_start, nslot, hd, p, pstride, nq, scratch);
        return;
    }
    if (S == 8 && attn_slots8_wide(v, t_start, nslot, hd, p, pstride, nq, scratch)) return;
    memset(scratch, 0, sizeof(float) * (size_t)(nq * S * hd));
    for (int64_t j0 = 0; j0 < nq; j0 += QB) {
        const int64_t m = nq - j0 < QB ? nq - j0 : QB;
        const float *pj = p + j0 * pstride;
        float *P = scratch + j0 * S * hd;
        for (int64_t sl = 0; sl < S && sl < nslot; sl++) {
            for (int64_t d0 = 0; d0 < hd8; d0 += 32) {
                const int64_t nv = (hd8 - d0) / 8 < 4 ? (hd8 - d0) / 8 : 4;
                slot_dispatch(v, sl, t_start, nslot, S, hd, d0, pj, pstride, P, m, nv);
            }
            for (int64_t j = 0; j < m; j++) {
                for (int64_t d = hd8; d < hd; d++) {
                    float a = 0.0f;
                    for (int64_t t = slot_first(sl, t_start, S); t < nslot; t += S) {
                        const void *row = llm__kv_row(v, t);
                        a = fmaf(v->f16 ? h2f(((const uint16_t *)row)[d]) : ((const float *)row)[d],
                                 pj[j * pstride + t], a);
                    }
                    P[(j * S + sl) * hd + d] = a;
                }
            }
        }
    }
}

static void attn_wsum_g_x86(const llm__kv_rows *v, int64_t t_start, int64_t len, int64_t n_all, int64_t hd,
                             const float *p, int64_t pstride, int64_t nq, int tiled, float *out, float *scratch) {
    if (tiled) {
        /* attn_wsum8_avx2: 8 slots (lane t % 8), folded as llm__hsum8. */
        wsum_slots_g(v, t_start, len, 8, hd, p, pstride, nq, scratch);
        for (int64_t j = 0; j < nq; j++) {
            fold8_lanes(scratch + j * 8 * hd, hd, out + j * hd);
        }
        return;
    }
    /* attn_wsum_avx2: 32 slots folded as reduce4, cells past the last whole
     * 32 of n_all added in double. */
    const int64_t np = n_all & ~(int64_t)31, nslot = len < np ? len : np;
    wsum_slots_g(v, t_start, nslot, 32, hd, p, pstride, nq, scratch);
    const int64_t hd8 = hd & ~(int64_t)7, t_tail = nslot > t_start ? nslot : t_start;
    for (int64_t j = 0; j < nq; j++) {
        const float *pj = p + j * pstride;
        /* Eight d at a time: every lane does the scalar steps below, in
         * the same order (adds of floats, then doubles), so the same bits. */
        for (int64_t d = 0; d < hd8; d += 8) {
            const float *P = scratch + j * 32 * hd + d;
            __m256 X[8];
            for (int l = 0; l < 8; l++) {
                X[l] = _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(P + l * hd), _mm256_loadu_ps(P + (16 + l) * hd)),
                                     _mm256_add_ps(_mm256_loadu_ps(P + (8 + l) * hd),
                                                   _mm256_loadu_ps(P + (24 + l) * hd)));
            }
            const __m256 T0 = _mm256_add_ps(X[0], X[4]), T1 = _mm256_add_ps(X[1], X[5]);
            const __m256 T2 = _mm256_add_ps(X[2], X[6]), T3 = _mm256_add_ps(X[3], X[7]);
            const __m256 f = _mm256_add_ps(_mm256_add_ps(T0, T1), _mm256_add_ps(T2, T3));
            __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(f)), hi = _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1));
            for (int64_t t = t_tail; t < len; t++) {
                const void *row = llm__kv_row(v, t);
                const __m256 x = v->f16 ? load_h8((const uint16_t *)row + d) : _mm256_loadu_ps((const float *)row + d);
                const __m256 px = _mm256_mul_ps(x, _mm256_set1_ps(pj[t]));
                lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(px)));
                hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(px, 1)));
            }
            _mm256_storeu_ps(out + j * hd + d, _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo)));
        }
        for (int64_t d = hd8; d < hd; d++) {
            const float *P = scratch + j * 32 * hd + d;
            float X[8], T[4];
            for (int l = 0; l < 8; l++) {
                X[l] = (P[l * hd] + P[(16 + l) * hd]) + (P[(8 + l) * hd] + P[(24 + l) * hd]);
            }
            for (int l = 0; l < 4; l++) T[l] = X[l] + X[l + 4];
            double s = (double)((T[0] + T[1]) + (T[2] + T[3]));
            for (int64_t t = t_tail; t < len; t++) {
                const void *row = llm__kv_row(v, t);
                float x = v->f16 ? h2f(((const uint16_t *)row)[d]) : ((const float *)row)[d];
                s += (double)(x * pj[t]);
            }
            out[j * hd + d] = (float)s;
        }
    }
}

#endif
