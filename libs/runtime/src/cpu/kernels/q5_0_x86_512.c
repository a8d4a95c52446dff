/*
 * cpu/kernels/q5_0_x86_512.c -- the Q5_0 packed product (kernels.h tiled pair,
 * dot8x4_packed) on q5_x86_256.c's tiles with AVX-512 VNNI (compiled with
 * it: sources.cmake): two weight rows per 512-bit register and their block
 * decoded once for all activation rows; the tile layout and the order (the
 * bits of dot4) are described at q5_0_pack8 in q5_x86_256.c.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVX512VNNI__) && \
    defined(__GNUC__) && (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)

#include <immintrin.h>

#include "cpu/kernels/x86_256.h"
#include "cpu/kernels/x86_512.h"
#include "dtype/blocks.h"

void llm__q5_0_dot8x4_packed_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride,
                                               float *out, size_t o_stride) {
    __m512 acc[4][4]; /* [row pair p][activation row j]: lanes 0..7 row 2p, 8..15 row 2p + 1 */
    for (int p = 0; p < 4; p++)
        for (int j = 0; j < 4; j++) acc[p][j] = _mm512_setzero_ps();
    const __m512i sixteen = _mm512_set1_epi8(16);
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const char *P = (const char *)pk + (size_t)b * LLM_Q50_PK;
        const __m512 dw = _mm512_castps256_ps512(_mm256_load_ps((const float *)(P + 256)));
        __m512 dp[4]; /* [d(2p) x 8 | d(2p + 1) x 8] */
        for (int p = 0; p < 4; p++) {
            dp[p] = _mm512_permutexvar_ps(_mm512_set_epi32(2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1,
                                                           2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p, 2 * p, 2 * p,
                                                           2 * p, 2 * p, 2 * p, 2 * p, 2 * p),
                                          dw);
        }
        for (int j = 0; j < 4; j++) {
            const llm_block_q8_0 *y = (const llm_block_q8_0 *)((const char *)a + (size_t)j * a_stride) + b;
            const __m512i yv = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)y->qs));
            const __m512i m16 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), sixteen, yv);
            const __m512 dy = _mm512_set1_ps(h2f(y->d));
            for (int p = 0; p < 4; p++) {
                const __m512i q = _mm512_loadu_si512((const void *)(P + 64 * p));
                const __m512i s = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), q, yv), m16);
                acc[p][j] = _mm512_fmadd_ps(_mm512_mul_ps(dp[p], dy), _mm512_cvtepi32_ps(s), acc[p][j]);
            }
        }
    }
    for (int j = 0; j < 4; j++)
        for (int p = 0; p < 4; p++) {
            out[(size_t)j * o_stride + 2 * p] = hsum8(_mm512_castps512_ps256(acc[p][j]));
            out[(size_t)j * o_stride + 2 * p + 1] = hsum8(_mm512_extractf32x8_ps(acc[p][j], 1));
        }
}



#else /* not built with AVX-512 VNNI: never installed */

void llm__q5_0_dot8x4_packed_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                                     size_t o_stride) {
    (void)n, (void)pk, (void)a, (void)a_stride, (void)out, (void)o_stride;
}

#endif
