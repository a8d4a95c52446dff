/*
 * cpu/attention_x86_512.c -- the grouped attention products (attention_x86.h)
 * with AVX-512F: a decode's key rows (scores_key_z), a prompt's keys
 * (scores8_z, two per register) and both orders' value sums of an F16 cache
 * (slot_block_z) in 16-lane registers, each lane still the chain it was, so
 * the same bits as attention_x86_256.c (tests/runtime/test_llama_order.c
 * runs both). Compiled with -mavx512f -mavx2 -mfma -mf16c (sources.cmake);
 * llm__cpu_kernels_x86 registers it where the CPU has AVX-512F.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVX512F__)

#include "cpu/attention_x86.h"

/* Tiled order with 16-lane registers: lanes 0-7 of an accumulator are key
 * 2i's 8 lanes, lanes 8-15 key 2i + 1's, and each q chunk sits in both
 * halves, so per (query, key) it is the chain of scores8_q3 (chunks
 * ascending from +0, fma(q, k, acc)), then hsum8 of each half (hsum4_ps)
 * and * scale: the same bits. NQ <= 4 queries by 8 keys: 16 accumulators,
 * 4 row pairs and a q chunk live. Returns the keys done (a multiple of 8). */
INLINE int64_t scores8_z(const llm__kv_rows *k, int64_t len, int64_t hd, const float *qf, const int NQ, float scale,
                         float *scores, int64_t sstride) {
    const int64_t nc = hd / 8;
    const __m128 sc = _mm_set1_ps(scale);
    int64_t t = 0;
    for (; t + 8 <= len; t += 8) {
        const uint16_t *r[8];
        for (int i = 0; i < 8; i++) r[i] = krow(k, t + i);
        __m512 a[4][4];
        for (int j = 0; j < NQ; j++)
            for (int i = 0; i < 4; i++) a[j][i] = _mm512_setzero_ps();
        for (int64_t c = 0; c < nc; c++) {
            __m512 x[4];
            for (int i = 0; i < 4; i++) {
                const __m128i k0 = _mm_loadu_si128((const __m128i *)(r[2 * i] + 8 * c));
                const __m128i k1 = _mm_loadu_si128((const __m128i *)(r[2 * i + 1] + 8 * c));
                x[i] = _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(k0), k1, 1));
            }
            for (int j = 0; j < NQ; j++) {
                const __m512 q = _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_loadu_pd((const double *)(qf + j * hd + 8 * c))));
                for (int i = 0; i < 4; i++) a[j][i] = _mm512_fmadd_ps(q, x[i], a[j][i]);
            }
        }
#define LO8(v) _mm512_castps512_ps256(v)
#define HI8(v) _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))
        for (int j = 0; j < NQ; j++) {
            _mm_storeu_ps(scores + j * sstride + t, hsum4_ps(LO8(a[j][0]), HI8(a[j][0]), LO8(a[j][1]), HI8(a[j][1]), sc));
            _mm_storeu_ps(scores + j * sstride + t + 4,
                          hsum4_ps(LO8(a[j][2]), HI8(a[j][2]), LO8(a[j][3]), HI8(a[j][3]), sc));
        }
#undef LO8
#undef HI8
    }
    return t;
}

/* The same chains with 16-lane registers, hd % 32 == 0: one load converts
 * chunks 4i and 4i + 1, so lanes 0-7 of a[j][0] are accumulator 0 (chunks c
 * % 4 == 0) and lanes 8-15 accumulator 1; a[j][1] holds accumulators 2 and
 * 3. Each still takes its chunks ascending from +0, and (a0 + a2) + (a1 +
 * a3) is one add of the two registers, then one of their halves: the bits
 * of scores32_key4 / scores64_key with half the conversions and FMAs. 8
 * accumulators and 2 row chunks live. */
INLINE void scores_key_z(const uint16_t *r, int64_t hd, const float *qf, const int nq, __m256 *X) {
    __m512 a[4][2];
    for (int j = 0; j < nq; j++) a[j][0] = a[j][1] = _mm512_setzero_ps();
    for (int64_t c = 0; c < hd; c += 32) {
        const __m512 k0 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(r + c)));
        const __m512 k1 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(r + c + 16)));
        for (int j = 0; j < nq; j++) {
            const float *q = qf + j * hd + c;
            a[j][0] = _mm512_fmadd_ps(_mm512_loadu_ps(q), k0, a[j][0]);
            a[j][1] = _mm512_fmadd_ps(_mm512_loadu_ps(q + 16), k1, a[j][1]);
        }
    }
    for (int j = 0; j < nq; j++) {
        const __m512 s = _mm512_add_ps(a[j][0], a[j][1]); /* a0 + a2 | a1 + a3 */
        X[j * 8] = _mm256_add_ps(_mm512_castps512_ps256(s), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
    }
}

INLINE void attn_key_scores(const uint16_t *r, int64_t hd, const float *qf, const int nq, __m256 *X) {
    scores_key_z(r, hd, qf, nq, X);
}

static void attn_scores_tiled(const llm__kv_rows *k, int64_t len, int64_t hd, const float *qf, int64_t nq,
                              float scale, float *scores, int64_t sstride) {
    /* Up to 4 queries by 8 keys in 16 lanes; the last len % 8 keys by the
     * 8-lane blocks below on a view from there. */
    for (int64_t j0 = 0; j0 < nq; j0 += 4) {
        const int64_t m = nq - j0 < 4 ? nq - j0 : 4;
        const float *q = qf + j0 * hd;
        float *s = scores + j0 * sstride;
        int64_t t0;
        if (m == 4) t0 = scores8_z(k, len, hd, q, 4, scale, s, sstride);
        else if (m == 3) t0 = scores8_z(k, len, hd, q, 3, scale, s, sstride);
        else if (m == 2) t0 = scores8_z(k, len, hd, q, 2, scale, s, sstride);
        else t0 = scores8_z(k, len, hd, q, 1, scale, s, sstride);
        if (t0 == len) continue;
        llm__kv_rows kt = *k;
        kt.offs += t0;
        scores8_groups(&kt, len - t0, hd, q, m, scale, s + t0, sstride);
    }
}

/* slot_block4's chains (each lane one d, its keys ascending) with 16-lane
 * registers, 16 ND dims from d0 (ND 2 or 4, a constant), S slots (32: the
 * dot-product order's, partials [nq][32][hd]; 8: the tiled order's,
 * slot_block's chains for an F16 cache): up to 16 accumulators, ND row
 * chunks and a probability live. */
INLINE void slot_block_z(const llm__kv_rows *v, int64_t sl, int64_t t_start, int64_t nslot, int64_t hd, int64_t d0,
                         const float *p, int64_t pstride, float *P, const int nq, const int ND, const int first,
                         const int S) {
    float *o = P + sl * hd + d0;
    const int64_t js = S * hd; /* one query's partials */
    __m512 a[4][4];
    for (int j = 0; j < nq; j++)
        for (int i = 0; i < ND; i++) a[j][i] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(o + j * js + 16 * i);
    for (int64_t t = slot_first(sl, t_start, S); t < nslot; t += S) {
        const uint16_t *r = (const uint16_t *)v->base + v->offs[t] + v->head_off + d0;
        __m512 x[4];
        for (int i = 0; i < ND; i++) x[i] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(r + 16 * i)));
        for (int j = 0; j < nq; j++) {
            const __m512 pj = _mm512_set1_ps(p[j * pstride + t]);
            for (int i = 0; i < ND; i++) a[j][i] = _mm512_fmadd_ps(x[i], pj, a[j][i]);
        }
    }
    for (int j = 0; j < nq; j++)
        for (int i = 0; i < ND; i++) _mm512_storeu_ps(o + j * js + 16 * i, a[j][i]);
}

INLINE void attn_stretch_slot(const llm__kv_rows *v, int64_t sl, int64_t lo, int64_t hi, int64_t hd,
                              const float *pj, int64_t pstride, float *P, int64_t m, int first) {
    const int64_t dstep = hd % 64 == 0 ? 64 : 32;
    for (int64_t d0 = 0; d0 < hd; d0 += dstep) {
#define SBZ(NQ, ND)                                                                       \
    if (first) slot_block_z(v, sl, lo, hi, hd, d0, pj, pstride, P, NQ, ND, 1, 32);        \
    else slot_block_z(v, sl, lo, hi, hd, d0, pj, pstride, P, NQ, ND, 0, 32);
#define SB4(NQ)                                                                           \
    if (dstep == 64) { SBZ(NQ, 4) }                                                       \
    else { SBZ(NQ, 2) }
        if (m == 4) { SB4(4) }
        else if (m == 3) { SB4(3) }
        else if (m == 2) { SB4(2) }
        else { SB4(1) }
#undef SB4
#undef SBZ
    }
}

/* The tiled order's 8 slots of an F16 cache, 16 lanes at a time. */
static int attn_slots8_wide(const llm__kv_rows *v, int64_t t_start, int64_t nslot, int64_t hd, const float *p,
                            int64_t pstride, int64_t nq, float *scratch) {
    if (v->f16 && hd % 32 == 0) { /* 16 lanes at a time */
        const int64_t dstep = hd % 64 == 0 ? 64 : 32;
        for (int64_t j0 = 0; j0 < nq; j0 += 4) {
            const int64_t m = nq - j0 < 4 ? nq - j0 : 4;
            const float *pj = p + j0 * pstride;
            float *P = scratch + j0 * 8 * hd;
            for (int64_t sl = 0; sl < 8; sl++) { /* every slot stored (from +0: zeros where it has no key) */
                for (int64_t d0 = 0; d0 < hd; d0 += dstep) {
#define SZ8(NQ)                                                                             \
    if (dstep == 64) slot_block_z(v, sl, t_start, nslot, hd, d0, pj, pstride, P, NQ, 4, 1, 8); \
    else slot_block_z(v, sl, t_start, nslot, hd, d0, pj, pstride, P, NQ, 2, 1, 8);
                    if (m == 4) { SZ8(4) }
                    else if (m == 3) { SZ8(3) }
                    else if (m == 2) { SZ8(2) }
                    else { SZ8(1) }
#undef SZ8
                }
            }
        }
        return 1;
    }
    return 0;
}

void llm__cpu_kernels_attn_x86_512(llm__cpu_kernels *k) {
    k->attn_scores_f16_g = attn_scores_f16_g_x86;
    k->attn_wsum_g = attn_wsum_g_x86;
}

#else /* no AVX-512 build: never selected */

void llm__cpu_kernels_attn_x86_512(llm__cpu_kernels *k) { (void)k; }

#endif
