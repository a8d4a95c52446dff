/*
 * cpu/kernels/q5_x86_256.c -- AVX2 + FMA + F16C dot products for the 5-bit
 * weight types: Q5_0 x Q8_0, Q5_1 x Q8_1, Q5_K x Q8_K (the pairs the scalar
 * registry sets), each with a 1 x 4 variant.
 *
 * Compiled with -mavx2 -mfma -mf16c (sources.cmake) and installed by
 * llm__cpu_kernels_x86(), which only runs once the CPU has been checked.
 *
 * Summation order. The project compares logits with llama.cpp, so these
 * kernels sum in the order of ggml's AVX2 vec_dot for the same types:
 *  - integer products go into 8 int32 lanes, lane k holding bytes 4k..4k+3 of
 *    each 32-byte group (vpmaddubsw pairs, then vpmaddwd pairs); integer sums
 *    are exact, so only this lane split matters, not the instruction choice;
 *  - per block (Q5_0/Q5_1) or super-block (Q5_K) each lane is converted to
 *    float and accumulated as acc = fma(scale, lane, acc), scale being the
 *    float product of the two fp16/f32 scales;
 *  - the offset term (Q5_1: m * s, Q5_K: -(d_y * dmin) * sum(mins * bsums))
 *    goes into one float with a fused multiply-add per block: ggml is built
 *    as GNU C, where gcc contracts `summs += a * b` into vfmadd (checked in
 *    llama-cpp-python's libggml-cpu.so); we build as ISO C (no contraction),
 *    so the fusion is written out (it matters for Q5_K, whose product is
 *    inexact; Q5_1's m * s, two halves, is exact in float either way);
 *  - the result is the 8-lane horizontal sum ((hi + lo), then halves, then
 *    pairs) plus the offset term.
 * The scalar reference sums whole-block integers instead, so it differs from
 * these by float rounding only (tests/runtime/test_kernels_q5.c states by how
 * much); tests also compare against values from llama.cpp's own kernels.
 *
 * The fifth bit: byte i of a 32-element group takes bit i of a 32-bit word
 * (Q5_0/Q5_1: qh as a little-endian word; Q5_K: bit g of every qh byte for
 * group g), widened to 0x00/0xFF with a compare and masked to 0x10.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "cpu/kernels/x86_512.h"
#include "dtype/blocks.h"

/* c + a * b rounded once (what gcc emits for `c += a * b` in GNU C mode). */
static inline float fma1(float a, float b, float c) {
    return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)));
}

/* Byte i = 0xFF if bit i of the little-endian word at p is set, else 0. */
static inline __m256i bits32(const uint8_t *p) {
    uint32_t w;
    memcpy(&w, p, 4);
    /* byte i <- byte i / 8 of w, then test bit i % 8 */
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32((int)w),
        _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                         2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
}

/* ---------------------------------------------------------------- Q5_0 -- */

/* Weights as signed bytes q - 16 in -16..15: the nibble with 0xF0 or'ed in
 * when the fifth bit is clear (two's complement of nibble - 16). */
static inline __m256i q5_0_signed(const llm_block_q5_0 *x) {
    const __m256i hi = _mm256_andnot_si256(bits32(x->qh), _mm256_set1_epi8((char)0xF0));
    return _mm256_or_si256(unpack_nibbles(x->qs), hi);
}

/* One block's 8 lanes: |w| x (y with w's sign), exact since |w| <= 16. */
static inline __m256 q5_0_lanes(__m256i aw, __m256i qw, const int8_t *yq) {
    const __m256i y = _mm256_loadu_si256((const __m256i *)yq);
    return _mm256_cvtepi32_ps(dot_us8(aw, _mm256_sign_epi8(y, qw)));
}

static float dot_q5_0_q8_0(int64_t n, const void *w, const void *a) {
    const llm_block_q5_0 *x = w;
    const llm_block_q8_0 *y = a;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const __m256i qw = q5_0_signed(&x[b]);
        const __m256 s = q5_0_lanes(_mm256_sign_epi8(qw, qw), qw, y[b].qs);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[b].d) * h2f(y[b].d)), s, acc);
    }
    return hsum8(acc);
}

static void dot4_q5_0_q8_0(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    const llm_block_q5_0 *x = w;
    const llm_block_q8_0 *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_0 *)((const char *)a + (size_t)j * a_stride);
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const __m256i qw = q5_0_signed(&x[b]); /* decoded once for four rows */
        const __m256i aw = _mm256_sign_epi8(qw, qw);
        const float dx = h2f(x[b].d);
        for (int j = 0; j < 4; j++) {
            const __m256 s = q5_0_lanes(aw, qw, y[j][b].qs);
            acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(dx * h2f(y[j][b].d)), s, acc[j]);
        }
    }
    for (int j = 0; j < 4; j++) out[j] = hsum8(acc[j]);
}

/* ------------------------------------------------- Q5_0, packed tiles -- */

/* A prompt pass's Q5_0 product (dot4's order, above) on eight weight rows
 * packed once per matmul, for CPUs with AVX-512 VNNI: two weight rows per
 * 512-bit register and their block decoded once for all activation rows.
 *
 * Tile layout, per block of 32 (Q50_PK bytes): q [8 rows][32 bytes], the
 * row's values as unsigned q (0..31) in element order; d [8 rows] floats
 * (the fp16 scale widened, exact).
 *
 * Lane k of row r, activation row j: vpdpbusd sums the four products
 * q y of elements 4k .. 4k + 3 in int32, and 16 (y's four bytes summed)
 * is taken off: the exact integer of q5_0_lanes (sum of (q - 16) y). Then,
 * as dot4, acc = fma(d_w * d_y, float(lane), acc) per block and hsum8 at
 * the end: the same bits. */
#define Q50_PK LLM_Q50_PK /* cpu/kernels/x86_512.h */

static size_t q5_0_pack8_bytes(int64_t n) { return (size_t)(n / LLM_QK32) * Q50_PK; }

static void q5_0_pack8(int64_t n, const void *w, size_t w_stride, void *dst) {
    const int64_t nb = n / LLM_QK32;
    for (int64_t b = 0; b < nb; b++) {
        prefetch_next_group(w, w_stride, 8, b, nb);
        char *P = (char *)dst + (size_t)b * Q50_PK;
        float d[8];
        for (int r = 0; r < 8; r++) {
            const llm_block_q5_0 *x = (const llm_block_q5_0 *)((const char *)w + (size_t)r * w_stride) + b;
            _mm256_store_si256((__m256i *)(P + 32 * r), _mm256_add_epi8(q5_0_signed(x), _mm256_set1_epi8(16)));
            d[r] = h2f(x->d);
        }
        memcpy(P + 256, d, sizeof d);
    }
}

#if defined(__GNUC__) && (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)
#define LLM_Q5_0_AVX512 1 /* the product (q5_0_x86_512.c) needs this compiler */
#endif

/* ---------------------------------------------------------------- Q5_1 -- */

/* Weights as unsigned bytes 0..31. */
static inline __m256i q5_1_unsigned(const llm_block_q5_1 *x) {
    const __m256i hi = _mm256_and_si256(bits32(x->qh), _mm256_set1_epi8(0x10));
    return _mm256_or_si256(unpack_nibbles(x->qs), hi);
}

static float dot_q5_1_q8_1(int64_t n, const void *w, const void *a) {
    const llm_block_q5_1 *x = w;
    const llm_block_q8_1 *y = a;
    __m256 acc = _mm256_setzero_ps();
    float summ = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        /* sum_i (d q_i + m) d_y y_i = d d_y sum q_i y_i + m s_y */
        summ = fma1(h2f(x[b].m), h2f(y[b].s), summ);
        const __m256i qy = _mm256_loadu_si256((const __m256i *)y[b].qs);
        const __m256 s = _mm256_cvtepi32_ps(dot_us8(q5_1_unsigned(&x[b]), qy));
        acc = _mm256_fmadd_ps(s, _mm256_set1_ps(h2f(x[b].d) * h2f(y[b].d)), acc);
    }
    return hsum8(acc) + summ;
}

static void dot4_q5_1_q8_1(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    const llm_block_q5_1 *x = w;
    const llm_block_q8_1 *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_1 *)((const char *)a + (size_t)j * a_stride);
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    float summ[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const __m256i qx = q5_1_unsigned(&x[b]);
        const float dx = h2f(x[b].d), mx = h2f(x[b].m);
        for (int j = 0; j < 4; j++) {
            summ[j] = fma1(mx, h2f(y[j][b].s), summ[j]);
            const __m256i qy = _mm256_loadu_si256((const __m256i *)y[j][b].qs);
            const __m256 s = _mm256_cvtepi32_ps(dot_us8(qx, qy));
            acc[j] = _mm256_fmadd_ps(s, _mm256_set1_ps(dx * h2f(y[j][b].d)), acc[j]);
        }
    }
    for (int j = 0; j < 4; j++) out[j] = hsum8(acc[j]) + summ[j];
}

/* ---------------------------------------------------------------- Q5_K -- */

/* Sub-blocks 2p (low nibbles) and 2p + 1 (high nibbles) of a Q5_K block
 * share 32 bytes of qs; their fifth bits are bits 2p and 2p + 1 of the 32 qh
 * bytes. Returns them as unsigned quants 0..31 in *q0, *q1. */
static inline void q5_k_pair(const llm_block_q5_k *x, __m256i qh, int p, __m256i *q0, __m256i *q1) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), five = _mm256_set1_epi8(0x10);
    const __m256i q = _mm256_loadu_si256((const __m256i *)(x->qs + 32 * p));
    const __m256i b0 = _mm256_set1_epi8((char)(1 << (2 * p)));
    const __m256i b1 = _mm256_set1_epi8((char)(1 << (2 * p + 1)));
    const __m256i h0 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, b0), b0), five);
    const __m256i h1 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, b1), b1), five);
    *q0 = _mm256_or_si256(_mm256_and_si256(q, m4), h0);
    *q1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), h1);
}

/* 32 quants times 32 activations, pairs scaled by sc, as 8 int32 lanes. No
 * int16 or int32 overflow: |pair| <= 2 * 31 * 128, times a scale <= 63. */
static inline __m256i q5_k_sub(__m256i q, const int8_t *yq, __m256i sc) {
    const __m256i y = _mm256_loadu_si256((const __m256i *)yq);
    return _mm256_madd_epi16(_mm256_maddubs_epi16(q, y), sc);
}

/* The mins term of one super-block: -(d_y * dmin) * sum_j mn[j] * (sum of
 * sub-block j's activations), fused into *summs as ggml does. */
static inline void q5_k_mins(const uint8_t mn[8], float dmin, const llm_block_q8_k *y, float *summs) {
    int32_t m = 0;
    for (int j = 0; j < 8; j++) m += mn[j] * (y->bsums[2 * j] + y->bsums[2 * j + 1]);
    *summs = fma1((float)m, -y->d * dmin, *summs);
}

static float dot_q5_k_q8_k(int64_t n, const void *w, const void *a) {
    const llm_block_q5_k *x = w;
    const llm_block_q8_k *y = a;
    __m256 acc = _mm256_setzero_ps();
    float summs = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        uint8_t sc[8], mn[8];
        llm__q4k_scale_min(x[b].scales, sc, mn);
        q5_k_mins(mn, h2f(x[b].dmin), &y[b], &summs);
        const __m256i qh = _mm256_loadu_si256((const __m256i *)x[b].qh);
        __m256i sumi = _mm256_setzero_si256();
        for (int p = 0; p < 4; p++) {
            __m256i q0, q1;
            q5_k_pair(&x[b], qh, p, &q0, &q1);
            const __m256i s0 = q5_k_sub(q0, y[b].qs + 64 * p, _mm256_set1_epi16((short)sc[2 * p]));
            const __m256i s1 = q5_k_sub(q1, y[b].qs + 64 * p + 32, _mm256_set1_epi16((short)sc[2 * p + 1]));
            sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(s0, s1));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(y[b].d * h2f(x[b].d)), _mm256_cvtepi32_ps(sumi), acc);
    }
    return hsum8(acc) + summs;
}

/* As dot_q5_k_q8_k for four activation rows: each weight pair of sub-blocks
 * is decoded once and used four times. The integer lanes are the same sums,
 * so each row's result has the single dot's bits. */
static void dot4_q5_k_q8_k(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    const llm_block_q5_k *x = w;
    const llm_block_q8_k *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride);
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    float summs[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        uint8_t sc[8], mn[8];
        llm__q4k_scale_min(x[b].scales, sc, mn);
        const float dmin = h2f(x[b].dmin), dx = h2f(x[b].d);
        for (int j = 0; j < 4; j++) q5_k_mins(mn, dmin, &y[j][b], &summs[j]);
        const __m256i qh = _mm256_loadu_si256((const __m256i *)x[b].qh);
        __m256i sumi[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                           _mm256_setzero_si256()};
        for (int p = 0; p < 4; p++) {
            __m256i q0, q1;
            q5_k_pair(&x[b], qh, p, &q0, &q1);
            const __m256i sc0 = _mm256_set1_epi16((short)sc[2 * p]), sc1 = _mm256_set1_epi16((short)sc[2 * p + 1]);
            for (int j = 0; j < 4; j++) {
                const __m256i s0 = q5_k_sub(q0, y[j][b].qs + 64 * p, sc0);
                const __m256i s1 = q5_k_sub(q1, y[j][b].qs + 64 * p + 32, sc1);
                sumi[j] = _mm256_add_epi32(sumi[j], _mm256_add_epi32(s0, s1));
            }
        }
        for (int j = 0; j < 4; j++) {
            acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(y[j][b].d * dx), _mm256_cvtepi32_ps(sumi[j]), acc[j]);
        }
    }
    for (int j = 0; j < 4; j++) out[j] = hsum8(acc[j]) + summs[j];
}

void llm__cpu_kernels_q5_x86(llm__cpu_kernels *k, unsigned cpu) {
    /* Activation types stay as the scalar registry set them (Q8_0, Q8_1, Q8_K). */
    k->dot[LLM_DTYPE_Q5_0] = dot_q5_0_q8_0;
    k->dot[LLM_DTYPE_Q5_1] = dot_q5_1_q8_1;
    k->dot[LLM_DTYPE_Q5_K] = dot_q5_k_q8_k;
    k->dot4[LLM_DTYPE_Q5_0] = dot4_q5_0_q8_0;
    k->dot4[LLM_DTYPE_Q5_1] = dot4_q5_1_q8_1;
    k->dot4[LLM_DTYPE_Q5_K] = dot4_q5_k_q8_k;
    llm__vec_dot8x4_packed_fn prod = (cpu & LLM__CPU_AVX512_VNNI) ? llm__q5_0_packed_variant(1) : NULL;
    if (prod) {
        /* Q5_0's own pair as the tiled one (same dot and dot4), so that
         * prompt passes multiply packed tiles: Gemma 3 270M's Q4_K_M file
         * keeps a Q5_0 tensor wherever the row is not 256-wide. */
        k->tiled[LLM_DTYPE_Q5_0] = (struct llm__dot_pair){.dot = dot_q5_0_q8_0,
                                                           .dot4 = dot4_q5_0_q8_0,
                                                           .pack8 = q5_0_pack8,
                                                           .pack8_bytes = q5_0_pack8_bytes,
                                                           .dot8x4_packed = prod};
    }
}

llm__vec_dot8x4_packed_fn llm__q5_0_packed_variant(int which) {
#ifdef LLM_Q5_0_AVX512
    if (which == 1) return cpu_has_avx512_vnni() ? llm__q5_0_dot8x4_packed_x86_512 : NULL;
#endif
    (void)which;
    return NULL;
}

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

void llm__cpu_kernels_q5_x86(llm__cpu_kernels *k, unsigned cpu) {
    (void)k;
    (void)cpu;
}
llm__vec_dot8x4_packed_fn llm__q5_0_packed_variant(int which) {
    (void)which;
    return NULL;
}

#endif
