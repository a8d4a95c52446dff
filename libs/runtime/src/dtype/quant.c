/*
 * quant.c -- reference quantization from f32: F32, F16, BF16, Q8_0, Q4_0,
 * Q4_1, Q5_0, Q5_1 (bit-exact with gguf.quants, which is bit-exact with ggml's
 * *_ref functions), and the activation types Q8_1 and Q8_K (ggml's
 * semantics for the d/s/bsums fields).
 *
 * Bit-exactness depends on doing the same float32 operations in the same
 * order with no fused multiply-add: this file is compiled with
 * -ffp-contract=off (dtype.cmake), and every expression below is written the
 * way the reference writes it. Do not "simplify" x * (1/d) into x / d.
 */
#include <math.h>
#include <string.h>

#include "dtype/blocks.h"
#include "llama/dtype.h"

/* C's roundf rounds half away from zero, as np_roundf and ggml do. */

static void q_q8_0(const float *x, uint8_t *dst, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, x += LLM_QK32) {
        llm_block_q8_0 b;
        float amax = 0.0f;
        for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(x[i]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b.d = llm_fp32_to_fp16(d);
        for (int i = 0; i < 32; i++) {
            const float v = x[i] * id;
            b.qs[i] = (int8_t)roundf(v);
        }
        memcpy(dst + ib * sizeof b, &b, sizeof b);
    }
}

static void q_q8_1(const float *x, uint8_t *dst, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, x += LLM_QK32) {
        llm_block_q8_1 b;
        float amax = 0.0f;
        for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(x[i]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int sum = 0;
        for (int i = 0; i < 32; i++) {
            const float v = x[i] * id;
            b.qs[i] = (int8_t)roundf(v);
            sum += b.qs[i];
        }
        b.d = llm_fp32_to_fp16(d);
        b.s = llm_fp32_to_fp16((float)sum * d);
        memcpy(dst + ib * sizeof b, &b, sizeof b);
    }
}

/* The element with the largest magnitude, with its sign; the first one wins
 * a tie (numpy argmax and ggml's strict '<' agree on that). */
static float signed_absmax(const float *x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int i = 0; i < n; i++) {
        if (amax < fabsf(x[i])) {
            amax = fabsf(x[i]);
            max = x[i];
        }
    }
    return max;
}

static void q_q4_0(const float *x, uint8_t *dst, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, x += LLM_QK32) {
        llm_block_q4_0 b;
        const float max = signed_absmax(x, 32);
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b.d = llm_fp32_to_fp16(d);
        for (int i = 0; i < 16; i++) {
            const float v0 = x[i] * id, v1 = x[i + 16] * id;
            const float w0 = v0 + 8.5f, w1 = v1 + 8.5f;
            int q0 = (int)w0, q1 = (int)w1; /* truncation; w >= 0 here */
            q0 = q0 > 15 ? 15 : q0;
            q1 = q1 > 15 ? 15 : q1;
            b.qs[i] = (uint8_t)(q0 | q1 << 4);
        }
        memcpy(dst + ib * sizeof b, &b, sizeof b);
    }
}

static void q_q4_1(const float *x, uint8_t *dst, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, x += LLM_QK32) {
        llm_block_q4_1 b;
        float min = x[0], max = x[0];
        for (int i = 1; i < 32; i++) {
            min = x[i] < min ? x[i] : min;
            max = x[i] > max ? x[i] : max;
        }
        const float d = (max - min) / 15.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b.d = llm_fp32_to_fp16(d);
        b.m = llm_fp32_to_fp16(min);
        for (int i = 0; i < 16; i++) {
            const float v0 = (x[i] - min) * id, v1 = (x[i + 16] - min) * id;
            const float w0 = v0 + 0.5f, w1 = v1 + 0.5f;
            int q0 = (int)w0, q1 = (int)w1;
            q0 = q0 > 15 ? 15 : q0;
            q1 = q1 > 15 ? 15 : q1;
            b.qs[i] = (uint8_t)(q0 | q1 << 4);
        }
        memcpy(dst + ib * sizeof b, &b, sizeof b);
    }
}

/* Q5_0 / Q5_1: ggml's quantize_row_q5_{0,1}_ref. The 5-bit quants keep
 * ggml's integer conversions: Q5_0 clamps to 31 after an int8 truncation,
 * Q5_1 truncates to uint8 without a clamp (its largest value is 31 for
 * finite input), and both split each quant into a low nibble and bit 4. */
static void q_q5_0(const float *x, uint8_t *dst, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, x += LLM_QK32) {
        llm_block_q5_0 b;
        const float max = signed_absmax(x, 32);
        const float d = max / -16.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b.d = llm_fp32_to_fp16(d);
        uint32_t qh = 0;
        for (int j = 0; j < 16; j++) {
            const float v0 = x[j] * id, v1 = x[j + 16] * id;
            const float w0 = v0 + 16.5f, w1 = v1 + 16.5f;
            int q0 = (int)(int8_t)w0, q1 = (int)(int8_t)w1;
            q0 = q0 > 31 ? 31 : q0;
            q1 = q1 > 31 ? 31 : q1;
            const uint8_t u0 = (uint8_t)q0, u1 = (uint8_t)q1;
            b.qs[j] = (uint8_t)((u0 & 0x0F) | (u1 & 0x0F) << 4);
            qh |= (uint32_t)((u0 & 0x10u) >> 4) << j;
            qh |= (uint32_t)((u1 & 0x10u) >> 4) << (j + 16);
        }
        for (int k = 0; k < 4; k++) b.qh[k] = (uint8_t)(qh >> (8 * k));
        memcpy(dst + ib * sizeof b, &b, sizeof b);
    }
}

static void q_q5_1(const float *x, uint8_t *dst, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, x += LLM_QK32) {
        llm_block_q5_1 b;
        float min = x[0], max = x[0];
        for (int i = 1; i < 32; i++) {
            min = x[i] < min ? x[i] : min;
            max = x[i] > max ? x[i] : max;
        }
        const float d = (max - min) / 31.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b.d = llm_fp32_to_fp16(d);
        b.m = llm_fp32_to_fp16(min);
        uint32_t qh = 0;
        for (int j = 0; j < 16; j++) {
            const float v0 = (x[j] - min) * id, v1 = (x[j + 16] - min) * id;
            const float w0 = v0 + 0.5f, w1 = v1 + 0.5f;
            const uint8_t u0 = (uint8_t)w0, u1 = (uint8_t)w1;
            b.qs[j] = (uint8_t)((u0 & 0x0F) | (u1 & 0x0F) << 4);
            qh |= (uint32_t)((u0 & 0x10u) >> 4) << j;
            qh |= (uint32_t)((u1 & 0x10u) >> 4) << (j + 16);
        }
        for (int k = 0; k < 4; k++) b.qh[k] = (uint8_t)(qh >> (8 * k));
        memcpy(dst + ib * sizeof b, &b, sizeof b);
    }
}

/* Round to nearest, ties to even (what ggml's nearest_int does with its
 * magic-number trick); |v| <= 127.x here. */
static int nearest_even(float v) {
    return (int)lrintf(v);
}

static void q_q8_k(const float *x, uint8_t *dst, size_t nb) {
    for (size_t ib = 0; ib < nb; ib++, x += LLM_QK_K) {
        llm_block_q8_k b;
        memset(&b, 0, sizeof b);
        const float max = signed_absmax(x, LLM_QK_K);
        if (max != 0.0f) {
            /* Scale so the largest-magnitude element maps to exactly -127;
             * the others land in -127..127 (a rounding overshoot to 128 is
             * clamped to 127), as ggml's quantize_row_q8_K_ref does. */
            const float iscale = -127.0f / max;
            for (int i = 0; i < LLM_QK_K; i++) {
                const float v = iscale * x[i];
                const int q = nearest_even(v);
                b.qs[i] = (int8_t)(q > 127 ? 127 : q);
            }
            for (int j = 0; j < LLM_QK_K / 16; j++) {
                int sum = 0;
                for (int i = 0; i < 16; i++) sum += b.qs[16 * j + i];
                b.bsums[j] = (int16_t)sum;
            }
            b.d = 1.0f / iscale;
        }
        memcpy(dst + ib * sizeof b, &b, sizeof b);
    }
}

int llm_dtype_can_quantize(llm_dtype t) {
    switch (t) {
    case LLM_DTYPE_F32: case LLM_DTYPE_F16: case LLM_DTYPE_BF16:
    case LLM_DTYPE_Q8_0: case LLM_DTYPE_Q4_0: case LLM_DTYPE_Q4_1:
    case LLM_DTYPE_Q5_0: case LLM_DTYPE_Q5_1:
    case LLM_DTYPE_Q8_1: case LLM_DTYPE_Q8_K:
        return 1;
    default:
        return 0;
    }
}

llm_status llm_dtype_quantize_row(llm_dtype t, const float *src, void *dst, size_t n) {
    if (!llm_dtype_can_quantize(t)) return LLM_ERR_UNSUPPORTED;
    const size_t bs = llm_dtype_block_size(t);
    if (n % bs != 0) return LLM_ERR_INVALID_ARG;
    if (n == 0) return LLM_OK;
    if (!src || !dst) return LLM_ERR_INVALID_ARG;
    uint8_t *d = (uint8_t *)dst;
    const size_t nb = n / bs;
    switch (t) {
    case LLM_DTYPE_F32: memcpy(d, src, n * sizeof(float)); break;
    case LLM_DTYPE_F16:
        for (size_t i = 0; i < n; i++) {
            const uint16_t h = llm_fp32_to_fp16(src[i]);
            memcpy(d + 2 * i, &h, 2);
        }
        break;
    case LLM_DTYPE_BF16:
        for (size_t i = 0; i < n; i++) {
            const uint16_t h = llm_fp32_to_bf16(src[i]);
            memcpy(d + 2 * i, &h, 2);
        }
        break;
    case LLM_DTYPE_Q8_0: q_q8_0(src, d, nb); break;
    case LLM_DTYPE_Q8_1: q_q8_1(src, d, nb); break;
    case LLM_DTYPE_Q4_0: q_q4_0(src, d, nb); break;
    case LLM_DTYPE_Q4_1: q_q4_1(src, d, nb); break;
    case LLM_DTYPE_Q5_0: q_q5_0(src, d, nb); break;
    case LLM_DTYPE_Q5_1: q_q5_1(src, d, nb); break;
    case LLM_DTYPE_Q8_K: q_q8_k(src, d, nb); break;
    default: return LLM_ERR_UNSUPPORTED;
    }
    return LLM_OK;
}
