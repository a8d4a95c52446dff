/*
 * cpu/encoder_avx2.c -- AVX2 variant of the erf GELU row (encoder_cpu.c has
 * the scalar reference and describes the method): the same expression, eight
 * lanes at a time, with the exponential of vexp.h; the tail goes through the
 * scalar reference. Compiled with -mavx2 -mfma -mf16c, selected at run time.
 */
#include "cpu/cpu.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)

#include <immintrin.h>

#include "cpu/vexp.h"

/* e^x for -50 <= x <= 0 (the only range gelu asks for): vexp.h's fast path. */
static inline __m256 exp8(__m256 x) {
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(LLM__EXP_LOG2E), _mm256_set1_ps(LLM__EXP_SHIFT));
    const __m256 n = _mm256_sub_ps(z, _mm256_set1_ps(LLM__EXP_SHIFT));
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(LLM__EXP_LN2_LO),
                                      _mm256_fnmadd_ps(n, _mm256_set1_ps(LLM__EXP_LN2_HI), x));
    const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
    const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(_mm256_set1_ps(1.0f))));
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 j = _mm256_fmadd_ps(
        _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(LLM__EXP_C5), b, _mm256_set1_ps(LLM__EXP_C4)), u,
                        _mm256_fmadd_ps(_mm256_set1_ps(LLM__EXP_C3), b, _mm256_set1_ps(LLM__EXP_C2))),
        u, _mm256_mul_ps(_mm256_set1_ps(LLM__EXP_C1), b));
    return _mm256_fmadd_ps(j, k, k);
}

void llm__gelu_erf_row_avx2(float *out, const float *x, int64_t n) {
    int64_t i = 0;
    const __m256 sgn = _mm256_set1_ps(-0.0f), lo = _mm256_set1_ps(-10.0f), hi = _mm256_set1_ps(10.0f);
    const __m256 half = _mm256_set1_ps(0.5f), two = _mm256_set1_ps(2.0f), zero = _mm256_setzero_ps();
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256 z = _mm256_mul_ps(_mm256_andnot_ps(sgn, v), _mm256_set1_ps(0.70710678118654752f));
        const __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f),
                                       _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), z, _mm256_set1_ps(1.0f)));
        __m256 pl = _mm256_fmadd_ps(_mm256_set1_ps(1.061405429f), t, _mm256_set1_ps(-1.453152027f));
        pl = _mm256_fmadd_ps(pl, t, _mm256_set1_ps(1.421413741f));
        pl = _mm256_fmadd_ps(pl, t, _mm256_set1_ps(-0.284496736f));
        pl = _mm256_fmadd_ps(pl, t, _mm256_set1_ps(0.254829592f));
        /* clamp the exponent argument: lanes outside (-10, 10) are replaced below */
        const __m256 arg = _mm256_max_ps(_mm256_sub_ps(zero, _mm256_mul_ps(z, z)), _mm256_set1_ps(-50.0f));
        const __m256 erfc = _mm256_mul_ps(_mm256_mul_ps(pl, t), exp8(arg));
        const __m256 hv = _mm256_mul_ps(half, v);
        const __m256 pos = _mm256_mul_ps(hv, _mm256_sub_ps(two, erfc));
        const __m256 neg = _mm256_mul_ps(hv, erfc);
        __m256 r = _mm256_blendv_ps(pos, neg, _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
        r = _mm256_blendv_ps(r, zero, _mm256_cmp_ps(v, lo, _CMP_LE_OQ));
        r = _mm256_blendv_ps(r, v, _mm256_cmp_ps(v, hi, _CMP_GE_OQ));
        _mm256_storeu_ps(out + i, r);
    }
    llm__gelu_erf_row_scalar(out + i, x + i, n - i);
}

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

void llm__gelu_erf_row_avx2(float *out, const float *x, int64_t n) { llm__gelu_erf_row_scalar(out, x, n); }

#endif
