/*
 * cpu/kernels/q4_0_x86_512.c -- the Q4_0 products with AVX-512 VNNI (compiled
 * with it: sources.cmake): on q4_0_pack8u's packed tiles (16 weight rows per
 * register) and on the Q4_0 weight prepared at load (q4_0_x86_256.c holds
 * both layouts, the 256-bit products and the fill that picks these where the
 * CPU has AVX-512 VNNI). Same bits as the 256-bit products.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVX512VNNI__) && \
    defined(__GNUC__) && (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)

#include <immintrin.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "cpu/kernels/x86_512.h"
#include "dtype/blocks.h"

/* Products on q4_0_pack8u's tiles, 16 weight rows (two consecutive groups'
 * tiles) per 512-bit register and one activation row per register: lane r
 * of int32 is weight row r, and vpdpbusd takes the tile's unsigned chunk
 * and the activation's 4 bytes broadcast from memory as its signed operand,
 * so no shuffle or bias per chunk. sum q y over the block, plus the row's
 * correction -8 (sum of y's 32 bytes), is the exact integer sum (q - 8) y;
 * the float chain is the same, so the same bits. The sums of y come from
 * vpsadbw on y + 128, for the 4 activation rows at once. NG: 1 or 2 groups
 * (the second at pk + pk_stride). */
/* One block's exact sum per weight row (lane r: row r): the unsigned
 * chunks q[c] (elements 4c .. 4c + 3) against the activation's bytes yq
 * broadcast from memory, in two chains from corr (the block's -8 sum(y)). */
static inline __attribute__((always_inline)) __m512i q4_0u_block(const __m512i q[8], const int8_t *yq,
                                                                             int32_t corr) {
    __m512i s0 = _mm512_dpbusd_epi32(_mm512_set1_epi32(corr), q[0], zmm_bcast4(yq));
    __m512i s1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q[4], zmm_bcast4(yq + 16));
    s0 = _mm512_dpbusd_epi32(s0, q[1], zmm_bcast4(yq + 4));
    s1 = _mm512_dpbusd_epi32(s1, q[5], zmm_bcast4(yq + 20));
    s0 = _mm512_dpbusd_epi32(s0, q[2], zmm_bcast4(yq + 8));
    s1 = _mm512_dpbusd_epi32(s1, q[6], zmm_bcast4(yq + 24));
    s0 = _mm512_dpbusd_epi32(s0, q[3], zmm_bcast4(yq + 12));
    s1 = _mm512_dpbusd_epi32(s1, q[7], zmm_bcast4(yq + 28));
    return _mm512_add_epi32(s0, s1);
}

static inline __attribute__((always_inline)) void
q4_0u_dotx4(int64_t n, const void *pk, size_t pk_stride, const void *a, size_t a_stride, float *out, size_t o_stride,
            const int NG) {
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    const __m256i bias = _mm256_set1_epi8((char)0x80);
    const llm_block_q8_0 *y[4];
    for (int j = 0; j < 4; j++) y[j] = (const llm_block_q8_0 *)((const char *)a + (size_t)j * a_stride);
    for (int64_t b = 0; b < n / LLM_QK32; b++) {
        const char *T0 = (const char *)pk + (size_t)b * LLM_Q40_PK, *T1 = NG == 2 ? T0 + pk_stride : T0;
        __m512i q[8];
        for (int c = 0; c < 8; c++) q[c] = zmm_tile2(T0, T1, 32 * (size_t)c);
        const __m512 dw = zmm_tile2f(T0, T1, 288);
        /* sum(y + 128) per row: vpsadbw gives 4 partial sums per row */
        __m256i sd[4];
        for (int j = 0; j < 4; j++) {
            sd[j] = _mm256_sad_epu8(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *)y[j][b].qs), bias),
                                    _mm256_setzero_si256());
        }
        const __m256i a01 = _mm256_add_epi64(_mm256_unpacklo_epi64(sd[0], sd[1]), _mm256_unpackhi_epi64(sd[0], sd[1]));
        const __m256i a23 = _mm256_add_epi64(_mm256_unpacklo_epi64(sd[2], sd[3]), _mm256_unpackhi_epi64(sd[2], sd[3]));
        const __m256i S = _mm256_add_epi64(_mm256_permute2x128_si256(a01, a23, 0x20),
                                           _mm256_permute2x128_si256(a01, a23, 0x31)); /* sum(y) + 4096 */
        /* -8 sum(y) = 32768 - 8 (sum(y) + 4096) */
        int64_t corr[4];
        _mm256_storeu_si256((__m256i *)corr, _mm256_sub_epi64(_mm256_set1_epi64x(32768), _mm256_slli_epi64(S, 3)));
        for (int j = 0; j < 4; j++) {
            const int8_t *yq = y[j][b].qs;
            const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(_cvtsh_ss(y[j][b].d)));
            acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(q4_0u_block(q, yq, (int32_t)corr[j])), d, acc[j]);
        }
    }
    zmm_store16x4(out, o_stride, acc, NG);
}

void llm__q4_0u_dot8x4_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                                       size_t o_stride) {
    q4_0u_dotx4(n, pk, 0, a, a_stride, out, o_stride, 1);
}

void llm__q4_0u_dot16x4_x86_512(int64_t n, const void *pk, size_t pk_stride, const void *a, size_t a_stride,
                                        float *out, size_t o_stride) {
    q4_0u_dotx4(n, pk, pk_stride, a, a_stride, out, o_stride, 2);
}

/* The product on a prepared group: lane r of int32 is weight row r, as in
 * q4_0u_dotx4 (the tile's unsigned q times the activation's 4 bytes
 * broadcast from memory, summed in fours by vpdpbusd from -8 sum(y), which
 * the matmul computed once per activation block): the exact integer
 * sum (q - 8) y of q4_0_8xN, then its float chain, so the same bits.
 * Blocks b0 .. b1 - 1 for activation rows J0 .. J1 - 1, into acc[j]. */
static inline __attribute__((always_inline)) void
q4_0r_span(const char *G, const char *a, size_t a_stride, const int32_t *ys, size_t ys_stride, int64_t b0, int64_t b1,
           __m512 *acc, const int J0, const int J1, const int PF) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    for (int64_t b = b0; b < b1; b++) {
        const char *T = G + (size_t)(b / 2) * LLM_Q40R_PAIR, *Q = T + (b & 1) * 256;
        if (PF && (b & 1) == 0) {
            for (int l = 0; l < LLM_Q40R_PAIR; l += 64) _mm_prefetch(T + LLM_Q40R_PF + l, _MM_HINT_T0);
        }
        __m512i q[8];
        for (int k = 0; k < 4; k++) {
            const __m512i w = _mm512_load_si512((const void *)(Q + 64 * k));
            q[k] = _mm512_and_si512(w, m4);
            q[k + 4] = _mm512_and_si512(_mm512_srli_epi16(w, 4), m4);
        }
        const __m512 dw = _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(T + 512 + (b & 1) * 32)));
        for (int j = J0; j < J1; j++) {
            const llm_block_q8_0 *y = (const llm_block_q8_0 *)(a + (size_t)j * a_stride) + b;
            const int8_t *yq = y->qs;
            const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(_cvtsh_ss(y->d)));
            acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(q4_0u_block(q, yq, ys[(size_t)j * ys_stride + (size_t)b])), d,
                                     acc[j]);
        }
    }
}

/* Blocks per span when 5 to 8 activation rows pass (batched decode): rows
 * 0..3 then 4..7 over the same 8 blocks (2304 bytes of the group, in L1),
 * so the memory stream runs under both halves' arithmetic, where two whole
 * passes of 4 leave it idle through the second, and each half's registers
 * (4 accumulators beside the 8 unpacked chunks) fit without spills, which
 * a single pass of 8 rows' did not. 8 blocks measured best (see
 * docs/PERFORMANCE.md). */
#define Q40R_SPAN 8

static inline __attribute__((always_inline)) void
q4_0r_dotN(int64_t K, const char *G, const char *a, size_t a_stride, const int32_t *ys, size_t ys_stride, float *out,
           size_t o_stride, const int NA, const int PF) {
    __m512 acc[8];
    for (int j = 0; j < NA; j++) acc[j] = _mm512_setzero_ps();
    const int64_t nb = K / LLM_QK32;
    if (NA <= 4) {
        q4_0r_span(G, a, a_stride, ys, ys_stride, 0, nb, acc, 0, NA, PF);
    } else {
        for (int64_t b0 = 0; b0 < nb; b0 += Q40R_SPAN) {
            const int64_t b1 = b0 + Q40R_SPAN < nb ? b0 + Q40R_SPAN : nb;
            q4_0r_span(G, a, a_stride, ys, ys_stride, b0, b1, acc, 0, 4, PF);
            q4_0r_span(G, a, a_stride, ys, ys_stride, b0, b1, acc, 4, NA, 0);
        }
    }
    for (int j = 0; j < NA; j++) _mm512_storeu_ps(out + (size_t)j * o_stride, acc[j]);
}

void llm__q4_0r_dot_x86_512(int64_t K, const void *grp, const void *a, size_t a_stride, const int32_t *ys,
                                    size_t ys_stride, int n_a, float *out, size_t o_stride, int flags) {
    const char *G = grp, *A = a;
    LLM_PREP_DISPATCH8(n_a, flags, q4_0r_dotN, K, G, A, a_stride, ys, ys_stride, out, o_stride)
}



#else /* not built with AVX-512 VNNI: never installed */

void llm__q4_0u_dot8x4_x86_512(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                               size_t o_stride) {
    (void)n, (void)pk, (void)a, (void)a_stride, (void)out, (void)o_stride;
}
void llm__q4_0u_dot16x4_x86_512(int64_t n, const void *pk, size_t pk_stride, const void *a, size_t a_stride,
                                float *out, size_t o_stride) {
    (void)n, (void)pk, (void)pk_stride, (void)a, (void)a_stride, (void)out, (void)o_stride;
}
void llm__q4_0r_dot_x86_512(int64_t K, const void *grp, const void *a, size_t a_stride, const int32_t *ys,
                            size_t ys_stride, int n_a, float *out, size_t o_stride, int flags) {
    (void)K, (void)grp, (void)a, (void)a_stride, (void)ys, (void)ys_stride, (void)n_a, (void)out, (void)o_stride,
        (void)flags;
}

#endif
