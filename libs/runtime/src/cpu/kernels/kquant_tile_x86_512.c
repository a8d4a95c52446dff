/*
 * cpu/kernels/kquant_tile_x86_512.c -- the products on the packed K-quant
 * tiles (kquant_tile.h: Q6_K, Q5_K, Q3_K, Q2_K) with AVX-512 VNNI (compiled
 * with it: sources.cmake), 8 or 16 weight rows at once; the same bits as
 * kquant_tile_x86_256.c's, which picks them where the CPU has AVX-512 VNNI.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVX512VNNI__) && \
    defined(__GNUC__) && (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)

#include <immintrin.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "cpu/kernels/x86_512.h"
#include "cpu/kernels/kquant_tile.h"
#include "dtype/blocks.h"

#define KQT_TARGET_ZMM __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))

/* kqt_dot8x4 on 512-bit registers: NG tiles (the second at pk + pk_stride;
 * with one, the high half repeats the first and is not stored). */
KQT_TARGET_ZMM static inline __attribute__((always_inline)) void
kqt_dotx4_zmm(int64_t n, const void *pk, size_t pk_stride, const void *a, size_t a_stride, float *out,
              size_t o_stride, const int NG, const int MINS) {
    __m512 acc[4];
    for (int j = 0; j < 4; j++) acc[j] = _mm512_setzero_ps();
    for (int64_t b = 0; b < n / LLM_QK_K; b++) {
        const char *T0 = (const char *)pk + (size_t)b * KQT_PK, *T1 = NG == 2 ? T0 + pk_stride : T0;
        const llm_block_q8_k *y[4];
        __m512i s[4], m[4];
        for (int j = 0; j < 4; j++) {
            y[j] = (const llm_block_q8_k *)((const char *)a + (size_t)j * a_stride) + b;
            s[j] = m[j] = _mm512_setzero_si512();
        }
        for (int k = 0; k < 8; k++) {
            const __m512i o = zmm_tile2(T0, T1, KQT_OFF + 32 * (size_t)k);
            for (int j = 0; j < 4; j++) {
                const __m512i t = _mm512_madd_epi16(o, zmm_bcast4(y[j]->bsums + 2 * k));
                if (MINS) {
                    m[j] = _mm512_add_epi32(m[j], t);
                } else {
                    s[j] = _mm512_add_epi32(s[j], t);
                }
            }
            for (int t = 2 * k; t < 2 * k + 2; t++) {
                __m512i q[4];
                for (int i = 0; i < 4; i++) q[i] = zmm_tile2(T0, T1, 128 * (size_t)t + 32 * (size_t)i);
                const __m512i sc = _mm512_srai_epi32(zmm_tile2(T0, T1, KQT_SC + 32 * (size_t)t), 16);
                for (int j = 0; j < 4; j++) {
                    const int8_t *yq = y[j]->qs + 16 * t;
                    __m512i u = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q[0], zmm_bcast4(yq));
                    u = _mm512_dpbusd_epi32(u, q[1], zmm_bcast4(yq + 4));
                    u = _mm512_dpbusd_epi32(u, q[2], zmm_bcast4(yq + 8));
                    u = _mm512_dpbusd_epi32(u, q[3], zmm_bcast4(yq + 12));
                    s[j] = _mm512_add_epi32(s[j], _mm512_mullo_epi32(u, sc));
                }
            }
        }
        const __m512 dw = zmm_tile2f(T0, T1, KQT_D), mw = zmm_tile2f(T0, T1, KQT_DMIN);
        for (int j = 0; j < 4; j++) {
            __m512 r = _mm512_mul_ps(dw, _mm512_cvtepi32_ps(s[j]));
            if (MINS) r = _mm512_fnmadd_ps(mw, _mm512_cvtepi32_ps(m[j]), r);
            acc[j] = _mm512_fmadd_ps(r, _mm512_set1_ps(y[j]->d), acc[j]);
        }
    }
    zmm_store16x4(out, o_stride, acc, NG);
}

void llm__kqt_dot8x4_off_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                                              size_t o_stride) {
    kqt_dotx4_zmm(n, pk, 0, a, a_stride, out, o_stride, 1, 0);
}

void llm__kqt_dot8x4_mins_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                                               size_t o_stride) {
    kqt_dotx4_zmm(n, pk, 0, a, a_stride, out, o_stride, 1, 1);
}

void llm__kqt_dot16x4_off_x86_512(int64_t n, const void *pk, size_t pk_stride, const void *a,
                                               size_t a_stride, float *out, size_t o_stride) {
    kqt_dotx4_zmm(n, pk, pk_stride, a, a_stride, out, o_stride, 2, 0);
}

void llm__kqt_dot16x4_mins_x86_512(int64_t n, const void *pk, size_t pk_stride, const void *a,
                                                size_t a_stride, float *out, size_t o_stride) {
    kqt_dotx4_zmm(n, pk, pk_stride, a, a_stride, out, o_stride, 2, 1);
}



#else /* not built with AVX-512 VNNI: never installed */

void llm__kqt_dot8x4_off_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                                 size_t o_stride) {
    (void)n, (void)pk, (void)a, (void)a_stride, (void)out, (void)o_stride;
}
void llm__kqt_dot8x4_mins_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                                  size_t o_stride) {
    (void)n, (void)pk, (void)a, (void)a_stride, (void)out, (void)o_stride;
}
void llm__kqt_dot16x4_off_x86_512(int64_t n, const void *pk, size_t pk_stride, const void *a, size_t a_stride,
                                  float *out, size_t o_stride) {
    (void)n, (void)pk, (void)pk_stride, (void)a, (void)a_stride, (void)out, (void)o_stride;
}
void llm__kqt_dot16x4_mins_x86_512(int64_t n, const void *pk, size_t pk_stride, const void *a, size_t a_stride,
                                   float *out, size_t o_stride) {
    (void)n, (void)pk, (void)pk_stride, (void)a, (void)a_stride, (void)out, (void)o_stride;
}

#endif
