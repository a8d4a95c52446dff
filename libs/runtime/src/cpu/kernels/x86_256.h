/*
 * cpu/kernels/x86_256.h -- PRIVATE: the small AVX2 helpers every AVX2 kernel file
 * uses. Include only from files compiled with -mavx2 -mfma -mf16c (see
 * sources.cmake) and inside their AVX2 guard. The float folds here fix an
 * order of additions that llama.cpp's kernels share; kernels.h says which
 * kernel relies on which.
 */
#ifndef LLM_CPU_AVX2_COMMON_H
#define LLM_CPU_AVX2_COMMON_H

#include <immintrin.h>
#include <string.h>
#include <math.h>
#include <stdint.h>

#include "cpu/kernels.h"

/* The running CPU's AVX-VNNI and AVX-512 VNNI (cpu_features.c), for the
 * variant getters tests call; the registry fill takes its flags from its
 * caller instead. */
static inline int cpu_has_avx_vnni(void) { return (llm__cpu_features() & LLM__CPU_AVX_VNNI) != 0; }
static inline int cpu_has_avx512_vnni(void) { return (llm__cpu_features() & LLM__CPU_AVX512_VNNI) != 0; }

static inline float h2f(uint16_t h) { return _cvtsh_ss(h); }

/* 8 halves -> 8 floats. */
static inline __m256 load_h8(const uint16_t *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

/* 8 bfloat16 -> 8 floats (bf16 is the top half of a float). */
static inline __m256 load_bf8(const uint16_t *p) {
    __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

/* Sum of 8 lanes: the two halves, then (0 + 2) + (1 + 3) (as llm__hsum8). */
static inline float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Sum of 8 int32 lanes (exact, so any order). */
static inline int32_t hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

/* Four 8-lane accumulators folded as llama.cpp's float dot products fold
 * them: (a0 + a2) + (a1 + a3), then the 128-bit halves, then pairwise. */
/* The steps of reduce4 after its first, on x = (a0 + a2) + (a1 + a3). */
static inline float reduce4_rest(__m256 x) {
    const __m128 t0 = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    const __m128 t1 = _mm_hadd_ps(t0, t0);
    return _mm_cvtss_f32(_mm_hadd_ps(t1, t1));
}

static inline float reduce4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
    return reduce4_rest(_mm256_add_ps(_mm256_add_ps(a0, a2), _mm256_add_ps(a1, a3)));
}

/* 16 bytes of packed nibbles -> 32 bytes 0..15 in element order (low nibbles
 * are elements 0..15, high nibbles 16..31). */
static inline __m256i unpack_nibbles(const uint8_t *qs) {
    __m128i t = _mm_loadu_si128((const __m128i *)qs);
    __m256i v = _mm256_set_m128i(_mm_srli_epi16(t, 4), t);
    return _mm256_and_si256(v, _mm256_set1_epi8(0x0F));
}

/* Sum of 32 products u[i] * s[i], u unsigned (< 128), s signed, summed in
 * fours into 8 int32 lanes (lane l: elements 4l..4l+3). */
static inline __m256i dot_us8(__m256i u, __m256i s) {
    __m256i p16 = _mm256_maddubs_epi16(u, s);
    return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

/* The same for two signed vectors: the sign of x moves onto y. */
static inline __m256i dot_ss8(__m256i x, __m256i y) {
    return dot_us8(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
}

/* Dot of two F16 rows in the tiled order (kernels.h dot_f16_8): one 8-lane
 * FMA chain, element i in lane i % 8, then hsum8. */
static inline float dot_f16_tiled(int64_t n, const uint16_t *x, const uint16_t *y) {
    __m256 acc = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        acc = _mm256_fmadd_ps(load_h8(x + i), load_h8(y + i), acc);
    }
    if (i < n) {
        float lane[8];
        _mm256_storeu_ps(lane, acc);
        for (int64_t l = 0; i + l < n; l++) lane[l] = fmaf(h2f(x[i + l]), h2f(y[i + l]), lane[l]);
        acc = _mm256_loadu_ps(lane);
    }
    return hsum8(acc);
}

/* Dot of two F16 rows in llama.cpp's dot-product order (kernels.h dot_f16):
 * four accumulators over chunks of 32, reduce4, the tail added in double. */
static inline float dot_f16_4acc(int64_t n, const uint16_t *x, const uint16_t *y) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    __m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_fmadd_ps(load_h8(x + i), load_h8(y + i), a0);
        a1 = _mm256_fmadd_ps(load_h8(x + i + 8), load_h8(y + i + 8), a1);
        a2 = _mm256_fmadd_ps(load_h8(x + i + 16), load_h8(y + i + 16), a2);
        a3 = _mm256_fmadd_ps(load_h8(x + i + 24), load_h8(y + i + 24), a3);
    }
    double s = (double)reduce4(a0, a1, a2, a3);
    for (; i < n; i++) {
        s += (double)(h2f(x[i]) * h2f(y[i]));
    }
    return (float)s;
}

/* out[d] = llm__hsum8 of the 8 lane partials L[l * hd + d], l = 0..7 (the
 * value sums of the tiled order, kernels.h attn_wsum8), 8 values of d at a
 * time. */
static inline void fold8_lanes(const float *L, int64_t hd, float *out) {
    const int64_t hd8 = hd & ~(int64_t)7;
    int64_t d = 0;
    for (; d < hd8; d += 8) {
        const __m256 s0 = _mm256_add_ps(_mm256_loadu_ps(L + d), _mm256_loadu_ps(L + 4 * hd + d));
        const __m256 s1 = _mm256_add_ps(_mm256_loadu_ps(L + hd + d), _mm256_loadu_ps(L + 5 * hd + d));
        const __m256 s2 = _mm256_add_ps(_mm256_loadu_ps(L + 2 * hd + d), _mm256_loadu_ps(L + 6 * hd + d));
        const __m256 s3 = _mm256_add_ps(_mm256_loadu_ps(L + 3 * hd + d), _mm256_loadu_ps(L + 7 * hd + d));
        _mm256_storeu_ps(out + d, _mm256_add_ps(_mm256_add_ps(s0, s2), _mm256_add_ps(s1, s3)));
    }
    for (; d < hd; d++) {
        const float s0 = L[d] + L[4 * hd + d], s1 = L[hd + d] + L[5 * hd + d];
        const float s2 = L[2 * hd + d] + L[6 * hd + d], s3 = L[3 * hd + d] + L[7 * hd + d];
        out[d] = (s0 + s2) + (s1 + s3);
    }
}

/* The 12-byte scale field of a Q4_K / Q5_K block as 16 int16: sc[0..7]
 * then mn[0..7] (the layout in dtype/blocks.h, decoded four bytes at a
 * time). */
static inline __attribute__((always_inline)) __m256i q4_k_scales_mins(const uint8_t scales[12]) {
    uint32_t w[3];
    memcpy(w, scales, 12);
    const uint32_t m6 = 0x3F3F3F3Fu, m4 = 0x0F0F0F0Fu, m2 = 0x03030303u;
    const uint32_t sc_lo = w[0] & m6, mn_lo = w[1] & m6;
    const uint32_t sc_hi = (w[2] & m4) | ((w[0] >> 6) & m2) << 4;
    const uint32_t mn_hi = ((w[2] >> 4) & m4) | ((w[1] >> 6) & m2) << 4;
    return _mm256_cvtepu8_epi16(_mm_set_epi32((int)mn_hi, (int)mn_lo, (int)sc_hi, (int)sc_lo));
}

/* In place: afterwards int32 lane r of v[i] is what lane i of v[r] was (the
 * 8 x 8 transpose the packers use to put weight row r in lane r). */
static inline __attribute__((always_inline)) void transpose8x32(__m256i v[8]) {
    __m256i t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_epi32(v[2 * i], v[2 * i + 1]);     /* lanes 0 1 | 4 5 of rows 2i, 2i + 1 */
        t[2 * i + 1] = _mm256_unpackhi_epi32(v[2 * i], v[2 * i + 1]); /* lanes 2 3 | 6 7 */
    }
    for (int i = 0; i < 2; i++) {
        /* u[4i + e]: lane e | e + 4 of rows 4i .. 4i + 3 */
        u[4 * i] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int e = 0; e < 4; e++) {
        v[e] = _mm256_permute2x128_si256(u[e], u[4 + e], 0x20);
        v[e + 4] = _mm256_permute2x128_si256(u[e], u[4 + e], 0x31);
    }
}

/* Prefetch for a kernel that walks block b (of nb) of `rows` weight rows
 * side by side, starting at w, w_stride bytes apart: the lines of the NEXT
 * group of rows (from w + rows * w_stride) in proportion to b, so they are in
 * cache when the caller moves on to that group, as matmul_cpu.c's tiles do.
 * Rows of 1-2 KiB read eight at a time are too short for the hardware
 * prefetcher to follow (this doubles a one-thread mat-vec's read rate: see
 * docs/PERFORMANCE.md). A prefetch never
 * faults, so the group past a tensor's end costs nothing but the hint. */
static inline void prefetch_next_group(const char *w, size_t w_stride, int rows, int64_t b, int64_t nb) {
    const size_t group = (size_t)rows * w_stride, step = (group + (size_t)nb - 1) / (size_t)nb;
    /* An address, not a C pointer: past a tensor's end it points at no object. */
    const uintptr_t p = (uintptr_t)w + group + (size_t)b * step;
    /* asm, not _mm_prefetch: GCC 12 deletes a loop of prefetches as empty. */
    for (size_t off = 0; off < step; off += 64) __asm__ volatile("prefetcht0 (%0)" : : "r"(p + off));
}

/* The 4 bytes at p (an activation's chunk) in every int32 lane. */
static inline __attribute__((always_inline)) __m256i ymm_bcast4(const void *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

/* Prepared layouts (kernels.h prep): dwords 0 .. n - 1 of a row's bytes
 * src into a [n][16 rows][4 bytes] tile T as row r, and back. */
static inline void r16_put(void *T, const void *src, int n, int r) {
    for (int c = 0; c < n; c++) memcpy((char *)T + ((size_t)c * 16 + (size_t)r) * 4, (const char *)src + 4 * c, 4);
}
static inline void r16_get(void *dst, const void *T, int n, int r) {
    for (int c = 0; c < n; c++) memcpy((char *)dst + 4 * c, (const char *)T + ((size_t)c * 16 + (size_t)r) * 4, 4);
}

/* A prepared dot's dispatch (kernels.h prep): BODY(args..., NA, PF) with the
 * activation row count n_a (1..4) and the streaming prefetch as constants. */
#define LLM_PREP_DISPATCH4(n_a, flags, BODY, ...)                                                          \
    switch ((n_a) * 2 + (((flags) & LLM__PREP_STREAM) != 0)) {                                              \
    case 2: BODY(__VA_ARGS__, 1, 0); break;                                                                 \
    case 3: BODY(__VA_ARGS__, 1, 1); break;                                                                 \
    case 4: BODY(__VA_ARGS__, 2, 0); break;                                                                 \
    case 5: BODY(__VA_ARGS__, 2, 1); break;                                                                 \
    case 6: BODY(__VA_ARGS__, 3, 0); break;                                                                 \
    case 7: BODY(__VA_ARGS__, 3, 1); break;                                                                 \
    case 9: BODY(__VA_ARGS__, 4, 1); break;                                                                 \
    default: BODY(__VA_ARGS__, 4, 0); break;                                                                \
    }

/* As LLM_PREP_DISPATCH4 for n_a 1..8 (a product whose registers hold 8
 * activation rows' accumulators beside one unpacked weight block). */
#define LLM_PREP_DISPATCH8(n_a, flags, BODY, ...)                                                          \
    if ((n_a) > 4) {                                                                                        \
        switch ((n_a) * 2 + (((flags) & LLM__PREP_STREAM) != 0)) {                                          \
        case 10: BODY(__VA_ARGS__, 5, 0); break;                                                            \
        case 11: BODY(__VA_ARGS__, 5, 1); break;                                                            \
        case 12: BODY(__VA_ARGS__, 6, 0); break;                                                            \
        case 13: BODY(__VA_ARGS__, 6, 1); break;                                                            \
        case 14: BODY(__VA_ARGS__, 7, 0); break;                                                            \
        case 15: BODY(__VA_ARGS__, 7, 1); break;                                                            \
        case 17: BODY(__VA_ARGS__, 8, 1); break;                                                            \
        default: BODY(__VA_ARGS__, 8, 0); break;                                                            \
        }                                                                                                   \
    } else {                                                                                                \
        LLM_PREP_DISPATCH4(n_a, flags, BODY, __VA_ARGS__)                                                   \
    }

#endif
