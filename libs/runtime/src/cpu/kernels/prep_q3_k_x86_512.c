/*
 * cpu/kernels/prep_q3_k_x86_512.c -- the Q3_K weight prepared at load and its AVX-512 VNNI
 * products (both orders, as Q6_K), and its pack16.
 * Compiled with AVX-512 (F, BW, DQ, VL, VNNI: sources.cmake);
 * installed by llm__cpu_kernels_prep_kquant_x86 (prep_kquant_x86_256.c)
 * where the CPU has them. The shared layout machinery: prep_kquant.h.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVX512VNNI__) && defined(__GNUC__) && \
    (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)

#include "cpu/kernels/prep_kquant.h"

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
 * kernels/q3_k_x86_256.c: below 8 activation rows vec_dot's (8 lanes per row,
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
/* The prefetch distance of a streaming pass (as Q40R_PF, kernels/q4_0_x86_256.c). */
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

void llm__prep_q3_k_x86_512(struct llm__prep_kernels *pk) { *pk = KR_PREP8(q3kr); }

#else /* not built with AVX-512 VNNI: never installed */

void llm__prep_q3_k_x86_512(struct llm__prep_kernels *pk) { (void)pk; }

#endif
