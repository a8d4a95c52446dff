/*
 * cpu/kernels/kquant_tile_x86_256.c -- prompt passes (8 or more activation rows)
 * of Q6_K, Q5_K, Q3_K and Q2_K weights in llama.cpp's tiled order, on
 * packed tiles (cpu/kernels/kquant_tile.h): 8 weight rows packed once per matmul, the
 * quants decoded to unsigned bytes, so that int32 lane r of every vector is
 * weight row r and no bit is unpacked in the product.
 *
 * The products (one per kind: offsets folded into S1, or mins kept as S2):
 *   AVX2, 8 rows: per 16-element sub-block and activation row, vpmaddubsw
 *     of each chunk with the activation's 4 bytes broadcast puts two
 *     products u y in each int16 (at most 63 * 128); two chunks summed in
 *     int16 stay within 4 * 63 * 128 = 32256, so a sub-block is two such
 *     sums, each scaled into int32 by vpmaddwd by sc; the bsums term is one
 *     vpmaddwd per pair of sub-blocks.
 *   AVX-512 VNNI, 8 or 16 rows (two tiles, one per 256-bit half): four
 *     vpdpbusd per sub-block (at most 16 * 63 * 128 in int32), then vpmulld
 *     by its scale (kernels/kquant_tile_x86_512.c).
 * All exact, so lane r ends with the S1 (and S2) of row r and the float
 * chain is llama.cpp's: the same bits as the types' tiled dot4.
 *
 * The tiles beat the types' dot8 (see docs/PERFORMANCE.md). Q6_K and Q5_K
 * are packed here; Q3_K and Q2_K beside their
 * other kernels (kernels/q3_k_x86_256.c, kernels/q2_k_x86_256.c); weights prepared
 * at load are packed from their own layout (kernels/prep_q*_k_x86_512.c).
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
#include "cpu/kernels/kquant_tile.h"
#include "dtype/blocks.h"

/* ------------------------------------------------------------ products -- */

static inline __attribute__((always_inline)) void kqt_dot8x4(int64_t n, const void *pk, const void *a, size_t a_stride,
                                                            float *out, size_t o_stride, const int MINS) {
    __m256 acc[4];
    for (int j = 0; j < 4; j++) acc[j] = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const char *P = (const char *)pk + (size_t)b * KQT_PK;
        const llm_block_q8_k *y[4];
        __m256i s[4], m[4];
        for (int j = 0; j < 4; j++) {
            y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride) + b;
            s[j] = m[j] = _mm256_setzero_si256();
        }
        for (int k = 0; k < 8; k++) {
            /* bsums 2k, 2k + 1 against the pair's offsets or mins */
            const __m256i o = _mm256_load_si256((const __m256i *)(P + KQT_OFF + 32 * k));
            for (int j = 0; j < 4; j++) {
                const __m256i t = _mm256_madd_epi16(o, ymm_bcast4(y[j]->bsums + 2 * k));
                if (MINS) {
                    m[j] = _mm256_add_epi32(m[j], t);
                } else {
                    s[j] = _mm256_add_epi32(s[j], t);
                }
            }
            for (int t = 2 * k; t < 2 * k + 2; t++) {
                const __m256i *q = (const __m256i *)(P + 128 * t);
                const __m256i q0 = _mm256_load_si256(q), q1 = _mm256_load_si256(q + 1);
                const __m256i q2 = _mm256_load_si256(q + 2), q3 = _mm256_load_si256(q + 3);
                const __m256i sc = _mm256_load_si256((const __m256i *)(P + KQT_SC + 32 * t));
                for (int j = 0; j < 4; j++) {
                    const int8_t *yq = y[j]->qs + 16 * t;
                    const __m256i lo = _mm256_add_epi16(_mm256_maddubs_epi16(q0, ymm_bcast4(yq)),
                                                        _mm256_maddubs_epi16(q1, ymm_bcast4(yq + 4)));
                    const __m256i hi = _mm256_add_epi16(_mm256_maddubs_epi16(q2, ymm_bcast4(yq + 8)),
                                                        _mm256_maddubs_epi16(q3, ymm_bcast4(yq + 12)));
                    s[j] = _mm256_add_epi32(s[j], _mm256_add_epi32(_mm256_madd_epi16(lo, sc), _mm256_madd_epi16(hi, sc)));
                }
            }
        }
        const __m256 dw = _mm256_load_ps((const float *)(P + KQT_D));
        const __m256 mw = _mm256_load_ps((const float *)(P + KQT_DMIN));
        for (int j = 0; j < 4; j++) {
            __m256 r = _mm256_mul_ps(dw, _mm256_cvtepi32_ps(s[j]));
            if (MINS) r = _mm256_fnmadd_ps(mw, _mm256_cvtepi32_ps(m[j]), r);
            acc[j] = _mm256_fmadd_ps(r, _mm256_set1_ps(y[j]->d), acc[j]);
        }
    }
    for (int j = 0; j < 4; j++) _mm256_storeu_ps(out + (size_t)j * o_stride, acc[j]);
}

static void kqt_dot8x4_off(int64_t n, const void *pk, const void *a, size_t a_stride, float *out, size_t o_stride) {
    kqt_dot8x4(n, pk, a, a_stride, out, o_stride, 0);
}

static void kqt_dot8x4_mins(int64_t n, const void *pk, const void *a, size_t a_stride, float *out, size_t o_stride) {
    kqt_dot8x4(n, pk, a, a_stride, out, o_stride, 1);
}

#if defined(__GNUC__) && (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)
#define LLM_KQT_AVX512 1 /* the 512-bit products (kquant_tile_x86_512.c) need this compiler */
#endif

llm__vec_dot8x4_packed_fn llm__kqt_packed_variant(int mins, int which) {
    if (which == 0) return mins ? kqt_dot8x4_mins : kqt_dot8x4_off;
#ifdef LLM_KQT_AVX512
    if (which == 1 && cpu_has_avx512_vnni()) return mins ? llm__kqt_dot8x4_mins_x86_512 : llm__kqt_dot8x4_off_x86_512;
#endif
    return NULL;
}

llm__vec_dot16x4_packed_fn llm__kqt_packed16_variant(int mins) {
#ifdef LLM_KQT_AVX512
    if (cpu_has_avx512_vnni()) return mins ? llm__kqt_dot16x4_mins_x86_512 : llm__kqt_dot16x4_off_x86_512;
#endif
    (void)mins;
    return NULL;
}

void llm__kqt_install(struct llm__dot_pair *pr, llm__pack8_fn pack8, int mins, unsigned cpu) {
    llm__vec_dot8x4_packed_fn prod = (cpu & LLM__CPU_AVX512_VNNI) ? llm__kqt_packed_variant(mins, 1) : NULL;
    pr->pack8 = pack8;
    pr->pack8_bytes = kqt_pack8_bytes;
    pr->dot8x4_packed = prod ? prod : llm__kqt_packed_variant(mins, 0);
    pr->dot16x4_packed = (cpu & LLM__CPU_AVX512_VNNI) ? llm__kqt_packed16_variant(mins) : NULL;
}

/* ------------------------------------------------------------- packers -- */

static void q6k_pack8(int64_t n, const void *w, size_t w_stride, void *dst) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(0x03);
    const int64_t nb = n / LLM_QK_K;
    for (int64_t b = 0; b < nb; b++) {
        prefetch_next_group(w, w_stride, 8, b, nb);
        char *P = (char *)dst + (size_t)b * KQT_PK;
        const llm_block_q6_k *x[8];
        for (int r = 0; r < 8; r++) x[r] = (const llm_block_q6_k *)((const char *)w + (size_t)r * w_stride) + b;
        for (int G = 0; G < 8; G++) {
            /* elements 128 h + 32 g + l: the low nibble (g < 2) or high one of
             * ql[64 h + 32 (g & 1) + l], bits 2g, 2g + 1 of qh[32 h + l] above */
            const int h = G / 4, g = G % 4;
            __m256i v[8];
            for (int r = 0; r < 8; r++) {
                __m256i lo = _mm256_loadu_si256((const __m256i *)(x[r]->ql + 64 * h + 32 * (g & 1)));
                lo = g < 2 ? _mm256_and_si256(lo, m4) : _mm256_and_si256(_mm256_srli_epi16(lo, 4), m4);
                const __m256i qh = _mm256_loadu_si256((const __m256i *)(x[r]->qh + 32 * h));
                const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * g), m3);
                v[r] = _mm256_or_si256(lo, _mm256_slli_epi16(hb, 4));
            }
            kqt_store_group(P, G, v);
        }
        for (int r = 0; r < 8; r++) {
            int16_t sc[16], off[16];
            for (int t = 0; t < 16; t++) {
                sc[t] = x[r]->scales[t];
                off[t] = (int16_t)(-32 * sc[t]);
            }
            kqt_put_scales(P, r, sc, off, _cvtsh_ss(x[r]->d), 0.0f);
        }
    }
}

static void q5k_pack8(int64_t n, const void *w, size_t w_stride, void *dst) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(0x01);
    const int64_t nb = n / LLM_QK_K;
    for (int64_t b = 0; b < nb; b++) {
        prefetch_next_group(w, w_stride, 8, b, nb);
        char *P = (char *)dst + (size_t)b * KQT_PK;
        const llm_block_q5_k *x[8];
        for (int r = 0; r < 8; r++) x[r] = (const llm_block_q5_k *)((const char *)w + (size_t)r * w_stride) + b;
        for (int G = 0; G < 8; G++) {
            /* sub-block G: the low (G even) or high nibbles of qs[32 (G / 2) + l], bit G of qh[l] as bit 4 */
            __m256i v[8];
            for (int r = 0; r < 8; r++) {
                const __m256i q = _mm256_loadu_si256((const __m256i *)(x[r]->qs + 32 * (G / 2)));
                const __m256i nib = (G & 1) ? _mm256_and_si256(_mm256_srli_epi16(q, 4), m4) : _mm256_and_si256(q, m4);
                const __m256i qh = _mm256_loadu_si256((const __m256i *)x[r]->qh);
                const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(qh, G), one);
                v[r] = _mm256_or_si256(nib, _mm256_slli_epi16(hb, 4));
            }
            kqt_store_group(P, G, v);
        }
        for (int r = 0; r < 8; r++) {
            int16_t sm[16], sc[16], mn[16]; /* sm: the 8 scales, then the 8 mins */
            _mm256_storeu_si256((__m256i *)sm, q4_k_scales_mins(x[r]->scales));
            for (int t = 0; t < 16; t++) {
                sc[t] = sm[t / 2];
                mn[t] = sm[8 + t / 2];
            }
            kqt_put_scales(P, r, sc, mn, _cvtsh_ss(x[r]->d), _cvtsh_ss(x[r]->dmin));
        }
    }
}

void llm__cpu_kernels_kquant_tile_x86(llm__cpu_kernels *k, unsigned cpu) {
    if (k->tiled[LLM_DTYPE_Q6_K].dot == llm__q6_k_dot_tiled) llm__kqt_install(&k->tiled[LLM_DTYPE_Q6_K], q6k_pack8, 0, cpu);
    if (k->tiled[LLM_DTYPE_Q5_K].dot == llm__q5_k_dot_tiled) llm__kqt_install(&k->tiled[LLM_DTYPE_Q5_K], q5k_pack8, 1, cpu);
}

#else /* no AVX2 build: never selected (llm__cpu_has_avx2 returns 0) */

void llm__cpu_kernels_kquant_tile_x86(llm__cpu_kernels *k, unsigned cpu) {
    (void)k;
    (void)cpu;
}
llm__vec_dot8x4_packed_fn llm__kqt_packed_variant(int mins, int which) {
    (void)mins;
    (void)which;
    return NULL;
}
llm__vec_dot16x4_packed_fn llm__kqt_packed16_variant(int mins) {
    (void)mins;
    return NULL;
}
void llm__kqt_install(struct llm__dot_pair *pr, llm__pack8_fn pack8, int mins, unsigned cpu) {
    (void)cpu;
    (void)pr;
    (void)pack8;
    (void)mins;
}

#endif
