/*
 * cpu/kernels/prep_q5_k_x86_512.c -- the Q5_K weight prepared at load and its AVX-512 VNNI
 * products (both orders, as Q6_K), and its pack16.
 * Compiled with AVX-512 (F, BW, DQ, VL, VNNI, GFNI: sources.cmake);
 * installed by llm__cpu_kernels_prep_kquant_x86 (prep_kquant_x86_256.c)
 * where the CPU has them. The shared layout machinery: prep_kquant.h.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVX512VNNI__) && defined(__GNUC__) && \
    (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)

#include "cpu/kernels/prep_kquant.h"

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
 * shifts and masks took three; faster: see docs/PERFORMANCE.md), so the
 * copy is made only on CPUs with GFNI too (AVX-512 VNNI without it, as
 * Cascade Lake: the file's bytes and the unprepared kernels). */
#define KQ5_TARGET_ZMM __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,gfni")))
#define Q5KR_SB 2816
#define Q5KR_QH 2048
#define Q5KR_SC 2560
#define Q5KR_D 2752
/* The prefetch distance of a streaming pass (as Q40R_PF, kernels/q4_0_x86_256.c). */
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

void llm__prep_q5_k_x86_512(struct llm__prep_kernels *pk) { *pk = KR_PREP8(q5kr); }

#else /* not built with AVX-512 VNNI: never installed */

void llm__prep_q5_k_x86_512(struct llm__prep_kernels *pk) { (void)pk; }

#endif
