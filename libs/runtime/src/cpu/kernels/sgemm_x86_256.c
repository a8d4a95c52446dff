/*
 * cpu/kernels/sgemm_x86_256.c -- F16 x F16 and BF16 x BF16 dot products summed in
 * the order of llama.cpp's llamafile sgemm (tinyBLAS), registered as the
 * sgemm pairs of the registry (kernels.h).
 *
 * For F16 / BF16 weights llama.cpp converts the activations to the weight's
 * type and, when a matmul has 2 or more activation rows (and K % 8 == 0,
 * M % 4 == 0), hands it to tinyBLAS instead of its vec_dot. tinyBLAS gives
 * each output one 8-lane float accumulator: element i goes into lane i % 8 by
 * FMA in ascending i (both halves widened to float exactly), and the result is
 * the lanes' horizontal sum (high 128 bits + low, then the upper pair onto the
 * lower, then the two left). Its vec_dot, used for lone rows, keeps four
 * accumulators instead, so the two orders differ in the last bits.
 *
 * dot4: the same per-output chain for four activation rows with each weight
 * vector loaded once; out[j] equals dot of row j bit for bit.
 *
 * Compiled with -mavx2 -mfma -mf16c (sources.cmake), installed by
 * llm__cpu_kernels_x86() once the CPU has been checked.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>

#include "cpu/kernels/x86_256.h"

/* The matmul only picks these when n % 8 == 0 (kernels.h, sgemm). */
#define SGEMM_DOTS(NAME, LD)                                                                          \
    static float NAME(int64_t n, const void *w, const void *a) {                                      \
        const uint16_t *x = w, *y = a;                                                                \
        __m256 acc = _mm256_setzero_ps();                                                             \
        for (int64_t i = 0; i + 8 <= n; i += 8) {                                                     \
            acc = _mm256_fmadd_ps(LD(x + i), LD(y + i), acc);                                         \
        }                                                                                             \
        return hsum8(acc);                                                                            \
    }                                                                                                 \
    static void NAME##4(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {     \
        const uint16_t *x = w;                                                                        \
        const uint16_t *y0 = a, *y1 = (const uint16_t *)((const char *)a + a_stride);                 \
        const uint16_t *y2 = (const uint16_t *)((const char *)a + 2 * a_stride);                      \
        const uint16_t *y3 = (const uint16_t *)((const char *)a + 3 * a_stride);                      \
        __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps();                                    \
        __m256 c2 = _mm256_setzero_ps(), c3 = _mm256_setzero_ps();                                    \
        for (int64_t i = 0; i + 8 <= n; i += 8) {                                                     \
            const __m256 wv = LD(x + i);                                                              \
            c0 = _mm256_fmadd_ps(wv, LD(y0 + i), c0);                                                 \
            c1 = _mm256_fmadd_ps(wv, LD(y1 + i), c1);                                                 \
            c2 = _mm256_fmadd_ps(wv, LD(y2 + i), c2);                                                 \
            c3 = _mm256_fmadd_ps(wv, LD(y3 + i), c3);                                                 \
        }                                                                                             \
        out[0] = hsum8(c0);                                                                           \
        out[1] = hsum8(c1);                                                                           \
        out[2] = hsum8(c2);                                                                           \
        out[3] = hsum8(c3);                                                                           \
    }

SGEMM_DOTS(dot_f16_sgemm, load_h8)
SGEMM_DOTS(dot_bf16_sgemm, load_bf8)

/* BF16 x BF16 for lone activation rows, in the order of llama.cpp's AVX2
 * ggml_vec_dot_bf16: four 8-lane accumulators over chunks of 32, each step a
 * separate multiply then add (not an FMA, unlike its F16 / F32 dots), folded
 * as (c0 + c2) + (c1 + c3), then the 8 lanes as hsum8; that float is added
 * to a double, then the n % 32 tail element by element (float products). */
static float dot_bf16_vec(int64_t n, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps();
    __m256 c2 = _mm256_setzero_ps(), c3 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        c0 = _mm256_add_ps(_mm256_mul_ps(load_bf8(x + i), load_bf8(y + i)), c0);
        c1 = _mm256_add_ps(_mm256_mul_ps(load_bf8(x + i + 8), load_bf8(y + i + 8)), c1);
        c2 = _mm256_add_ps(_mm256_mul_ps(load_bf8(x + i + 16), load_bf8(y + i + 16)), c2);
        c3 = _mm256_add_ps(_mm256_mul_ps(load_bf8(x + i + 24), load_bf8(y + i + 24)), c3);
    }
    double s = (double)hsum8(_mm256_add_ps(_mm256_add_ps(c0, c2), _mm256_add_ps(c1, c3)));
    for (; i < n; i++) {
        union { uint32_t u; float f; } wx = {(uint32_t)x[i] << 16}, ay = {(uint32_t)y[i] << 16};
        const float p = wx.f * ay.f;
        s += (double)p;
    }
    return (float)s;
}

void llm__cpu_kernels_sgemm_x86(llm__cpu_kernels *k) {
    k->sgemm[LLM_DTYPE_F16].dot = dot_f16_sgemm;
    k->sgemm[LLM_DTYPE_F16].dot4 = dot_f16_sgemm4;
    k->sgemm[LLM_DTYPE_BF16].dot = dot_bf16_sgemm;
    k->sgemm[LLM_DTYPE_BF16].dot4 = dot_bf16_sgemm4;
    /* Replaces kernels/x86_256.c's vdot_bf16, which sums by FMA. */
    k->dot[LLM_DTYPE_BF16] = dot_bf16_vec;
}

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

void llm__cpu_kernels_sgemm_x86(llm__cpu_kernels *k) { (void)k; }

#endif
