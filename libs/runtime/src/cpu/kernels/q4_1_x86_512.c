/*
 * cpu/kernels/q4_1_x86_512.c -- a Q4_1 weight prepared at load (kernels.h prep,
 * runtime.h llm_backend_prepare_weight) and its AVX-512 VNNI product, which
 * keeps the bits of dot_q4_1_q8_1 (kernels/x86_256.c: llama.cpp's vec_dot, the
 * only order its CPU matmul has for Q4_1, at every activation count).
 *
 * Per group of 16 rows, per pair of blocks 2p, 2p + 1 (Q41R_PAIR bytes,
 * 64-byte aligned): the 16 packed bytes of block 2p of rows 0..15 (row r at
 * 16 r), the same for block 2p + 1, then block 2p's 16 fp16 d and 16 fp16
 * m, then block 2p + 1's. 20 bytes per row and block, as the file (an odd
 * last block pads its pair).
 *
 * The product keeps dot2x4's chains: a register holds (row 2i, act j) in
 * its low half and (row 2i + 1, act j) in its high half, 8 lanes each, lane
 * k the exact sum q y of bytes 4k .. 4k + 3 of the unpacked block (low
 * nibbles are bytes 0..15, high ones 16..31, as unpack_nibbles): the two
 * rows' 32 packed bytes go to 128-bit lanes (row 2i, row 2i, row 2i + 1,
 * row 2i + 1), shifted by 0, 4, 0, 4 and masked, and vpdpbusd multiplies
 * them (unsigned, < 16) by the activation block in both halves (signed):
 * the int32 of vpmaddubsw + vpmaddwd, with no saturation to differ. Then
 * acc = fma(d_x d_y, float(lanes), acc) on 8 lanes, hsum8 of each half, and
 * the row's m_x s_y added block by block (a multiply, then an add, as the
 * scalar chain; one 16-lane register covers the group's rows) and added
 * last: the bits of dot_q4_1_q8_1.
 *
 * Compiled with AVX-512 F, BW, DQ, VL and VNNI (sources.cmake); installed
 * by llm__cpu_kernels_x86 only on CPUs with AVX-512 VNNI.
 */
#include "cpu/kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__GNUC__) && \
    (defined(__clang__) ? __clang_major__ >= 13 : __GNUC__ >= 11)

#include <immintrin.h>
#include <string.h>

#include "cpu/kernels/x86_256.h"
#include "cpu/kernels/x86_512.h"
#include "dtype/blocks.h"

#define Q41R_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))

#define Q41R_PAIR 640
/* The prefetch distance of a streaming pass (as Q40R_PF, kernels/q4_0_x86_256.c). */
#define Q41R_PF 10240

static size_t q41r_group_bytes(int64_t K) { return (size_t)((K / LLM_QK32 + 1) / 2) * Q41R_PAIR; }

static void q41r_repack(int64_t K, const void *w, size_t w_stride, void *grp) {
    uint8_t *G = grp;
    memset(G, 0, q41r_group_bytes(K));
    for (int64_t b = 0; b < K / LLM_QK32; b++) {
        uint8_t *T = G + (size_t)(b / 2) * Q41R_PAIR, *Q = T + (b & 1) * 256, *D = T + 512 + (b & 1) * 64;
        for (int r = 0; r < 16; r++) {
            const llm_block_q4_1 *x = (const llm_block_q4_1 *)((const char *)w + (size_t)r * w_stride) + b;
            memcpy(Q + 16 * r, x->qs, 16);
            memcpy(D + 2 * r, &x->d, 2);
            memcpy(D + 32 + 2 * r, &x->m, 2);
        }
    }
}

static void q41r_unpack_row(int64_t K, const void *grp, int r, void *dst) {
    for (int64_t b = 0; b < K / LLM_QK32; b++) {
        const uint8_t *T = (const uint8_t *)grp + (size_t)(b / 2) * Q41R_PAIR, *Q = T + (b & 1) * 256,
                      *D = T + 512 + (b & 1) * 64;
        llm_block_q4_1 *x = (llm_block_q4_1 *)dst + b;
        memcpy(x->qs, Q + 16 * r, 16);
        memcpy(&x->d, D + 2 * r, 2);
        memcpy(&x->m, D + 32 + 2 * r, 2);
    }
}

/* NP row pairs from pair i0 of a group by NA activation rows; summ[j][r]:
 * row r's m_x s_y chain for activation j (all 16 rows, formed by the pass
 * with i0 == 0). */
Q41R_TARGET static inline __attribute__((always_inline)) void
q41r_pass(int64_t K, const char *G, int i0, const char *a, size_t a_stride, float *out, size_t o_stride,
          float summ[4][16], const int NA, const int NP, const int PF) {
    __m512 c[8][4], sm[4];
    for (int p = 0; p < NP; p++)
        for (int j = 0; j < NA; j++) c[p][j] = _mm512_setzero_ps();
    for (int j = 0; j < NA; j++) sm[j] = _mm512_setzero_ps();
    const __m512i perm = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i shift = _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0);
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    for (int64_t b = 0; b < K / LLM_QK32; b++) {
        const char *T = G + (size_t)(b / 2) * Q41R_PAIR, *Q = T + (b & 1) * 256, *D = T + 512 + (b & 1) * 64;
        if (PF && (b & 1) == 0) {
            for (int l = 0; l < Q41R_PAIR; l += 64) _mm_prefetch(T + Q41R_PF + l, _MM_HINT_T0);
        }
        __m512i q[8];
        __m512 dx[8];
        for (int p = 0; p < NP; p++) {
            const __m512i w = _mm512_castsi256_si512(_mm256_load_si256((const __m256i *)(Q + 32 * (i0 + p))));
            const __m512i z = _mm512_shuffle_i64x2(w, w, _MM_SHUFFLE(1, 1, 0, 0)); /* row 2i, 2i, 2i + 1, 2i + 1 */
            q[p] = _mm512_and_si512(_mm512_srlv_epi64(z, shift), m4);
            int32_t dd;
            memcpy(&dd, D + 4 * (i0 + p), 4);
            dx[p] = _mm512_permutexvar_ps(perm, _mm512_castps128_ps512(_mm_cvtph_ps(_mm_cvtsi32_si128(dd))));
        }
        const __m512 mx = i0 == 0 ? _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(D + 32))) : _mm512_setzero_ps();
        for (int j = 0; j < NA; j++) {
            const llm_block_q8_1 *y = (const llm_block_q8_1 *)(a + (size_t)j * a_stride) + b;
            const __m512i qy = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)y->qs));
            const __m512 dy = _mm512_set1_ps(h2f(y->d));
            for (int p = 0; p < NP; p++) {
                const __m512 f = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), q[p], qy));
                c[p][j] = _mm512_fmadd_ps(_mm512_mul_ps(dx[p], dy), f, c[p][j]);
            }
            if (i0 == 0) sm[j] = _mm512_add_ps(sm[j], _mm512_mul_ps(mx, _mm512_set1_ps(h2f(y->s))));
        }
    }
    for (int j = 0; i0 == 0 && j < NA; j++) _mm512_storeu_ps(summ[j], sm[j]);
    for (int p = 0; p < NP; p++) {
        for (int j = 0; j < NA; j++) {
            const int r = 2 * (i0 + p);
            out[(size_t)j * o_stride + (size_t)r] = hsum8(_mm512_castps512_ps256(c[p][j])) + summ[j][r];
            out[(size_t)j * o_stride + (size_t)r + 1] =
                hsum8(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(c[p][j]), 1))) + summ[j][r + 1];
        }
    }
}

/* The group in passes of NP row pairs: all 8 for one or two activation
 * rows, 4 for three or four (as q80r_dotN, kernels/q8_0_x86_256.c). */
Q41R_TARGET static inline __attribute__((always_inline)) void
q41r_dotN(int64_t K, const char *G, const char *a, size_t a_stride, float *out, size_t o_stride, const int NA,
          const int PF) {
    const int NP = NA <= 2 ? 8 : 4;
    float summ[4][16];
    q41r_pass(K, G, 0, a, a_stride, out, o_stride, summ, NA, NP, PF);
    if (NP == 4) q41r_pass(K, G, 4, a, a_stride, out, o_stride, summ, NA, NP, 0);
}

Q41R_TARGET static void q41r_dot(int64_t K, const void *grp, const void *a, size_t a_stride, const int32_t *ys,
                                 size_t ys_stride, int n_a, float *out, size_t o_stride, int flags) {
    (void)ys;
    (void)ys_stride;
    const char *G = grp, *A = a;
    LLM_PREP_DISPATCH4(n_a, flags, q41r_dotN, K, G, A, a_stride, out, o_stride)
}

void llm__cpu_kernels_q4_1_x86_512(llm__cpu_kernels *k) {
    k->prep[LLM_DTYPE_Q4_1] = (struct llm__prep_kernels){.group_bytes = q41r_group_bytes,
                                                         .repack = q41r_repack,
                                                         .dot = q41r_dot,
                                                         .max_a = 4,
                                                         .unpack_row = q41r_unpack_row};
}

#else /* no AVX2 build, or a compiler without these intrinsics: never selected */

void llm__cpu_kernels_q4_1_x86_512(llm__cpu_kernels *k) { (void)k; }

#endif
