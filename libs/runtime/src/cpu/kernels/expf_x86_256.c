/*
 * cpu/kernels/expf_x86_256.c -- expf of many values at once, with the bits of
 * the C library's expf, for llama.cpp's CPU flash attention (attention_fa.c),
 * which calls libm's expf once per key and query head.
 *
 * Why not vexp.h: flash attention's exponentials are libm's, not ggml's
 * polynomial, so equal logits need libm's bits. glibc (2.28 and later) on a
 * CPU with FMA evaluates expf in double as follows (its __expf_fma, read off
 * the instructions; figures, not code):
 *     xd = (double)x
 *     kd = fma(32 / ln 2, xd, 0x1.8p52)        (rounds 32 x / ln 2 to an integer)
 *     ki = bits of kd;  kd = kd - 0x1.8p52
 *     r  = fma(32 / ln 2, xd, -kd)             (32 x / ln 2 - k, |r| <= 1/2)
 *     s  = double with bits T[ki % 32] + (ki << 47)      (2^(k / 32))
 *     z  = fma(C0, r, C1);  y = fma(C2, r, 1);  y = fma(z, r * r, y)
 *     expf(x) = (float)(y * s)
 * with T[i] = bits of 2^(i / 32) rounded to double, minus i << 47, and the
 * degree-3 coefficients C0..C2 below. Every step is one IEEE operation in
 * double, so four lanes of AVX2 give the same bits as the scalar code. For
 * |x| >= 88 (and NaN, infinities) glibc takes other paths: -inf gives 0, NaN
 * x + x, x > 88.72... overflows, x < -103.97... gives +0, x below
 * -103.28... gives the smallest subnormal; otherwise the fast path. This
 * kernel does the fast path for every lane and the special cases per lane
 * after it.
 *
 * The backend installs it only after checking it against the running
 * libm's expf on a set of inputs (llm__cpu_expf_matches_libm); a C library
 * whose expf computes otherwise keeps the scalar loop over expf.
 * test_expf_libm compares it with libm on a dense sweep of [-110, 90].
 *
 * Compiled with -mavx2 -mfma -mf16c (sources.cmake).
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* 2^(i/32) rounded to double, as bits, minus i << 47 (i = 0..31). */
static const uint64_t k_exp2_32[32] = {
    0x3ff0000000000000ull, 0x3fefd9b0d3158574ull, 0x3fefb5586cf9890full, 0x3fef9301d0125b51ull,
    0x3fef72b83c7d517bull, 0x3fef54873168b9aaull, 0x3fef387a6e756238ull, 0x3fef1e9df51fdee1ull,
    0x3fef06fe0a31b715ull, 0x3feef1a7373aa9cbull, 0x3feedea64c123422ull, 0x3feece086061892dull,
    0x3feebfdad5362a27ull, 0x3feeb42b569d4f82ull, 0x3feeab07dd485429ull, 0x3feea47eb03a5585ull,
    0x3feea09e667f3bcdull, 0x3fee9f75e8ec5f74ull, 0x3feea11473eb0187ull, 0x3feea589994cce13ull,
    0x3feeace5422aa0dbull, 0x3feeb737b0cdc5e5ull, 0x3feec49182a3f090ull, 0x3feed503b23e255dull,
    0x3feee89f995ad3adull, 0x3feeff76f2fb5e47ull, 0x3fef199bdd85529cull, 0x3fef3720dcef9069ull,
    0x3fef5818dcfba487ull, 0x3fef7c97337b9b5full, 0x3fefa4afa2a490daull, 0x3fefd0765b6e4540ull,
};

#define INV_LN2_N 0x1.71547652b82fep+5 /* 32 / ln 2 */
#define SHIFT 0x1.8p+52
#define C0 0x1.c6af84b912394p-20
#define C1 0x1.ebfce50fac4f3p-13
#define C2 0x1.62e42ff0c52d6p-6

/* The fast path on four floats widened to doubles. */
static inline __m128 exp4(__m128 x) {
    const __m256d xd = _mm256_cvtps_pd(x);
    const __m256d inv = _mm256_set1_pd(INV_LN2_N), shift = _mm256_set1_pd(SHIFT);
    __m256d kd = _mm256_fmadd_pd(inv, xd, shift);
    const __m256i ki = _mm256_castpd_si256(kd);
    kd = _mm256_sub_pd(kd, shift);
    const __m256d r = _mm256_fmsub_pd(inv, xd, kd);
    const __m256i idx = _mm256_and_si256(ki, _mm256_set1_epi64x(31));
    __m256i t = _mm256_i64gather_epi64((const long long *)k_exp2_32, idx, 8);
    t = _mm256_add_epi64(t, _mm256_slli_epi64(ki, 47));
    const __m256d s = _mm256_castsi256_pd(t);
    const __m256d z = _mm256_fmadd_pd(_mm256_set1_pd(C0), r, _mm256_set1_pd(C1));
    const __m256d r2 = _mm256_mul_pd(r, r);
    __m256d y = _mm256_fmadd_pd(_mm256_set1_pd(C2), r, _mm256_set1_pd(1.0));
    y = _mm256_fmadd_pd(z, r2, y);
    return _mm256_cvtpd_ps(_mm256_mul_pd(y, s));
}

/* glibc's cases for |x| >= 88 and NaN (see the top of the file). */
static float exp_special(float x, float fast) {
    if (isnan(x)) return x + x;
    if (x == -INFINITY) return 0.0f;
    if (x > 0x1.62e42ep6f) return INFINITY;
    if (x < -0x1.9fe368p6f) return 0.0f;
    if (x < -0x1.9d1d9ep6f) return 0x1p-149f;
    return fast;
}

static void expf_n_avx2(float *y, const float *x, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256 e = _mm256_set_m128(exp4(_mm256_extractf128_ps(v, 1)), exp4(_mm256_castps256_ps128(v)));
        _mm256_storeu_ps(y + i, e);
        /* lanes with |x| >= 88 or NaN: !(|x| < 88) */
        const __m256 big = _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), v), _mm256_set1_ps(88.0f),
                                         _CMP_NLT_UQ);
        int mask = _mm256_movemask_ps(big);
        while (mask) {
            const int l = __builtin_ctz((unsigned)mask);
            y[i + l] = exp_special(x[i + l], y[i + l]);
            mask &= mask - 1;
        }
    }
    if (i < n) {
        float xb[8] = {0}, yb[8];
        memcpy(xb, x + i, (size_t)(n - i) * sizeof(float));
        expf_n_avx2(yb, xb, 8);
        memcpy(y + i, yb, (size_t)(n - i) * sizeof(float));
    }
}

llm__expf_n_fn llm__cpu_expf_n_avx2_get(void) { return expf_n_avx2; }

#else

llm__expf_n_fn llm__cpu_expf_n_avx2_get(void) { return NULL; }

#endif
