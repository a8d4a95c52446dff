/*
 * test_gemm.c -- the register-tiled product (cpu/gemm_cpu.c) and
 * llm_op_matmul_invariant.
 *
 * - Every block variant the machine has (scalar, AVX2, AVX-512) gives, bit for
 *   bit, what an independent implementation of the documented order gives
 *   (kernels.h: eight lanes by FMA in ascending k, folded as llm__hsum8),
 *   over shapes with K and M not multiples of 8 and every row count of a
 *   tile's remainder; and each output is within (K / 8 + 4) * FLT_EPSILON *
 *   sum_k |x_k w_k| of a double-precision dot product (the usual bound for
 *   that summation tree).
 * - llm_op_matmul_invariant: a row's outputs are the same bits alone, in a
 *   batch, at another position of a shuffled batch, and with 1, 2 or 3
 *   threads, for F32, F16, BF16 and quantized (Q8_0, Q4_0, Q4_K: types whose
 *   llm_op_matmul picks shape-dependent kernels) weights; scalar kernels
 *   equal AVX kernels for float weights.
 * - llm_op_matmul_invariant packs F32 / F16 / BF16 weights with K and M not
 *   multiples of 8 into the same order.
 * - llm_op_matmul with F16 / BF16 weights and 8 to 130 rows (the sgemm pair
 *   below the thresholds, the tiled product above) gives the bits of the
 *   registry's sgemm pair (llama.cpp's tinyBLAS
 *   order, checked against llama.cpp in test_kernels_q4_0.c).
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/kernels.h"
#include "dtype/blocks.h"
#include "llama/runtime.h"

static float frand(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) / 16777216.0 * 2.0 - 1.0);
}

/* The documented order, written from kernels.h, on unpacked rows. */
static float order_ref(int64_t K, const float *x, const float *w) {
    float l[8] = {0};
    for (int64_t c = 0; c < (K + 7) / 8; c++)
        for (int j = 0; j < 8; j++) {
            const int64_t k = 8 * c + j;
            l[j] = k < K ? fmaf(x[k], w[k], l[j]) : fmaf(0.0f, 0.0f, l[j]);
        }
    const float s0 = l[0] + l[4], s1 = l[1] + l[5], s2 = l[2] + l[6], s3 = l[3] + l[7];
    return (s0 + s2) + (s1 + s3);
}

/* The packed layout of kernels.h. */
static float *pack(const float *w, int64_t M, int64_t K) {
    const int64_t KC = (K + 7) / 8, S = (M + 7) / 8;
    float *wp = aligned_alloc(64, (size_t)(S * KC * 64) * sizeof(float));
    cr_assert_not_null(wp);
    for (int64_t s = 0; s < S; s++)
        for (int64_t c = 0; c < KC; c++)
            for (int r = 0; r < 8; r++)
                for (int j = 0; j < 8; j++) {
                    const int64_t m = 8 * s + r, k = 8 * c + j;
                    wp[((s * KC + c) * 64) + r * 8 + j] = m < M && k < K ? w[m * K + k] : 0.0f;
                }
    return wp;
}

/* out (n rows of stride os, M + 2 columns) after a block call on rows
 * 0..rows-1: outside rows x M untouched (-12345), inside the documented
 * order over x (stride xs) and w ([M][K] floats) bit for bit. */
static void check_order_out(const char *name, int64_t K, int64_t M, int64_t n, int64_t rows, const float *out,
                            size_t os, const float *x, size_t xs, const float *w) {
    for (int64_t i = 0; i < n; i++) {
        for (int64_t m = 0; m < (int64_t)os; m++) {
            const float got = out[(size_t)i * os + (size_t)m];
            if (i >= rows || m >= M) {
                cr_assert(got == -12345.0f, "%s K=%lld M=%lld rows=%lld: wrote [%lld][%lld]", name, (long long)K,
                          (long long)M, (long long)rows, (long long)i, (long long)m);
                continue;
            }
            const float want = order_ref(K, x + (size_t)i * xs, w + m * K);
            cr_assert(!memcmp(&got, &want, sizeof got), "%s K=%lld M=%lld rows=%lld [%lld][%lld]: %.9g, the order gives %.9g",
                      name, (long long)K, (long long)M, (long long)rows, (long long)i, (long long)m, got, want);
        }
    }
}

Test(gemm, blocks_follow_the_documented_order_and_the_error_bound) {
    static const int64_t Ks[] = {1, 5, 8, 13, 64, 100, 384, 1536};
    static const int64_t Ms[] = {1, 4, 7, 8, 12, 21, 40};
    const char *names[] = {"scalar", "avx2", "avx512"};
    int ran[3] = {0, 0, 0};
    uint32_t seed = 7;
    for (size_t a = 0; a < sizeof Ks / sizeof Ks[0]; a++) {
        for (size_t b = 0; b < sizeof Ms / sizeof Ms[0]; b++) {
            const int64_t K = Ks[a], M = Ms[b], n = 13; /* 13 = 2 * 6 + 1 = 4 * 3 + 1 rows */
            const size_t xs = (size_t)K + 3;             /* a row stride wider than K */
            float *x = malloc(sizeof(float) * (size_t)n * xs), *w = malloc(sizeof(float) * (size_t)(M * K));
            float *out = malloc(sizeof(float) * (size_t)(n * (M + 2)));
            cr_assert(x && w && out);
            for (size_t i = 0; i < (size_t)n * xs; i++) x[i] = 4.0f * frand(&seed);
            for (int64_t i = 0; i < M * K; i++) w[i] = frand(&seed);
            float *wp = pack(w, M, K);
            for (int v = 0; v < 3; v++) {
                llm__gemm_block_fn fn = llm__gemm_block_variant(v);
                if (!fn) continue;
                ran[v] = 1;
                for (int64_t rows = 1; rows <= n; rows++) {
                    const size_t os = (size_t)M + 2; /* columns past M must stay untouched */
                    for (size_t i = 0; i < (size_t)n * os; i++) out[i] = -12345.0f;
                    fn(K, x, xs, rows, wp, (M + 7) / 8, M, out, os);
                    check_order_out(names[v], K, M, n, rows, out, os, x, xs, w);
                    for (int64_t i = 0; rows == n && i < n; i++) {
                        for (int64_t m = 0; m < M; m++) {
                            const float got = out[(size_t)i * os + (size_t)m];
                            double ref = 0, mag = 0;
                            for (int64_t k = 0; k < K; k++) {
                                ref += (double)x[(size_t)i * xs + (size_t)k] * w[m * K + k];
                                mag += fabs((double)x[(size_t)i * xs + (size_t)k] * w[m * K + k]);
                            }
                            cr_assert(fabs(got - ref) <= (double)(K / 8 + 4) * FLT_EPSILON * mag,
                                      "%s K=%lld: %.9g vs double %.9g", names[v], (long long)K, got, ref);
                        }
                    }
                }
            }
            free(wp), free(x), free(w), free(out);
        }
    }
    for (int v = 1; v < 3; v++)
        /* Criterion 2.4 exits 1 after a logged warning, so a block this CPU lacks is only noted. */
        if (!ran[v]) cr_log_info("gemm: the %s block is not available here (skipped)", names[v]);
}

/* kernels.h gemm_rows (F16, BF16), each built form this CPU has
 * (AVX2, AVX-512): on weight rows read where they are (a row stride wider
 * than K halves), every output must be the documented order over the
 * weights as floats, and nothing past n_rows x M may be written. */
Test(gemm, f16_bf16_rows_in_place_follow_the_documented_order) {
    if (!llm__cpu_has_avx2()) cr_skip_test("CPU lacks AVX2/FMA/F16C: no in-place F16 / BF16 block");
    const llm_dtype types[2] = {LLM_DTYPE_F16, LLM_DTYPE_BF16};
    int ran512 = 0;
    static const int64_t Ks[] = {1, 5, 8, 13, 64, 100, 384};
    static const int64_t Ms[] = {1, 4, 7, 8, 12, 21, 40};
    uint32_t seed = 17;
    for (int ti = 0; ti < 2; ti++) {
        const llm_dtype t = types[ti];
        const llm__gemm_rows_fn fns[2] = {llm__gemm_rows_avx2_get(t), llm__gemm_rows_avx512_get(t)};
        cr_assert_not_null(fns[0], "%s: no AVX2 in-place form", llm_dtype_name(t));
        ran512 |= fns[1] != NULL;
        for (size_t a = 0; a < sizeof Ks / sizeof Ks[0]; a++) {
            for (size_t b = 0; b < sizeof Ms / sizeof Ms[0]; b++) {
                const int64_t K = Ks[a], M = Ms[b], n = 13;
                const size_t xs = (size_t)K + 3, wrow = (size_t)K + 5; /* strides wider than K */
                float *x = malloc(sizeof(float) * (size_t)n * xs), *wf = malloc(sizeof(float) * (size_t)(M * K));
                uint16_t *wh = malloc(sizeof(uint16_t) * wrow * (size_t)M);
                float *out = malloc(sizeof(float) * (size_t)(n * (M + 2)));
                cr_assert(x && wf && wh && out);
                for (size_t i = 0; i < (size_t)n * xs; i++) x[i] = 4.0f * frand(&seed);
                for (int64_t m = 0; m < M; m++)
                    for (size_t k = 0; k < wrow; k++) {
                        const float f = frand(&seed);
                        const uint16_t h = t == LLM_DTYPE_F16 ? llm_fp32_to_fp16(f) : llm_fp32_to_bf16(f);
                        wh[(size_t)m * wrow + k] = h;
                        if ((int64_t)k < K) {
                            wf[m * K + (int64_t)k] = t == LLM_DTYPE_F16 ? llm_fp16_to_fp32(h) : llm_bf16_to_fp32(h);
                        }
                    }
                for (int v = 0; v < 2; v++) {
                    if (!fns[v]) continue;
                    char name[32];
                    snprintf(name, sizeof name, "%s %s", llm_dtype_name(t), v ? "avx512" : "avx2");
                    for (int64_t rows = 1; rows <= n; rows++) {
                        const size_t os = (size_t)M + 2;
                        for (size_t i = 0; i < (size_t)n * os; i++) out[i] = -12345.0f;
                        fns[v](K, x, xs, rows, wh, wrow * sizeof(uint16_t), M, out, os);
                        check_order_out(name, K, M, n, rows, out, os, x, xs, wf);
                    }
                }
                free(x), free(wf), free(wh), free(out);
            }
        }
    }
    /* Criterion 2.4 exits 1 after a logged warning, so a form this CPU lacks is only noted. */
    if (!ran512) cr_log_info("gemm: the avx512 in-place forms are not available here (skipped)");
}

/* ---------------------------------------------------------- the op -- */

static llm_backend *make(llm_kernels k, int threads) {
    llm_backend_params p = llm_backend_default_params();
    p.kernels = k;
    p.n_threads = threads;
    llm_backend *be = NULL;
    cr_assert_eq(llm_backend_create("cpu", &p, &be), LLM_OK, "%s", llm_runtime_last_error());
    return be;
}

/* w [M][K] floats converted to type t (row bytes *row); Q4_K (no quantizer
 * here): seeded bytes with small finite scales. */
static void *convert(llm_dtype t, const float *w, int64_t M, int64_t K, size_t *row) {
    cr_assert_eq(llm_dtype_row_size(t, (uint64_t)K, row), LLM_OK);
    char *q = malloc(*row * (size_t)M);
    cr_assert_not_null(q);
    if (t == LLM_DTYPE_Q4_K) {
        uint32_t s = 5;
        for (size_t i = 0; i < *row * (size_t)M; i++) q[i] = (char)(frand(&s) * 127.0f);
        llm_block_q4_k *b = (llm_block_q4_k *)q;
        for (size_t i = 0; i < *row * (size_t)M / sizeof *b; i++) {
            b[i].d = llm_fp32_to_fp16(0.01f * (1.0f + frand(&s)));
            b[i].dmin = llm_fp32_to_fp16(0.005f * (1.0f + frand(&s)));
        }
        return q;
    }
    for (int64_t m = 0; m < M; m++)
        cr_assert_eq(llm_dtype_quantize_row(t, w + m * K, q + (size_t)m * *row, (size_t)K), LLM_OK);
    return q;
}

/* out [n][M] = x [n][K] . w^T through op (1: llm_op_matmul_invariant, 0: llm_op_matmul). */
static void run(llm_backend *be, int invariant, llm_dtype t, const void *wq, size_t row, int64_t M, int64_t K,
                const float *x, int64_t n, float *out) {
    llm_buffer *bw, *bx, *bo;
    cr_assert_eq(llm_buffer_alloc(be, row * (size_t)M, &bw), LLM_OK);
    cr_assert_eq(llm_buffer_write(bw, 0, wq, row * (size_t)M), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(be, sizeof(float) * (size_t)(n * K), &bx), LLM_OK);
    cr_assert_eq(llm_buffer_write(bx, 0, x, sizeof(float) * (size_t)(n * K)), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(be, sizeof(float) * (size_t)(n * M), &bo), LLM_OK);
    llm_tensor tw = llm_tensor_2d(bw, 0, t, K, M), tx = llm_tensor_2d(bx, 0, LLM_DTYPE_F32, K, n);
    llm_tensor to = llm_tensor_2d(bo, 0, LLM_DTYPE_F32, M, n);
    llm_status st = invariant ? llm_op_matmul_invariant(be, &to, &tx, &tw) : llm_op_matmul(be, &to, &tx, &tw);
    cr_assert_eq(st, LLM_OK, "%s", llm_runtime_last_error());
    cr_assert_eq(llm_buffer_read(bo, 0, out, sizeof(float) * (size_t)(n * M)), LLM_OK);
    llm_buffer_free(bw), llm_buffer_free(bx), llm_buffer_free(bo);
}

Test(gemm, invariant_matmul_ignores_batch_composition_and_threads) {
    static const llm_dtype types[] = {LLM_DTYPE_F32, LLM_DTYPE_F16, LLM_DTYPE_BF16, LLM_DTYPE_Q8_0, LLM_DTYPE_Q4_0,
                                      LLM_DTYPE_Q4_K};
    const int64_t K = 256, M = 72, n = 37; /* M % 8 == 0: llm_op_matmul would take Q4_0 / Q4_K's rows8 pairs */
    float *x = malloc(sizeof(float) * (size_t)(n * K)), *w = malloc(sizeof(float) * (size_t)(M * K));
    float *xs = malloc(sizeof(float) * (size_t)(n * K));
    float *ref = malloc(sizeof(float) * (size_t)(n * M)), *got = malloc(sizeof(float) * (size_t)(n * M));
    cr_assert(x && w && xs && ref && got);
    uint32_t seed = 99;
    for (int64_t i = 0; i < n * K; i++) x[i] = 2.0f * frand(&seed);
    for (int64_t i = 0; i < M * K; i++) w[i] = frand(&seed);
    int64_t perm[37];
    for (int64_t i = 0; i < n; i++) perm[i] = (i * 11 + 5) % n; /* 11 is prime to 37: a permutation */
    for (int64_t i = 0; i < n; i++) memcpy(xs + perm[i] * K, x + i * K, sizeof(float) * (size_t)K);
    llm_backend *be1 = make(LLM_KERNELS_AUTO, 1), *be2 = make(LLM_KERNELS_AUTO, 2), *be3 = make(LLM_KERNELS_AUTO, 3);
    llm_backend *bes = make(LLM_KERNELS_SCALAR, 2);
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const llm_dtype t = types[ti];
        const int is_float = t == LLM_DTYPE_F32 || t == LLM_DTYPE_F16 || t == LLM_DTYPE_BF16;
        size_t row;
        void *wq = convert(t, w, M, K, &row);
        run(be2, 1, t, wq, row, M, K, x, n, ref); /* the whole batch, 2 threads */
        for (int64_t i = 0; i < n; i++) { /* each row alone */
            run(be1, 1, t, wq, row, M, K, x + i * K, 1, got);
            cr_assert(!memcmp(got, ref + i * M, sizeof(float) * (size_t)M), "%s: row %lld alone differs",
                      llm_dtype_name(t), (long long)i);
        }
        for (int64_t len = 2; len <= 9; len++) { /* rows 3..3+len-1 as a small batch */
            run(be3, 1, t, wq, row, M, K, x + 3 * K, len, got);
            cr_assert(!memcmp(got, ref + 3 * M, sizeof(float) * (size_t)(len * M)), "%s: a batch of %lld differs",
                      llm_dtype_name(t), (long long)len);
        }
        run(be3, 1, t, wq, row, M, K, xs, n, got); /* shuffled, 3 threads */
        for (int64_t i = 0; i < n; i++)
            cr_assert(!memcmp(got + perm[i] * M, ref + i * M, sizeof(float) * (size_t)M),
                      "%s: row %lld at position %lld differs", llm_dtype_name(t), (long long)i, (long long)perm[i]);
        if (is_float) { /* the scalar reference kernels: the same order, so the same bits */
            run(bes, 1, t, wq, row, M, K, x, n, got);
            cr_assert(!memcmp(got, ref, sizeof(float) * (size_t)(n * M)), "%s: scalar kernels differ",
                      llm_dtype_name(t));
        }
        free(wq);
    }
    llm_backend_free(be1), llm_backend_free(be2), llm_backend_free(be3), llm_backend_free(bes);
    free(x), free(w), free(xs), free(ref), free(got);
}

Test(gemm, f16_bf16_matmul_keeps_the_sgemm_pair_bits) {
    llm__cpu_kernels k;
    llm__cpu_kernels_scalar(&k);
    if (!llm__cpu_has_avx2()) cr_skip_test("CPU lacks AVX2/FMA/F16C: no sgemm pair");
    llm__cpu_kernels_x86(&k, llm__cpu_features());
    /* K % 8 == 0, M % 4 == 0, M % 8 != 0; rows on both sides of the
     * tiled product's thresholds (matmul_cpu.c: F16 from 8, BF16 from 64) */
    const int64_t K = 200, M = 36, n = 130;
    float *x = malloc(sizeof(float) * (size_t)(n * K)), *w = malloc(sizeof(float) * (size_t)(M * K));
    float *got = malloc(sizeof(float) * (size_t)(n * M));
    uint16_t *a = malloc(sizeof(uint16_t) * (size_t)(n * K));
    cr_assert(x && w && got && a);
    uint32_t seed = 3;
    for (int64_t i = 0; i < n * K; i++) x[i] = 3.0f * frand(&seed);
    for (int64_t i = 0; i < M * K; i++) w[i] = frand(&seed);
    llm_backend *be = make(LLM_KERNELS_AUTO, 2);
    const llm_dtype types[] = {LLM_DTYPE_F16, LLM_DTYPE_BF16};
    for (int ti = 0; ti < 2; ti++) {
        const llm_dtype t = types[ti];
        cr_assert_not_null(k.sgemm[t].dot);
        size_t row;
        void *wq = convert(t, w, M, K, &row);
        for (int64_t i = 0; i < n; i++) k.quantize[k.act_type[t]](x + i * K, a + i * K, K);
        static const int64_t row_counts[] = {5, 7, 8, 21, 63, 64, 127, 130};
        for (size_t ri = 0; ri < sizeof row_counts / sizeof row_counts[0]; ri++) {
            const int64_t rows = row_counts[ri];
            run(be, 0, t, wq, row, M, K, x, rows, got);
            for (int64_t i = 0; i < rows; i++)
                for (int64_t m = 0; m < M; m++) {
                    const float want = k.sgemm[t].dot(K, (const char *)wq + (size_t)m * row, a + i * K);
                    cr_assert(!memcmp(&got[i * M + m], &want, sizeof want), "%s rows=%lld [%lld][%lld]: %.9g vs %.9g",
                              llm_dtype_name(t), (long long)rows, (long long)i, (long long)m, got[i * M + m], want);
                }
        }
        free(wq);
    }
    llm_backend_free(be);
    free(x), free(w), free(got), free(a);
}

/* The op packs the weights itself (gemm_cpu.c pack_task: whole chunks of 8
 * widened 64 at a time, a partial last chunk zero-filled, strips past M
 * zero): with K and M not multiples of 8 or 64, each output must still be
 * the documented order over the weights as floats and the activations
 * rounded to the weight type. */
Test(gemm, invariant_op_packs_odd_shapes_in_the_documented_order) {
    static const int64_t Ks[] = {203, 70};
    const int64_t M = 37, n = 5;
    llm_backend *be = make(LLM_KERNELS_AUTO, 2);
    const llm_dtype types[] = {LLM_DTYPE_F32, LLM_DTYPE_F16, LLM_DTYPE_BF16};
    uint32_t seed = 11;
    for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++) {
        const int64_t K = Ks[ki];
        float *x = malloc(sizeof(float) * (size_t)(n * K)), *w = malloc(sizeof(float) * (size_t)(M * K));
        float *xr = malloc(sizeof(float) * (size_t)(n * K)), *wr = malloc(sizeof(float) * (size_t)(M * K));
        float *got = malloc(sizeof(float) * (size_t)(n * M));
        cr_assert(x && w && xr && wr && got);
        for (int64_t i = 0; i < n * K; i++) x[i] = 2.0f * frand(&seed);
        for (int64_t i = 0; i < M * K; i++) w[i] = frand(&seed);
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
            const llm_dtype t = types[ti];
            size_t row;
            void *wq = convert(t, w, M, K, &row);
            /* the weights and activations as the order sees them */
            for (int64_t m = 0; m < M; m++)
                cr_assert_eq(llm_dtype_dequantize_row(t, (const char *)wq + (size_t)m * row, wr + m * K, (size_t)K),
                             LLM_OK);
            for (int64_t i = 0; i < n * K; i++) {
                xr[i] = t == LLM_DTYPE_F16    ? llm_fp16_to_fp32(llm_fp32_to_fp16(x[i]))
                        : t == LLM_DTYPE_BF16 ? llm_bf16_to_fp32(llm_fp32_to_bf16(x[i]))
                                              : x[i];
            }
            run(be, 1, t, wq, row, M, K, x, n, got);
            for (int64_t i = 0; i < n; i++)
                for (int64_t m = 0; m < M; m++) {
                    const float want = order_ref(K, xr + i * K, wr + m * K);
                    cr_assert(!memcmp(&got[i * M + m], &want, sizeof want), "%s K=%lld [%lld][%lld]: %.9g vs %.9g",
                              llm_dtype_name(t), (long long)K, (long long)i, (long long)m, got[i * M + m], want);
                }
            free(wq);
        }
        free(x), free(w), free(xr), free(wr), free(got);
    }
    llm_backend_free(be);
}

Test(gemm, invariant_op_validation) {
    llm_backend *be = make(LLM_KERNELS_AUTO, 1);
    cr_expect_str_eq(llm_op_name(LLM_OP_MATMUL_INVARIANT), "matmul_invariant");
    cr_expect(llm_backend_supports(be, LLM_OP_MATMUL_INVARIANT, LLM_DTYPE_F32));
    cr_expect(llm_backend_supports(be, LLM_OP_MATMUL_INVARIANT, LLM_DTYPE_Q4_K));
    llm_buffer *b;
    cr_assert_eq(llm_buffer_alloc(be, 4096, &b), LLM_OK);
    llm_tensor x = llm_tensor_2d(b, 0, LLM_DTYPE_F32, 8, 2), w = llm_tensor_2d(b, 0, LLM_DTYPE_F32, 8, 3);
    llm_tensor bad = llm_tensor_2d(b, 0, LLM_DTYPE_F32, 4, 2), out = llm_tensor_2d(b, 1024, LLM_DTYPE_F32, 3, 2);
    cr_expect_eq(llm_op_matmul_invariant(be, &out, &x, &w), LLM_OK);
    cr_expect_eq(llm_op_matmul_invariant(be, &bad, &x, &w), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_op_matmul_invariant(NULL, &out, &x, &w), LLM_ERR_INVALID_ARG);
    llm_op_stats st[LLM_OP_COUNT];
    llm_backend_stats(be, st);
    cr_expect_eq(st[LLM_OP_MATMUL_INVARIANT].calls, 1);
    llm_buffer_free(b);
    llm_backend_free(be);
}
