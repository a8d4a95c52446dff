/*
 * cpu/kernels/tofloat_x86_256.c -- AVX2 + F16C: rows of the quantized KV cache
 * types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1), F16 and BF16 to floats: the V rows
 * of flash attention (attention_fa.c), which dequantizes one row per key,
 * and the weights the tiled product packs (gemm_cpu.c).
 *
 * Same bits as the reference dequantizers (dtype/dequant.c, which follow
 * ggml-base's to_float): each element is an exact small integer converted
 * to float, times the block's scale in one multiply, plus the block's
 * minimum in a separate add for Q4_1 / Q5_1, as ggml-base writes it (the
 * product of an F16 scale and an integer below 32 is exact in a float, so a
 * fused multiply-add would give the same bits anyway). Every element on its
 * own, so vector width changes no bit.
 *
 * Compiled with -mavx2 -mfma -mf16c (sources.cmake) and installed by
 * llm__cpu_kernels_x86(), which only runs once the CPU has been checked.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "dtype/blocks.h"

/* 32 signed bytes -> y[0..32) = float(byte) * d. */
static inline void store_scaled(float *y, __m256i q, __m256 d) {
    const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
    const __m128i part[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
    for (int j = 0; j < 4; j++) {
        _mm256_storeu_ps(y + 8 * j, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(part[j])), d));
    }
}

/* The same, then + m (a separate rounding, as ggml-base's `x * d + m`). */
static inline void store_scaled_min(float *y, __m256i q, __m256 d, __m256 m) {
    const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
    const __m128i part[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
    for (int j = 0; j < 4; j++) {
        const __m256 p = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(part[j])), d);
        _mm256_storeu_ps(y + 8 * j, _mm256_add_ps(p, m));
    }
}

/* Byte i = 0x10 if bit i of the little-endian word at p is set, else 0. */
static inline __m256i fifth_bits(const uint8_t *p) {
    uint32_t w;
    memcpy(&w, p, 4);
    /* byte i <- byte i / 8 of w, then test bit i % 8 */
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32((int)w), _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2,
                                                    2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

static void to_float_q8_0(const void *x, float *y, int64_t n) {
    const uint8_t *p = x;
    for (int64_t b = 0; b < n / LLM_QK32; b++, p += sizeof(llm_block_q8_0), y += LLM_QK32) {
        uint16_t d;
        memcpy(&d, p, 2);
        const __m256i q = _mm256_loadu_si256((const __m256i *)(p + offsetof(llm_block_q8_0, qs)));
        store_scaled(y, q, _mm256_set1_ps(h2f(d)));
    }
}

static void to_float_q4_0(const void *x, float *y, int64_t n) {
    const uint8_t *p = x;
    for (int64_t b = 0; b < n / LLM_QK32; b++, p += sizeof(llm_block_q4_0), y += LLM_QK32) {
        uint16_t d;
        memcpy(&d, p, 2);
        const __m256i q = _mm256_sub_epi8(unpack_nibbles(p + offsetof(llm_block_q4_0, qs)), _mm256_set1_epi8(8));
        store_scaled(y, q, _mm256_set1_ps(h2f(d)));
    }
}

static void to_float_q4_1(const void *x, float *y, int64_t n) {
    const uint8_t *p = x;
    for (int64_t b = 0; b < n / LLM_QK32; b++, p += sizeof(llm_block_q4_1), y += LLM_QK32) {
        uint16_t d, m;
        memcpy(&d, p, 2);
        memcpy(&m, p + 2, 2);
        const __m256i q = unpack_nibbles(p + offsetof(llm_block_q4_1, qs));
        store_scaled_min(y, q, _mm256_set1_ps(h2f(d)), _mm256_set1_ps(h2f(m)));
    }
}

static void to_float_q5_0(const void *x, float *y, int64_t n) {
    const uint8_t *p = x;
    for (int64_t b = 0; b < n / LLM_QK32; b++, p += sizeof(llm_block_q5_0), y += LLM_QK32) {
        uint16_t d;
        memcpy(&d, p, 2);
        const __m256i q5 = _mm256_or_si256(unpack_nibbles(p + offsetof(llm_block_q5_0, qs)),
                                           fifth_bits(p + offsetof(llm_block_q5_0, qh)));
        store_scaled(y, _mm256_sub_epi8(q5, _mm256_set1_epi8(16)), _mm256_set1_ps(h2f(d)));
    }
}

static void to_float_q5_1(const void *x, float *y, int64_t n) {
    const uint8_t *p = x;
    for (int64_t b = 0; b < n / LLM_QK32; b++, p += sizeof(llm_block_q5_1), y += LLM_QK32) {
        uint16_t d, m;
        memcpy(&d, p, 2);
        memcpy(&m, p + 2, 2);
        const __m256i q5 = _mm256_or_si256(unpack_nibbles(p + offsetof(llm_block_q5_1, qs)),
                                           fifth_bits(p + offsetof(llm_block_q5_1, qh)));
        store_scaled_min(y, q5, _mm256_set1_ps(h2f(d)), _mm256_set1_ps(h2f(m)));
    }
}

static void to_float_bf16(const void *x, float *y, int64_t n) {
    const uint16_t *p = x;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, load_bf8(p + i));
    }
    for (; i < n; i++) {
        y[i] = llm_bf16_to_fp32(p[i]);
    }
}

/* F16 widens exactly; F16C's conversion is the reference's value for every
 * number (a signaling NaN comes out quiet). */
static void to_float_f16(const void *x, float *y, int64_t n) {
    const uint16_t *p = x;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, load_h8(p + i));
    }
    for (; i < n; i++) {
        y[i] = _cvtsh_ss(p[i]);
    }
}

void llm__cpu_kernels_tofloat_x86(llm__cpu_kernels *k) {
    k->to_float[LLM_DTYPE_F16] = to_float_f16;
    k->to_float[LLM_DTYPE_Q8_0] = to_float_q8_0;
    k->to_float[LLM_DTYPE_Q4_0] = to_float_q4_0;
    k->to_float[LLM_DTYPE_Q4_1] = to_float_q4_1;
    k->to_float[LLM_DTYPE_Q5_0] = to_float_q5_0;
    k->to_float[LLM_DTYPE_Q5_1] = to_float_q5_1;
    k->to_float[LLM_DTYPE_BF16] = to_float_bf16;
}

#else

void llm__cpu_kernels_tofloat_x86(llm__cpu_kernels *k) { (void)k; }

#endif
