/*
 * cpu/kernels/prep_kquant_x86_256.c -- the K-quant weights prepared at load
 * (kernels.h prep, runtime.h llm_backend_prepare_weight): Q4_K's product in
 * 256-bit registers (AVX2, or AVX-VNNI by target attribute) for CPUs
 * without AVX-512 VNNI, and the fill that installs the prepared layouts the
 * CPU runs (the AVX-512 ones live in prep_q*_k_x86_512.c, one per type).
 * Each product keeps the order of the matmul without the copy (Q4_K: the
 * rows8 pair's gemm / gemv; the others: vec_dot's below 8 activation rows,
 * llama.cpp's tiled one from 8), so preparing changes no bit.
 *
 * Compiled with -mavx2 -mfma -mf16c (sources.cmake), installed by
 * llm__cpu_kernels_x86() once the CPU has been checked.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__GNUC__) && \
    (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)

#include "cpu/kernels/prep_kquant.h"
#include "cpu/kernels/prep_q4_k.h"

static void q4kr_unpack16(int64_t K, const void *grp, void *dst, size_t stride) {
    kr_unpack16(&q4kr_layout, K, grp, dst, stride);
}

/* vpshufb patterns, per 128-bit lane: byte t of each dword alone in the
 * dword (zero-extended), or bytes t, t + 1 as two zero-extended int16. */

/* kr_scales_mins on 8 rows: the 32-byte half h of each [16 rows] dword row. */
static inline __attribute__((always_inline)) void kr_scales_mins8(const char *S, __m256i scb[2], __m256i mnb[2]) {
    const __m256i W0 = _mm256_load_si256((const __m256i *)S);
    const __m256i W1 = _mm256_load_si256((const __m256i *)(S + 64));
    const __m256i W2 = _mm256_load_si256((const __m256i *)(S + 128));
    const __m256i m4 = _mm256_set1_epi8(0x0F), m6 = _mm256_set1_epi8(0x3F), m2 = _mm256_set1_epi8(0x03);
    scb[0] = _mm256_and_si256(W0, m6);
    mnb[0] = _mm256_and_si256(W1, m6);
    scb[1] = _mm256_or_si256(_mm256_and_si256(W2, m4), _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(W0, 6), m2), 4));
    mnb[1] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(W2, 4), m4),
                             _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(W1, 6), m2), 4));
}

/* The product on a prepared Q4_K group with 256-bit registers (CPUs
 * without AVX-512 VNNI), on the two 32-byte halves h of each 64-byte chunk
 * (rows 8h .. 8h + 7; one pass over both, or one per half, below): lane r
 * of int32 is row 8h + r, and the same exact integers and float chain
 * as q4kr_dotN, so the same bits. With AVX-VNNI, vpdpbusd sums each
 * sub-block's products per row and vpmulld scales them, as there; with
 * AVX2 alone, vpmaddubsw of the unsigned q (0..15) by y (-128..127) puts
 * two products in each int16 (|sum| <= 3840), the sub-block's 8 chunks
 * summed in int16 stay within 30720, and vpmaddwd by the scale in both
 * int16 of each dword scales and sums them in one step (exact). Up to 4
 * activation rows: 4 in llama.cpp's gemm order, fewer in its gemv order. */
/* Up to this many activation rows the 256-bit product takes both halves of
 * each chunk in one pass (decode: one pass reads the group once, measured
 * fastest, see docs/PERFORMANCE.md); above, one pass per half (registers). */
#define Q4KR_YMM_ONEPASS 2
#define Q4KR_YMM(NAME, ATTR, VNNI)                                                                                  \
    ATTR static inline __attribute__((always_inline)) void NAME##H(int64_t n, const char *G, const char *a,         \
                                                                 size_t a_stride, float *out, size_t o_stride,     \
                                                                 const int NA, const int PF, const int H0,          \
                                                                 const int H1) {                                   \
        const int GEMV = NA < 4;                                                                                    \
        const __m256i m4 = _mm256_set1_epi8(0x0F);                                                                  \
        __m256 acc[2][4], accm[2][4];                                                                               \
        for (int h = H0; h < H1; h++)                                                                               \
            for (int j = 0; j < NA; j++) acc[h][j] = accm[h][j] = _mm256_setzero_ps();                              \
        for (int64_t b = 0; b < n / LLM_QK_K; b++) {                                                                \
            const char *T = G + (size_t)b * Q4KR_SB;                                                                \
            if (PF) {                                                                                               \
                for (int l = 0; l < Q4KR_SB; l += 64) _mm_prefetch(T + Q4KR_PF + l, _MM_HINT_T0);                   \
            }                                                                                                       \
            const llm_block_q8_k *y[4];                                                                             \
            int32_t B[4][4]; /* per pair p: the two sub-blocks' bsums as int16 */                                   \
            for (int j = 0; j < NA; j++) {                                                                          \
                y[j] = (const llm_block_q8_k *)(a + (size_t)j * a_stride) + b;                                     \
                const __m256i bs = _mm256_loadu_si256((const __m256i *)y[j]->bsums);                                \
                _mm_storeu_si128((__m128i *)B[j],                                                                   \
                                 _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));      \
            }                                                                                                       \
            for (int h = H0; h < H1; h++) {                                                                         \
                const __m256 dw = _mm256_cvtph_ps(_mm_load_si128((const __m128i *)(T + Q4KR_D + 16 * h)));          \
                const __m256 mw = _mm256_cvtph_ps(_mm_load_si128((const __m128i *)(T + Q4KR_D + 32 + 16 * h)));     \
                __m256i scb[2], mnb[2];                                                                             \
                kr_scales_mins8(T + Q4KR_SC + 32 * h, scb, mnb);                                                    \
                __m256 dd[4], dm[4];                                                                                \
                __m256i tq[4], tm[4];                                                                               \
                for (int j = 0; j < NA; j++) {                                                                      \
                    const __m256 dy = _mm256_set1_ps(y[j]->d);                                                      \
                    dd[j] = _mm256_mul_ps(dw, dy);                                                                  \
                    dm[j] = _mm256_mul_ps(mw, dy);                                                                  \
                    tq[j] = tm[j] = _mm256_setzero_si256();                                                         \
                }                                                                                                   \
                for (int p = 0; p < 4; p++) {                                                                       \
                    __m256i slo[4], shi[4];                                                                         \
                    for (int j = 0; j < NA; j++) slo[j] = shi[j] = _mm256_setzero_si256();                          \
                    for (int k = 0; k < 8; k++) {                                                                   \
                        const __m256i q =                                                                           \
                            _mm256_load_si256((const __m256i *)(T + (size_t)(p * 8 + k) * 64 + 32 * h));            \
                        const __m256i lo = _mm256_and_si256(q, m4);                                                 \
                        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);                           \
                        for (int j = 0; j < NA; j++) {                                                              \
                            const int8_t *yq = y[j]->qs + 64 * p + 4 * k;                                           \
                            if (VNNI) {                                                                             \
                                slo[j] = Q4KR_DP(slo[j], lo, ymm_bcast4(yq));                                       \
                                shi[j] = Q4KR_DP(shi[j], hi, ymm_bcast4(yq + 32));                                  \
                            } else {                                                                                \
                                slo[j] = _mm256_add_epi16(slo[j], _mm256_maddubs_epi16(lo, ymm_bcast4(yq)));        \
                                shi[j] = _mm256_add_epi16(shi[j], _mm256_maddubs_epi16(hi, ymm_bcast4(yq + 32)));   \
                            }                                                                                       \
                        }                                                                                           \
                    }                                                                                               \
                    const int t0 = (2 * p) & 3;                                                                     \
                    const __m256i sc0 = _mm256_shuffle_epi8(                                                        \
                        scb[p >> 1], _mm256_broadcastsi128_si256(VNNI ? q4kr_pick1(t0) : q4kr_pickd(t0)));          \
                    const __m256i sc1 = _mm256_shuffle_epi8(                                                        \
                        scb[p >> 1], _mm256_broadcastsi128_si256(VNNI ? q4kr_pick1(t0 + 1) : q4kr_pickd(t0 + 1)));  \
                    const __m256i mnp = _mm256_shuffle_epi8(mnb[p >> 1], _mm256_broadcastsi128_si256(q4kr_pick2(t0))); \
                    for (int j = 0; j < NA; j++) {                                                                  \
                        const __m256i sq =                                                                          \
                            VNNI ? _mm256_add_epi32(_mm256_mullo_epi32(slo[j], sc0), _mm256_mullo_epi32(shi[j], sc1)) \
                                 : _mm256_add_epi32(_mm256_madd_epi16(slo[j], sc0), _mm256_madd_epi16(shi[j], sc1));  \
                        const __m256i mq = _mm256_madd_epi16(mnp, _mm256_set1_epi32(B[j][p]));                      \
                        if (GEMV) {                                                                                 \
                            tq[j] = _mm256_add_epi32(tq[j], sq);                                                    \
                            tm[j] = _mm256_add_epi32(tm[j], mq);                                                    \
                        } else {                                                                                    \
                            acc[h][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sq), dd[j], acc[h][j]);                        \
                            accm[h][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mq), dm[j], accm[h][j]);                      \
                        }                                                                                           \
                    }                                                                                               \
                }                                                                                                   \
                for (int j = 0; GEMV && j < NA; j++) {                                                              \
                    acc[h][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(tq[j]), dd[j], acc[h][j]);                             \
                    accm[h][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(tm[j]), dm[j], accm[h][j]);                           \
                }                                                                                                   \
            }                                                                                                       \
        }                                                                                                           \
        for (int h = H0; h < H1; h++)                                                                               \
            for (int j = 0; j < NA; j++) {                                                                          \
                _mm256_storeu_ps(out + (size_t)j * o_stride + 8 * h, _mm256_sub_ps(acc[h][j], accm[h][j]));         \
            }                                                                                                       \
    }                                                                                                               \
    /* one pass over both halves for decode's 1 or 2 rows (their registers fit), else one per half */             \
    ATTR static inline __attribute__((always_inline)) void NAME##N(int64_t n, const char *G, const char *a,         \
                                                                 size_t a_stride, float *out, size_t o_stride,     \
                                                                 const int NA, const int PF) {                    \
        if (NA <= Q4KR_YMM_ONEPASS) {                                                                               \
            NAME##H(n, G, a, a_stride, out, o_stride, NA, PF, 0, 2);                                                \
        } else {                                                                                                    \
            NAME##H(n, G, a, a_stride, out, o_stride, NA, PF, 0, 1);                                                \
            NAME##H(n, G, a, a_stride, out, o_stride, NA, 0, 1, 2);                                                 \
        }                                                                                                           \
    }                                                                                                               \
    ATTR static void NAME(int64_t K, const void *grp, const void *a, size_t a_stride, const int32_t *ys,            \
                          size_t ys_stride, int n_a, float *out, size_t o_stride, int flags) {                      \
        (void)ys;                                                                                                   \
        (void)ys_stride;                                                                                            \
        const char *G = grp, *A = a;                                                                                \
        LLM_PREP_DISPATCH4(n_a, flags, NAME##N, K, G, A, a_stride, out, o_stride)                                   \
    }

/* per dword: byte t twice, each zero-extended to an int16 (a vpmaddwd
 * multiplier that scales both int16 of a dword by the same byte) */
static inline __attribute__((always_inline)) __m128i q4kr_pickd(int t) {
    const int z = (int)0x80008000;
    return _mm_set_epi32(z | ((12 + t) << 16) | (12 + t), z | ((8 + t) << 16) | (8 + t), z | ((4 + t) << 16) | (4 + t),
                         z | (t << 16) | t);
}

#define Q4KR_DP(acc, u, s) _mm256_dpbusd_avx_epi32((acc), (u), (s))
Q4KR_YMM(q4kr_dot_avx2, , 0)
Q4KR_YMM(q4kr_dot_avxvnni, __attribute__((target("avx2,fma,f16c,avxvnni"))), 1)
#undef Q4KR_DP

void llm__cpu_kernels_prep_kquant_x86(llm__cpu_kernels *k, unsigned cpu) {
    if (!(cpu & LLM__CPU_AVX512_VNNI)) {
        /* Q4_K in 256-bit registers (the only prepared K-quant there).
         * Prompts on AVX2 alone go through the rows8 pair's packed tiles
         * (unpack16), whose products beat this one's 4-row passes there;
         * with AVX-VNNI the 4-row passes win (see docs/PERFORMANCE.md). */
        if (k->rows8[LLM_DTYPE_Q4_K].dot == llm__q4_k_dot_repack_gemv) {
            const int vnni = (cpu & LLM__CPU_AVX_VNNI) != 0;
            k->prep[LLM_DTYPE_Q4_K] = (struct llm__prep_kernels){.group_bytes = q4kr_group_bytes,
                                                                  .repack = q4kr_repack,
                                                                  .dot = vnni ? q4kr_dot_avxvnni : q4kr_dot_avx2,
                                                                  .max_a = 4,
                                                                  .unpack_row = q4kr_unpack_row,
                                                                  .unpack16 = vnni ? NULL : q4kr_unpack16};
        }
        return;
    }
    if (k->rows8[LLM_DTYPE_Q4_K].dot == llm__q4_k_dot_repack_gemv) {
        llm__prep_q4_k_x86_512(&k->prep[LLM_DTYPE_Q4_K]);
    }
    if (k->tiled[LLM_DTYPE_Q6_K].dot == llm__q6_k_dot_tiled) llm__prep_q6_k_x86_512(&k->prep[LLM_DTYPE_Q6_K]);
    if ((cpu & LLM__CPU_GFNI) && k->tiled[LLM_DTYPE_Q5_K].dot == llm__q5_k_dot_tiled) {
        llm__prep_q5_k_x86_512(&k->prep[LLM_DTYPE_Q5_K]);
    }
    /* Q3_K's and Q2_K's pairs are registered by kernels/q3_k_x86_256.c / q2_k_x86_256.c (before this) */
    if (k->dot[LLM_DTYPE_Q3_K] && k->tiled[LLM_DTYPE_Q3_K].dot4 && k->tiled[LLM_DTYPE_Q3_K].pack8) {
        llm__prep_q3_k_x86_512(&k->prep[LLM_DTYPE_Q3_K]);
    }
    if (k->dot[LLM_DTYPE_Q2_K] && k->tiled[LLM_DTYPE_Q2_K].dot4 && k->tiled[LLM_DTYPE_Q2_K].pack8) {
        llm__prep_q2_k_x86_512(&k->prep[LLM_DTYPE_Q2_K]);
    }
}

#else /* no AVX2 build, or a compiler without the AVX-512 VNNI intrinsics: no prepared K-quants */

void llm__cpu_kernels_prep_kquant_x86(llm__cpu_kernels *k, unsigned cpu) {
    (void)k;
    (void)cpu;
}

#endif
