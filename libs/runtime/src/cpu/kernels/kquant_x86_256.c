/*
 * cpu/kernels/kquant_x86_256.c -- AVX2 + FMA + F16C kernels for the K-quants most
 * models ship in (Q4_K_M = Q4_K + Q6_K): the Q4_K x Q8_K and Q6_K x Q8_K dot
 * products (each with a 1 x 4 variant) and the Q8_K activation quantizer.
 *
 * Compiled with -mavx2 -mfma -mf16c (sources.cmake) and installed by
 * llm__cpu_kernels_x86(), which only runs once the CPU has been checked.
 *
 * Summation order. The project compares logits with llama.cpp, so the dots
 * sum in the order of ggml's AVX2 ggml_vec_dot_q4_K_q8_K / _q6_K_q8_K:
 *  - integer products go into 8 int32 lanes, lane k holding bytes 4k..4k+3 of
 *    every 32-byte group; integer sums are exact, so only which integers end
 *    up in which lane matters, not the instruction sequence;
 *  - Q6_K stores q + 32 (0..63); the -32 offset is taken out of the lanes
 *    before any float work, lane k losing 32 * (bsums[2k] sc[2k] +
 *    bsums[2k+1] sc[2k+1]) (16 sub-block sums spread over the 8 lanes);
 *  - per super-block, acc = fma(d_y * d_x, float(lane), acc) on 8 lanes;
 *  - Q4_K's mins go through 4 float lanes of their own: lane l gets
 *    mn[2l] * B(2l) + mn[2l+1] * B(2l+1) (B(j): sum of sub-block j's 32
 *    activations) by fma with -(d_y * dmin), per super-block; at the end the
 *    4 lanes fold as (m0 + m2) + (m1 + m3);
 *  - the result is the 8-lane horizontal sum ((hi + lo), then halves, then
 *    pairs), plus the folded mins for Q4_K.
 * The dot4 variants decode each weight block once and run the same per-row
 * arithmetic for four activation rows, so out[j] equals the single dot bit for
 * bit. The scalar references in kernels/ref.c sum whole blocks first and
 * agree to float rounding; tests/runtime/test_kernels_kquant.c checks these against
 * llama.cpp's own kernels on golden rows.
 *
 * Q8_K quantizer: exactly ggml's quantize_row_q8_K (which on x86 is its
 * portable reference): d = 1 / (-127 / x_m), x_m the first element of largest
 * magnitude (NaNs never win); q = round-half-even of (-127 / x_m) * x by the
 * 1.5 * 2^23 trick (keeping its low 23 bits minus 2^22, so NaNs and
 * infinities map as ggml maps them), capped at 127, stored as its low byte;
 * bsums from the stored bytes; an all-zero (or all-NaN) block gives d = 0.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "dtype/blocks.h"

/* (m0 + m2) + (m1 + m3). */
static inline float hsum4(__m128 m) {
    m = _mm_add_ps(m, _mm_movehl_ps(m, m));
    m = _mm_add_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

/* ---------------------------------------------------------------- Q4_K -- */

/* Scale j (0..7) of q4_k_scales_mins() broadcast to 16 int16 (the two
 * 128-bit halves of s must both hold the scales, as from broadcastsi128). */
static inline __m256i q4_k_scale(__m256i s, int j) {
    return _mm256_shuffle_epi8(s, _mm256_set1_epi16((short)(((2 * j + 1) << 8) | (2 * j))));
}

/* Four int32 lanes of the mins term, lane l = mn[2l] B(2l) + mn[2l+1] B(2l+1). */
static inline __m128i q4_k_mins(__m256i sm, const int16_t bsums[16]) {
    const __m256i b = _mm256_loadu_si256((const __m256i *)bsums);
    const __m128i B = _mm_hadd_epi16(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
    return _mm_madd_epi16(_mm256_extracti128_si256(sm, 1), B);
}

/* Sub-blocks 2p (low nibbles, scale s0) and 2p + 1 (high nibbles, s1) times
 * 64 activations, as 8 int32 lanes. |pair| <= 2 * 15 * 128 fits int16. */
static inline __m256i q4_k_pair(__m256i lo, __m256i hi, const int8_t *yq, __m256i s0, __m256i s1) {
    const __m256i p0 = _mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)yq));
    const __m256i p1 = _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(yq + 32)));
    return _mm256_add_epi32(_mm256_madd_epi16(s0, p0), _mm256_madd_epi16(s1, p1));
}

static float dot_q4_k_q8_k(int64_t n, const void *w, const void *a) {
    const llm_block_q4_k *x = w;
    const llm_block_q8_k *y = a;
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256 acc = _mm256_setzero_ps();
    __m128 accm = _mm_setzero_ps();
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const float d = y[b].d * h2f(x[b].d), dmin = -y[b].d * h2f(x[b].dmin);
        const __m256i sm = q4_k_scales_mins(x[b].scales);
        accm = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(q4_k_mins(sm, y[b].bsums)), accm);
        const __m256i s = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm));
        __m256i sumi = _mm256_setzero_si256();
        for (int p = 0; p < 4; p++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x[b].qs + 32 * p));
            const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            sumi = _mm256_add_epi32(sumi, q4_k_pair(lo, hi, y[b].qs + 64 * p, q4_k_scale(s, 2 * p),
                                                    q4_k_scale(s, 2 * p + 1)));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return hsum8(acc) + hsum4(accm);
}

static void dot4_q4_k_q8_k(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    const llm_block_q4_k *x = w;
    const llm_block_q8_k *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256 acc[4];
    __m128 accm[4];
    for (int j = 0; j < 4; j++) {
        acc[j] = _mm256_setzero_ps();
        accm[j] = _mm_setzero_ps();
    }
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const float dx = h2f(x[b].d), mx = h2f(x[b].dmin);
        const __m256i sm = q4_k_scales_mins(x[b].scales); /* decoded once for four rows */
        const __m256i s = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm));
        __m256i sumi[4];
        for (int j = 0; j < 4; j++) {
            accm[j] = _mm_fmadd_ps(_mm_set1_ps(-y[j][b].d * mx), _mm_cvtepi32_ps(q4_k_mins(sm, y[j][b].bsums)),
                                   accm[j]);
            sumi[j] = _mm256_setzero_si256();
        }
        for (int p = 0; p < 4; p++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x[b].qs + 32 * p));
            const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            const __m256i s0 = q4_k_scale(s, 2 * p), s1 = q4_k_scale(s, 2 * p + 1);
            for (int j = 0; j < 4; j++) {
                sumi[j] = _mm256_add_epi32(sumi[j], q4_k_pair(lo, hi, y[j][b].qs + 64 * p, s0, s1));
            }
        }
        for (int j = 0; j < 4; j++) {
            acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(y[j][b].d * dx), _mm256_cvtepi32_ps(sumi[j]), acc[j]);
        }
    }
    for (int j = 0; j < 4; j++) out[j] = hsum8(acc[j]) + hsum4(accm[j]);
}

float llm__q4_k_dot_repack_gemv(int64_t n, const void *w, const void *a) {
    const llm_block_q4_k *x = w;
    const llm_block_q8_k *y = a;
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m128 acc = _mm_setzero_ps(); /* lane 0: the scales sum, lane 1: the mins sum */
    const int64_t nb = n / LLM_QK_K;
    const size_t row = (size_t)nb * sizeof(llm_block_q4_k);
    for (int64_t b = 0; b < nb; b++) {
        /* the row 4 ahead: 1 ahead (1152 bytes at K = 2048) was too close to
         * hide memory's latency (see docs/PERFORMANCE.md) */
        prefetch_next_group((const char *)w + 3 * row, row, 1, b, nb);
        const __m256i sm = q4_k_scales_mins(x[b].scales);
        const __m256i s = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm));
        __m256i sumi = _mm256_setzero_si256();
        for (int p = 0; p < 4; p++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x[b].qs + 32 * p));
            const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            sumi = _mm256_add_epi32(sumi, q4_k_pair(lo, hi, y[b].qs + 64 * p, q4_k_scale(s, 2 * p),
                                                    q4_k_scale(s, 2 * p + 1)));
        }
        /* [sum of sumi, sum of the mins lanes] (exact), then both fmas at once. */
        const __m128i t4 = _mm_add_epi32(_mm256_castsi256_si128(sumi), _mm256_extracti128_si256(sumi, 1));
        const __m128i u = _mm_hadd_epi32(t4, q4_k_mins(sm, y[b].bsums));
        const __m128i tot = _mm_hadd_epi32(u, u);
        uint32_t dd; /* d and dmin, adjacent halves */
        memcpy(&dd, &x[b].d, 4);
        const __m128 sc = _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128((int)dd)), _mm_set1_ps(y[b].d));
        acc = _mm_fmadd_ps(_mm_cvtepi32_ps(tot), sc, acc);
    }
    return _mm_cvtss_f32(_mm_sub_ss(acc, _mm_movehdup_ps(acc)));
}

/* The totals of four 8-lane integer vectors, as one vector (exact). */
static inline __m128i hsum4_i32x8(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
    const __m256i t = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
    return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

void llm__q4_k_dot4_repack_gemm(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    const llm_block_q4_k *x = w;
    const llm_block_q8_k *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m128 acc = _mm_setzero_ps(), accm = _mm_setzero_ps(); /* lane j: activation row j */
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const __m256i sm = q4_k_scales_mins(x[b].scales);
        const __m256i s = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm));
        const __m128 dy = _mm_setr_ps(y[0][b].d, y[1][b].d, y[2][b].d, y[3][b].d);
        const __m128 dd = _mm_mul_ps(_mm_set1_ps(h2f(x[b].d)), dy);
        const __m128 dm = _mm_mul_ps(_mm_set1_ps(h2f(x[b].dmin)), dy);
        /* Mins terms, row j's pair p at mins[j] lane p; transposed so that
         * mp[p] holds pair p of the four rows. */
        const __m128i r0 = q4_k_mins(sm, y[0][b].bsums), r1 = q4_k_mins(sm, y[1][b].bsums);
        const __m128i r2 = q4_k_mins(sm, y[2][b].bsums), r3 = q4_k_mins(sm, y[3][b].bsums);
        const __m128i t01l = _mm_unpacklo_epi32(r0, r1), t23l = _mm_unpacklo_epi32(r2, r3);
        const __m128i t01h = _mm_unpackhi_epi32(r0, r1), t23h = _mm_unpackhi_epi32(r2, r3);
        const __m128i mp[4] = {_mm_unpacklo_epi64(t01l, t23l), _mm_unpackhi_epi64(t01l, t23l),
                               _mm_unpacklo_epi64(t01h, t23h), _mm_unpackhi_epi64(t01h, t23h)};
        for (int p = 0; p < 4; p++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x[b].qs + 32 * p));
            const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            const __m256i s0 = q4_k_scale(s, 2 * p), s1 = q4_k_scale(s, 2 * p + 1);
            const __m128i sq = hsum4_i32x8(q4_k_pair(lo, hi, y[0][b].qs + 64 * p, s0, s1),
                                           q4_k_pair(lo, hi, y[1][b].qs + 64 * p, s0, s1),
                                           q4_k_pair(lo, hi, y[2][b].qs + 64 * p, s0, s1),
                                           q4_k_pair(lo, hi, y[3][b].qs + 64 * p, s0, s1));
            acc = _mm_fmadd_ps(_mm_cvtepi32_ps(sq), dd, acc);
            accm = _mm_fmadd_ps(_mm_cvtepi32_ps(mp[p]), dm, accm);
        }
    }
    _mm_storeu_ps(out, _mm_sub_ps(acc, accm));
}

/* ---------------------------------------------------------------- Q6_K -- */

/* Group g (0..3) of half h of a Q6_K block: elements 128h + 32g .. +31 as
 * q + 32 in 0..63. Low nibbles: ql bytes 64h + 32(g & 1) .., the high nibble
 * for g >= 2; two high bits: bits 2g, 2g+1 of qh bytes 32h ... */
static inline __m256i q6_k_group(__m256i ql0, __m256i ql1, __m256i qh, int g) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(0x03);
    __m256i lo = (g & 1) ? ql1 : ql0;
    lo = g < 2 ? _mm256_and_si256(lo, m4) : _mm256_and_si256(_mm256_srli_epi16(lo, 4), m4);
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * g), m3);
    return _mm256_or_si256(lo, _mm256_slli_epi16(hi, 4));
}

/* Scales of sub-blocks 2G and 2G + 1 (G = 4h + g, the group's index in the
 * block) as int16, one per 128-bit half: the group's first 16 elements use
 * the first, the rest the second. */
static inline __m256i q6_k_scale(__m128i sc8, int G) {
    const __m128i pick = _mm_set_epi64x(0x0101010101010101LL * (2 * G + 1), 0x0101010101010101LL * (2 * G));
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc8, pick));
}

/* The offset lanes: lane k = 32 (bsums[2k] sc[2k] + bsums[2k+1] sc[2k+1]). */
static inline __m256i q6_k_offset(__m128i sc8, const int16_t bsums[16]) {
    const __m256i b = _mm256_loadu_si256((const __m256i *)bsums);
    return _mm256_slli_epi32(_mm256_madd_epi16(b, _mm256_cvtepi8_epi16(sc8)), 5);
}

/* 32 quants (0..63) times 32 activations, pairs scaled: 8 int32 lanes.
 * |pair| <= 2 * 63 * 128 fits int16. */
static inline __m256i q6_k_sub(__m256i q, const int8_t *yq, __m256i sc) {
    return _mm256_madd_epi16(sc, _mm256_maddubs_epi16(q, _mm256_loadu_si256((const __m256i *)yq)));
}

static float dot_q6_k_q8_k(int64_t n, const void *w, const void *a) {
    const llm_block_q6_k *x = w;
    const llm_block_q8_k *y = a;
    __m256 acc = _mm256_setzero_ps();
    const int64_t nb = n / LLM_QK_K;
    const size_t row = (size_t)nb * sizeof(llm_block_q6_k);
    for (int64_t b = 0; b < nb; b++) {
        prefetch_next_group((const char *)w + 3 * row, row, 1, b, nb); /* the row 4 ahead, as Q4_K's */
        const float d = y[b].d * h2f(x[b].d);
        const __m128i sc8 = _mm_loadu_si128((const __m128i *)x[b].scales);
        __m256i sumi = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const __m256i ql0 = _mm256_loadu_si256((const __m256i *)(x[b].ql + 64 * h));
            const __m256i ql1 = _mm256_loadu_si256((const __m256i *)(x[b].ql + 64 * h + 32));
            const __m256i qh = _mm256_loadu_si256((const __m256i *)(x[b].qh + 32 * h));
            for (int g = 0; g < 4; g++) {
                const __m256i q = q6_k_group(ql0, ql1, qh, g);
                sumi = _mm256_add_epi32(sumi, q6_k_sub(q, y[b].qs + 128 * h + 32 * g, q6_k_scale(sc8, 4 * h + g)));
            }
        }
        sumi = _mm256_sub_epi32(sumi, q6_k_offset(sc8, y[b].bsums));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return hsum8(acc);
}

static void dot4_q6_k_q8_k(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    const llm_block_q6_k *x = w;
    const llm_block_q8_k *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride);
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const float dx = h2f(x[b].d);
        const __m128i sc8 = _mm_loadu_si128((const __m128i *)x[b].scales);
        __m256i sumi[4];
        for (int j = 0; j < 4; j++) sumi[j] = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const __m256i ql0 = _mm256_loadu_si256((const __m256i *)(x[b].ql + 64 * h));
            const __m256i ql1 = _mm256_loadu_si256((const __m256i *)(x[b].ql + 64 * h + 32));
            const __m256i qh = _mm256_loadu_si256((const __m256i *)(x[b].qh + 32 * h));
            for (int g = 0; g < 4; g++) {
                const __m256i q = q6_k_group(ql0, ql1, qh, g); /* decoded once for four rows */
                const __m256i sc = q6_k_scale(sc8, 4 * h + g);
                for (int j = 0; j < 4; j++) {
                    sumi[j] = _mm256_add_epi32(sumi[j], q6_k_sub(q, y[j][b].qs + 128 * h + 32 * g, sc));
                }
            }
        }
        for (int j = 0; j < 4; j++) {
            const __m256i s = _mm256_sub_epi32(sumi[j], q6_k_offset(sc8, y[j][b].bsums));
            acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(y[j][b].d * dx), _mm256_cvtepi32_ps(s), acc[j]);
        }
    }
    for (int j = 0; j < 4; j++) out[j] = hsum8(acc[j]);
}

/* ------------------------------------------------- llama.cpp's tiled order -- */

/* What llama.cpp 0.3.36 runs for a K-quant matmul of 8 or more activation
 * rows whose weight is not repacked (ggml-cpu/tiled, on by default; Q6_K and
 * Q5_K always on x86, Q4_K when its row count is not a multiple of 8). Per
 * output, per super-block, from exact integer totals S1 = sum_j sc_j dot_j
 * (Q6_K: with q - 32) and S2 = sum_j mn_j B_j:
 *   r = d_x * float(S1); Q4_K, Q5_K: r = fma(-dmin_x, float(S2), r);
 *   acc = fma(r, d_y, acc);
 * in super-block order from acc = 0. One row at a time or four (lanes). */

/* Q6_K: the 8 lanes of sum_j sc_j sum_i (q_i - 32) y_i of one block. */
static inline __m256i q6_k_block_lanes(const llm_block_q6_k *x, const llm_block_q8_k *y, __m128i sc8) {
    __m256i sumi = _mm256_setzero_si256();
    for (int h = 0; h < 2; h++) {
        const __m256i ql0 = _mm256_loadu_si256((const __m256i *)(x->ql + 64 * h));
        const __m256i ql1 = _mm256_loadu_si256((const __m256i *)(x->ql + 64 * h + 32));
        const __m256i qh = _mm256_loadu_si256((const __m256i *)(x->qh + 32 * h));
        for (int g = 0; g < 4; g++) {
            const __m256i q = q6_k_group(ql0, ql1, qh, g);
            sumi = _mm256_add_epi32(sumi, q6_k_sub(q, y->qs + 128 * h + 32 * g, q6_k_scale(sc8, 4 * h + g)));
        }
    }
    return _mm256_sub_epi32(sumi, q6_k_offset(sc8, y->bsums));
}

float llm__q6_k_dot_tiled(int64_t n, const void *w, const void *a) {
    const llm_block_q6_k *x = w;
    const llm_block_q8_k *y = a;
    __m128 acc = _mm_setzero_ps();
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const __m128i sc8 = _mm_loadu_si128((const __m128i *)x[b].scales);
        const __m128 s1 = _mm_cvtepi32_ps(_mm_cvtsi32_si128(hsum_i32(q6_k_block_lanes(&x[b], &y[b], sc8))));
        const __m128 r = _mm_mul_ss(_mm_set_ss(h2f(x[b].d)), s1);
        acc = _mm_fmadd_ss(r, _mm_set_ss(y[b].d), acc);
    }
    return _mm_cvtss_f32(acc);
}

void llm__q6_k_dot4_tiled(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    const llm_block_q6_k *x = w;
    const llm_block_q8_k *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride);
    __m128 acc = _mm_setzero_ps(); /* lane j: activation row j */
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const __m128i sc8 = _mm_loadu_si128((const __m128i *)x[b].scales);
        __m256i sumi[4];
        for (int j = 0; j < 4; j++) sumi[j] = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const __m256i ql0 = _mm256_loadu_si256((const __m256i *)(x[b].ql + 64 * h));
            const __m256i ql1 = _mm256_loadu_si256((const __m256i *)(x[b].ql + 64 * h + 32));
            const __m256i qh = _mm256_loadu_si256((const __m256i *)(x[b].qh + 32 * h));
            for (int g = 0; g < 4; g++) {
                const __m256i q = q6_k_group(ql0, ql1, qh, g); /* decoded once for four rows */
                const __m256i sc = q6_k_scale(sc8, 4 * h + g);
                for (int j = 0; j < 4; j++) {
                    sumi[j] = _mm256_add_epi32(sumi[j], q6_k_sub(q, y[j][b].qs + 128 * h + 32 * g, sc));
                }
            }
        }
        for (int j = 0; j < 4; j++) sumi[j] = _mm256_sub_epi32(sumi[j], q6_k_offset(sc8, y[j][b].bsums));
        const __m128 s1 = _mm_cvtepi32_ps(hsum4_i32x8(sumi[0], sumi[1], sumi[2], sumi[3]));
        const __m128 r = _mm_mul_ps(_mm_set1_ps(h2f(x[b].d)), s1);
        acc = _mm_fmadd_ps(r, _mm_setr_ps(y[0][b].d, y[1][b].d, y[2][b].d, y[3][b].d), acc);
    }
    _mm_storeu_ps(out, acc);
}

/* Q4_K: the 8 lanes of sum_j sc_j dot_j of one block (s: broadcast scales). */
static inline __m256i q4_k_block_lanes(const llm_block_q4_k *x, const llm_block_q8_k *y, __m256i s) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i sumi = _mm256_setzero_si256();
    for (int p = 0; p < 4; p++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(x->qs + 32 * p));
        const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
        sumi = _mm256_add_epi32(sumi, q4_k_pair(lo, hi, y->qs + 64 * p, q4_k_scale(s, 2 * p), q4_k_scale(s, 2 * p + 1)));
    }
    return sumi;
}

float llm__q4_k_dot_tiled(int64_t n, const void *w, const void *a) {
    const llm_block_q4_k *x = w;
    const llm_block_q8_k *y = a;
    __m128 acc = _mm_setzero_ps();
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const __m256i sm = q4_k_scales_mins(x[b].scales);
        const __m256i s = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm));
        const __m256i sumi = q4_k_block_lanes(&x[b], &y[b], s);
        const __m128i mins = q4_k_mins(sm, y[b].bsums);
        /* lane 0: S1, lane 1: S2 (exact) */
        const __m128i u = _mm_hadd_epi32(_mm_add_epi32(_mm256_castsi256_si128(sumi), _mm256_extracti128_si256(sumi, 1)), mins);
        const __m128 s12 = _mm_cvtepi32_ps(_mm_hadd_epi32(u, u));
        __m128 r = _mm_mul_ss(_mm_set_ss(h2f(x[b].d)), s12);
        r = _mm_fnmadd_ss(_mm_set_ss(h2f(x[b].dmin)), _mm_movehdup_ps(s12), r);
        acc = _mm_fmadd_ss(r, _mm_set_ss(y[b].d), acc);
    }
    return _mm_cvtss_f32(acc);
}

void llm__q4_k_dot4_tiled(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    const llm_block_q4_k *x = w;
    const llm_block_q8_k *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m128 acc = _mm_setzero_ps(); /* lane j: activation row j */
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const __m256i sm = q4_k_scales_mins(x[b].scales);
        const __m256i s = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm));
        __m256i sumi[4];
        for (int j = 0; j < 4; j++) sumi[j] = _mm256_setzero_si256();
        for (int p = 0; p < 4; p++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x[b].qs + 32 * p));
            const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            const __m256i s0 = q4_k_scale(s, 2 * p), s1 = q4_k_scale(s, 2 * p + 1);
            for (int j = 0; j < 4; j++) {
                sumi[j] = _mm256_add_epi32(sumi[j], q4_k_pair(lo, hi, y[j][b].qs + 64 * p, s0, s1));
            }
        }
        const __m128i S1 = hsum4_i32x8(sumi[0], sumi[1], sumi[2], sumi[3]);
        const __m128i S2 = _mm_hadd_epi32(_mm_hadd_epi32(q4_k_mins(sm, y[0][b].bsums), q4_k_mins(sm, y[1][b].bsums)),
                                          _mm_hadd_epi32(q4_k_mins(sm, y[2][b].bsums), q4_k_mins(sm, y[3][b].bsums)));
        __m128 r = _mm_mul_ps(_mm_set1_ps(h2f(x[b].d)), _mm_cvtepi32_ps(S1));
        r = _mm_fnmadd_ps(_mm_set1_ps(h2f(x[b].dmin)), _mm_cvtepi32_ps(S2), r);
        acc = _mm_fmadd_ps(r, _mm_setr_ps(y[0][b].d, y[1][b].d, y[2][b].d, y[3][b].d), acc);
    }
    _mm_storeu_ps(out, acc);
}

/* Q5_K in the tiled order (same formula as Q4_K, quants 0..31): the fifth bit
 * of sub-block 2p / 2p + 1 is bit 2p / 2p + 1 of the 32 qh bytes. */
static inline __m256i q5_k_block_lanes(const llm_block_q5_k *x, const llm_block_q8_k *y, __m256i s) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(0x01);
    const __m256i qh = _mm256_loadu_si256((const __m256i *)x->qh);
    __m256i sumi = _mm256_setzero_si256();
    for (int p = 0; p < 4; p++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(x->qs + 32 * p));
        const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * p), one), 4);
        const __m256i h1 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * p + 1), one), 4);
        const __m256i lo = _mm256_or_si256(_mm256_and_si256(q, m4), h0);
        const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), h1);
        sumi = _mm256_add_epi32(sumi, q4_k_pair(lo, hi, y->qs + 64 * p, q4_k_scale(s, 2 * p), q4_k_scale(s, 2 * p + 1)));
    }
    return sumi;
}

float llm__q5_k_dot_tiled(int64_t n, const void *w, const void *a) {
    const llm_block_q5_k *x = w;
    const llm_block_q8_k *y = a;
    __m128 acc = _mm_setzero_ps();
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const __m256i sm = q4_k_scales_mins(x[b].scales);
        const __m256i s = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm));
        const __m256i sumi = q5_k_block_lanes(&x[b], &y[b], s);
        const __m128i u = _mm_hadd_epi32(_mm_add_epi32(_mm256_castsi256_si128(sumi), _mm256_extracti128_si256(sumi, 1)),
                                         q4_k_mins(sm, y[b].bsums));
        const __m128 s12 = _mm_cvtepi32_ps(_mm_hadd_epi32(u, u));
        __m128 r = _mm_mul_ss(_mm_set_ss(h2f(x[b].d)), s12);
        r = _mm_fnmadd_ss(_mm_set_ss(h2f(x[b].dmin)), _mm_movehdup_ps(s12), r);
        acc = _mm_fmadd_ss(r, _mm_set_ss(y[b].d), acc);
    }
    return _mm_cvtss_f32(acc);
}

void llm__q5_k_dot4_tiled(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    const llm_block_q5_k *x = w;
    const llm_block_q8_k *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride);
    __m128 acc = _mm_setzero_ps(); /* lane j: activation row j */
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const __m256i sm = q4_k_scales_mins(x[b].scales);
        const __m256i s = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm));
        /* The weight decode is cheap next to four rows of products; redone per row. */
        const __m128i S1 = hsum4_i32x8(q5_k_block_lanes(&x[b], y[0] + b, s), q5_k_block_lanes(&x[b], y[1] + b, s),
                                       q5_k_block_lanes(&x[b], y[2] + b, s), q5_k_block_lanes(&x[b], y[3] + b, s));
        const __m128i S2 = _mm_hadd_epi32(_mm_hadd_epi32(q4_k_mins(sm, y[0][b].bsums), q4_k_mins(sm, y[1][b].bsums)),
                                          _mm_hadd_epi32(q4_k_mins(sm, y[2][b].bsums), q4_k_mins(sm, y[3][b].bsums)));
        __m128 r = _mm_mul_ps(_mm_set1_ps(h2f(x[b].d)), _mm_cvtepi32_ps(S1));
        r = _mm_fnmadd_ps(_mm_set1_ps(h2f(x[b].dmin)), _mm_cvtepi32_ps(S2), r);
        acc = _mm_fmadd_ps(r, _mm_setr_ps(y[0][b].d, y[1][b].d, y[2][b].d, y[3][b].d), acc);
    }
    _mm_storeu_ps(out, acc);
}

/* ------------------------------------------------------- Q8_K quantizer -- */

static void quant_q8_k_avx2(const float *x, void *vy, int64_t n) {
    llm_block_q8_k *y = vy;
    const __m256 nosign = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    for (int64_t b = 0; b < n / LLM_QK_K; b++, x += LLM_QK_K) {
        /* Largest magnitude: max(|x|, m) keeps m when |x| is NaN. */
        __m256 m = _mm256_setzero_ps();
        for (int i = 0; i < LLM_QK_K; i += 8) m = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + i), nosign), m);
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        const float amax = _mm_cvtss_f32(m4);
        if (amax == 0.0f) {
            memset(&y[b], 0, sizeof y[b]);
            continue;
        }
        /* Its first occurrence gives the sign, as ggml's strict '>' scan. */
        const __m256 va = _mm256_set1_ps(amax);
        int first = 0;
        for (int i = 0; i < LLM_QK_K; i += 8) {
            const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + i), nosign), va, _CMP_EQ_OQ));
            if (hit) {
                first = i + __builtin_ctz((unsigned)hit);
                break;
            }
        }
        const float iscale = -127.0f / x[first];
        const __m256 vs = _mm256_set1_ps(iscale), magic = _mm256_set1_ps(12582912.0f);
        const __m256i low23 = _mm256_set1_epi32(0x007FFFFF), bias = _mm256_set1_epi32(0x00400000);
        const __m256i cap = _mm256_set1_epi32(127), byte = _mm256_set1_epi32(0xFF);
        for (int i = 0; i < LLM_QK_K; i += 32) {
            __m256i q[4];
            for (int k = 0; k < 4; k++) {
                const __m256 t = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i + 8 * k), vs), magic);
                const __m256i v = _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(t), low23), bias);
                q[k] = _mm256_and_si256(_mm256_min_epi32(v, cap), byte); /* low byte, as the C cast */
            }
            /* 0..255 survive both unsigned packs; packs work per 128-bit lane,
             * the permute restores element order. */
            __m256i p = _mm256_packus_epi16(_mm256_packus_epi32(q[0], q[1]), _mm256_packus_epi32(q[2], q[3]));
            p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_storeu_si256((__m256i *)(y[b].qs + i), p);
        }
        for (int j = 0; j < LLM_QK_K / 16; j++) {
            const __m256i v = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(y[b].qs + 16 * j)));
            const __m128i s = _mm_add_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
            const __m128i s2 = _mm_add_epi16(s, _mm_unpackhi_epi64(s, s));
            const __m128i s3 = _mm_add_epi16(s2, _mm_srli_epi64(s2, 32));
            const __m128i s4 = _mm_add_epi16(s3, _mm_srli_epi32(s3, 16));
            y[b].bsums[j] = (int16_t)_mm_extract_epi16(s4, 0);
        }
        y[b].d = 1.0f / iscale;
    }
}

void llm__cpu_kernels_kquant_x86(llm__cpu_kernels *k) {
    /* Activation types stay as the scalar registry set them (Q8_K). */
    k->dot[LLM_DTYPE_Q4_K] = dot_q4_k_q8_k;
    k->dot[LLM_DTYPE_Q6_K] = dot_q6_k_q8_k;
    k->dot4[LLM_DTYPE_Q4_K] = dot4_q4_k_q8_k;
    k->dot4[LLM_DTYPE_Q6_K] = dot4_q6_k_q8_k;
    k->quantize[LLM_DTYPE_Q8_K] = quant_q8_k_avx2;
    /* llama.cpp's choice on AVX2 (kernels.h rows8 / tiled). */
    k->rows8[LLM_DTYPE_Q4_K] = (struct llm__dot_pair){.dot = llm__q4_k_dot_repack_gemv, .dot4 = llm__q4_k_dot4_repack_gemm};
    k->tiled[LLM_DTYPE_Q4_K] = (struct llm__dot_pair){.dot = llm__q4_k_dot_tiled, .dot4 = llm__q4_k_dot4_tiled};
    k->tiled[LLM_DTYPE_Q5_K] = (struct llm__dot_pair){.dot = llm__q5_k_dot_tiled, .dot4 = llm__q5_k_dot4_tiled};
    k->tiled[LLM_DTYPE_Q6_K] = (struct llm__dot_pair){.dot = llm__q6_k_dot_tiled, .dot4 = llm__q6_k_dot4_tiled};
}

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

#include <math.h>

#include "dtype/blocks.h"

void llm__cpu_kernels_kquant_x86(llm__cpu_kernels *k) { (void)k; }

/* Portable versions of the repacked-order Q4_K dots (same bits: the integer
 * sums are exact and fmaf rounds once). sq[p]: pair p's scaled sum. */
static void q4_k_block_sums(const llm_block_q4_k *x, const llm_block_q8_k *y, int32_t sq[4], int32_t mq[4]) {
    uint8_t sc[8], mn[8];
    llm__q4k_scale_min(x->scales, sc, mn);
    for (int p = 0; p < 4; p++) {
        sq[p] = 0;
        mq[p] = 0;
        for (int h = 0; h < 2; h++) {
            const int j = 2 * p + h;
            int32_t s = 0;
            for (int i = 0; i < 32; i++) s += ((x->qs[32 * p + i] >> (4 * h)) & 15) * y->qs[32 * j + i];
            sq[p] += sc[j] * s;
            mq[p] += mn[j] * (y->bsums[2 * j] + y->bsums[2 * j + 1]);
        }
    }
}

float llm__q4_k_dot_repack_gemv(int64_t n, const void *w, const void *a) {
    const llm_block_q4_k *x = w;
    const llm_block_q8_k *y = a;
    float acc = 0.0f, accm = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        int32_t sq[4], mq[4];
        q4_k_block_sums(&x[b], &y[b], sq, mq);
        acc = fmaf((float)(sq[0] + sq[1] + sq[2] + sq[3]), llm_fp16_to_fp32(x[b].d) * y[b].d, acc);
        accm = fmaf((float)(mq[0] + mq[1] + mq[2] + mq[3]), llm_fp16_to_fp32(x[b].dmin) * y[b].d, accm);
    }
    return acc - accm;
}

static float q4_k_tiled_row(int64_t n, const llm_block_q4_k *x, const llm_block_q8_k *y) {
    float acc = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        int32_t sq[4], mq[4];
        q4_k_block_sums(&x[b], &y[b], sq, mq);
        float r = llm_fp16_to_fp32(x[b].d) * (float)(sq[0] + sq[1] + sq[2] + sq[3]);
        r = fmaf(-llm_fp16_to_fp32(x[b].dmin), (float)(mq[0] + mq[1] + mq[2] + mq[3]), r);
        acc = fmaf(r, y[b].d, acc);
    }
    return acc;
}

float llm__q4_k_dot_tiled(int64_t n, const void *w, const void *a) { return q4_k_tiled_row(n, w, a); }

void llm__q4_k_dot4_tiled(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    for (int j = 0; j < 4; j++) out[j] = q4_k_tiled_row(n, w, (const void *)((const char *)a + (size_t)j * a_stride));
}

static float q5_k_tiled_row(int64_t n, const llm_block_q5_k *x, const llm_block_q8_k *y) {
    float acc = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        uint8_t sc[8], mn[8];
        llm__q4k_scale_min(x[b].scales, sc, mn);
        int32_t s1 = 0, s2 = 0;
        for (int j = 0; j < 8; j++) {
            int32_t s = 0;
            for (int i = 0; i < 32; i++) {
                const int q = ((x[b].qs[32 * (j / 2) + i] >> (4 * (j % 2))) & 15) | ((x[b].qh[i] >> j) & 1) << 4;
                s += q * y[b].qs[32 * j + i];
            }
            s1 += sc[j] * s;
            s2 += mn[j] * (y[b].bsums[2 * j] + y[b].bsums[2 * j + 1]);
        }
        const float r = fmaf(-llm_fp16_to_fp32(x[b].dmin), (float)s2, llm_fp16_to_fp32(x[b].d) * (float)s1);
        acc = fmaf(r, y[b].d, acc);
    }
    return acc;
}

float llm__q5_k_dot_tiled(int64_t n, const void *w, const void *a) { return q5_k_tiled_row(n, w, a); }

void llm__q5_k_dot4_tiled(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    for (int j = 0; j < 4; j++) out[j] = q5_k_tiled_row(n, w, (const void *)((const char *)a + (size_t)j * a_stride));
}

static float q6_k_tiled_row(int64_t n, const llm_block_q6_k *x, const llm_block_q8_k *y) {
    float acc = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        int32_t s1 = 0;
        for (int j = 0; j < 16; j++) {
            int32_t s = 0;
            for (int i = 0; i < 16; i++) {
                const int e = 16 * j + i, h = e / 128, r = e % 128;
                const int lo = (x[b].ql[64 * h + r % 64] >> (4 * (r / 64))) & 15;
                const int hi = (x[b].qh[32 * h + r % 32] >> (2 * (r / 32))) & 3;
                s += ((lo | hi << 4) - 32) * y[b].qs[e];
            }
            s1 += x[b].scales[j] * s;
        }
        acc = fmaf(llm_fp16_to_fp32(x[b].d) * (float)s1, y[b].d, acc);
    }
    return acc;
}

float llm__q6_k_dot_tiled(int64_t n, const void *w, const void *a) { return q6_k_tiled_row(n, w, a); }

void llm__q6_k_dot4_tiled(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    for (int j = 0; j < 4; j++) out[j] = q6_k_tiled_row(n, w, (const void *)((const char *)a + (size_t)j * a_stride));
}

void llm__q4_k_dot4_repack_gemm(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    const llm_block_q4_k *x = w;
    for (int j = 0; j < 4; j++) {
        const llm_block_q8_k *y = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride);
        float acc = 0.0f, accm = 0.0f;
        for (int64_t b = 0; b < n / LLM_QK_K; b++) {
            int32_t sq[4], mq[4];
            q4_k_block_sums(&x[b], &y[b], sq, mq);
            for (int p = 0; p < 4; p++) {
                acc = fmaf((float)sq[p], llm_fp16_to_fp32(x[b].d) * y[b].d, acc);
                accm = fmaf((float)mq[p], llm_fp16_to_fp32(x[b].dmin) * y[b].d, accm);
            }
        }
        out[j] = acc - accm;
    }
}

#endif
