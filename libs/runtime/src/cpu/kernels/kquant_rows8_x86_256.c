/*
 * cpu/kernels/kquant_rows8_x86_256.c -- eight K-quant weight rows at once (kernels.h
 * dot8) for the two types of a Q4_K_M file: Q4_K in llama.cpp's repacked
 * order (its gemv for 1..3 activation rows, its gemm for 4) and Q6_K in its
 * tiled order. Same bits as the pairs' dot / dot4 in kernels/kquant_x86_256.c, which
 * describes the orders; here only how the work is shared changes.
 *
 * The pattern of kernels/q4_0_x86_256.c: per super-block, each row's exact
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
 * same). Q4_K also has AVX-512 forms (kernels/kquant_rows8_x86_512.c: two
 * activation rows per register for four, q4k_8x4_avx512), again the same bits. The
 * registry takes the widest form the CPU has. One activation row goes to
 * the single-row gemv kernel (faster there, measured); two or three use the
 * 8-row form of the gemv order (each row's pairs summed in its lanes, one
 * tree per super-block). Prompt passes of both types multiply packed tiles
 * instead, whichever dot8 is registered (llm__pack8_fn; the packed sections
 * below): the weight rows interleaved once per matmul so
 * that lane r of every vector is row r and no tree is needed.
 *
 * Files: the 256-bit bodies are kernels/kquant_rows8_body.h, included with
 * three multiply-accumulate forms: AVX2 (vpmaddwd + vpaddd) and AVX-VNNI
 * (vpdpwssd, VEX) here, AVX-512 VL + VNNI (vpdpwssd, EVEX: 2..3 activation
 * rows where the 512-bit form applies) in kquant_rows8_x86_512.c.
 *
 * Compiled with -mavx2 -mfma -mf16c (sources.cmake), installed by
 * llm__cpu_kernels_x86() once the CPU has been checked.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "cpu/kernels/x86_512.h"
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
#include "cpu/kernels/kquant_rows8_body.h"
#undef KQ8_ATTR
#undef KQ8_NAME
#undef KQ8_MADD_ACC

#ifdef LLM_KQ8_VNNI
#define KQ8_ATTR KQ8_TARGET_VNNI
#define KQ8_NAME(f) f##_vnni
#define KQ8_MADD_ACC(acc, s, p) _mm256_dpwssd_avx_epi32((acc), (s), (p))
#include "cpu/kernels/kquant_rows8_body.h"
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
#define Q4K_PK LLM_Q4K_PK /* cpu/kernels/x86_512.h */

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
#define LLM_KQ8_AVX512 1 /* the 512-bit kernels (kquant_rows8_x86_512.c) need this compiler */
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
            return llm__q4k_dot8_x86_512;
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
        return llm__q4k_dot8x4_packed_x86_512;
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
        return llm__q4k_dot16x4_packed_x86_512;
    }
#endif
    (void)t;
    return NULL;
}

void llm__cpu_kernels_kquant_rows8_x86(llm__cpu_kernels *k, unsigned cpu) {
    /* Prompt passes (8 or more activation rows) multiply packed tiles,
     * whatever the dot8 (Q4_K's here, Q6_K's in kernels/kquant_tile_x86_256.c):
     * they beat every dot8, the 512-bit dot16x4 most (see
     * docs/PERFORMANCE.md). */
    for (int v = 0; v < 2; v++) {
        const llm_dtype t = v ? LLM_DTYPE_Q6_K : LLM_DTYPE_Q4_K;
        llm__vec_dot8_fn f = (cpu & LLM__CPU_AVX512_VNNI) ? llm__kq_dot8_variant(t, 2) : NULL;
        f = f ? f : (cpu & LLM__CPU_AVX_VNNI) ? llm__kq_dot8_variant(t, 1) : NULL;
        f = f ? f : llm__kq_dot8_variant(t, 0);
        if (t == LLM_DTYPE_Q6_K && k->tiled[t].dot == llm__q6_k_dot_tiled) {
            k->tiled[t].dot8 = f;
        }
        if (t == LLM_DTYPE_Q4_K && k->rows8[t].dot == llm__q4_k_dot_repack_gemv) {
            struct llm__dot_pair *pr = &k->rows8[t];
            llm__vec_dot8x4_packed_fn prod = (cpu & LLM__CPU_AVX512_VNNI) ? llm__kq_packed_variant(t, 1) : NULL;
            pr->dot8 = f;
            pr->pack8 = q4k_pack8;
            pr->pack8_bytes = q4k_pack8_bytes;
            pr->dot8x4_packed = prod ? prod : llm__kq_packed_variant(t, 0);
            pr->dot16x4_packed = (cpu & LLM__CPU_AVX512_VNNI) ? llm__kq_packed16_variant(t) : NULL;
        }
    }
}

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

void llm__cpu_kernels_kquant_rows8_x86(llm__cpu_kernels *k, unsigned cpu) {
    (void)k;
    (void)cpu;
}
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
