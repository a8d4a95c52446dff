/*
 * test_kv_to_float.c -- the AVX2 rows-to-floats kernels of the KV cache types
 * (cpu/kernels/tofloat_x86_256.c: flash attention's V rows) against the
 * reference dequantizers (dtype/dequant.c, ggml-base's arithmetic), bit for
 * bit, on random blocks and on extreme ones (every quant at its minimum and
 * maximum, every fifth bit set and clear, negative, subnormal, infinite and
 * zero scales and minimums).
 */
#include <criterion/criterion.h>
#include <math.h>
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
    llm__cpu_kernels_x86(&v, llm__cpu_features());
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
            if (t == LLM_DTYPE_F16) {
                /* F16C quiets a signaling NaN (sets the quiet bit), as
                 * ggml's F16C conversion does; the reference keeps the
                 * payload as is. Same sign and payload otherwise. */
                for (int i = 0; i < N; i++) {
                    uint32_t bs, bv;
                    memcpy(&bs, &ys[i], 4);
                    memcpy(&bv, &yv[i], 4);
                    if ((bs & 0x7F800000u) == 0x7F800000u && (bs & 0x007FFFFFu) != 0) {
                        bs |= 0x00400000u;
                        memcpy(&ys[i], &bs, 4);
                    }
                }
            }
            cr_assert_eq(memcmp(ys, yv, N * sizeof(float)), 0, "%s pattern %d: AVX2 bits differ from the reference",
                         llm_dtype_name(t), pat);
        }
        free(row);
        free(ys);
        free(yv);
    }
}

/* The AVX2 expf (kernels/expf_x86_256.c) against the C library's expf, bit for
 * bit, on every 257th float of [-110, 90] (about 8.7 million values) and the
 * special values: flash attention takes its exponentials from libm, as
 * llama.cpp does. The backend installs the AVX2 form only after a smaller
 * check of the same kind (llm__cpu_expf_matches_libm), tested here too. */
Test(kernels, expf_n_equals_libm) {
    llm__expf_n_fn f = llm__cpu_expf_n_avx2_get();
    if (!llm__cpu_has_avx2() || !f) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C or the AVX2 kernels are not built");
    }
    cr_assert(llm__cpu_expf_matches_libm(f), "the backend's own check refuses the AVX2 expf");
    enum { B = 4096 };
    float *x = malloc(B * sizeof(float)), *y = malloc(B * sizeof(float));
    /* negative floats: bits 0x80000000 (-0) .. 0xC2DC0000 (-110); positive: 0 .. 0x42B40000 (90) */
    const struct { uint32_t lo, hi; } ranges[2] = {{0x80000000u, 0xC2DC0000u}, {0x00000000u, 0x42B40000u}};
    int64_t checked = 0, bad = 0;
    for (int r = 0; r < 2; r++) {
        for (uint64_t b = ranges[r].lo; b <= ranges[r].hi;) {
            int n = 0;
            for (; n < B && b <= ranges[r].hi; n++, b += 257) {
                const uint32_t u = (uint32_t)b;
                memcpy(&x[n], &u, 4);
            }
            f(y, x, n);
            for (int i = 0; i < n; i++) {
                const float e = expf(x[i]);
                if (memcmp(&e, &y[i], 4) != 0) {
                    if (bad++ < 5) cr_log_error("expf(%a): libm %a, AVX2 %a", (double)x[i], (double)e, (double)y[i]);
                }
            }
            checked += n;
        }
    }
    const float sp[] = {-INFINITY, INFINITY, NAN, -NAN, 0.0f, -0.0f, -103.97f, -103.5f, -103.28f, -103.0f, -88.0f,
                        88.0f, 88.72f, 88.73f, 1e-30f, -1e-30f, 0x1p-149f};
    const int ns = (int)(sizeof sp / sizeof sp[0]);
    f(y, sp, ns);
    for (int i = 0; i < ns; i++) {
        const float e = expf(sp[i]);
        if (memcmp(&e, &y[i], 4) != 0 && !(isnan(e) && isnan(y[i]))) {
            bad++;
            cr_log_error("expf(%a): libm %a, AVX2 %a", (double)sp[i], (double)e, (double)y[i]);
        }
    }
    cr_assert_eq(bad, 0, "%lld of %lld values differ from libm", (long long)bad, (long long)checked);
    cr_assert_gt(checked, 8000000);
    free(x);
    free(y);
}
