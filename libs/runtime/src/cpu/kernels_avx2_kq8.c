/*
 * cpu/kernels_avx2_kq8.c -- eight K-quant weight rows at once (kernels.h
 * dot8) for the two types of a Q4_K_M file: Q4_K in llama.cpp's repacked
 * order (its gemv for 1..3 activation rows, its gemm for 4) and Q6_K in its
 * tiled order. Same bits as the pairs' dot / dot4 in kernels_avx2_kq.c, which
 * describes the orders; here only how the work is shared changes.
 *
 * The pattern of kernels_avx2_q4_0.c: per super-block, each row's exact
 * integer sums are formed as 8 int32 lanes, one reduction tree turns the 8
 * rows' lanes into one vector whose lane r is row r's sum (exact, so the
 * tree's shape does not matter), and lane r then runs row r's float chain,
 * operation for operation. What is shared: the activation loads and block
 * scales (one per activation row for 8 weight rows), the float work (one
 * multiply and FMA per 8 rows), and, for Q4_K, the mins term: the 8 rows'
 * 6-bit mins are transposed once per super-block so that one multiply-add
 * per pair of sub-blocks gives all 8 rows' mins products against one
 * activation row's block sums.
 *
 * Each kernel has an AVX2 form and an AVX-VNNI form (vpdpwssd folds the
 * scale multiply and the accumulation of the 16-bit products into one
 * instruction; the integer sums are exact either way, so the bits are the
 * same). Q4_K with four activation rows also has an AVX-512 form (two
 * activation rows per register, q4k_8x4_avx512), again the same bits. The
 * registry takes the widest form the CPU has. One activation row goes to
 * the single-row gemv kernel (faster there, measured); two or three use the
 * 8-row form of the gemv order (each row's pairs summed in its lanes, one
 * tree per super-block). Prompt passes of both types multiply packed tiles
 * instead, whichever dot8 is registered (llm__pack8_fn; the packed sections
 * below): the weight rows interleaved once per matmul so
 * that lane r of every vector is row r and no tree is needed.
 *
 * Files: the 256-bit bodies are kernels_avx2_kq8_body.h, included three
 * times below with three multiply-accumulate forms: AVX2 (vpmaddwd +
 * vpaddd), AVX-VNNI and AVX-512 VL + VNNI (vpdpwssd, VEX or EVEX; the last
 * serves 2..3 activation rows where the 512-bit form applies).
 *
 * Compiled with -mavx2 -mfma -mf16c (sources.cmake), installed by
 * llm__cpu_kernels_avx2() once the CPU has been checked.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <string.h>

#include "cpu/avx2_common.h"
#include "dtype/blocks.h"

#if defined(__GNUC__) && (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)
#define LLM_KQ8_VNNI 1
#define KQ8_TARGET_VNNI __attribute__((target("avx2,fma,f16c,avxvnni")))
#endif

/* Lane r of the result: the sum of the 8 int32 lanes of p[r] (exact). */
static inline __attribute__((always_inline)) __m256i kq8_sum_rows8(const __m256i p[8]) {
    const __m256i h01 = _mm256_hadd_epi32(p[0], p[1]), h23 = _mm256_hadd_epi32(p[2], p[3]);
    const __m256i h45 = _mm256_hadd_epi32(p[4], p[5]), h67 = _mm256_hadd_epi32(p[6], p[7]);
    const __m256i lo = _mm256_hadd_epi32(h01, h23), hi = _mm256_hadd_epi32(h45, h67);
    return _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x20), _mm256_permute2x128_si256(lo, hi, 0x31));
}

/* ---------------------------------------------------------------- Q4_K -- */

#define KQ8_ATTR
#define KQ8_NAME(f) f
#define KQ8_MADD_ACC(acc, s, p) _mm256_add_epi32((acc), _mm256_madd_epi16((s), (p)))
#include "cpu/kernels_avx2_kq8_body.h"
#undef KQ8_ATTR
#undef KQ8_NAME
#undef KQ8_MADD_ACC

#ifdef LLM_KQ8_VNNI
#define KQ8_ATTR KQ8_TARGET_VNNI
#define KQ8_NAME(f) f##_vnni
#define KQ8_MADD_ACC(acc, s, p) _mm256_dpwssd_avx_epi32((acc), (s), (p))
#include "cpu/kernels_avx2_kq8_body.h"
#undef KQ8_ATTR
#undef KQ8_NAME
#undef KQ8_MADD_ACC
#endif

/* One activation row (decode): the single-row gemv kernel, row after row,
 * streams the weights in order and measured faster on rows that come from
 * memory than the 8-row form (same bits either way). */
static void q4k_gemv_rows(int64_t n, const char *w, size_t w_stride, const char *a, float *out) {
    for (int r = 0; r < 8; r++) out[r] = llm__q4_k_dot_repack_gemv(n, w + (size_t)r * w_stride, a);
}

static void dot8_q4_k(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride, int n_a,
                      float *out, size_t o_stride) {
    switch (n_a) {
    case 1: q4k_gemv_rows(n, w, w_stride, a, out); break;
    case 2: q4k_8xN(n, w, w_stride, a, a_stride, 2, out, o_stride); break;
    case 3: q4k_8xN(n, w, w_stride, a, a_stride, 3, out, o_stride); break;
    default: q4k_8xN(n, w, w_stride, a, a_stride, 4, out, o_stride); break;
    }
}

#ifdef LLM_KQ8_VNNI
KQ8_TARGET_VNNI static void dot8_q4_k_vnni(int64_t n, const void *w, size_t w_stride, const void *a,
                                           size_t a_stride, int n_a, float *out, size_t o_stride) {
    switch (n_a) {
    case 1: q4k_gemv_rows(n, w, w_stride, a, out); break;
    case 2: q4k_8xN_vnni(n, w, w_stride, a, a_stride, 2, out, o_stride); break;
    case 3: q4k_8xN_vnni(n, w, w_stride, a, a_stride, 3, out, o_stride); break;
    default: q4k_8xN_vnni(n, w, w_stride, a, a_stride, 4, out, o_stride); break;
    }
}
#endif

/* ------------------------------------------------- Q4_K, packed tiles -- */


/* A prompt pass's Q4_K product in llama.cpp's gemm order (as q4k_8xN with
 * four activation rows) on eight weight rows packed once per matmul, so that
 * int32 lane r of every vector is weight row r and no tree sums lanes.
 *
 * Tile layout, per super-block (Q4K_PK bytes):
 *   qs [4 pairs p][8 chunks k][8 rows][4 bytes]: bytes 4k..4k+3 of row r's
 *      32 bytes of pair p (low nibbles: sub-block 2p, elements 4k..4k+3;
 *      high nibbles: sub-block 2p + 1);
 *   sc [8 sub-blocks][8 rows] int32 = the row's 6-bit scale in both int16;
 *   mn [4 pairs][8 rows] int32 = (min of sub-block 2p, of 2p + 1) as int16;
 *   d, dmin [8 rows] floats.
 * Per pair and activation row, vpmaddubsw of a chunk's nibbles with the
 * activation's 4 bytes broadcast adds two products per int16; eight chunks
 * summed in int16 hold 16 products each (|sum| <= 16 * 15 * 128 = 30720, no
 * overflow, no saturation), and vpmaddwd with the scales gives lane r the
 * sub-block's scaled sum: the exact integer of q4k_8xN, so the same float
 * chains (acc = fma(float(sq_p), d_x d_y, acc), accm likewise with the mins)
 * and the same bits. */
#define Q4K_PK (1024 + 256 + 128 + 64)

static size_t q4k_pack8_bytes(int64_t n) { return (size_t)(n / LLM_QK_K) * Q4K_PK; }

static void q4k_pack8(int64_t n, const void *w, size_t w_stride, void *dst) {
    const int64_t nb = n / LLM_QK_K;
    for (int64_t b = 0; b < nb; b++) {
        prefetch_next_group(w, w_stride, 8, b, nb);
        char *P = (char *)dst + (size_t)b * Q4K_PK;
        const llm_block_q4_k *x[8];
        for (int r = 0; r < 8; r++) x[r] = (const llm_block_q4_k *)((const char *)w + (size_t)r * w_stride) + b;
        for (int p = 0; p < 4; p++) {
            /* Pair p's 32 bytes of each row, transposed: chunk k of the 8 rows. */
            __m256i v[8];
            for (int r = 0; r < 8; r++) v[r] = _mm256_loadu_si256((const __m256i *)(x[r]->qs + 32 * p));
            transpose8x32(v);
            for (int k = 0; k < 8; k++) _mm256_store_si256((__m256i *)(P + (p * 8 + k) * 32), v[k]);
        }
        /* Per row sc[0..7] | mn[0..7] as int16: each scale doubled into a
         * dword (unpacklo gives sc 0..3 | mn 0..3, unpackhi sc 4..7 | mn
         * 4..7), and the mins already in pairs (dwords 4..7). */
        __m256i sc[8], mn[8];
        uint16_t dh[8], mh[8];
        for (int r = 0; r < 8; r++) {
            mn[r] = q4_k_scales_mins(x[r]->scales);
            sc[r] = _mm256_permute2x128_si256(_mm256_unpacklo_epi16(mn[r], mn[r]), _mm256_unpackhi_epi16(mn[r], mn[r]), 0x20);
            dh[r] = x[r]->d;
            mh[r] = x[r]->dmin;
        }
        transpose8x32(sc);
        transpose8x32(mn);
        for (int s = 0; s < 8; s++) _mm256_store_si256((__m256i *)(P + 1024 + 32 * s), sc[s]);
        for (int p = 0; p < 4; p++) _mm256_store_si256((__m256i *)(P + 1280 + 32 * p), mn[4 + p]);
        _mm256_store_ps((float *)(P + 1408), _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)dh)));
        _mm256_store_ps((float *)(P + 1440), _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)mh)));
    }
}

static void q4k_dot8x4_packed(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                              size_t o_stride) {
    __m256 acc[4], accm[4];
    for (int j = 0; j < 4; j++) acc[j] = accm[j] = _mm256_setzero_ps();
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const char *P = (const char *)pk + (size_t)b * Q4K_PK;
        const __m256 dw = _mm256_load_ps((const float *)(P + 1408)), mw = _mm256_load_ps((const float *)(P + 1440));
        const llm_block_q8_k *y[4];
        __m256 dd[4], dm[4];
        int32_t B[4][4]; /* [j][p]: the int16 pair B(2p), B(2p + 1), broadcast from memory below */
        for (int j = 0; j < 4; j++) {
            y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride) + b;
            const __m256 dy = _mm256_set1_ps(y[j]->d);
            dd[j] = _mm256_mul_ps(dw, dy);
            dm[j] = _mm256_mul_ps(mw, dy);
            /* B(k) = bsums[2k] + bsums[2k + 1]: the sums of the 8 sub-blocks. */
            const __m256i bs = _mm256_loadu_si256((const __m256i *)y[j]->bsums);
            _mm_storeu_si128((__m128i *)B[j], _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));
        }
        for (int p = 0; p < 4; p++) {
            /* Chunk 0's products start the sums (8 adds of zero fewer). */
            __m256i slo[4], shi[4];
            {
                const __m256i q = _mm256_load_si256((const __m256i *)(P + p * 8 * 32));
                const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
                for (int j = 0; j < 4; j++) {
                    int32_t yl, yh;
                    memcpy(&yl, y[j]->qs + 64 * p, 4);
                    memcpy(&yh, y[j]->qs + 64 * p + 32, 4);
                    slo[j] = _mm256_maddubs_epi16(lo, _mm256_set1_epi32(yl));
                    shi[j] = _mm256_maddubs_epi16(hi, _mm256_set1_epi32(yh));
                }
            }
            for (int k = 1; k < 8; k++) {
                const __m256i q = _mm256_load_si256((const __m256i *)(P + (p * 8 + k) * 32));
                const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
                for (int j = 0; j < 4; j++) {
                    int32_t yl, yh;
                    memcpy(&yl, y[j]->qs + 64 * p + 4 * k, 4);
                    memcpy(&yh, y[j]->qs + 64 * p + 32 + 4 * k, 4);
                    slo[j] = _mm256_add_epi16(slo[j], _mm256_maddubs_epi16(lo, _mm256_set1_epi32(yl)));
                    shi[j] = _mm256_add_epi16(shi[j], _mm256_maddubs_epi16(hi, _mm256_set1_epi32(yh)));
                }
                /* The 8 int16 sums pinned to registers: left alone, GCC 12
                 * keeps one on the stack, and its store-to-load round trip
                 * every chunk bounded the loop (llm-bench-runtime -t 1 -N
                 * 512, Q4_K: median 54 -> 63 GMAC/s on a Zen 3). An empty
                 * asm changes no value, so no bits. */
                __asm__("" : "+x"(slo[0]), "+x"(slo[1]), "+x"(slo[2]), "+x"(slo[3]), "+x"(shi[0]), "+x"(shi[1]),
                        "+x"(shi[2]), "+x"(shi[3]));
            }
            const __m256i sc0 = _mm256_load_si256((const __m256i *)(P + 1024 + 64 * p));
            const __m256i sc1 = _mm256_load_si256((const __m256i *)(P + 1024 + 64 * p + 32));
            const __m256i mnp = _mm256_load_si256((const __m256i *)(P + 1280 + 32 * p));
            for (int j = 0; j < 4; j++) {
                const __m256i sq = _mm256_add_epi32(_mm256_madd_epi16(slo[j], sc0), _mm256_madd_epi16(shi[j], sc1));
                /* Pair p's mins products: mn_r[2p] B(2p) + mn_r[2p + 1] B(2p + 1)
                 * (B's pair broadcast by a load, not a vpermd: measured 3%
                 * faster, the shuffle competing with the adds). */
                const __m256i mq = _mm256_madd_epi16(mnp, _mm256_set1_epi32(B[j][p]));
                acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sq), dd[j], acc[j]);
                accm[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mq), dm[j], accm[j]);
            }
        }
    }
    for (int j = 0; j < 4; j++) _mm256_storeu_ps(out + (size_t)j * o_stride, _mm256_sub_ps(acc[j], accm[j]));
}

#if defined(__GNUC__) && (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)
#define LLM_KQ8_AVX512 1
#define KQ8_TARGET_AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))

#define KQ8_TARGET_ZMM __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))
/* q4k_dot8x4_packed on 512-bit registers, 16 weight rows per register:
 * ng (1 or 2) packed groups, the second at pk + pk_stride (with one, its
 * lanes repeat the first's and are not stored). Lane r is weight row r;
 * per chunk and activation row one vpdpbusd adds the four products q y,
 * the activation's 4 bytes broadcast from memory, so each sub-block's sum
 * is an int32 (at most 32 * 15 * 128 in magnitude); vpmulld by the row's
 * scale (the low int16 of the tile's sc dword) gives the same exact sc *
 * sum as vpmaddwd: the same integers, the same float chains, the same bits. */
KQ8_TARGET_ZMM static inline __attribute__((always_inline)) void
q4k_dotx4_zmm(int64_t n, const void *pk, size_t pk_stride, const void *a, size_t a_stride, float *out,
              size_t o_stride, const int NG) {
    __m512 acc[4], accm[4];
    for (int j = 0; j < 4; j++) acc[j] = accm[j] = _mm512_setzero_ps();
    const __m512i m4 = _mm512_set1_epi8(0x0F), lo16 = _mm512_set1_epi32(0xFFFF);
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const char *T0 = (const char *)pk + (size_t)b * Q4K_PK, *T1 = NG == 2 ? T0 + pk_stride : T0;
        const __m512 dw = zmm_tile2f(T0, T1, 1408), mw = zmm_tile2f(T0, T1, 1440);
        const llm_block_q8_k *y[4];
        __m512 dd[4], dm[4];
        int32_t B[4][4]; /* [j][p]: the int16 pair B(2p), B(2p + 1) */
        for (int j = 0; j < 4; j++) {
            y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride) + b;
            const __m512 dy = _mm512_set1_ps(y[j]->d);
            dd[j] = _mm512_mul_ps(dw, dy);
            dm[j] = _mm512_mul_ps(mw, dy);
            const __m256i bs = _mm256_loadu_si256((const __m256i *)y[j]->bsums);
            _mm_storeu_si128((__m128i *)B[j], _mm_hadd_epi16(_mm256_castsi256_si128(bs), _mm256_extracti128_si256(bs, 1)));
        }
        for (int p = 0; p < 4; p++) {
            __m512i slo[4], shi[4];
            for (int j = 0; j < 4; j++) slo[j] = shi[j] = _mm512_setzero_si512();
            for (int k = 0; k < 8; k++) {
                const __m512i q = zmm_tile2(T0, T1, (size_t)(p * 8 + k) * 32);
                const __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
                for (int j = 0; j < 4; j++) {
                    const int8_t *yq = y[j]->qs + 64 * p + 4 * k;
                    slo[j] = _mm512_dpbusd_epi32(slo[j], lo, zmm_bcast4(yq));
                    shi[j] = _mm512_dpbusd_epi32(shi[j], hi, zmm_bcast4(yq + 32));
                }
            }
            const __m512i sc0 = _mm512_and_si512(zmm_tile2(T0, T1, 1024 + 64 * (size_t)p), lo16);
            const __m512i sc1 = _mm512_and_si512(zmm_tile2(T0, T1, 1024 + 64 * (size_t)p + 32), lo16);
            const __m512i mnp = zmm_tile2(T0, T1, 1280 + 32 * (size_t)p);
            for (int j = 0; j < 4; j++) {
                const __m512i sq = _mm512_add_epi32(_mm512_mullo_epi32(slo[j], sc0), _mm512_mullo_epi32(shi[j], sc1));
                const __m512i mq = _mm512_madd_epi16(mnp, _mm512_set1_epi32(B[j][p]));
                acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sq), dd[j], acc[j]);
                accm[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(mq), dm[j], accm[j]);
            }
        }
    }
    __m512 r[4];
    for (int j = 0; j < 4; j++) r[j] = _mm512_sub_ps(acc[j], accm[j]);
    zmm_store16x4(out, o_stride, r, NG);
}

KQ8_TARGET_ZMM static void q4k_dot8x4_packed_zmm(int64_t n, const void *pk, const void *a, size_t a_stride,
                                                 float *out, size_t o_stride) {
    q4k_dotx4_zmm(n, pk, 0, a, a_stride, out, o_stride, 1);
}

KQ8_TARGET_ZMM static void q4k_dot16x4_packed_zmm(int64_t n, const void *pk, size_t pk_stride, const void *a,
                                                  size_t a_stride, float *out, size_t o_stride) {
    q4k_dotx4_zmm(n, pk, pk_stride, a, a_stride, out, o_stride, 2);
}

/* Eight Q4_K rows by four Q8_K rows (llama.cpp's gemm order) on 512-bit
 * registers: activation rows A and B (0 and 1, then 2 and 3) share each
 * register, so every integer instruction does two rows' work, and the tree
 * that sums lanes uses unpacks and adds instead of the (slow) hadd. The
 * tree leaves its totals in the layout "row group, act": 128-bit lane 0
 * holds weight rows 0..3 for A, lane 1 rows 0..3 for B, lane 2 rows 4..7
 * for A, lane 3 rows 4..7 for B; the scales, mins and accumulators use the
 * same layout, so each lane runs exactly the float chain of the 256-bit
 * form (same products, same FMAs, same order). */
KQ8_TARGET_AVX512 static void q4k_8x4_avx512(int64_t n, const char *w, size_t w_stride, const char *a,
                                             size_t a_stride, float *out, size_t o_stride) {
    __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()}, accm[2] = {acc[0], acc[1]};
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    /* From a 256-bit vector of 8 rows to the layout: lanes (lo, lo, hi, hi). */
    const __m512i lay = _mm512_set_epi32(7, 6, 5, 4, 7, 6, 5, 4, 3, 2, 1, 0, 3, 2, 1, 0);
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        __m512i s[8];
        __m128i mins[8];
        uint16_t dh[8], mh[8];
        for (int r = 0; r < 8; r++) {
            const llm_block_q4_k *x = (const llm_block_q4_k *)(w + (size_t)r * w_stride) + b;
            const __m256i sm = q4_k_scales_mins(x->scales);
            s[r] = _mm512_broadcast_i32x4(_mm256_castsi256_si128(sm));
            mins[r] = _mm256_extracti128_si256(sm, 1);
            dh[r] = x->d;
            mh[r] = x->dmin;
        }
        const __m512 dw = _mm512_permutexvar_ps(lay, _mm512_castps256_ps512(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)dh))));
        const __m512 mw = _mm512_permutexvar_ps(lay, _mm512_castps256_ps512(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)mh))));
        __m512i mn[4];
        {
            const __m256i v0 = _mm256_set_m128i(mins[4], mins[0]), v1 = _mm256_set_m128i(mins[5], mins[1]);
            const __m256i v2 = _mm256_set_m128i(mins[6], mins[2]), v3 = _mm256_set_m128i(mins[7], mins[3]);
            const __m256i t01l = _mm256_unpacklo_epi32(v0, v1), t23l = _mm256_unpacklo_epi32(v2, v3);
            const __m256i t01h = _mm256_unpackhi_epi32(v0, v1), t23h = _mm256_unpackhi_epi32(v2, v3);
            mn[0] = _mm512_permutexvar_epi32(lay, _mm512_castsi256_si512(_mm256_unpacklo_epi64(t01l, t23l)));
            mn[1] = _mm512_permutexvar_epi32(lay, _mm512_castsi256_si512(_mm256_unpackhi_epi64(t01l, t23l)));
            mn[2] = _mm512_permutexvar_epi32(lay, _mm512_castsi256_si512(_mm256_unpacklo_epi64(t01h, t23h)));
            mn[3] = _mm512_permutexvar_epi32(lay, _mm512_castsi256_si512(_mm256_unpackhi_epi64(t01h, t23h)));
        }
        const llm_block_q8_k *y[4];
        for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_k *)(a + (size_t)j * a_stride) + b;
        __m512 dd[2], dm[2];
        __m512i B[2]; /* 8 int16 block sums of A in lanes 0..3, of B in lanes 4..7 (as int32 pairs) */
        for (int h = 0; h < 2; h++) {
            const __m128 ya = _mm_set1_ps(y[2 * h]->d), yb = _mm_set1_ps(y[2 * h + 1]->d);
            const __m512 dy = _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_set_m128(yb, ya))));
            dd[h] = _mm512_mul_ps(dw, dy);
            dm[h] = _mm512_mul_ps(mw, dy);
            __m128i bs[2];
            for (int e = 0; e < 2; e++) {
                const __m256i v = _mm256_loadu_si256((const __m256i *)y[2 * h + e]->bsums);
                bs[e] = _mm_hadd_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
            }
            B[h] = _mm512_castsi256_si512(_mm256_set_m128i(bs[1], bs[0]));
        }
        for (int p = 0; p < 4; p++) {
            const __m512i i0 = _mm512_set1_epi16((short)(((4 * p + 1) << 8) | (4 * p)));
            const __m512i i1 = _mm512_set1_epi16((short)(((4 * p + 3) << 8) | (4 * p + 2)));
            __m512i Y0[2], Y1[2];
            for (int h = 0; h < 2; h++) {
                Y0[h] = _mm512_inserti64x4(
                    _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(y[2 * h]->qs + 64 * p))),
                    _mm256_loadu_si256((const __m256i *)(y[2 * h + 1]->qs + 64 * p)), 1);
                Y1[h] = _mm512_inserti64x4(
                    _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(y[2 * h]->qs + 64 * p + 32))),
                    _mm256_loadu_si256((const __m256i *)(y[2 * h + 1]->qs + 64 * p + 32)), 1);
            }
            __m512i v[2][8];
            for (int r = 0; r < 8; r++) {
                const llm_block_q4_k *x = (const llm_block_q4_k *)(w + (size_t)r * w_stride) + b;
                const __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(x->qs + 32 * p)));
                const __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
                const __m512i s0 = _mm512_shuffle_epi8(s[r], i0), s1 = _mm512_shuffle_epi8(s[r], i1);
                for (int h = 0; h < 2; h++) {
                    const __m512i z = _mm512_dpwssd_epi32(_mm512_setzero_si512(), s0, _mm512_maddubs_epi16(lo, Y0[h]));
                    v[h][r] = _mm512_dpwssd_epi32(z, s1, _mm512_maddubs_epi16(hi, Y1[h]));
                }
            }
            const __m512i bidx = _mm512_set_epi32(4 + p, 4 + p, 4 + p, 4 + p, p, p, p, p, 4 + p, 4 + p, 4 + p, 4 + p,
                                                  p, p, p, p);
            for (int h = 0; h < 2; h++) {
                __m512i t[4];
                for (int k = 0; k < 4; k++) {
                    t[k] = _mm512_add_epi32(_mm512_unpacklo_epi32(v[h][2 * k], v[h][2 * k + 1]),
                                            _mm512_unpackhi_epi32(v[h][2 * k], v[h][2 * k + 1]));
                }
                const __m512i b0 = _mm512_add_epi32(_mm512_unpacklo_epi64(t[0], t[1]), _mm512_unpackhi_epi64(t[0], t[1]));
                const __m512i b1 = _mm512_add_epi32(_mm512_unpacklo_epi64(t[2], t[3]), _mm512_unpackhi_epi64(t[2], t[3]));
                /* b0: lane k = rows 0..3 over 128-bit lane k of the inputs (A: k 0, 1; B: k 2, 3). */
                const __m512i sq = _mm512_add_epi32(_mm512_shuffle_i32x4(b0, b1, 0x88), _mm512_shuffle_i32x4(b0, b1, 0xDD));
                const __m512i mq = _mm512_madd_epi16(mn[p], _mm512_permutexvar_epi32(bidx, B[h]));
                acc[h] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sq), dd[h], acc[h]);
                accm[h] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(mq), dm[h], accm[h]);
            }
        }
    }
    for (int h = 0; h < 2; h++) {
        float t[16];
        _mm512_storeu_ps(t, _mm512_sub_ps(acc[h], accm[h]));
        for (int r = 0; r < 4; r++) {
            out[(size_t)(2 * h) * o_stride + (size_t)r] = t[r];
            out[(size_t)(2 * h + 1) * o_stride + (size_t)r] = t[4 + r];
            out[(size_t)(2 * h) * o_stride + 4 + (size_t)r] = t[8 + r];
            out[(size_t)(2 * h + 1) * o_stride + 4 + (size_t)r] = t[12 + r];
        }
    }
}

/* The 256-bit bodies once more with the EVEX vpdpwssd of AVX-512 VL + VNNI
 * (a CPU with AVX-512 VNNI need not have AVX-VNNI), for 1..3 activation rows. */
#define KQ8_ATTR KQ8_TARGET_AVX512
#define KQ8_NAME(f) f##_avx512vl
#define KQ8_MADD_ACC(acc, s, p) _mm256_dpwssd_epi32((acc), (s), (p))
#include "cpu/kernels_avx2_kq8_body.h"
#undef KQ8_ATTR
#undef KQ8_NAME
#undef KQ8_MADD_ACC

KQ8_TARGET_AVX512 static void dot8_q4_k_avx512(int64_t n, const void *w, size_t w_stride, const void *a,
                                               size_t a_stride, int n_a, float *out, size_t o_stride) {
    if (n_a >= 4) {
        q4k_8x4_avx512(n, w, w_stride, a, a_stride, out, o_stride);
    } else {
        switch (n_a) {
        case 1: q4k_gemv_rows(n, w, w_stride, a, out); break;
        case 2: q4k_8xN_avx512vl(n, w, w_stride, a, a_stride, 2, out, o_stride); break;
        default: q4k_8xN_avx512vl(n, w, w_stride, a, a_stride, 3, out, o_stride); break;
        }
    }
}

#endif

/* ---------------------------------------------------------------- Q6_K -- */

static void dot8_q6_k(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride, int n_a,
                      float *out, size_t o_stride) {
    switch (n_a) {
    case 1: q6k_8xN(n, w, w_stride, a, a_stride, 1, out, o_stride); break;
    case 2: q6k_8xN(n, w, w_stride, a, a_stride, 2, out, o_stride); break;
    case 3: q6k_8xN(n, w, w_stride, a, a_stride, 3, out, o_stride); break;
    default: q6k_8xN(n, w, w_stride, a, a_stride, 4, out, o_stride); break;
    }
}


#ifdef LLM_KQ8_VNNI
KQ8_TARGET_VNNI static void dot8_q6_k_vnni(int64_t n, const void *w, size_t w_stride, const void *a,
                                           size_t a_stride, int n_a, float *out, size_t o_stride) {
    switch (n_a) {
    case 1: q6k_8xN_vnni(n, w, w_stride, a, a_stride, 1, out, o_stride); break;
    case 2: q6k_8xN_vnni(n, w, w_stride, a, a_stride, 2, out, o_stride); break;
    case 3: q6k_8xN_vnni(n, w, w_stride, a, a_stride, 3, out, o_stride); break;
    default: q6k_8xN_vnni(n, w, w_stride, a, a_stride, 4, out, o_stride); break;
    }
}

#endif

llm__vec_dot8_fn llm__kq_dot8_variant(llm_dtype t, int vnni) {
    if (t != LLM_DTYPE_Q4_K && t != LLM_DTYPE_Q6_K) {
        return NULL;
    }
    if (vnni == 2) {
#ifdef LLM_KQ8_AVX512
        if (t == LLM_DTYPE_Q4_K && cpu_has_avx512_vnni()) {
            return dot8_q4_k_avx512;
        }
#endif
        return NULL;
    }
    if (!vnni) {
        return t == LLM_DTYPE_Q4_K ? dot8_q4_k : dot8_q6_k;
    }
#ifdef LLM_KQ8_VNNI
    if (cpu_has_avx_vnni()) {
        return t == LLM_DTYPE_Q4_K ? dot8_q4_k_vnni : dot8_q6_k_vnni;
    }
#endif
    return NULL;
}

llm__vec_dot8x4_packed_fn llm__kq_packed_variant(llm_dtype t, int which) {
    if (t == LLM_DTYPE_Q6_K || t == LLM_DTYPE_Q5_K || t == LLM_DTYPE_Q3_K || t == LLM_DTYPE_Q2_K) {
        return llm__kqt_packed_variant(t == LLM_DTYPE_Q5_K || t == LLM_DTYPE_Q2_K, which);
    }
    if (t != LLM_DTYPE_Q4_K) {
        return NULL;
    }
    if (which == 0) {
        return q4k_dot8x4_packed;
    }
#ifdef LLM_KQ8_AVX512
    if (which == 1 && cpu_has_avx512_vnni()) {
        return q4k_dot8x4_packed_zmm;
    }
#endif
    return NULL;
}

llm__vec_dot16x4_packed_fn llm__kq_packed16_variant(llm_dtype t) {
    if (t == LLM_DTYPE_Q6_K || t == LLM_DTYPE_Q5_K || t == LLM_DTYPE_Q3_K || t == LLM_DTYPE_Q2_K) {
        return llm__kqt_packed16_variant(t == LLM_DTYPE_Q5_K || t == LLM_DTYPE_Q2_K);
    }
#ifdef LLM_KQ8_AVX512
    if (t == LLM_DTYPE_Q4_K && cpu_has_avx512_vnni()) {
        return q4k_dot16x4_packed_zmm;
    }
#endif
    (void)t;
    return NULL;
}

void llm__cpu_kernels_avx2_kq8(llm__cpu_kernels *k) {
    /* Prompt passes (8 or more activation rows) multiply packed tiles,
     * whatever the dot8 (Q4_K's here, Q6_K's in kernels_avx2_kq_tile.c). On
     * a Zen 5 (AVX-512 + AVX-VNNI), llm-bench-runtime -t 1 -N 512 measured,
     * in G multiply-adds/s: Q4_K's AVX-512 dot8 83, packed 133 (AVX2) and
     * 235-247 (AVX-512, dot16x4); Q6_K's AVX-VNNI dot8 73. */
    for (int v = 0; v < 2; v++) {
        const llm_dtype t = v ? LLM_DTYPE_Q6_K : LLM_DTYPE_Q4_K;
        llm__vec_dot8_fn f = llm__kq_dot8_variant(t, 2);
        f = f ? f : llm__kq_dot8_variant(t, 1);
        f = f ? f : llm__kq_dot8_variant(t, 0);
        if (t == LLM_DTYPE_Q6_K && k->tiled[t].dot == llm__q6_k_dot_tiled) {
            k->tiled[t].dot8 = f;
        }
        if (t == LLM_DTYPE_Q4_K && k->rows8[t].dot == llm__q4_k_dot_repack_gemv) {
            struct llm__dot_pair *pr = &k->rows8[t];
            llm__vec_dot8x4_packed_fn prod = llm__kq_packed_variant(t, 1);
            pr->dot8 = f;
            pr->pack8 = q4k_pack8;
            pr->pack8_bytes = q4k_pack8_bytes;
            pr->dot8x4_packed = prod ? prod : llm__kq_packed_variant(t, 0);
            pr->dot16x4_packed = llm__kq_packed16_variant(t);
        }
    }
}

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

void llm__cpu_kernels_avx2_kq8(llm__cpu_kernels *k) { (void)k; }
llm__vec_dot8_fn llm__kq_dot8_variant(llm_dtype t, int vnni) {
    (void)t;
    (void)vnni;
    return NULL;
}
llm__vec_dot8x4_packed_fn llm__kq_packed_variant(llm_dtype t, int which) {
    (void)t;
    (void)which;
    return NULL;
}
llm__vec_dot16x4_packed_fn llm__kq_packed16_variant(llm_dtype t) {
    (void)t;
    return NULL;
}

#endif
