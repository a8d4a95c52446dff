/*
 * cpu/kernels/kquant_tile.h -- PRIVATE: the packed tile of 8 K-quant weight rows that
 * the tiled order's prompt passes of Q6_K, Q5_K, Q3_K and Q2_K multiply
 * (kernels.h llm__pack8_fn; the products are in kernels/kquant_tile_x86_256.c, each
 * type's packer beside its other kernels). Include only from files compiled
 * with -mavx2 -mfma -mf16c, inside their AVX2 guard, after kernels/x86_256.h.
 *
 * llama.cpp's tiled order for these types needs, per super-block and row
 * pair (weight row, activation row), only exact integers: S1 = sum_i sc(i)
 * q(i) y(i) over the 256 elements (sc the scale of element i's 16 or 32
 * element sub-block, q its quant with the type's offset applied) and, for
 * the types with mins (Q5_K, Q2_K), S2 = sum over the activation's per-16
 * sums bsums[k] of the min of sub-block k. Then r = d_x float(S1), with mins
 * r = r - dmin_x float(S2) in one rounding, and acc = fma(r, d_y, acc). So
 * the tile stores every type the same way, the quants decoded to unsigned
 * bytes and the offsets moved into the bsums term:
 *
 *   q    [64 chunks c][8 rows][4 bytes]: elements 4c .. 4c + 3 of row r as
 *        unsigned bytes u (Q6_K: q + 32, 0..63; Q5_K: 0..31; Q3_K: q + 4,
 *        0..7; Q2_K: 0..3), so 16-element sub-block t is chunks 4t .. 4t + 3;
 *   sc   [16 sub-blocks t][8 rows] int32: the scale of elements 16t ..
 *        16t + 15 as int16 in both halves (a Q5_K scale twice, its
 *        sub-blocks being 32 long);
 *   off  [8 pairs k][8 rows] int32: two int16 coefficients against bsums
 *        2k and 2k + 1: the offsets (Q6_K -32 sc, Q3_K -4 sc: part of S1) or
 *        the mins (Q5_K, Q2_K: S2);
 *   d    [8 rows] float; dmin [8 rows] float (zero without mins).
 *
 * S1 = sum_t sc_t sum (u y) + sum_k off_k . (bsums 2k, 2k + 1) for the
 * offset types, exact in int32 (each term at most 128 * 63 * 128, 256 of
 * them: below 2^29).
 */
#ifndef LLM_CPU_KQ_TILE_H
#define LLM_CPU_KQ_TILE_H

#define KQT_PK 2880 /* bytes per super-block */
#define KQT_SC 2048
#define KQT_OFF 2560
#define KQT_D 2816
#define KQT_DMIN 2848

static inline size_t kqt_pack8_bytes(int64_t n) { return (size_t)(n / LLM_QK_K) * KQT_PK; }

/* v[r]: elements 32 G .. 32 G + 31 of row r as unsigned bytes; stored as
 * chunks 8 G .. 8 G + 7 of the tile at P (v is clobbered). */
static inline __attribute__((always_inline)) void kqt_store_group(char *P, int G, __m256i v[8]) {
    transpose8x32(v);
    for (int i = 0; i < 8; i++) _mm256_store_si256((__m256i *)(P + (size_t)(8 * G + i) * 32), v[i]);
}

/* Row r's scales (per 16-element sub-block), bsums coefficients, d and dmin. */
static inline void kqt_put_scales(char *P, int r, const int16_t sc[16], const int16_t off[16], float d, float dmin) {
    for (int t = 0; t < 16; t++) {
        const uint32_t v = (uint32_t)(uint16_t)sc[t] * 0x10001u;
        memcpy(P + KQT_SC + 32 * t + 4 * r, &v, 4);
    }
    for (int k = 0; k < 8; k++) {
        const uint32_t v = (uint32_t)(uint16_t)off[2 * k] | (uint32_t)(uint16_t)off[2 * k + 1] << 16;
        memcpy(P + KQT_OFF + 32 * k + 4 * r, &v, 4);
    }
    memcpy(P + KQT_D + 4 * r, &d, 4);
    memcpy(P + KQT_DMIN + 4 * r, &dmin, 4);
}

#endif
