/*
 * test_kernels_q5.c -- the Q5_0, Q5_1 and Q5_K dot products against the
 * results of llama.cpp's own kernels on the same bytes (golden rows), and the
 * AVX2 variants against the scalar reference on extreme blocks.
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

/* Weight row (w) and activation row (a) of case i, as the script builds them. */
static void q5g_row(int i, llm_dtype t, int n, uint8_t *w, uint8_t *a) {
    uint32_t s = gold_seed(i);
    if (t == LLM_DTYPE_Q5_0 || t == LLM_DTYPE_Q5_1) {
        const size_t hdr = t == LLM_DTYPE_Q5_0 ? 2 : 4, bb = hdr + 20;
        for (int b = 0; b < n / 32; b++) {
            uint16_t d = gold_half(&s, 0);
            memcpy(w + b * bb, &d, 2);
            if (t == LLM_DTYPE_Q5_1) {
                uint16_t m = gold_half(&s, 1);
                memcpy(w + b * bb + 2, &m, 2);
            }
            for (size_t j = hdr; j < bb; j++) w[b * bb + j] = gold_byte(&s);
        }
        for (int b = 0; b < n / 32; b++) {
            uint8_t *p = a + b * (hdr + 32);
            uint16_t d = gold_half(&s, 0);
            memcpy(p, &d, 2);
            if (t == LLM_DTYPE_Q5_1) {
                uint16_t sum = gold_half(&s, 1); /* need not be d * sum(q) for a dot */
                memcpy(p + 2, &sum, 2);
            }
            for (int j = 0; j < 32; j++) p[hdr + (size_t)j] = (uint8_t)gold_q8(&s);
        }
        return;
    }
    for (int b = 0; b < n / 256; b++) {
        llm_block_q5_k *x = (llm_block_q5_k *)w + b;
        x->d = gold_half(&s, 0);
        x->dmin = gold_half(&s, 0);
        uint8_t *rest = x->scales; /* scales, qh, qs follow each other: 172 bytes */
        for (int j = 0; j < 172; j++) rest[j] = gold_byte(&s);
    }
    for (int b = 0; b < n / 256; b++) gold_q8k_block(&s, (llm_block_q8_k *)a + b);
}

Test(kernels, q5_dots_match_llamacpp) {
    llm__cpu_kernels s, v;
    llm__cpu_kernels_scalar(&s);
    llm__cpu_kernels_scalar(&v);
    const int simd = llm__cpu_has_avx2();
    if (simd) {
        llm__cpu_kernels_x86(&v, llm__cpu_features());
    } else {
        cr_log_info("CPU lacks AVX2/FMA/F16C: only the scalar Q5 dots are checked against llama.cpp");
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
    llm__cpu_kernels_x86(&v, llm__cpu_features());
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

/* Q5_0's packed tiles (its tiled pair, kernels.h llm__pack8_fn; AVX-512 VNNI
 * CPUs only) against dot4 bit for bit: random blocks and extremes (every
 * value 0 or 31, i.e. q - 16 = -16 or 15, against activation bytes 127,
 * -127 and alternating), 1, 6 and 11 blocks, with a row stride wider than
 * the row. The registry must install the tiles exactly where the product
 * exists. */
Test(kernels, q5_0_packed_tiles_match_dot4) {
    if (!llm__cpu_has_avx2()) {
        cr_skip_test("CPU lacks AVX2/FMA/F16C: SIMD kernels not selectable");
    }
    llm__cpu_kernels v;
    llm__cpu_kernels_scalar(&v);
    llm__cpu_kernels_x86(&v, llm__cpu_features());
    const struct llm__dot_pair *pr = &v.tiled[LLM_DTYPE_Q5_0];
    const llm__vec_dot8x4_packed_fn prod = llm__q5_0_packed_variant(1);
    cr_assert_eq(pr->dot8x4_packed, prod, "Q5_0: tiles registered %s the AVX-512 product", prod ? "without" : "with");
    if (!prod) {
        cr_log_info("Q5_0: no AVX-512 VNNI here: the packed product was not run");
        return;
    }
    cr_assert(pr->dot4 == v.dot4[LLM_DTYPE_Q5_0] && pr->dot == v.dot[LLM_DTYPE_Q5_0], "Q5_0: the tiled pair is not dot4's");
    uint32_t st = 99;
    for (int pat = 0; pat < 9; pat++) {
        const int n = 32 * (1 + pat % 3 * 5);
        const size_t wb = (size_t)n / 32 * sizeof(llm_block_q5_0) + 6, ab = (size_t)n / 32 * sizeof(llm_block_q8_0);
        uint8_t *w = malloc(8 * wb), *a = malloc(4 * ab);
        cr_assert(w && a);
        for (size_t i = 0; i < 8 * wb; i++) {
            st = st * 1664525u + 1013904223u;
            w[i] = pat < 3 ? (uint8_t)(st >> 24) : pat < 6 ? 0xFF : 0x00;
        }
        for (int r = 0; r < 8; r++)
            for (int b = 0; b < n / 32; b++) {
                llm_block_q5_0 *x = (llm_block_q5_0 *)(w + (size_t)r * wb) + b;
                x->d = llm_fp32_to_fp16((b + r) % 3 ? 0.0625f : -0.125f);
            }
        for (int j = 0; j < 4; j++)
            for (int b = 0; b < n / 32; b++) {
                llm_block_q8_0 *y = (llm_block_q8_0 *)(a + (size_t)j * ab) + b;
                y->d = llm_fp32_to_fp16(b % 2 ? 0.25f : 0.03125f);
                for (int i = 0; i < 32; i++) {
                    st = st * 1664525u + 1013904223u;
                    const int yv = pat < 3 ? (int)(st >> 24) % 255 - 127 : j % 3 == 0 ? 127 : j % 3 == 1 ? -127 : (i & 1 ? 127 : -127);
                    y->qs[i] = (int8_t)yv;
                }
            }
        float want[4][8];
        for (int col = 0; col < 8; col++) {
            float o[4];
            pr->dot4(n, w + (size_t)col * wb, a, ab, o);
            for (int r = 0; r < 4; r++) want[r][col] = o[r];
        }
        packed_check(pr, "Q5_0", n, w, wb, a, ab, (const float (*)[8])want);
        free(w);
        free(a);
    }
}
