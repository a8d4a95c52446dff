/*
 * cpu/kernels/q4_0_x86_256.c -- Q4_0 x Q8_0 dot products summed in the order of
 * llama.cpp's repacked Q4_0 kernels (CPU_REPACK, q4_0_8x8).
 *
 * On an AVX2 CPU llama.cpp repacks every Q4_0 weight whose row count is a
 * multiple of 8 into groups of 8 interleaved rows at load time, and multiplies
 * them with its gemv (one activation row) / gemm (four rows) kernels instead
 * of its vec_dot. Both give each output one float accumulator chain over the
 * blocks: acc = fma(float(s_b), d_w * d_a, acc), s_b the exact integer sum of
 * the 32 products (q - 8) * q_a of block b, d_w * d_a the float product of the
 * two fp16 scales; acc starts at +0. The vec_dot (our registry's dot) instead
 * spreads each block over 8 float lanes and sums them at the end, so results
 * differ in the last bits. The integer sums are exact, so how we form them
 * does not matter; only the float chain must be the same.
 *
 * dot8 (eight weight rows at once, below) gives the same chains, lane by lane.
 *
 * Registered as the rows8 pair of Q4_0 (kernels.h), which the matmul uses for
 * weights with M % 8 == 0, the same condition as llama.cpp's. gemv and gemm
 * share the per-output order, so dot4 is four dots with the weight row decoded
 * once. Golden: tests/runtime/test_kernels_q4_0.c, against llama.cpp's own
 * repack + gemv/gemm (scripts/golden/kernels/q4_0_llamacpp.py).
 *
 * Compiled with -mavx2 -mfma -mf16c (sources.cmake), installed by
 * llm__cpu_kernels_x86() once the CPU has been checked.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "cpu/kernels/x86_512.h"
#include "dtype/blocks.h"

/* Block of 32 weights as signed bytes q - 8 (-8..7), in element order:
 * low nibbles are elements 0..15, high nibbles 16..31. */
static inline __m256i q4_0_bytes(const llm_block_q4_0 *x) {
    __m128i t = _mm_loadu_si128((const __m128i *)x->qs);
    __m256i v = _mm256_set_m128i(_mm_srli_epi16(t, 4), t);
    return _mm256_sub_epi8(_mm256_and_si256(v, _mm256_set1_epi8(0x0F)), _mm256_set1_epi8(8));
}

/* Exact integer sum of the 32 products x[i] * y[i] (x in -8..7, y in -128..127):
 * the sign of x moves onto y so the unsigned x signed byte multiply applies;
 * each 16-bit pair sum is at most 2 * 8 * 128, far from overflow. */
static inline int32_t block_isum(__m256i qx, const int8_t *qy) {
    __m256i y = _mm256_loadu_si256((const __m256i *)qy);
    __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(qx, qx), _mm256_sign_epi8(y, qx));
    __m256i p32 = _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(p32), _mm256_extracti128_si256(p32, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

static float dot_q4_0_q8_0_rows8(int64_t n, const void *w, const void *a) {
    const llm_block_q4_0 *x = w;
    const llm_block_q8_0 *y = a;
    float acc = 0.0f;
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const int32_t s = block_isum(q4_0_bytes(&x[b]), y[b].qs);
        const float d = _cvtsh_ss(x[b].d) * _cvtsh_ss(y[b].d);
        acc = fmaf((float)s, d, acc);
    }
    return acc;
}

static void dot4_q4_0_q8_0_rows8(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]) {
    const llm_block_q4_0 *x = w;
    const llm_block_q8_0 *y[4];
    for (int j = 0; j < 4; j++) {
        y[j] = (const llm_block_q8_0 *)((const char *)a + (size_t)j * a_stride);
    }
    /* Four independent chains, each exactly the single dot's. */
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const __m256i qx = q4_0_bytes(&x[b]);
        const float dx = _cvtsh_ss(x[b].d);
        for (int j = 0; j < 4; j++) {
            const int32_t s = block_isum(qx, y[j][b].qs);
            acc[j] = fmaf((float)s, dx * _cvtsh_ss(y[j][b].d), acc[j]);
        }
    }
    for (int j = 0; j < 4; j++) out[j] = acc[j];
}

/* Lane r of the result: the sum of the 8 int32 lanes of p[r] (exact). */
static inline __m256i sum_rows8(const __m256i p[8]) {
    const __m256i h01 = _mm256_hadd_epi32(p[0], p[1]), h23 = _mm256_hadd_epi32(p[2], p[3]);
    const __m256i h45 = _mm256_hadd_epi32(p[4], p[5]), h67 = _mm256_hadd_epi32(p[6], p[7]);
    const __m256i lo = _mm256_hadd_epi32(h01, h23), hi = _mm256_hadd_epi32(h45, h67);
    return _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x20), _mm256_permute2x128_si256(lo, hi, 0x31));
}

/* Eight weight rows by NA activation rows (kernels.h dot8). Per block, each
 * of the 8 x NA exact integer sums is formed in a vector shared by two rows,
 * r and r + 4: the 16 packed bytes of row r fill the low half, row r + 4's
 * the high half; masked, they are the two rows' low nibbles (elements 0..15),
 * shifted and masked their high ones (16..31). vpmaddubsw multiplies the
 * unsigned nibbles q (0..15) with y's first 16 bytes (both halves) and its
 * last 16, the two 16-bit results are added and 8 * y taken off (each 16-bit
 * lane holds four (q - 8) * y products, within +-4096), and vpmaddwd makes
 * four int32 partial sums per row. Three horizontal adds then leave row r's
 * block sum in lane r. Then lane r runs exactly the scalar chain of
 * dot_q4_0_q8_0_rows8: acc = fma(float(s), d_w * d_a, acc), from +0, block
 * after block. So this is 8 x NA of those dots, bit for bit, with the weight
 * blocks decoded once for all NA activation rows and the FMA latency spread
 * over 8 lanes instead of serializing one row's chain. */
static inline __attribute__((always_inline)) void q4_0_8xN(int64_t n, const char *w, size_t w_stride,
                                                          const char *a, size_t a_stride, const int NA,
                                                          float *out, size_t o_stride, const int PF) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    const __m256i eight = _mm256_set1_epi8(8), ones = _mm256_set1_epi16(1), m4 = _mm256_set1_epi8(0x0F);
    const int64_t nb = n / LLM_QK32;
    const size_t s4 = 4 * w_stride;
    for (int64_t b = 0; b < nb; b++) {
        __m256i lo[4], hi[4];
        if (PF) prefetch_next_group(w, w_stride, 8, b, nb);
        const char *x = w + (size_t)b * sizeof(llm_block_q4_0);
        for (int r = 0; r < 4; r++) {
            const char *xr = x + (size_t)r * w_stride;
            const __m256i v =
                _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(xr + offsetof(llm_block_q4_0, qs)))),
                                        _mm_loadu_si128((const __m128i *)(xr + s4 + offsetof(llm_block_q4_0, qs))), 1);
            lo[r] = _mm256_and_si256(v, m4);
            hi[r] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        }
        uint16_t dh[8];
        for (int r = 0; r < 8; r++) memcpy(&dh[r], x + (size_t)r * w_stride + offsetof(llm_block_q4_0, d), sizeof(uint16_t));
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)dh));
        for (int j = 0; j < NA; j++) {
            const llm_block_q8_0 *y = (const llm_block_q8_0 *)(a + (size_t)j * a_stride) + b;
            const __m256i ylo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)y->qs));
            const __m256i yhi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(y->qs + 16)));
            const __m256i m8 = _mm256_add_epi16(_mm256_maddubs_epi16(eight, ylo), _mm256_maddubs_epi16(eight, yhi));
            __m256i p[4];
            for (int r = 0; r < 4; r++) {
                const __m256i s16 = _mm256_add_epi16(_mm256_maddubs_epi16(lo[r], ylo), _mm256_maddubs_epi16(hi[r], yhi));
                p[r] = _mm256_madd_epi16(_mm256_sub_epi16(s16, m8), ones);
            }
            const __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
            const __m256 d = _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(y->d)));
            acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), d, acc[j]);
        }
    }
    for (int j = 0; j < NA; j++) _mm256_storeu_ps(out + (size_t)j * o_stride, acc[j]);
}

#define Q4_0_DOT8(NAME, ATTR, BODY, PF)                                                                          \
    ATTR static void NAME(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride, int n_a,      \
                          float *out, size_t o_stride) {                                                        \
        switch (n_a) {                                                                                          \
        case 1: BODY(n, w, w_stride, a, a_stride, 1, out, o_stride, PF); break;                                  \
        case 2: BODY(n, w, w_stride, a, a_stride, 2, out, o_stride, PF); break;                                  \
        case 3: BODY(n, w, w_stride, a, a_stride, 3, out, o_stride, PF); break;                                  \
        default: BODY(n, w, w_stride, a, a_stride, 4, out, o_stride, PF); break;                                 \
        }                                                                                                       \
    }

/* dot8, and its stream form (kernels.h dot8_stream: the same bits, and the
 * next 8 rows prefetched). */
Q4_0_DOT8(dot8_q4_0_q8_0_rows8, , q4_0_8xN, 0)
Q4_0_DOT8(dot8s_q4_0_q8_0_rows8, , q4_0_8xN, 1)

/* ------------------------------------------------- packed tiles -- */

/* A prompt pass's Q4_0 product (dot8 with four activation rows, the same
 * chains) on eight weight rows packed once per matmul, so that int32 lane r
 * of every vector is weight row r and no horizontal adds sum lanes.
 *
 * Tile layout, per block of 32 (Q40_PK bytes):
 *   q  [8 chunks c][8 rows][4 bytes]: elements 4c .. 4c + 3 of the row as
 *      signed q - 8 (-8..7), already split from their nibbles;
 *   corr [8 rows] int32: -128 * (sum of the row's 32 values q - 8);
 *   d  [8 rows] floats (the fp16 scale widened, exact).
 * The activation's bytes y (-128..127) go in unsigned, as y + 128 (one xor
 * per 16-byte half broadcast to both lanes, then one vpshufd per chunk puts
 * its 4 bytes in every lane): vpmaddubsw
 * of the broadcast 4 bytes of chunk c with the 8 rows' chunk adds two
 * products (q - 8)(y + 128) per int16, each within [-2040, 1785]; the eight
 * chunks summed in int16 hold 16 products, within [-32640, 28560], so
 * neither vpmaddubsw saturates nor the sum wraps. vpmaddwd by ones makes
 * lane r sum((q - 8)(y + 128)), and corr takes off 128 sum(q - 8): the exact
 * integer of q4_0_8xN. Then the same chain per lane, acc = fma(float(s),
 * d_w d_y, acc), so the same bits. Per block and activation row this is
 * 8 vpmaddubsw and one vpmaddwd, where q4_0_8xN runs 10 and 4, plus 3 hadds. */
#define Q40_PK LLM_Q40_PK /* cpu/kernels/x86_512.h */

static size_t q4_0_pack8_bytes(int64_t n) { return (size_t)(n / LLM_QK32) * Q40_PK; }

static inline __attribute__((always_inline)) void q4_0_pack8_body(int64_t n, const void *w, size_t w_stride, void *dst,
                                                                  const int UNSIGNED) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), eight = _mm256_set1_epi8(8);
    const int64_t nb = n / LLM_QK32;
    const char *wq = (const char *)w + offsetof(llm_block_q4_0, qs);
    for (int64_t b = 0; b < nb; b++) {
        prefetch_next_group(w, w_stride, 8, b, nb);
        char *P = (char *)dst + (size_t)b * Q40_PK;
        const size_t off = (size_t)b * sizeof(llm_block_q4_0);
        /* A[r]: the 16 packed bytes of row r | of row r + 4. Dword k of a
         * row holds elements 4k .. 4k + 3 (low nibbles) and 16 + 4k ..
         * 19 + 4k (high): chunks k and k + 4. */
        __m256i A[4];
        for (int r = 0; r < 4; r++) {
            const char *x = wq + off + (size_t)r * w_stride;
            A[r] = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)x)),
                                           _mm_loadu_si128((const __m128i *)(x + 4 * w_stride)), 1);
        }
        /* In-lane 4 x 4 dword transpose: W[k] has dword k of rows 0..3 |
         * 4..7, so int32 lane r is row r. */
        const __m256i t0 = _mm256_unpacklo_epi32(A[0], A[1]), t1 = _mm256_unpackhi_epi32(A[0], A[1]);
        const __m256i t2 = _mm256_unpacklo_epi32(A[2], A[3]), t3 = _mm256_unpackhi_epi32(A[2], A[3]);
        const __m256i W[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                              _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3)};
        __m256i tot = _mm256_setzero_si256(); /* per byte, the sum of 8 nibbles (<= 120) */
        for (int k = 0; k < 4; k++) {
            const __m256i lo = _mm256_and_si256(W[k], m4), hi = _mm256_and_si256(_mm256_srli_epi16(W[k], 4), m4);
            tot = _mm256_add_epi8(tot, _mm256_add_epi8(lo, hi));
            _mm256_store_si256((__m256i *)(P + 32 * k), UNSIGNED ? lo : _mm256_sub_epi8(lo, eight));
            _mm256_store_si256((__m256i *)(P + 32 * (k + 4)), UNSIGNED ? hi : _mm256_sub_epi8(hi, eight));
        }
        /* lane r: sum q over the row's 32 values; corr = -128 (sum q - 256) */
        const __m256i sq = _mm256_madd_epi16(_mm256_maddubs_epi16(tot, _mm256_set1_epi8(1)), _mm256_set1_epi16(1));
        _mm256_store_si256((__m256i *)(P + 256), _mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(256), sq), 7));
        uint16_t dh[8];
        for (int r = 0; r < 8; r++) {
            memcpy(&dh[r], (const char *)w + (size_t)r * w_stride + off + offsetof(llm_block_q4_0, d), sizeof(uint16_t));
        }
        _mm256_store_ps((float *)(P + 288), _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)dh)));
    }
}

static void q4_0_pack8(int64_t n, const void *w, size_t w_stride, void *dst) { q4_0_pack8_body(n, w, w_stride, dst, 0); }

/* The same tile with q unsigned (0..15) and corr unused, for the products
 * that take the activation as the signed operand (q4_0u_*, below). */
static void q4_0_pack8u(int64_t n, const void *w, size_t w_stride, void *dst) { q4_0_pack8_body(n, w, w_stride, dst, 1); }

static void q4_0_dot8x4_packed(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                               size_t o_stride) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    const __m256i ones = _mm256_set1_epi16(1), bias = _mm256_set1_epi8((char)0x80);
    const int64_t nb = n / LLM_QK32;
    for (int64_t b = 0; b < nb; b++) {
        const char *P = (const char *)pk + (size_t)b * Q40_PK;
        const __m256i corr = _mm256_load_si256((const __m256i *)(P + 256));
        const __m256 dw = _mm256_load_ps((const float *)(P + 288));
        for (int j = 0; j < 4; j++) {
            /* One activation row at a time over the 8 chunks (reloaded from
             * L1 per row): few live registers, so nothing spills. */
            const llm_block_q8_0 *y = (const llm_block_q8_0 *)((const char *)a + (size_t)j * a_stride) + b;
            const __m256i ylo = _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)y->qs)), bias);
            const __m256i yhi =
                _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(y->qs + 16))), bias);
            const __m256i *q = (const __m256i *)P;
            __m256i s0 = _mm256_maddubs_epi16(_mm256_shuffle_epi32(ylo, 0x00), _mm256_load_si256(q));
            __m256i s1 = _mm256_maddubs_epi16(_mm256_shuffle_epi32(ylo, 0x55), _mm256_load_si256(q + 1));
            s0 = _mm256_add_epi16(s0, _mm256_maddubs_epi16(_mm256_shuffle_epi32(ylo, 0xAA), _mm256_load_si256(q + 2)));
            s1 = _mm256_add_epi16(s1, _mm256_maddubs_epi16(_mm256_shuffle_epi32(ylo, 0xFF), _mm256_load_si256(q + 3)));
            s0 = _mm256_add_epi16(s0, _mm256_maddubs_epi16(_mm256_shuffle_epi32(yhi, 0x00), _mm256_load_si256(q + 4)));
            s1 = _mm256_add_epi16(s1, _mm256_maddubs_epi16(_mm256_shuffle_epi32(yhi, 0x55), _mm256_load_si256(q + 5)));
            s0 = _mm256_add_epi16(s0, _mm256_maddubs_epi16(_mm256_shuffle_epi32(yhi, 0xAA), _mm256_load_si256(q + 6)));
            s1 = _mm256_add_epi16(s1, _mm256_maddubs_epi16(_mm256_shuffle_epi32(yhi, 0xFF), _mm256_load_si256(q + 7)));
            const __m256i s = _mm256_add_epi32(_mm256_madd_epi16(_mm256_add_epi16(s0, s1), ones), corr);
            const __m256 d = _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(y->d)));
            acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), d, acc[j]);
        }
    }
    for (int j = 0; j < 4; j++) _mm256_storeu_ps(out + (size_t)j * o_stride, acc[j]);
}

#if defined(__GNUC__) && (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)
#define LLM_Q4_0_VNNI 1

/* q4_0_8xN with AVX-VNNI (vpdpbusd): the same exact integer block sums in
 * one instruction per row (u8 x s8 products summed in fours into int32,
 * starting from -8 * the fours of y), then the same tree and the same float
 * chains, so the same bits. */
__attribute__((target("avx2,fma,f16c,avxvnni"), always_inline)) static inline void
q4_0_8xN_vnni(int64_t n, const char *w, size_t w_stride, const char *a, size_t a_stride, const int NA, float *out,
              size_t o_stride, const int PF) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    const __m256i eight = _mm256_set1_epi8(8), zero = _mm256_setzero_si256();
    const int64_t nb = n / LLM_QK32;
    for (int64_t b = 0; b < nb; b++) {
        __m256i q[8];
        uint16_t dh[8];
        if (PF) prefetch_next_group(w, w_stride, 8, b, nb);
        for (int r = 0; r < 8; r++) {
            const llm_block_q4_0 *x = (const llm_block_q4_0 *)(w + (size_t)r * w_stride) + b;
            const __m128i t = _mm_loadu_si128((const __m128i *)x->qs);
            q[r] = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0F));
            dh[r] = x->d;
        }
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)dh));
        for (int j = 0; j < NA; j++) {
            const llm_block_q8_0 *y = (const llm_block_q8_0 *)(a + (size_t)j * a_stride) + b;
            const __m256i qy = _mm256_loadu_si256((const __m256i *)y->qs);
            const __m256i m8 = _mm256_sub_epi32(zero, _mm256_dpbusd_avx_epi32(zero, eight, qy));
            __m256i p[8];
            for (int r = 0; r < 8; r++) p[r] = _mm256_dpbusd_avx_epi32(m8, q[r], qy);
            const __m256 d = _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(y->d)));
            acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_rows8(p)), d, acc[j]);
        }
    }
    for (int j = 0; j < NA; j++) _mm256_storeu_ps(out + (size_t)j * o_stride, acc[j]);
}

/* q4_0_dot8x4_packed with AVX-VNNI: vpdpbusd adds the four products
 * (y + 128)(q - 8) of a chunk straight into int32 lane r, starting from corr,
 * so each row's block sum is the same exact integer (four products of at
 * most 255 * 8 in magnitude: no overflow) without the vpmaddubsw / vpmaddwd
 * pair. Two chains per activation row (chunks 0..3, 4..7) hide vpdpbusd's
 * latency. Same float chain, same bits. */
__attribute__((target("avx2,fma,f16c,avxvnni"))) static void
q4_0_dot8x4_packed_vnni(int64_t n, const void *pk, const void *a, size_t a_stride, float *out, size_t o_stride) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    const __m256i bias = _mm256_set1_epi8((char)0x80);
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const char *P = (const char *)pk + (size_t)b * Q40_PK;
        const __m256i *q = (const __m256i *)P;
        const __m256i corr = _mm256_load_si256((const __m256i *)(P + 256));
        const __m256 dw = _mm256_load_ps((const float *)(P + 288));
        for (int j = 0; j < 4; j++) {
            const llm_block_q8_0 *y = (const llm_block_q8_0 *)((const char *)a + (size_t)j * a_stride) + b;
            const __m256i lo = _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)y->qs)), bias);
            const __m256i hi =
                _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(y->qs + 16))), bias);
            __m256i s0 = _mm256_dpbusd_avx_epi32(corr, _mm256_shuffle_epi32(lo, 0x00), _mm256_load_si256(q));
            __m256i s1 = _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), _mm256_shuffle_epi32(hi, 0x00), _mm256_load_si256(q + 4));
            s0 = _mm256_dpbusd_avx_epi32(s0, _mm256_shuffle_epi32(lo, 0x55), _mm256_load_si256(q + 1));
            s1 = _mm256_dpbusd_avx_epi32(s1, _mm256_shuffle_epi32(hi, 0x55), _mm256_load_si256(q + 5));
            s0 = _mm256_dpbusd_avx_epi32(s0, _mm256_shuffle_epi32(lo, 0xAA), _mm256_load_si256(q + 2));
            s1 = _mm256_dpbusd_avx_epi32(s1, _mm256_shuffle_epi32(hi, 0xAA), _mm256_load_si256(q + 6));
            s0 = _mm256_dpbusd_avx_epi32(s0, _mm256_shuffle_epi32(lo, 0xFF), _mm256_load_si256(q + 3));
            s1 = _mm256_dpbusd_avx_epi32(s1, _mm256_shuffle_epi32(hi, 0xFF), _mm256_load_si256(q + 7));
            const __m256 d = _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(y->d)));
            acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(s0, s1)), d, acc[j]);
        }
    }
    for (int j = 0; j < 4; j++) _mm256_storeu_ps(out + (size_t)j * o_stride, acc[j]);
}

/* --------------------------------------------- prepared weights -- */

/* A Q4_0 weight prepared at load (kernels.h prep): per group of 16 rows, per
 * pair of blocks 2p, 2p + 1 (Q40R_PAIR bytes, 64-byte aligned): the nibbles
 * of block 2p then of 2p + 1, each [4 dwords k][16 rows r][4 bytes] (dword k
 * of row r's 16 packed bytes: low nibbles are elements 4k .. 4k + 3, high
 * ones 16 + 4k .. 19 + 4k), then the 16 rows' fp16 scales of block 2p, then
 * of 2p + 1. The same 18 bytes per row and block as the file (an odd last
 * block pads its pair), so a decode reads no more than it did; what the
 * tiles of q4_0_pack8u cost per matmul (a transpose per group of 8 rows) is
 * paid once, and the product unpacks the nibbles with two ands and a shift
 * per 64 bytes. */
#define Q40R_PAIR LLM_Q40R_PAIR /* cpu/kernels/x86_512.h */
/* How far ahead a streaming pass (stream != 0: decode, batched decode)
 * prefetches, in bytes of the copy: with 8 rows per block the hardware's own
 * prefetch falls behind (tuned: see docs/PERFORMANCE.md). */
#define Q40R_PF LLM_Q40R_PF

static size_t q4_0r_group_bytes(int64_t K) { return (size_t)((K / LLM_QK32 + 1) / 2) * Q40R_PAIR; }

static void q4_0r_repack(int64_t K, const void *w, size_t w_stride, void *grp) {
    const int64_t nb = K / LLM_QK32;
    char *G = grp;
    memset(G, 0, q4_0r_group_bytes(K));
    for (int64_t b = 0; b < nb; b++) {
        char *T = G + (size_t)(b / 2) * Q40R_PAIR, *Q = T + (b & 1) * 256, *D = T + 512 + (b & 1) * 32;
        for (int r = 0; r < 16; r++) {
            const llm_block_q4_0 *x = (const llm_block_q4_0 *)((const char *)w + (size_t)r * w_stride) + b;
            r16_put(Q, x->qs, 4, r);
            memcpy(D + 2 * r, &x->d, 2);
        }
    }
}

static void q4_0r_unpack_row(int64_t K, const void *grp, int r, void *dst) {
    for (int64_t b = 0; b < K / LLM_QK32; b++) {
        const char *T = (const char *)grp + (size_t)(b / 2) * Q40R_PAIR, *Q = T + (b & 1) * 256, *D = T + 512 + (b & 1) * 32;
        llm_block_q4_0 *x = (llm_block_q4_0 *)dst + b;
        r16_get(x->qs, Q, 4, r);
        memcpy(&x->d, D + 2 * r, 2);
    }
}

/* ys[b] = -8 * (sum of the 32 int8 of activation block b): q4_0r_dot's aux. */
static void q4_0r_aux(int64_t K, const void *a, int32_t *ys) {
    const llm_block_q8_0 *y = a;
    for (int64_t b = 0; b < K / LLM_QK32; b++) {
        int32_t sum = 0;
        for (int t = 0; t < 32; t++) sum += y[b].qs[t];
        ys[b] = -8 * sum;
    }
}

/* The product on a prepared group with 256-bit registers (CPUs without
 * AVX-512 VNNI), in two passes of 8 rows (the two 32-byte halves of each
 * 64-byte chunk vector): lane r of int32 is row 8h + r. With AVX-VNNI,
 * vpdpbusd as above; with AVX2 alone, vpmaddubsw of the unsigned q (0..15)
 * by y (-127..127: the quantizer's range) puts two products in each int16
 * (at most 2 * 15 * 127 = 3810), the 8 chunks summed in int16 stay within
 * 30480, and vpmaddwd by ones makes the block's sum q y per row; plus the
 * aux -8 sum(y), the exact integer sum (q - 8) y of q4_0_8xN. Same float
 * chain, same bits. */
#define Q4_0R_YMM(NAME, ATTR, VNNI, DP)                                                                          \
    ATTR static inline __attribute__((always_inline)) void NAME##N(int64_t K, const char *G, const char *a,       \
                                                                 size_t a_stride, const int32_t *ys,              \
                                                                 size_t ys_stride, float *out, size_t o_stride,    \
                                                                 const int NA, const int PF) {                    \
        const __m256i m4 = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);                                 \
        for (int h = 0; h < 2; h++) {                                                                           \
            __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()}; \
            for (int64_t b = 0; b < K / LLM_QK32; b++) {                                                        \
                const char *T = G + (size_t)(b / 2) * Q40R_PAIR, *Q = T + (b & 1) * 256 + 32 * h;               \
                if (PF && h == 0 && (b & 1) == 0) {                                                             \
                    for (int l = 0; l < Q40R_PAIR; l += 64) _mm_prefetch(T + Q40R_PF + l, _MM_HINT_T0);        \
                }                                                                                               \
                __m256i q[8];                                                                                   \
                for (int k = 0; k < 4; k++) {                                                                   \
                    const __m256i w = _mm256_load_si256((const __m256i *)(Q + 64 * k));                        \
                    q[k] = _mm256_and_si256(w, m4);                                                             \
                    q[k + 4] = _mm256_and_si256(_mm256_srli_epi16(w, 4), m4);                                   \
                }                                                                                               \
                const __m256 dw =                                                                               \
                    _mm256_cvtph_ps(_mm_load_si128((const __m128i *)(T + 512 + (b & 1) * 32 + 16 * h)));       \
                for (int j = 0; j < NA; j++) {                                                                  \
                    const llm_block_q8_0 *y = (const llm_block_q8_0 *)(a + (size_t)j * a_stride) + b;          \
                    const __m256i c = _mm256_set1_epi32(ys[(size_t)j * ys_stride + (size_t)b]);                 \
                    __m256i sum;                                                                                \
                    if (VNNI) {                                                                                 \
                        __m256i s0 = c, s1 = _mm256_setzero_si256();                                            \
                        for (int k = 0; k < 4; k++) {                                                           \
                            s0 = DP(s0, q[k], ymm_bcast4(y->qs + 4 * k));                                      \
                            s1 = DP(s1, q[k + 4], ymm_bcast4(y->qs + 16 + 4 * k));                             \
                        }                                                                                       \
                        sum = _mm256_add_epi32(s0, s1);                                                         \
                    } else {                                                                                    \
                        __m256i s16 = _mm256_maddubs_epi16(q[0], ymm_bcast4(y->qs));                             \
                        for (int k = 1; k < 8; k++) {                                                           \
                            const int8_t *yq = y->qs + (k < 4 ? 4 * k : 16 + 4 * (k - 4));                      \
                            s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(q[k], ymm_bcast4(yq)));             \
                        }                                                                                       \
                        sum = _mm256_add_epi32(_mm256_madd_epi16(s16, ones), c);                                \
                    }                                                                                           \
                    const __m256 d = _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(y->d)));                        \
                    acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), d, acc[j]);                               \
                }                                                                                               \
            }                                                                                                   \
            for (int j = 0; j < NA; j++) _mm256_storeu_ps(out + (size_t)j * o_stride + 8 * h, acc[j]);         \
        }                                                                                                       \
    }                                                                                                           \
    ATTR static void NAME(int64_t K, const void *grp, const void *a, size_t a_stride, const int32_t *ys,         \
                          size_t ys_stride, int n_a, float *out, size_t o_stride, int flags) {                   \
        const char *G = grp, *A = a;                                                                            \
        LLM_PREP_DISPATCH4(n_a, flags, NAME##N, K, G, A, a_stride, ys, ys_stride, out, o_stride)                 \
    }

#define Q4_0R_NO_DP(acc, u, s) (acc) /* the AVX2 form takes the other branch */
#define Q4_0R_DP_VNNI(acc, u, s) _mm256_dpbusd_avx_epi32((acc), (u), (s))
Q4_0R_YMM(q4_0r_dot_avx2, , 0, Q4_0R_NO_DP)
Q4_0R_YMM(q4_0r_dot_avxvnni, __attribute__((target("avx2,fma,f16c,avxvnni"))), 1, Q4_0R_DP_VNNI)

#define Q4_0_VNNI_ATTR __attribute__((target("avx2,fma,f16c,avxvnni")))
Q4_0_DOT8(dot8_q4_0_q8_0_rows8_vnni, Q4_0_VNNI_ATTR, q4_0_8xN_vnni, 0)
Q4_0_DOT8(dot8s_q4_0_q8_0_rows8_vnni, Q4_0_VNNI_ATTR, q4_0_8xN_vnni, 1)

#endif

static llm__vec_dot8_fn dot8_variant(int vnni, unsigned cpu) {
    if (!vnni) {
        return dot8_q4_0_q8_0_rows8;
    }
#ifdef LLM_Q4_0_VNNI
    return (cpu & LLM__CPU_AVX_VNNI) ? dot8_q4_0_q8_0_rows8_vnni : NULL;
#else
    (void)cpu;
    return NULL;
#endif
}

llm__vec_dot8_fn llm__q4_0_dot8_variant(int vnni) { return dot8_variant(vnni, llm__cpu_features()); }

static int packed_pair(int which, struct llm__dot_pair *pr, unsigned cpu) {
    memset(pr, 0, sizeof *pr);
    pr->pack8 = q4_0_pack8;
    pr->pack8_bytes = q4_0_pack8_bytes;
    switch (which) {
    case 0: pr->dot8x4_packed = q4_0_dot8x4_packed; return 1;
#ifdef LLM_Q4_0_VNNI
    case 1: pr->dot8x4_packed = (cpu & LLM__CPU_AVX_VNNI) ? q4_0_dot8x4_packed_vnni : NULL; return pr->dot8x4_packed != NULL;
    case 2:
        if (!(cpu & LLM__CPU_AVX512_VNNI)) return 0;
        pr->pack8 = q4_0_pack8u;
        pr->dot8x4_packed = llm__q4_0u_dot8x4_x86_512;
        pr->dot16x4_packed = llm__q4_0u_dot16x4_x86_512;
        return 1;
#endif
    default: (void)cpu; return 0;
    }
}

int llm__q4_0_packed_pair(int which, struct llm__dot_pair *pr) { return packed_pair(which, pr, llm__cpu_features()); }

static int prep_variant(int which, struct llm__prep_kernels *pk, unsigned cpu);

void llm__cpu_kernels_q4_0_x86(llm__cpu_kernels *k, unsigned cpu) {
    struct llm__dot_pair *pr = &k->rows8[LLM_DTYPE_Q4_0];
    pr->dot = dot_q4_0_q8_0_rows8;
    pr->dot4 = dot4_q4_0_q8_0_rows8;
    llm__vec_dot8_fn vnni = dot8_variant(1, cpu);
    pr->dot8 = vnni ? vnni : dot8_q4_0_q8_0_rows8;
#ifdef LLM_Q4_0_VNNI
    pr->dot8_stream = vnni ? dot8s_q4_0_q8_0_rows8_vnni : dot8s_q4_0_q8_0_rows8;
#else
    pr->dot8_stream = dot8s_q4_0_q8_0_rows8;
#endif
    /* Packed tiles for 8 or more activation rows, whatever the dot8: the
     * widest packed product beats every dot8 (the AVX-512 one with 16
     * weight rows per register most; see docs/PERFORMANCE.md). */
    struct llm__dot_pair packed;
    for (int v = 2; v >= 0; v--) {
        if (packed_pair(v, &packed, cpu)) break;
    }
    pr->pack8 = packed.pack8;
    pr->pack8_bytes = packed.pack8_bytes;
    pr->dot8x4_packed = packed.dot8x4_packed;
    pr->dot16x4_packed = packed.dot16x4_packed;
    /* The prepared layout's best product here (kernels.h prep). */
    for (int v = 2; v >= 0 && !prep_variant(v, &k->prep[LLM_DTYPE_Q4_0], cpu); v--) {
    }
}

static int prep_variant(int which, struct llm__prep_kernels *pk, unsigned cpu) {
    memset(pk, 0, sizeof *pk);
#ifdef LLM_Q4_0_VNNI
    void (*dot)(int64_t, const void *, const void *, size_t, const int32_t *, size_t, int, float *, size_t, int) =
        which == 0   ? q4_0r_dot_avx2
        : which == 1 ? ((cpu & LLM__CPU_AVX_VNNI) ? q4_0r_dot_avxvnni : NULL)
        : which == 2 ? ((cpu & LLM__CPU_AVX512_VNNI) ? llm__q4_0r_dot_x86_512 : NULL)
                     : NULL;
    if (!dot) return 0;
    *pk = (struct llm__prep_kernels){
        .group_bytes = q4_0r_group_bytes,
        .repack = q4_0r_repack,
        .dot = dot,
        .max_a = which == 2 ? 8 : 4, /* the 256-bit forms keep 4 rows (their registers) */
        .unpack_row = q4_0r_unpack_row,
        .aux_ints = 1,
        .aux = q4_0r_aux};
    return 1;
#else
    (void)which;
    (void)cpu;
    return 0;
#endif
}

int llm__q4_0_prep_variant(int which, struct llm__prep_kernels *pk) { return prep_variant(which, pk, llm__cpu_features()); }

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

void llm__cpu_kernels_q4_0_x86(llm__cpu_kernels *k, unsigned cpu) {
    (void)k;
    (void)cpu;
}
llm__vec_dot8_fn llm__q4_0_dot8_variant(int vnni) {
    (void)vnni;
    return NULL;
}
int llm__q4_0_packed_pair(int which, struct llm__dot_pair *pr) {
    (void)which;
    memset(pr, 0, sizeof *pr);
    return 0;
}
int llm__q4_0_prep_variant(int which, struct llm__prep_kernels *pk) {
    (void)which;
    memset(pk, 0, sizeof *pk);
    return 0;
}

#endif
