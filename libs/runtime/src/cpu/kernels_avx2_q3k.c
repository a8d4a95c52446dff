/*
 * cpu/kernels_avx2_q3k.c -- Q3_K x Q8_K dot product in the order of llama.cpp's
 * AVX2 ggml_vec_dot_q3_K_q8_K, so models with Q3_K tensors (llama.cpp's Q2_K
 * and Q3_K mixes) load and give llama.cpp's results for lone activation rows.
 *
 * Order (integer parts are exact, so only which integers meet in which lane
 * matters): per super-block, 8 int32 lanes, lane k holding elements
 * 32 g + 4 k .. 32 g + 4 k + 3 of every 32-element group g, each product
 * sc[i / 16] * q[i] * y[i] (sc the 6-bit scale minus 32, q in -4..3); then
 * acc = fma(d_y * d_x, float(lane), acc) on 8 float lanes, and the result is
 * their horizontal sum (high 128 bits + low, upper pair onto lower, then the
 * two).
 *
 * llama.cpp multiplies 8 or more activation rows with its tiled K-quant
 * kernel instead (ggml-cpu/tiled; Q3_K is never repacked on AVX2), the same
 * float epilogue as its Q6_K one (kernels.h, tiled): per super-block the exact
 * integer total S = sum_i sc[i / 16] q[i] y[i], r = d_x * float(S), then
 * acc = fma(r, d_y, acc) from acc = +0 in super-block order. Registered as the
 * tiled pair of Q3_K.
 *
 * AVX2 only: the scalar registry has no Q3_K entry, so a portable build still
 * reports Q3_K as unsupported. Golden: tests/runtime/test_kernels_q4_0.c
 * (scripts/golden/kernels/q3k_llamacpp.py).
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "dtype/blocks.h"

/* lane[k] = sum over the elements i with (i % 32) / 4 == k of sc[i / 16] q[i] y[i]
 * for one super-block (exact). */
static void q3_k_lanes(const llm_block_q3_k *x, const llm_block_q8_k *y, int32_t lane[8]) {
    int sc[16];
    for (int j = 0; j < 16; j++) {
        const int lo = j < 8 ? (x->scales[j] & 15) : (x->scales[j - 8] >> 4);
        const int hi = (x->scales[8 + j % 4] >> (2 * (j / 4))) & 3;
        sc[j] = (lo | hi << 4) - 32;
    }
    for (int k = 0; k < 8; k++) lane[k] = 0;
    for (int i = 0; i < LLM_QK_K; i++) {
        const int h = i / 128, s = (i % 128) / 32, b = i % 32;
        const int low = (x->qs[32 * h + b] >> (2 * s)) & 3;
        const int high = (x->hmask[b] >> (i / 32)) & 1;
        lane[b / 4] += sc[i / 16] * (low - (high ? 0 : 4)) * y->qs[i];
    }
}

static float dot_q3_k_q8_k_tiled(int64_t n, const void *w, const void *a) {
    const llm_block_q3_k *x = w;
    const llm_block_q8_k *y = a;
    float acc = 0.0f;
    for (int64_t ib = 0; ib < n / LLM_QK_K; ib++) {
        int32_t lane[8];
        q3_k_lanes(&x[ib], &y[ib], lane);
        int32_t s = 0;
        for (int k = 0; k < 8; k++) s += lane[k];
        const float r = _cvtsh_ss(x[ib].d) * (float)s;
        acc = fmaf(r, y[ib].d, acc);
    }
    return acc;
}

static void dot4_q3_k_q8_k_tiled(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    for (int j = 0; j < 4; j++) out[j] = dot_q3_k_q8_k_tiled(n, w, (const char *)a + (size_t)j * a_stride);
}

static float dot_q3_k_q8_k(int64_t n, const void *w, const void *a) {
    const llm_block_q3_k *x = w;
    const llm_block_q8_k *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t ib = 0; ib < n / LLM_QK_K; ib++) {
        int32_t lane[8];
        q3_k_lanes(&x[ib], &y[ib], lane);
        const float d = y[ib].d * _cvtsh_ss(x[ib].d);
        __m256i li;
        memcpy(&li, lane, sizeof li);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(li), acc);
    }
    __m128 s = _mm_add_ps(_mm256_extractf128_ps(acc, 1), _mm256_castps256_ps128(acc));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

void llm__cpu_kernels_avx2_q3k(llm__cpu_kernels *k) {
    k->act_type[LLM_DTYPE_Q3_K] = LLM_DTYPE_Q8_K;
    k->dot[LLM_DTYPE_Q3_K] = dot_q3_k_q8_k;
    k->tiled[LLM_DTYPE_Q3_K].dot = dot_q3_k_q8_k_tiled;
    k->tiled[LLM_DTYPE_Q3_K].dot4 = dot4_q3_k_q8_k_tiled;
}

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

void llm__cpu_kernels_avx2_q3k(llm__cpu_kernels *k) { (void)k; }

#endif
