/*
 * test_kv_to_float.c -- the AVX2 rows-to-floats kernels of the KV cache types
 * (cpu/kernels_avx2_tofloat.c: flash attention's V rows) against the
 * reference dequantizers (dtype/dequant.c, ggml-base's arithmetic), bit for
 * bit, on random blocks and on extreme ones (every quant at its minimum and
 * maximum, every fifth bit set and clear, negative, subnormal, infinite and
 * zero scales and minimums).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/kernels.h"
#include "dtype/blocks.h"

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}

/* Header halves a block may carry: ordinary, negative, subnormal, zero,
 * infinite, largest finite. */
static const uint16_t k_halves[] = {0x2E66, 0xB266, 0x0001, 0x0000, 0x7C00, 0x7BFF, 0x8000, 0x3C00};

Test(kernels, kv_to_float_simd_equals_reference) {
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C: SIMD kernels not selectable");
    }
    llm__cpu_kernels s, v;
    llm__cpu_kernels_scalar(&s);
    llm__cpu_kernels_scalar(&v);
    llm__cpu_kernels_avx2(&v);
    const llm_dtype types[] = {LLM_DTYPE_F32,  LLM_DTYPE_F16,  LLM_DTYPE_BF16, LLM_DTYPE_Q8_0,
                               LLM_DTYPE_Q4_0, LLM_DTYPE_Q4_1, LLM_DTYPE_Q5_0, LLM_DTYPE_Q5_1};
    enum { N = 256 }; /* 8 blocks of 32 */
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const llm_dtype t = types[ti];
        cr_assert_not_null(s.to_float[t], "%s: no reference to_float", llm_dtype_name(t));
        cr_assert_not_null(v.to_float[t], "%s: no to_float", llm_dtype_name(t));
        size_t rb;
        cr_assert_eq(llm_dtype_row_size(t, N, &rb), LLM_OK);
        const size_t bb = llm_dtype_block_bytes(t), nb = rb / bb;
        uint8_t *row = malloc(rb);
        float *ys = malloc(N * sizeof(float)), *yv = malloc(N * sizeof(float));
        for (int pat = 0; pat < 40; pat++) {
            for (size_t i = 0; i < rb; i++) {
                /* patterns 0, 1: all bits clear / set; then random */
                row[i] = pat == 0 ? 0x00 : pat == 1 ? 0xFF : (uint8_t)rnd();
            }
            if (t != LLM_DTYPE_F32 && t != LLM_DTYPE_F16 && t != LLM_DTYPE_BF16) {
                for (size_t b = 0; b < nb; b++) { /* d (and m) from the list of halves */
                    const uint16_t d = k_halves[(b + (size_t)pat) % 8], m = k_halves[(b * 3 + (size_t)pat) % 8];
                    memcpy(row + b * bb, &d, 2);
                    if (t == LLM_DTYPE_Q4_1 || t == LLM_DTYPE_Q5_1) memcpy(row + b * bb + 2, &m, 2);
                }
            }
            s.to_float[t](row, ys, N);
            v.to_float[t](row, yv, N);
            cr_assert_eq(memcmp(ys, yv, N * sizeof(float)), 0, "%s pattern %d: AVX2 bits differ from the reference",
                         llm_dtype_name(t), pat);
        }
        free(row);
        free(ys);
        free(yv);
    }
}
