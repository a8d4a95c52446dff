/*
 * cpu/vexp.h -- PRIVATE: the exponential used by SiLU and softmax, in a
 * scalar form that the AVX2 kernels reproduce lane for lane.
 *
 * Why not libm's expf: llama.cpp's x86 build evaluates exp with a short
 * polynomial in its vector loops, and its results differ from a correctly
 * rounded expf by an ulp now and then. Attention probabilities are rounded
 * to F16 and activations to 8 bits right after, so a single ulp can move a
 * value across a rounding boundary, and over 30 layers that shows up as
 * flipped near-tie argmaxes. Evaluating the same approximation the same way
 * makes our logits equal llama.cpp's instead of merely close.
 *
 * The method is the classic one: x = n ln2 + b with n = round(x / ln2) and
 * |b| <= ln2 / 2 (ln2 split in a high and a low part so that n ln2 is exact
 * enough), e^b - 1 by a degree-5 minimax polynomial, and 2^n put directly in
 * the exponent bits. Outside |n| <= 126 the scale is split in two factors so
 * large and small results saturate to inf and 0 without a NaN. The
 * coefficients are the published single-precision fit that llama.cpp uses
 * (figures, not code).
 */
#ifndef LLM_CPU_VEXP_H
#define LLM_CPU_VEXP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define LLM__EXP_SHIFT 0x1.8p23f      /* 1.5 * 2^23: adding it rounds to an integer */
#define LLM__EXP_LOG2E 0x1.715476p+0f /* 1 / ln 2 */
#define LLM__EXP_LN2_HI 0x1.62e4p-1f  /* ln 2, high bits */
#define LLM__EXP_LN2_LO 0x1.7f7d1cp-20f /* ln 2 - LN2_HI */
#define LLM__EXP_C1 0x1.ffffecp-1f
#define LLM__EXP_C2 0x1.fffdb6p-2f
#define LLM__EXP_C3 0x1.555e66p-3f
#define LLM__EXP_C4 0x1.573e2ep-5f
#define LLM__EXP_C5 0x1.0e4020p-7f

static inline uint32_t llm__f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static inline float llm__u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

/* e^x, bit for bit what the AVX2 kernels compute per lane. fmaf is the
 * fused operation (exact product, one rounding) on every platform. */
static inline float llm__exp_poly(float x) {
    const float z = fmaf(x, LLM__EXP_LOG2E, LLM__EXP_SHIFT);
    const float n = z - LLM__EXP_SHIFT;
    const float b = fmaf(-n, LLM__EXP_LN2_LO, fmaf(-n, LLM__EXP_LN2_HI, x));
    /* z's low mantissa bits hold n; shifted into the exponent field they
     * make 2^n once the bits of 1.0f are added. */
    const uint32_t e = llm__f2u(z) << 23;
    const float k = llm__u2f(e + llm__f2u(1.0f));
    const float u = b * b;
    const float j = fmaf(fmaf(fmaf(LLM__EXP_C5, b, LLM__EXP_C4), u, fmaf(LLM__EXP_C3, b, LLM__EXP_C2)), u,
                         LLM__EXP_C1 * b);
    if (!(fabsf(n) > 126.0f)) {
        return fmaf(j, k, k);
    }
    /* 2^n out of range for one factor: 2^n = s1 * s2 with s1 = 2^(+-127)-ish. */
    const uint32_t g = n <= 0.0f ? 0x82000000u : 0u;
    const float s1 = llm__u2f(g + 0x7f000000u);
    const float s2 = llm__u2f(e - g);
    if (fabsf(n) > 192.0f) {
        return s1 * s1;
    }
    return fmaf(s2, j, s2) * s1;
}

/* Sum of 8 floats in the order of an AVX 128-bit fold: halves first, then
 * (0 + 2) + (1 + 3) of the four partial sums. */
static inline float llm__hsum8(const float v[8]) {
    const float s0 = v[0] + v[4], s1 = v[1] + v[5], s2 = v[2] + v[6], s3 = v[3] + v[7];
    return (s0 + s2) + (s1 + s3);
}

#endif
