/*
 * cpu/kernels/prep_q4_k_x86_512.c -- the Q4_K weight prepared at load (prep_q4_k.h) and its
 * AVX-512 VNNI product, in the orders of the rows8 pair (gemm / gemv).
 * Compiled with AVX-512 (F, BW, DQ, VL, VNNI: sources.cmake);
 * installed by llm__cpu_kernels_prep_kquant_x86 (prep_kquant_x86_256.c)
 * where the CPU has them. The shared layout machinery: prep_kquant.h.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVX512VNNI__) && defined(__GNUC__) && \
    (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)

#include "cpu/kernels/prep_kquant.h"
#include "cpu/kernels/prep_q4_k.h"


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

void llm__prep_q4_k_x86_512(struct llm__prep_kernels *pk) { *pk = (struct llm__prep_kernels){.group_bytes = q4kr_group_bytes,
                                       .repack = q4kr_repack,
                                       .dot = q4kr_dot,
                                       .max_a = 4,
                                       .unpack_row = q4kr_unpack_row}; }

#else /* not built with AVX-512 VNNI: never installed */

void llm__prep_q4_k_x86_512(struct llm__prep_kernels *pk) { (void)pk; }

#endif
