/*
 * cpu/kernels/prep_kquant.h -- PRIVATE: what the files of the K-quant
 * weights prepared at load (kernels.h prep, runtime.h
 * llm_backend_prepare_weight) share: the layout table of a prepared group
 * (which bytes of a super-block go where, for 16 rows) and the repack /
 * unpack built on it, and the macros that make a type's AVX-512 product
 * and pack16 from its decode. One file per type: prep_q4_k_x86_512.c,
 * prep_q6_k_x86_512.c, prep_q5_k_x86_512.c, prep_q3_k_x86_512.c,
 * prep_q2_k_x86_512.c; prep_kquant_x86_256.c holds Q4_K's 256-bit product
 * (CPUs without AVX-512 VNNI) and installs them all. From PREP_TILE_ROWS
 * activation rows (matmul_cpu.c) the matmul decodes a Q6_K / Q5_K / Q3_K /
 * Q2_K group once into the packed tiles of kernels/kquant_tile.h instead
 * (pack16, the products in kernels/kquant_tile_x86_256.c).
 *
 * Include inside the file's build guard (LLM_PREP_KQUANT_BUILT below).
 */
#ifndef LLM_CPU_KERNELS_PREP_KQUANT_H
#define LLM_CPU_KERNELS_PREP_KQUANT_H

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#include "cpu/kernels.h"
#include "cpu/kernels/x86_256.h"
#include "cpu/kernels/x86_512.h"
#include "cpu/kernels/kquant_tile.h"
#include "dtype/blocks.h"

#define KQ8_TARGET_ZMM __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))

/* The AVX-512 files' prep entries for the 256-bit installer
 * (prep_kquant_x86_256.c): each fills *pk with its type's layout and
 * products. Call only where the CPU has AVX-512 VNNI (Q5_K: and GFNI). */
void llm__prep_q4_k_x86_512(struct llm__prep_kernels *pk);
void llm__prep_q6_k_x86_512(struct llm__prep_kernels *pk);
void llm__prep_q5_k_x86_512(struct llm__prep_kernels *pk);
void llm__prep_q3_k_x86_512(struct llm__prep_kernels *pk);
void llm__prep_q2_k_x86_512(struct llm__prep_kernels *pk);

/* vpshufb patterns shared by the types' decodes: byte t of each dword
 * zero-extended to an int16 (pick1) or bytes t, t + 1 as two int16 (pick2),
 * per 128-bit lane. */
static inline __attribute__((always_inline)) __m128i q4kr_pick1(int t) {
    const int z = 0x80808000;
    return _mm_set_epi32(z | (12 + t), z | (8 + t), z | (4 + t), z | t);
}
static inline __attribute__((always_inline)) __m128i q4kr_pick2(int t) {
    const int z = (int)0x80008000;
    return _mm_set_epi32(z | ((13 + t) << 16) | (12 + t), z | ((9 + t) << 16) | (8 + t), z | ((5 + t) << 16) | (4 + t),
                         z | ((1 + t) << 16) | t);
}

/* vpshufb pattern, per 128-bit lane: byte t of each dword as its two int16
 * (zero-extended), the scale vpdpwssd applies to both of a chunk's pairs. */
static inline __attribute__((always_inline)) __m128i q5kr_pick11(int t) {
    const int z = (int)0x80008000;
    return _mm_set_epi32(z | ((12 + t) << 16) | (12 + t), z | ((8 + t) << 16) | (8 + t), z | ((4 + t) << 16) | (4 + t),
                         z | (t << 16) | t);
}

#ifdef __AVX512F__
/* A 16-row vector (lane r of int32: row r) as the same 32 bytes of two
 * 8-row packed tiles (cpu/kernels/kquant_tile.h): rows 0..7 at P0 + off, 8..15 at P1 +
 * off. */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) void kr_tile_put(char *P0, char *P1, size_t off, __m512i v) {
    _mm256_store_si256((__m256i *)(P0 + off), _mm512_castsi512_si256(v));
    _mm256_store_si256((__m256i *)(P1 + off), _mm512_extracti64x4_epi64(v, 1));
}

KQ8_TARGET_ZMM static inline __attribute__((always_inline)) void kr_tile_putf(char *P0, char *P1, size_t off, __m512 v) {
    kr_tile_put(P0, P1, off, _mm512_castps_si512(v));
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
#endif

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

static inline void kr_repack(const struct kr_layout *L, int64_t K, const void *w, size_t w_stride, void *grp) {
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

static inline void kr_unpack_row(const struct kr_layout *L, int64_t K, const void *grp, int r, void *dst) {
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
static inline void kr_unpack16(const struct kr_layout *L, int64_t K, const void *grp, void *dst, size_t stride) {
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
    static inline size_t NAME##_group_bytes(int64_t K) { return (size_t)(K / LLM_QK_K) * (L).sb; }                     \
    static inline void NAME##_repack(int64_t K, const void *w, size_t w_stride, void *grp) {                           \
        kr_repack(&(L), K, w, w_stride, grp);                                                                   \
    }                                                                                                           \
    static inline void NAME##_unpack_row(int64_t K, const void *grp, int r, void *dst) { kr_unpack_row(&(L), K, grp, r, dst); }

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

/* The prep entry of a two-order copy (8 rows per pass, unpack_row, pack16). */
#define KR_PREP8(NAME)                                                                                           \
    (struct llm__prep_kernels) {                                                                                 \
        .group_bytes = NAME##_group_bytes, .repack = NAME##_repack, .dot = NAME##_dot, .max_a = 8,               \
        .unpack_row = NAME##_unpack_row, .pack16 = NAME##_pack16                                                 \
    }

#endif
