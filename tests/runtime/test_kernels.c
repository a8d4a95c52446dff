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
    llm__cpu_kernels_x86(&v, llm__cpu_features());
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
    llm__cpu_kernels_x86(&v, llm__cpu_features());
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
    llm__cpu_kernels_x86(&v, llm__cpu_features());
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
