/*
 * dequant.c -- reference dequantization of one row to f32, for every type.
 *
 * Written for clarity, one element at a time, following the layouts in
 * blocks.h. The arithmetic order (e.g. (d * sc) * q - (dmin * m)) is chosen
 * to equal gguf.quants's numpy code bit for bit; this file is compiled with
 * -ffp-contract=off (see dtype.cmake) so no fused multiply-add changes a
 * rounding.
 */
#include <string.h>

#include "dtype/blocks.h"
#include "llama/dtype.h"

#define H2F(h) llm_fp16_to_fp32(h)

/* Blocks are read with memcpy because a block inside a file mapping may be
 * misaligned for its struct (see blocks.h). */

static void deq_q4_0(const uint8_t *src, float *y, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, y += LLM_QK32) {
        llm_block_q4_0 b;
        memcpy(&b, src + ib * sizeof b, sizeof b);
        const float d = H2F(b.d);
        for (int i = 0; i < 16; i++) {
            y[i] = d * (float)((b.qs[i] & 15) - 8);
            y[i + 16] = d * (float)((b.qs[i] >> 4) - 8);
        }
    }
}

static void deq_q4_1(const uint8_t *src, float *y, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, y += LLM_QK32) {
        llm_block_q4_1 b;
        memcpy(&b, src + ib * sizeof b, sizeof b);
        const float d = H2F(b.d), m = H2F(b.m);
        for (int i = 0; i < 16; i++) {
            y[i] = d * (float)(b.qs[i] & 15) + m;
            y[i + 16] = d * (float)(b.qs[i] >> 4) + m;
        }
    }
}

static uint32_t le32(const uint8_t p[4]) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void deq_q5_0(const uint8_t *src, float *y, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, y += LLM_QK32) {
        llm_block_q5_0 b;
        memcpy(&b, src + ib * sizeof b, sizeof b);
        const float d = H2F(b.d);
        const uint32_t qh = le32(b.qh);
        for (int i = 0; i < 32; i++) {
            const int lo = i < 16 ? (b.qs[i] & 15) : (b.qs[i - 16] >> 4);
            const int q = lo | (int)((qh >> i) & 1u) << 4;
            y[i] = d * (float)(q - 16);
        }
    }
}

static void deq_q5_1(const uint8_t *src, float *y, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, y += LLM_QK32) {
        llm_block_q5_1 b;
        memcpy(&b, src + ib * sizeof b, sizeof b);
        const float d = H2F(b.d), m = H2F(b.m);
        const uint32_t qh = le32(b.qh);
        for (int i = 0; i < 32; i++) {
            const int lo = i < 16 ? (b.qs[i] & 15) : (b.qs[i - 16] >> 4);
            const int q = lo | (int)((qh >> i) & 1u) << 4;
            y[i] = d * (float)q + m;
        }
    }
}

static void deq_q8_0(const uint8_t *src, float *y, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, y += LLM_QK32) {
        llm_block_q8_0 b;
        memcpy(&b, src + ib * sizeof b, sizeof b);
        const float d = H2F(b.d);
        for (int i = 0; i < 32; i++) y[i] = (float)b.qs[i] * d;
    }
}

static void deq_q8_1(const uint8_t *src, float *y, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, y += LLM_QK32) {
        llm_block_q8_1 b;
        memcpy(&b, src + ib * sizeof b, sizeof b);
        const float d = H2F(b.d);
        for (int i = 0; i < 32; i++) y[i] = (float)b.qs[i] * d;
    }
}

static void deq_q2_k(const uint8_t *src, float *y, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, y += LLM_QK_K) {
        llm_block_q2_k b;
        memcpy(&b, src + ib * sizeof b, sizeof b);
        const float d = H2F(b.d), dmin = H2F(b.dmin);
        for (int i = 0; i < LLM_QK_K; i++) {
            const int h = i / 128, s = (i % 128) / 32, bi = i % 32, j = i / 16;
            const int q = (b.qs[32 * h + bi] >> (2 * s)) & 3;
            const float dl = d * (float)(b.scales[j] & 15);
            const float ml = dmin * (float)(b.scales[j] >> 4);
            y[i] = dl * (float)q - ml;
        }
    }
}

static void deq_q3_k(const uint8_t *src, float *y, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, y += LLM_QK_K) {
        llm_block_q3_k b;
        memcpy(&b, src + ib * sizeof b, sizeof b);
        const float d = H2F(b.d);
        float dl[16];
        for (int j = 0; j < 16; j++) {
            const int lo = j < 8 ? (b.scales[j] & 15) : (b.scales[j - 8] >> 4);
            const int hi = (b.scales[8 + j % 4] >> (2 * (j / 4))) & 3;
            dl[j] = d * (float)((lo | hi << 4) - 32);
        }
        for (int i = 0; i < LLM_QK_K; i++) {
            const int h = i / 128, s = (i % 128) / 32, bi = i % 32;
            const int low = (b.qs[32 * h + bi] >> (2 * s)) & 3;
            const int high = (b.hmask[bi] >> (i / 32)) & 1;
            y[i] = dl[i / 16] * (float)(low - (high ? 0 : 4));
        }
    }
}

static void deq_q4_k(const uint8_t *src, float *y, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, y += LLM_QK_K) {
        llm_block_q4_k b;
        memcpy(&b, src + ib * sizeof b, sizeof b);
        const float d = H2F(b.d), dmin = H2F(b.dmin);
        uint8_t sc[8], mn[8];
        llm__q4k_scale_min(b.scales, sc, mn);
        for (int i = 0; i < LLM_QK_K; i++) {
            const int j = i / 32, bi = i % 32;
            const int q = (b.qs[32 * (j / 2) + bi] >> (4 * (j % 2))) & 15;
            const float dj = d * (float)sc[j], mj = dmin * (float)mn[j];
            y[i] = dj * (float)q - mj;
        }
    }
}

static void deq_q5_k(const uint8_t *src, float *y, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, y += LLM_QK_K) {
        llm_block_q5_k b;
        memcpy(&b, src + ib * sizeof b, sizeof b);
        const float d = H2F(b.d), dmin = H2F(b.dmin);
        uint8_t sc[8], mn[8];
        llm__q4k_scale_min(b.scales, sc, mn);
        for (int i = 0; i < LLM_QK_K; i++) {
            const int j = i / 32, bi = i % 32;
            const int lo = (b.qs[32 * (j / 2) + bi] >> (4 * (j % 2))) & 15;
            const int q = lo | ((b.qh[bi] >> j) & 1) << 4;
            const float dj = d * (float)sc[j], mj = dmin * (float)mn[j];
            y[i] = dj * (float)q - mj;
        }
    }
}

static void deq_q6_k(const uint8_t *src, float *y, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, y += LLM_QK_K) {
        llm_block_q6_k b;
        memcpy(&b, src + ib * sizeof b, sizeof b);
        const float d = H2F(b.d);
        for (int i = 0; i < LLM_QK_K; i++) {
            const int h = i / 128, r = i % 128;
            const int low = (b.ql[64 * h + r % 64] >> (4 * (r / 64))) & 15;
            const int high = (b.qh[32 * h + r % 32] >> (2 * (r / 32))) & 3;
            const float dj = d * (float)b.scales[i / 16];
            y[i] = dj * (float)((low | high << 4) - 32);
        }
    }
}

static void deq_q8_k(const uint8_t *src, float *y, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, y += LLM_QK_K) {
        llm_block_q8_k b;
        memcpy(&b, src + ib * sizeof b, sizeof b);
        for (int i = 0; i < LLM_QK_K; i++) y[i] = b.d * (float)b.qs[i];
    }
}

llm_status llm_dtype_dequantize_row(llm_dtype t, const void *src, float *dst, size_t n) {
    if (!llm_dtype_is_known((int)t)) return LLM_ERR_UNSUPPORTED;
    const size_t bs = llm_dtype_block_size(t);
    if (n % bs != 0) return LLM_ERR_INVALID_ARG;
    if (n == 0) return LLM_OK;
    if (!src || !dst) return LLM_ERR_INVALID_ARG;
    const uint8_t *s = (const uint8_t *)src;
    const size_t nb = n / bs;
    switch (t) {
    case LLM_DTYPE_F32: memcpy(dst, s, n * sizeof(float)); break;
    case LLM_DTYPE_F16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, s + 2 * i, 2);
            dst[i] = llm_fp16_to_fp32(h);
        }
        break;
    case LLM_DTYPE_BF16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, s + 2 * i, 2);
            dst[i] = llm_bf16_to_fp32(h);
        }
        break;
    case LLM_DTYPE_Q4_0: deq_q4_0(s, dst, nb); break;
    case LLM_DTYPE_Q4_1: deq_q4_1(s, dst, nb); break;
    case LLM_DTYPE_Q5_0: deq_q5_0(s, dst, nb); break;
    case LLM_DTYPE_Q5_1: deq_q5_1(s, dst, nb); break;
    case LLM_DTYPE_Q8_0: deq_q8_0(s, dst, nb); break;
    case LLM_DTYPE_Q8_1: deq_q8_1(s, dst, nb); break;
    case LLM_DTYPE_Q2_K: deq_q2_k(s, dst, nb); break;
    case LLM_DTYPE_Q3_K: deq_q3_k(s, dst, nb); break;
    case LLM_DTYPE_Q4_K: deq_q4_k(s, dst, nb); break;
    case LLM_DTYPE_Q5_K: deq_q5_k(s, dst, nb); break;
    case LLM_DTYPE_Q6_K: deq_q6_k(s, dst, nb); break;
    case LLM_DTYPE_Q8_K: deq_q8_k(s, dst, nb); break;
    case LLM_DTYPE_END_: return LLM_ERR_UNSUPPORTED;
    }
    return LLM_OK;
}
