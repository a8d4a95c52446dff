/*
 * cpu/gemm_avx512.c -- the register-tiled product's block (kernels.h,
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

/* rm (1..RM) rows by the 8 weight rows of strip ws (chunk c at ws + 64 c). */
static inline __attribute__((always_inline)) void tile(const int rm, int64_t K, const float *x, size_t xs,
                                                       const float *ws, float *out, size_t os, int64_t mv) {
    __m512 acc[RM][4];
    for (int i = 0; i < RM; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = _mm512_setzero_ps();
    const int64_t kf = K / 8;
    for (int64_t c = 0; c < kf; c++) {
        const float *wc = ws + 64 * c;
        const __m512 w0 = _mm512_load_ps(wc), w1 = _mm512_load_ps(wc + 16);
        const __m512 w2 = _mm512_load_ps(wc + 32), w3 = _mm512_load_ps(wc + 48);
        for (int i = 0; i < rm; i++) {
            const __m512 xv = _mm512_broadcast_f32x8(_mm256_loadu_ps(x + (size_t)i * xs + 8 * c));
            acc[i][0] = _mm512_fmadd_ps(xv, w0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(xv, w1, acc[i][1]);
            acc[i][2] = _mm512_fmadd_ps(xv, w2, acc[i][2]);
            acc[i][3] = _mm512_fmadd_ps(xv, w3, acc[i][3]);
        }
    }
    if (K % 8) { /* the last chunk: x zero past K (the packed weights are too) */
        const __mmask16 km = (__mmask16)((1u << (K % 8)) - 1);
        const float *wc = ws + 64 * kf;
        for (int i = 0; i < rm; i++) {
            const __m512 xt = _mm512_maskz_loadu_ps(km, x + (size_t)i * xs + 8 * kf);
            const __m512 xv = _mm512_shuffle_f32x4(xt, xt, _MM_SHUFFLE(1, 0, 1, 0));
            for (int j = 0; j < 4; j++) acc[i][j] = _mm512_fmadd_ps(xv, _mm512_load_ps(wc + 16 * j), acc[i][j]);
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

static void gemm_block_avx512(int64_t K, const float *x, size_t x_stride, int64_t n_rows, const float *wp,
                              int64_t n_strips, int64_t m_lim, float *out, size_t o_stride) {
    const int64_t KC = (K + 7) / 8;
    for (int64_t s = 0; s < n_strips; s++) {
        const int64_t m0 = 8 * s, mv = m_lim - m0;
        if (mv <= 0) break;
        const float *ws = wp + (size_t)(s * KC) * 64;
        int64_t i = 0;
        for (; i + RM <= n_rows; i += RM)
            tile(RM, K, x + (size_t)i * x_stride, x_stride, ws, out + (size_t)i * o_stride + m0, o_stride, mv);
        float *o = out + (size_t)i * o_stride + m0;
        const float *xi = x + (size_t)i * x_stride;
        switch (n_rows - i) {
        case 5: tile(5, K, xi, x_stride, ws, o, o_stride, mv); break;
        case 4: tile(4, K, xi, x_stride, ws, o, o_stride, mv); break;
        case 3: tile(3, K, xi, x_stride, ws, o, o_stride, mv); break;
        case 2: tile(2, K, xi, x_stride, ws, o, o_stride, mv); break;
        case 1: tile(1, K, xi, x_stride, ws, o, o_stride, mv); break;
        default: break;
        }
    }
}

llm__gemm_block_fn llm__gemm_block_avx512_get(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") ? gemm_block_avx512 : NULL;
}

#else /* not built with AVX-512 */

llm__gemm_block_fn llm__gemm_block_avx512_get(void) { return NULL; }

#endif
