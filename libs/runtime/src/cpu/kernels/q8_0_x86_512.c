/*
 * cpu/kernels/q8_0_x86_512.c -- the Q8_0 kernels in 512-bit registers (AVX-512
 * F, BW, VL, VNNI; compiled with them: sources.cmake): the dot2x4 of
 * q8_0_x86_256.c with two chains per register, and the Q8_0 weight prepared
 * at load with its product. Same bits as the 256-bit kernels; installed by
 * llm__cpu_kernels_q8_0_x86 where the CPU has AVX-512 VNNI.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVX512VNNI__) && \
    defined(__GNUC__) && (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)

#include <immintrin.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "cpu/kernels/x86_512.h"
#include "dtype/blocks.h"

#define Q8_0_AVX512_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))

/* dot2x4 on 512-bit registers: each accumulator holds two of the eight
 * 8-lane chains, (row 0, act j) in its low half and (row 1, act j) in its
 * high half, so every instruction advances two chains with exactly the
 * operations of the 256-bit form. vpsignb has no 512-bit form: |x| by
 * vpabsb, and y negated (wrapping, as vpsignb: -(-128) stays -128) under the
 * mask of x < 0; where x == 0, |x| == 0 makes the product 0 as vpsignb's
 * zeroing does. The scales d_x d_y go to their halves by one permute. */
void llm__q8_0_dot2x4_x86_512(int64_t n, const void *w, size_t w_stride, const void *a,
                                                  size_t a_stride, const float *sc, float out[2][4]) {
    const llm_block_q8_0 *x0 = w, *x1 = (const llm_block_q8_0 *)((const char *)w + w_stride);
    const llm_block_q8_0 *y0 = a, *y1 = (const llm_block_q8_0 *)((const char *)a + a_stride);
    const llm_block_q8_0 *y2 = (const llm_block_q8_0 *)((const char *)a + 2 * a_stride);
    const llm_block_q8_0 *y3 = (const llm_block_q8_0 *)((const char *)a + 3 * a_stride);
    __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    const __m512i zero = _mm512_setzero_si512();
    /* Lane i of permute index j: dd[j] (low half) or dd[4 + j] (high half). */
    const __m512i i0 = _mm512_set_epi32(4, 4, 4, 4, 4, 4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i one = _mm512_set1_epi32(1);
    const __m512i i1 = _mm512_add_epi32(i0, one), i2 = _mm512_add_epi32(i1, one), i3 = _mm512_add_epi32(i2, one);
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)x0[b].qs)),
                                             _mm256_loadu_si256((const __m256i *)x1[b].qs), 1);
        const __m512i aq = _mm512_abs_epi8(q);
        const __mmask64 neg = _mm512_movepi8_mask(q);
        const __m128 dy = _mm_loadu_ps(sc + 8 * b);
        /* [d0 dy0..3, d1 dy0..3] in lanes 0..7 */
        const __m256 dd = _mm256_set_m128(_mm_mul_ps(_mm_set1_ps(h2f(x1[b].d)), dy), _mm_mul_ps(_mm_set1_ps(h2f(x0[b].d)), dy));
        const __m512 ddz = _mm512_castps256_ps512(dd);
#define Q8_0_Z(y, idx, c)                                                                                         \
    {                                                                                                           \
        const __m512i qy = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)y[b].qs));                \
        const __m512i sy = _mm512_mask_sub_epi8(qy, neg, zero, qy);                                              \
        const __m512 f = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(zero, aq, sy));                                 \
        c = _mm512_fmadd_ps(_mm512_permutexvar_ps(idx, ddz), f, c);                                              \
    }
        Q8_0_Z(y0, i0, c0)
        Q8_0_Z(y1, i1, c1)
        Q8_0_Z(y2, i2, c2)
        Q8_0_Z(y3, i3, c3)
#undef Q8_0_Z
    }
    const __m512 c[4] = {c0, c1, c2, c3};
    for (int j = 0; j < 4; j++) {
        out[0][j] = hsum8(_mm512_castps512_ps256(c[j]));
        out[1][j] = hsum8(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(c[j]), 1)));
    }
}

/* ------------------------------------------------ prepared weights -- */

/* A Q8_0 weight prepared at load (kernels.h prep): per group of 16 rows, per
 * pair of blocks 2p, 2p + 1 (Q80R_PAIR bytes, 64-byte aligned): block 2p's
 * bytes as [16 rows][32] x + 128 (x ^ 0x80: rows 2i and 2i + 1 side by side
 * in one 64-byte vector), then block 2p + 1's, then the 16 rows' fp16 d of
 * block 2p, then of 2p + 1. 34 bytes per row and block, as in the file (an
 * odd last block pads its pair).
 *
 * The product keeps llm__q8_0_dot2x4_x86_512's chains: a register holds (row 2i,
 * act j) in its low half and (row 2i + 1, act j) in its high half, each 8
 * lanes, lane k the exact sum of the products of bytes 4k .. 4k + 3. Here
 * vpdpbusd takes the stored x + 128 unsigned and y signed, starting from
 * the activation's aux, -128 (y[4k] + .. + y[4k + 3]): sum (x + 128) y -
 * 128 sum y = sum x y, exact. (vpsignb's product |x| sign(y, x) differs
 * from x y only for y = -128, which the Q8_0 quantizer never writes: it
 * rounds to -127..127, and this product only sees its rows.) Then the same
 * acc = fma(d_x d_y, float(lanes), acc) on 8 lanes and hsum8 of each half:
 * the same bits. */
#define Q80R_PAIR 1088
/* The prefetch distance of a streaming pass (as Q40R_PF, kernels/q4_0_x86_256.c). */
#define Q80R_PF 8704

static size_t q80r_group_bytes(int64_t K) { return (size_t)((K / LLM_QK32 + 1) / 2) * Q80R_PAIR; }

static void q80r_repack(int64_t K, const void *w, size_t w_stride, void *grp) {
    uint8_t *G = grp;
    memset(G, 0, q80r_group_bytes(K));
    for (int64_t b = 0; b < K / LLM_QK32; b++) {
        uint8_t *T = G + (size_t)(b / 2) * Q80R_PAIR, *Q = T + (b & 1) * 512, *D = T + 1024 + (b & 1) * 32;
        for (int r = 0; r < 16; r++) {
            const llm_block_q8_0 *x = (const llm_block_q8_0 *)((const char *)w + (size_t)r * w_stride) + b;
            for (int i = 0; i < 32; i++) Q[32 * r + i] = (uint8_t)((uint8_t)x->qs[i] ^ 0x80u);
            memcpy(D + 2 * r, &x->d, 2);
        }
    }
}

static void q80r_unpack_row(int64_t K, const void *grp, int r, void *dst) {
    for (int64_t b = 0; b < K / LLM_QK32; b++) {
        const uint8_t *T = (const uint8_t *)grp + (size_t)(b / 2) * Q80R_PAIR, *Q = T + (b & 1) * 512,
                      *D = T + 1024 + (b & 1) * 32;
        llm_block_q8_0 *x = (llm_block_q8_0 *)dst + b;
        for (int i = 0; i < 32; i++) x->qs[i] = (int8_t)(uint8_t)(Q[32 * r + i] ^ 0x80u);
        memcpy(&x->d, D + 2 * r, 2);
    }
}

/* ys[8 b + k] = -128 (y[4k] + .. + y[4k + 3]) of activation block b. */
static void q80r_aux(int64_t K, const void *a, int32_t *ys) {
    const llm_block_q8_0 *y = a;
    for (int64_t b = 0; b < K / LLM_QK32; b++) {
        for (int k = 0; k < 8; k++) {
            ys[8 * b + k] = -128 * (y[b].qs[4 * k] + y[b].qs[4 * k + 1] + y[b].qs[4 * k + 2] + y[b].qs[4 * k + 3]);
        }
    }
}

/* NP row pairs from pair i0 of a group by NA activation rows. */
Q8_0_AVX512_TARGET static inline __attribute__((always_inline)) void
q80r_pass(int64_t K, const char *G, int i0, const char *a, size_t a_stride, const int32_t *ys, size_t ys_stride,
          float *out, size_t o_stride, const int NA, const int NP, const int PF) {
    __m512 c[8][4];
    for (int p = 0; p < NP; p++)
        for (int j = 0; j < NA; j++) c[p][j] = _mm512_setzero_ps();
    /* [d0 x 8, d1 x 8] from the converted pair (d0, d1, ...) */
    const __m512i perm = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    for (int64_t b = 0; b < K / LLM_QK32; b++) {
        const char *T = G + (size_t)(b / 2) * Q80R_PAIR, *Q = T + (b & 1) * 512, *D = T + 1024 + (b & 1) * 32;
        if (PF && (b & 1) == 0) {
            for (int l = 0; l < Q80R_PAIR; l += 64) _mm_prefetch(T + Q80R_PF + l, _MM_HINT_T0);
        }
        __m512i q[8];
        __m512 dx[8];
        for (int p = 0; p < NP; p++) {
            q[p] = _mm512_load_si512((const void *)(Q + 64 * (i0 + p)));
            int32_t dd;
            memcpy(&dd, D + 4 * (i0 + p), 4);
            dx[p] = _mm512_permutexvar_ps(perm, _mm512_castps128_ps512(_mm_cvtph_ps(_mm_cvtsi32_si128(dd))));
        }
        for (int j = 0; j < NA; j++) {
            const llm_block_q8_0 *y = (const llm_block_q8_0 *)(a + (size_t)j * a_stride) + b;
            const __m512i qy = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)y->qs));
            const __m512i cr = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(ys + (size_t)j * ys_stride + 8 * (size_t)b)));
            const __m512 dy = _mm512_set1_ps(h2f(y->d));
            for (int p = 0; p < NP; p++) {
                const __m512 f = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(cr, q[p], qy));
                c[p][j] = _mm512_fmadd_ps(_mm512_mul_ps(dx[p], dy), f, c[p][j]);
            }
        }
    }
    for (int p = 0; p < NP; p++) {
        for (int j = 0; j < NA; j++) {
            out[(size_t)j * o_stride + 2 * (size_t)(i0 + p)] = hsum8(_mm512_castps512_ps256(c[p][j]));
            out[(size_t)j * o_stride + 2 * (size_t)(i0 + p) + 1] =
                hsum8(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(c[p][j]), 1)));
        }
    }
}

/* The group in passes of NP row pairs: all 8 for one or two activation rows,
 * 4 for three or four (the fastest of 1, 2, 4 and 8 pairs for each: see
 * docs/PERFORMANCE.md). */
Q8_0_AVX512_TARGET static inline __attribute__((always_inline)) void
q80r_dotN(int64_t K, const char *G, const char *a, size_t a_stride, const int32_t *ys, size_t ys_stride, float *out,
          size_t o_stride, const int NA, const int PF) {
    const int NP = NA <= 2 ? 8 : 4;
    q80r_pass(K, G, 0, a, a_stride, ys, ys_stride, out, o_stride, NA, NP, PF);
    if (NP == 4) q80r_pass(K, G, 4, a, a_stride, ys, ys_stride, out, o_stride, NA, NP, 0);
}

Q8_0_AVX512_TARGET static void q80r_dot(int64_t K, const void *grp, const void *a, size_t a_stride, const int32_t *ys,
                                        size_t ys_stride, int n_a, float *out, size_t o_stride, int flags) {
    const char *G = grp, *A = a;
    LLM_PREP_DISPATCH4(n_a, flags, q80r_dotN, K, G, A, a_stride, ys, ys_stride, out, o_stride)
}

void llm__prep_q8_0_x86_512(struct llm__prep_kernels *pk) {
    *pk = (struct llm__prep_kernels){.group_bytes = q80r_group_bytes,
                                     .repack = q80r_repack,
                                     .dot = q80r_dot,
                                     .max_a = 4,
                                     .unpack_row = q80r_unpack_row,
                                     .aux_ints = 8,
                                     .aux = q80r_aux};
}

#else /* not built with AVX-512 VNNI: never installed */

void llm__q8_0_dot2x4_x86_512(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride,
                              const float *sc, float out[2][4]) {
    (void)n, (void)w, (void)w_stride, (void)a, (void)a_stride, (void)sc, (void)out;
}
void llm__prep_q8_0_x86_512(struct llm__prep_kernels *pk) { (void)pk; }

#endif
