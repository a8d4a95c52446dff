/*
 * cpu/kernels/q3_k_x86_256.c -- Q3_K x Q8_K dot product in the order of llama.cpp's
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
 * How (same integers, any way they are formed): a group of 32 quants as q + 4
 * (0..7) by vpmaddubsw against the activation, less 4 y by a second one, the
 * pairs scaled by vpmaddwd into the 8 lanes; the tiled order's total takes
 * the 4 y term once per super-block from the activation's per-16 sums
 * (bsums) instead, and its 4-row dot decodes each group once.
 *
 * Prompt passes (8 or more rows, the tiled order) multiply packed tiles
 * (cpu/kernels/kquant_tile.h, q3k_pack8 below). On AVX-512 VNNI CPUs the
 * weights are prepared at load instead (kernels/prep_q3_k_x86_512.c); each
 * step's gain: see docs/PERFORMANCE.md.
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

#include "cpu/kernels/x86_256.h"
#include "dtype/blocks.h"
#include "cpu/kernels/kquant_tile.h"

/* The 16 scales of a super-block (6 bits, minus 32), each as int16 in both
 * halves' pattern: scv[g] holds sub-block 2g's scale in its low 128 bits
 * and 2g + 1's in its high 128 bits (elements 32 g .. 32 g + 15 and
 * 32 g + 16 .. 32 g + 31). */
static inline void q3_k_scales(const llm_block_q3_k *x, __m256i scv[8], int16_t sc[16]) {
    for (int j = 0; j < 16; j++) {
        const int lo = j < 8 ? (x->scales[j] & 15) : (x->scales[j - 8] >> 4);
        const int hi = (x->scales[8 + j % 4] >> (2 * (j / 4))) & 3;
        sc[j] = (int16_t)((lo | hi << 4) - 32);
    }
    for (int g = 0; g < 8; g++) {
        scv[g] = _mm256_set_m128i(_mm_set1_epi16((short)sc[2 * g + 1]), _mm_set1_epi16((short)sc[2 * g]));
    }
}

/* Group g's 32 quants plus 4 (0..7: the two low bits, and 4 where the hmask
 * bit is set, i.e. where q = low rather than low - 4). */
static inline __m256i q3_k_u(const llm_block_q3_k *x, __m256i hm, int g) {
    const __m256i q = _mm256_loadu_si256((const __m256i *)(x->qs + 32 * (g / 4)));
    const __m256i low = _mm256_and_si256(_mm256_srli_epi16(q, 2 * (g % 4)), _mm256_set1_epi8(3));
    const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(hm, g), _mm256_set1_epi8(1));
    return _mm256_or_si256(low, _mm256_slli_epi16(hb, 2));
}

/* Group g's contribution to the 8 lanes: lane m = sc * sum of (u - 4) y over
 * bytes 4m .. 4m + 3. Both vpmaddubsw pair sums are exact (at most 2 * 7 *
 * 128 and 2 * 4 * 128) and so is their difference. */
static inline __m256i q3_k_group(__m256i u, const int8_t *yq, __m256i scv) {
    const __m256i y = _mm256_loadu_si256((const __m256i *)yq);
    const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(u, y), _mm256_maddubs_epi16(_mm256_set1_epi8(4), y));
    return _mm256_madd_epi16(p, scv);
}

/* lane[k] = sum over the elements i with (i % 32) / 4 == k of sc[i / 16] q[i] y[i]
 * for one super-block (exact), for one activation row: vec_dot's lanes. */
static inline __m256i q3_k_lanes(const llm_block_q3_k *x, const llm_block_q8_k *y) {
    __m256i scv[8];
    int16_t sc[16];
    q3_k_scales(x, scv, sc);
    const __m256i hm = _mm256_loadu_si256((const __m256i *)x->hmask);
    __m256i lane = _mm256_setzero_si256();
    for (int g = 0; g < 8; g++) lane = _mm256_add_epi32(lane, q3_k_group(q3_k_u(x, hm, g), y->qs + 32 * g, scv[g]));
    return lane;
}

/* The tiled order needs only the super-block's exact total S = sum_i sc[i /
 * 16] q[i] y[i], for NR activation rows: the sums of sc (q + 4) y by
 * group, less 4 sum_j sc[j] bsums[j] (the activation's per-16 sums). */
static inline __attribute__((always_inline)) void q3_k_totals(const llm_block_q3_k *x, const llm_block_q8_k *const *y,
                                                              const int NR, int32_t S[4]) {
    __m256i scv[8];
    int16_t sc[16];
    q3_k_scales(x, scv, sc);
    const __m256i hm = _mm256_loadu_si256((const __m256i *)x->hmask);
    const __m256i sc16 = _mm256_loadu_si256((const __m256i *)sc);
    __m256i t[4];
    for (int j = 0; j < NR; j++) t[j] = _mm256_setzero_si256();
    for (int g = 0; g < 8; g++) {
        const __m256i u = q3_k_u(x, hm, g);
        for (int j = 0; j < NR; j++) {
            const __m256i yv = _mm256_loadu_si256((const __m256i *)(y[j]->qs + 32 * g));
            t[j] = _mm256_add_epi32(t[j], _mm256_madd_epi16(_mm256_maddubs_epi16(u, yv), scv[g]));
        }
    }
    for (int j = 0; j < NR; j++) {
        const __m256i m = _mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)y[j]->bsums));
        S[j] = hsum_i32(t[j]) - 4 * hsum_i32(m);
    }
}

/* The tiled order for NR activation rows from row pointers a + j a_stride,
 * each weight group decoded once for all of them. */
static inline __attribute__((always_inline)) void q3_k_tiled(int64_t n, const void *w, const void *a, size_t a_stride,
                                                             const int NR, float out[4]) {
    const llm_block_q3_k *x = w;
    const llm_block_q8_k *y[4];
    for (int j = 0; j < NR; j++) y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride);
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t ib = 0; ib < n / LLM_QK_K; ib++) {
        const llm_block_q8_k *yb[4];
        for (int j = 0; j < NR; j++) yb[j] = &y[j][ib];
        int32_t S[4];
        q3_k_totals(&x[ib], yb, NR, S);
        const float dx = _cvtsh_ss(x[ib].d);
        for (int j = 0; j < NR; j++) acc[j] = fmaf(dx * (float)S[j], yb[j]->d, acc[j]);
    }
    for (int j = 0; j < NR; j++) out[j] = acc[j];
}

static float dot_q3_k_q8_k_tiled(int64_t n, const void *w, const void *a) {
    float out[4];
    q3_k_tiled(n, w, a, 0, 1, out);
    return out[0];
}

/* Four activation rows: each row's integers and float chain as
 * dot_q3_k_q8_k_tiled's. */
static void dot4_q3_k_q8_k_tiled(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    q3_k_tiled(n, w, a, a_stride, 4, out);
}

static float dot_q3_k_q8_k(int64_t n, const void *w, const void *a) {
    const llm_block_q3_k *x = w;
    const llm_block_q8_k *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t ib = 0; ib < n / LLM_QK_K; ib++) {
        const float d = y[ib].d * _cvtsh_ss(x[ib].d);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(q3_k_lanes(&x[ib], &y[ib])), acc);
    }
    return hsum8(acc);
}

/* 8 rows as packed tiles (cpu/kernels/kquant_tile.h) for prompt passes: the quants as
 * q + 4 (0..7), the -4 y term as the offsets -4 sc against bsums. */
static void q3k_pack8(int64_t n, const void *w, size_t w_stride, void *dst) {
    const int64_t nb = n / LLM_QK_K;
    for (int64_t b = 0; b < nb; b++) {
        prefetch_next_group(w, w_stride, 8, b, nb);
        char *P = (char *)dst + (size_t)b * KQT_PK;
        const llm_block_q3_k *x[8];
        __m256i hm[8];
        for (int r = 0; r < 8; r++) {
            x[r] = (const llm_block_q3_k *)((const char *)w + (size_t)r * w_stride) + b;
            hm[r] = _mm256_loadu_si256((const __m256i *)x[r]->hmask);
        }
        for (int G = 0; G < 8; G++) {
            __m256i v[8];
            for (int r = 0; r < 8; r++) v[r] = q3_k_u(x[r], hm[r], G);
            kqt_store_group(P, G, v);
        }
        for (int r = 0; r < 8; r++) {
            __m256i scv[8];
            int16_t sc[16], off[16];
            q3_k_scales(x[r], scv, sc);
            for (int t = 0; t < 16; t++) off[t] = (int16_t)(-4 * sc[t]);
            kqt_put_scales(P, r, sc, off, _cvtsh_ss(x[r]->d), 0.0f);
        }
    }
}

void llm__cpu_kernels_q3_k_x86(llm__cpu_kernels *k, unsigned cpu) {
    k->act_type[LLM_DTYPE_Q3_K] = LLM_DTYPE_Q8_K;
    k->dot[LLM_DTYPE_Q3_K] = dot_q3_k_q8_k;
    k->tiled[LLM_DTYPE_Q3_K].dot = dot_q3_k_q8_k_tiled;
    k->tiled[LLM_DTYPE_Q3_K].dot4 = dot4_q3_k_q8_k_tiled;
    llm__kqt_install(&k->tiled[LLM_DTYPE_Q3_K], q3k_pack8, 0, cpu);
}

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

void llm__cpu_kernels_q3_k_x86(llm__cpu_kernels *k, unsigned cpu) {
    (void)k;
    (void)cpu;
}

#endif
