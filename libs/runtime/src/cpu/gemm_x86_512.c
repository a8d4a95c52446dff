/*
 * cpu/gemm_x86_512.c -- the register-tiled product's block (kernels.h,
 * llm__gemm_block_fn) with AVX-512 F + DQ, in the same 8-lane order as the
 * scalar reference and the AVX2 block (same bits): each 16-lane register
 * holds the 8 lanes of two outputs, weight rows 2p and 2p + 1 of a strip
 * (one 64-byte load of the packed panel), times an activation chunk of 8
 * broadcast to both halves. A tile is 6 activation rows by one strip of 8
 * weight rows: 24 accumulators; per chunk 6 broadcasts and 4 weight loads
 * feed 24 FMAs of 16 lanes. fold16 folds two rows' accumulators in
 * llm__hsum8's order.
 *
 * Compiled with -mavx512f -mavx512dq -mavx2 -mfma (sources.cmake); the block
 * is handed out only when the running CPU (and OS) support AVX-512 F and DQ.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512DQ__)

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define RM 6

/* Reduces step 1 of llm__hsum8 for a pair of accumulators a, b (outputs
 * a0, a1, b0, b1, each 8 lanes): s_j = l_j + l_(j+4) per output, one output
 * per 128-bit block. */
static inline __m512 half_sum(__m512 a, __m512 b) {
    return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* Row i's four accumulators p[0..3] (outputs 0..7 of a strip) and row i+1's
 * q[0..3] -> [row i outputs 0..7 | row i+1 outputs 0..7]. */
static inline __m512 fold16(const __m512 p[4], const __m512 q[4]) {
    const __m512 s0 = half_sum(p[0], p[1]), s1 = half_sum(p[2], p[3]); /* blocks: outputs 0..3, 4..7 */
    const __m512 s2 = half_sum(q[0], q[1]), s3 = half_sum(q[2], q[3]);
    /* t0 = s0 + s2, t1 = s1 + s3 (of each output's s): block k of tp = [t0(k) t1(k) t0(4+k) t1(4+k)] */
    const __m512 tp = _mm512_add_ps(_mm512_shuffle_ps(s0, s1, _MM_SHUFFLE(1, 0, 1, 0)),
                                    _mm512_shuffle_ps(s0, s1, _MM_SHUFFLE(3, 2, 3, 2)));
    const __m512 tq = _mm512_add_ps(_mm512_shuffle_ps(s2, s3, _MM_SHUFFLE(1, 0, 1, 0)),
                                    _mm512_shuffle_ps(s2, s3, _MM_SHUFFLE(3, 2, 3, 2)));
    /* r = t0 + t1: block k = [r(i, k) r(i, 4+k) r(i+1, k) r(i+1, 4+k)] */
    const __m512 r = _mm512_add_ps(_mm512_shuffle_ps(tp, tq, _MM_SHUFFLE(2, 0, 2, 0)),
                                   _mm512_shuffle_ps(tp, tq, _MM_SHUFFLE(3, 1, 3, 1)));
    const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm512_permutexvar_ps(idx, r);
}

static inline void store8(float *o, __m256 v, int64_t mv) {
    if (mv >= 8) {
        _mm256_storeu_ps(o, v);
    } else {
        _mm512_mask_storeu_ps(o, (__mmask16)((1u << mv) - 1), _mm512_castps256_ps512(v)); /* no AVX512VL */
    }
}

/* Chunk c of weight rows 2p and 2p + 1 of a strip as 16 floats (8 lanes
 * each): from the packed strip ws (chunk c at ws + 64 c), or, with WT 1
 * (F16) or 2 (BF16), halves 8c .. 8c + 7 of rows wr[2p] and wr[2p + 1]
 * widened as they load (exact: lane j still takes k = 8c + j). A partial
 * last chunk (n < 8 elements) is zero past them, as the packer leaves it. */
static inline __attribute__((always_inline)) __m512 widen16(const int WT, __m256i h) {
    return WT == 1 ? _mm512_cvtph_ps(h) : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

static inline __attribute__((always_inline)) __m512 w_chunk(const int WT, const float *ws,
                                                            const uint16_t *const *wr, int p, int64_t c, int64_t n) {
    if (!WT) return _mm512_load_ps(ws + 64 * c + 16 * p);
    if (n == 8) {
        return widen16(WT, _mm256_inserti128_si256(
                               _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(wr[2 * p] + 8 * c))),
                               _mm_loadu_si128((const __m128i *)(wr[2 * p + 1] + 8 * c)), 1));
    }
    uint16_t h[16] = {0};
    memcpy(h, wr[2 * p] + 8 * c, (size_t)n * sizeof(uint16_t));
    memcpy(h + 8, wr[2 * p + 1] + 8 * c, (size_t)n * sizeof(uint16_t));
    return widen16(WT, _mm256_loadu_si256((const __m256i *)h));
}

/* rm (1..RM) rows by the 8 weight rows of a strip (w_chunk: packed, or 8
 * F16 or BF16 rows). */
static inline __attribute__((always_inline)) void tile(const int rm, const int WT, int64_t K, const float *x,
                                                       size_t xs, const float *ws, const uint16_t *const *wr,
                                                       float *out, size_t os, int64_t mv) {
    __m512 acc[RM][4];
    for (int i = 0; i < RM; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = _mm512_setzero_ps();
    const int64_t kf = K / 8;
    for (int64_t c = 0; c < kf; c++) {
        const __m512 w0 = w_chunk(WT, ws, wr, 0, c, 8), w1 = w_chunk(WT, ws, wr, 1, c, 8);
        const __m512 w2 = w_chunk(WT, ws, wr, 2, c, 8), w3 = w_chunk(WT, ws, wr, 3, c, 8);
        for (int i = 0; i < rm; i++) {
            const __m512 xv = _mm512_broadcast_f32x8(_mm256_loadu_ps(x + (size_t)i * xs + 8 * c));
            acc[i][0] = _mm512_fmadd_ps(xv, w0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(xv, w1, acc[i][1]);
            acc[i][2] = _mm512_fmadd_ps(xv, w2, acc[i][2]);
            acc[i][3] = _mm512_fmadd_ps(xv, w3, acc[i][3]);
        }
    }
    if (K % 8) { /* the last chunk: x zero past K (the weights are too) */
        const __mmask16 km = (__mmask16)((1u << (K % 8)) - 1);
        for (int i = 0; i < rm; i++) {
            const __m512 xt = _mm512_maskz_loadu_ps(km, x + (size_t)i * xs + 8 * kf);
            const __m512 xv = _mm512_shuffle_f32x4(xt, xt, _MM_SHUFFLE(1, 0, 1, 0));
            for (int j = 0; j < 4; j++) acc[i][j] = _mm512_fmadd_ps(xv, w_chunk(WT, ws, wr, j, kf, K % 8), acc[i][j]);
        }
    }
    int i = 0;
    for (; i + 2 <= rm; i += 2) {
        const __m512 r = fold16(acc[i], acc[i + 1]);
        store8(out + (size_t)i * os, _mm512_castps512_ps256(r), mv);
        store8(out + (size_t)(i + 1) * os, _mm512_extractf32x8_ps(r, 1), mv);
    }
    if (i < rm) {
        const __m512 r = fold16(acc[i], acc[i]);
        store8(out + (size_t)i * os, _mm512_castps512_ps256(r), mv);
    }
}

/* Rows [0, n_rows) in tiles of RM, then the rest, against one strip. */
static inline __attribute__((always_inline)) void tiles(const int WT, int64_t K, const float *x, size_t xs,
                                                        int64_t n_rows, const float *ws, const uint16_t *const *wr,
                                                        float *out, size_t os, int64_t mv) {
    int64_t i = 0;
    for (; i + RM <= n_rows; i += RM) tile(RM, WT, K, x + (size_t)i * xs, xs, ws, wr, out + (size_t)i * os, os, mv);
    float *o = out + (size_t)i * os;
    const float *xi = x + (size_t)i * xs;
    switch (n_rows - i) {
    case 5: tile(5, WT, K, xi, xs, ws, wr, o, os, mv); break;
    case 4: tile(4, WT, K, xi, xs, ws, wr, o, os, mv); break;
    case 3: tile(3, WT, K, xi, xs, ws, wr, o, os, mv); break;
    case 2: tile(2, WT, K, xi, xs, ws, wr, o, os, mv); break;
    case 1: tile(1, WT, K, xi, xs, ws, wr, o, os, mv); break;
    default: break;
    }
}

static void gemm_block_avx512(int64_t K, const float *x, size_t x_stride, int64_t n_rows, const float *wp,
                              int64_t n_strips, int64_t m_lim, float *out, size_t o_stride) {
    const int64_t KC = (K + 7) / 8;
    for (int64_t s = 0; s < n_strips; s++) {
        const int64_t m0 = 8 * s, mv = m_lim - m0;
        if (mv <= 0) break;
        tiles(0, K, x, x_stride, n_rows, wp + (size_t)(s * KC) * 64, NULL, out + m0, o_stride, mv);
    }
}

/* kernels.h gemm_rows (F16, BF16): tiles() on 8 weight rows at a
 * time, read where they are. */
static inline __attribute__((always_inline)) void rows16(const int WT, int64_t K, const float *x, size_t x_stride,
                                                         int64_t n_rows, const void *w, size_t w_row, int64_t m_rows,
                                                         float *out, size_t o_stride) {
    for (int64_t m0 = 0; m0 < m_rows; m0 += 8) {
        const uint16_t *r[8];
        for (int j = 0; j < 8; j++) { /* past m_rows: the last row again, its outputs not stored */
            const int64_t m = m0 + j < m_rows ? m0 + j : m_rows - 1;
            r[j] = (const uint16_t *)((const char *)w + (size_t)m * w_row);
        }
        tiles(WT, K, x, x_stride, n_rows, NULL, r, out + m0, o_stride, m_rows - m0);
    }
}

static void gemm_rows_f16_avx512(int64_t K, const float *x, size_t x_stride, int64_t n_rows, const void *w,
                                 size_t w_row, int64_t m_rows, float *out, size_t o_stride) {
    rows16(1, K, x, x_stride, n_rows, w, w_row, m_rows, out, o_stride);
}

static void gemm_rows_bf16_avx512(int64_t K, const float *x, size_t x_stride, int64_t n_rows, const void *w,
                                  size_t w_row, int64_t m_rows, float *out, size_t o_stride) {
    rows16(2, K, x, x_stride, n_rows, w, w_row, m_rows, out, o_stride);
}

static int has_avx512fdq(void) { return (llm__cpu_features() & LLM__CPU_AVX512DQ) != 0; }

llm__gemm_block_fn llm__gemm_block_avx512_get(void) { return has_avx512fdq() ? gemm_block_avx512 : NULL; }

llm__gemm_rows_fn llm__gemm_rows_avx512_get(llm_dtype t) {
    if (!has_avx512fdq()) return NULL;
    return t == LLM_DTYPE_F16 ? gemm_rows_f16_avx512 : t == LLM_DTYPE_BF16 ? gemm_rows_bf16_avx512 : NULL;
}

#else /* not built with AVX-512 */

llm__gemm_block_fn llm__gemm_block_avx512_get(void) { return NULL; }
llm__gemm_rows_fn llm__gemm_rows_avx512_get(llm_dtype t) {
    (void)t;
    return NULL;
}

#endif
