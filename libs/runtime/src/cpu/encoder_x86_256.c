/*
 * cpu/encoder_x86_256.c -- AVX2 variant of the erf GELU row (encoder_cpu.c has
 * the scalar reference and describes the method): the same expression, eight
 * lanes at a time, with the exponential of vexp.h; the tail goes through the
 * scalar reference. And attention_full per (sequence, head), keys eight at a
 * time (cpu.h). Compiled with -mavx2 -mfma -mf16c, selected at run time.
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

/* attention_full, one head of one sequence (cpu.h). Scores: K transposed
 * into scratch ([hd][n8], zero past n), then 8 keys per vector, d ascending
 * (up to 4 blocks of 8 keys at once for independent chains). */
void llm__attn_full_seq_avx2(int64_t n, int64_t hd, const float *q, size_t qs, const float *k, const float *v,
                             size_t kvs, float scale, float *out, size_t os, float *scratch,
                             double (*exp_sum)(float *y, const float *x, float max, int64_t n)) {
    const int64_t n8 = (n + 7) & ~(int64_t)7;
    float *kt = scratch, *s = scratch + hd * n8;
    for (int64_t j = 0; j < n8; j++)
        for (int64_t d = 0; d < hd; d++) kt[d * n8 + j] = j < n ? k[(size_t)j * kvs + (size_t)d] : 0.0f;
    const __m256 vscale = _mm256_set1_ps(scale);
    for (int64_t i = 0; i < n; i++) {
        const float *qi = q + (size_t)i * qs;
        int64_t j0 = 0;
        for (; j0 + 32 <= n8; j0 += 32) {
            __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
            __m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
            for (int64_t d = 0; d < hd; d++) {
                const __m256 qd = _mm256_set1_ps(qi[d]);
                const float *kr = kt + d * n8 + j0;
                a0 = _mm256_fmadd_ps(qd, _mm256_loadu_ps(kr), a0);
                a1 = _mm256_fmadd_ps(qd, _mm256_loadu_ps(kr + 8), a1);
                a2 = _mm256_fmadd_ps(qd, _mm256_loadu_ps(kr + 16), a2);
                a3 = _mm256_fmadd_ps(qd, _mm256_loadu_ps(kr + 24), a3);
            }
            _mm256_storeu_ps(s + j0, _mm256_mul_ps(a0, vscale));
            _mm256_storeu_ps(s + j0 + 8, _mm256_mul_ps(a1, vscale));
            _mm256_storeu_ps(s + j0 + 16, _mm256_mul_ps(a2, vscale));
            _mm256_storeu_ps(s + j0 + 24, _mm256_mul_ps(a3, vscale));
        }
        for (; j0 < n8; j0 += 8) {
            __m256 a0 = _mm256_setzero_ps();
            for (int64_t d = 0; d < hd; d++) a0 = _mm256_fmadd_ps(_mm256_set1_ps(qi[d]), _mm256_loadu_ps(kt + d * n8 + j0), a0);
            _mm256_storeu_ps(s + j0, _mm256_mul_ps(a0, vscale));
        }
        float mx = -INFINITY;
        for (int64_t j = 0; j < n; j++) mx = s[j] > mx ? s[j] : mx;
        const float inv = (float)(1.0 / exp_sum(s, s, mx, n));
        float *oi = out + (size_t)i * os;
        for (int64_t d0 = 0; d0 < hd; d0 += 32) {
            const int nv = hd - d0 >= 32 ? 4 : (int)((hd - d0) / 8);
            __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
            for (int64_t j = 0; j < n; j++) {
                const __m256 p = _mm256_set1_ps(s[j] * inv);
                const float *vj = v + (size_t)j * kvs + (size_t)d0;
                for (int t = 0; t < nv; t++) acc[t] = _mm256_fmadd_ps(p, _mm256_loadu_ps(vj + 8 * t), acc[t]);
            }
            for (int t = 0; t < nv; t++) _mm256_storeu_ps(oi + d0 + 8 * t, acc[t]);
        }
    }
}

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

void llm__gelu_erf_row_avx2(float *out, const float *x, int64_t n) { llm__gelu_erf_row_scalar(out, x, n); }
void llm__attn_full_seq_avx2(int64_t n, int64_t hd, const float *q, size_t qs, const float *k, const float *v,
                             size_t kvs, float scale, float *out, size_t os, float *scratch,
                             double (*exp_sum)(float *y, const float *x, float max, int64_t n)) {
    (void)n, (void)hd, (void)q, (void)qs, (void)k, (void)v, (void)kvs, (void)scale, (void)out, (void)os;
    (void)scratch, (void)exp_sum;
}

#endif
