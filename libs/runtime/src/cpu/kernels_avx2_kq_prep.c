/*
 * cpu/kernels_avx2_kq_prep.c -- the Q4_K, Q6_K, Q5_K, Q3_K and Q2_K weights
 * prepared at load (kernels.h prep, runtime.h llm_backend_prepare_weight):
 * their 16-row layouts, and the AVX-512 VNNI products on them that keep the
 * orders of the matmul without the copy (Q4_K: the rows8 pair's gemm /
 * gemv; the others: vec_dot's below 8 activation rows, llama.cpp's tiled
 * one from 8); on CPUs without AVX-512 VNNI, Q4_K alone, with 256-bit
 * products (AVX-VNNI or AVX2). From PREP_TILE_ROWS activation rows (matmul_cpu.c) the
 * matmul decodes a Q6_K / Q5_K / Q3_K / Q2_K group once into the packed
 * tiles of cpu/kq_tile.h instead (pack16 here, the products in
 * kernels_avx2_kq_tile.c). The dot8 kernels of the unprepared weights are
 * in kernels_avx2_kq8.c.
 *
 * Compiled with -mavx2 -mfma -mf16c (sources.cmake), installed by
 * llm__cpu_kernels_avx2() once the CPU has been checked.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__GNUC__) && \
    (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#include "cpu/avx2_common.h"
#include "dtype/blocks.h"
#include "cpu/kq_tile.h"

#define KQ8_TARGET_ZMM __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))

/* A 16-row vector (lane r of int32: row r) as the same 32 bytes of two
 * 8-row packed tiles (cpu/kq_tile.h): rows 0..7 at P0 + off, 8..15 at P1 +
 * off. */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) void kr_tile_put(char *P0, char *P1, size_t off, __m512i v) {
    _mm256_store_si256((__m256i *)(P0 + off), _mm512_castsi512_si256(v));
    _mm256_store_si256((__m256i *)(P1 + off), _mm512_extracti64x4_epi64(v, 1));
}

KQ8_TARGET_ZMM static inline __attribute__((always_inline)) void kr_tile_putf(char *P0, char *P1, size_t off, __m512 v) {
    kr_tile_put(P0, P1, off, _mm512_castps_si512(v));
}

/* A prepared layout as a table (kernels.h prep): per super-block of 16
 * rows, each field of the file's block as [n pieces c][16 rows][w bytes]
 * at dst (piece c of row r: bytes src + w c .. of its block), so an fp16 is
 * n 1, w 2; the bytes of the group's super-block not written are zero. */
struct kr_field {
    uint16_t src, dst; /* byte offsets in the file's block and the group's super-block */
    uint8_t n, w;      /* n 0: no field; w 2 or 4 */
};
struct kr_layout {
    size_t block, sb; /* bytes per row's block, per group's super-block */
    struct kr_field f[5];
};

/* n pieces of w (2 or 4) bytes from src (stride ss) to dst (stride ds), in
 * fixed-size copies (a memcpy of a run-time size per piece is a call). */
static inline void kr_copy(char *dst, size_t ds, const char *src, size_t ss, int n, int w) {
    if (w == 4) {
        for (int c = 0; c < n; c++) memcpy(dst + (size_t)c * ds, src + (size_t)c * ss, 4);
    } else {
        for (int c = 0; c < n; c++) memcpy(dst + (size_t)c * ds, src + (size_t)c * ss, 2);
    }
}

static void kr_repack(const struct kr_layout *L, int64_t K, const void *w, size_t w_stride, void *grp) {
    for (int64_t b = 0; b < K / LLM_QK_K; b++) {
        char *T = (char *)grp + (size_t)b * L->sb;
        memset(T, 0, L->sb);
        for (int r = 0; r < 16; r++) {
            const char *x = (const char *)w + (size_t)r * w_stride + (size_t)b * L->block;
            for (int i = 0; i < 5 && L->f[i].n; i++) {
                const struct kr_field *f = &L->f[i];
                kr_copy(T + f->dst + r * f->w, 16 * f->w, x + f->src, f->w, f->n, f->w);
            }
        }
    }
}

static void kr_unpack_row(const struct kr_layout *L, int64_t K, const void *grp, int r, void *dst) {
    for (int64_t b = 0; b < K / LLM_QK_K; b++) {
        const char *T = (const char *)grp + (size_t)b * L->sb;
        char *x = (char *)dst + (size_t)b * L->block;
        for (int i = 0; i < 5 && L->f[i].n; i++) {
            const struct kr_field *f = &L->f[i];
            kr_copy(x + f->src, f->w, T + f->dst + r * f->w, 16 * f->w, f->n, f->w);
        }
    }
}

/* All 16 rows of a group back in the file's bytes (row r at dst + r *
 * stride): kr_unpack_row's bytes, with the fields of 4-byte pieces in
 * fours moved by 4 x 4 dword transposes (16 bytes per load and store). */
static void kr_unpack16(const struct kr_layout *L, int64_t K, const void *grp, void *dst, size_t stride) {
    for (int64_t b = 0; b < K / LLM_QK_K; b++) {
        const char *T = (const char *)grp + (size_t)b * L->sb;
        char *X = (char *)dst + (size_t)b * L->block;
        for (int i = 0; i < 5 && L->f[i].n; i++) {
            const struct kr_field *f = &L->f[i];
            if (f->w != 4 || f->n % 4 != 0) {
                for (int r = 0; r < 16; r++) kr_copy(X + (size_t)r * stride + f->src, f->w, T + f->dst + r * f->w, 16 * f->w, f->n, f->w);
                continue;
            }
            for (int c = 0; c < f->n; c += 4) {
                const char *P = T + f->dst + (size_t)c * 64; /* pieces c .. c + 3, [16 rows][4 bytes] each */
                for (int s = 0; s < 16; s += 4) {
                    const __m128i a0 = _mm_loadu_si128((const __m128i *)(P + 4 * s));
                    const __m128i a1 = _mm_loadu_si128((const __m128i *)(P + 64 + 4 * s));
                    const __m128i a2 = _mm_loadu_si128((const __m128i *)(P + 128 + 4 * s));
                    const __m128i a3 = _mm_loadu_si128((const __m128i *)(P + 192 + 4 * s));
                    const __m128i t0 = _mm_unpacklo_epi32(a0, a1), t1 = _mm_unpackhi_epi32(a0, a1);
                    const __m128i t2 = _mm_unpacklo_epi32(a2, a3), t3 = _mm_unpackhi_epi32(a2, a3);
                    char *R = X + (size_t)s * stride + f->src + 4 * (size_t)c;
                    _mm_storeu_si128((__m128i *)R, _mm_unpacklo_epi64(t0, t2));
                    _mm_storeu_si128((__m128i *)(R + stride), _mm_unpackhi_epi64(t0, t2));
                    _mm_storeu_si128((__m128i *)(R + 2 * stride), _mm_unpacklo_epi64(t1, t3));
                    _mm_storeu_si128((__m128i *)(R + 3 * stride), _mm_unpackhi_epi64(t1, t3));
                }
            }
        }
    }
}

/* NAME_group_bytes, NAME_repack and NAME_unpack_row of a layout table. */
#define KR_LAYOUT_FNS(NAME, L)                                                                                  \
    static size_t NAME##_group_bytes(int64_t K) { return (size_t)(K / LLM_QK_K) * (L).sb; }                     \
    static void NAME##_repack(int64_t K, const void *w, size_t w_stride, void *grp) {                           \
        kr_repack(&(L), K, w, w_stride, grp);                                                                   \
    }                                                                                                           \
    static void NAME##_unpack_row(int64_t K, const void *grp, int r, void *dst) { kr_unpack_row(&(L), K, grp, r, dst); }

/* ---------------------------------------------------------------- Q4_K -- */

/* A Q4_K weight prepared at load (kernels.h prep): per group of 16 rows, per
 * super-block (Q4KR_SB bytes, 64-byte aligned):
 *   qs [4 pairs p][8 chunks k][16 rows][4 bytes]: bytes 32p + 4k .. + 3 of
 *      row r's qs (low nibbles: sub-block 2p, high: 2p + 1), still packed;
 *   scales [3 dwords][16 rows][4 bytes]: row r's 12 packed scale bytes;
 *   d, dmin [16 rows] fp16 each.
 * 144 bytes per row and super-block, as the file. The product decodes the
 * 6-bit scales and mins of 16 rows at once (q4_k_scales_mins' dword
 * formulas, lane r on row r's dwords, then a byte shuffle per sub-block:
 * about 22 instructions per super-block for all the activation rows; a
 * layout with them decoded, 4 bytes per row more, left the 1B Q4_K_M's
 * peak RSS 7 MiB above its file + KV + 64 MiB). It is q4k_dotx4_zmm's
 * product on one 64-byte load per chunk, so four activation rows give
 * llama.cpp's gemm order; fewer
 * take its gemv order (GEMV: the four pairs' exact sums added first, then
 * one fma per super-block for the scales and one for the mins, as
 * llm__q4_k_dot_repack_gemv), which is what the matmul runs for the last
 * n % 4 rows. */
#define Q4KR_SB 2304
#define Q4KR_SC 2048
#define Q4KR_D 2240
/* The prefetch distance of a streaming pass (as Q40R_PF, kernels_avx2_q4_0.c). */
#define Q4KR_PF 9472

static const struct kr_layout q4kr_layout = {
    sizeof(llm_block_q4_k),
    Q4KR_SB,
    {{offsetof(llm_block_q4_k, qs), 0, 32, 4},
     {offsetof(llm_block_q4_k, scales), Q4KR_SC, 3, 4},
     {offsetof(llm_block_q4_k, d), Q4KR_D, 1, 2},
     {offsetof(llm_block_q4_k, dmin), Q4KR_D + 32, 1, 2}}};
KR_LAYOUT_FNS(q4kr, q4kr_layout)
static void q4kr_unpack16(int64_t K, const void *grp, void *dst, size_t stride) {
    kr_unpack16(&q4kr_layout, K, grp, dst, stride);
}

/* vpshufb patterns, per 128-bit lane: byte t of each dword alone in the
 * dword (zero-extended), or bytes t, t + 1 as two zero-extended int16. */
static inline __attribute__((always_inline)) __m128i q4kr_pick1(int t) {
    const int z = 0x80808000;
    return _mm_set_epi32(z | (12 + t), z | (8 + t), z | (4 + t), z | t);
}
static inline __attribute__((always_inline)) __m128i q4kr_pick2(int t) {
    const int z = (int)0x80008000;
    return _mm_set_epi32(z | ((13 + t) << 16) | (12 + t), z | ((9 + t) << 16) | (8 + t), z | ((5 + t) << 16) | (4 + t),
                         z | ((1 + t) << 16) | t);
}

/* Per row (dword lane): sc[0..3], sc[4..7], mn[0..3], mn[4..7] as bytes,
 * from the [3 dwords][16 rows] packed 6-bit scales and mins at S
 * (q4_k_scales_mins' dword formulas; Q4_K's and Q5_K's copies). */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) void kr_scales_mins(const char *S, __m512i scb[2],
                                                                                 __m512i mnb[2]) {
    const __m512i W0 = _mm512_load_si512((const void *)S);
    const __m512i W1 = _mm512_load_si512((const void *)(S + 64));
    const __m512i W2 = _mm512_load_si512((const void *)(S + 128));
    const __m512i m4 = _mm512_set1_epi8(0x0F), m6 = _mm512_set1_epi8(0x3F), m2 = _mm512_set1_epi8(0x03);
    scb[0] = _mm512_and_si512(W0, m6);
    mnb[0] = _mm512_and_si512(W1, m6);
    scb[1] = _mm512_or_si512(_mm512_and_si512(W2, m4), _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(W0, 6), m2), 4));
    mnb[1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(W2, 4), m4),
                             _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(W1, 6), m2), 4));
}

/* kr_scales_mins on 8 rows: the 32-byte half h of each [16 rows] dword row. */
static inline __attribute__((always_inline)) void kr_scales_mins8(const char *S, __m256i scb[2], __m256i mnb[2]) {
    const __m256i W0 = _mm256_load_si256((const __m256i *)S);
    const __m256i W1 = _mm256_load_si256((const __m256i *)(S + 64));
    const __m256i W2 = _mm256_load_si256((const __m256i *)(S + 128));
    const __m256i m4 = _mm256_set1_epi8(0x0F), m6 = _mm256_set1_epi8(0x3F), m2 = _mm256_set1_epi8(0x03);
    scb[0] = _mm256_and_si256(W0, m6);
    mnb[0] = _mm256_and_si256(W1, m6);
    scb[1] = _mm256_or_si256(_mm256_and_si256(W2, m4), _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(W0, 6), m2), 4));
    mnb[1] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(W2, 4), m4),
                             _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(W1, 6), m2), 4));
}

KQ8_TARGET_ZMM static inline __attribute__((always_inline)) void
q4kr_dotN(int64_t n, const char *G, const char *a, size_t a_stride, float *out, size_t o_stride, const int NA,
          const int PF) {
    const int GEMV = NA < 4;
    __m512 acc[4], accm[4];
    for (int j = 0; j < 4; j++) acc[j] = accm[j] = _mm512_setzero_ps();
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const char *T = G + (size_t)b * Q4KR_SB;
        if (PF) {
            for (int l = 0; l < Q4KR_SB; l += 64) _mm_prefetch(T + Q4KR_PF + l, _MM_HINT_T0);
        }
        const __m512 dw = _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(T + Q4KR_D)));
        const __m512 mw = _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(T + Q4KR_D + 32)));
        __m512i scb[2], mnb[2];
        kr_scales_mins(T + Q4KR_SC, scb, mnb);
        const llm_block_q8_k *y[4];
        __m512 dd[4], dm[4];
        __m512i tq[4], tm[4]; /* GEMV: the super-block's exact sums */
        int32_t B[4][4];
        for (int j = 0; j < NA; j++) {
            y[j] = (const llm_block_q8_k *)(a + (size_t)j * a_stride) + b;
            const __m512 dy = _mm512_set1_ps(y[j]->d);
            dd[j] = _mm512_mul_ps(dw, dy);
            dm[j] = _mm512_mul_ps(mw, dy);
            const __m256i bs = _mm256_loadu_si256((const __m256i *)y[j]->bsums);
            _mm_storeu_si128((__m128i *)B[j], _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));
            tq[j] = tm[j] = _mm512_setzero_si512();
        }
        for (int p = 0; p < 4; p++) {
            __m512i slo[4], shi[4];
            for (int j = 0; j < NA; j++) slo[j] = shi[j] = _mm512_setzero_si512();
            for (int k = 0; k < 8; k++) {
                const __m512i q = _mm512_load_si512((const void *)(T + (size_t)(p * 8 + k) * 64));
                const __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
                for (int j = 0; j < NA; j++) {
                    const int8_t *yq = y[j]->qs + 64 * p + 4 * k;
                    slo[j] = _mm512_dpbusd_epi32(slo[j], lo, zmm_bcast4(yq));
                    shi[j] = _mm512_dpbusd_epi32(shi[j], hi, zmm_bcast4(yq + 32));
                }
            }
            /* byte t of each dword to its int32 (t = 2p, 2p + 1 mod 4), bytes 2p', 2p' + 1 to its int16 pair */
            const int t0 = (2 * p) & 3;
            const __m512i sc0 = _mm512_shuffle_epi8(scb[p >> 1], _mm512_broadcast_i32x4(q4kr_pick1(t0)));
            const __m512i sc1 = _mm512_shuffle_epi8(scb[p >> 1], _mm512_broadcast_i32x4(q4kr_pick1(t0 + 1)));
            const __m512i mnp = _mm512_shuffle_epi8(mnb[p >> 1], _mm512_broadcast_i32x4(q4kr_pick2(t0)));
            for (int j = 0; j < NA; j++) {
                const __m512i sq = _mm512_add_epi32(_mm512_mullo_epi32(slo[j], sc0), _mm512_mullo_epi32(shi[j], sc1));
                const __m512i mq = _mm512_madd_epi16(mnp, _mm512_set1_epi32(B[j][p]));
                if (GEMV) {
                    tq[j] = _mm512_add_epi32(tq[j], sq);
                    tm[j] = _mm512_add_epi32(tm[j], mq);
                } else {
                    acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sq), dd[j], acc[j]);
                    accm[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(mq), dm[j], accm[j]);
                }
            }
        }
        for (int j = 0; GEMV && j < NA; j++) {
            acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(tq[j]), dd[j], acc[j]);
            accm[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(tm[j]), dm[j], accm[j]);
        }
    }
    for (int j = 0; j < NA; j++) _mm512_storeu_ps(out + (size_t)j * o_stride, _mm512_sub_ps(acc[j], accm[j]));
}

KQ8_TARGET_ZMM static void q4kr_dot(int64_t K, const void *grp, const void *a, size_t a_stride, const int32_t *ys,
                                    size_t ys_stride, int n_a, float *out, size_t o_stride, int flags) {
    (void)ys;
    (void)ys_stride;
    const char *G = grp, *A = a;
    LLM_PREP_DISPATCH4(n_a, flags, q4kr_dotN, K, G, A, a_stride, out, o_stride)
}

/* The product on a prepared Q4_K group with 256-bit registers (CPUs
 * without AVX-512 VNNI), on the two 32-byte halves h of each 64-byte chunk
 * (rows 8h .. 8h + 7; one pass over both, or one per half, below): lane r
 * of int32 is row 8h + r, and the same exact integers and float chain
 * as q4kr_dotN, so the same bits. With AVX-VNNI, vpdpbusd sums each
 * sub-block's products per row and vpmulld scales them, as there; with
 * AVX2 alone, vpmaddubsw of the unsigned q (0..15) by y (-128..127) puts
 * two products in each int16 (|sum| <= 3840), the sub-block's 8 chunks
 * summed in int16 stay within 30720, and vpmaddwd by the scale in both
 * int16 of each dword scales and sums them in one step (exact). Up to 4
 * activation rows: 4 in llama.cpp's gemm order, fewer in its gemv order. */
/* Up to this many activation rows the 256-bit product takes both halves of
 * each chunk in one pass (decode); above, one pass per half (registers).
 * Single-thread 1B Q4_K_M decode, LLM_CPU_KERNELS capped on the Zen 5, t/s
 * (llm-bench -t 1 -p 0 -n 32): unprepared rows8 pair 30.0-31.5 (AVX-VNNI)
 * / 31.3-31.4 (AVX2), this copy 39.4-40.0 / 37.2-38.0. A big Q4_K mat-vec
 * (llm-bench-runtime -t 1 -N 1 -M 65536), GB/s: unprepared 22-24 either
 * way; one pass per half 31-32 / 28-29; one pass over both 35-36 / 31-32. */
#define Q4KR_YMM_ONEPASS 2
#define Q4KR_YMM(NAME, ATTR, VNNI)                                                                                  \
    ATTR static inline __attribute__((always_inline)) void NAME##H(int64_t n, const char *G, const char *a,         \
                                                                 size_t a_stride, float *out, size_t o_stride,     \
                                                                 const int NA, const int PF, const int H0,          \
                                                                 const int H1) {                                   \
        const int GEMV = NA < 4;                                                                                    \
        const __m256i m4 = _mm256_set1_epi8(0x0F);                                                                  \
        __m256 acc[2][4], accm[2][4];                                                                               \
        for (int h = H0; h < H1; h++)                                                                               \
            for (int j = 0; j < NA; j++) acc[h][j] = accm[h][j] = _mm256_setzero_ps();                              \
        for (int64_t b = 0; b < n / LLM_QK_K; b++) {                                                                \
            const char *T = G + (size_t)b * Q4KR_SB;                                                                \
            if (PF) {                                                                                               \
                for (int l = 0; l < Q4KR_SB; l += 64) _mm_prefetch(T + Q4KR_PF + l, _MM_HINT_T0);                   \
            }                                                                                                       \
            const llm_block_q8_k *y[4];                                                                             \
            int32_t B[4][4]; /* per pair p: the two sub-blocks' bsums as int16 */                                   \
            for (int j = 0; j < NA; j++) {                                                                          \
                y[j] = (const llm_block_q8_k *)(a + (size_t)j * a_stride) + b;                                     \
                const __m256i bs = _mm256_loadu_si256((const __m256i *)y[j]->bsums);                                \
                _mm_storeu_si128((__m128i *)B[j],                                                                   \
                                 _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));      \
            }                                                                                                       \
            for (int h = H0; h < H1; h++) {                                                                         \
                const __m256 dw = _mm256_cvtph_ps(_mm_load_si128((const __m128i *)(T + Q4KR_D + 16 * h)));          \
                const __m256 mw = _mm256_cvtph_ps(_mm_load_si128((const __m128i *)(T + Q4KR_D + 32 + 16 * h)));     \
                __m256i scb[2], mnb[2];                                                                             \
                kr_scales_mins8(T + Q4KR_SC + 32 * h, scb, mnb);                                                    \
                __m256 dd[4], dm[4];                                                                                \
                __m256i tq[4], tm[4];                                                                               \
                for (int j = 0; j < NA; j++) {                                                                      \
                    const __m256 dy = _mm256_set1_ps(y[j]->d);                                                      \
                    dd[j] = _mm256_mul_ps(dw, dy);                                                                  \
                    dm[j] = _mm256_mul_ps(mw, dy);                                                                  \
                    tq[j] = tm[j] = _mm256_setzero_si256();                                                         \
                }                                                                                                   \
                for (int p = 0; p < 4; p++) {                                                                       \
                    __m256i slo[4], shi[4];                                                                         \
                    for (int j = 0; j < NA; j++) slo[j] = shi[j] = _mm256_setzero_si256();                          \
                    for (int k = 0; k < 8; k++) {                                                                   \
                        const __m256i q =                                                                           \
                            _mm256_load_si256((const __m256i *)(T + (size_t)(p * 8 + k) * 64 + 32 * h));            \
                        const __m256i lo = _mm256_and_si256(q, m4);                                                 \
                        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);                           \
                        for (int j = 0; j < NA; j++) {                                                              \
                            const int8_t *yq = y[j]->qs + 64 * p + 4 * k;                                           \
                            if (VNNI) {                                                                             \
                                slo[j] = Q4KR_DP(slo[j], lo, ymm_bcast4(yq));                                       \
                                shi[j] = Q4KR_DP(shi[j], hi, ymm_bcast4(yq + 32));                                  \
                            } else {                                                                                \
                                slo[j] = _mm256_add_epi16(slo[j], _mm256_maddubs_epi16(lo, ymm_bcast4(yq)));        \
                                shi[j] = _mm256_add_epi16(shi[j], _mm256_maddubs_epi16(hi, ymm_bcast4(yq + 32)));   \
                            }                                                                                       \
                        }                                                                                           \
                    }                                                                                               \
                    const int t0 = (2 * p) & 3;                                                                     \
                    const __m256i sc0 = _mm256_shuffle_epi8(                                                        \
                        scb[p >> 1], _mm256_broadcastsi128_si256(VNNI ? q4kr_pick1(t0) : q4kr_pickd(t0)));          \
                    const __m256i sc1 = _mm256_shuffle_epi8(                                                        \
                        scb[p >> 1], _mm256_broadcastsi128_si256(VNNI ? q4kr_pick1(t0 + 1) : q4kr_pickd(t0 + 1)));  \
                    const __m256i mnp = _mm256_shuffle_epi8(mnb[p >> 1], _mm256_broadcastsi128_si256(q4kr_pick2(t0))); \
                    for (int j = 0; j < NA; j++) {                                                                  \
                        const __m256i sq =                                                                          \
                            VNNI ? _mm256_add_epi32(_mm256_mullo_epi32(slo[j], sc0), _mm256_mullo_epi32(shi[j], sc1)) \
                                 : _mm256_add_epi32(_mm256_madd_epi16(slo[j], sc0), _mm256_madd_epi16(shi[j], sc1));  \
                        const __m256i mq = _mm256_madd_epi16(mnp, _mm256_set1_epi32(B[j][p]));                      \
                        if (GEMV) {                                                                                 \
                            tq[j] = _mm256_add_epi32(tq[j], sq);                                                    \
                            tm[j] = _mm256_add_epi32(tm[j], mq);                                                    \
                        } else {                                                                                    \
                            acc[h][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sq), dd[j], acc[h][j]);                        \
                            accm[h][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mq), dm[j], accm[h][j]);                      \
                        }                                                                                           \
                    }                                                                                               \
                }                                                                                                   \
                for (int j = 0; GEMV && j < NA; j++) {                                                              \
                    acc[h][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(tq[j]), dd[j], acc[h][j]);                             \
                    accm[h][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(tm[j]), dm[j], accm[h][j]);                           \
                }                                                                                                   \
            }                                                                                                       \
        }                                                                                                           \
        for (int h = H0; h < H1; h++)                                                                               \
            for (int j = 0; j < NA; j++) {                                                                          \
                _mm256_storeu_ps(out + (size_t)j * o_stride + 8 * h, _mm256_sub_ps(acc[h][j], accm[h][j]));         \
            }                                                                                                       \
    }                                                                                                               \
    /* one pass over both halves for decode's 1 or 2 rows (their registers fit), else one per half */             \
    ATTR static inline __attribute__((always_inline)) void NAME##N(int64_t n, const char *G, const char *a,         \
                                                                 size_t a_stride, float *out, size_t o_stride,     \
                                                                 const int NA, const int PF) {                    \
        if (NA <= Q4KR_YMM_ONEPASS) {                                                                               \
            NAME##H(n, G, a, a_stride, out, o_stride, NA, PF, 0, 2);                                                \
        } else {                                                                                                    \
            NAME##H(n, G, a, a_stride, out, o_stride, NA, PF, 0, 1);                                                \
            NAME##H(n, G, a, a_stride, out, o_stride, NA, 0, 1, 2);                                                 \
        }                                                                                                           \
    }                                                                                                               \
    ATTR static void NAME(int64_t K, const void *grp, const void *a, size_t a_stride, const int32_t *ys,            \
                          size_t ys_stride, int n_a, float *out, size_t o_stride, int flags) {                      \
        (void)ys;                                                                                                   \
        (void)ys_stride;                                                                                            \
        const char *G = grp, *A = a;                                                                                \
        LLM_PREP_DISPATCH4(n_a, flags, NAME##N, K, G, A, a_stride, out, o_stride)                                   \
    }

/* per dword: byte t twice, each zero-extended to an int16 (a vpmaddwd
 * multiplier that scales both int16 of a dword by the same byte) */
static inline __attribute__((always_inline)) __m128i q4kr_pickd(int t) {
    const int z = (int)0x80008000;
    return _mm_set_epi32(z | ((12 + t) << 16) | (12 + t), z | ((8 + t) << 16) | (8 + t), z | ((4 + t) << 16) | (4 + t),
                         z | (t << 16) | t);
}

#define Q4KR_DP(acc, u, s) _mm256_dpbusd_avx_epi32((acc), (u), (s))
Q4KR_YMM(q4kr_dot_avx2, , 0)
Q4KR_YMM(q4kr_dot_avxvnni, __attribute__((target("avx2,fma,f16c,avxvnni"))), 1)
#undef Q4KR_DP

/* ---------------------------------------------------------------- Q6_K -- */

/* A Q6_K weight prepared at load (kernels.h prep): per group of 16 rows, per
 * super-block (Q6KR_SB bytes, 64-byte aligned):
 *   ql [2 halves h][16 i][16 rows][4 bytes]: bytes 64h + 4i .. + 3 of row
 *      r's ql (low nibbles: elements 128h + 4i .., high: 128h + 64 + 4i ..);
 *   qh [2 halves h][8 i][16 rows][4 bytes]: bytes 32h + 4i .. of row r's qh;
 *   sc [8 k][16 rows][2]: the int8 scales of sub-blocks 2k, 2k + 1;
 *   d  [16 rows] fp16; 32 bytes of padding.
 * 212 bytes per row and super-block against the file's 210. The matmul
 * without the copy has two orders: below 8 activation rows vec_dot's
 * (dot_q6_k_q8_k: per super-block 8 int32 lanes, lane k the scaled sums of
 * bytes 4k .. 4k + 3 of each 32-element group minus lane k's offset, then
 * acc_k = fma(d_y d_x, float(lane k), acc_k) and hsum8 at the end), from 8
 * llama.cpp's tiled one (the super-block's exact total S1 of those lanes,
 * r = d_x float(S1), acc = fma(r, d_y, acc)). The copy keeps the 8 lanes of
 * each row in 8 registers (lane r of register k: row r's lane k), each
 * chunk's four products summed by vpmaddubsw pairs (at most 2 * 63 * 128,
 * no saturation) and scaled into the int32 by vpdpwssd, as vec_dot's
 * vpmaddubsw / vpmaddwd do: the same exact integers, so either order's
 * float chain gives its bits. vec_dot's order needs 8 integer and 8 float
 * registers per activation row, so it takes one row per pass. */
#define Q6KR_SB 3392
#define Q6KR_QH 2048
#define Q6KR_SC 3072
#define Q6KR_D 3328
/* The prefetch distance of a streaming pass (as Q40R_PF, kernels_avx2_q4_0.c). */
#define Q6KR_PF 10176

static const struct kr_layout q6kr_layout = {
    sizeof(llm_block_q6_k),
    Q6KR_SB,
    {{offsetof(llm_block_q6_k, ql), 0, 32, 4},
     {offsetof(llm_block_q6_k, qh), Q6KR_QH, 16, 4},
     {offsetof(llm_block_q6_k, scales), Q6KR_SC, 8, 2},
     {offsetof(llm_block_q6_k, d), Q6KR_D, 1, 2}}};
KR_LAYOUT_FNS(q6kr, q6kr_layout)

/* One super-block's 8 lanes (vec_dot's, offsets taken off) of 16 rows for
 * NA activation rows y[j] into S[j][k] (LANES), or their sums per row into
 * S[j][0] (tiled: the lanes added as they come, exact). */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) void
q6kr_lanes(const char *T, const llm_block_q8_k *const *y, const int NA, const int LANES, __m512i S[8][8],
           __m512i M[8][1]) {
    (void)M; /* no mins */
    const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
    /* per dword: its low int16 twice, or its high one twice */
    const __m512i dup_lo = _mm512_broadcast_i32x4(_mm_set_epi32(0x0D0C0D0C, 0x09080908, 0x05040504, 0x01000100));
    const __m512i dup_hi = _mm512_broadcast_i32x4(_mm_set_epi32(0x0F0E0F0E, 0x0B0A0B0A, 0x07060706, 0x03020302));
    for (int j = 0; j < NA; j++)
        for (int k = 0; k < (LANES ? 8 : 1); k++) S[j][k] = _mm512_setzero_si512();
    for (int h = 0; h < 2; h++) {
        for (int g = 0; g < 4; g++) {
            /* sub-blocks 8h + 2g (chunks 0..3) and 8h + 2g + 1 (4..7): pair 4h + g */
            const __m512i P = _mm512_cvtepi8_epi16(_mm256_load_si256((const __m256i *)(T + Q6KR_SC + 32 * (4 * h + g))));
            const __m512i sc0 = _mm512_shuffle_epi8(P, dup_lo), sc1 = _mm512_shuffle_epi8(P, dup_hi);
            for (int i = 0; i < 8; i++) {
                const __m512i L = _mm512_load_si512((const void *)(T + (size_t)(h * 16 + (g & 1) * 8 + i) * 64));
                const __m512i H = _mm512_load_si512((const void *)(T + Q6KR_QH + (size_t)(h * 8 + i) * 64));
                const __m512i lo = g < 2 ? _mm512_and_si512(L, m4) : _mm512_and_si512(_mm512_srli_epi16(L, 4), m4);
                const __m512i hs = g == 0   ? _mm512_slli_epi16(H, 4)
                                   : g == 1 ? _mm512_slli_epi16(H, 2)
                                   : g == 2 ? H
                                            : _mm512_srli_epi16(H, 2);
                const __m512i q = _mm512_or_si512(lo, _mm512_and_si512(hs, m30));
                for (int j = 0; j < NA; j++) {
                    const __m512i p = _mm512_maddubs_epi16(q, zmm_bcast4(y[j]->qs + 128 * h + 32 * g + 4 * i));
                    const int k = LANES ? i : 0;
                    S[j][k] = _mm512_dpwssd_epi32(S[j][k], p, i < 4 ? sc0 : sc1);
                }
            }
        }
    }
    /* offsets: lane k -= 32 (bsums[2k] sc[2k] + bsums[2k + 1] sc[2k + 1]) */
    for (int k = 0; k < 8; k++) {
        const __m512i P = _mm512_cvtepi8_epi16(_mm256_load_si256((const __m256i *)(T + Q6KR_SC + 32 * k)));
        for (int j = 0; j < NA; j++) {
            const __m512i o = _mm512_dpwssd_epi32(_mm512_setzero_si512(), P, zmm_bcast4(y[j]->bsums + 2 * k));
            const int kk = LANES ? k : 0;
            S[j][kk] = _mm512_sub_epi32(S[j][kk], _mm512_slli_epi32(o, 5));
        }
    }
}

/* A prepared group as the two 8-row packed tiles of a prompt pass
 * (cpu/kq_tile.h, rows 0..7 at dst, 8..15 at dst + ts): the quants decoded
 * as q6kr_lanes decodes them, once per matmul instead of once per 8
 * activation rows. */
KQ8_TARGET_ZMM static void q6kr_pack16(int64_t K, const void *grp, void *dst, size_t ts) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
    const __m512i dup_lo = _mm512_broadcast_i32x4(_mm_set_epi32(0x0D0C0D0C, 0x09080908, 0x05040504, 0x01000100));
    const __m512i dup_hi = _mm512_broadcast_i32x4(_mm_set_epi32(0x0F0E0F0E, 0x0B0A0B0A, 0x07060706, 0x03020302));
    for (int64_t b = 0; b < K / LLM_QK_K; b++) {
        const char *T = (const char *)grp + (size_t)b * Q6KR_SB;
        char *P0 = (char *)dst + (size_t)b * KQT_PK, *P1 = P0 + ts;
        for (int l = 0; l < Q6KR_SB; l += 64) _mm_prefetch(T + Q6KR_PF + l, _MM_HINT_T0);
        for (int h = 0; h < 2; h++) {
            for (int g = 0; g < 4; g++) {
                for (int i = 0; i < 8; i++) {
                    const __m512i L = _mm512_load_si512((const void *)(T + (size_t)(h * 16 + (g & 1) * 8 + i) * 64));
                    const __m512i H = _mm512_load_si512((const void *)(T + Q6KR_QH + (size_t)(h * 8 + i) * 64));
                    const __m512i lo = g < 2 ? _mm512_and_si512(L, m4) : _mm512_and_si512(_mm512_srli_epi16(L, 4), m4);
                    const __m512i hs = g == 0   ? _mm512_slli_epi16(H, 4)
                                       : g == 1 ? _mm512_slli_epi16(H, 2)
                                       : g == 2 ? H
                                                : _mm512_srli_epi16(H, 2);
                    /* elements 128 h + 32 g + 4 i ..: chunk 32 h + 8 g + i */
                    kr_tile_put(P0, P1, (size_t)(32 * h + 8 * g + i) * 32, _mm512_or_si512(lo, _mm512_and_si512(hs, m30)));
                }
            }
        }
        for (int k = 0; k < 8; k++) {
            /* per row: the int16 scales of sub-blocks 2k, 2k + 1 */
            const __m512i P = _mm512_cvtepi8_epi16(_mm256_load_si256((const __m256i *)(T + Q6KR_SC + 32 * k)));
            kr_tile_put(P0, P1, KQT_SC + 64 * (size_t)k, _mm512_shuffle_epi8(P, dup_lo));
            kr_tile_put(P0, P1, KQT_SC + 64 * (size_t)k + 32, _mm512_shuffle_epi8(P, dup_hi));
            kr_tile_put(P0, P1, KQT_OFF + 32 * (size_t)k, _mm512_sub_epi16(_mm512_setzero_si512(), _mm512_slli_epi16(P, 5)));
        }
        kr_tile_putf(P0, P1, KQT_D, _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(T + Q6KR_D))));
        kr_tile_putf(P0, P1, KQT_DMIN, _mm512_setzero_ps());
    }
}

/* The product of a prepared K-quant group with NA activation rows in
 * either order, around the type's LANES_FN(T, y, NA, LANES, S, M) (one
 * super-block: vec_dot's 8 lanes per row in S[j][k], with mins in lanes
 * M[j][k] (ML 8) or one total per row (ML 1); or the exact totals in
 * S[j][0], M[j][0]). TILED: llama.cpp's tiled order, r
 * = d_x float(S1) [- dmin_x float(S2) in one rounding], acc = fma(r, d_y,
 * acc), all NA rows per super-block. Else vec_dot's, one row per pass: per
 * super-block acc_k = fma(d_y d_x, float(lane k), acc_k), hsum8 at the end;
 * MINS 1 (Q2_K) puts acc_k = fma(-d_y dmin_x, float(mins lane k), acc_k)
 * first, MINS 2 (Q5_K) keeps one sum per row, summs = fma(float(mins),
 * -d_y dmin_x, summs), added after the hsum8. SB: bytes per super-block,
 * PFD: prefetch distance (PF), DOFF: offset of the 16 rows' fp16 d (dmin
 * 32 bytes after it). */
#define KR_DOTN(TARGET, NAME, LANES_FN, SB, PFD, DOFF, MINS, ML)                                                \
    TARGET static inline __attribute__((always_inline)) void NAME(int64_t n, const char *G, const char *a,         \
                                                                  size_t a_stride, float *out, size_t o_stride,   \
                                                                  const int NA, const int TILED, const int PF) {  \
        const int64_t nb = n / LLM_QK_K;                                                                          \
        if (TILED) {                                                                                              \
            __m512 acc[8];                                                                                        \
            for (int j = 0; j < NA; j++) acc[j] = _mm512_setzero_ps();                                            \
            for (int64_t b = 0; b < nb; b++) {                                                                    \
                const char *T = G + (size_t)b * (SB);                                                             \
                if (PF) {                                                                                         \
                    for (int l = 0; l < (SB); l += 64) _mm_prefetch(T + (PFD) + l, _MM_HINT_T0);                  \
                }                                                                                                 \
                const llm_block_q8_k *y[8];                                                                       \
                for (int j = 0; j < NA; j++) y[j] = (const llm_block_q8_k *)(a + (size_t)j * a_stride) + b;       \
                __m512i S[8][8], M[8][ML];                                                                        \
                LANES_FN(T, y, NA, 0, S, M);                                                                      \
                const __m512 dw = _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(T + (DOFF))));              \
                for (int j = 0; j < NA; j++) {                                                                    \
                    __m512 r = _mm512_mul_ps(dw, _mm512_cvtepi32_ps(S[j][0]));                                    \
                    if (MINS) {                                                                                   \
                        const __m512 mw = _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(T + (DOFF) + 32))); \
                        r = _mm512_fnmadd_ps(mw, _mm512_cvtepi32_ps(M[j][0]), r);                                 \
                    }                                                                                             \
                    acc[j] = _mm512_fmadd_ps(r, _mm512_set1_ps(y[j]->d), acc[j]);                                 \
                }                                                                                                 \
            }                                                                                                     \
            for (int j = 0; j < NA; j++) _mm512_storeu_ps(out + (size_t)j * o_stride, acc[j]);                    \
            return;                                                                                               \
        }                                                                                                         \
        /* vec_dot's order, one activation row per pass */                                                        \
        for (int j = 0; j < NA; j++) {                                                                            \
            __m512 acc[8], summs = _mm512_setzero_ps();                                                           \
            for (int k = 0; k < 8; k++) acc[k] = _mm512_setzero_ps();                                             \
            for (int64_t b = 0; b < nb; b++) {                                                                    \
                const char *T = G + (size_t)b * (SB);                                                             \
                if (PF && j == 0) {                                                                               \
                    for (int l = 0; l < (SB); l += 64) _mm_prefetch(T + (PFD) + l, _MM_HINT_T0);                  \
                }                                                                                                 \
                const llm_block_q8_k *y[1] = {(const llm_block_q8_k *)(a + (size_t)j * a_stride) + b};            \
                __m512i S[8][8], M[8][ML];                                                                        \
                LANES_FN(T, y, 1, 1, S, M);                                                                       \
                const __m512 dw = _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(T + (DOFF))));              \
                if (MINS) {                                                                                       \
                    const __m512 mw = _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(T + (DOFF) + 32)));     \
                    const __m512 dm = _mm512_mul_ps(_mm512_set1_ps(-y[0]->d), mw);                                \
                    if (MINS == 1) {                                                                              \
                        for (int k = 0; k < 8; k++) {                                                             \
                            acc[k] = _mm512_fmadd_ps(dm, _mm512_cvtepi32_ps(M[0][k % (ML)]), acc[k]);             \
                        }                                                                                         \
                    } else {                                                                                      \
                        summs = _mm512_fmadd_ps(_mm512_cvtepi32_ps(M[0][0]), dm, summs);                          \
                    }                                                                                             \
                }                                                                                                 \
                const __m512 d = _mm512_mul_ps(_mm512_set1_ps(y[0]->d), dw);                                      \
                for (int k = 0; k < 8; k++) acc[k] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(S[0][k]), acc[k]);     \
            }                                                                                                     \
            /* hsum8 per row: s_l = v_l + v_(l + 4), then (s0 + s2) + (s1 + s3) */                                \
            const __m512 s0 = _mm512_add_ps(acc[0], acc[4]), s1 = _mm512_add_ps(acc[1], acc[5]);                  \
            const __m512 s2 = _mm512_add_ps(acc[2], acc[6]), s3 = _mm512_add_ps(acc[3], acc[7]);                  \
            __m512 h = _mm512_add_ps(_mm512_add_ps(s0, s2), _mm512_add_ps(s1, s3));                               \
            if (MINS == 2) h = _mm512_add_ps(h, summs);                                                           \
            _mm512_storeu_ps(out + (size_t)j * o_stride, h);                                                      \
        }                                                                                                         \
    }

/* A prepared dot with two orders (Q6_K, Q5_K, Q3_K, Q2_K): from 8 activation rows
 * (BATCH8) the tiled one, each q decoded once for up to 8 rows (the order is
 * per row); below, vec_dot's, one row per pass. DOTN(K, G, a, a_stride, out,
 * o_stride, NA, TILED, PF) with NA, TILED and PF constants. */
#define KR_TWO_ORDER_DOT(TARGET, NAME, DOTN)                                                                 \
    TARGET static void NAME(int64_t K, const void *grp, const void *a, size_t a_stride, const int32_t *ys,    \
                            size_t ys_stride, int n_a, float *out, size_t o_stride, int flags) {             \
        (void)ys;                                                                                           \
        (void)ys_stride;                                                                                    \
        const char *G = grp, *A = a;                                                                        \
        const int pf = (flags & LLM__PREP_STREAM) != 0;                                                     \
        if (flags & LLM__PREP_BATCH8) {                                                                     \
            switch (n_a) {                                                                                  \
            case 1: DOTN(K, G, A, a_stride, out, o_stride, 1, 1, 0); break;                                 \
            case 2: DOTN(K, G, A, a_stride, out, o_stride, 2, 1, 0); break;                                 \
            case 3: DOTN(K, G, A, a_stride, out, o_stride, 3, 1, 0); break;                                 \
            case 4: DOTN(K, G, A, a_stride, out, o_stride, 4, 1, 0); break;                                 \
            case 5: DOTN(K, G, A, a_stride, out, o_stride, 5, 1, 0); break;                                 \
            case 6: DOTN(K, G, A, a_stride, out, o_stride, 6, 1, 0); break;                                 \
            case 7: DOTN(K, G, A, a_stride, out, o_stride, 7, 1, 0); break;                                 \
            default:                                                                                        \
                if (pf) DOTN(K, G, A, a_stride, out, o_stride, 8, 1, 1);                                    \
                else DOTN(K, G, A, a_stride, out, o_stride, 8, 1, 0);                                       \
                break;                                                                                      \
            }                                                                                               \
            return;                                                                                         \
        }                                                                                                   \
        if (pf) DOTN(K, G, A, a_stride, out, o_stride, n_a < 8 ? n_a : 8, 0, 1);                            \
        else DOTN(K, G, A, a_stride, out, o_stride, n_a < 8 ? n_a : 8, 0, 0);                               \
    }

KR_DOTN(KQ8_TARGET_ZMM, q6kr_dotN, q6kr_lanes, Q6KR_SB, Q6KR_PF, Q6KR_D, 0, 1)
KR_TWO_ORDER_DOT(KQ8_TARGET_ZMM, q6kr_dot, q6kr_dotN)

/* ---------------------------------------------------------------- Q5_K -- */

/* A Q5_K weight prepared at load (kernels.h prep): per group of 16 rows, per
 * super-block (Q5KR_SB bytes, 64-byte aligned):
 *   qs [4 pairs p][8 chunks k][16 rows][4 bytes]: as Q4_K's (low nibbles:
 *      sub-block 2p, high: 2p + 1);
 *   qh [8 chunks k][16 rows][4 bytes]: bytes 4k .. 4k + 3 of row r's qh
 *      (bit s: the fifth bit of sub-block s's elements 4k .. 4k + 3);
 *   scales [3 dwords][16 rows][4 bytes], d and dmin [16 rows] fp16: as Q4_K.
 * 176 bytes per row and super-block, as the file. Without the copy the
 * matmul has two orders, which this product keeps: below 8 activation rows
 * vec_dot's (dot_q5_k_q8_k: 8 int32 lanes per row, lane k the scaled sums
 * of bytes 4k .. 4k + 3 of each sub-block, acc_k = fma(d_y d_x, float(lane
 * k), acc_k), the mins fused into one float per row, hsum8 + mins at the
 * end), from 8 llama.cpp's tiled one (llm__q5_k_dot_tiled: the exact totals
 * S1, S2 per super-block, r = d_x float(S1), r = r - dmin float(S2) in one
 * rounding, acc = fma(r, d_y, acc)). As Q6_K's copy: lane r of a register is
 * row r, each chunk's four products summed by vpmaddubsw pairs (at most 2 *
 * 31 * 128) and scaled into the int32 by vpdpwssd: vec_dot's integers, so
 * either order's float chain gives its bits; vec_dot's order keeps 8
 * registers per activation row and takes one row per pass. The fifth bits
 * reach bit 4 of each byte by a GFNI affine map (one instruction where two
 * shifts and masks took three: 1B Q5_K_M pp512 306 -> 331-340 t/s), so the
 * copy is made only on CPUs with GFNI too (AVX-512 VNNI without it, as
 * Cascade Lake: the file's bytes and the unprepared kernels). */
#define KQ5_TARGET_ZMM __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,gfni")))
#define Q5KR_SB 2816
#define Q5KR_QH 2048
#define Q5KR_SC 2560
#define Q5KR_D 2752
/* The prefetch distance of a streaming pass (as Q40R_PF, kernels_avx2_q4_0.c). */
#define Q5KR_PF 11264

static const struct kr_layout q5kr_layout = {
    sizeof(llm_block_q5_k),
    Q5KR_SB,
    {{offsetof(llm_block_q5_k, qs), 0, 32, 4},
     {offsetof(llm_block_q5_k, qh), Q5KR_QH, 8, 4},
     {offsetof(llm_block_q5_k, scales), Q5KR_SC, 3, 4},
     {offsetof(llm_block_q5_k, d), Q5KR_D, 1, 2},
     {offsetof(llm_block_q5_k, dmin), Q5KR_D + 32, 1, 2}}};
KR_LAYOUT_FNS(q5kr, q5kr_layout)

/* vpshufb pattern, per 128-bit lane: byte t of each dword as its two int16
 * (zero-extended), the scale vpdpwssd applies to both of a chunk's pairs. */
static inline __attribute__((always_inline)) __m128i q5kr_pick11(int t) {
    const int z = (int)0x80008000;
    return _mm_set_epi32(z | ((12 + t) << 16) | (12 + t), z | ((8 + t) << 16) | (8 + t), z | ((4 + t) << 16) | (4 + t),
                         z | (t << 16) | t);
}

/* Bit s of each byte of h at bit 4, the others zero: one GF(2) affine map
 * per byte (matrix row of output bit 4, byte 3 of the qword: 1 << s). */
KQ5_TARGET_ZMM static inline __attribute__((always_inline)) __m512i q5kr_bit(__m512i h, const int s) {
    return _mm512_gf2p8affine_epi64_epi8(h, _mm512_set1_epi64((long long)((uint64_t)1 << (24 + s))), 0);
}

/* One super-block of 16 rows by NA activation rows y[j]: vec_dot's 8 lanes
 * (LANES: S[j][k], lane r = row r's lane k) or their exact total (S[j][0]),
 * and the mins' exact sum (M[j][0]: sum_s mn_s (bsums[2s] + bsums[2s + 1])). */
KQ5_TARGET_ZMM static inline __attribute__((always_inline)) void
q5kr_lanes(const char *T, const llm_block_q8_k *const *y, const int NA, const int LANES, __m512i S[8][8],
           __m512i M[8][1]) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    __m512i scb[2], mnb[2];
    kr_scales_mins(T + Q5KR_SC, scb, mnb);
    int32_t B[8][4]; /* per activation row: the bsums of sub-blocks 2p, 2p + 1 summed, as two int16 */
    for (int j = 0; j < NA; j++) {
        const __m256i bs = _mm256_loadu_si256((const __m256i *)y[j]->bsums);
        _mm_storeu_si128((__m128i *)B[j], _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));
        for (int k = 0; k < (LANES ? 8 : 1); k++) S[j][k] = _mm512_setzero_si512();
        M[j][0] = _mm512_setzero_si512();
    }
    for (int p = 0; p < 4; p++) {
        const int t0 = (2 * p) & 3;
        const __m512i sc0 = _mm512_shuffle_epi8(scb[p >> 1], _mm512_broadcast_i32x4(q5kr_pick11(t0)));
        const __m512i sc1 = _mm512_shuffle_epi8(scb[p >> 1], _mm512_broadcast_i32x4(q5kr_pick11(t0 + 1)));
        const __m512i mnp = _mm512_shuffle_epi8(mnb[p >> 1], _mm512_broadcast_i32x4(q4kr_pick2(t0)));
        for (int k = 0; k < 8; k++) {
            const __m512i q = _mm512_load_si512((const void *)(T + (size_t)(p * 8 + k) * 64));
            const __m512i h = _mm512_load_si512((const void *)(T + Q5KR_QH + (size_t)k * 64));
            const __m512i lo = _mm512_or_si512(_mm512_and_si512(q, m4), q5kr_bit(h, 2 * p));
            const __m512i hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(q, 4), m4), q5kr_bit(h, 2 * p + 1));
            for (int j = 0; j < NA; j++) {
                const int8_t *yq = y[j]->qs + 64 * p + 4 * k;
                const int kk = LANES ? k : 0;
                S[j][kk] = _mm512_dpwssd_epi32(S[j][kk], _mm512_maddubs_epi16(lo, zmm_bcast4(yq)), sc0);
                S[j][kk] = _mm512_dpwssd_epi32(S[j][kk], _mm512_maddubs_epi16(hi, zmm_bcast4(yq + 32)), sc1);
            }
        }
        for (int j = 0; j < NA; j++) M[j][0] = _mm512_dpwssd_epi32(M[j][0], mnp, _mm512_set1_epi32(B[j][p]));
    }
}

/* A prepared group as two 8-row packed tiles (as q6kr_pack16): the fifth
 * bits placed once per matmul. */
KQ5_TARGET_ZMM static void q5kr_pack16(int64_t K, const void *grp, void *dst, size_t ts) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    for (int64_t b = 0; b < K / LLM_QK_K; b++) {
        const char *T = (const char *)grp + (size_t)b * Q5KR_SB;
        char *P0 = (char *)dst + (size_t)b * KQT_PK, *P1 = P0 + ts;
        for (int l = 0; l < Q5KR_SB; l += 64) _mm_prefetch(T + Q5KR_PF + l, _MM_HINT_T0);
        for (int p = 0; p < 4; p++) {
            for (int k = 0; k < 8; k++) {
                const __m512i q = _mm512_load_si512((const void *)(T + (size_t)(p * 8 + k) * 64));
                const __m512i h = _mm512_load_si512((const void *)(T + Q5KR_QH + (size_t)k * 64));
                const __m512i lo = _mm512_or_si512(_mm512_and_si512(q, m4), q5kr_bit(h, 2 * p));
                const __m512i hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(q, 4), m4), q5kr_bit(h, 2 * p + 1));
                /* elements 64 p + 4 k .. (sub-block 2p) and 64 p + 32 + 4 k .. (2p + 1) */
                kr_tile_put(P0, P1, (size_t)(16 * p + k) * 32, lo);
                kr_tile_put(P0, P1, (size_t)(16 * p + 8 + k) * 32, hi);
            }
        }
        __m512i scb[2], mnb[2];
        kr_scales_mins(T + Q5KR_SC, scb, mnb);
        for (int j = 0; j < 8; j++) {
            /* sub-block j's scale on its two 16-element halves; its min against bsums 2j, 2j + 1 */
            const __m512i pick = _mm512_broadcast_i32x4(q5kr_pick11(j & 3));
            const __m512i sc = _mm512_shuffle_epi8(scb[j >> 2], pick);
            kr_tile_put(P0, P1, KQT_SC + 64 * (size_t)j, sc);
            kr_tile_put(P0, P1, KQT_SC + 64 * (size_t)j + 32, sc);
            kr_tile_put(P0, P1, KQT_OFF + 32 * (size_t)j, _mm512_shuffle_epi8(mnb[j >> 2], pick));
        }
        kr_tile_putf(P0, P1, KQT_D, _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(T + Q5KR_D))));
        kr_tile_putf(P0, P1, KQT_DMIN, _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(T + Q5KR_D + 32))));
    }
}

KR_DOTN(KQ5_TARGET_ZMM, q5kr_dotN, q5kr_lanes, Q5KR_SB, Q5KR_PF, Q5KR_D, 2, 1)
KR_TWO_ORDER_DOT(KQ5_TARGET_ZMM, q5kr_dot, q5kr_dotN)

/* A prepared group's pack16 (kernels.h prep) for a type whose decode is
 * QFN(T, g, k) (chunk k of 32-element group g, 16 rows), SCFN(T, t) (the
 * scale of 16-element sub-block t as two int16) and OFFFN(T, k) (the int16
 * pair against bsums 2k, 2k + 1); d (and with MINS dmin) at DOFF. */
#define KR_PACK16(NAME, SB, PFD, DOFF, QFN, SCFN, OFFFN, MINS)                                                  \
    KQ8_TARGET_ZMM static void NAME(int64_t K, const void *grp, void *dst, size_t ts) {                          \
        for (int64_t b = 0; b < K / LLM_QK_K; b++) {                                                             \
            const char *T = (const char *)grp + (size_t)b * (SB);                                                \
            char *P0 = (char *)dst + (size_t)b * KQT_PK, *P1 = P0 + ts;                                          \
            for (int l = 0; l < (SB); l += 64) _mm_prefetch(T + (PFD) + l, _MM_HINT_T0);                         \
            for (int g = 0; g < 8; g++) {                                                                        \
                for (int k = 0; k < 8; k++) kr_tile_put(P0, P1, (size_t)(8 * g + k) * 32, QFN(T, g, k));         \
            }                                                                                                    \
            for (int t = 0; t < 16; t++) kr_tile_put(P0, P1, KQT_SC + 32 * (size_t)t, SCFN(T, t));              \
            for (int k = 0; k < 8; k++) kr_tile_put(P0, P1, KQT_OFF + 32 * (size_t)k, OFFFN(T, k));             \
            kr_tile_putf(P0, P1, KQT_D, _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(T + (DOFF)))));      \
            kr_tile_putf(P0, P1, KQT_DMIN, MINS ? _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(T + (DOFF) + 32))) \
                                                : _mm512_setzero_ps());                                          \
        }                                                                                                        \
    }

/* ---------------------------------------------------------------- Q2_K -- */

/* A Q2_K weight prepared at load (kernels.h prep): per group of 16 rows, per
 * super-block (Q2KR_SB bytes, 64-byte aligned):
 *   qs [16 dwords c][16 rows][4 bytes]: bytes 4c .. 4c + 3 of row r's qs
 *      (bits 2s of byte 32h + b: element 32 (4h + s) + b);
 *   scales [4 dwords][16 rows][4 bytes]: row r's 16 scale bytes (low
 *      nibble the scale, high the min, of sub-blocks 4m .. 4m + 3);
 *   d, dmin [16 rows] fp16 each.
 * 84 bytes per row and super-block, as the file. Both orders of the matmul
 * without the copy (kernels_avx2_q2k.c), as the Q6_K / Q5_K copies: below 8
 * activation rows vec_dot's (8 lanes per row, lane k the mins of sub-blocks
 * 2k, 2k + 1 against their bsums, acc_k = fma(-d_y dmin_x, float(that),
 * acc_k) first, then lane k of the quants, sc q y over bytes 4k .. 4k + 3 of
 * every 32-element group, acc_k = fma(d_y d_x, float(lane k), acc_k), hsum8
 * at the end), from 8 the tiled one (the exact totals S1, S2, r = d_x
 * float(S1) - dmin_x float(S2) in one rounding, acc = fma(r, d_y, acc)).
 * Lane r of a register is row r: each chunk's four products summed by
 * vpmaddubsw pairs and scaled into the int32 by vpdpwssd, the mins by one
 * vpdpwssd per pair of sub-blocks: vec_dot's integers. From PREP_TILE_ROWS
 * activation rows the matmul packs a group into kq_tile.h's tiles instead
 * (q2kr_pack16). */
#define Q2KR_SB 1344
#define Q2KR_SC 1024
#define Q2KR_D 1280
/* The prefetch distance of a streaming pass (as Q40R_PF, kernels_avx2_q4_0.c). */
#define Q2KR_PF 10752

static const struct kr_layout q2kr_layout = {
    sizeof(llm_block_q2_k),
    Q2KR_SB,
    {{offsetof(llm_block_q2_k, qs), 0, 16, 4},
     {offsetof(llm_block_q2_k, scales), Q2KR_SC, 4, 4},
     {offsetof(llm_block_q2_k, d), Q2KR_D, 1, 2},
     {offsetof(llm_block_q2_k, dmin), Q2KR_D + 32, 1, 2}}};
KR_LAYOUT_FNS(q2kr, q2kr_layout)

/* The scale (hi 0) or min (hi 1) nibbles of scale dword m, per byte. */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) __m512i q2kr_nib(const char *T, int m, const int hi) {
    const __m512i v = _mm512_load_si512((const void *)(T + Q2KR_SC + 64 * m));
    return _mm512_and_si512(hi ? _mm512_srli_epi16(v, 4) : v, _mm512_set1_epi8(0x0F));
}

/* Per row: sub-block t's scale as two int16; the mins of sub-blocks 2k,
 * 2k + 1 as an int16 pair. */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) __m512i q2kr_scale(const char *T, int t) {
    return _mm512_shuffle_epi8(q2kr_nib(T, t / 4, 0), _mm512_broadcast_i32x4(q5kr_pick11(t % 4)));
}
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) __m512i q2kr_minpair(const char *T, int k) {
    return _mm512_shuffle_epi8(q2kr_nib(T, k / 2, 1), _mm512_broadcast_i32x4(q4kr_pick2(2 * (k % 2))));
}

/* The quants of chunk k of 32-element group g (elements 32 g + 4 k ..), 16 rows. */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) __m512i q2kr_q(const char *T, int g, int k) {
    const __m512i W = _mm512_load_si512((const void *)(T + (size_t)(8 * (g / 4) + k) * 64));
    return _mm512_and_si512(_mm512_srli_epi16(W, 2 * (g % 4)), _mm512_set1_epi8(0x03));
}

/* One super-block of 16 rows by NA activation rows: vec_dot's 8 quant lanes
 * and 8 mins lanes per row (LANES: S[j][k], M[j][k]) or their exact totals
 * (S[j][0], M[j][0]). */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) void
q2kr_lanes(const char *T, const llm_block_q8_k *const *y, const int NA, const int LANES, __m512i S[8][8],
           __m512i M[8][8]) {
    for (int j = 0; j < NA; j++)
        for (int k = 0; k < (LANES ? 8 : 1); k++) S[j][k] = M[j][k] = _mm512_setzero_si512();
    for (int k = 0; k < 8; k++) {
        const __m512i mp = q2kr_minpair(T, k);
        for (int j = 0; j < NA; j++) {
            const int kk = LANES ? k : 0;
            M[j][kk] = _mm512_dpwssd_epi32(M[j][kk], mp, zmm_bcast4(y[j]->bsums + 2 * k));
        }
    }
    for (int g = 0; g < 8; g++) {
        const __m512i sc0 = q2kr_scale(T, 2 * g), sc1 = q2kr_scale(T, 2 * g + 1);
        for (int k = 0; k < 8; k++) {
            const __m512i q = q2kr_q(T, g, k);
            for (int j = 0; j < NA; j++) {
                const int kk = LANES ? k : 0;
                const __m512i p = _mm512_maddubs_epi16(q, zmm_bcast4(y[j]->qs + 32 * g + 4 * k));
                S[j][kk] = _mm512_dpwssd_epi32(S[j][kk], p, k < 4 ? sc0 : sc1);
            }
        }
    }
}

KR_DOTN(KQ8_TARGET_ZMM, q2kr_dotN, q2kr_lanes, Q2KR_SB, Q2KR_PF, Q2KR_D, 1, 8)
KR_TWO_ORDER_DOT(KQ8_TARGET_ZMM, q2kr_dot, q2kr_dotN)

/* A prepared group as two 8-row packed tiles (as q6kr_pack16): the quants,
 * each 16 elements' scale and the mins of each pair. */
KR_PACK16(q2kr_pack16, Q2KR_SB, Q2KR_PF, Q2KR_D, q2kr_q, q2kr_scale, q2kr_minpair, 1)

/* ---------------------------------------------------------------- Q3_K -- */

/* A Q3_K weight prepared at load (kernels.h prep): per group of 16 rows, per
 * super-block (Q3KR_SB bytes, 64-byte aligned):
 *   qs [16 dwords c][16 rows][4 bytes]: bytes 4c .. 4c + 3 of row r's qs
 *      (the two low bits, as Q2_K's);
 *   hmask [8 dwords k][16 rows][4 bytes]: bytes 4k .. 4k + 3 of row r's
 *      hmask (bit g: the high bit of element 32 g + 4k ..);
 *   scales [3 dwords][16 rows][4 bytes]: row r's 12 packed scale bytes;
 *   d [16 rows] fp16; 32 bytes of padding.
 * 112 bytes per row and super-block against the file's 110. The orders of
 * kernels_avx2_q3k.c: below 8 activation rows vec_dot's (8 lanes per row,
 * lane k the sums sc q y over bytes 4k .. 4k + 3 of every 32-element group,
 * q in -4..3, acc_k = fma(d_y d_x, float(lane k), acc_k), hsum8), from 8 the
 * tiled one (the exact total S, acc = fma(d_x float(S), d_y, acc)). The
 * quants are decoded as u = q + 4 (0..7); vec_dot's lanes take the 4 y off
 * each vpmaddubsw pair in int16 (the activation's 4 (y0 + y1), 4 (y2 + y3),
 * formed once per super-block: |u y pair - 4 y pair| <= 2 * 7 * 128 + 1024),
 * the tiled total once per super-block from bsums, as the packed tiles do.
 * Then vpdpwssd by the scale (6 bits less 32, as int16): the same exact
 * integers, the same bits. */
#define Q3KR_SB 1792
#define Q3KR_HM 1024
#define Q3KR_SC 1536
#define Q3KR_D 1728
/* The prefetch distance of a streaming pass (as Q40R_PF, kernels_avx2_q4_0.c). */
#define Q3KR_PF 10752

static const struct kr_layout q3kr_layout = {
    sizeof(llm_block_q3_k),
    Q3KR_SB,
    {{offsetof(llm_block_q3_k, qs), 0, 16, 4},
     {offsetof(llm_block_q3_k, hmask), Q3KR_HM, 8, 4},
     {offsetof(llm_block_q3_k, scales), Q3KR_SC, 3, 4},
     {offsetof(llm_block_q3_k, d), Q3KR_D, 1, 2}}};
KR_LAYOUT_FNS(q3kr, q3kr_layout)

/* Per row (dword lane): the scales of sub-blocks 4m .. 4m + 3 plus 32, as
 * bytes (the 4 low bits from dword 0 or 1, the 2 high ones from dword 2). */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) __m512i q3kr_sc4(const char *T, int m) {
    const __m512i W = _mm512_load_si512((const void *)(T + Q3KR_SC + 64 * (m & 1)));
    const __m512i W2 = _mm512_load_si512((const void *)(T + Q3KR_SC + 128));
    const __m512i lo = _mm512_and_si512(m < 2 ? W : _mm512_srli_epi16(W, 4), _mm512_set1_epi8(0x0F));
    const __m512i hi = _mm512_and_si512(_mm512_slli_epi16(_mm512_srli_epi16(W2, 2 * m), 4), _mm512_set1_epi8(0x30));
    return _mm512_or_si512(lo, hi);
}

/* Per row: sub-block t's scale (-32..31) as two int16. */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) __m512i q3kr_scale(const char *T, int t) {
    const __m512i u = _mm512_shuffle_epi8(q3kr_sc4(T, t / 4), _mm512_broadcast_i32x4(q5kr_pick11(t % 4)));
    return _mm512_sub_epi16(u, _mm512_set1_epi16(32));
}

/* Per row: (-4 sc[2k], -4 sc[2k + 1]) as an int16 pair, the coefficients of
 * bsums 2k, 2k + 1 in the exact total. */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) __m512i q3kr_offsets(const char *T, int k) {
    const __m512i pair = _mm512_mask_blend_epi16(0xAAAAAAAAu, q3kr_scale(T, 2 * k), q3kr_scale(T, 2 * k + 1));
    return _mm512_mullo_epi16(pair, _mm512_set1_epi16(-4));
}

/* u = q + 4 of chunk k of group g (elements 32 g + 4 k ..), 16 rows. */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) __m512i q3kr_u(const char *T, int g, int k) {
    const __m512i W = _mm512_load_si512((const void *)(T + (size_t)(8 * (g / 4) + k) * 64));
    const __m512i H = _mm512_load_si512((const void *)(T + Q3KR_HM + (size_t)k * 64));
    const __m512i low = _mm512_and_si512(_mm512_srli_epi16(W, 2 * (g % 4)), _mm512_set1_epi8(0x03));
    const __m512i hb = g >= 2 ? _mm512_srli_epi16(H, g - 2) : _mm512_slli_epi16(H, 2 - g);
    return _mm512_or_si512(low, _mm512_and_si512(hb, _mm512_set1_epi8(0x04)));
}

/* One super-block of 16 rows by NA activation rows: vec_dot's 8 lanes per
 * row (LANES: S[j][k]) or the exact total (S[j][0]). */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) void
q3kr_lanes(const char *T, const llm_block_q8_k *const *y, const int NA, const int LANES, __m512i S[8][8],
           __m512i M[8][1]) {
    (void)M; /* no mins */
    int16_t y4[8][128]; /* LANES: per activation row, 4 (y[2i] + y[2i + 1]) */
    for (int j = 0; j < NA; j++) {
        for (int k = 0; k < (LANES ? 8 : 1); k++) S[j][k] = _mm512_setzero_si512();
        for (int h = 0; LANES && h < 8; h++) {
            const __m256i yv = _mm256_loadu_si256((const __m256i *)(y[j]->qs + 32 * h));
            _mm256_storeu_si256((__m256i *)(y4[j] + 16 * h), _mm256_maddubs_epi16(_mm256_set1_epi8(4), yv));
        }
    }
    for (int g = 0; g < 8; g++) {
        const __m512i sc0 = q3kr_scale(T, 2 * g), sc1 = q3kr_scale(T, 2 * g + 1);
        for (int k = 0; k < 8; k++) {
            const __m512i u = q3kr_u(T, g, k);
            for (int j = 0; j < NA; j++) {
                __m512i p = _mm512_maddubs_epi16(u, zmm_bcast4(y[j]->qs + 32 * g + 4 * k));
                if (LANES) p = _mm512_sub_epi16(p, zmm_bcast4(y4[j] + 16 * g + 2 * k));
                const int kk = LANES ? k : 0;
                S[j][kk] = _mm512_dpwssd_epi32(S[j][kk], p, k < 4 ? sc0 : sc1);
            }
        }
    }
    for (int k = 0; !LANES && k < 8; k++) {
        /* the total's -4 sum sc y: -4 sc of sub-blocks 2k, 2k + 1 against their bsums */
        const __m512i o = q3kr_offsets(T, k);
        for (int j = 0; j < NA; j++) S[j][0] = _mm512_dpwssd_epi32(S[j][0], o, zmm_bcast4(y[j]->bsums + 2 * k));
    }
}

KR_DOTN(KQ8_TARGET_ZMM, q3kr_dotN, q3kr_lanes, Q3KR_SB, Q3KR_PF, Q3KR_D, 0, 1)
KR_TWO_ORDER_DOT(KQ8_TARGET_ZMM, q3kr_dot, q3kr_dotN)

/* A prepared group as two 8-row packed tiles (as q6kr_pack16): u = q + 4,
 * the offsets -4 sc. */
KR_PACK16(q3kr_pack16, Q3KR_SB, Q3KR_PF, Q3KR_D, q3kr_u, q3kr_scale, q3kr_offsets, 0)

/* The prep entry of a two-order copy (8 rows per pass, unpack_row, pack16). */
#define KR_PREP8(NAME)                                                                                           \
    (struct llm__prep_kernels) {                                                                                 \
        .group_bytes = NAME##_group_bytes, .repack = NAME##_repack, .dot = NAME##_dot, .max_a = 8,               \
        .unpack_row = NAME##_unpack_row, .pack16 = NAME##_pack16                                                 \
    }

void llm__cpu_kernels_avx2_kq_prep(llm__cpu_kernels *k) {
    if (!cpu_has_avx512_vnni()) {
        /* Q4_K in 256-bit registers (the only prepared K-quant there).
         * Prompts on AVX2 alone go through the rows8 pair's packed tiles,
         * whose products beat this one's 4-row passes there (1B Q4_K_M,
         * capped on the Zen 5, llm-bench -t 2 -p 512, t/s: unprepared
         * 219-225, 4-row passes 160-164, tiles 221); with AVX-VNNI the
         * 4-row passes win (231-237 against tiles 219, unprepared 220-242). */
        if (k->rows8[LLM_DTYPE_Q4_K].dot == llm__q4_k_dot_repack_gemv) {
            const int vnni = cpu_has_avx_vnni();
            k->prep[LLM_DTYPE_Q4_K] = (struct llm__prep_kernels){.group_bytes = q4kr_group_bytes,
                                                                  .repack = q4kr_repack,
                                                                  .dot = vnni ? q4kr_dot_avxvnni : q4kr_dot_avx2,
                                                                  .max_a = 4,
                                                                  .unpack_row = q4kr_unpack_row,
                                                                  .unpack16 = vnni ? NULL : q4kr_unpack16};
        }
        return;
    }
    if (k->rows8[LLM_DTYPE_Q4_K].dot == llm__q4_k_dot_repack_gemv) {
        k->prep[LLM_DTYPE_Q4_K] = (struct llm__prep_kernels){.group_bytes = q4kr_group_bytes,
                                                              .repack = q4kr_repack,
                                                              .dot = q4kr_dot,
                                                              .max_a = 4,
                                                              .unpack_row = q4kr_unpack_row};
    }
    if (k->tiled[LLM_DTYPE_Q6_K].dot == llm__q6_k_dot_tiled) k->prep[LLM_DTYPE_Q6_K] = KR_PREP8(q6kr);
    __builtin_cpu_init();
    if (__builtin_cpu_supports("gfni") && k->tiled[LLM_DTYPE_Q5_K].dot == llm__q5_k_dot_tiled) {
        k->prep[LLM_DTYPE_Q5_K] = KR_PREP8(q5kr);
    }
    /* Q3_K's and Q2_K's pairs are registered by kernels_avx2_q3k.c / _q2k.c (before this) */
    if (k->dot[LLM_DTYPE_Q3_K] && k->tiled[LLM_DTYPE_Q3_K].dot4 && k->tiled[LLM_DTYPE_Q3_K].pack8) {
        k->prep[LLM_DTYPE_Q3_K] = KR_PREP8(q3kr);
    }
    if (k->dot[LLM_DTYPE_Q2_K] && k->tiled[LLM_DTYPE_Q2_K].dot4 && k->tiled[LLM_DTYPE_Q2_K].pack8) {
        k->prep[LLM_DTYPE_Q2_K] = KR_PREP8(q2kr);
    }
}

#else /* no AVX2 build, or a compiler without the AVX-512 VNNI intrinsics: no prepared K-quants */

void llm__cpu_kernels_avx2_kq_prep(llm__cpu_kernels *k) { (void)k; }

#endif
