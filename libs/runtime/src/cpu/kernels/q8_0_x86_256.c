/*
 * cpu/kernels/q8_0_x86_256.c -- the Q8_0 x Q8_0 matmul micro-kernels (kernels.h
 * dot2x4: 2 weight rows by 4 activation rows, dot4x1: 4 by 1), each output
 * bit for bit the registry's dot_q8_0_q8_0 (llama.cpp's vec_dot order, which
 * its tinyBLAS Q8_0 matmul shares): per block, 8 int32 lanes (lane k: the
 * exact sum of the products of bytes 4k..4k+3, signs moved onto the
 * activation as ggml does), converted to float, acc = fma(d_x d_y, lanes,
 * acc) on 8 lanes from +0, and hsum8 at the end.
 *
 * Against the first versions in kernels/x86_256.c: the block scales d_x d_y of
 * the tile are formed by one multiply per weight row, stored, and read back
 * by broadcast loads (a load port, where the lane permute they replace took a
 * shuffle port per output); and with AVX-VNNI, vpdpbusd forms the 8 lanes in
 * one instruction instead of vpmaddubsw + vpmaddwd. Same bytes, exact sums,
 * same bits: the sign trick's 16-bit pair sums never saturate (|pair| <=
 * 2 * 128 * 127 on one side, 2 * 128 * 128 on the other fits), so both give
 * the same int32 for every input.
 *
 * Compiled with -mavx2 -mfma -mf16c (sources.cmake), installed by
 * llm__cpu_kernels_x86() once the CPU has been checked.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "cpu/kernels/x86_512.h"
#include "dtype/blocks.h"

#if defined(__GNUC__) && (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)
#define LLM_Q8_0_VNNI 1
#endif

/* One activation row (y, index j) against a dot2x4 tile's two weight rows. */
#define Q8_0_STEP(Q8_LANES, y, j, c0, c1)                                                                   \
    {                                                                                                       \
        const __m256i qy = _mm256_loadu_si256((const __m256i *)y[b].qs);                                    \
        c0 = _mm256_fmadd_ps(_mm256_broadcast_ss(dd + (j)),                                                 \
                             _mm256_cvtepi32_ps(Q8_LANES(a0, _mm256_sign_epi8(qy, q0))), c0);               \
        c1 = _mm256_fmadd_ps(_mm256_broadcast_ss(dd + 4 + (j)),                                             \
                             _mm256_cvtepi32_ps(Q8_LANES(a1, _mm256_sign_epi8(qy, q1))), c1);               \
    }

/* Weight row r of a dot4x1 tile against its activation row. */
#define Q8_0_ROW(Q8_LANES, r, c)                                                                            \
    {                                                                                                       \
        const __m256i qx = _mm256_loadu_si256(                                                              \
            (const __m256i *)((const llm_block_q8_0 *)(wb + (size_t)(r) * w_stride + off))->qs);             \
        const __m256i l = Q8_LANES(_mm256_sign_epi8(qx, qx), _mm256_sign_epi8(qy, qx));                     \
        c = _mm256_fmadd_ps(_mm256_broadcast_ss(dd + (r)), _mm256_cvtepi32_ps(l), c);                       \
    }

/* dot2x4 / dot4x1 bodies; Q8_LANES(u, s) is the 8 int32 lanes of the 32
 * products u[i] * s[i] (u unsigned, s signed). Named accumulators, not
 * arrays: an array of them was kept in memory and stored every block. */
#define Q8_0_BODIES(SUFFIX, ATTR, Q8_LANES)                                                                 \
    ATTR static void dot2x4_q8_0##SUFFIX(int64_t n, const void *w, size_t w_stride, const void *a,         \
                                         size_t a_stride, const float *sc, float out[2][4]) {              \
        const llm_block_q8_0 *x0 = w, *x1 = (const llm_block_q8_0 *)((const char *)w + w_stride);         \
        const llm_block_q8_0 *y0 = a, *y1 = (const llm_block_q8_0 *)((const char *)a + a_stride);         \
        const llm_block_q8_0 *y2 = (const llm_block_q8_0 *)((const char *)a + 2 * a_stride);              \
        const llm_block_q8_0 *y3 = (const llm_block_q8_0 *)((const char *)a + 3 * a_stride);              \
        __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c03 = c00;                                 \
        __m256 c10 = c00, c11 = c00, c12 = c00, c13 = c00;                                                 \
        float dd[8]; /* [row][act]: d_x * d_y */                                                           \
        for (int64_t b = 0; b < n / LLM_QK32; b++) {                                                       \
            const __m256i q0 = _mm256_loadu_si256((const __m256i *)x0[b].qs);                              \
            const __m256i q1 = _mm256_loadu_si256((const __m256i *)x1[b].qs);                              \
            const __m256i a0 = _mm256_sign_epi8(q0, q0), a1 = _mm256_sign_epi8(q1, q1);                    \
            const __m128 dy = _mm_loadu_ps(sc + 8 * b);                                                    \
            _mm_storeu_ps(dd, _mm_mul_ps(_mm_set1_ps(h2f(x0[b].d)), dy));                                  \
            _mm_storeu_ps(dd + 4, _mm_mul_ps(_mm_set1_ps(h2f(x1[b].d)), dy));                              \
            Q8_0_STEP(Q8_LANES, y0, 0, c00, c10)                                                           \
            Q8_0_STEP(Q8_LANES, y1, 1, c01, c11)                                                           \
            Q8_0_STEP(Q8_LANES, y2, 2, c02, c12)                                                           \
            Q8_0_STEP(Q8_LANES, y3, 3, c03, c13)                                                           \
        }                                                                                                  \
        out[0][0] = hsum8(c00), out[0][1] = hsum8(c01), out[0][2] = hsum8(c02), out[0][3] = hsum8(c03);    \
        out[1][0] = hsum8(c10), out[1][1] = hsum8(c11), out[1][2] = hsum8(c12), out[1][3] = hsum8(c13);    \
    }                                                                                                      \
    ATTR static void dot4x1_q8_0##SUFFIX(int64_t n, const void *w, size_t w_stride, const void *a,         \
                                         const float *sc, float out[4]) {                                  \
        const char *wb = w;                                                                                \
        const llm_block_q8_0 *y = a;                                                                       \
        __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;                                        \
        float dd[4];                                                                                       \
        const int64_t nb = n / LLM_QK32;                                                                   \
        for (int64_t b = 0; b < nb; b++) {                                                                 \
            prefetch_next_group(wb, w_stride, 4, b, nb); /* the next four rows */                         \
            const size_t off = (size_t)b * sizeof(llm_block_q8_0);                                         \
            const __m256i qy = _mm256_loadu_si256((const __m256i *)y[b].qs);                               \
            uint16_t h[4];                                                                                 \
            for (int r = 0; r < 4; r++) h[r] = ((const llm_block_q8_0 *)(wb + (size_t)r * w_stride + off))->d; \
            _mm_storeu_ps(dd, _mm_mul_ps(_mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)h)),                \
                                         _mm_set1_ps(sc[2 * b])));                                         \
            Q8_0_ROW(Q8_LANES, 0, c0)                                                                      \
            Q8_0_ROW(Q8_LANES, 1, c1)                                                                      \
            Q8_0_ROW(Q8_LANES, 2, c2)                                                                      \
            Q8_0_ROW(Q8_LANES, 3, c3)                                                                      \
        }                                                                                                  \
        out[0] = hsum8(c0), out[1] = hsum8(c1), out[2] = hsum8(c2), out[3] = hsum8(c3);                    \
    }

#define Q8_LANES_AVX2(u, s) _mm256_madd_epi16(_mm256_maddubs_epi16((u), (s)), _mm256_set1_epi16(1))
Q8_0_BODIES(, , Q8_LANES_AVX2)

#ifdef LLM_Q8_0_VNNI
#define LLM_Q8_0_AVX512 1 /* the 512-bit kernels (q8_0_x86_512.c) need the same compiler */
#define Q8_LANES_VNNI(u, s) _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), (u), (s))
Q8_0_BODIES(_vnni, __attribute__((target("avx2,fma,f16c,avxvnni"))), Q8_LANES_VNNI)
#endif

static int micro_variant(int vnni, llm__vec_dot2x4_fn *d2x4, llm__vec_dot4x1_fn *d4x1, unsigned cpu) {
    if (vnni == 2) {
#ifdef LLM_Q8_0_AVX512
        if ((cpu & LLM__CPU_AVX512_VNNI) && micro_variant(1, d2x4, d4x1, cpu)) {
            *d2x4 = llm__q8_0_dot2x4_x86_512;
            return 1;
        }
#endif
        return 0;
    }
    if (!vnni) {
        *d2x4 = dot2x4_q8_0;
        *d4x1 = dot4x1_q8_0;
        return 1;
    }
#ifdef LLM_Q8_0_VNNI
    if (cpu & LLM__CPU_AVX_VNNI) {
        *d2x4 = dot2x4_q8_0_vnni;
        *d4x1 = dot4x1_q8_0_vnni;
        return 1;
    }
#endif
    return 0;
}

int llm__q8_0_micro_variant(int vnni, llm__vec_dot2x4_fn *d2x4, llm__vec_dot4x1_fn *d4x1) {
    return micro_variant(vnni, d2x4, d4x1, llm__cpu_features());
}

void llm__cpu_kernels_q8_0_x86(llm__cpu_kernels *k, unsigned cpu) {
    llm__vec_dot2x4_fn d2x4;
    llm__vec_dot4x1_fn d4x1;
    if (micro_variant(2, &d2x4, &d4x1, cpu) || micro_variant(1, &d2x4, &d4x1, cpu) ||
        micro_variant(0, &d2x4, &d4x1, cpu)) {
        k->dot2x4[LLM_DTYPE_Q8_0] = d2x4;
        k->dot4x1[LLM_DTYPE_Q8_0] = d4x1;
    }
#ifdef LLM_Q8_0_AVX512
    if (cpu & LLM__CPU_AVX512_VNNI) {
        llm__prep_q8_0_x86_512(&k->prep[LLM_DTYPE_Q8_0]);
    }
#endif
}

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

void llm__cpu_kernels_q8_0_x86(llm__cpu_kernels *k, unsigned cpu) {
    (void)k;
    (void)cpu;
}
int llm__q8_0_micro_variant(int vnni, llm__vec_dot2x4_fn *d2x4, llm__vec_dot4x1_fn *d4x1) {
    (void)vnni;
    (void)d2x4;
    (void)d4x1;
    return 0;
}

#endif
