/*
 * cpu/kernels/prep_q6_k_x86_512.c -- the Q6_K weight prepared at load and its AVX-512 VNNI
 * products (vec_dot's order below 8 activation rows, llama.cpp's tiled one
 * from 8), and its pack16.
 * Compiled with AVX-512 (F, BW, DQ, VL, VNNI: sources.cmake);
 * installed by llm__cpu_kernels_prep_kquant_x86 (prep_kquant_x86_256.c)
 * where the CPU has them. The shared layout machinery: prep_kquant.h.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVX512VNNI__) && defined(__GNUC__) && \
    (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)

#include "cpu/kernels/prep_kquant.h"

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
/* The prefetch distance of a streaming pass (as Q40R_PF, kernels/q4_0_x86_256.c). */
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
 * (cpu/kernels/kquant_tile.h, rows 0..7 at dst, 8..15 at dst + ts): the quants decoded
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

KR_DOTN(KQ8_TARGET_ZMM, q6kr_dotN, q6kr_lanes, Q6KR_SB, Q6KR_PF, Q6KR_D, 0, 1)
KR_TWO_ORDER_DOT(KQ8_TARGET_ZMM, q6kr_dot, q6kr_dotN)

void llm__prep_q6_k_x86_512(struct llm__prep_kernels *pk) { *pk = KR_PREP8(q6kr); }

#else /* not built with AVX-512 VNNI: never installed */

void llm__prep_q6_k_x86_512(struct llm__prep_kernels *pk) { (void)pk; }

#endif
