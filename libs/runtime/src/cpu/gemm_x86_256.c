/*
 * cpu/gemm_x86_256.c -- the register-tiled product's block (kernels.h,
 * llm__gemm_block_fn) with AVX2 + FMA: tiles of 3 activation rows by 4 weight
 * rows (half a strip), twelve 8-lane accumulators, each the lanes of one
 * output. Per 8-element chunk: 3 activation loads and 4 weight loads feed 12
 * FMAs. The lanes of four outputs are then folded together in llm__hsum8's
 * order (fold4 below), so the bits are the scalar reference's.
 *
 * Compiled with -mavx2 -mfma -mf16c (sources.cmake); used only once
 * llm__cpu_has_avx2() confirmed the CPU has them.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)

#include <immintrin.h>
#include <string.h>

#define RM 3

/* Four outputs' lanes a, b, c, d -> [r(a), r(b), r(c), r(d)], each
 * r = ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)) as llm__hsum8. */
static inline __m128 fold4(__m256 a, __m256 b, __m256 c, __m256 d) {
    const __m256 sab = _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
    const __m256 scd = _mm256_add_ps(_mm256_permute2f128_ps(c, d, 0x20), _mm256_permute2f128_ps(c, d, 0x31));
    /* s_j = l_j + l_(j+4): sab = [s(a) | s(b)], scd = [s(c) | s(d)] */
    const __m256 t = _mm256_add_ps(_mm256_shuffle_ps(sab, scd, _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm256_shuffle_ps(sab, scd, _MM_SHUFFLE(3, 2, 3, 2)));
    /* t = [t0(a) t1(a) t0(c) t1(c) | t0(b) t1(b) t0(d) t1(d)], t0 = s0 + s2, t1 = s1 + s3 */
    const __m256 h = _mm256_hadd_ps(t, t); /* [r(a) r(c) . . | r(b) r(d) . .] */
    return _mm_unpacklo_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

/* Chunk c of weight row j (0..3) of a tile as 8 floats: from the packed
 * half strip ws (chunk c at ws + 64 c), or, with WT 1 (F16) or 2 (BF16),
 * halves 8c .. 8c + 7 of the row wr[j] widened as they load (exact: lane j
 * still takes k = 8c + j). A partial last chunk (n < 8 elements) is zero
 * past them, as the packer leaves it. */
static inline __attribute__((always_inline)) __m256 widen8(const int WT, __m128i h) {
    return WT == 1 ? _mm256_cvtph_ps(h) : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

static inline __attribute__((always_inline)) __m256 w_chunk(const int WT, const float *ws,
                                                            const uint16_t *const *wr, int j, int64_t c, int64_t n) {
    if (!WT) return _mm256_load_ps(ws + 64 * c + 8 * j);
    if (n == 8) return widen8(WT, _mm_loadu_si128((const __m128i *)(wr[j] + 8 * c)));
    uint16_t h[8] = {0};
    memcpy(h, wr[j] + 8 * c, (size_t)n * sizeof(uint16_t));
    return widen8(WT, _mm_loadu_si128((const __m128i *)h));
}

/* rm (1..RM) rows by 4 weight rows (w_chunk: a packed half strip, or 4 F16
 * or BF16 rows), then the lanes of each row's 4 outputs folded (fold4); only the
 * first mv (< 4 at M's end) are stored. */
static inline __attribute__((always_inline)) void tile(const int rm, const int WT, int64_t K, const float *x,
                                                       size_t xs, const float *ws, const uint16_t *const *wr,
                                                       float *out, size_t os, int64_t mv) {
    __m256 acc[RM][4];
    for (int i = 0; i < RM; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = _mm256_setzero_ps();
    const int64_t kf = K / 8;
    for (int64_t c = 0; c < kf; c++) {
        __m256 xv[RM];
        for (int i = 0; i < rm; i++) xv[i] = _mm256_loadu_ps(x + (size_t)i * xs + 8 * c);
        for (int j = 0; j < 4; j++) {
            const __m256 wv = w_chunk(WT, ws, wr, j, c, 8);
            for (int i = 0; i < rm; i++) acc[i][j] = _mm256_fmadd_ps(xv[i], wv, acc[i][j]);
        }
    }
    if (K % 8) { /* the last chunk: x zero past K (the weights are too) */
        float t[RM][8];
        memset(t, 0, sizeof t);
        for (int i = 0; i < rm; i++) memcpy(t[i], x + (size_t)i * xs + 8 * kf, (size_t)(K % 8) * sizeof(float));
        for (int j = 0; j < 4; j++) {
            const __m256 wv = w_chunk(WT, ws, wr, j, kf, K % 8);
            for (int i = 0; i < rm; i++) acc[i][j] = _mm256_fmadd_ps(_mm256_loadu_ps(t[i]), wv, acc[i][j]);
        }
    }
    for (int i = 0; i < rm; i++) {
        const __m128 r = fold4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        if (mv >= 4) {
            _mm_storeu_ps(out + (size_t)i * os, r);
        } else {
            float tmp[4];
            _mm_storeu_ps(tmp, r);
            memcpy(out + (size_t)i * os, tmp, (size_t)mv * sizeof(float));
        }
    }
}

/* Rows [0, n_rows) in tiles of RM, then the 2 or 1 left, against one set of
 * 4 weight rows (tile()). */
static inline __attribute__((always_inline)) void tiles(const int WT, int64_t K, const float *x, size_t xs,
                                                        int64_t n_rows, const float *ws, const uint16_t *const *wr,
                                                        float *out, size_t os, int64_t mv) {
    int64_t i = 0;
    for (; i + RM <= n_rows; i += RM) tile(RM, WT, K, x + (size_t)i * xs, xs, ws, wr, out + (size_t)i * os, os, mv);
    if (n_rows - i == 2) {
        tile(2, WT, K, x + (size_t)i * xs, xs, ws, wr, out + (size_t)i * os, os, mv);
    } else if (n_rows - i == 1) {
        tile(1, WT, K, x + (size_t)i * xs, xs, ws, wr, out + (size_t)i * os, os, mv);
    }
}

static void gemm_block_avx2(int64_t K, const float *x, size_t x_stride, int64_t n_rows, const float *wp,
                            int64_t n_strips, int64_t m_lim, float *out, size_t o_stride) {
    const int64_t KC = (K + 7) / 8;
    for (int64_t s = 0; s < n_strips; s++) {
        for (int h = 0; h < 2; h++) {
            const int64_t m0 = 8 * s + 4 * h, mv = m_lim - m0;
            if (mv <= 0) break;
            tiles(0, K, x, x_stride, n_rows, wp + (size_t)(s * KC) * 64 + 32 * h, NULL, out + m0, o_stride, mv);
        }
    }
}

llm__gemm_block_fn llm__gemm_block_avx2_get(void) { return gemm_block_avx2; }

/* ----------------------------------------- F16 / BF16 rows in place -- */

/* kernels.h gemm_rows (F16, BF16): tiles() on 4 weight rows at a
 * time, read where they are. */
static inline __attribute__((always_inline)) void rows16(const int WT, int64_t K, const float *x, size_t x_stride,
                                                         int64_t n_rows, const void *w, size_t w_row, int64_t m_rows,
                                                         float *out, size_t o_stride) {
    for (int64_t m0 = 0; m0 < m_rows; m0 += 4) {
        const int64_t mv = m_rows - m0;
        const uint16_t *r[4];
        for (int j = 0; j < 4; j++) { /* past m_rows: the last row again, its outputs not stored */
            const int64_t m = m0 + j < m_rows ? m0 + j : m_rows - 1;
            r[j] = (const uint16_t *)((const char *)w + (size_t)m * w_row);
        }
        tiles(WT, K, x, x_stride, n_rows, NULL, r, out + m0, o_stride, mv);
    }
}

static void gemm_rows_f16_avx2(int64_t K, const float *x, size_t x_stride, int64_t n_rows, const void *w,
                               size_t w_row, int64_t m_rows, float *out, size_t o_stride) {
    rows16(1, K, x, x_stride, n_rows, w, w_row, m_rows, out, o_stride);
}

static void gemm_rows_bf16_avx2(int64_t K, const float *x, size_t x_stride, int64_t n_rows, const void *w,
                                size_t w_row, int64_t m_rows, float *out, size_t o_stride) {
    rows16(2, K, x, x_stride, n_rows, w, w_row, m_rows, out, o_stride);
}

llm__gemm_rows_fn llm__gemm_rows_avx2_get(llm_dtype t) {
    return t == LLM_DTYPE_F16 ? gemm_rows_f16_avx2 : t == LLM_DTYPE_BF16 ? gemm_rows_bf16_avx2 : NULL;
}

#else /* no AVX2 build */

llm__gemm_block_fn llm__gemm_block_avx2_get(void) { return NULL; }
llm__gemm_rows_fn llm__gemm_rows_avx2_get(llm_dtype t) {
    (void)t;
    return NULL;
}

#endif
