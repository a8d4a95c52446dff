/*
 * test_dtype.c -- the reference (de)quantizers of llama/dtype.h against
 * goldens made by the `gguf` Python package
 * (scripts/golden/models/make_dtype_golden.py), and for the activation types
 * Q8_1/Q8_K against ggml's own reference quantizers
 * (scripts/golden/models/make_q8_golden_ggml.py): exact bit equality.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "golden_io.h"
#include "llama/dtype.h"

typedef struct golden {
    unsigned char *buf;
    uint32_t kind, dtype, n, raw_bytes;
    const unsigned char *raw; /* [raw_bytes] */
    const unsigned char *f32; /* float[n], maybe unaligned */
} golden;

static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static golden load_golden(const char *kind, const char *type) {
    char rel[256], path[1024];
    snprintf(rel, sizeof rel, "tests/models/golden/dtype_%s_%s.bin", kind, type);
    golden g;
    memset(&g, 0, sizeof g);
    size_t len = 0;
    g.buf = tm_read_file(tm_source_path(path, sizeof path, rel), &len);
    cr_assert_not_null(g.buf, "cannot read %s", path);
    cr_assert_geq(len, 24u);
    cr_assert_eq(memcmp(g.buf, "LLMG", 4), 0);
    cr_assert_eq(rd32(g.buf + 4), 1u);
    g.kind = rd32(g.buf + 8);
    g.dtype = rd32(g.buf + 12);
    g.n = rd32(g.buf + 16);
    g.raw_bytes = rd32(g.buf + 20);
    cr_assert_eq(len, 24u + g.raw_bytes + 4u * (size_t)g.n, "%s: size", rel);
    if (g.kind == 0) {
        g.raw = g.buf + 24;
        g.f32 = g.raw + g.raw_bytes;
    } else {
        g.f32 = g.buf + 24;
        g.raw = g.f32 + 4u * (size_t)g.n;
    }
    return g;
}

static void check_dequant(const char *name, llm_dtype t) {
    golden g = load_golden("deq", name);
    cr_assert_eq(g.dtype, (uint32_t)t);
    size_t rs = 0;
    cr_assert_eq(llm_dtype_row_size(t, g.n, &rs), LLM_OK);
    cr_assert_eq(rs, g.raw_bytes, "%s: row size %zu vs %u", name, rs, g.raw_bytes);
    float *out = malloc(sizeof(float) * g.n);
    cr_assert_eq(llm_dtype_dequantize_row(t, g.raw, out, g.n), LLM_OK);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < g.n; i++) {
        if (memcmp(&out[i], g.f32 + 4 * i, 4) != 0) {
            if (!bad) first = i;
            bad++;
        }
    }
    float want;
    memcpy(&want, g.f32 + 4 * first, 4);
    cr_expect_eq(bad, 0u, "%s: %zu of %u differ; first at %zu: got %.9g want %.9g", name, bad,
                 g.n, first, (double)out[first], (double)want);
    free(out);
    free(g.buf);
}

static void check_quant(const char *name, llm_dtype t) {
    golden g = load_golden("q", name);
    cr_assert_eq(g.dtype, (uint32_t)t);
    float *in = malloc(sizeof(float) * g.n);
    memcpy(in, g.f32, sizeof(float) * g.n);
    unsigned char *out = malloc(g.raw_bytes);
    cr_assert_eq(llm_dtype_quantize_row(t, in, out, g.n), LLM_OK);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < g.raw_bytes; i++) {
        if (out[i] != g.raw[i]) {
            if (!bad) first = i;
            bad++;
        }
    }
    cr_expect_eq(bad, 0u, "%s: %zu of %u bytes differ; first at byte %zu (block %zu): got %02x want %02x",
                 name, bad, g.raw_bytes, first, first / llm_dtype_block_bytes(t), out[first],
                 g.raw[first]);
    free(in);
    free(out);
    free(g.buf);
}

#define DEQ(T) Test(dtype_dequant, T) { check_dequant(#T, LLM_DTYPE_##T); }
DEQ(F32)
DEQ(F16)
DEQ(BF16)
DEQ(Q4_0)
DEQ(Q4_1)
DEQ(Q5_0)
DEQ(Q5_1)
DEQ(Q8_0)
DEQ(Q8_1)
DEQ(Q2_K)
DEQ(Q3_K)
DEQ(Q4_K)
DEQ(Q5_K)
DEQ(Q6_K)
DEQ(Q8_K)

#define QNT(T) Test(dtype_quant, T) { check_quant(#T, LLM_DTYPE_##T); }
QNT(Q8_0)
QNT(Q4_0)
QNT(Q4_1)
QNT(Q5_0)
QNT(Q5_1)
QNT(F16)
QNT(BF16)
QNT(Q8_1) /* golden from ggml's quantize_row_q8_1_ref (make_q8_golden_ggml.py) */
QNT(Q8_K) /* golden from ggml's quantize_row_q8_K_ref */

Test(dtype_traits, names_sizes) {
    cr_expect_str_eq(llm_dtype_name(LLM_DTYPE_Q4_K), "Q4_K");
    cr_expect_str_eq(llm_dtype_name(LLM_DTYPE_BF16), "BF16");
    cr_expect_null(llm_dtype_name((llm_dtype)4)); /* Q4_2: removed from ggml */
    cr_expect_null(llm_dtype_name((llm_dtype)LLM_DTYPE_END_));
    cr_expect_eq(llm_dtype_is_known(-1), 0);
    cr_expect_eq(llm_dtype_is_known(16), 0); /* IQ2_XXS: valid GGUF, not ours */
    cr_expect_eq(llm_dtype_block_size(LLM_DTYPE_Q6_K), 256u);
    cr_expect_eq(llm_dtype_block_bytes(LLM_DTYPE_Q6_K), 210u);
    cr_expect_eq(llm_dtype_block_bytes(LLM_DTYPE_Q8_1), 36u);
    cr_expect_eq(llm_dtype_block_bytes(LLM_DTYPE_Q8_K), 292u);
    cr_expect_eq(llm_dtype_block_bytes((llm_dtype)5), 0u);
}

Test(dtype_traits, row_size_checks) {
    size_t n = 7;
    cr_expect_eq(llm_dtype_row_size(LLM_DTYPE_Q4_1, 576, &n), LLM_OK);
    cr_expect_eq(n, 18u * 20u);
    n = 7;
    cr_expect_eq(llm_dtype_row_size(LLM_DTYPE_Q4_1, 577, &n), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(n, 7u, "untouched on error");
    cr_expect_eq(llm_dtype_row_size(LLM_DTYPE_F32, UINT64_MAX / 2, &n), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_dtype_row_size(LLM_DTYPE_Q8_K, (UINT64_MAX / 256) * 256, &n), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_dtype_row_size((llm_dtype)20, 32, &n), LLM_ERR_UNSUPPORTED);
    cr_expect_eq(llm_dtype_row_size(LLM_DTYPE_F32, 1, NULL), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_dtype_dequantize_row(LLM_DTYPE_Q4_0, NULL, NULL, 31), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_dtype_quantize_row(LLM_DTYPE_Q6_K, NULL, NULL, 256), LLM_ERR_UNSUPPORTED);
}

/* Every half converts to a float and back to itself (NaNs stay NaN). This
 * covers all 65536 inputs of both directions' exact cases. */
Test(dtype_fp16, roundtrip_all) {
    for (uint32_t h = 0; h < 65536; h++) {
        const float f = llm_fp16_to_fp32((uint16_t)h);
        const uint16_t back = llm_fp32_to_fp16(f);
        if ((h & 0x7C00u) == 0x7C00u && (h & 0x3FFu)) {
            cr_assert(isnan(f));
            cr_assert((back & 0x7C00u) == 0x7C00u && (back & 0x3FFu), "NaN %04x -> %04x", h, back);
        } else {
            cr_assert_eq(back, h, "half %04x -> %.9g -> %04x", h, (double)f, back);
        }
    }
}

/* Q8_1 and Q8_K have no gguf reference: check ggml's field semantics. */
Test(dtype_quant, q8_1_fields) {
    float x[64];
    for (int i = 0; i < 64; i++) x[i] = sinf((float)i * 0.7f) * (i < 32 ? 0.3f : 12.0f);
    unsigned char buf[72];
    cr_assert_eq(llm_dtype_quantize_row(LLM_DTYPE_Q8_1, x, buf, 64), LLM_OK);
    for (int b = 0; b < 2; b++) {
        const unsigned char *blk = buf + 36 * b;
        uint16_t dh, sh;
        memcpy(&dh, blk, 2);
        memcpy(&sh, blk + 2, 2);
        float amax = 0;
        for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(x[32 * b + i]));
        const float d = llm_fp16_to_fp32(dh);
        cr_expect_eq(dh, llm_fp32_to_fp16(amax / 127.0f));
        int sum = 0;
        for (int i = 0; i < 32; i++) {
            const int q = (int8_t)blk[4 + i];
            sum += q;
            cr_expect_eq(q, (int)roundf(x[32 * b + i] * (127.0f / amax)) , "b%d i%d", b, i);
        }
        cr_expect_eq(sh, llm_fp32_to_fp16((float)sum * (amax / 127.0f)));
        float y[32];
        cr_assert_eq(llm_dtype_dequantize_row(LLM_DTYPE_Q8_1, blk, y, 32), LLM_OK);
        for (int i = 0; i < 32; i++) cr_expect_leq(fabsf(y[i] - x[32 * b + i]), d * 0.51f + 1e-3f * amax);
    }
}

Test(dtype_quant, q8_k_fields) {
    float x[256];
    for (int i = 0; i < 256; i++) x[i] = cosf((float)i * 0.37f) * 3.0f;
    x[100] = -5.0f; /* the signed max: iscale * max = -127 */
    unsigned char buf[292];
    cr_assert_eq(llm_dtype_quantize_row(LLM_DTYPE_Q8_K, x, buf, 256), LLM_OK);
    float d;
    memcpy(&d, buf, 4);
    cr_expect_eq(d, 1.0f / (-127.0f / -5.0f));
    cr_expect_eq((int8_t)buf[4 + 100], -127);
    for (int j = 0; j < 16; j++) {
        int sum = 0;
        for (int i = 0; i < 16; i++) sum += (int8_t)buf[4 + 16 * j + i];
        int16_t bs;
        memcpy(&bs, buf + 260 + 2 * j, 2);
        cr_expect_eq(bs, sum, "bsum %d", j);
    }
    float y[256];
    cr_assert_eq(llm_dtype_dequantize_row(LLM_DTYPE_Q8_K, buf, y, 256), LLM_OK);
    for (int i = 0; i < 256; i++) cr_expect_leq(fabsf(y[i] - x[i]), 0.5f * d + 1e-6f, "i %d", i);
    /* All-zero block: d = 0 and zero quants. */
    memset(x, 0, sizeof x);
    memset(buf, 0xAA, sizeof buf);
    cr_assert_eq(llm_dtype_quantize_row(LLM_DTYPE_Q8_K, x, buf, 256), LLM_OK);
    for (size_t i = 0; i < sizeof buf; i++) cr_expect_eq(buf[i], 0);
}
