/*
 * test_kernels_q4_0.c -- the Q4_0 rows8 pair (kernels/q4_0_x86_256.c) against
 * llama.cpp's repacked Q4_0 kernels, the ones it runs for Q4_0 weights with a
 * multiple of 8 rows on AVX2 CPUs (see kernels.h, rows8).
 *
 * Golden values: scripts/golden/kernels/q4_0_llamacpp.py, which builds the
 * same weight and activation rows from the same xorshift32 stream (q40_*
 * below mirror its weights() / floats()), repacks the weights with llama.cpp's
 * own repack<block_q4_0, 8, 8> and runs ggml_gemv_q4_0_8x8_q8_0 (one
 * activation row at a time) and ggml_gemm_q4_0_8x8_q8_0 (four at once) from
 * the libggml-cpu.so llama-cpp-python 0.3.36 ships. Also checked: our Q8_0
 * activation quantizer gives llama.cpp's quantize_row_q8_0 bytes, and the
 * plain vec_dot order (the registry's dot) is not what the golden wants on
 * these rows, so the test would notice a rows8 pair that fell back to it.
 * The pair's dot8 (eight weight rows at once) must give the same bits.
 *
 * Also here (same generator): the F16 / BF16 sgemm pairs and the BF16 dot
 * (kernels/sgemm_x86_256.c) against llama.cpp's own ggml_mul_mat of 8 weight
 * rows by 4 activation rows (its llamafile sgemm) and by 1 row (its vec_dot);
 * golden from scripts/golden/kernels/sgemm_llamacpp.py. And the Q3_K and
 * Q2_K dots (kernels/q3_k_x86_256.c, kernels/q2_k_x86_256.c) against
 * ggml_vec_dot_q3_K_q8_K / ggml_vec_dot_q2_K_q8_K
 * (scripts/golden/kernels/q3k_llamacpp.py, q2k_llamacpp.py), and their tiled
 * pairs against llama.cpp's ggml_mul_mat of 8 x 8 rows (its tiled K-quant
 * kernel).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/kernels.h"
#include "dtype/blocks.h"
#include "packed_check.h"

static const struct {
    int n;
    uint64_t act_hash;  /* FNV-1a 64 of the 4 rows' quantize_row_q8_0 bytes */
    uint64_t hash[2];   /* gemv, gemm: FNV-1a 64 of the 32 outputs [act row][weight row] */
    uint32_t first[2];  /* their first output's bits */
} g_q40_golden[] = {
    {32, 0xD3378BCE9C1870A4ULL, {0x227E525D4AD2325EULL, 0x227E525D4AD2325EULL}, {0xC12C972Bu, 0xC12C972Bu}}, /* first -10.7869062, -10.7869062 */
    {576, 0x0869EEEF756E64B5ULL, {0x0FBAECC137BD87E4ULL, 0x0FBAECC137BD87E4ULL}, {0xC19643E3u, 0xC19643E3u}}, /* first -18.7831478, -18.7831478 */
    {1536, 0x7C7F763721920FF9ULL, {0x9C1AFAC628D746FEULL, 0x9C1AFAC628D746FEULL}, {0xC13D32C8u, 0xC13D32C8u}}, /* first -11.8248978, -11.8248978 */
    {4096, 0x2A45821DEAB2A0EAULL, {0xD5D79FA4FEEFDBA6ULL, 0xD5D79FA4FEEFDBA6ULL}, {0x4312C238u, 0x4312C238u}}, /* first 146.758667, 146.758667 */
};

static uint32_t q40_next(uint32_t *s) {
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *s = x;
    return x;
}

static uint64_t q40_fnv(const uint8_t *p, size_t len) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001B3ull;
    }
    return h;
}

/* The script's weights(): fp16 d with exponent 8..14 and a random sign, 16 bytes. */
static void q40_weights(uint32_t *st, llm_block_q4_0 *w, int n_blocks) {
    for (int b = 0; b < n_blocks; b++) {
        uint32_t r = q40_next(st);
        w[b].d = (uint16_t)(((8 + r % 7) << 10) | ((r >> 8) & 0x3FF) | (((r >> 20) & 1) ? 0x8000 : 0));
        for (int j = 0; j < 16; j++) w[b].qs[j] = (uint8_t)(q40_next(st) >> 24);
    }
}

/* The script's floats(): per block of 32 a scale 2^-(20..27), exact products. */
static void q40_floats(uint32_t *st, float *x, int n) {
    for (int b = 0; b < n / 32; b++) {
        int e = 20 + (int)(q40_next(st) % 8);
        for (int i = 0; i < 32; i++) {
            int32_t v = (int32_t)(q40_next(st) >> 8) - (1 << 23);
            x[b * 32 + i] = (float)v * ldexpf(1.0f, -e);
        }
    }
}

/* Every packed tile set built and supported here (kernels.h
 * llm__q4_0_packed_pair: AVX2; AVX-VNNI; AVX-512 with its 16-row product)
 * against want4 (dot4's outputs, [act row][weight row]), bit for bit, and
 * the registry's must be one of them. */
static void q40_check_packed(const llm__cpu_kernels *k, int n, const void *w, size_t wb, const uint8_t *a,
                             size_t ab, const float (*want4)[8]) {
    const struct llm__dot_pair *reg = &k->rows8[LLM_DTYPE_Q4_0];
    int registered = 0;
    for (int v = 0; v < 3; v++) {
        struct llm__dot_pair p;
        const int ok = llm__q4_0_packed_pair(v, &p);
        cr_assert(v > 0 || ok, "Q4_0: the AVX2 packed tiles are missing");
        if (!ok) continue;
        registered |= p.pack8 == reg->pack8 && p.dot8x4_packed == reg->dot8x4_packed &&
                      p.dot16x4_packed == reg->dot16x4_packed;
        char name[40];
        snprintf(name, sizeof name, "Q4_0 packed variant %d", v);
        packed_check(&p, name, n, w, wb, a, ab, want4);
        if (p.dot16x4_packed) packed16_check(&p, name, n, w, wb, a, ab, want4);
    }
    cr_assert(registered, "Q4_0: the registered tiles are none of the variants");
}

Test(kernels_q4_0, rows8_pair_matches_llamacpp_repacked) {
    llm__cpu_kernels k;
    llm__cpu_kernels_scalar(&k);
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C: llama.cpp does not repack Q4_0 there either");
    }
    llm__cpu_kernels_x86(&k, llm__cpu_features());
    cr_assert_not_null(k.rows8[LLM_DTYPE_Q4_0].dot, "no Q4_0 rows8 pair registered");
    cr_assert_not_null(k.rows8[LLM_DTYPE_Q4_0].dot4);
    cr_assert_eq(k.act_type[LLM_DTYPE_Q4_0], LLM_DTYPE_Q8_0);
    int vec_dot_differs = 0;
    for (int c = 0; c < (int)(sizeof(g_q40_golden) / sizeof(g_q40_golden[0])); c++) {
        const int n = g_q40_golden[c].n;
        const size_t wb = (size_t)n / 32 * sizeof(llm_block_q4_0), ab = (size_t)n / 32 * sizeof(llm_block_q8_0);
        llm_block_q4_0 *w = malloc(8 * wb);                 /* [8 weight rows][n / 32] */
        uint8_t *a = malloc(4 * ab);                        /* [4 act rows][n / 32] Q8_0 */
        float *x = malloc(sizeof(float) * 4 * (size_t)n);   /* [4][n] */
        cr_assert(w && a && x);
        uint32_t st = 0x9E3779B9u ^ (uint32_t)((uint32_t)(5000 + c) * 0x85EBCA6Bu);
        q40_weights(&st, w, 8 * n / 32);
        q40_floats(&st, x, 4 * n);
        for (int r = 0; r < 4; r++) k.quantize[LLM_DTYPE_Q8_0](x + (size_t)r * (size_t)n, a + (size_t)r * ab, n);
        cr_assert_eq(q40_fnv(a, 4 * ab), g_q40_golden[c].act_hash, "n=%d: Q8_0 activations differ from llama.cpp's",
                     n);
        float gv[4][8], gm[4][8]; /* [act row][weight row] */
        for (int col = 0; col < 8; col++) {
            const uint8_t *wr = (const uint8_t *)w + (size_t)col * wb;
            for (int r = 0; r < 4; r++) {
                gv[r][col] = k.rows8[LLM_DTYPE_Q4_0].dot(n, wr, a + (size_t)r * ab);
                float v = k.dot[LLM_DTYPE_Q4_0](n, wr, a + (size_t)r * ab);
                vec_dot_differs |= memcmp(&v, &gv[r][col], sizeof(v)) != 0;
            }
            float o[4];
            k.rows8[LLM_DTYPE_Q4_0].dot4(n, wr, a, ab, o);
            for (int r = 0; r < 4; r++) gm[r][col] = o[r];
        }
        /* dot8: eight weight rows at once, the same bits as dot4 (4 rows) and dot (1..3 rows). */
        cr_assert_not_null(k.rows8[LLM_DTYPE_Q4_0].dot8);
        cr_assert_not_null(k.rows8[LLM_DTYPE_Q4_0].dot8_stream);
        for (int v = 0; v < 4; v++) { /* the registry's, the AVX2 and AVX-VNNI variants, the stream form */
            llm__vec_dot8_fn dot8 = v == 0   ? k.rows8[LLM_DTYPE_Q4_0].dot8
                                    : v == 3 ? k.rows8[LLM_DTYPE_Q4_0].dot8_stream
                                             : llm__q4_0_dot8_variant(v - 1);
            if (!dot8) {
                continue; /* VNNI not on this CPU */
            }
            for (int na = 1; na <= 4; na++) {
                float o8[4][8];
                memset(o8, 0xFF, sizeof o8);
                dot8(n, w, wb, a, ab, na, &o8[0][0], 8);
                for (int r = 0; r < 4; r++) {
                    for (int col = 0; col < 8; col++) {
                        const float *want = na == 4 ? &gm[r][col] : &gv[r][col];
                        uint32_t bits;
                        memcpy(&bits, &o8[r][col], 4);
                        if (r < na) {
                            cr_assert(memcmp(&o8[r][col], want, sizeof(float)) == 0,
                                      "n=%d dot8 variant %d n_a=%d [%d][%d]: %.9g, dot/dot4 %.9g", n, v, na, r, col,
                                      o8[r][col], *want);
                        } else {
                            cr_assert_eq(bits, 0xFFFFFFFFu, "n=%d dot8 n_a=%d wrote row %d", n, na, r);
                        }
                    }
                }
            }
        }
        /* packed tiles: dot4's bits, which the golden below checks */
        q40_check_packed(&k, n, w, wb, a, ab, (const float (*)[8])gm);
        for (int m = 0; m < 2; m++) {
            const float *o = m ? &gm[0][0] : &gv[0][0];
            uint32_t first;
            memcpy(&first, o, 4);
            cr_assert_eq(first, g_q40_golden[c].first[m], "n=%d %s: first %08x, llama.cpp %08x", n,
                         m ? "gemm" : "gemv", first, g_q40_golden[c].first[m]);
            cr_assert_eq(q40_fnv((const uint8_t *)o, 32 * sizeof(float)), g_q40_golden[c].hash[m],
                         "n=%d %s: outputs differ from llama.cpp's", n, m ? "gemm" : "gemv");
        }
        free(w);
        free(a);
        free(x);
    }
    /* Otherwise these rows could not tell the two orders apart. */
    cr_assert(vec_dot_differs, "the registry's vec_dot order gave the same bits on every golden row");
}

/* The packed Q4_0 tiles at their int16 limit: every weight q - 8 = -8 (or
 * 7) against activation bytes 127 (sent in as 255), so each int16
 * accumulator holds 16 products of -8 * 255 (-32640, the most negative the
 * packed product's argument allows) or 7 * 255; also -127, 0 and an
 * alternation of the extremes (the Q8_0 quantizer writes -127..127; dot4,
 * like llama.cpp's kernels, does not take -128). Must equal dot4 bit for
 * bit. */
Test(kernels_q4_0, packed_tiles_extreme_blocks) {
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C");
    }
    llm__cpu_kernels k;
    llm__cpu_kernels_scalar(&k);
    llm__cpu_kernels_x86(&k, llm__cpu_features());
    const int n = 1024;
    const size_t wb = (size_t)n / 32 * sizeof(llm_block_q4_0), ab = (size_t)n / 32 * sizeof(llm_block_q8_0);
    llm_block_q4_0 *w = malloc(8 * wb);
    llm_block_q8_0 *a = malloc(4 * ab);
    cr_assert(w && a);
    const uint8_t wpat[3] = {0x00, 0xFF, 0x0F};
    const int8_t ypat[3] = {127, -127, 0};
    for (int pw = 0; pw < 3; pw++) {
        for (int py = 0; py < 4; py++) {
            for (int b = 0; b < 8 * n / 32; b++) {
                w[b].d = llm_fp32_to_fp16(b % 3 ? 0.0625f : -0.125f);
                memset(w[b].qs, wpat[pw], 16);
            }
            for (int b = 0; b < 4 * n / 32; b++) {
                a[b].d = llm_fp32_to_fp16(b % 2 ? 0.25f : 0.03125f);
                for (int i = 0; i < 32; i++) a[b].qs[i] = py < 3 ? ypat[py] : (int8_t)((i & 1) ? 127 : -127);
            }
            float want[4][8];
            for (int col = 0; col < 8; col++) {
                float o[4];
                k.rows8[LLM_DTYPE_Q4_0].dot4(n, (const uint8_t *)w + (size_t)col * wb, a, ab, o);
                for (int r = 0; r < 4; r++) want[r][col] = o[r];
            }
            q40_check_packed(&k, n, w, wb, (const uint8_t *)a, ab, (const float (*)[8])want);
        }
    }
    free(w);
    free(a);
}

/* llama.cpp's ggml_mul_mat, F16 / BF16 weights: 4 activation rows (sgemm,
 * i.e. tinyBLAS) and the first row alone (vec_dot); FNV-1a 64 of the outputs'
 * float bits in [activation row][weight row] order and the first output.
 * Made by scripts/golden/kernels/sgemm_llamacpp.py. */
static const struct {
    llm_dtype type;
    int n, rows;
    uint64_t hash;
    uint32_t first;
} g_sgemm_golden[] = {
    {LLM_DTYPE_F16, 64, 4, 0x7B3D38858CED0791ULL, 0xC410749Bu}, /* sgemm, first -577.82196 */
    {LLM_DTYPE_F16, 64, 1, 0x94872BA54BC353F5ULL, 0xC410749Au}, /* vec_dot, first -577.821899 */
    {LLM_DTYPE_F16, 576, 4, 0x723441E6F51160A0ULL, 0xC5113071u}, /* sgemm, first -2323.02759 */
    {LLM_DTYPE_F16, 576, 1, 0xEB16BCB52884B2FDULL, 0xC5113072u}, /* vec_dot, first -2323.02783 */
    {LLM_DTYPE_F16, 1536, 4, 0x43772CE438F4A3BBULL, 0xC502FE45u}, /* sgemm, first -2095.89185 */
    {LLM_DTYPE_F16, 1536, 1, 0xA668CB5FF132135FULL, 0xC502FE45u}, /* vec_dot, first -2095.89185 */
    {LLM_DTYPE_BF16, 64, 4, 0x1D0B393C941D2258ULL, 0x41896E82u}, /* sgemm, first 17.1789589 */
    {LLM_DTYPE_BF16, 64, 1, 0xC913B65530861027ULL, 0x41896E82u}, /* vec_dot, first 17.1789589 */
    {LLM_DTYPE_BF16, 576, 4, 0xC5FB2543793B0F0BULL, 0xC3EDF5AEu}, /* sgemm, first -475.919373 */
    {LLM_DTYPE_BF16, 576, 1, 0xE88D4EB97D3DE26CULL, 0xC3EDF5B1u}, /* vec_dot, first -475.919464 */
    {LLM_DTYPE_BF16, 1544, 4, 0xC0FC7FE5586C6656ULL, 0x4319E8D8u}, /* sgemm, first 153.909546 */
    {LLM_DTYPE_BF16, 1544, 1, 0xDD3DF6214A6AE73BULL, 0x4319E8DEu}, /* vec_dot, first 153.909637 */
};

/* The script's weights(): finite halves (exponent 10..20) or bfloat16s
 * (exponent 122..132) with random sign and mantissa. */
static void sg_weights(uint32_t *st, llm_dtype t, uint16_t *w, int count) {
    for (int i = 0; i < count; i++) {
        uint32_t r = q40_next(st);
        uint32_t sign = ((r >> 20) & 1) ? 0x8000u : 0u;
        w[i] = t == LLM_DTYPE_F16 ? (uint16_t)(((10 + r % 11) << 10) | ((r >> 8) & 0x3FF) | sign)
                                  : (uint16_t)(((122 + r % 11) << 7) | ((r >> 8) & 0x7F) | sign);
    }
}

Test(kernels_q4_0, f16_bf16_sgemm_and_vec_dot_match_llamacpp) {
    llm__cpu_kernels k;
    llm__cpu_kernels_scalar(&k);
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C: the tinyBLAS-order dots are not built");
    }
    llm__cpu_kernels_x86(&k, llm__cpu_features());
    for (int c = 0; c < (int)(sizeof(g_sgemm_golden) / sizeof(g_sgemm_golden[0])); c += 2) {
        const llm_dtype t = g_sgemm_golden[c].type;
        const int n = g_sgemm_golden[c].n;
        cr_assert_not_null(k.sgemm[t].dot);
        cr_assert_not_null(k.sgemm[t].dot4);
        cr_assert_eq(k.act_type[t], t);
        uint16_t *w = malloc(sizeof(uint16_t) * 8 * (size_t)n); /* [8 weight rows][n] */
        uint16_t *a = malloc(sizeof(uint16_t) * 4 * (size_t)n); /* [4 act rows][n], weight type */
        float *x = malloc(sizeof(float) * 4 * (size_t)n);       /* [4][n] */
        cr_assert(w && a && x);
        uint32_t st = 0x9E3779B9u ^ (uint32_t)((uint32_t)(6000 + c / 2) * 0x85EBCA6Bu);
        sg_weights(&st, t, w, 8 * n);
        q40_floats(&st, x, 4 * n);
        for (int r = 0; r < 4; r++) k.quantize[t](x + (size_t)r * (size_t)n, a + (size_t)r * (size_t)n, n);
        const size_t ab = sizeof(uint16_t) * (size_t)n;
        float gm[4][8], gv[8]; /* [act row][weight row] */
        for (int col = 0; col < 8; col++) {
            const uint16_t *wr = w + (size_t)col * (size_t)n;
            float o[4];
            k.sgemm[t].dot4(n, wr, a, ab, o);
            for (int r = 0; r < 4; r++) {
                gm[r][col] = o[r];
                float one = k.sgemm[t].dot(n, wr, a + (size_t)r * (size_t)n);
                cr_assert_eq(memcmp(&one, &o[r], sizeof(one)), 0, "%s n=%d: sgemm dot4 != dot", llm_dtype_name(t), n);
            }
            gv[col] = k.dot[t](n, wr, a);
        }
        for (int m = 0; m < 2; m++) {
            const float *o = m ? gv : &gm[0][0];
            const size_t cnt = m ? 8 : 32;
            uint32_t first;
            memcpy(&first, o, 4);
            cr_assert_eq(first, g_sgemm_golden[c + m].first, "%s n=%d %s: first %08x, llama.cpp %08x",
                         llm_dtype_name(t), n, m ? "vec_dot" : "sgemm", first, g_sgemm_golden[c + m].first);
            cr_assert_eq(q40_fnv((const uint8_t *)o, cnt * sizeof(float)), g_sgemm_golden[c + m].hash,
                         "%s n=%d %s: outputs differ from llama.cpp's", llm_dtype_name(t), n,
                         m ? "vec_dot" : "sgemm");
        }
        free(w);
        free(a);
        free(x);
    }
}

/* The small K-quants' golden checks (Q3_K, Q2_K): their dot against
 * ggml_vec_dot_*_q8_K, and their tiled pair against ggml_mul_mat of 8 x 8
 * rows, on bytes rebuilt from the scripts' xorshift32 streams. */
struct kq_golden {
    int n;
    uint32_t bits;
};
struct kq_tiled_golden {
    int n;
    uint64_t hash;
    uint32_t first;
    int absx; /* the activations' magnitudes (large activation sums) */
};
typedef void (*kq_weights_fn)(uint32_t *st, void *w, int nb);

/* The scripts' acts(n): per block a float d, 256 random int8, their 16 sums. */
static void kq_acts(uint32_t *st, llm_block_q8_k *a, int nb) {
    for (int b = 0; b < nb; b++) {
        uint32_t r = q40_next(st), db = ((117 + r % 6) << 23) | ((r >> 3) & 0x7FFFFF);
        memcpy(&a[b].d, &db, 4);
        for (int j = 0; j < 256; j++) a[b].qs[j] = (int8_t)(uint8_t)(q40_next(st) >> 24);
        for (int j = 0; j < 16; j++) {
            int sum = 0;
            for (int i = 0; i < 16; i++) sum += a[b].qs[16 * j + i];
            a[b].bsums[j] = (int16_t)sum;
        }
    }
}

static void kq_dot_check(llm_dtype t, size_t bsz, kq_weights_fn weights, uint32_t seed0, const struct kq_golden *g,
                         int cases) {
    llm__cpu_kernels k;
    llm__cpu_kernels_scalar(&k);
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C: no %s dot is built", llm_dtype_name(t));
    }
    llm__cpu_kernels_x86(&k, llm__cpu_features());
    cr_assert_not_null(k.dot[t]);
    cr_assert_eq(k.act_type[t], LLM_DTYPE_Q8_K);
    for (int c = 0; c < cases; c++) {
        const int n = g[c].n, nb = n / 256;
        void *w = malloc(bsz * (size_t)nb);
        llm_block_q8_k *a = malloc(sizeof(llm_block_q8_k) * (size_t)nb);
        cr_assert(w && a);
        uint32_t st = 0x9E3779B9u ^ (uint32_t)((seed0 + (uint32_t)c) * 0x85EBCA6Bu);
        weights(&st, w, nb); /* the script's weights(n) then acts(n) */
        kq_acts(&st, a, nb);
        float v = k.dot[t](n, w, a);
        uint32_t bits;
        memcpy(&bits, &v, 4);
        cr_assert_eq(bits, g[c].bits, "%s n=%d: %08x (%.9g), llama.cpp %08x", llm_dtype_name(t), n, bits, (double)v,
                     g[c].bits);
        free(w);
        free(a);
    }
}

static void kq_tiled_check(llm_dtype t, size_t bsz, kq_weights_fn weights, uint32_t seed0,
                           const struct kq_tiled_golden *g, int cases) {
    llm__cpu_kernels k;
    llm__cpu_kernels_scalar(&k); /* its Q8_K quantizer is llama.cpp's bit for bit */
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C: no %s dot is built", llm_dtype_name(t));
    }
    llm__cpu_kernels_x86(&k, llm__cpu_features());
    cr_assert_not_null(k.tiled[t].dot);
    cr_assert_not_null(k.tiled[t].dot4);
    for (int c = 0; c < cases; c++) {
        const int n = g[c].n, nb = n / 256;
        const size_t wb = bsz * (size_t)nb, ab = sizeof(llm_block_q8_k) * (size_t)nb;
        uint8_t *w = malloc(8 * wb);                      /* [8 weight rows][nb] */
        uint8_t *a = malloc(8 * ab);                      /* [8 act rows][nb] Q8_K */
        float *x = malloc(sizeof(float) * 8 * (size_t)n); /* [8][n] */
        cr_assert(w && a && x);
        uint32_t st = 0x9E3779B9u ^ (uint32_t)((seed0 + (uint32_t)c) * 0x85EBCA6Bu);
        weights(&st, w, 8 * nb);
        q40_floats(&st, x, 8 * n);
        for (int64_t i = 0; g[c].absx && i < 8 * (int64_t)n; i++) x[i] = fabsf(x[i]);
        for (int r = 0; r < 8; r++) k.quantize[LLM_DTYPE_Q8_K](x + (size_t)r * (size_t)n, a + (size_t)r * ab, n);
        float o[8][8]; /* [act row][weight row] */
        for (int col = 0; col < 8; col++) {
            const uint8_t *wr = w + (size_t)col * wb;
            for (int r0 = 0; r0 < 8; r0 += 4) {
                float q[4];
                k.tiled[t].dot4(n, wr, a + (size_t)r0 * ab, ab, q);
                for (int j = 0; j < 4; j++) {
                    o[r0 + j][col] = q[j];
                    float one = k.tiled[t].dot(n, wr, a + (size_t)(r0 + j) * ab);
                    cr_assert_eq(memcmp(&one, &q[j], 4), 0, "%s n=%d: tiled dot4 != dot", llm_dtype_name(t), n);
                }
            }
        }
        uint32_t first;
        memcpy(&first, &o[0][0], 4);
        cr_assert_eq(first, g[c].first, "%s n=%d: first %08x, llama.cpp %08x", llm_dtype_name(t), n, first, g[c].first);
        cr_assert_eq(q40_fnv((const uint8_t *)o, sizeof(o)), g[c].hash, "%s n=%d: outputs differ from llama.cpp's",
                     llm_dtype_name(t), n);
        /* the packed tiles of prompt passes (cpu/kernels/kquant_tile.h): each product
         * built here on activation rows 0..3 then 4..7, and the 16-row one */
        const llm__vec_dot8x4_packed_fn prods[2] = {llm__kq_packed_variant(t, 0), llm__kq_packed_variant(t, 1)};
        for (int r0 = 0; r0 < 8; r0 += 4) {
            packed_check_variants(&k.tiled[t], llm_dtype_name(t), n, w, wb, a + (size_t)r0 * ab, ab,
                                  (const float (*)[8])o[r0], prods, 2);
            cr_assert_eq(k.tiled[t].dot16x4_packed, llm__kq_packed16_variant(t));
            if (k.tiled[t].dot16x4_packed) {
                packed16_check(&k.tiled[t], llm_dtype_name(t), n, w, wb, a + (size_t)r0 * ab, ab,
                               (const float (*)[8])o[r0]);
            }
        }
        free(w);
        free(a);
        free(x);
    }
}

/* ggml_vec_dot_q3_K_q8_K on one row pair; made by scripts/golden/kernels/q3k_llamacpp.py. */
static const struct kq_golden g_q3k_golden[] = {
    {256, 0x43261BB5u}, /* 166.108231 */
    {512, 0xC340A1FDu}, /* -192.632767 */
    {1536, 0xC434D474u}, /* -723.31958 */
    {4096, 0xC546F886u}, /* -3183.53271 */
};

/* llama.cpp's ggml_mul_mat of 8 Q3_K weight rows by 8 activation rows (its
 * tiled K-quant kernel): FNV-1a 64 of the 64 outputs [act row][weight row] and
 * the first. Made by scripts/golden/kernels/q3k_llamacpp.py (tiled). */
static const struct kq_tiled_golden g_q3k_tiled_golden[] = {
    {256, 0x814879EF53AABCFFULL, 0xC222878Cu, 0}, /* first -40.63237 */
    {1536, 0x7F40351B528FCB33ULL, 0x43BEA623u, 0}, /* first 381.297943 */
};

/* The script's weights(n) into w (nb blocks). */
static void q3k_weights(uint32_t *st, void *wv, int nb) {
    llm_block_q3_k *w = wv;
    for (int b = 0; b < nb; b++) {
        uint8_t *p = (uint8_t *)&w[b]; /* hmask, qs, scales: 108 bytes, then d */
        for (int j = 0; j < 108; j++) p[j] = (uint8_t)(q40_next(st) >> 24);
        uint32_t r = q40_next(st);
        w[b].d = (uint16_t)(((8 + r % 7) << 10) | ((r >> 8) & 0x3FF) | (((r >> 20) & 1) ? 0x8000 : 0));
    }
}

Test(kernels_q4_0, q3k_dot_matches_llamacpp) {
    kq_dot_check(LLM_DTYPE_Q3_K, sizeof(llm_block_q3_k), q3k_weights, 7000, g_q3k_golden,
                 (int)(sizeof(g_q3k_golden) / sizeof(g_q3k_golden[0])));
}

Test(kernels_q4_0, q3k_tiled_matches_llamacpp) {
    kq_tiled_check(LLM_DTYPE_Q3_K, sizeof(llm_block_q3_k), q3k_weights, 7100, g_q3k_tiled_golden,
                   (int)(sizeof(g_q3k_tiled_golden) / sizeof(g_q3k_tiled_golden[0])));
}

/* ggml_vec_dot_q2_K_q8_K, and ggml_mul_mat's tiled kernel on 8 x 8 rows;
 * made by scripts/golden/kernels/q2k_llamacpp.py. */
static const struct kq_golden g_q2k_golden[] = {
    {256, 0x411DF009u}, /* 9.87110233 */
    {512, 0xC2337CC3u}, /* -44.8718376 */
    {1536, 0x4358C12Au}, /* 216.754547 */
    {4096, 0x42D848ACu}, /* 108.141937 */
};
static const struct kq_tiled_golden g_q2k_tiled_golden[] = {
    {256, 0xA7B66944F401F721ULL, 0xC20932BDu, 0}, /* first -34.2995491 */
    {1536, 0xC971066C117FF53EULL, 0xC414181Eu, 0}, /* first -592.376831 */
    {1536, 0x1533C880B076AA99ULL, 0xC4FF693Cu, 1}, /* first -2043.28857 */
};

/* The script's weights(n): 80 random bytes (scales, qs), d, dmin. */
static void q2k_weights(uint32_t *st, void *wv, int nb) {
    llm_block_q2_k *w = wv;
    for (int b = 0; b < nb; b++) {
        uint8_t *p = (uint8_t *)&w[b];
        for (int j = 0; j < 80; j++) p[j] = (uint8_t)(q40_next(st) >> 24);
        uint32_t r = q40_next(st);
        w[b].d = (uint16_t)(((8 + r % 7) << 10) | ((r >> 8) & 0x3FF) | (((r >> 20) & 1) ? 0x8000 : 0));
        r = q40_next(st);
        w[b].dmin = (uint16_t)(((8 + r % 7) << 10) | ((r >> 8) & 0x3FF));
    }
}

Test(kernels_q4_0, q2k_dot_matches_llamacpp) {
    kq_dot_check(LLM_DTYPE_Q2_K, sizeof(llm_block_q2_k), q2k_weights, 7200, g_q2k_golden,
                 (int)(sizeof(g_q2k_golden) / sizeof(g_q2k_golden[0])));
}

Test(kernels_q4_0, q2k_tiled_matches_llamacpp) {
    kq_tiled_check(LLM_DTYPE_Q2_K, sizeof(llm_block_q2_k), q2k_weights, 7300, g_q2k_tiled_golden,
                   (int)(sizeof(g_q2k_tiled_golden) / sizeof(g_q2k_tiled_golden[0])));
}

/* A prepared Q4_0 weight (llm_backend_prepare_weight: the CPU backend's own
 * layout, kernels.h prep) gives the unprepared matmul's bits for every row
 * count, and with the golden's 8 rows (twice, in both halves of a group)
 * llama.cpp's own repacked gemv / gemm outputs; its source bytes still serve
 * get_rows. Weights it must not take are left alone. */
Test(kernels_q4_0, prepared_weight_matches_the_rows8_pair_and_llamacpp) {
    llm_backend *be = prep_backend();
    int kept_any = 0;
    for (int c = 0; c < (int)(sizeof(g_q40_golden) / sizeof(g_q40_golden[0])); c++) {
        const int K = g_q40_golden[c].n, M = 48;
        const size_t wb = (size_t)K / 32 * sizeof(llm_block_q4_0);
        llm_block_q4_0 *w = malloc((size_t)M * wb);
        float *x = malloc(sizeof(float) * 13 * (size_t)K), *o1 = malloc(sizeof(float) * (size_t)K),
              *o2 = malloc(sizeof(float) * 13 * M), *row = malloc(sizeof(float) * (size_t)K);
        cr_assert(w && x && o1 && o2 && row);
        uint32_t st = 0x9E3779B9u ^ (uint32_t)((uint32_t)(5000 + c) * 0x85EBCA6Bu);
        q40_weights(&st, w, 8 * K / 32); /* the golden's rows 0..7, then its 4 activation rows */
        q40_floats(&st, x, 4 * K);
        memcpy((char *)w + 8 * wb, w, 8 * wb);                  /* rows 8..15: the same 8 rows */
        q40_weights(&st, (llm_block_q4_0 *)((char *)w + 16 * wb), (M - 16) * K / 32);
        q40_floats(&st, x + 4 * (size_t)K, 9 * K);              /* activation rows 4..12 */
        llm_buffer *bw = NULL;
        cr_assert_eq(llm_buffer_wrap_host(be, w, (size_t)M * wb, &bw), LLM_OK);
        const llm_tensor tw = llm_tensor_2d(bw, 0, LLM_DTYPE_Q4_0, K, M);
        const int64_t ns[] = {1, 2, 3, 4, 5, 8, 9, 13};
        float *before = malloc(sizeof(float) * 13 * M * 8);
        cr_assert(before);
        for (int t = 0; t < 8; t++) prep_matmul(be, &tw, x, ns[t], before + (size_t)t * 13 * M);
        int kept = -1;
        cr_assert_eq(llm_backend_prepare_weight(be, &tw, &kept), LLM_OK, "%s", llm_runtime_last_error());
        kept_any |= kept;
        for (int t = 0; t < 8; t++) {
            prep_matmul(be, &tw, x, ns[t], o2);
            for (int64_t i = 0; i < ns[t] * M; i++) {
                cr_assert(memcmp(&o2[i], &before[(size_t)t * 13 * M + (size_t)i], 4) == 0,
                          "K=%d n=%lld out[%lld][%lld]: prepared %.9g, unprepared %.9g", K, (long long)ns[t],
                          (long long)(i / M), (long long)(i % M), o2[i], before[(size_t)t * 13 * M + (size_t)i]);
            }
            if (ns[t] == 4) { /* both halves of group 0 against llama.cpp's gemm */
                for (int half = 0; half < 2; half++) {
                    float g[4][8];
                    for (int r = 0; r < 4; r++) memcpy(g[r], o2 + (size_t)r * M + 8 * half, sizeof g[r]);
                    cr_assert_eq(q40_fnv((const uint8_t *)g, sizeof g), g_q40_golden[c].hash[1],
                                 "K=%d rows %d..%d: outputs differ from llama.cpp's", K, 8 * half, 8 * half + 7);
                }
            }
        }
        /* get_rows still reads the source rows */
        llm_buffer *br = NULL;
        cr_assert_eq(llm_buffer_alloc(be, sizeof(float) * (size_t)K, &br), LLM_OK);
        const llm_tensor tr = llm_tensor_2d(br, 0, LLM_DTYPE_F32, K, 1);
        const int32_t id = 21;
        cr_assert_eq(llm_op_get_rows(be, &tr, &tw, &id, 1), LLM_OK);
        cr_assert_eq(llm_buffer_read(br, 0, o1, sizeof(float) * (size_t)K), LLM_OK);
        cr_assert_eq(llm_dtype_dequantize_row(LLM_DTYPE_Q4_0, (const char *)w + 21 * wb, row, (size_t)K), LLM_OK);
        cr_assert(memcmp(o1, row, sizeof(float) * (size_t)K) == 0, "K=%d: get_rows of a prepared weight", K);
        llm_buffer_free(br);
        /* not taken: 24 rows (not whole groups of 16), F32, a buffer that is not wrapped */
        const llm_tensor t24 = llm_tensor_2d(bw, 0, LLM_DTYPE_Q4_0, K, 24);
        cr_assert_eq(llm_backend_prepare_weight(be, &t24, &kept), LLM_OK);
        cr_assert_eq(kept, 0, "K=%d: 24 rows prepared", K);
        const llm_tensor tf = llm_tensor_2d(bw, 0, LLM_DTYPE_F32, K / 4, 16);
        cr_assert_eq(llm_backend_prepare_weight(be, &tf, &kept), LLM_OK);
        cr_assert_eq(kept, 0, "K=%d: F32 prepared", K);
        llm_buffer *ba = NULL;
        cr_assert_eq(llm_buffer_alloc(be, (size_t)M * wb, &ba), LLM_OK);
        const llm_tensor tal = llm_tensor_2d(ba, 0, LLM_DTYPE_Q4_0, K, M);
        cr_assert_eq(llm_backend_prepare_weight(be, &tal, &kept), LLM_OK);
        cr_assert_eq(kept, 0, "K=%d: a writable buffer's weight prepared", K);
        llm_buffer_free(ba);
        llm_buffer_free(bw); /* frees the copy (ASan would report it otherwise) */
        free(before);
        free(w);
        free(x);
        free(o1);
        free(o2);
        free(row);
    }
    /* bad arguments */
    int kept = 7;
    cr_assert_eq(llm_backend_prepare_weight(be, NULL, &kept), LLM_ERR_INVALID_ARG);
    cr_assert_eq(kept, 0);
    llm_backend *other = prep_backend();
    char blk[18 * 16] = {0};
    llm_buffer *bo = NULL;
    cr_assert_eq(llm_buffer_wrap_host(other, blk, sizeof blk, &bo), LLM_OK);
    const llm_tensor to = llm_tensor_2d(bo, 0, LLM_DTYPE_Q4_0, 32, 16);
    cr_assert_eq(llm_backend_prepare_weight(be, &to, &kept), LLM_ERR_INVALID_ARG);
    llm_tensor tbig = to;
    tbig.offset = 18; /* one row past the end */
    cr_assert_eq(llm_backend_prepare_weight(other, &tbig, &kept), LLM_ERR_INVALID_ARG);
    llm_buffer_free(bo);
    llm_backend_free(other);
    llm_backend_free(be);
    prep_none_kept(kept_any, LLM_DTYPE_Q4_0);
}

/* A prepared Q8_0 weight (kernels/q8_0_x86_256.c: x + 128 against y, started
 * from -128 times y's sums of four) gives the unprepared matmul's bits (the
 * vec_dot order, dot2x4 / dot4x1, checked against llama.cpp elsewhere) for
 * 1..13, 32 and 35 rows: random bytes (-128 included: the weight side may hold it),
 * one row of -128s and one of 127s, an odd block count (K = 96). */
Test(kernels_q4_0, q8_0_prepared_weight_matches_unprepared) {
    llm_backend *be = prep_backend();
    const int64_t M = 48;
    int kept_any = 0;
    uint32_t st = 0xC0FFEEu;
    const int64_t Ks[] = {96, 2048};
    for (int c = 0; c < 2; c++) {
        const int64_t K = Ks[c], nb = K / 32;
        llm_block_q8_0 *w = malloc(sizeof(llm_block_q8_0) * (size_t)(M * nb));
        float *x = malloc(sizeof(float) * (size_t)(PREP_ROWS_MAX * K));
        cr_assert(w && x);
        for (int64_t b = 0; b < M * nb; b++) {
            const uint32_t r = q40_next(&st);
            w[b].d = (uint16_t)(((8 + r % 7) << 10) | ((r >> 8) & 0x3FF) | (((r >> 20) & 1) ? 0x8000 : 0));
            for (int i = 0; i < 32; i++) {
                w[b].qs[i] = b / nb == 3 ? -128 : b / nb == 4 ? 127 : (int8_t)(q40_next(&st) >> 24);
            }
        }
        q40_floats(&st, x, (int)(PREP_ROWS_MAX * K));
        kept_any |= prepared_check(be, LLM_DTYPE_Q8_0, K, M, w, x);
        free(w);
        free(x);
    }
    llm_backend_free(be);
    prep_none_kept(kept_any, LLM_DTYPE_Q8_0);
}

/* Q4_1 (kernels/q4_1_x86_512.c): the same matmul before and after the weight
 * is prepared, 1..13, 32 and 35 activation rows, K with an odd block count (a padded
 * pair) and a long one; random nibbles, scales and minimums of both signs.
 * The unprepared path is dot_q4_1_q8_1's order, which the default model's
 * logits tie to llama.cpp's (tests/forward). */
Test(kernels_q4_0, q4_1_prepared_weight_matches_unprepared) {
    llm_backend *be = prep_backend();
    const int64_t M = 48;
    int kept_any = 0;
    uint32_t st = 0x5EEDu;
    const int64_t Ks[] = {96, 2048};
    for (int c = 0; c < 2; c++) {
        const int64_t K = Ks[c], nb = K / 32;
        llm_block_q4_1 *w = malloc(sizeof(llm_block_q4_1) * (size_t)(M * nb));
        float *x = malloc(sizeof(float) * (size_t)(PREP_ROWS_MAX * K));
        cr_assert(w && x);
        for (int64_t b = 0; b < M * nb; b++) {
            uint32_t r = q40_next(&st);
            w[b].d = (uint16_t)(((8 + r % 7) << 10) | ((r >> 8) & 0x3FF) | (((r >> 20) & 1) ? 0x8000 : 0));
            r = q40_next(&st);
            w[b].m = (uint16_t)(((9 + r % 6) << 10) | ((r >> 8) & 0x3FF) | (((r >> 21) & 1) ? 0x8000 : 0));
            prep_random_bytes(w[b].qs, sizeof w[b].qs, &st);
        }
        q40_floats(&st, x, (int)(PREP_ROWS_MAX * K));
        kept_any |= prepared_check(be, LLM_DTYPE_Q4_1, K, M, w, x);
        free(w);
        free(x);
    }
    llm_backend_free(be);
    prep_none_kept(kept_any, LLM_DTYPE_Q4_1);
}

/* Every Q4_0 prepared product built and supported here (kernels.h
 * llm__q4_0_prep_variant: AVX2, AVX-VNNI, AVX-512), called on a group it
 * repacked, for 1..4 activation rows, streaming or not: the rows8 pair's
 * dot bit for bit (its gemv and gemm orders agree for Q4_0; the golden test
 * above ties them to llama.cpp). The machine's registry takes one of them,
 * and the public-API test above runs that one through the matmul. */
Test(kernels_q4_0, prepared_products_match_the_rows8_dot) {
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C");
    }
    llm__cpu_kernels k;
    llm__cpu_kernels_scalar(&k);
    llm__cpu_kernels_x86(&k, llm__cpu_features());
    uint32_t st = 0xABCDEFu;
    const int Ks[] = {96, 2048};
    int tested = 0;
    for (int c = 0; c < 2; c++) {
        const int K = Ks[c];
        const size_t wb = (size_t)K / 32 * sizeof(llm_block_q4_0), ab = (size_t)K / 32 * sizeof(llm_block_q8_0);
        llm_block_q4_0 *w = malloc(16 * wb);
        uint8_t *a = malloc(4 * ab);
        float *x = malloc(sizeof(float) * 4 * (size_t)K);
        int32_t *ys = malloc(sizeof(int32_t) * 4 * (size_t)K / 32);
        cr_assert(w && a && x && ys);
        q40_weights(&st, w, 16 * K / 32);
        q40_floats(&st, x, 4 * K);
        for (int r = 0; r < 4; r++) k.quantize[LLM_DTYPE_Q8_0](x + (size_t)r * (size_t)K, a + (size_t)r * ab, K);
        float want[4][16];
        for (int r = 0; r < 16; r++) {
            for (int j = 0; j < 4; j++) want[j][r] = k.rows8[LLM_DTYPE_Q4_0].dot(K, (const char *)w + (size_t)r * wb, a + (size_t)j * ab);
        }
        for (int v = 0; v < 3; v++) {
            struct llm__prep_kernels pk;
            if (!llm__q4_0_prep_variant(v, &pk)) {
                cr_assert(v > 0, "the AVX2 prepared Q4_0 product is missing");
                continue;
            }
            tested++;
            const size_t gb = pk.group_bytes(K);
            void *grp = aligned_alloc(64, gb + 64 * 160); /* room for the streaming prefetch's reach */
            cr_assert_not_null(grp);
            pk.repack(K, w, wb, grp);
            for (int j = 0; j < 4; j++) pk.aux(K, a + (size_t)j * ab, ys + (size_t)j * (size_t)(K / 32));
            for (int na = 1; na <= 4; na++) {
                for (int flags = 0; flags <= LLM__PREP_STREAM; flags += LLM__PREP_STREAM) {
                    float o[4][16];
                    memset(o, 0xFF, sizeof o);
                    pk.dot(K, grp, a, ab, ys, (size_t)(K / 32), na, &o[0][0], 16, flags);
                    for (int j = 0; j < 4; j++) {
                        for (int r = 0; r < 16; r++) {
                            uint32_t bits;
                            memcpy(&bits, &o[j][r], 4);
                            if (j < na) {
                                cr_assert(memcmp(&o[j][r], &want[j][r], 4) == 0,
                                          "K=%d variant %d n_a=%d flags %d [%d][%d]: %.9g, dot %.9g", K, v, na, flags,
                                          j, r, o[j][r], want[j][r]);
                            } else {
                                cr_assert_eq(bits, 0xFFFFFFFFu, "variant %d n_a=%d wrote row %d", v, na, j);
                            }
                        }
                    }
                }
            }
            free(grp);
        }
        free(w);
        free(a);
        free(x);
        free(ys);
    }
    cr_assert(tested > 0);
}
