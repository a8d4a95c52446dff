/*
 * test_kernels.c -- the CPU kernel registry: each SIMD kernel against its
 * scalar reference on the same inputs, over random sizes with odd tails; the
 * scalar quantized dots against a float dot of dequantized data.
 *
 * Tolerances (why):
 *  - quantized dot, SIMD vs scalar: both sum the same exact integer block sums;
 *    only the order of the float per-block multiply-adds differs, so the
 *    difference is a few float ulps of sum_b |d_b * sumi_b|: 1e-5 of that.
 *  - scalar quantized dot vs double dot of dequantized values (same quantized
 *    activations): identical real numbers, float rounding only: 1e-5 relative.
 *  - f16/f32 dots: same products in a different order: 1e-5 of sum |x*y|.
 *  - attention value sums (probabilities summing to <= 2, |v| <= 1): 1e-5 absolute.
 *  - rms_norm: same double sum of squares in a different order: 1e-6 relative.
 *  - activation quantizers: AVX2 rounds half to even with id = 127/amax, the
 *    reference rounds half away from zero with id = 1/d, so a quant may differ
 *    by 1; scales must agree to 1 half-float ulp.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/kernels.h"
#include "dtype/blocks.h"

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}
static float frand(void) { return (float)rnd() / 4294967296.0f * 2.0f - 1.0f; }

/* Random but valid blocks of any weight type: random quant bits, small positive scales. */
static void random_weights(llm_dtype t, void *dst, int64_t n) {
    size_t bytes;
    cr_assert_eq(llm_dtype_row_size(t, (uint64_t)n, &bytes), LLM_OK);
    float *tmp = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) tmp[i] = frand();
    if (llm_dtype_can_quantize(t) && t != LLM_DTYPE_Q8_K && t != LLM_DTYPE_Q8_1) {
        cr_assert_eq(llm_dtype_quantize_row(t, tmp, dst, (size_t)n), LLM_OK);
        free(tmp);
        return;
    }
    free(tmp);
    uint8_t *b = dst;
    for (size_t i = 0; i < bytes; i++) b[i] = (uint8_t)rnd();
    size_t bb = llm_dtype_block_bytes(t);
    for (size_t off = 0; off < bytes; off += bb) {
        uint16_t d = llm_fp32_to_fp16(0.001f + 0.01f * (frand() + 1.0f));
        uint16_t m = llm_fp32_to_fp16(0.01f * frand());
        switch (t) {
        case LLM_DTYPE_Q5_0: memcpy(b + off, &d, 2); break;
        case LLM_DTYPE_Q5_1: memcpy(b + off, &d, 2); memcpy(b + off + 2, &m, 2); break;
        case LLM_DTYPE_Q4_K:
        case LLM_DTYPE_Q5_K: {
            uint16_t dm = llm_fp32_to_fp16(0.001f * (frand() + 1.0f));
            memcpy(b + off, &d, 2);
            memcpy(b + off + 2, &dm, 2);
            break;
        }
        case LLM_DTYPE_Q6_K: memcpy(b + off + 208, &d, 2); break;
        default: cr_assert_fail("no generator for %s", llm_dtype_name(t));
        }
    }
}

static const llm_dtype g_wtypes[] = {LLM_DTYPE_F32,  LLM_DTYPE_F16,  LLM_DTYPE_BF16, LLM_DTYPE_Q4_0,
                                     LLM_DTYPE_Q4_1, LLM_DTYPE_Q5_0, LLM_DTYPE_Q5_1, LLM_DTYPE_Q8_0,
                                     LLM_DTYPE_Q4_K, LLM_DTYPE_Q5_K, LLM_DTYPE_Q6_K};

/* The scalar quantized dot equals the float dot of the dequantized operands. */
Test(kernels, scalar_dot_matches_dequantized_reference) {
    llm__cpu_kernels k;
    llm__cpu_kernels_scalar(&k);
    for (size_t ti = 0; ti < sizeof(g_wtypes) / sizeof(g_wtypes[0]); ti++) {
        llm_dtype wt = g_wtypes[ti], at = k.act_type[wt];
        int64_t blk = (int64_t)llm_dtype_block_size(wt);
        blk = blk < 32 ? 32 : blk;
        for (int rep = 0; rep < 6; rep++) {
            int64_t n = blk * (1 + rnd() % 9);
            size_t wb, ab;
            llm_dtype_row_size(wt, (uint64_t)n, &wb);
            llm_dtype_row_size(at, (uint64_t)n, &ab);
            void *w = malloc(wb), *a = malloc(ab);
            float *x = malloc(sizeof(float) * (size_t)n), *wf = malloc(sizeof(float) * (size_t)n);
            float *af = malloc(sizeof(float) * (size_t)n);
            random_weights(wt, w, n);
            for (int64_t i = 0; i < n; i++) x[i] = frand() * 3.0f;
            k.quantize[at](x, a, n);
            cr_assert_eq(llm_dtype_dequantize_row(wt, w, wf, (size_t)n), LLM_OK);
            cr_assert_eq(llm_dtype_dequantize_row(at, a, af, (size_t)n), LLM_OK);
            double ref = 0, mag = 0;
            for (int64_t i = 0; i < n; i++) {
                ref += (double)wf[i] * af[i];
                mag += fabs((double)wf[i] * af[i]);
            }
            float got = k.dot[wt](n, w, a);
            /* Q8_1's s is stored as a half, so Q4_1/Q5_1 carry its rounding (2^-11 relative). */
            double tol = 1e-5 * mag + 1e-6;
            if (at == LLM_DTYPE_Q8_1) tol += 1e-3 * mag;
            cr_assert(fabs(got - ref) <= tol, "%s n=%lld: dot %g vs reference %g (tol %g)",
                      llm_dtype_name(wt), (long long)n, (double)got, ref, tol);
            free(w); free(a); free(x); free(wf); free(af);
        }
    }
}

Test(kernels, simd_dots_match_scalar) {
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C: SIMD kernels not selectable");
    }
    llm__cpu_kernels s, v;
    llm__cpu_kernels_scalar(&s);
    llm__cpu_kernels_scalar(&v);
    llm__cpu_kernels_avx2(&v);
    int n_checked = 0;
    for (size_t ti = 0; ti < sizeof(g_wtypes) / sizeof(g_wtypes[0]); ti++) {
        llm_dtype wt = g_wtypes[ti], at = s.act_type[wt];
        if (v.dot[wt] == s.dot[wt]) continue; /* no SIMD variant for this type */
        n_checked++;
        int64_t blk = (int64_t)llm_dtype_block_size(wt);
        for (int rep = 0; rep < 50; rep++) {
            /* Float types: any length, so the vector tails are exercised. */
            int64_t n = blk == 1 ? 1 + rnd() % 300 : blk * (1 + rnd() % 40);
            size_t wb, ab;
            llm_dtype_row_size(wt, (uint64_t)n, &wb);
            llm_dtype_row_size(at, (uint64_t)n, &ab);
            void *w = malloc(wb), *a = malloc(ab);
            float *x = malloc(sizeof(float) * (size_t)n), *wf = malloc(sizeof(float) * (size_t)n);
            float *af = malloc(sizeof(float) * (size_t)n);
            random_weights(wt, w, n);
            for (int64_t i = 0; i < n; i++) x[i] = frand() * 5.0f;
            s.quantize[at](x, a, n); /* same activation bytes for both kernels */
            llm_dtype_dequantize_row(wt, w, wf, (size_t)n);
            llm_dtype_dequantize_row(at, a, af, (size_t)n);
            double mag = 0;
            for (int64_t i = 0; i < n; i++) mag += fabs((double)wf[i] * af[i]);
            float rs = s.dot[wt](n, w, a), rv = v.dot[wt](n, w, a);
            if (v.dot4[wt]) {
                /* The 1x4 variant must give the single dot's bits for each row. */
                uint8_t *a4 = malloc(4 * ab);
                for (int j = 0; j < 4; j++) {
                    for (int64_t i = 0; i < n; i++) x[i] = frand() * 5.0f;
                    v.quantize[at](x, a4 + j * ab, n);
                }
                float r4[4];
                v.dot4[wt](n, w, a4, ab, r4);
                for (int j = 0; j < 4; j++) {
                    float r1 = v.dot[wt](n, w, a4 + j * ab);
                    cr_assert_eq(memcmp(&r1, &r4[j], sizeof(float)), 0, "%s dot4 row %d: %.9g vs %.9g",
                                 llm_dtype_name(wt), j, (double)r4[j], (double)r1);
                }
                free(a4);
            }
            double tol = 1e-5 * mag + 1e-6;
            if (at == LLM_DTYPE_Q8_1) tol += 1e-5 * mag; /* m*s term added per block */
            cr_assert(fabs((double)rs - rv) <= tol, "%s n=%lld: scalar %.9g simd %.9g (tol %g)",
                      llm_dtype_name(wt), (long long)n, (double)rs, (double)rv, tol);
            free(w); free(a); free(x); free(wf); free(af);
        }
    }
    /* At least the hot pairs the brief names must have SIMD variants. */
    cr_assert(v.dot[LLM_DTYPE_Q4_1] != s.dot[LLM_DTYPE_Q4_1]);
    cr_assert(v.dot[LLM_DTYPE_Q8_0] != s.dot[LLM_DTYPE_Q8_0]);
    cr_assert_geq(n_checked, 3);
}

Test(kernels, simd_quantizers_match_scalar) {
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C");
    }
    llm__cpu_kernels s, v;
    llm__cpu_kernels_scalar(&s);
    llm__cpu_kernels_scalar(&v);
    llm__cpu_kernels_avx2(&v);
    const llm_dtype types[] = {LLM_DTYPE_Q8_0, LLM_DTYPE_Q8_1};
    for (int ti = 0; ti < 2; ti++) {
        llm_dtype t = types[ti];
        for (int rep = 0; rep < 40; rep++) {
            int64_t n = 32 * (1 + rnd() % 30);
            float *x = malloc(sizeof(float) * (size_t)n);
            for (int64_t i = 0; i < n; i++) x[i] = frand() * (rep % 7 == 0 ? 0.0f : 4.0f);
            size_t bytes;
            llm_dtype_row_size(t, (uint64_t)n, &bytes);
            uint8_t *a = malloc(bytes), *b = malloc(bytes);
            s.quantize[t](x, a, n);
            v.quantize[t](x, b, n);
            size_t bb = llm_dtype_block_bytes(t), hdr = t == LLM_DTYPE_Q8_0 ? 2 : 4;
            for (size_t off = 0; off < bytes; off += bb) {
                uint16_t da, db;
                memcpy(&da, a + off, 2);
                memcpy(&db, b + off, 2);
                cr_assert(abs((int)da - (int)db) <= 1, "%s: scales differ %04x %04x",
                          llm_dtype_name(t), da, db);
                for (size_t j = hdr; j < bb; j++) {
                    cr_assert(abs((int)(int8_t)a[off + j] - (int)(int8_t)b[off + j]) <= 1,
                              "%s: quant differs by more than 1", llm_dtype_name(t));
                }
                if (t == LLM_DTYPE_Q8_1) {
                    /* s must be d * sum(q) of the kernel's own quants. */
                    int32_t sum = 0;
                    for (size_t j = 4; j < bb; j++) sum += (int8_t)b[off + j];
                    uint16_t sh;
                    memcpy(&sh, b + off + 2, 2);
                    float want = llm_fp16_to_fp32(db) * (float)sum;
                    cr_assert(fabsf(llm_fp16_to_fp32(sh) - want) <= 1e-3f * fabsf(want) + 1e-6f);
                }
            }
            free(x); free(a); free(b);
        }
    }
}

Test(kernels, simd_float_helpers_match_scalar) {
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C");
    }
    llm__cpu_kernels s, v;
    llm__cpu_kernels_scalar(&s);
    llm__cpu_kernels_scalar(&v);
    llm__cpu_kernels_avx2(&v);
    for (int rep = 0; rep < 200; rep++) {
        int64_t n = 1 + rnd() % 700;
        float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
        float *w = malloc(sizeof(float) * (size_t)n);
        uint16_t *hx = malloc(2 * (size_t)n), *hy = malloc(2 * (size_t)n);
        float *o1 = malloc(sizeof(float) * (size_t)n), *o2 = malloc(sizeof(float) * (size_t)n);
        double mag = 0, magh = 0;
        for (int64_t i = 0; i < n; i++) {
            x[i] = frand() * 3;
            y[i] = frand() * 3;
            w[i] = frand();
            hx[i] = llm_fp32_to_fp16(x[i]);
            hy[i] = llm_fp32_to_fp16(y[i]);
            mag += fabs((double)x[i] * y[i]);
            magh += fabs((double)llm_fp16_to_fp32(hx[i]) * llm_fp16_to_fp32(hy[i]));
        }
        cr_assert(fabs((double)s.dot_f32(n, x, y) - v.dot_f32(n, x, y)) <= 1e-5 * mag + 1e-7);
        cr_assert(fabs((double)s.dot_f16(n, hx, hy) - v.dot_f16(n, hx, hy)) <= 1e-5 * magh + 1e-7);
        /* Weighted sum of value rows through a scrambled block table, with
         * n_all both equal to and beyond len (the tail then goes to double). */
        {
            const int64_t hd = 8 * (1 + rnd() % 12) + (rep % 3 == 0 ? 3 : 0), bs = 4, len = 1 + rnd() % 90;
            const int64_t nblk = (len + bs - 1) / bs;
            int32_t table[32];
            for (int64_t b = 0; b < nblk; b++) table[b] = (int32_t)((b * 5 + 1) % nblk);
            size_t offs[128];
            for (int64_t t = 0; t < nblk * bs; t++) offs[t] = (size_t)((table[t / bs] * bs + t % bs) * 2 * hd);
            uint16_t *vh = malloc(2 * (size_t)(nblk * bs * 2 * hd));
            float *vf = malloc(4 * (size_t)(nblk * bs * 2 * hd));
            for (int64_t i = 0; i < nblk * bs * 2 * hd; i++) {
                vf[i] = frand();
                vh[i] = llm_fp32_to_fp16(vf[i]);
            }
            float *pr = malloc(4 * (size_t)len), *scr = malloc(4 * (size_t)(32 * hd));
            float *r1 = malloc(4 * (size_t)hd), *r2 = malloc(4 * (size_t)hd);
            for (int64_t t = 0; t < len; t++) pr[t] = (frand() + 1.0f) / (float)len;
            for (int f16 = 0; f16 < 2; f16++) {
                llm__kv_rows kr = {f16 ? (const void *)vh : (const void *)vf, offs, (size_t)hd, f16};
                int64_t n_alls[2] = {len, len + (int64_t)(rnd() % 70)};
                for (int a = 0; a < 2; a++) {
                    s.attn_wsum(&kr, len, n_alls[a], hd, pr, r1, scr);
                    v.attn_wsum(&kr, len, n_alls[a], hd, pr, r2, scr);
                    for (int64_t d = 0; d < hd; d++) {
                        cr_assert(fabsf(r1[d] - r2[d]) <= 1e-5f, "wsum hd=%lld len=%lld d=%lld: %g vs %g",
                                  (long long)hd, (long long)len, (long long)d, (double)r1[d], (double)r2[d]);
                    }
                }
            }
            free(vh); free(vf); free(pr); free(scr); free(r1); free(r2);
        }
        /* F16 rounding (q, probabilities, cache writes): exact, both round to nearest even. */
        {
            float *r1 = malloc(sizeof(float) * (size_t)n), *r2 = malloc(sizeof(float) * (size_t)n);
            uint16_t *h1 = malloc(2 * (size_t)n), *h2 = malloc(2 * (size_t)n);
            for (int64_t i = 0; i < n; i++) r1[i] = r2[i] = x[i] * (rep % 2 ? 1e-4f : 70.0f);
            s.round_f16(n, r1);
            v.round_f16(n, r2);
            s.quantize[LLM_DTYPE_F16](x, h1, n);
            v.quantize[LLM_DTYPE_F16](x, h2, n);
            cr_assert_eq(memcmp(r1, r2, sizeof(float) * (size_t)n), 0, "round_f16 differs");
            cr_assert_eq(memcmp(h1, h2, 2 * (size_t)n), 0, "f16 conversion differs");
            free(r1); free(r2); free(h1); free(h2);
        }
        /* rms_norm with and without weight. */
        const float *wts[2] = {w, NULL};
        for (int k = 0; k < 2; k++) {
            s.rms_norm_row(o1, x, wts[k], n, 1e-5f);
            v.rms_norm_row(o2, x, wts[k], n, 1e-5f);
            for (int64_t i = 0; i < n; i++) {
                cr_assert(fabsf(o1[i] - o2[i]) <= 1e-6f * fabsf(o1[i]) + 1e-7f,
                          "rms_norm n=%lld i=%lld: %g vs %g", (long long)n, (long long)i,
                          (double)o1[i], (double)o2[i]);
            }
        }
        free(x); free(y); free(w); free(hx); free(hy); free(o1); free(o2);
    }
}

/* ------------------------------------------------- Q5_0, Q5_1, Q5_K dots -- */

/* Results of llama.cpp's own AVX2 kernels (ggml_vec_dot_q5_0_q8_0,
 * ggml_vec_dot_q5_1_q8_1, ggml_vec_dot_q5_K_q8_K in llama-cpp-python 0.3.36's
 * libggml-cpu.so) on the bytes q5g_row() builds; made by
 * scripts/golden/kernels/q5_dots_llamacpp.py, which builds the same bytes.
 * Our AVX2 kernels sum in ggml's order, so they must give these bits exactly;
 * the scalar reference sums whole blocks first and must be within 1e-5 of the
 * magnitude (sum of |terms|). */
static const struct {
    llm_dtype t;
    int n;
    uint32_t bits;
} g_q5_golden[] = {
    {LLM_DTYPE_Q5_0, 32, 0xC2C667D0u}, /* -99.2027588 */
    {LLM_DTYPE_Q5_0, 64, 0xC4476C7Au}, /* -797.694946 */
    {LLM_DTYPE_Q5_0, 96, 0x44982613u}, /* 1217.18982 */
    {LLM_DTYPE_Q5_0, 352, 0x4377BCE7u}, /* 247.7379 */
    {LLM_DTYPE_Q5_0, 2048, 0xC40427A8u}, /* -528.619629 */
    {LLM_DTYPE_Q5_0, 4096, 0xC59C3094u}, /* -4998.07227 */
    {LLM_DTYPE_Q5_1, 32, 0xBF95DE93u}, /* -1.17085493 */
    {LLM_DTYPE_Q5_1, 64, 0x41A31C87u}, /* 20.3889294 */
    {LLM_DTYPE_Q5_1, 96, 0xC5893975u}, /* -4391.18213 */
    {LLM_DTYPE_Q5_1, 352, 0x44946812u}, /* 1187.2522 */
    {LLM_DTYPE_Q5_1, 2048, 0xC570870Du}, /* -3848.44067 */
    {LLM_DTYPE_Q5_1, 4096, 0xC607577Bu}, /* -8661.87012 */
    {LLM_DTYPE_Q5_K, 256, 0x445DCC62u}, /* 887.193481 */
    {LLM_DTYPE_Q5_K, 512, 0xC27CBA0Du}, /* -63.1816902 */
    {LLM_DTYPE_Q5_K, 768, 0xC53B9FE5u}, /* -3001.99341 */
    {LLM_DTYPE_Q5_K, 1280, 0xC56A013Fu}, /* -3744.07788 */
    {LLM_DTYPE_Q5_K, 2048, 0xC4AEAF2Eu}, /* -1397.47437 */
    {LLM_DTYPE_Q5_K, 2816, 0xC5B56F2Cu}, /* -5805.89648 */
    {LLM_DTYPE_Q5_K, 3328, 0x44819C88u}, /* 1036.8916 */
    {LLM_DTYPE_Q5_K, 4096, 0x45F9E850u}, /* 7997.03906 */
    {LLM_DTYPE_Q5_K, 5120, 0xC512F952u}, /* -2351.58252 */
    {LLM_DTYPE_Q5_K, 6144, 0xC6051EE6u}, /* -8519.72461 */
};

/* xorshift32, step for step as Gen in the golden script; case i starts from
 * seed(i) there. */
static uint32_t q5g_next(uint32_t *s) {
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}
static uint8_t q5g_byte(uint32_t *s) { return (uint8_t)(q5g_next(s) >> 24); }
/* A half 2^-7 .. 2^-1 with random mantissa (and sign if asked). */
static uint16_t q5g_half(uint32_t *s, int sign) {
    uint32_t r = q5g_next(s);
    uint32_t h = ((8 + r % 7) << 10) | ((r >> 8) & 0x3FF);
    if (sign && ((r >> 20) & 1)) h |= 0x8000;
    return (uint16_t)h;
}
static int8_t q5g_q8(uint32_t *s) {
    int v = (int8_t)q5g_byte(s);
    return (int8_t)(v == -128 ? -127 : v); /* Q8_0/Q8_1 quantizers never give -128 */
}

/* Weight row (w) and activation row (a) of case i, as the script builds them. */
static void q5g_row(int i, llm_dtype t, int n, uint8_t *w, uint8_t *a) {
    uint32_t s = 0x9E3779B9u ^ (uint32_t)((uint32_t)i * 0x85EBCA6Bu);
    if (!s) s = 1;
    if (t == LLM_DTYPE_Q5_0 || t == LLM_DTYPE_Q5_1) {
        const size_t hdr = t == LLM_DTYPE_Q5_0 ? 2 : 4, bb = hdr + 20;
        for (int b = 0; b < n / 32; b++) {
            uint16_t d = q5g_half(&s, 0);
            memcpy(w + b * bb, &d, 2);
            if (t == LLM_DTYPE_Q5_1) {
                uint16_t m = q5g_half(&s, 1);
                memcpy(w + b * bb + 2, &m, 2);
            }
            for (size_t j = hdr; j < bb; j++) w[b * bb + j] = q5g_byte(&s);
        }
        for (int b = 0; b < n / 32; b++) {
            uint8_t *p = a + b * (hdr + 32);
            uint16_t d = q5g_half(&s, 0);
            memcpy(p, &d, 2);
            if (t == LLM_DTYPE_Q5_1) {
                uint16_t sum = q5g_half(&s, 1); /* need not be d * sum(q) for a dot */
                memcpy(p + 2, &sum, 2);
            }
            for (int j = 0; j < 32; j++) p[hdr + (size_t)j] = (uint8_t)q5g_q8(&s);
        }
        return;
    }
    for (int b = 0; b < n / 256; b++) {
        llm_block_q5_k *x = (llm_block_q5_k *)w + b;
        x->d = q5g_half(&s, 0);
        x->dmin = q5g_half(&s, 0);
        uint8_t *rest = x->scales; /* scales, qh, qs follow each other: 172 bytes */
        for (int j = 0; j < 172; j++) rest[j] = q5g_byte(&s);
    }
    for (int b = 0; b < n / 256; b++) {
        llm_block_q8_k *y = (llm_block_q8_k *)a + b;
        uint32_t r = q5g_next(&s), fb = ((117 + r % 6) << 23) | ((r >> 3) & 0x7FFFFF);
        memcpy(&y->d, &fb, 4);
        for (int j = 0; j < 256; j++) y->qs[j] = (int8_t)q5g_byte(&s);
        for (int j = 0; j < 16; j++) {
            int sum = 0;
            for (int e = 0; e < 16; e++) sum += y->qs[16 * j + e];
            y->bsums[j] = (int16_t)sum;
        }
    }
}

Test(kernels, q5_dots_match_llamacpp) {
    llm__cpu_kernels s, v;
    llm__cpu_kernels_scalar(&s);
    llm__cpu_kernels_scalar(&v);
    const int simd = llm__cpu_has_avx2();
    if (simd) {
        llm__cpu_kernels_avx2(&v);
    } else {
        cr_log_warn("CPU lacks AVX2/FMA/F16C: only the scalar Q5 dots are checked against llama.cpp");
    }
    for (int i = 0; i < (int)(sizeof(g_q5_golden) / sizeof(g_q5_golden[0])); i++) {
        const llm_dtype t = g_q5_golden[i].t, at = s.act_type[t];
        const int n = g_q5_golden[i].n;
        size_t wb, ab;
        llm_dtype_row_size(t, (uint64_t)n, &wb);
        llm_dtype_row_size(at, (uint64_t)n, &ab);
        uint8_t *w = malloc(wb), *a4 = malloc(4 * ab);
        float *wf = malloc(sizeof(float) * (size_t)n), *af = malloc(sizeof(float) * (size_t)n);
        q5g_row(i, t, n, w, a4 + 2 * ab); /* the golden row in slot 2 of 4 */
        float want;
        memcpy(&want, &g_q5_golden[i].bits, 4);
        /* Magnitude for the scalar tolerance: |w a| terms, plus |m s| for Q5_1
         * (whose s is not d * sum(q) here, so it is not in the dequantized a). */
        llm_dtype_dequantize_row(t, w, wf, (size_t)n);
        llm_dtype_dequantize_row(at, a4 + 2 * ab, af, (size_t)n);
        double mag = 0;
        for (int e = 0; e < n; e++) mag += fabs((double)wf[e] * af[e]);
        if (t == LLM_DTYPE_Q5_1) {
            for (int b = 0; b < n / 32; b++) {
                const llm_block_q5_1 *x = (const llm_block_q5_1 *)w + b;
                const llm_block_q8_1 *y = (const llm_block_q8_1 *)(a4 + 2 * ab) + b;
                mag += fabs((double)llm_fp16_to_fp32(x->m) * llm_fp16_to_fp32(y->s));
            }
        }
        const float rs = s.dot[t](n, w, a4 + 2 * ab);
        cr_assert(fabs((double)rs - want) <= 1e-5 * mag, "%s n=%d: scalar %.9g, llama.cpp %.9g (mag %g)",
                  llm_dtype_name(t), n, (double)rs, (double)want, mag);
        if (simd) {
            cr_assert_neq(v.dot[t], s.dot[t], "%s has no AVX2 dot", llm_dtype_name(t));
            cr_assert_not_null(v.dot4[t], "%s has no AVX2 dot4", llm_dtype_name(t));
            const float rv = v.dot[t](n, w, a4 + 2 * ab);
            cr_assert_eq(memcmp(&rv, &want, 4), 0, "%s n=%d: avx2 %.9g, llama.cpp %.9g (bits differ)",
                         llm_dtype_name(t), n, (double)rv, (double)want);
            /* Other rows of the 1x4 call: copies of a shifted golden row. */
            memcpy(a4, a4 + 2 * ab, ab);
            memcpy(a4 + ab, a4 + 2 * ab, ab);
            memcpy(a4 + 3 * ab, a4 + 2 * ab, ab);
            float r4[4];
            v.dot4[t](n, w, a4, ab, r4);
            for (int j = 0; j < 4; j++) {
                cr_assert_eq(memcmp(&r4[j], &want, 4), 0, "%s n=%d dot4 row %d: %.9g vs llama.cpp %.9g",
                             llm_dtype_name(t), n, j, (double)r4[j], (double)want);
            }
        }
        free(w); free(a4); free(wf); free(af);
    }
}

/* Extreme blocks: every quant 31 (or 0), maximal 6-bit scales and mins,
 * activations at +-127 (Q8_K also -128), so any int16 saturation or lost
 * fifth bit in the SIMD kernels shows up against the scalar reference. */
Test(kernels, q5_simd_extreme_blocks_match_scalar) {
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C: SIMD kernels not selectable");
    }
    llm__cpu_kernels s, v;
    llm__cpu_kernels_scalar(&s);
    llm__cpu_kernels_scalar(&v);
    llm__cpu_kernels_avx2(&v);
    const llm_dtype types[] = {LLM_DTYPE_Q5_0, LLM_DTYPE_Q5_1, LLM_DTYPE_Q5_K};
    for (int ti = 0; ti < 3; ti++) {
        const llm_dtype t = types[ti], at = s.act_type[t];
        const int blk = t == LLM_DTYPE_Q5_K ? 256 : 32;
        for (int pat = 0; pat < 6; pat++) {
            const int n = blk * (1 + pat % 3 * 5); /* 1, 6, 11 blocks */
            size_t wb, ab;
            llm_dtype_row_size(t, (uint64_t)n, &wb);
            llm_dtype_row_size(at, (uint64_t)n, &ab);
            uint8_t *w = malloc(wb), *a = malloc(ab);
            /* pat 0..2: quant bits all ones; 3..5: alternating bytes. */
            memset(w, pat < 3 ? 0xFF : 0xA5, wb);
            const size_t bb = llm_dtype_block_bytes(t);
            const uint16_t d = llm_fp32_to_fp16(0.0625f), m = llm_fp32_to_fp16(-0.5f);
            for (size_t off = 0; off < wb; off += bb) {
                memcpy(w + off, &d, 2);
                if (t != LLM_DTYPE_Q5_0) memcpy(w + off + 2, t == LLM_DTYPE_Q5_1 ? &m : &d, 2);
            }
            const size_t abb = llm_dtype_block_bytes(at);
            for (size_t off = 0; off < ab; off += abb) {
                if (at == LLM_DTYPE_Q8_K) {
                    llm_block_q8_k *y = (llm_block_q8_k *)(a + off);
                    y->d = 0.03125f;
                    for (int j = 0; j < 256; j++) y->qs[j] = (int8_t)(pat % 2 ? -128 : ((j & 1) ? 127 : -128));
                    for (int j = 0; j < 16; j++) {
                        int sum = 0;
                        for (int e = 0; e < 16; e++) sum += y->qs[16 * j + e];
                        y->bsums[j] = (int16_t)sum;
                    }
                } else {
                    const size_t hdr = at == LLM_DTYPE_Q8_0 ? 2 : 4;
                    const uint16_t dy = llm_fp32_to_fp16(0.25f), sy = llm_fp32_to_fp16(-3.0f);
                    memcpy(a + off, &dy, 2);
                    if (hdr == 4) memcpy(a + off + 2, &sy, 2);
                    for (size_t j = 0; j < 32; j++) a[off + hdr + j] = (uint8_t)(int8_t)(pat % 2 ? -127 : 127);
                }
            }
            const float rs = s.dot[t](n, w, a), rv = v.dot[t](n, w, a);
            double mag = 0;
            float *wf = malloc(sizeof(float) * (size_t)n), *af = malloc(sizeof(float) * (size_t)n);
            llm_dtype_dequantize_row(t, w, wf, (size_t)n);
            llm_dtype_dequantize_row(at, a, af, (size_t)n);
            for (int e = 0; e < n; e++) mag += fabs((double)wf[e] * af[e]);
            if (t == LLM_DTYPE_Q5_1) mag += 1.5 * (n / 32);
            cr_assert(fabs((double)rs - rv) <= 1e-5 * mag + 1e-6, "%s pattern %d n=%d: scalar %.9g avx2 %.9g",
                      llm_dtype_name(t), pat, n, (double)rs, (double)rv);
            free(w); free(a); free(wf); free(af);
        }
    }
}

/* ------------------------------------------ Q4_K, Q6_K dots; Q8_K quantizer -- */

/* Results of llama.cpp's own AVX2 kernels (ggml_vec_dot_q4_K_q8_K and
 * ggml_vec_dot_q6_K_q8_K in llama-cpp-python 0.3.36's libggml-cpu.so) on the
 * bytes kqg_row() builds; made by scripts/golden/kernels/kquant_llamacpp.py.
 * Our AVX2 kernels sum in ggml's order (fused multiply-adds included), so they
 * must give these bits; the scalar reference sums whole blocks first and must
 * be within 1e-5 of the magnitude. */
static const struct {
    llm_dtype t;
    int n;
    uint32_t bits;
} g_kq_golden[] = {
    {LLM_DTYPE_Q4_K, 256, 0xC1369AC8u}, /* -11.4127884 */
    {LLM_DTYPE_Q4_K, 512, 0x42C7D585u}, /* 99.9170303 */
    {LLM_DTYPE_Q4_K, 768, 0xC589B129u}, /* -4406.14502 */
    {LLM_DTYPE_Q4_K, 1024, 0xC48654A8u}, /* -1074.64551 */
    {LLM_DTYPE_Q4_K, 1536, 0xC4359CCCu}, /* -726.449951 */
    {LLM_DTYPE_Q4_K, 2048, 0x4345D4B5u}, /* 197.830887 */
    {LLM_DTYPE_Q4_K, 2816, 0xC4958E63u}, /* -1196.44958 */
    {LLM_DTYPE_Q4_K, 3072, 0xC5E8E21Bu}, /* -7452.26318 */
    {LLM_DTYPE_Q4_K, 4096, 0x4543D8B1u}, /* 3133.54321 */
    {LLM_DTYPE_Q4_K, 5632, 0xC6186DC4u}, /* -9755.44141 */
    {LLM_DTYPE_Q4_K, 6144, 0xC50AA269u}, /* -2218.15063 */
    {LLM_DTYPE_Q4_K, 8192, 0xC5DA10ADu}, /* -6978.08447 */
    {LLM_DTYPE_Q6_K, 256, 0xC392C6F8u}, /* -293.554443 */
    {LLM_DTYPE_Q6_K, 512, 0xC497CAAAu}, /* -1214.33325 */
    {LLM_DTYPE_Q6_K, 768, 0x470E911Cu}, /* 36497.1094 */
    {LLM_DTYPE_Q6_K, 1024, 0xC607AE4Cu}, /* -8683.57422 */
    {LLM_DTYPE_Q6_K, 1536, 0x4634581Bu}, /* 11542.0264 */
    {LLM_DTYPE_Q6_K, 2048, 0xC580E520u}, /* -4124.64062 */
    {LLM_DTYPE_Q6_K, 2816, 0x460DB18Au}, /* 9068.38477 */
    {LLM_DTYPE_Q6_K, 3072, 0xC64B5162u}, /* -13012.3457 */
    {LLM_DTYPE_Q6_K, 4096, 0x4797EE0Eu}, /* 77788.1094 */
    {LLM_DTYPE_Q6_K, 5632, 0xC50DD640u}, /* -2269.39062 */
    {LLM_DTYPE_Q6_K, 6144, 0xC76B8255u}, /* -60290.332 */
    {LLM_DTYPE_Q6_K, 8192, 0xC77736DCu}, /* -63286.8594 */
};

/* Case i's seed in the script: seed(1000 + i) for dots, seed(2000 + i) for
 * the quantizer. */
static uint32_t kqg_seed(int i) {
    uint32_t s = 0x9E3779B9u ^ (uint32_t)((uint32_t)i * 0x85EBCA6Bu);
    return s ? s : 1;
}

/* A float 2^-10 .. 2^-5 with random mantissa (Gen.f32 in the script). */
static float kqg_f32(uint32_t *s) {
    uint32_t r = q5g_next(s), fb = ((117 + r % 6) << 23) | ((r >> 3) & 0x7FFFFF);
    float f;
    memcpy(&f, &fb, 4);
    return f;
}

/* Weight row (w) and Q8_K activation row (a) of dot case i. */
static void kqg_row(int i, llm_dtype t, int n, uint8_t *w, uint8_t *a) {
    uint32_t s = kqg_seed(1000 + i);
    for (int b = 0; b < n / 256; b++) {
        if (t == LLM_DTYPE_Q4_K) {
            llm_block_q4_k *x = (llm_block_q4_k *)w + b;
            x->d = q5g_half(&s, 0);
            x->dmin = q5g_half(&s, 0);
            uint8_t *rest = x->scales; /* scales then qs: 140 bytes */
            for (int j = 0; j < 140; j++) rest[j] = q5g_byte(&s);
        } else {
            llm_block_q6_k *x = (llm_block_q6_k *)w + b;
            uint8_t *p = x->ql; /* ql, qh, scales: 208 bytes */
            for (int j = 0; j < 208; j++) p[j] = q5g_byte(&s);
            x->d = q5g_half(&s, 1);
        }
    }
    for (int b = 0; b < n / 256; b++) {
        llm_block_q8_k *y = (llm_block_q8_k *)a + b;
        y->d = kqg_f32(&s);
        for (int j = 0; j < 256; j++) y->qs[j] = (int8_t)q5g_byte(&s);
        for (int j = 0; j < 16; j++) {
            int sum = 0;
            for (int e = 0; e < 16; e++) sum += y->qs[16 * j + e];
            y->bsums[j] = (int16_t)sum;
        }
    }
}

/* Another valid Q8_K row derived from src: quants rotated by k, d scaled. */
static void kqg_variant(const uint8_t *src, uint8_t *dst, int n, int k) {
    for (int b = 0; b < n / 256; b++) {
        const llm_block_q8_k *x = (const llm_block_q8_k *)src + b;
        llm_block_q8_k *y = (llm_block_q8_k *)dst + b;
        y->d = x->d * (1.0f + 0.37f * (float)k);
        for (int j = 0; j < 256; j++) y->qs[j] = x->qs[(j + 13 * k) % 256];
        for (int j = 0; j < 16; j++) {
            int sum = 0;
            for (int e = 0; e < 16; e++) sum += y->qs[16 * j + e];
            y->bsums[j] = (int16_t)sum;
        }
    }
}

Test(kernels, kquant_dots_match_llamacpp) {
    llm__cpu_kernels s, v;
    llm__cpu_kernels_scalar(&s);
    llm__cpu_kernels_scalar(&v);
    const int simd = llm__cpu_has_avx2();
    if (simd) {
        llm__cpu_kernels_avx2(&v);
    } else {
        cr_log_warn("CPU lacks AVX2/FMA/F16C: only the scalar Q4_K/Q6_K dots are checked against llama.cpp");
    }
    for (int i = 0; i < (int)(sizeof(g_kq_golden) / sizeof(g_kq_golden[0])); i++) {
        const llm_dtype t = g_kq_golden[i].t;
        const int n = g_kq_golden[i].n;
        cr_assert_eq(s.act_type[t], LLM_DTYPE_Q8_K);
        size_t wb, ab;
        llm_dtype_row_size(t, (uint64_t)n, &wb);
        llm_dtype_row_size(LLM_DTYPE_Q8_K, (uint64_t)n, &ab);
        uint8_t *w = malloc(wb), *a4 = malloc(4 * ab);
        float *wf = malloc(sizeof(float) * (size_t)n), *af = malloc(sizeof(float) * (size_t)n);
        uint8_t *a = a4 + 2 * ab; /* the golden row in slot 2 of 4 */
        kqg_row(i, t, n, w, a);
        float want;
        memcpy(&want, &g_kq_golden[i].bits, 4);
        llm_dtype_dequantize_row(t, w, wf, (size_t)n);
        llm_dtype_dequantize_row(LLM_DTYPE_Q8_K, a, af, (size_t)n);
        double mag = 0;
        for (int e = 0; e < n; e++) mag += fabs((double)wf[e] * af[e]);
        const float rs = s.dot[t](n, w, a);
        cr_assert(fabs((double)rs - want) <= 1e-5 * mag, "%s n=%d: scalar %.9g, llama.cpp %.9g (mag %g)",
                  llm_dtype_name(t), n, (double)rs, (double)want, mag);
        if (simd) {
            cr_assert_neq(v.dot[t], s.dot[t], "%s has no AVX2 dot", llm_dtype_name(t));
            cr_assert_not_null(v.dot4[t], "%s has no AVX2 dot4", llm_dtype_name(t));
            const float rv = v.dot[t](n, w, a);
            cr_assert_eq(memcmp(&rv, &want, 4), 0, "%s n=%d: avx2 %.9g, llama.cpp %.9g (bits differ)",
                         llm_dtype_name(t), n, (double)rv, (double)want);
            /* dot4 over four different rows: each equals the single dot. */
            kqg_variant(a, a4, n, 1);
            kqg_variant(a, a4 + ab, n, 2);
            kqg_variant(a, a4 + 3 * ab, n, 3);
            float r4[4];
            v.dot4[t](n, w, a4, ab, r4);
            for (int j = 0; j < 4; j++) {
                const float r1 = v.dot[t](n, w, a4 + (size_t)j * ab);
                cr_assert_eq(memcmp(&r4[j], &r1, 4), 0, "%s n=%d dot4 row %d: %.9g vs dot %.9g",
                             llm_dtype_name(t), n, j, (double)r4[j], (double)r1);
            }
            cr_assert_eq(memcmp(&r4[2], &want, 4), 0);
        }
        free(w); free(a4); free(wf); free(af);
    }
}

/* Extreme Q4_K / Q6_K blocks: all quants at their maximum (or alternating
 * bytes), 6-bit scales and mins at 63 / Q6_K scales at -128 or 127,
 * activations at +-127 and -128: int16 saturation or a lost bit in the AVX2
 * kernels shows up against the scalar reference. */
Test(kernels, kquant_simd_extreme_blocks_match_scalar) {
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C: SIMD kernels not selectable");
    }
    llm__cpu_kernels s, v;
    llm__cpu_kernels_scalar(&s);
    llm__cpu_kernels_scalar(&v);
    llm__cpu_kernels_avx2(&v);
    const llm_dtype types[] = {LLM_DTYPE_Q4_K, LLM_DTYPE_Q6_K};
    for (int ti = 0; ti < 2; ti++) {
        const llm_dtype t = types[ti];
        for (int pat = 0; pat < 6; pat++) {
            const int n = 256 * (1 + pat % 3 * 5); /* 1, 6, 11 blocks */
            size_t wb, ab;
            llm_dtype_row_size(t, (uint64_t)n, &wb);
            llm_dtype_row_size(LLM_DTYPE_Q8_K, (uint64_t)n, &ab);
            uint8_t *w = malloc(wb), *a = malloc(ab);
            memset(w, pat < 3 ? 0xFF : (pat == 3 ? 0x80 : 0xA5), wb); /* 0x80: Q6_K scales -128 */
            const size_t bb = llm_dtype_block_bytes(t);
            const uint16_t d = llm_fp32_to_fp16(0.0625f), dm = llm_fp32_to_fp16(0.5f);
            for (size_t off = 0; off < wb; off += bb) {
                if (t == LLM_DTYPE_Q4_K) {
                    memcpy(w + off, &d, 2);
                    memcpy(w + off + 2, &dm, 2);
                } else {
                    memcpy(w + off + 208, &d, 2);
                }
            }
            for (size_t off = 0; off < ab; off += sizeof(llm_block_q8_k)) {
                llm_block_q8_k *y = (llm_block_q8_k *)(a + off);
                y->d = 0.03125f;
                for (int j = 0; j < 256; j++) y->qs[j] = (int8_t)(pat % 2 ? -128 : ((j & 1) ? 127 : -128));
                for (int j = 0; j < 16; j++) {
                    int sum = 0;
                    for (int e = 0; e < 16; e++) sum += y->qs[16 * j + e];
                    y->bsums[j] = (int16_t)sum;
                }
            }
            const float rs = s.dot[t](n, w, a), rv = v.dot[t](n, w, a);
            double mag = 0;
            float *wf = malloc(sizeof(float) * (size_t)n), *af = malloc(sizeof(float) * (size_t)n);
            llm_dtype_dequantize_row(t, w, wf, (size_t)n);
            llm_dtype_dequantize_row(LLM_DTYPE_Q8_K, a, af, (size_t)n);
            for (int e = 0; e < n; e++) mag += fabs((double)wf[e] * af[e]);
            cr_assert(fabs((double)rs - rv) <= 1e-5 * mag + 1e-6, "%s pattern %d n=%d: scalar %.9g avx2 %.9g",
                      llm_dtype_name(t), pat, n, (double)rs, (double)rv);
            free(w); free(a); free(wf); free(af);
        }
    }
}

/* llama.cpp's quantize_row_q8_K (libggml-cpu.so's export, the portable
 * reference on x86) on the rows kqg_floats() builds: FNV-1a 64 of the output
 * bytes (d, quants, bsums of every block) and the first block's d. Made by
 * scripts/golden/kernels/kquant_llamacpp.py; kinds as quant_row() there. */
static const struct {
    int kind, n;
    uint64_t hash;
    uint32_t d0;
} g_q8k_golden[] = {
    {0, 256, 0xD855AA13F60355BFULL, 0x39807AF3u},
    {0, 512, 0xF718AAB81903F90DULL, 0xB7FF9408u},
    {0, 2048, 0x08A197053B0B3257ULL, 0x3B00B55Bu},
    {1, 256, 0x07142B4ACCA87167ULL, 0x3D000000u},
    {1, 1024, 0x3F4417158B3FEBEDULL, 0x3E000000u},
    {2, 768, 0xDB461527C717AC04ULL, 0x3D41AE73u},
    {3, 768, 0x4A670478430026DEULL, 0xBA808533u},
    {4, 1024, 0x99FF9F5F1EF93EC5ULL, 0x38800BE3u},
};

static float kqg_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Float row of quantizer kind `kind` from generator state *st (quant_row()
 * in the script, step for step). */
static void kqg_floats_from(uint32_t *st, int kind, int n, float *x) {
    uint32_t s = *st;
    for (int b = 0; b < n / 256; b++) {
        float *blk = x + 256 * b;
        const int e = 20 + (int)(q5g_next(&s) % 12);
        for (int j = 0; j < 256; j++) {
            const int32_t m = (int32_t)(q5g_next(&s) >> 8) - (1 << 23);
            blk[j] = (float)m * ldexpf(1.0f, -e); /* exact: 24-bit integer times 2^-e */
        }
        const int sh = (int)(q5g_next(&s) % 8);
        if (kind == 1) {
            for (int j = 0; j < 256; j++) {
                const int k = (int)(q5g_next(&s) % 201) - 100;
                blk[j] = ((float)k + 0.5f) * ldexpf(1.0f, -sh);
            }
            blk[0] = ((q5g_next(&s) & 1) ? 127.0f : -127.0f) * ldexpf(1.0f, -sh);
        } else if (kind == 2) {
            const float A = fabsf(blk[0]) * 4.0f;
            blk[5] = -A;
            blk[100] = A;
        } else if (kind == 3 && b == 1) {
            for (int j = 0; j < 256; j++) blk[j] = (j & 1) ? -0.0f : 0.0f;
        } else if (kind == 4) {
            if (b == 0) {
                blk[7] = kqg_bits(0x7FC00000u);
                blk[200] = kqg_bits(0xFFC01234u);
            } else if (b == 1) {
                blk[33] = INFINITY;
            } else if (b == 2) {
                for (int j = 0; j < 256; j++) blk[j] = kqg_bits(0x7FC00000u);
            }
        }
    }
    *st = s;
}

static void kqg_floats(int i, int kind, int n, float *x) {
    uint32_t s = kqg_seed(2000 + i);
    kqg_floats_from(&s, kind, n, x);
}

static uint64_t kqg_fnv(const uint8_t *p, size_t len) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001B3ull;
    }
    return h;
}

Test(kernels, q8k_quantizer_matches_llamacpp) {
    llm__cpu_kernels s, v;
    llm__cpu_kernels_scalar(&s);
    llm__cpu_kernels_scalar(&v);
    const int simd = llm__cpu_has_avx2();
    if (simd) {
        llm__cpu_kernels_avx2(&v);
        cr_assert_neq(v.quantize[LLM_DTYPE_Q8_K], s.quantize[LLM_DTYPE_Q8_K], "Q8_K has no AVX2 quantizer");
    }
    for (int i = 0; i < (int)(sizeof(g_q8k_golden) / sizeof(g_q8k_golden[0])); i++) {
        const int n = g_q8k_golden[i].n;
        const size_t bytes = sizeof(llm_block_q8_k) * (size_t)(n / 256);
        float *x = malloc(sizeof(float) * (size_t)n);
        uint8_t *q = malloc(bytes);
        kqg_floats(i, g_q8k_golden[i].kind, n, x);
        for (int which = 0; which < (simd ? 2 : 1); which++) {
            memset(q, 0x5A, bytes); /* a quantizer must write every byte */
            (which ? v : s).quantize[LLM_DTYPE_Q8_K](x, q, n);
            uint32_t d0;
            memcpy(&d0, q, 4);
            cr_assert_eq(d0, g_q8k_golden[i].d0, "case %d (%s): d %08x, llama.cpp %08x", i,
                         which ? "avx2" : "scalar", d0, g_q8k_golden[i].d0);
            cr_assert_eq(kqg_fnv(q, bytes), g_q8k_golden[i].hash, "case %d (%s): bytes differ from llama.cpp's", i,
                         which ? "avx2" : "scalar");
        }
        free(x); free(q);
    }
}

/* llama.cpp's repacked Q4_K kernels (what it runs for Q4_K weights with a
 * multiple of 8 rows on AVX2, see kernels.h): ggml_gemv_q4_K_8x8_q8_K on each
 * of 4 activation rows and ggml_gemm_q4_K_8x8_q8_K on the 4 rows at once, 8
 * weight rows repacked by llama.cpp itself; FNV-1a 64 of the 32 outputs'
 * float bits in [activation row][weight row] order and the first output.
 * Made by scripts/golden/kernels/kquant_llamacpp.py (repack_golden). */
static const struct {
    int n, gemm;
    uint64_t hash;
    uint32_t first;
} g_q4k_repack_golden[] = {
    {256, 0, 0xD5932CDD95BF085BULL, 0x41815049u}, /* gemv, first 16.1642017 */
    {256, 1, 0x45090EFE5D0D60A3ULL, 0x41815049u}, /* gemm, first 16.1642017 */
    {1536, 0, 0x0A1117ECC9CF5BB9ULL, 0x44FF9A70u}, /* gemv, first 2044.82617 */
    {1536, 1, 0x4F1A772945BD230AULL, 0x44FF9A70u}, /* gemm, first 2044.82617 */
    {4096, 0, 0x6705CCF70BC3F539ULL, 0xC655597Bu}, /* gemv, first -13654.3701 */
    {4096, 1, 0xF309BB4F1FB98289ULL, 0xC655597Bu}, /* gemm, first -13654.3701 */
};

Test(kernels, q4k_repacked_orders_match_llamacpp) {
    llm__cpu_kernels s;
    llm__cpu_kernels_scalar(&s); /* its Q8_K quantizer is llama.cpp's bit for bit */
#if defined(__x86_64__) /* kernels_avx2_kq.c is an AVX2 build there */
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C: the repacked-order dots are not callable");
    }
#endif
    for (int c = 0; c < (int)(sizeof(g_q4k_repack_golden) / sizeof(g_q4k_repack_golden[0])); c += 2) {
        const int n = g_q4k_repack_golden[c].n;
        size_t wb, ab;
        llm_dtype_row_size(LLM_DTYPE_Q4_K, (uint64_t)n, &wb);
        llm_dtype_row_size(LLM_DTYPE_Q8_K, (uint64_t)n, &ab);
        uint8_t *w = malloc(8 * wb), *a = malloc(4 * ab);
        float *x = malloc(sizeof(float) * 4 * (size_t)n);
        /* The script's weights("q4_K", 8 n) then quant_row(0, 4 n) from seed(3000 + case). */
        uint32_t st = kqg_seed(3000 + c / 2);
        for (int b = 0; b < 8 * n / 256; b++) {
            llm_block_q4_k *blk = (llm_block_q4_k *)w + b;
            blk->d = q5g_half(&st, 0);
            blk->dmin = q5g_half(&st, 0);
            uint8_t *rest = blk->scales;
            for (int j = 0; j < 140; j++) rest[j] = q5g_byte(&st);
        }
        kqg_floats_from(&st, 0, 4 * n, x);
        for (int r = 0; r < 4; r++) s.quantize[LLM_DTYPE_Q8_K](x + (size_t)r * (size_t)n, a + (size_t)r * ab, n);
        float gv[4][8], gm[4][8];
        for (int col = 0; col < 8; col++) {
            const uint8_t *wr = w + (size_t)col * wb;
            for (int r = 0; r < 4; r++) gv[r][col] = llm__q4_k_dot_repack_gemv(n, wr, a + (size_t)r * ab);
            float o[4];
            llm__q4_k_dot4_repack_gemm(n, wr, a, ab, o);
            for (int r = 0; r < 4; r++) gm[r][col] = o[r];
        }
        for (int k = 0; k < 2; k++) {
            const float *o = k ? &gm[0][0] : &gv[0][0];
            uint32_t first;
            memcpy(&first, o, 4);
            cr_assert_eq(first, g_q4k_repack_golden[c + k].first, "n=%d %s: first %08x, llama.cpp %08x", n,
                         k ? "gemm" : "gemv", first, g_q4k_repack_golden[c + k].first);
            cr_assert_eq(kqg_fnv((const uint8_t *)o, 32 * sizeof(float)), g_q4k_repack_golden[c + k].hash,
                         "n=%d %s: outputs differ from llama.cpp's", n, k ? "gemm" : "gemv");
        }
        free(w); free(a); free(x);
    }
}

/* llama.cpp's own ggml_mul_mat of 8 K-quant weight rows (plain CPU memory,
 * never repacked) by 8 activation rows, which runs its tiled K-quant kernel,
 * and by the first 4 rows, which runs its vec_dot: FNV-1a 64 of the outputs'
 * float bits in [activation row][weight row] order and the first output.
 * Made by scripts/golden/kernels/kquant_llamacpp.py (tiled_golden). */
static const struct {
    llm_dtype t;
    int n, rows;
    uint64_t hash;
    uint32_t first;
} g_kq_tiled_golden[] = {
    {LLM_DTYPE_Q6_K, 256, 8, 0xDC980390C96FD989ULL, 0x43039927u}, /* tiled, first 131.598251 */
    {LLM_DTYPE_Q6_K, 256, 4, 0x54357CC849E9442CULL, 0x43039926u}, /* vec_dot, first 131.598236 */
    {LLM_DTYPE_Q6_K, 1536, 8, 0x2D16EC79008471B9ULL, 0xC650C8B9u}, /* tiled, first -13362.1807 */
    {LLM_DTYPE_Q6_K, 1536, 4, 0x5491CCFEF4BBDFCDULL, 0xC650C8B8u}, /* vec_dot, first -13362.1797 */
    {LLM_DTYPE_Q6_K, 4096, 8, 0x1549569B27D5C575ULL, 0xC60EAAFBu}, /* tiled, first -9130.74512 */
    {LLM_DTYPE_Q6_K, 4096, 4, 0xD97ABB5AB0373F92ULL, 0xC60EAAF7u}, /* vec_dot, first -9130.74121 */
    {LLM_DTYPE_Q4_K, 256, 8, 0xFEDCD4A475FBC106ULL, 0x43B2B6B8u}, /* tiled, first 357.42749 */
    {LLM_DTYPE_Q4_K, 256, 4, 0xB1928C78F3EE760CULL, 0x43B2B6B9u}, /* vec_dot, first 357.427521 */
    {LLM_DTYPE_Q4_K, 1536, 8, 0x10599FCB8AE65038ULL, 0x4462D5C2u}, /* tiled, first 907.339966 */
    {LLM_DTYPE_Q4_K, 1536, 4, 0x53D336A12E9EF6BBULL, 0x4462D5C3u}, /* vec_dot, first 907.340027 */
    {LLM_DTYPE_Q4_K, 4096, 8, 0x08FFAB460BF4EE4EULL, 0x4515FE34u}, /* tiled, first 2399.8877 */
    {LLM_DTYPE_Q4_K, 4096, 4, 0xDCEEBB901618C359ULL, 0x4515FE33u}, /* vec_dot, first 2399.88745 */
    {LLM_DTYPE_Q5_K, 256, 8, 0xAE637D5888E1859EULL, 0xC2799F23u}, /* tiled, first -62.405407 */
    {LLM_DTYPE_Q5_K, 256, 4, 0x26C4D329B437562DULL, 0xC2799F22u}, /* vec_dot, first -62.4054031 */
    {LLM_DTYPE_Q5_K, 1536, 8, 0xAA311F5623E37B0DULL, 0xC56033AAu}, /* tiled, first -3587.229 */
    {LLM_DTYPE_Q5_K, 1536, 4, 0xAE99ABEE63FFA13DULL, 0xC56033AEu}, /* vec_dot, first -3587.22998 */
    {LLM_DTYPE_Q5_K, 4096, 8, 0x3BC3CDCDEB70811AULL, 0xC6398A90u}, /* tiled, first -11874.6406 */
    {LLM_DTYPE_Q5_K, 4096, 4, 0xF4B618A74C315694ULL, 0xC6398A91u}, /* vec_dot, first -11874.6416 */
};

Test(kernels, kquant_tiled_order_matches_llamacpp) {
    llm__cpu_kernels s, v;
    llm__cpu_kernels_scalar(&s);
    llm__cpu_kernels_scalar(&v);
    const int simd = llm__cpu_has_avx2();
#if defined(__x86_64__) /* kernels_avx2_kq.c is an AVX2 build there */
    if (!simd) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C: the tiled-order dots are not callable");
    }
#endif
    if (simd) llm__cpu_kernels_avx2(&v);
    for (int c = 0; c < (int)(sizeof(g_kq_tiled_golden) / sizeof(g_kq_tiled_golden[0])); c += 2) {
        const llm_dtype t = g_kq_tiled_golden[c].t;
        const int n = g_kq_tiled_golden[c].n, q6 = t == LLM_DTYPE_Q6_K, q5 = t == LLM_DTYPE_Q5_K;
        size_t wb, ab;
        llm_dtype_row_size(t, (uint64_t)n, &wb);
        llm_dtype_row_size(LLM_DTYPE_Q8_K, (uint64_t)n, &ab);
        uint8_t *w = malloc(8 * wb), *a = malloc(8 * ab);
        float *x = malloc(sizeof(float) * 8 * (size_t)n);
        /* The script's weights(t, 8 n) then quant_row(0, 8 n) from seed(4000 + case). */
        uint32_t st = kqg_seed(4000 + c / 2);
        for (int b = 0; b < 8 * n / 256; b++) {
            if (q6) {
                llm_block_q6_k *blk = (llm_block_q6_k *)w + b;
                uint8_t *p = blk->ql;
                for (int j = 0; j < 208; j++) p[j] = q5g_byte(&st);
                blk->d = q5g_half(&st, 1);
            } else if (q5) {
                llm_block_q5_k *blk = (llm_block_q5_k *)w + b;
                blk->d = q5g_half(&st, 0);
                blk->dmin = q5g_half(&st, 0);
                uint8_t *rest = blk->scales; /* scales, qh, qs: 172 bytes */
                for (int j = 0; j < 172; j++) rest[j] = q5g_byte(&st);
            } else {
                llm_block_q4_k *blk = (llm_block_q4_k *)w + b;
                blk->d = q5g_half(&st, 0);
                blk->dmin = q5g_half(&st, 0);
                uint8_t *rest = blk->scales;
                for (int j = 0; j < 140; j++) rest[j] = q5g_byte(&st);
            }
        }
        kqg_floats_from(&st, 0, 8 * n, x);
        for (int r = 0; r < 8; r++) s.quantize[LLM_DTYPE_Q8_K](x + (size_t)r * (size_t)n, a + (size_t)r * ab, n);
        float tiled[8][8], tiled4[8][8], vec[4][8];
        for (int col = 0; col < 8; col++) {
            const uint8_t *wr = w + (size_t)col * wb;
            for (int r = 0; r < 8; r++) {
                tiled[r][col] = (q6 ? llm__q6_k_dot_tiled : q5 ? llm__q5_k_dot_tiled : llm__q4_k_dot_tiled)(
                    n, wr, a + (size_t)r * ab);
            }
            for (int r = 0; r < 8; r += 4) {
                float o[4];
                (q6 ? llm__q6_k_dot4_tiled : q5 ? llm__q5_k_dot4_tiled : llm__q4_k_dot4_tiled)(
                    n, wr, a + (size_t)r * ab, ab, o);
                for (int j = 0; j < 4; j++) tiled4[r + j][col] = o[j];
            }
            /* Fewer than 8 rows: llama.cpp's vec_dot, our registered dot. */
            for (int r = 0; r < 4; r++) vec[r][col] = (simd ? v : s).dot[t](n, wr, a + (size_t)r * ab);
        }
        cr_assert_eq(memcmp(tiled, tiled4, sizeof tiled), 0, "%s n=%d: tiled dot4 != tiled dot", llm_dtype_name(t), n);
        for (int k = 0; k < 2; k++) {
            const float *o = k ? &vec[0][0] : &tiled[0][0];
            const size_t cnt = k ? 32 : 64;
            if (k && !simd) break; /* the scalar dot sums in its own order */
            uint32_t first;
            memcpy(&first, o, 4);
            cr_assert_eq(first, g_kq_tiled_golden[c + k].first, "%s n=%d %s: first %08x, llama.cpp %08x",
                         llm_dtype_name(t), n, k ? "vec_dot" : "tiled", first, g_kq_tiled_golden[c + k].first);
            cr_assert_eq(kqg_fnv((const uint8_t *)o, cnt * sizeof(float)), g_kq_tiled_golden[c + k].hash,
                         "%s n=%d %s: outputs differ from llama.cpp's", llm_dtype_name(t), n, k ? "vec_dot" : "tiled");
        }
        free(w); free(a); free(x);
    }
}
