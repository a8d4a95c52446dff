/*
 * cpu/kernels_avx2_kq8.c -- eight K-quant weight rows at once (kernels.h
 * dot8) for the two types of a Q4_K_M file: Q4_K in llama.cpp's repacked
 * order (its gemv for 1..3 activation rows, its gemm for 4) and Q6_K in its
 * tiled order. Same bits as the pairs' dot / dot4 in kernels_avx2_kq.c, which
 * describes the orders; here only how the work is shared changes.
 *
 * The pattern of kernels_avx2_q4_0.c: per super-block, each row's exact
 * integer sums are formed as 8 int32 lanes, one reduction tree turns the 8
 * rows' lanes into one vector whose lane r is row r's sum (exact, so the
 * tree's shape does not matter), and lane r then runs row r's float chain,
 * operation for operation. What is shared: the activation loads and block
 * scales (one per activation row for 8 weight rows), the float work (one
 * multiply and FMA per 8 rows), and, for Q4_K, the mins term: the 8 rows'
 * 6-bit mins are transposed once per super-block so that one multiply-add
 * per pair of sub-blocks gives all 8 rows' mins products against one
 * activation row's block sums.
 *
 * Each kernel has an AVX2 form and an AVX-VNNI form (vpdpwssd folds the
 * scale multiply and the accumulation of the 16-bit products into one
 * instruction; the integer sums are exact either way, so the bits are the
 * same). The registry takes the VNNI form when the CPU has it.
 *
 * Compiled with -mavx2 -mfma -mf16c (sources.cmake), installed by
 * llm__cpu_kernels_avx2() once the CPU has been checked.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <string.h>

#include "cpu/avx2_common.h"
#include "dtype/blocks.h"

#if defined(__GNUC__) && (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)
#define LLM_KQ8_VNNI 1
#include <cpuid.h>
#define KQ8_TARGET_VNNI __attribute__((target("avx2,fma,f16c,avxvnni")))
#endif

/* Lane r of the result: the sum of the 8 int32 lanes of p[r] (exact). */
static inline __attribute__((always_inline)) __m256i kq8_sum_rows8(const __m256i p[8]) {
    const __m256i h01 = _mm256_hadd_epi32(p[0], p[1]), h23 = _mm256_hadd_epi32(p[2], p[3]);
    const __m256i h45 = _mm256_hadd_epi32(p[4], p[5]), h67 = _mm256_hadd_epi32(p[6], p[7]);
    const __m256i lo = _mm256_hadd_epi32(h01, h23), hi = _mm256_hadd_epi32(h45, h67);
    return _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x20), _mm256_permute2x128_si256(lo, hi, 0x31));
}

/* ---------------------------------------------------------------- Q4_K -- */

/* The 12-byte scale field as 16 int16: sc[0..7] then mn[0..7] (as
 * q4_k_scales_mins in kernels_avx2_kq.c). */
static inline __attribute__((always_inline)) __m256i kq8_q4k_scales_mins(const uint8_t scales[12]) {
    uint32_t w[3];
    memcpy(w, scales, 12);
    const uint32_t m6 = 0x3F3F3F3Fu, m4 = 0x0F0F0F0Fu, m2 = 0x03030303u;
    const uint32_t sc_lo = w[0] & m6, mn_lo = w[1] & m6;
    const uint32_t sc_hi = (w[2] & m4) | ((w[0] >> 6) & m2) << 4;
    const uint32_t mn_hi = ((w[2] >> 4) & m4) | ((w[1] >> 6) & m2) << 4;
    return _mm256_cvtepu8_epi16(_mm_set_epi32((int)mn_hi, (int)mn_lo, (int)sc_hi, (int)sc_lo));
}

#define KQ8_ATTR
#define KQ8_NAME(f) f
#define KQ8_MADD_ACC(acc, s, p) _mm256_add_epi32((acc), _mm256_madd_epi16((s), (p)))
#include "cpu/kernels_avx2_kq8_body.h"
#undef KQ8_ATTR
#undef KQ8_NAME
#undef KQ8_MADD_ACC

#ifdef LLM_KQ8_VNNI
#define KQ8_ATTR KQ8_TARGET_VNNI
#define KQ8_NAME(f) f##_vnni
#define KQ8_MADD_ACC(acc, s, p) _mm256_dpwssd_avx_epi32((acc), (s), (p))
#include "cpu/kernels_avx2_kq8_body.h"
#undef KQ8_ATTR
#undef KQ8_NAME
#undef KQ8_MADD_ACC
#endif

/* Fewer than four activation rows (decode, a batch's last rows): the gemv
 * order needs one float chain pair per output and little else, so the single
 * row kernel is as fast as sharing 8 rows here (which spills); measured. */
static void q4k_gemv_rows(int64_t n, const char *w, size_t w_stride, const char *a, size_t a_stride, int n_a,
                          float *out, size_t o_stride) {
    for (int j = 0; j < n_a; j++) {
        for (int r = 0; r < 8; r++) {
            out[(size_t)j * o_stride + r] =
                llm__q4_k_dot_repack_gemv(n, w + (size_t)r * w_stride, a + (size_t)j * a_stride);
        }
    }
}

static void dot8_q4_k(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride, int n_a,
                      float *out, size_t o_stride) {
    if (n_a >= 4) {
        q4k_8xN(n, w, w_stride, a, a_stride, 4, out, o_stride);
    } else {
        q4k_gemv_rows(n, w, w_stride, a, a_stride, n_a, out, o_stride);
    }
}

#ifdef LLM_KQ8_VNNI
KQ8_TARGET_VNNI static void dot8_q4_k_vnni(int64_t n, const void *w, size_t w_stride, const void *a,
                                           size_t a_stride, int n_a, float *out, size_t o_stride) {
    if (n_a >= 4) {
        q4k_8xN_vnni(n, w, w_stride, a, a_stride, 4, out, o_stride);
    } else {
        q4k_gemv_rows(n, w, w_stride, a, a_stride, n_a, out, o_stride);
    }
}
#endif

/* ---------------------------------------------------------------- Q6_K -- */

static void dot8_q6_k(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride, int n_a,
                      float *out, size_t o_stride) {
    switch (n_a) {
    case 1: q6k_8xN(n, w, w_stride, a, a_stride, 1, out, o_stride); break;
    case 2: q6k_8xN(n, w, w_stride, a, a_stride, 2, out, o_stride); break;
    case 3: q6k_8xN(n, w, w_stride, a, a_stride, 3, out, o_stride); break;
    default: q6k_8xN(n, w, w_stride, a, a_stride, 4, out, o_stride); break;
    }
}

#ifdef LLM_KQ8_VNNI
KQ8_TARGET_VNNI static void dot8_q6_k_vnni(int64_t n, const void *w, size_t w_stride, const void *a,
                                           size_t a_stride, int n_a, float *out, size_t o_stride) {
    switch (n_a) {
    case 1: q6k_8xN_vnni(n, w, w_stride, a, a_stride, 1, out, o_stride); break;
    case 2: q6k_8xN_vnni(n, w, w_stride, a, a_stride, 2, out, o_stride); break;
    case 3: q6k_8xN_vnni(n, w, w_stride, a, a_stride, 3, out, o_stride); break;
    default: q6k_8xN_vnni(n, w, w_stride, a, a_stride, 4, out, o_stride); break;
    }
}

/* AVX-VNNI: CPUID leaf 7 sub-leaf 1, EAX bit 4. */
static int kq8_has_avx_vnni(void) {
    unsigned ea = 0, eb = 0, ec = 0, ed = 0;
    return __get_cpuid_count(7, 1, &ea, &eb, &ec, &ed) && (ea & (1u << 4));
}
#endif

llm__vec_dot8_fn llm__kq_dot8_variant(llm_dtype t, int vnni) {
    if (t != LLM_DTYPE_Q4_K && t != LLM_DTYPE_Q6_K) {
        return NULL;
    }
    if (!vnni) {
        return t == LLM_DTYPE_Q4_K ? dot8_q4_k : dot8_q6_k;
    }
#ifdef LLM_KQ8_VNNI
    if (kq8_has_avx_vnni()) {
        return t == LLM_DTYPE_Q4_K ? dot8_q4_k_vnni : dot8_q6_k_vnni;
    }
#endif
    return NULL;
}

void llm__cpu_kernels_avx2_kq8(llm__cpu_kernels *k) {
    for (int v = 0; v < 2; v++) {
        const llm_dtype t = v ? LLM_DTYPE_Q6_K : LLM_DTYPE_Q4_K;
        llm__vec_dot8_fn f = llm__kq_dot8_variant(t, 1);
        f = f ? f : llm__kq_dot8_variant(t, 0);
        if (t == LLM_DTYPE_Q4_K && k->rows8[t].dot == llm__q4_k_dot_repack_gemv) {
            k->rows8[t].dot8 = f;
        }
        if (t == LLM_DTYPE_Q6_K && k->tiled[t].dot == llm__q6_k_dot_tiled) {
            k->tiled[t].dot8 = f;
        }
    }
}

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

void llm__cpu_kernels_avx2_kq8(llm__cpu_kernels *k) { (void)k; }
llm__vec_dot8_fn llm__kq_dot8_variant(llm_dtype t, int vnni) {
    (void)t;
    (void)vnni;
    return NULL;
}

#endif
