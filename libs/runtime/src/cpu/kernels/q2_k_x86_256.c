/*
 * cpu/kernels/q2_k_x86_256.c -- Q2_K x Q8_K dot products in llama.cpp's orders,
 * so files with Q2_K tensors (llama.cpp's Q2_K mix) load and give its
 * results.
 *
 * Lone activation rows (llama.cpp's AVX2 ggml_vec_dot_q2_K_q8_K): per
 * super-block, first the mins: 8 int32 lanes, lane k = mn[2k] bsums[2k] +
 * mn[2k + 1] bsums[2k + 1] (mn the high nibbles of the 16 scale bytes, bsums
 * the activation's per-16 sums), acc = fma(-d_y dmin_x, float(lane), acc);
 * then the quants: 8 int32 lanes, lane k holding elements 32 g + 4 k ..
 * 32 g + 4 k + 3 of every 32-element group g, each product sc[i / 16] q[i]
 * y[i] (sc the low nibble, q in 0..3), acc = fma(d_y d_x, float(lane), acc)
 * on the same 8 float lanes; the result is their horizontal sum (high 128
 * bits + low, upper pair onto lower, then the two).
 *
 * From 8 activation rows llama.cpp runs its tiled K-quant kernel (ggml-cpu/
 * tiled, with mins, as for Q4_K): per super-block the exact totals S1 =
 * sum_i sc[i / 16] q[i] y[i] and S2 = sum_j mn[j] bsums[j], r = d_x
 * float(S1), r = r - dmin_x float(S2) in one rounding, acc = fma(r, d_y,
 * acc). Registered as the tiled pair of Q2_K.
 *
 * The integers are exact whichever way they are formed: a group of 32
 * quants (0..3) by vpmaddubsw against the activation (pairs at most 2 * 3 *
 * 128), scaled by vpmaddwd into the 8 lanes.
 *
 * Prompt passes multiply packed tiles (cpu/kernels/kquant_tile.h, q2k_pack8
 * below). On AVX-512 VNNI CPUs the weights are prepared at load instead
 * (kernels/prep_q2_k_x86_512.c); both are faster: see docs/PERFORMANCE.md.
 *
 * AVX2 only, as Q3_K: the scalar registry has no Q2_K entry, so a portable
 * build reports Q2_K as unsupported. Golden: tests/runtime/test_kernels_q4_0.c
 * (scripts/golden/kernels/q2k_llamacpp.py).
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "dtype/blocks.h"
#include "cpu/kernels/kquant_tile.h"

/* The super-block's scales as vpmaddwd operands: scv[g] holds sub-block
 * 2g's scale (int16) in its low 128 bits and 2g + 1's in its high 128 bits;
 * and the 16 mins as int16. */
static inline void q2_k_scales(const llm_block_q2_k *x, __m256i scv[8], __m256i *mins) {
    const __m128i sm = _mm_loadu_si128((const __m128i *)x->scales);
    const __m128i m4 = _mm_set1_epi8(0x0F);
    const __m256i sc16 = _mm256_cvtepu8_epi16(_mm_and_si128(sm, m4));
    *mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sm, 4), m4));
    int16_t sc[16];
    _mm256_storeu_si256((__m256i *)sc, sc16);
    for (int g = 0; g < 8; g++) scv[g] = _mm256_set_m128i(_mm_set1_epi16(sc[2 * g + 1]), _mm_set1_epi16(sc[2 * g]));
}

/* Group g's 32 quants (0..3): element 32 g + b is bits 2 (g % 4) of byte
 * 32 (g / 4) + b. */
static inline __m256i q2_k_u(const llm_block_q2_k *x, int g) {
    const __m256i q = _mm256_loadu_si256((const __m256i *)(x->qs + 32 * (g / 4)));
    return _mm256_and_si256(_mm256_srli_epi16(q, 2 * (g % 4)), _mm256_set1_epi8(3));
}

/* The 8 quant lanes of one super-block for NR activation rows y[j] (exact). */
static inline __attribute__((always_inline)) void q2_k_lanes(const llm_block_q2_k *x, const __m256i scv[8],
                                                             const llm_block_q8_k *const *y, const int NR,
                                                             __m256i lane[4]) {
    for (int j = 0; j < NR; j++) lane[j] = _mm256_setzero_si256();
    for (int g = 0; g < 8; g++) {
        const __m256i u = q2_k_u(x, g);
        for (int j = 0; j < NR; j++) {
            const __m256i yv = _mm256_loadu_si256((const __m256i *)(y[j]->qs + 32 * g));
            lane[j] = _mm256_add_epi32(lane[j], _mm256_madd_epi16(_mm256_maddubs_epi16(u, yv), scv[g]));
        }
    }
}

static float dot_q2_k_q8_k(int64_t n, const void *w, const void *a) {
    const llm_block_q2_k *x = w;
    const llm_block_q8_k *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t ib = 0; ib < n / LLM_QK_K; ib++) {
        const float d = y[ib].d * _cvtsh_ss(x[ib].d);
        const float dmin = -y[ib].d * _cvtsh_ss(x[ib].dmin);
        __m256i scv[8], mins;
        q2_k_scales(&x[ib], scv, &mins);
        const __m256i prod = _mm256_madd_epi16(mins, _mm256_loadu_si256((const __m256i *)y[ib].bsums));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(prod), acc);
        const llm_block_q8_k *yb[1] = {&y[ib]};
        __m256i lane[4];
        q2_k_lanes(&x[ib], scv, yb, 1, lane);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(lane[0]), acc);
    }
    return hsum8(acc);
}

/* The tiled order for NR activation rows from row pointers a + j a_stride. */
static inline __attribute__((always_inline)) void q2_k_tiled(int64_t n, const void *w, const void *a, size_t a_stride,
                                                             const int NR, float out[4]) {
    const llm_block_q2_k *x = w;
    const llm_block_q8_k *y[4];
    for (int j = 0; j < NR; j++) y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride);
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t ib = 0; ib < n / LLM_QK_K; ib++) {
        const llm_block_q8_k *yb[4];
        for (int j = 0; j < NR; j++) yb[j] = &y[j][ib];
        __m256i scv[8], mins, lane[4];
        q2_k_scales(&x[ib], scv, &mins);
        q2_k_lanes(&x[ib], scv, yb, NR, lane);
        const float dx = _cvtsh_ss(x[ib].d), mx = _cvtsh_ss(x[ib].dmin);
        for (int j = 0; j < NR; j++) {
            const int32_t s2 = hsum_i32(_mm256_madd_epi16(mins, _mm256_loadu_si256((const __m256i *)yb[j]->bsums)));
            const float r = fmaf(-mx, (float)s2, dx * (float)hsum_i32(lane[j]));
            acc[j] = fmaf(r, yb[j]->d, acc[j]);
        }
    }
    for (int j = 0; j < NR; j++) out[j] = acc[j];
}

static float dot_q2_k_q8_k_tiled(int64_t n, const void *w, const void *a) {
    float out[4];
    q2_k_tiled(n, w, a, 0, 1, out);
    return out[0];
}

/* Four activation rows, each weight group decoded once: each row's integers
 * and float chain as dot_q2_k_q8_k_tiled's. */
static void dot4_q2_k_q8_k_tiled(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    q2_k_tiled(n, w, a, a_stride, 4, out);
}

/* 8 rows as packed tiles (cpu/kernels/kquant_tile.h) for prompt passes: the quants as
 * they are (0..3), the mins against bsums. */
static void q2k_pack8(int64_t n, const void *w, size_t w_stride, void *dst) {
    const int64_t nb = n / LLM_QK_K;
    for (int64_t b = 0; b < nb; b++) {
        prefetch_next_group(w, w_stride, 8, b, nb);
        char *P = (char *)dst + (size_t)b * KQT_PK;
        const llm_block_q2_k *x[8];
        for (int r = 0; r < 8; r++) x[r] = (const llm_block_q2_k *)((const char *)w + (size_t)r * w_stride) + b;
        for (int G = 0; G < 8; G++) {
            __m256i v[8];
            for (int r = 0; r < 8; r++) v[r] = q2_k_u(x[r], G);
            kqt_store_group(P, G, v);
        }
        for (int r = 0; r < 8; r++) {
            int16_t sc[16], mn[16];
            for (int t = 0; t < 16; t++) {
                sc[t] = x[r]->scales[t] & 15;
                mn[t] = x[r]->scales[t] >> 4;
            }
            kqt_put_scales(P, r, sc, mn, _cvtsh_ss(x[r]->d), _cvtsh_ss(x[r]->dmin));
        }
    }
}

void llm__cpu_kernels_q2_k_x86(llm__cpu_kernels *k, unsigned cpu) {
    k->act_type[LLM_DTYPE_Q2_K] = LLM_DTYPE_Q8_K;
    k->dot[LLM_DTYPE_Q2_K] = dot_q2_k_q8_k;
    k->tiled[LLM_DTYPE_Q2_K].dot = dot_q2_k_q8_k_tiled;
    k->tiled[LLM_DTYPE_Q2_K].dot4 = dot4_q2_k_q8_k_tiled;
    llm__kqt_install(&k->tiled[LLM_DTYPE_Q2_K], q2k_pack8, 1, cpu);
}

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

void llm__cpu_kernels_q2_k_x86(llm__cpu_kernels *k, unsigned cpu) {
    (void)k;
    (void)cpu;
}

#endif
