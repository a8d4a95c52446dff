/*
 * test_kernels_kquant.c -- the Q4_K and Q6_K dot products (llama.cpp's
 * vec_dot order, its repacked Q4_K gemv/gemm order and its tiled K-quant
 * order) and the Q8_K quantizer against the results of llama.cpp's own
 * kernels on the same bytes (golden rows), and the AVX2 variants against the
 * scalar reference on extreme blocks.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/kernels.h"
#include "dtype/blocks.h"
#include "golden_gen.h"
#include "packed_check.h"

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

/* Seeds in the script: seed(1000 + i) for dots, seed(2000 + i) for the
 * quantizer. */
/* Weight row (w) and Q8_K activation row (a) of dot case i. */
static void kqg_row(int i, llm_dtype t, int n, uint8_t *w, uint8_t *a) {
    uint32_t s = gold_seed(1000 + i);
    for (int b = 0; b < n / 256; b++) {
        if (t == LLM_DTYPE_Q4_K) {
            llm_block_q4_k *x = (llm_block_q4_k *)w + b;
            x->d = gold_half(&s, 0);
            x->dmin = gold_half(&s, 0);
            uint8_t *rest = x->scales; /* scales then qs: 140 bytes */
            for (int j = 0; j < 140; j++) rest[j] = gold_byte(&s);
        } else {
            llm_block_q6_k *x = (llm_block_q6_k *)w + b;
            uint8_t *p = x->ql; /* ql, qh, scales: 208 bytes */
            for (int j = 0; j < 208; j++) p[j] = gold_byte(&s);
            x->d = gold_half(&s, 1);
        }
    }
    for (int b = 0; b < n / 256; b++) gold_q8k_block(&s, (llm_block_q8_k *)a + b);
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
        llm__cpu_kernels_x86(&v, llm__cpu_features());
    } else {
        cr_log_info("CPU lacks AVX2/FMA/F16C: only the scalar Q4_K/Q6_K dots are checked against llama.cpp");
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
    llm__cpu_kernels_x86(&v, llm__cpu_features());
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
        const int e = 20 + (int)(gold_next(&s) % 12);
        for (int j = 0; j < 256; j++) {
            const int32_t m = (int32_t)(gold_next(&s) >> 8) - (1 << 23);
            blk[j] = (float)m * ldexpf(1.0f, -e); /* exact: 24-bit integer times 2^-e */
        }
        const int sh = (int)(gold_next(&s) % 8);
        if (kind == 1) {
            for (int j = 0; j < 256; j++) {
                const int k = (int)(gold_next(&s) % 201) - 100;
                blk[j] = ((float)k + 0.5f) * ldexpf(1.0f, -sh);
            }
            blk[0] = ((gold_next(&s) & 1) ? 127.0f : -127.0f) * ldexpf(1.0f, -sh);
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
    uint32_t s = gold_seed(2000 + i);
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
        llm__cpu_kernels_x86(&v, llm__cpu_features());
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

/* dot8 (kernels.h): 8 weight rows (w, stride wb) by n_a = 1..4 activation
 * rows starting at row a0 (stride ab) must give, bit for bit, want4 (the
 * pair's dot4, [act row][weight row]) when n_a == 4 and want1 (its dot)
 * otherwise, and write no other output. Tried: the registry's dot8 and each
 * built variant (AVX2; AVX-VNNI and AVX-512 when the CPU has them). */
static void kq_check_dot8(llm_dtype t, llm__vec_dot8_fn reg, int n, const uint8_t *w, size_t wb, const uint8_t *a,
                          size_t ab, int a0, const float (*want1)[8], const float (*want4)[8]) {
    for (int v = 0; v < 4; v++) {
        llm__vec_dot8_fn dot8 = v == 0 ? reg : llm__kq_dot8_variant(t, v - 1);
        if (!dot8) {
            cr_assert(v >= 2, "%s: dot8 variant %d missing", llm_dtype_name(t), v);
            continue; /* no AVX-VNNI / AVX-512 on this CPU (or no such form for t) */
        }
        for (int na = 1; na <= 4; na++) {
            float o8[5][8];
            memset(o8, 0xFF, sizeof o8);
            dot8(n, w, wb, a + (size_t)a0 * ab, ab, na, &o8[0][0], 8);
            for (int r = 0; r < 5; r++) {
                for (int col = 0; col < 8; col++) {
                    uint32_t bits;
                    memcpy(&bits, &o8[r][col], 4);
                    if (r >= na) {
                        cr_assert_eq(bits, 0xFFFFFFFFu, "%s n=%d dot8 n_a=%d wrote row %d", llm_dtype_name(t), n, na, r);
                        continue;
                    }
                    const float *want = na == 4 ? &want4[a0 + r][col] : &want1[a0 + r][col];
                    cr_assert(memcmp(&o8[r][col], want, sizeof(float)) == 0,
                              "%s n=%d dot8 variant %d n_a=%d [%d][%d]: %.9g, dot/dot4 %.9g", llm_dtype_name(t), n, v,
                              na, a0 + r, col, o8[r][col], *want);
                }
            }
        }
    }
}

/* A pair's packed tiles (kernels.h llm__pack8_fn; Q4_K's rows8, Q6_K's
 * tiled), which the AVX2 registry must have whatever its dot8: 8 rows (w,
 * stride wb) packed, then by 4 activation rows (a, stride ab) must give
 * want4 (the pair's dot4, [act row][weight row]) bit for bit, with every
 * packed product built and supported here (AVX2; AVX-512 VNNI), one of
 * which is the registered one, and its 16-row product where it has one. */
static void kq_check_packed(const struct llm__dot_pair *pr, llm_dtype t, int n, const uint8_t *w, size_t wb,
                            const uint8_t *a, size_t ab, const float (*want4)[8]) {
    const llm__vec_dot8x4_packed_fn prods[2] = {llm__kq_packed_variant(t, 0), llm__kq_packed_variant(t, 1)};
    packed_check_variants(pr, llm_dtype_name(t), n, w, wb, a, ab, want4, prods, 2);
    cr_assert_eq(pr->dot16x4_packed, llm__kq_packed16_variant(t), "%s: the 16-row product is not the built one",
                 llm_dtype_name(t));
    if (pr->dot16x4_packed) packed16_check(pr, llm_dtype_name(t), n, w, wb, a, ab, want4);
}

Test(kernels, q4k_repacked_orders_match_llamacpp) {
    llm__cpu_kernels s;
    llm__cpu_kernels_scalar(&s); /* its Q8_K quantizer is llama.cpp's bit for bit */
#if defined(__x86_64__) /* kernels/kquant_x86_256.c is an AVX2 build there */
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
        uint32_t st = gold_seed(3000 + c / 2);
        for (int b = 0; b < 8 * n / 256; b++) {
            llm_block_q4_k *blk = (llm_block_q4_k *)w + b;
            blk->d = gold_half(&st, 0);
            blk->dmin = gold_half(&st, 0);
            uint8_t *rest = blk->scales;
            for (int j = 0; j < 140; j++) rest[j] = gold_byte(&st);
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
#if defined(__x86_64__)
        {
            llm__cpu_kernels v;
            llm__cpu_kernels_scalar(&v);
            llm__cpu_kernels_x86(&v, llm__cpu_features());
            cr_assert_not_null(v.rows8[LLM_DTYPE_Q4_K].dot8, "no Q4_K rows8 dot8 registered");
            kq_check_dot8(LLM_DTYPE_Q4_K, v.rows8[LLM_DTYPE_Q4_K].dot8, n, w, wb, a, ab, 0, (const float (*)[8])gv,
                          (const float (*)[8])gm);
            kq_check_packed(&v.rows8[LLM_DTYPE_Q4_K], LLM_DTYPE_Q4_K, n, w, wb, a, ab, (const float (*)[8])gm);
        }
#endif
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

/* The 4 Q8_K activation rows of the packed extreme tests: all -128, all
 * 127, alternating, random (from st); d growing with the row. */
static void q8k_extreme_rows(uint8_t *a, size_t ab, int n, uint32_t *st) {
    for (int j = 0; j < 4; j++) {
        for (int b = 0; b < n / 256; b++) {
            llm_block_q8_k *y = (llm_block_q8_k *)(a + (size_t)j * ab) + b;
            y->d = 0.03125f * (float)(1 + j);
            for (int e = 0; e < 256; e++) {
                y->qs[e] = (int8_t)(j == 0 ? -128 : j == 1 ? 127 : j == 2 ? ((e & 1) ? 127 : -128) : gold_q8(st));
            }
            for (int k = 0; k < 16; k++) {
                int sum = 0;
                for (int e = 0; e < 16; e++) sum += y->qs[16 * k + e];
                y->bsums[k] = (int16_t)sum;
            }
        }
    }
}

/* The packed Q4_K tiles at the int16 limit: nibbles 15 against activations
 * all -128 (or all 127, or alternating 127 / -128) put 16 products of
 * 15 * -128 = -30720 in an int16 sum, the most the packed product's argument
 * allows; 6-bit scales and mins at 63 or random. The 8 rows and the
 * super-blocks differ (pattern (r + b) % 8, d and dmin per row), as do the 4
 * activation rows, so a lane, chunk or block that lands in the wrong place
 * fails too. Must equal dot4 bit for bit. */
Test(kernels, q4k_packed_extreme_blocks) {
#if defined(__x86_64__)
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C");
    }
    llm__cpu_kernels v;
    llm__cpu_kernels_scalar(&v);
    llm__cpu_kernels_x86(&v, llm__cpu_features());
    /* Per pattern: the qs byte (0xFF: both nibbles 15; 0x0F / 0xF0: one of
     * the pair's sub-blocks at 15, the other 0; -1: random) and the 12
     * scale bytes (0xFF: every scale and min 63; -1: random). */
    static const struct {
        int qbyte, scbyte;
    } pats[8] = {{0xFF, 0xFF}, {0xFF, -1}, {0x0F, 0xFF}, {0xF0, 0xFF}, {0xFF, 0xFF}, {-1, 0xFF}, {0x0F, -1}, {-1, -1}};
    const int n = 768;
    size_t wb, ab;
    llm_dtype_row_size(LLM_DTYPE_Q4_K, (uint64_t)n, &wb);
    llm_dtype_row_size(LLM_DTYPE_Q8_K, (uint64_t)n, &ab);
    uint8_t *w = malloc(8 * wb), *a = malloc(4 * ab);
    uint32_t st = gold_seed(6000);
    for (int r = 0; r < 8; r++) {
        for (int b = 0; b < n / 256; b++) {
            llm_block_q4_k *x = (llm_block_q4_k *)(w + (size_t)r * wb) + b;
            const int p = (r + b) % 8;
            for (int j = 0; j < 128; j++) x->qs[j] = (uint8_t)(pats[p].qbyte < 0 ? gold_byte(&st) : pats[p].qbyte);
            for (int j = 0; j < 12; j++) x->scales[j] = (uint8_t)(pats[p].scbyte < 0 ? gold_byte(&st) : pats[p].scbyte);
            x->d = llm_fp32_to_fp16(0.0625f * (float)(1 + r));
            x->dmin = llm_fp32_to_fp16(0.5f / (float)(1 + r));
        }
    }
    q8k_extreme_rows(a, ab, n, &st);
    float want[4][8];
    for (int col = 0; col < 8; col++) {
        float o[4];
        v.rows8[LLM_DTYPE_Q4_K].dot4(n, w + (size_t)col * wb, a, ab, o);
        for (int j = 0; j < 4; j++) want[j][col] = o[j];
    }
    kq_check_packed(&v.rows8[LLM_DTYPE_Q4_K], LLM_DTYPE_Q4_K, n, w, wb, a, ab, (const float (*)[8])want);
    free(w); free(a);
#else
    cr_skip_test("x86-64 only");
#endif
}

/* The packed Q6_K tiles (and the tiled pair's dot8) at the int16 limit and
 * the scales' extremes: quants all 63 (all 6 bits set) or all 0, scales 127
 * or -128, activations all -128, all 127 or alternating. Quants 63 against
 * -128 put 4 products of -8064 (-32256) in each int16 sum, the most the
 * packed product allows. The 8 rows and the super-blocks differ (pattern
 * (r + b) % 8, d growing with r), so a lane or block that lands in the
 * wrong place fails too. Must equal the tiled dot4 (and dot) bit for bit. */
Test(kernels, q6k_packed_extreme_blocks) {
#if defined(__x86_64__)
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C");
    }
    llm__cpu_kernels v;
    llm__cpu_kernels_scalar(&v);
    llm__cpu_kernels_x86(&v, llm__cpu_features());
    const llm_dtype t = LLM_DTYPE_Q6_K;
    /* Per pattern: the ql / qh byte (-1: random) and the scales (0: 127,
     * 1: -128, 2: alternating, 3: random). */
    static const struct {
        int qbyte, sc;
    } pats[8] = {{0xFF, 0}, {0xFF, 1}, {0x00, 0}, {0x00, 1}, {0xFF, 2}, {0x00, 2}, {0xA5, 1}, {-1, 3}};
    const int n = 768;
    size_t wb, ab;
    llm_dtype_row_size(t, (uint64_t)n, &wb);
    llm_dtype_row_size(LLM_DTYPE_Q8_K, (uint64_t)n, &ab);
    uint8_t *w = malloc(8 * wb), *a = malloc(4 * ab);
    uint32_t st = gold_seed(5000);
    for (int r = 0; r < 8; r++) {
        for (int b = 0; b < n / 256; b++) {
            llm_block_q6_k *x = (llm_block_q6_k *)(w + (size_t)r * wb) + b;
            const int p = (r + b) % 8;
            uint8_t *q = x->ql; /* ql, qh: 192 bytes */
            for (int j = 0; j < 192; j++) q[j] = (uint8_t)(pats[p].qbyte < 0 ? gold_byte(&st) : pats[p].qbyte);
            for (int j = 0; j < 16; j++) {
                const int sc = pats[p].sc;
                x->scales[j] = (int8_t)(sc == 0 ? 127 : sc == 1 ? -128 : sc == 2 ? ((j & 1) ? 127 : -128) : gold_byte(&st));
            }
            x->d = llm_fp32_to_fp16(0.0625f * (float)(1 + r));
        }
    }
    q8k_extreme_rows(a, ab, n, &st);
    float want1[4][8], want4[4][8];
    for (int col = 0; col < 8; col++) {
        float o[4];
        v.tiled[t].dot4(n, w + (size_t)col * wb, a, ab, o);
        for (int j = 0; j < 4; j++) {
            want4[j][col] = o[j];
            want1[j][col] = v.tiled[t].dot(n, w + (size_t)col * wb, a + (size_t)j * ab);
        }
    }
    kq_check_dot8(t, v.tiled[t].dot8, n, w, wb, a, ab, 0, (const float (*)[8])want1, (const float (*)[8])want4);
    kq_check_packed(&v.tiled[t], t, n, w, wb, a, ab, (const float (*)[8])want4);
    free(w); free(a);
#else
    cr_skip_test("x86-64 only");
#endif
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
#if defined(__x86_64__) /* kernels/kquant_x86_256.c is an AVX2 build there */
    if (!simd) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C: the tiled-order dots are not callable");
    }
#endif
    if (simd) llm__cpu_kernels_x86(&v, llm__cpu_features());
    for (int c = 0; c < (int)(sizeof(g_kq_tiled_golden) / sizeof(g_kq_tiled_golden[0])); c += 2) {
        const llm_dtype t = g_kq_tiled_golden[c].t;
        const int n = g_kq_tiled_golden[c].n, q6 = t == LLM_DTYPE_Q6_K, q5 = t == LLM_DTYPE_Q5_K;
        size_t wb, ab;
        llm_dtype_row_size(t, (uint64_t)n, &wb);
        llm_dtype_row_size(LLM_DTYPE_Q8_K, (uint64_t)n, &ab);
        uint8_t *w = malloc(8 * wb), *a = malloc(8 * ab);
        float *x = malloc(sizeof(float) * 8 * (size_t)n);
        /* The script's weights(t, 8 n) then quant_row(0, 8 n) from seed(4000 + case). */
        uint32_t st = gold_seed(4000 + c / 2);
        for (int b = 0; b < 8 * n / 256; b++) {
            if (q6) {
                llm_block_q6_k *blk = (llm_block_q6_k *)w + b;
                uint8_t *p = blk->ql;
                for (int j = 0; j < 208; j++) p[j] = gold_byte(&st);
                blk->d = gold_half(&st, 1);
            } else if (q5) {
                llm_block_q5_k *blk = (llm_block_q5_k *)w + b;
                blk->d = gold_half(&st, 0);
                blk->dmin = gold_half(&st, 0);
                uint8_t *rest = blk->scales; /* scales, qh, qs: 172 bytes */
                for (int j = 0; j < 172; j++) rest[j] = gold_byte(&st);
            } else {
                llm_block_q4_k *blk = (llm_block_q4_k *)w + b;
                blk->d = gold_half(&st, 0);
                blk->dmin = gold_half(&st, 0);
                uint8_t *rest = blk->scales;
                for (int j = 0; j < 140; j++) rest[j] = gold_byte(&st);
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
        if (q6 && simd) { /* the Q6_K tiled pair's dot8: the same bits for 1..4 rows */
            cr_assert_not_null(v.tiled[t].dot8, "no Q6_K tiled dot8 registered");
            kq_check_dot8(t, v.tiled[t].dot8, n, w, wb, a, ab, 0, (const float (*)[8])tiled, (const float (*)[8])tiled4);
            kq_check_dot8(t, v.tiled[t].dot8, n, w, wb, a, ab, 4, (const float (*)[8])tiled, (const float (*)[8])tiled4);
            /* and its packed tiles: activation rows 0..3, then 4..7 */
            kq_check_packed(&v.tiled[t], t, n, w, wb, a, ab, (const float (*)[8])tiled4);
            kq_check_packed(&v.tiled[t], t, n, w, wb, a + 4 * ab, ab, (const float (*)[8])&tiled4[4][0]);
        }
        if (q5 && simd) { /* Q5_K's packed tiles (cpu/kernels/kquant_tile.h) */
            kq_check_packed(&v.tiled[t], t, n, w, wb, a, ab, (const float (*)[8])tiled4);
            kq_check_packed(&v.tiled[t], t, n, w, wb, a + 4 * ab, ab, (const float (*)[8])&tiled4[4][0]);
        }
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

/* Prepared Q4_K, Q6_K, Q5_K, Q2_K and Q3_K weights (llm_backend_prepare_weight,
 * kernels.h prep; kernels/prep_kquant_x86_512.c) give the unprepared matmul's bits
 * for 1..13, 32 and 35 activation rows: Q4_K the rows8 pair's (llama.cpp's repacked
 * gemm for groups of 4 rows, its gemv for the rest), the others both of
 * their orders (vec_dot's below 8 rows, llama.cpp's tiled one from 8); the
 * tests above check those against llama.cpp. Blocks of random bytes (every
 * byte pattern is a valid block: Q4_K / Q5_K scales and mins up to 63,
 * quants up to 15 / 31, Q6_K scales -128..127 and quants 0..63, Q2_K any
 * nibbles and quants 0..3, Q3_K scales -32..31 and quants -4..3), one row of
 * all-ones bytes (Q3_K: and one of zeros, scales -32 and quants -4),
 * fp16 scales of moderate size. */
static void kquant_prepared_check(llm_kernels sel, int level, int n_types) {
    llm_backend *be = prep_backend_k(sel);
    const int64_t M = 48;
    for (int v = 0; v < n_types; v++) {
        const llm_dtype t = v == 4   ? LLM_DTYPE_Q3_K
                            : v == 3 ? LLM_DTYPE_Q2_K
                            : v == 2 ? LLM_DTYPE_Q5_K
                            : v      ? LLM_DTYPE_Q6_K
                                     : LLM_DTYPE_Q4_K;
        const size_t bsz = v == 4   ? sizeof(llm_block_q3_k)
                           : v == 3 ? sizeof(llm_block_q2_k)
                           : v == 2 ? sizeof(llm_block_q5_k)
                           : v      ? sizeof(llm_block_q6_k)
                                    : sizeof(llm_block_q4_k);
        int kept_any = 0;
        uint32_t st = v == 4 ? 0xACE1357u : v == 3 ? 0x13579BDu : v == 2 ? 0x2468ACEu : v ? 0x7654321u : 0x1234567u;
        for (int64_t K = 256; K <= 2048; K *= 8) {
            const int64_t nb = K / LLM_QK_K;
            char *w = malloc(bsz * (size_t)(M * nb));
            float *x = malloc(sizeof(float) * (size_t)(PREP_ROWS_MAX * K));
            cr_assert(w && x);
            prep_random_bytes(w, bsz * (size_t)(M * nb), &st);
            for (int64_t b = 0; b < M * nb; b++) {
                uint32_t r;
                prep_random_bytes(&r, sizeof r, &st);
                const uint16_t d =
                    llm_fp32_to_fp16(ldexpf(1.0f + (float)(r % 1000) / 1000.0f, -8 - 2 * (v == 1) - (int)(r >> 29)));
                if (v == 4) {
                    llm_block_q3_k *q = (llm_block_q3_k *)w + b;
                    q->d = d;
                    if (b / nb == 13) {
                        memset(q->qs, 0xFF, sizeof q->qs);
                        memset(q->hmask, 0xFF, sizeof q->hmask);
                        memset(q->scales, 0xFF, sizeof q->scales);
                    } else if (b / nb == 14) {
                        memset(q->qs, 0, sizeof q->qs);
                        memset(q->hmask, 0, sizeof q->hmask);
                        memset(q->scales, 0, sizeof q->scales);
                    }
                } else if (v == 3) {
                    llm_block_q2_k *q = (llm_block_q2_k *)w + b;
                    q->d = d;
                    q->dmin = llm_fp32_to_fp16(ldexpf(1.0f + (float)((r >> 10) % 1000) / 1000.0f, -9 - (int)((r >> 24) % 4)));
                    if (b / nb == 11) {
                        memset(q->qs, 0xFF, sizeof q->qs);
                        memset(q->scales, 0xFF, sizeof q->scales);
                    }
                } else if (v == 2) {
                    llm_block_q5_k *q = (llm_block_q5_k *)w + b;
                    q->d = d;
                    q->dmin = llm_fp32_to_fp16(ldexpf(1.0f + (float)((r >> 10) % 1000) / 1000.0f, -9 - (int)((r >> 24) % 4)));
                    if (b / nb == 9) {
                        memset(q->qs, 0xFF, sizeof q->qs);
                        memset(q->qh, 0xFF, sizeof q->qh);
                        memset(q->scales, 0xFF, sizeof q->scales);
                    }
                } else if (v) {
                    llm_block_q6_k *q = (llm_block_q6_k *)w + b;
                    q->d = d;
                    if (b / nb == 7) {
                        memset(q->ql, 0xFF, sizeof q->ql);
                        memset(q->qh, 0xFF, sizeof q->qh);
                    }
                } else {
                    llm_block_q4_k *q = (llm_block_q4_k *)w + b;
                    q->d = d;
                    q->dmin = llm_fp32_to_fp16(ldexpf(1.0f + (float)((r >> 10) % 1000) / 1000.0f, -9 - (int)((r >> 24) % 4)));
                    if (b / nb == 5) {
                        memset(q->qs, 0xFF, sizeof q->qs);
                        memset(q->scales, 0xFF, sizeof q->scales);
                    }
                }
            }
            for (int64_t i = 0; i < PREP_ROWS_MAX * K; i++) x[i] = sinf((float)i * (v == 4 ? 0.41f : v == 3 ? 0.31f : v == 2 ? 0.29f : v ? 0.23f : 0.37f)) * (i % 97 == 0 ? 40.0f : 1.0f);
            /* Q2_K: activations of one sign, so the mins' total is large
             * enough that the tiled order's one-rounding epilogue shows */
            for (int64_t i = 0; v == 3 && i < PREP_ROWS_MAX * K; i++) x[i] = fabsf(x[i]);
            kept_any |= prepared_check(be, t, K, M, w, x);
            free(w);
            free(x);
        }
        prep_none_kept_at(kept_any, t, level);
    }
    llm_backend_free(be);
}

Test(kernels, kquant_prepared_weights_match_unprepared) { kquant_prepared_check(LLM_KERNELS_AUTO, LLM__ISA_ALL, 5); }

/* The same with the kernels an older CPU gets (capped on this one: AVX2
 * alone, AVX2 + AVX-VNNI), where Q4_K is the one prepared K-quant (256-bit
 * products, kernels/prep_kquant_x86_512.c q4kr_dot_avx2 / _avxvnni). */
Test(kernels, kquant_prepared_weights_match_unprepared_capped) {
    kquant_prepared_check(LLM_KERNELS_AVX2, LLM__ISA_AVX2, 1);
    kquant_prepared_check(LLM_KERNELS_AVX_VNNI, LLM__ISA_AVX_VNNI, 1);
}
