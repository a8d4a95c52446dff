/*
 * cpu/kernels/x86_256.c -- AVX2 + FMA + F16C variants of the hot CPU kernels.
 *
 * Compiled with -mavx2 -mfma -mf16c (see sources.cmake) and only called after
 * llm__cpu_has_avx2() confirmed the CPU has them, so the portable build still
 * runs on older x86 CPUs. Each kernel computes the same quantity as its scalar
 * reference in kernels/ref.c; only the float summation order differs
 * (tests/runtime/test_kernels.c states the tolerances).
 *
 * Integer dot products of 32 quants use the unsigned x signed byte multiply
 * (vpmaddubsw): a signed weight is made unsigned by moving its sign onto the
 * activation (|w| * (y * sign(w))), which keeps every product exact.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "cpu/vexp.h"
#include "dtype/blocks.h"

static float dot_q4_1_q8_1(int64_t n, const void *w, const void *a) {
    const llm_block_q4_1 *x = w;
    const llm_block_q8_1 *y = a;
    __m256 acc = _mm256_setzero_ps();
    float summ = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        __m256i qx = unpack_nibbles(x[b].qs);
        __m256i qy = _mm256_loadu_si256((const __m256i *)y[b].qs);
        __m256 s = _mm256_cvtepi32_ps(dot_us8(qx, qy));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[b].d) * h2f(y[b].d)), s, acc);
        summ += h2f(x[b].m) * h2f(y[b].s);
    }
    return hsum8(acc) + summ;
}

static void dot4_q4_1_q8_1(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    const llm_block_q4_1 *x = w;
    const llm_block_q8_1 *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_1 *)((const char *)a + j * a_stride);
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    float summ[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const __m256i qx = unpack_nibbles(x[b].qs); /* unpacked once for four rows */
        const float dx = h2f(x[b].d), mx = h2f(x[b].m);
        for (int j = 0; j < 4; j++) {
            __m256i qy = _mm256_loadu_si256((const __m256i *)y[j][b].qs);
            __m256 s = _mm256_cvtepi32_ps(dot_us8(qx, qy));
            acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(dx * h2f(y[j][b].d)), s, acc[j]);
            summ[j] += mx * h2f(y[j][b].s);
        }
    }
    for (int j = 0; j < 4; j++) out[j] = hsum8(acc[j]) + summ[j];
}

/* Lane j of a 4-float vector in all 8 lanes. */
static inline __m256 lane8(__m128 v, int j) {
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(v), _mm256_set1_epi32(j));
}

/* dot4_q4_1_q8_1 for two weight rows at once with unpacked activation
 * scales (kernels.h): per block, d_x * d_y for four rows in one multiply and
 * m_x * s_y added for four rows in one multiply and one add, lane by lane
 * the same operations as the scalar forms. */
static void dot2x4_q4_1_q8_1(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride,
                             const float *sc, float out[2][4]) {
    const llm_block_q4_1 *x0 = w, *x1 = (const llm_block_q4_1 *)((const char *)w + w_stride);
    const llm_block_q8_1 *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_1 *)((const char *)a + j * a_stride);
    __m256 acc0[4], acc1[4];
    for (int j = 0; j < 4; j++) acc0[j] = acc1[j] = _mm256_setzero_ps();
    __m128 summ0 = _mm_setzero_ps(), summ1 = _mm_setzero_ps();
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const __m256i qx0 = unpack_nibbles(x0[b].qs), qx1 = unpack_nibbles(x1[b].qs);
        const __m128 dy = _mm_loadu_ps(sc + 8 * b), sy = _mm_loadu_ps(sc + 8 * b + 4);
        const __m128 dd0 = _mm_mul_ps(_mm_set1_ps(h2f(x0[b].d)), dy);
        const __m128 dd1 = _mm_mul_ps(_mm_set1_ps(h2f(x1[b].d)), dy);
        summ0 = _mm_add_ps(summ0, _mm_mul_ps(_mm_set1_ps(h2f(x0[b].m)), sy));
        summ1 = _mm_add_ps(summ1, _mm_mul_ps(_mm_set1_ps(h2f(x1[b].m)), sy));
        for (int j = 0; j < 4; j++) {
            const __m256i qy = _mm256_loadu_si256((const __m256i *)y[j][b].qs);
            acc0[j] = _mm256_fmadd_ps(lane8(dd0, j), _mm256_cvtepi32_ps(dot_us8(qx0, qy)), acc0[j]);
            acc1[j] = _mm256_fmadd_ps(lane8(dd1, j), _mm256_cvtepi32_ps(dot_us8(qx1, qy)), acc1[j]);
        }
    }
    float s0[4], s1[4];
    _mm_storeu_ps(s0, summ0);
    _mm_storeu_ps(s1, summ1);
    for (int j = 0; j < 4; j++) {
        out[0][j] = hsum8(acc0[j]) + s0[j];
        out[1][j] = hsum8(acc1[j]) + s1[j];
    }
}

/* The half-float fields at byte offset off of four blocks (rows r, block b),
 * as 4 floats. */
static inline __m128 halves4(const char *w, size_t stride, size_t off) {
    uint16_t h[4];
    for (int r = 0; r < 4; r++) memcpy(&h[r], w + r * stride + off, 2);
    return _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)h));
}

/* dot_q4_1_q8_1 for four weight rows (kernels.h dot4x1). */
static void dot4x1_q4_1_q8_1(int64_t n, const void *w, size_t w_stride, const void *a, const float *sc,
                             float out[4]) {
    const char *wb = w;
    const llm_block_q8_1 *y = a;
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    __m128 summ = _mm_setzero_ps();
    const int64_t nb = n / LLM_QK32;
    for (int64_t b = 0; b < nb; b++) {
        prefetch_next_group(wb, w_stride, 4, b, nb); /* the next four rows */
        const size_t off = (size_t)b * sizeof(llm_block_q4_1);
        const __m256i qy = _mm256_loadu_si256((const __m256i *)y[b].qs);
        const __m128 dd = _mm_mul_ps(halves4(wb, w_stride, off), _mm_set1_ps(sc[2 * b]));
        summ = _mm_add_ps(summ, _mm_mul_ps(halves4(wb, w_stride, off + 2), _mm_set1_ps(sc[2 * b + 1])));
        for (int r = 0; r < 4; r++) {
            const llm_block_q4_1 *x = (const llm_block_q4_1 *)(wb + r * w_stride + off);
            acc[r] = _mm256_fmadd_ps(lane8(dd, r), _mm256_cvtepi32_ps(dot_us8(unpack_nibbles(x->qs), qy)), acc[r]);
        }
    }
    float sm[4];
    _mm_storeu_ps(sm, summ);
    for (int r = 0; r < 4; r++) out[r] = hsum8(acc[r]) + sm[r];
}

/* dot_q8_0_q8_0 for four weight rows (kernels.h dot4x1): per block the four
 * rows' d_x * d_y in one multiply (the same float product as the single
 * dot's), then per row the single dot's 8-lane FMA chain, so the same bits.
 * Four independent chains, and the activation block loaded once. (On the
 * earlier AMD EPYC machine four interleaved row streams measured 25% slower
 * than one on a 30 MB matrix; on this Intel Xeon, Gemma 3's 262144 x 640
 * LM head runs 31% fewer instructions and the 4096 x 2048 mat-vec of
 * llm-bench-runtime ran 1.3-2x faster single-threaded.) */
static void dot4x1_q8_0_q8_0(int64_t n, const void *w, size_t w_stride, const void *a, const float *sc,
                             float out[4]) {
    const char *wb = w;
    const llm_block_q8_0 *y = a;
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const size_t off = (size_t)b * sizeof(llm_block_q8_0);
        const __m256i qy = _mm256_loadu_si256((const __m256i *)y[b].qs);
        const __m128 dd = _mm_mul_ps(halves4(wb, w_stride, off), _mm_set1_ps(sc[2 * b]));
        for (int r = 0; r < 4; r++) {
            const llm_block_q8_0 *x = (const llm_block_q8_0 *)(wb + r * w_stride + off);
            const __m256i qx = _mm256_loadu_si256((const __m256i *)x->qs);
            acc[r] = _mm256_fmadd_ps(lane8(dd, r), _mm256_cvtepi32_ps(dot_ss8(qx, qy)), acc[r]);
        }
    }
    for (int r = 0; r < 4; r++) out[r] = hsum8(acc[r]);
}

/* dot4_q8_0_q8_0 for two weight rows with unpacked activation scales. */
static void dot2x4_q8_0_q8_0(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride,
                             const float *sc, float out[2][4]) {
    const llm_block_q8_0 *x0 = w, *x1 = (const llm_block_q8_0 *)((const char *)w + w_stride);
    const llm_block_q8_0 *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_0 *)((const char *)a + j * a_stride);
    __m256 acc0[4], acc1[4];
    for (int j = 0; j < 4; j++) acc0[j] = acc1[j] = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const __m256i q0 = _mm256_loadu_si256((const __m256i *)x0[b].qs);
        const __m256i q1 = _mm256_loadu_si256((const __m256i *)x1[b].qs);
        const __m256i a0 = _mm256_sign_epi8(q0, q0), a1 = _mm256_sign_epi8(q1, q1);
        const __m128 dy = _mm_loadu_ps(sc + 8 * b);
        const __m128 dd0 = _mm_mul_ps(_mm_set1_ps(h2f(x0[b].d)), dy);
        const __m128 dd1 = _mm_mul_ps(_mm_set1_ps(h2f(x1[b].d)), dy);
        for (int j = 0; j < 4; j++) {
            const __m256i qy = _mm256_loadu_si256((const __m256i *)y[j][b].qs);
            acc0[j] = _mm256_fmadd_ps(lane8(dd0, j), _mm256_cvtepi32_ps(dot_us8(a0, _mm256_sign_epi8(qy, q0))), acc0[j]);
            acc1[j] = _mm256_fmadd_ps(lane8(dd1, j), _mm256_cvtepi32_ps(dot_us8(a1, _mm256_sign_epi8(qy, q1))), acc1[j]);
        }
    }
    for (int j = 0; j < 4; j++) {
        out[0][j] = hsum8(acc0[j]);
        out[1][j] = hsum8(acc1[j]);
    }
}

static void dot4_q8_0_q8_0(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    const llm_block_q8_0 *x = w;
    const llm_block_q8_0 *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_0 *)((const char *)a + j * a_stride);
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const __m256i qx = _mm256_loadu_si256((const __m256i *)x[b].qs);
        const __m256i ax = _mm256_sign_epi8(qx, qx);
        const float dx = h2f(x[b].d);
        for (int j = 0; j < 4; j++) {
            __m256i qy = _mm256_loadu_si256((const __m256i *)y[j][b].qs);
            __m256 s = _mm256_cvtepi32_ps(dot_us8(ax, _mm256_sign_epi8(qy, qx)));
            acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(dx * h2f(y[j][b].d)), s, acc[j]);
        }
    }
    for (int j = 0; j < 4; j++) out[j] = hsum8(acc[j]);
}

static float dot_q4_0_q8_0(int64_t n, const void *w, const void *a) {
    const llm_block_q4_0 *x = w;
    const llm_block_q8_0 *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        __m256i qx = _mm256_sub_epi8(unpack_nibbles(x[b].qs), _mm256_set1_epi8(8));
        __m256i qy = _mm256_loadu_si256((const __m256i *)y[b].qs);
        __m256 s = _mm256_cvtepi32_ps(dot_ss8(qx, qy));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[b].d) * h2f(y[b].d)), s, acc);
    }
    return hsum8(acc);
}

static float dot_q8_0_q8_0(int64_t n, const void *w, const void *a) {
    const llm_block_q8_0 *x = w;
    const llm_block_q8_0 *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        __m256i qx = _mm256_loadu_si256((const __m256i *)x[b].qs);
        __m256i qy = _mm256_loadu_si256((const __m256i *)y[b].qs);
        __m256 s = _mm256_cvtepi32_ps(dot_ss8(qx, qy));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[b].d) * h2f(y[b].d)), s, acc);
    }
    return hsum8(acc);
}

/* ------------------------------------------------------------ float dots -- */

static float dot_f32_avx2(int64_t n, const float *x, const float *y) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    __m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16), a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24), a3);
    }
    double s = (double)reduce4(a0, a1, a2, a3);
    for (; i < n; i++) {
        s += (double)(x[i] * y[i]);
    }
    return (float)s;
}

static float dot_f16_avx2(int64_t n, const uint16_t *x, const uint16_t *y) { return dot_f16_4acc(n, x, y); }

static float vdot_f32(int64_t n, const void *w, const void *a) { return dot_f32_avx2(n, w, a); }
static float vdot_f16(int64_t n, const void *w, const void *a) { return dot_f16_avx2(n, w, a); }

/* BF16 x BF16 in llama.cpp's AVX2 ggml_vec_dot_bf16 order: four 8-lane
 * accumulators over blocks of 32 (each product of two bf16 is exact in a
 * float, so fused or not gives the same bits), folded (c1 + c3) + (c2 + c4)
 * and as hsum8, widened to double; the last n % 32 products added one by one
 * in double. The scalar reference sums everything in double. */
static float vdot_bf16(int64_t n, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    __m256 c[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        for (int j = 0; j < 4; j++) {
            c[j] = _mm256_add_ps(_mm256_mul_ps(load_bf8(x + i + 8 * j), load_bf8(y + i + 8 * j)), c[j]);
        }
    }
    double s = (double)hsum8(_mm256_add_ps(_mm256_add_ps(c[0], c[2]), _mm256_add_ps(c[1], c[3])));
    for (; i < n; i++) {
        s += (double)(llm_bf16_to_fp32(x[i]) * llm_bf16_to_fp32(y[i]));
    }
    return (float)s;
}

/* P[s][d] = sum over t < nslot with t % S == s, ascending, of fma(v_t[d], p[t], .)
 * into scratch [S][hd]. Slot-major: one slot's partial sums of up to 64
 * values of d stay in registers while its rows stream by, so nothing is
 * stored per row; each row is still read exactly once. */
static void wsum_slots(const llm__kv_rows *v, int64_t nslot, int64_t S, int64_t hd, const float *p,
                       float *scratch) {
    const int64_t hd8 = hd & ~(int64_t)7;
    memset(scratch, 0, sizeof(float) * (size_t)(S * hd));
    for (int64_t sl = 0; sl < S && sl < nslot; sl++) {
        float *P = scratch + sl * hd;
        for (int64_t d0 = 0; d0 < hd8; d0 += 64) {
            const int64_t nv = (hd8 - d0) / 8 < 8 ? (hd8 - d0) / 8 : 8;
            __m256 acc[8];
            for (int j = 0; j < 8; j++) acc[j] = _mm256_setzero_ps();
            for (int64_t t = sl; t < nslot; t += S) {
                const __m256 pt = _mm256_set1_ps(p[t]);
                const void *row = llm__kv_row(v, t);
                if (v->f16) {
                    const uint16_t *r = (const uint16_t *)row + d0;
                    if (nv == 8) {
                        for (int j = 0; j < 8; j++) acc[j] = _mm256_fmadd_ps(load_h8(r + 8 * j), pt, acc[j]);
                    } else {
                        for (int64_t j = 0; j < nv; j++) acc[j] = _mm256_fmadd_ps(load_h8(r + 8 * j), pt, acc[j]);
                    }
                } else {
                    const float *r = (const float *)row + d0;
                    for (int64_t j = 0; j < nv; j++) {
                        acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(r + 8 * j), pt, acc[j]);
                    }
                }
            }
            for (int64_t j = 0; j < nv; j++) _mm256_storeu_ps(P + d0 + 8 * j, acc[j]);
        }
        for (int64_t d = hd8; d < hd; d++) {
            float a = 0.0f;
            for (int64_t t = sl; t < nslot; t += S) {
                const void *row = llm__kv_row(v, t);
                a = fmaf(v->f16 ? h2f(((const uint16_t *)row)[d]) : ((const float *)row)[d], p[t], a);
            }
            P[d] = a;
        }
    }
}

/* out[d] = sum_t p[t] v_t[d], with each d's sum taken in the order of
 * dot_f16_avx2 over n_all cells (llama.cpp's masked KQV dot): cell
 * t < np = n_all rounded down to 32 goes to partial slot t % 32
 * (accumulator (t / 8) % 4, lane t % 8) by FMA; the 32 partials are folded as
 * reduce4 does; cells t >= np are added one by one in double. Partials live in
 * scratch [32][hd]. */
static void attn_wsum_avx2(const llm__kv_rows *v, int64_t len, int64_t n_all, int64_t hd,
                           const float *p, float *out, float *scratch) {
    const int64_t np = n_all & ~(int64_t)31, nslot = len < np ? len : np;
    wsum_slots(v, nslot, 32, hd, p, scratch);
    /* Fold: X[l] = (P[l] + P[16+l]) + (P[8+l] + P[24+l]); T[l] = X[l] + X[l+4];
     * r = (T[0] + T[1]) + (T[2] + T[3]). Unused slots are zero, as llama.cpp's
     * masked (zero-probability) cache cells are. */
    for (int64_t d = 0; d < hd; d++) {
        const float *P = scratch + d;
        float X[8], T[4];
        for (int l = 0; l < 8; l++) {
            X[l] = (P[l * hd] + P[(16 + l) * hd]) + (P[(8 + l) * hd] + P[(24 + l) * hd]);
        }
        for (int l = 0; l < 4; l++) T[l] = X[l] + X[l + 4];
        double s = (double)((T[0] + T[1]) + (T[2] + T[3]));
        for (int64_t t = nslot; t < len; t++) {
            const void *row = llm__kv_row(v, t);
            float x = v->f16 ? h2f(((const uint16_t *)row)[d]) : ((const float *)row)[d];
            s += (double)(x * p[t]);
        }
        out[d] = (float)s;
    }
}

/* Single-accumulator (register-tiled matrix product) order; see kernels.h. */
static float dot_f16_8_avx2(int64_t n, const uint16_t *x, const uint16_t *y) { return dot_f16_tiled(n, x, y); }

/* out[d] = sum_t p[t] v_t[d]: lane t % 8 of d's accumulator, kept as
 * scratch[t % 8][d] so the loop over d vectorises. */
static void attn_wsum8_avx2(const llm__kv_rows *v, int64_t len, int64_t hd, const float *p, float *out,
                            float *scratch) {
    wsum_slots(v, len, 8, hd, p, scratch);
    fold8_lanes(scratch, hd, out);
}

/* Attention scores of one query against len keys, q converted once and kept
 * in registers (hd <= 256); the per-key sums are those of dot_f16_8_avx2
 * (tiled) or dot_f16_avx2 (4 accumulators; hd a multiple of 32), other
 * shapes take those functions directly. */
static void attn_scores_f16_avx2(const llm__kv_rows *k, int64_t len, int64_t hd, const uint16_t *q16,
                                 float scale, int tiled, float *scores) {
    if (hd > 256 || hd % (tiled ? 8 : 32) != 0) {
        for (int64_t t = 0; t < len; t++) {
            const uint16_t *row = llm__kv_row(k, t);
            scores[t] = (tiled ? dot_f16_8_avx2(hd, q16, row) : dot_f16_avx2(hd, q16, row)) * scale;
        }
        return;
    }
    __m256 q[32];
    const int64_t nc = hd / 8;
    for (int64_t c = 0; c < nc; c++) q[c] = load_h8(q16 + 8 * c);
    if (tiled) {
        /* One accumulator per key is a chain of dependent FMAs; four keys
         * at a time keep four chains in flight. */
        int64_t t = 0;
        for (; t + 4 <= len; t += 4) {
            const uint16_t *r0 = llm__kv_row(k, t), *r1 = llm__kv_row(k, t + 1);
            const uint16_t *r2 = llm__kv_row(k, t + 2), *r3 = llm__kv_row(k, t + 3);
            __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps();
            __m256 c2 = _mm256_setzero_ps(), c3 = _mm256_setzero_ps();
            for (int64_t c = 0; c < nc; c++) {
                c0 = _mm256_fmadd_ps(q[c], load_h8(r0 + 8 * c), c0);
                c1 = _mm256_fmadd_ps(q[c], load_h8(r1 + 8 * c), c1);
                c2 = _mm256_fmadd_ps(q[c], load_h8(r2 + 8 * c), c2);
                c3 = _mm256_fmadd_ps(q[c], load_h8(r3 + 8 * c), c3);
            }
            scores[t] = hsum8(c0) * scale;
            scores[t + 1] = hsum8(c1) * scale;
            scores[t + 2] = hsum8(c2) * scale;
            scores[t + 3] = hsum8(c3) * scale;
        }
        for (; t < len; t++) {
            const uint16_t *r = llm__kv_row(k, t);
            __m256 acc = _mm256_setzero_ps();
            for (int64_t c = 0; c < nc; c++) acc = _mm256_fmadd_ps(q[c], load_h8(r + 8 * c), acc);
            scores[t] = hsum8(acc) * scale;
        }
        return;
    }
    for (int64_t t = 0; t < len; t++) {
        const uint16_t *r = llm__kv_row(k, t);
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        __m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
        for (int64_t c = 0; c < nc; c += 4) {
            a0 = _mm256_fmadd_ps(q[c], load_h8(r + 8 * c), a0);
            a1 = _mm256_fmadd_ps(q[c + 1], load_h8(r + 8 * c + 8), a1);
            a2 = _mm256_fmadd_ps(q[c + 2], load_h8(r + 8 * c + 16), a2);
            a3 = _mm256_fmadd_ps(q[c + 3], load_h8(r + 8 * c + 24), a3);
        }
        scores[t] = (float)(double)reduce4(a0, a1, a2, a3) * scale;
    }
}

/* ------------------------------------------------------- exp, silu, softmax -- */

/* llm__exp_poly on 8 lanes (cpu/vexp.h explains the method). */
static inline __m256 exp_poly8(__m256 x) {
    const __m256 shift = _mm256_set1_ps(LLM__EXP_SHIFT);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(LLM__EXP_LOG2E), shift);
    const __m256 n = _mm256_sub_ps(z, shift);
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(LLM__EXP_LN2_LO),
                                      _mm256_fnmadd_ps(n, _mm256_set1_ps(LLM__EXP_LN2_HI), x));
    const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
    const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(_mm256_set1_ps(1.0f))));
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 hi = _mm256_fmadd_ps(_mm256_set1_ps(LLM__EXP_C5), b, _mm256_set1_ps(LLM__EXP_C4));
    const __m256 lo = _mm256_fmadd_ps(_mm256_set1_ps(LLM__EXP_C3), b, _mm256_set1_ps(LLM__EXP_C2));
    const __m256 j = _mm256_fmadd_ps(_mm256_fmadd_ps(hi, u, lo), u, _mm256_mul_ps(_mm256_set1_ps(LLM__EXP_C1), b));
    const __m256 absn = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
    const __m256 big = _mm256_cmp_ps(absn, _mm256_set1_ps(126.0f), _CMP_GT_OQ);
    const __m256 normal = _mm256_fmadd_ps(j, k, k);
    if (!_mm256_movemask_ps(big)) {
        return normal;
    }
    const __m256i g = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
                                       _mm256_set1_epi32((int)0x82000000u));
    const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(g, _mm256_set1_epi32(0x7f000000)));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, g));
    const __m256 huge = _mm256_cmp_ps(absn, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
    const __m256 scaled = _mm256_mul_ps(_mm256_fmadd_ps(s2, j, s2), s1);
    __m256 r = _mm256_blendv_ps(normal, scaled, big);
    return _mm256_blendv_ps(r, _mm256_mul_ps(s1, s1), huge);
}

static void swiglu_row_avx2(float *out, const float *x, const float *g, int64_t n) {
    const __m256 one = _mm256_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 xv = _mm256_loadu_ps(x + i);
        const __m256 e = exp_poly8(_mm256_sub_ps(_mm256_setzero_ps(), xv));
        const __m256 silu = _mm256_div_ps(xv, _mm256_add_ps(one, e));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(silu, _mm256_loadu_ps(g + i)));
    }
    for (; i < n; i++) {
        out[i] = (x[i] / (1.0f + expf(-x[i]))) * g[i];
    }
}

static void silu_row_avx2(float *out, const float *x, int64_t n) {
    const __m256 one = _mm256_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 xv = _mm256_loadu_ps(x + i);
        const __m256 e = exp_poly8(_mm256_sub_ps(_mm256_setzero_ps(), xv));
        _mm256_storeu_ps(out + i, _mm256_div_ps(xv, _mm256_add_ps(one, e)));
    }
    for (; i < n; i++) {
        out[i] = x[i] / (1.0f + expf(-x[i]));
    }
}

static double exp_sum_row_avx2(float *y, const float *x, float max, int64_t n) {
    const __m256 mv = _mm256_set1_ps(max);
    double sum = 0.0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = exp_poly8(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
        _mm256_storeu_ps(y + i, v);
        sum += (double)hsum8(v);
    }
    for (; i < n; i++) {
        y[i] = expf(x[i] - max);
        sum += (double)y[i];
    }
    return sum;
}

/* ----------------------------------------------------------- quantizers -- */

/* One block of 32 floats -> 32 int8 (round to nearest even), returns the
 * scale d = amax / 127 and the sum of the quants. */
static inline float quant_block32(const float *x, int8_t *q, int32_t *qsum) {
    __m256 v0 = _mm256_loadu_ps(x), v1 = _mm256_loadu_ps(x + 8);
    __m256 v2 = _mm256_loadu_ps(x + 16), v3 = _mm256_loadu_ps(x + 24);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 m = _mm256_max_ps(_mm256_andnot_ps(sign, v0), _mm256_andnot_ps(sign, v1));
    m = _mm256_max_ps(m, _mm256_max_ps(_mm256_andnot_ps(sign, v2), _mm256_andnot_ps(sign, v3)));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax = _mm_cvtss_f32(m4);
    const float d = amax / 127.0f;
    const __m256 id = _mm256_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
    __m256i i0 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v0, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    __m256i i1 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v1, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    __m256i i2 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v2, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    __m256i i3 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v3, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    if (qsum) {
        *qsum = hsum_i32(_mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3)));
    }
    /* The packs work per 128-bit lane; the final permute restores element order. */
    __m256i p01 = _mm256_packs_epi32(i0, i1);
    __m256i p23 = _mm256_packs_epi32(i2, i3);
    __m256i p = _mm256_packs_epi16(p01, p23);
    p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)q, p);
    return d;
}

static void quant_q8_0_avx2(const float *x, void *vy, int64_t n) {
    llm_block_q8_0 *y = vy;
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        float d = quant_block32(x + b * LLM_QK32, y[b].qs, NULL);
        y[b].d = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
    }
}

static void quant_q8_1_avx2(const float *x, void *vy, int64_t n) {
    llm_block_q8_1 *y = vy;
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        int32_t sum = 0;
        float d = quant_block32(x + b * LLM_QK32, y[b].qs, &sum);
        y[b].d = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
        y[b].s = _cvtss_sh(d * (float)sum, _MM_FROUND_TO_NEAREST_INT);
    }
}

static void quant_f16_avx2(const float *x, void *vy, int64_t n) {
    uint16_t *y = vy;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; i++) {
        y[i] = _cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
    }
}

static void round_f16_avx2(int64_t n, float *x) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
        _mm256_storeu_ps(x + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; i++) {
        x[i] = h2f(_cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT));
    }
}

/* ------------------------------------------- flash-attention vector steps -- */

static void fa_mad_f32_avx2(int64_t n, float *y, const float *x, float v) {
    const __m256 vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_loadu_ps(x + i), vv, _mm256_loadu_ps(y + i)));
    }
    for (; i < n; i++) {
        y[i] = fmaf(x[i], v, y[i]);
    }
}

static void fa_scale_f32_avx2(int64_t n, float *y, float v) {
    const __m256 vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), vv));
    }
    for (; i < n; i++) {
        y[i] *= v;
    }
}

static void fa_mad_f16_avx2(int64_t n, uint16_t *y, const uint16_t *x, float v) {
    const __m256 vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 xf = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i)));
        const __m256 yf = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(y + i)));
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(_mm256_fmadd_ps(xf, vv, yf), _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; i++) {
        y[i] = _cvtss_sh(fmaf(h2f(x[i]), v, h2f(y[i])), _MM_FROUND_TO_NEAREST_INT);
    }
}

static void fa_scale_f16_avx2(int64_t n, uint16_t *y, float v) {
    const __m256 vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 yf = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(y + i)));
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(_mm256_mul_ps(yf, vv), _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; i++) {
        y[i] = _cvtss_sh(h2f(y[i]) * v, _MM_FROUND_TO_NEAREST_INT);
    }
}

/* ------------------------------------------------------------- rms norm -- */

static void rms_norm_row_avx2(float *out, const float *x, const float *w, int64_t n, float eps) {
    /* Squares in float, summed in double (as the reference), 4 at a time. */
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 sq = _mm256_mul_ps(v, v);
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(sq)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(sq, 1)));
    }
    double buf[4];
    _mm256_storeu_pd(buf, _mm256_add_pd(s0, s1));
    double ss = (buf[0] + buf[1]) + (buf[2] + buf[3]);
    for (; i < n; i++) {
        ss += (double)(x[i] * x[i]);
    }
    const float scale = 1.0f / sqrtf((float)(ss / (double)n) + eps);
    const __m256 vs = _mm256_set1_ps(scale);
    i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), vs);
        if (w) {
            v = _mm256_mul_ps(v, _mm256_loadu_ps(w + i));
        }
        _mm256_storeu_ps(out + i, v);
    }
    for (; i < n; i++) {
        out[i] = w ? (x[i] * scale) * w[i] : x[i] * scale;
    }
}

void llm__cpu_kernels_x86(llm__cpu_kernels *k, unsigned cpu) {
    k->desc = "avx2+fma+f16c";
    k->dot[LLM_DTYPE_F32] = vdot_f32;
    k->dot[LLM_DTYPE_F16] = vdot_f16;
    k->dot[LLM_DTYPE_BF16] = vdot_bf16;
    k->dot[LLM_DTYPE_Q4_0] = dot_q4_0_q8_0;
    k->dot[LLM_DTYPE_Q4_1] = dot_q4_1_q8_1;
    k->dot[LLM_DTYPE_Q8_0] = dot_q8_0_q8_0;
    k->dot4[LLM_DTYPE_Q4_1] = dot4_q4_1_q8_1;
    k->dot2x4[LLM_DTYPE_Q4_1] = dot2x4_q4_1_q8_1;
    k->dot2x4[LLM_DTYPE_Q8_0] = dot2x4_q8_0_q8_0;
    k->dot4x1[LLM_DTYPE_Q4_1] = dot4x1_q4_1_q8_1;
    k->dot4[LLM_DTYPE_Q8_0] = dot4_q8_0_q8_0;
    k->dot4x1[LLM_DTYPE_Q8_0] = dot4x1_q8_0_q8_0;
    k->quantize[LLM_DTYPE_Q8_0] = quant_q8_0_avx2;
    k->quantize[LLM_DTYPE_Q8_1] = quant_q8_1_avx2;
    k->quantize[LLM_DTYPE_F16] = quant_f16_avx2;
    k->rms_norm_row = rms_norm_row_avx2;
    k->fa_mad_f32 = fa_mad_f32_avx2;
    k->fa_scale_f32 = fa_scale_f32_avx2;
    k->fa_mad_f16 = fa_mad_f16_avx2;
    k->fa_scale_f16 = fa_scale_f16_avx2;
    k->dot_f16 = dot_f16_avx2;
    k->dot_f32 = dot_f32_avx2;
    k->attn_wsum = attn_wsum_avx2;
    k->round_f16 = round_f16_avx2;
    k->dot_f16_8 = dot_f16_8_avx2;
    k->attn_scores_f16 = attn_scores_f16_avx2;
    k->attn_wsum8 = attn_wsum8_avx2;
    k->swiglu_row = swiglu_row_avx2;
    k->silu_row = silu_row_avx2;
    k->exp_sum_row = exp_sum_row_avx2;
    llm__cpu_kernels_q5_x86(k, cpu); /* Q5_0, Q5_1, Q5_K: kernels/q5_x86_256.c */
    llm__cpu_kernels_kquant_x86(k); /* Q4_K, Q6_K dots, Q8_K quantizer: kernels/kquant_x86_256.c */
    llm__cpu_kernels_q8_0_x86(k, cpu); /* Q8_0 dot2x4 / dot4x1, prepared Q8_0: kernels/q8_0_x86_256.c */
    if (cpu & LLM__CPU_AVX512_VNNI) llm__cpu_kernels_q4_1_x86_512(k); /* Q4_1 prepared at load */
    llm__cpu_kernels_q3_k_x86(k, cpu); /* Q3_K dot (llama.cpp's vec_dot order): kernels/q3_k_x86_256.c */
    llm__cpu_kernels_q2_k_x86(k, cpu); /* Q2_K dot, likewise: kernels/q2_k_x86_256.c */
    llm__cpu_kernels_kquant_rows8_x86(k, cpu); /* dot8 of the Q4_K rows8 and Q6_K tiled pairs */
    llm__cpu_kernels_kquant_tile_x86(k, cpu); /* Q6_K / Q5_K packed tiles for prompt passes */
    llm__cpu_kernels_prep_kquant_x86(k, cpu); /* K-quant weights prepared at load (after the above) */
    llm__cpu_kernels_attn_x86_256(k); /* grouped attention: attention_x86_256.c */
    if (cpu & LLM__CPU_AVX512F) llm__cpu_kernels_attn_x86_512(k); /* ... in 16-lane registers */
    llm__cpu_kernels_q4_0_x86(k, cpu); /* Q4_0 rows8 pair (llama.cpp's repacked order): kernels/q4_0_x86_256.c */
    llm__cpu_kernels_sgemm_x86(k); /* F16/BF16 sgemm pairs (llama.cpp's tinyBLAS order): kernels/sgemm_x86_256.c */
    llm__cpu_kernels_tofloat_x86(k); /* KV cache rows to floats: kernels/tofloat_x86_256.c */
    llm__expf_n_fn ef = llm__cpu_expf_n_avx2_get(); /* libm's expf, 4 lanes: kernels/expf_x86_256.c */
    if (ef && llm__cpu_expf_matches_libm(ef)) k->expf_n = ef;
    /* The tiled product's block: AVX-512 where the CPU has it, same bits (gemm_x86_512.c, gemm_x86_256.c). */
    llm__gemm_block_fn gb = (cpu & LLM__CPU_AVX512DQ) ? llm__gemm_block_avx512_get() : NULL;
    k->gemm_block = gb ? gb : llm__gemm_block_avx2_get();
    /* F16 / BF16 weights read in place, by the block of the same width. */
    for (int t = 0; t < LLM_DTYPE_END_; t++) {
        k->gemm_rows[t] = gb ? llm__gemm_rows_avx512_get((llm_dtype)t) : llm__gemm_rows_avx2_get((llm_dtype)t);
    }
    /* What the entries above were picked under (kernels.h). */
    k->isa = (cpu & LLM__CPU_AVX512_VNNI) ? LLM__ISA_ALL : (cpu & LLM__CPU_AVX_VNNI) ? LLM__ISA_AVX_VNNI : LLM__ISA_AVX2;
    k->desc = k->isa == LLM__ISA_ALL ? "avx2+fma+f16c+avx512vnni"
              : k->isa == LLM__ISA_AVX_VNNI ? "avx2+fma+f16c+avxvnni"
              : gb                          ? "avx2+fma+f16c+avx512f" /* AVX-512 without VNNI: its gemm / attention */
                                            : "avx2+fma+f16c";
}

#else /* no AVX2 build: never selected (llm__cpu_features() has no LLM__CPU_AVX2) */

void llm__cpu_kernels_x86(llm__cpu_kernels *k, unsigned cpu) {
    (void)k;
    (void)cpu;
}

#endif
