/*
 * golden_gen.h -- the pseudo-random bytes of the kernel golden tests
 * (test_kernels_q5.c, test_kernels_kquant.c), step for step as class Gen in
 * scripts/golden/kernels/q5_dots_llamacpp.py and kquant_llamacpp.py, so the
 * tests rebuild exactly the rows the scripts fed to llama.cpp's kernels.
 */
#ifndef LLM_TEST_GOLDEN_GEN_H
#define LLM_TEST_GOLDEN_GEN_H

#include <stdint.h>
#include <string.h>

#include "dtype/blocks.h"

/* Case i's starting state: seed(i) in the scripts. */
static inline uint32_t gold_seed(int i) {
    uint32_t s = 0x9E3779B9u ^ (uint32_t)((uint32_t)i * 0x85EBCA6Bu);
    return s ? s : 1;
}

/* xorshift32. */
static inline uint32_t gold_next(uint32_t *s) {
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

static inline uint8_t gold_byte(uint32_t *s) { return (uint8_t)(gold_next(s) >> 24); }

/* A half 2^-7 .. 2^-1 with random mantissa (and sign if asked). */
static inline uint16_t gold_half(uint32_t *s, int sign) {
    uint32_t r = gold_next(s);
    uint32_t h = ((8 + r % 7) << 10) | ((r >> 8) & 0x3FF);
    if (sign && ((r >> 20) & 1)) h |= 0x8000;
    return (uint16_t)h;
}

/* An 8-bit quant as the Q8_0/Q8_1 quantizers give them (never -128). */
static inline int8_t gold_q8(uint32_t *s) {
    int v = (int8_t)gold_byte(s);
    return (int8_t)(v == -128 ? -127 : v);
}

/* A float 2^-10 .. 2^-5 with random mantissa (Gen.f32). */
static inline float gold_f32(uint32_t *s) {
    uint32_t r = gold_next(s), fb = ((117 + r % 6) << 23) | ((r >> 3) & 0x7FFFFF);
    float f;
    memcpy(&f, &fb, 4);
    return f;
}

/* A Q8_K activation block: d, 256 random quants, and their 16-sums. */
static inline void gold_q8k_block(uint32_t *s, llm_block_q8_k *y) {
    y->d = gold_f32(s);
    for (int j = 0; j < 256; j++) y->qs[j] = (int8_t)gold_byte(s);
    for (int j = 0; j < 16; j++) {
        int sum = 0;
        for (int e = 0; e < 16; e++) sum += y->qs[16 * j + e];
        y->bsums[j] = (int16_t)sum;
    }
}

#endif
