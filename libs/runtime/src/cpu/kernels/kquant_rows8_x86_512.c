/*
 * cpu/kernels/kquant_rows8_x86_512.c -- the Q4_K rows8 kernels with AVX-512
 * (F, BW, DQ, VL, VNNI; compiled with them: sources.cmake): the dot8 (two
 * activation rows per register for 4 rows, q4k_8x4_avx512; the 256-bit
 * bodies with EVEX vpdpwssd below 4) and the products on q4k_pack8's tiles
 * with 16 weight rows per register. Same bits as kquant_rows8_x86_256.c,
 * whose fill picks them where the CPU has AVX-512 VNNI.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVX512VNNI__) && \
    defined(__GNUC__) && (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)

#include <immintrin.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "cpu/kernels/x86_512.h"
#include "dtype/blocks.h"

/* Lane r of the result: the sum of the 8 int32 lanes of p[r] (exact). */
static inline __attribute__((always_inline)) __m256i kq8_sum_rows8(const __m256i p[8]) {
    const __m256i h01 = _mm256_hadd_epi32(p[0], p[1]), h23 = _mm256_hadd_epi32(p[2], p[3]);
    const __m256i h45 = _mm256_hadd_epi32(p[4], p[5]), h67 = _mm256_hadd_epi32(p[6], p[7]);
    const __m256i lo = _mm256_hadd_epi32(h01, h23), hi = _mm256_hadd_epi32(h45, h67);
    return _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x20), _mm256_permute2x128_si256(lo, hi, 0x31));
}

/* One activation row (decode): the single-row gemv kernel, row after row
 * (as kquant_rows8_x86_256.c). */
static void q4k_gemv_rows(int64_t n, const char *w, size_t w_stride, const char *a, float *out) {
    for (int r = 0; r < 8; r++) out[r] = llm__q4_k_dot_repack_gemv(n, w + (size_t)r * w_stride, a);
}

#define KQ8_TARGET_AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))

#define KQ8_TARGET_ZMM __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))
/* q4k_dot8x4_packed on 512-bit registers, 16 weight rows per register:
 * ng (1 or 2) packed groups, the second at pk + pk_stride (with one, its
 * lanes repeat the first's and are not stored). Lane r is weight row r;
 * per chunk and activation row one vpdpbusd adds the four products q y,
 * the activation's 4 bytes broadcast from memory, so each sub-block's sum
 * is an int32 (at most 32 * 15 * 128 in magnitude); vpmulld by the row's
 * scale (the low int16 of the tile's sc dword) gives the same exact sc *
 * sum as vpmaddwd: the same integers, the same float chains, the same bits. */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) void
q4k_dotx4_zmm(int64_t n, const void *pk, size_t pk_stride, const void *a, size_t a_stride, float *out,
              size_t o_stride, const int NG) {
    __m512 acc[4], accm[4];
    for (int j = 0; j < 4; j++) acc[j] = accm[j] = _mm512_setzero_ps();
    const __m512i m4 = _mm512_set1_epi8(0x0F), lo16 = _mm512_set1_epi32(0xFFFF);
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const char *T0 = (const char *)pk + (size_t)b * LLM_Q4K_PK, *T1 = NG == 2 ? T0 + pk_stride : T0;
        const __m512 dw = zmm_tile2f(T0, T1, 1408), mw = zmm_tile2f(T0, T1, 1440);
        const llm_block_q8_k *y[4];
        __m512 dd[4], dm[4];
        int32_t B[4][4]; /* [j][p]: the int16 pair B(2p), B(2p + 1) */
        for (int j = 0; j < 4; j++) {
            y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride) + b;
            const __m512 dy = _mm512_set1_ps(y[j]->d);
            dd[j] = _mm512_mul_ps(dw, dy);
            dm[j] = _mm512_mul_ps(mw, dy);
            const __m256i bs = _mm256_loadu_si256((const __m256i *)y[j]->bsums);
            _mm_storeu_si128((__m128i *)B[j], _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));
        }
        for (int p = 0; p < 4; p++) {
            __m512i slo[4], shi[4];
            for (int j = 0; j < 4; j++) slo[j] = shi[j] = _mm512_setzero_si512();
            for (int k = 0; k < 8; k++) {
                const __m512i q = zmm_tile2(T0, T1, (size_t)(p * 8 + k) * 32);
                const __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
                for (int j = 0; j < 4; j++) {
                    const int8_t *yq = y[j]->qs + 64 * p + 4 * k;
                    slo[j] = _mm512_dpbusd_epi32(slo[j], lo, zmm_bcast4(yq));
                    shi[j] = _mm512_dpbusd_epi32(shi[j], hi, zmm_bcast4(yq + 32));
                }
            }
            const __m512i sc0 = _mm512_and_si512(zmm_tile2(T0, T1, 1024 + 64 * (size_t)p), lo16);
            const __m512i sc1 = _mm512_and_si512(zmm_tile2(T0, T1, 1024 + 64 * (size_t)p + 32), lo16);
            const __m512i mnp = zmm_tile2(T0, T1, 1280 + 32 * (size_t)p);
            for (int j = 0; j < 4; j++) {
                const __m512i sq = _mm512_add_epi32(_mm512_mullo_epi32(slo[j], sc0), _mm512_mullo_epi32(shi[j], sc1));
                const __m512i mq = _mm512_madd_epi16(mnp, _mm512_set1_epi32(B[j][p]));
                acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sq), dd[j], acc[j]);
                accm[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(mq), dm[j], accm[j]);
            }
        }
    }
    __m512 r[4];
    for (int j = 0; j < 4; j++) r[j] = _mm512_sub_ps(acc[j], accm[j]);
    zmm_store16x4(out, o_stride, r, NG);
}

void llm__q4k_dot8x4_packed_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride,
                                                 float *out, size_t o_stride) {
    q4k_dotx4_zmm(n, pk, 0, a, a_stride, out, o_stride, 1);
}

void llm__q4k_dot16x4_packed_x86_512(int64_t n, const void *pk, size_t pk_stride, const void *a,
                                                  size_t a_stride, float *out, size_t o_stride) {
    q4k_dotx4_zmm(n, pk, pk_stride, a, a_stride, out, o_stride, 2);
}

/* Eight Q4_K rows by four Q8_K rows (llama.cpp's gemm order) on 512-bit
 * registers: activation rows A and B (0 and 1, then 2 and 3) share each
 * register, so every integer instruction does two rows' work, and the tree
 * that sums lanes uses unpacks and adds instead of the (slow) hadd. The
 * tree leaves its totals in the layout "row group, act": 128-bit lane 0
 * holds weight rows 0..3 for A, lane 1 rows 0..3 for B, lane 2 rows 4..7
 * for A, lane 3 rows 4..7 for B; the scales, mins and accumulators use the
 * same layout, so each lane runs exactly the float chain of the 256-bit
 * form (same products, same FMAs, same order). */
KQ8_TARGET_AVX512 static void q4k_8x4_avx512(int64_t n, const char *w, size_t w_stride, const char *a,
                                             size_t a_stride, float *out, size_t o_stride) {
    __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()}, accm[2] = {acc[0], acc[1]};
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    /* From a 256-bit vector of 8 rows to the layout: lanes (lo, lo, hi, hi). */
    const __m512i lay = _mm512_set_epi32(7, 6, 5, 4, 7, 6, 5, 4, 3, 2, 1, 0, 3, 2, 1, 0);
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        __m512i s[8];
        __m128i mins[8];
        uint16_t dh[8], mh[8];
        for (int r = 0; r < 8; r++) {
            const llm_block_q4_k *x = (const llm_block_q4_k *)(w + (size_t)r * w_stride) + b;
            const __m256i sm = q4_k_scales_mins(x->scales);
            s[r] = _mm512_broadcast_i32x4(_mm256_castsi256_si128(sm));
            mins[r] = _mm256_extracti128_si256(sm, 1);
            dh[r] = x->d;
            mh[r] = x->dmin;
        }
        const __m512 dw = _mm512_permutexvar_ps(lay, _mm512_castps256_ps512(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)dh))));
        const __m512 mw = _mm512_permutexvar_ps(lay, _mm512_castps256_ps512(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)mh))));
        __m512i mn[4];
        {
            const __m256i v0 = _mm256_set_m128i(mins[4], mins[0]), v1 = _mm256_set_m128i(mins[5], mins[1]);
            const __m256i v2 = _mm256_set_m128i(mins[6], mins[2]), v3 = _mm256_set_m128i(mins[7], mins[3]);
            const __m256i t01l = _mm256_unpacklo_epi32(v0, v1), t23l = _mm256_unpacklo_epi32(v2, v3);
            const __m256i t01h = _mm256_unpackhi_epi32(v0, v1), t23h = _mm256_unpackhi_epi32(v2, v3);
            mn[0] = _mm512_permutexvar_epi32(lay, _mm512_castsi256_si512(_mm256_unpacklo_epi64(t01l, t23l)));
            mn[1] = _mm512_permutexvar_epi32(lay, _mm512_castsi256_si512(_mm256_unpackhi_epi64(t01l, t23l)));
            mn[2] = _mm512_permutexvar_epi32(lay, _mm512_castsi256_si512(_mm256_unpacklo_epi64(t01h, t23h)));
            mn[3] = _mm512_permutexvar_epi32(lay, _mm512_castsi256_si512(_mm256_unpackhi_epi64(t01h, t23h)));
        }
        const llm_block_q8_k *y[4];
        for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_k *)(a + (size_t)j * a_stride) + b;
        __m512 dd[2], dm[2];
        __m512i B[2]; /* 8 int16 block sums of A in lanes 0..3, of B in lanes 4..7 (as int32 pairs) */
        for (int h = 0; h < 2; h++) {
            const __m128 ya = _mm_set1_ps(y[2 * h]->d), yb = _mm_set1_ps(y[2 * h + 1]->d);
            const __m512 dy = _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_set_m128(yb, ya))));
            dd[h] = _mm512_mul_ps(dw, dy);
            dm[h] = _mm512_mul_ps(mw, dy);
            __m128i bs[2];
            for (int e = 0; e < 2; e++) {
                const __m256i v = _mm256_loadu_si256((const __m256i *)y[2 * h + e]->bsums);
                bs[e] = _mm_hadd_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
            }
            B[h] = _mm512_castsi256_si512(_mm256_set_m128i(bs[1], bs[0]));
        }
        for (int p = 0; p < 4; p++) {
            const __m512i i0 = _mm512_set1_epi16((short)(((4 * p + 1) << 8) | (4 * p)));
            const __m512i i1 = _mm512_set1_epi16((short)(((4 * p + 3) << 8) | (4 * p + 2)));
            __m512i Y0[2], Y1[2];
            for (int h = 0; h < 2; h++) {
                Y0[h] = _mm512_inserti64x4(
                    _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(y[2 * h]->qs + 64 * p))),
                    _mm256_loadu_si256((const __m256i *)(y[2 * h + 1]->qs + 64 * p)), 1);
                Y1[h] = _mm512_inserti64x4(
                    _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(y[2 * h]->qs + 64 * p + 32))),
                    _mm256_loadu_si256((const __m256i *)(y[2 * h + 1]->qs + 64 * p + 32)), 1);
            }
            __m512i v[2][8];
            for (int r = 0; r < 8; r++) {
                const llm_block_q4_k *x = (const llm_block_q4_k *)(w + (size_t)r * w_stride) + b;
                const __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(x->qs + 32 * p)));
                const __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
                const __m512i s0 = _mm512_shuffle_epi8(s[r], i0), s1 = _mm512_shuffle_epi8(s[r], i1);
                for (int h = 0; h < 2; h++) {
                    const __m512i z = _mm512_dpwssd_epi32(_mm512_setzero_si512(), s0, _mm512_maddubs_epi16(lo, Y0[h]));
                    v[h][r] = _mm512_dpwssd_epi32(z, s1, _mm512_maddubs_epi16(hi, Y1[h]));
                }
            }
            const __m512i bidx = _mm512_set_epi32(4 + p, 4 + p, 4 + p, 4 + p, p, p, p, p, 4 + p, 4 + p, 4 + p, 4 + p,
                                                  p, p, p, p);
            for (int h = 0; h < 2; h++) {
                __m512i t[4];
                for (int k = 0; k < 4; k++) {
                    t[k] = _mm512_add_epi32(_mm512_unpacklo_epi32(v[h][2 * k], v[h][2 * k + 1]),
                                            _mm512_unpackhi_epi32(v[h][2 * k], v[h][2 * k + 1]));
                }
                const __m512i b0 = _mm512_add_epi32(_mm512_unpacklo_epi64(t[0], t[1]), _mm512_unpackhi_epi64(t[0], t[1]));
                const __m512i b1 = _mm512_add_epi32(_mm512_unpacklo_epi64(t[2], t[3]), _mm512_unpackhi_epi64(t[2], t[3]));
                /* b0: lane k = rows 0..3 over 128-bit lane k of the inputs (A: k 0, 1; B: k 2, 3). */
                const __m512i sq = _mm512_add_epi32(_mm512_shuffle_i32x4(b0, b1, 0x88), _mm512_shuffle_i32x4(b0, b1, 0xDD));
                const __m512i mq = _mm512_madd_epi16(mn[p], _mm512_permutexvar_epi32(bidx, B[h]));
                acc[h] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sq), dd[h], acc[h]);
                accm[h] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(mq), dm[h], accm[h]);
            }
        }
    }
    for (int h = 0; h < 2; h++) {
        float t[16];
        _mm512_storeu_ps(t, _mm512_sub_ps(acc[h], accm[h]));
        for (int r = 0; r < 4; r++) {
            out[(size_t)(2 * h) * o_stride + (size_t)r] = t[r];
            out[(size_t)(2 * h + 1) * o_stride + (size_t)r] = t[4 + r];
            out[(size_t)(2 * h) * o_stride + 4 + (size_t)r] = t[8 + r];
            out[(size_t)(2 * h + 1) * o_stride + 4 + (size_t)r] = t[12 + r];
        }
    }
}

/* The 256-bit bodies once more with the EVEX vpdpwssd of AVX-512 VL + VNNI
 * (a CPU with AVX-512 VNNI need not have AVX-VNNI), for 1..3 activation rows. */
#define KQ8_ATTR KQ8_TARGET_AVX512
#define KQ8_NAME(f) f##_avx512vl
#define KQ8_MADD_ACC(acc, s, p) _mm256_dpwssd_epi32((acc), (s), (p))
#include "cpu/kernels/kquant_rows8_body.h"
#undef KQ8_ATTR
#undef KQ8_NAME
#undef KQ8_MADD_ACC

void llm__q4k_dot8_x86_512(int64_t n, const void *w, size_t w_stride, const void *a,
                                               size_t a_stride, int n_a, float *out, size_t o_stride) {
    if (n_a >= 4) {
        q4k_8x4_avx512(n, w, w_stride, a, a_stride, out, o_stride);
    } else {
        switch (n_a) {
        case 1: q4k_gemv_rows(n, w, w_stride, a, out); break;
        case 2: q4k_8xN_avx512vl(n, w, w_stride, a, a_stride, 2, out, o_stride); break;
        default: q4k_8xN_avx512vl(n, w, w_stride, a, a_stride, 3, out, o_stride); break;
        }
    }
}



#else /* not built with AVX-512 VNNI: never installed */

void llm__q4k_dot8_x86_512(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride, int n_a,
                           float *out, size_t o_stride) {
    (void)n, (void)w, (void)w_stride, (void)a, (void)a_stride, (void)n_a, (void)out, (void)o_stride;
}
void llm__q4k_dot8x4_packed_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                                    size_t o_stride) {
    (void)n, (void)pk, (void)a, (void)a_stride, (void)out, (void)o_stride;
}
void llm__q4k_dot16x4_packed_x86_512(int64_t n, const void *pk, size_t pk_stride, const void *a, size_t a_stride,
                                     float *out, size_t o_stride) {
    (void)n, (void)pk, (void)pk_stride, (void)a, (void)a_stride, (void)out, (void)o_stride;
}

#endif
