/*
 * cpu/kernels/prep_q2_k_x86_512.c -- the Q2_K weight prepared at load and its AVX-512 VNNI
 * products (both orders, as Q6_K), and its pack16.
 * Compiled with AVX-512 (F, BW, DQ, VL, VNNI: sources.cmake);
 * installed by llm__cpu_kernels_prep_kquant_x86 (prep_kquant_x86_256.c)
 * where the CPU has them. The shared layout machinery: prep_kquant.h.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVX512VNNI__) && defined(__GNUC__) && \
    (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)

#include "cpu/kernels/prep_kquant.h"

/* ---------------------------------------------------------------- Q2_K -- */

/* A Q2_K weight prepared at load (kernels.h prep): per group of 16 rows, per
 * super-block (Q2KR_SB bytes, 64-byte aligned):
 *   qs [16 dwords c][16 rows][4 bytes]: bytes 4c .. 4c + 3 of row r's qs
 *      (bits 2s of byte 32h + b: element 32 (4h + s) + b);
 *   scales [4 dwords][16 rows][4 bytes]: row r's 16 scale bytes (low
 *      nibble the scale, high the min, of sub-blocks 4m .. 4m + 3);
 *   d, dmin [16 rows] fp16 each.
 * 84 bytes per row and super-block, as the file. Both orders of the matmul
 * without the copy (kernels/q2_k_x86_256.c), as the Q6_K / Q5_K copies: below 8
 * activation rows vec_dot's (8 lanes per row, lane k the mins of sub-blocks
 * 2k, 2k + 1 against their bsums, acc_k = fma(-d_y dmin_x, float(that),
 * acc_k) first, then lane k of the quants, sc q y over bytes 4k .. 4k + 3 of
 * every 32-element group, acc_k = fma(d_y d_x, float(lane k), acc_k), hsum8
 * at the end), from 8 the tiled one (the exact totals S1, S2, r = d_x
 * float(S1) - dmin_x float(S2) in one rounding, acc = fma(r, d_y, acc)).
 * Lane r of a register is row r: each chunk's four products summed by
 * vpmaddubsw pairs and scaled into the int32 by vpdpwssd, the mins by one
 * vpdpwssd per pair of sub-blocks: vec_dot's integers. From PREP_TILE_ROWS
 * activation rows the matmul packs a group into kernels/kquant_tile.h's tiles instead
 * (q2kr_pack16). */
#define Q2KR_SB 1344
#define Q2KR_SC 1024
#define Q2KR_D 1280
/* The prefetch distance of a streaming pass (as Q40R_PF, kernels/q4_0_x86_256.c). */
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

void llm__prep_q2_k_x86_512(struct llm__prep_kernels *pk) { *pk = KR_PREP8(q2kr); }

#else /* not built with AVX-512 VNNI: never installed */

void llm__prep_q2_k_x86_512(struct llm__prep_kernels *pk) { (void)pk; }

#endif
