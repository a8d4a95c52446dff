/*
 * dtype.c -- type traits (names, block sizes), row sizes and the scalar
 * fp16/bf16 conversions. Everything here is table-driven and pure.
 */
#include <string.h>

#include "dtype/blocks.h"
#include "llama/dtype.h"

typedef struct dtype_traits {
    const char *name; /* NULL: not a type llm knows */
    size_t block_size;
    size_t block_bytes;
} dtype_traits;

static const dtype_traits k_traits[LLM_DTYPE_END_] = {
    [LLM_DTYPE_F32] = {"F32", 1, 4},
    [LLM_DTYPE_F16] = {"F16", 1, 2},
    [LLM_DTYPE_Q4_0] = {"Q4_0", LLM_QK32, sizeof(llm_block_q4_0)},
    [LLM_DTYPE_Q4_1] = {"Q4_1", LLM_QK32, sizeof(llm_block_q4_1)},
    [LLM_DTYPE_Q5_0] = {"Q5_0", LLM_QK32, sizeof(llm_block_q5_0)},
    [LLM_DTYPE_Q5_1] = {"Q5_1", LLM_QK32, sizeof(llm_block_q5_1)},
    [LLM_DTYPE_Q8_0] = {"Q8_0", LLM_QK32, sizeof(llm_block_q8_0)},
    [LLM_DTYPE_Q8_1] = {"Q8_1", LLM_QK32, sizeof(llm_block_q8_1)},
    [LLM_DTYPE_Q2_K] = {"Q2_K", LLM_QK_K, sizeof(llm_block_q2_k)},
    [LLM_DTYPE_Q3_K] = {"Q3_K", LLM_QK_K, sizeof(llm_block_q3_k)},
    [LLM_DTYPE_Q4_K] = {"Q4_K", LLM_QK_K, sizeof(llm_block_q4_k)},
    [LLM_DTYPE_Q5_K] = {"Q5_K", LLM_QK_K, sizeof(llm_block_q5_k)},
    [LLM_DTYPE_Q6_K] = {"Q6_K", LLM_QK_K, sizeof(llm_block_q6_k)},
    [LLM_DTYPE_Q8_K] = {"Q8_K", LLM_QK_K, sizeof(llm_block_q8_k)},
    [LLM_DTYPE_BF16] = {"BF16", 1, 2},
};

int llm_dtype_is_known(int t) {
    return t >= 0 && t < LLM_DTYPE_END_ && k_traits[t].name != NULL;
}

const char *llm_dtype_name(llm_dtype t) {
    return llm_dtype_is_known((int)t) ? k_traits[t].name : NULL;
}

size_t llm_dtype_block_size(llm_dtype t) {
    return llm_dtype_is_known((int)t) ? k_traits[t].block_size : 0;
}

size_t llm_dtype_block_bytes(llm_dtype t) {
    return llm_dtype_is_known((int)t) ? k_traits[t].block_bytes : 0;
}

llm_status llm_dtype_row_size(llm_dtype t, uint64_t n_elements, size_t *out_bytes) {
    if (!out_bytes) return LLM_ERR_INVALID_ARG;
    if (!llm_dtype_is_known((int)t)) return LLM_ERR_UNSUPPORTED;
    const uint64_t bs = k_traits[t].block_size, bb = k_traits[t].block_bytes;
    if (n_elements % bs != 0) return LLM_ERR_BAD_FORMAT;
    const uint64_t nb = n_elements / bs;
    if (nb > UINT64_MAX / bb) return LLM_ERR_INVALID_ARG;
    const uint64_t bytes = nb * bb;
    if (bytes > (uint64_t)SIZE_MAX) return LLM_ERR_INVALID_ARG;
    *out_bytes = (size_t)bytes;
    return LLM_OK;
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float llm_fp16_to_fp32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t man = h & 0x3FFu;
    if (exp == 0x1F) /* inf / NaN: keep the payload */
        return bits_f32(sign | 0x7F800000u | (man << 13));
    if (exp == 0) {
        if (man == 0) return bits_f32(sign);
        /* Subnormal half: normalise. value = man * 2^-24. */
        exp = 127 - 15 + 1;
        while ((man & 0x400u) == 0) {
            man <<= 1;
            exp--;
        }
        man &= 0x3FFu;
        return bits_f32(sign | (exp << 23) | (man << 13));
    }
    return bits_f32(sign | ((exp + 127 - 15) << 23) | (man << 13));
}

uint16_t llm_fp32_to_fp16(float f) {
    const uint32_t x = f32_bits(f);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t ax = x & 0x7FFFFFFFu;
    if (ax >= 0x7F800000u) { /* inf or NaN */
        if (ax == 0x7F800000u) return (uint16_t)(sign | 0x7C00u);
        /* NaN: keep the top payload bits, force quiet so it stays a NaN. */
        return (uint16_t)(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));
    }
    const int32_t e = (int32_t)(ax >> 23) - 127; /* unbiased exponent */
    if (e > 15) return (uint16_t)(sign | 0x7C00u); /* overflows (>= 2^16) */
    if (e >= -14) {
        /* Normal half. Round the 23-bit mantissa to 10 bits, ties to even;
         * a carry out of the mantissa correctly bumps the exponent (and can
         * reach infinity, 0x7C00). */
        uint32_t m = ax & 0x7FFFFFu;
        uint32_t hv = ((uint32_t)(e + 15) << 10) | (m >> 13);
        const uint32_t rem = m & 0x1FFFu;
        if (rem > 0x1000u || (rem == 0x1000u && (hv & 1u))) hv++;
        return (uint16_t)(sign | hv);
    }
    if (e < -25) return sign; /* below half the smallest subnormal */
    /* Subnormal half: value = M * 2^-24 with M = round(f * 2^24). The full
     * significand (with the implicit 1) is 24 bits, scaled by 2^(e-23). */
    const uint32_t sig = (ax & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = (uint32_t)(-e - 1); /* 14..24: bits dropped beyond 2^-24 */
    uint32_t hv = sig >> shift;
    const uint32_t rem = sig & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (hv & 1u))) hv++;
    return (uint16_t)(sign | hv);
}

float llm_bf16_to_fp32(uint16_t h) {
    return bits_f32((uint32_t)h << 16);
}

uint16_t llm_fp32_to_bf16(float f) {
    uint32_t x = f32_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) /* NaN: make it quiet */
        return (uint16_t)((x >> 16) | 64u);
    x += 0x7FFFu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}
