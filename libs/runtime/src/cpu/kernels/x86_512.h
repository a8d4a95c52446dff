/*
 * cpu/kernels/x86_512.h -- PRIVATE: the entry points of the AVX-512 kernel
 * files (*_x86_512.c), for the 256-bit fills and test getters that pick
 * them once the CPU's flags allow (cpu_features.c), and the small 512-bit
 * helpers those files share. Call an entry only where the CPU has AVX-512
 * VNNI; where the build lacks it, each entry does nothing.
 */
#ifndef LLM_CPU_KERNELS_X86_512_H
#define LLM_CPU_KERNELS_X86_512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu/kernels.h"

/* q8_0_x86_512.c: the dot2x4 of q8_0_x86_256.c in 512-bit registers (same
 * bits), and the Q8_0 weight prepared at load. */
void llm__q8_0_dot2x4_x86_512(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride,
                              const float *sc, float out[2][4]);
void llm__prep_q8_0_x86_512(struct llm__prep_kernels *pk);
/* q5_0_x86_512.c: the Q5_0 packed product on q5_x86_256.c's tiles
 * (LLM_Q50_PK bytes per block). */
#define LLM_Q50_PK (256 + 32)
void llm__q5_0_dot8x4_packed_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                                     size_t o_stride);
/* kquant_tile_x86_512.c: the packed K-quant tiles' products, offsets folded
 * into S1 (off: Q6_K, Q3_K) or with mins (Q5_K, Q2_K), 8 or 16 rows. */
void llm__kqt_dot8x4_off_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                                 size_t o_stride);
void llm__kqt_dot8x4_mins_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                                  size_t o_stride);
void llm__kqt_dot16x4_off_x86_512(int64_t n, const void *pk, size_t pk_stride, const void *a, size_t a_stride,
                                  float *out, size_t o_stride);
void llm__kqt_dot16x4_mins_x86_512(int64_t n, const void *pk, size_t pk_stride, const void *a, size_t a_stride,
                                   float *out, size_t o_stride);
/* q4_0_x86_512.c: the products on q4_0_x86_256.c's tiles (q4_0_pack8u,
 * LLM_Q40_PK bytes per block) and on its prepared Q4_0 groups (pairs of
 * blocks of LLM_Q40R_PAIR bytes; LLM_Q40R_PF: a streaming pass's prefetch
 * distance, in bytes of the copy: beyond the hardware prefetcher's reach
 * when 8 rows share a block, see docs/PERFORMANCE.md). */
#define LLM_Q40_PK (256 + 32 + 32)
#define LLM_Q40R_PAIR 576
#define LLM_Q40R_PF 9216
void llm__q4_0u_dot8x4_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                               size_t o_stride);
void llm__q4_0u_dot16x4_x86_512(int64_t n, const void *pk, size_t pk_stride, const void *a, size_t a_stride,
                                float *out, size_t o_stride);
void llm__q4_0r_dot_x86_512(int64_t K, const void *grp, const void *a, size_t a_stride, const int32_t *ys,
                            size_t ys_stride, int n_a, float *out, size_t o_stride, int flags);
/* kquant_rows8_x86_512.c: the Q4_K rows8 pair's dot8 and its products on
 * kquant_rows8_x86_256.c's tiles (q4k_pack8, LLM_Q4K_PK bytes per
 * super-block). */
#define LLM_Q4K_PK (1024 + 256 + 128 + 64)
void llm__q4k_dot8_x86_512(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride, int n_a,
                           float *out, size_t o_stride);
void llm__q4k_dot8x4_packed_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                                    size_t o_stride);
void llm__q4k_dot16x4_packed_x86_512(int64_t n, const void *pk, size_t pk_stride, const void *a, size_t a_stride,
                                     float *out, size_t o_stride);

#ifdef __AVX512F__ /* the helpers: only in the files compiled with AVX-512 */
/* The 4 bytes at p in every int32 lane of a 512-bit register, by a
 * broadcast from memory: a load, no shuffle. (Left to itself GCC loads an
 * activation's 32 bytes once and broadcasts each dword from a register, a
 * shuffle per chunk, which made the 512-bit packed products slower.) */
__attribute__((target("avx512f"))) static inline __m512i zmm_bcast4(const void *p) {
    __m512i r;
    __asm__("vpbroadcastd %1, %0" : "=v"(r) : "m"(*(const char(*)[4])p));
    return r;
}

/* The two groups' tiles of a 16-row packed product (kernels.h
 * dot16x4_packed): the 32 bytes at off of tile T0 in the low half, those of
 * T1 in the high half (T1 == T0 for one group); as floats; and the 16
 * outputs of each of 4 activation rows stored (ng 2) or the first 8 (ng 1). */
__attribute__((target("avx512f"))) static inline __m512i zmm_tile2(const char *T0, const char *T1, size_t off) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_load_si256((const __m256i *)(T0 + off))),
                              _mm256_load_si256((const __m256i *)(T1 + off)), 1);
}

__attribute__((target("avx512f,avx512dq"))) static inline __m512 zmm_tile2f(const char *T0, const char *T1, size_t off) {
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_load_ps((const float *)(T0 + off))),
                              _mm256_load_ps((const float *)(T1 + off)), 1);
}

__attribute__((target("avx512f"))) static inline void zmm_store16x4(float *out, size_t o_stride, const __m512 r[4],
                                                                    int ng) {
    for (int j = 0; j < 4; j++) {
        if (ng == 2) {
            _mm512_storeu_ps(out + (size_t)j * o_stride, r[j]);
        } else {
            _mm256_storeu_ps(out + (size_t)j * o_stride, _mm512_castps512_ps256(r[j]));
        }
    }
}
#endif

#endif
