/*
 * test_moe_ops.c -- the mixture-of-experts ops (llm_op_moe_topk,
 * llm_op_matmul_id, llm_op_moe_sum) on every CPU kernel selection (scalar
 * and auto):
 *   - moe_topk against a selection written here (ties: lower index first),
 *     the weights normalised by a double sum, and the clamp of a tiny sum;
 *   - matmul_id bit for bit against llm_op_matmul_invariant of each routed
 *     expert's matrix alone (the per-row dot llama.cpp's mul_mat_id takes),
 *     for x shared by a token's experts and x per (token, slot), for F32,
 *     F16, Q8_0, Q4_0 and Q4_K experts, with 1 and 3 threads, and within 2%
 *     of sum |x*w| of a double product with the dequantized weights;
 *   - moe_sum bit for bit against (e0*w0) + (e1*w1) + ... in float;
 *   - argument validation (expert ids out of range, n_used > n_expert,
 *     shape mismatches).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llama/runtime.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}
static float frand(void) { return (float)rnd() / 4294967296.0f * 2.0f - 1.0f; }

static llm_backend *make_backend(llm_kernels k, int threads) {
    llm_backend_params p = llm_backend_default_params();
    p.kernels = k;
    p.n_threads = threads;
    llm_backend *be = NULL;
    cr_assert_eq(llm_backend_create("cpu", &p, &be), LLM_OK, "%s", llm_runtime_last_error());
    return be;
}

/* An F32 tensor [n2][n1][n0] in a new buffer, filled from data (may be NULL). */
static llm_tensor upload(llm_backend *be, llm_buffer **buf, const float *data, int64_t n0, int64_t n1, int64_t n2) {
    const size_t bytes = sizeof(float) * (size_t)(n0 * n1 * n2);
    cr_assert_eq(llm_buffer_alloc(be, bytes, buf), LLM_OK);
    if (data) cr_assert_eq(llm_buffer_write(*buf, 0, data, bytes), LLM_OK);
    return llm_tensor_4d(*buf, 0, LLM_DTYPE_F32, n0, n1, n2, 1);
}

static void download(const llm_tensor *t, float *dst) {
    cr_assert_eq(llm_buffer_read(t->buffer, t->offset, dst, llm_tensor_nbytes(t)), LLM_OK);
}

static const llm_kernels g_kernels[] = {LLM_KERNELS_SCALAR, LLM_KERNELS_AUTO};

/* ------------------------------------------------------------ moe_topk -- */

Test(moe_ops, topk_selection_and_weights) {
    enum { N = 5, X = 12, U = 4 };
    float p[N][X];
    for (int t = 0; t < N; t++)
        for (int e = 0; e < X; e++) p[t][e] = (float)rnd() / 4294967296.0f;
    /* Row 1: ties (the lower index must come first); row 2: a tiny sum (clamped). */
    for (int e = 0; e < X; e++) p[1][e] = (float)(e % 3) * 0.25f;
    for (int e = 0; e < X; e++) p[2][e] = 1e-9f * (float)(e + 1);
    for (size_t ki = 0; ki < 2; ki++) {
        llm_backend *be = make_backend(g_kernels[ki], 2);
        for (int norm = 0; norm < 2; norm++) {
            llm_buffer *bp, *bw;
            llm_tensor tp = upload(be, &bp, &p[0][0], X, N, 1), tw = upload(be, &bw, NULL, U, N, 1);
            int32_t ids[N][U];
            float w[N][U];
            cr_assert_eq(llm_op_moe_topk(be, &tw, &ids[0][0], &tp, U, norm), LLM_OK, "%s", llm_runtime_last_error());
            download(&tw, &w[0][0]);
            for (int t = 0; t < N; t++) {
                /* Reference: repeated strict maximum over the unpicked, scanning up. */
                int used[X] = {0};
                int32_t want[U];
                for (int j = 0; j < U; j++) {
                    int best = -1;
                    for (int e = 0; e < X; e++)
                        if (!used[e] && (best < 0 || p[t][e] > p[t][best])) best = e;
                    used[best] = 1;
                    want[j] = best;
                }
                double sum = 0;
                for (int j = 0; j < U; j++) sum += (double)p[t][want[j]];
                float s = (float)sum;
                if (s < 6.103515625e-5f) s = 6.103515625e-5f;
                for (int j = 0; j < U; j++) {
                    cr_expect_eq(ids[t][j], want[j], "row %d slot %d: expert %d, want %d", t, j, ids[t][j], want[j]);
                    const float ww = norm ? p[t][want[j]] / s : p[t][want[j]];
                    cr_expect(w[t][j] == ww, "row %d slot %d: weight %g, want %g", t, j, (double)w[t][j], (double)ww);
                }
            }
            cr_expect_eq(ids[1][0], 2); /* 0.5 at 2, 5, 8, 11: the lowest first */
            cr_expect_eq(ids[1][1], 5);
            llm_buffer_free(bp);
            llm_buffer_free(bw);
        }
        llm_backend_free(be);
    }
}

/* ----------------------------------------------------------- matmul_id -- */

/* Weights [X][M][K] of type t from random floats; also their dequantized values. */
static llm_tensor make_experts(llm_backend *be, llm_buffer **buf, llm_dtype t, int64_t X, int64_t M, int64_t K,
                               float *deq) {
    size_t row = 0;
    cr_assert_eq(llm_dtype_row_size(t, (uint64_t)K, &row), LLM_OK);
    char *host = malloc(row * (size_t)(X * M));
    float *src = malloc(sizeof(float) * (size_t)K);
    for (int64_t r = 0; r < X * M; r++) {
        for (int64_t k = 0; k < K; k++) src[k] = frand() / sqrtf((float)K);
        char *dst = host + (size_t)r * row;
        if (t == LLM_DTYPE_F32) memcpy(dst, src, row);
        else cr_assert_eq(llm_dtype_quantize_row(t, src, dst, (size_t)K), LLM_OK, "quantize %s", llm_dtype_name(t));
        cr_assert_eq(llm_dtype_dequantize_row(t, dst, deq + r * K, (size_t)K), LLM_OK);
    }
    cr_assert_eq(llm_buffer_alloc(be, row * (size_t)(X * M), buf), LLM_OK);
    cr_assert_eq(llm_buffer_write(*buf, 0, host, row * (size_t)(X * M)), LLM_OK);
    free(host);
    free(src);
    return llm_tensor_4d(*buf, 0, t, K, M, X, 1);
}

static void check_matmul_id(llm_dtype t, int shared_x, int threads) {
    enum { N = 11, X = 6, U = 3 };
    const int64_t M = 40, K = 256, KX = shared_x ? 1 : U;
    float *deq = malloc(sizeof(float) * (size_t)(X * M * K));
    float *x = malloc(sizeof(float) * (size_t)(N * KX * K));
    for (int64_t i = 0; i < N * KX * K; i++) x[i] = frand();
    int32_t ids[N * U];
    for (int tkn = 0; tkn < N; tkn++)
        for (int j = 0; j < U; j++) ids[tkn * U + j] = (int32_t)((tkn * 5 + j * 2 + (tkn > 6 ? 1 : 0)) % X);
    ids[0] = ids[U] = ids[2 * U] = 4; /* several tokens on one expert (the 4-row dot) */
    for (size_t ki = 0; ki < 2; ki++) {
        llm_backend *be = make_backend(g_kernels[ki], threads);
        if (!llm_backend_supports(be, LLM_OP_MATMUL_ID, t)) {
            llm_backend_free(be);
            continue;
        }
        g_rng = 0x1234u + (uint64_t)t; /* the same weights for both kernel sets */
        llm_buffer *bw, *bx, *bo, *b1, *b2;
        llm_tensor w = make_experts(be, &bw, t, X, M, K, deq);
        llm_tensor tx = upload(be, &bx, x, K, KX, N), to = upload(be, &bo, NULL, M, U, N);
        cr_assert_eq(llm_op_matmul_id(be, &to, &tx, &w, ids), LLM_OK, "%s", llm_runtime_last_error());
        float *out = malloc(sizeof(float) * (size_t)(N * U * M));
        download(&to, out);
        /* Each (token, slot) alone through matmul_invariant with its expert's matrix. */
        llm_tensor x1 = upload(be, &b1, NULL, K, 1, 1), o1 = upload(be, &b2, NULL, M, 1, 1);
        float o[64];
        int bad = 0;
        double worst = 0;
        for (int tkn = 0; tkn < N; tkn++) {
            for (int j = 0; j < U; j++) {
                const float *xr = x + (size_t)(tkn * KX + (shared_x ? 0 : j)) * K;
                cr_assert_eq(llm_buffer_write(b1, 0, xr, sizeof(float) * (size_t)K), LLM_OK);
                llm_tensor we = w;
                we.offset = (size_t)ids[tkn * U + j] * w.nb[2];
                we.ne[2] = 1;
                we.nb[3] = we.nb[2];
                /* One row: llama.cpp's kernel for one activation row of this type and
                 * M (vec_dot; the repacked gemv for Q4_0 with M % 8 == 0), which is
                 * what its mul_mat_id takes for experts with fewer than 8 rows. */
                cr_assert_eq(llm_op_matmul(be, &o1, &x1, &we), LLM_OK, "%s", llm_runtime_last_error());
                download(&o1, o);
                const float *got = out + (size_t)(tkn * U + j) * M;
                for (int64_t m = 0; m < M; m++) {
                    bad += memcmp(&got[m], &o[m], sizeof(float)) != 0;
                    double ref = 0, mag = 0;
                    const float *wr = deq + (size_t)(ids[tkn * U + j] * M + m) * K;
                    for (int64_t k = 0; k < K; k++) {
                        ref += (double)xr[k] * wr[k];
                        mag += fabs((double)xr[k] * wr[k]);
                    }
                    const double rel = fabs(got[m] - ref) / (mag > 0 ? mag : 1);
                    worst = rel > worst ? rel : worst;
                }
            }
        }
        cr_expect_eq(bad, 0, "%s (%s x, %s kernels, %d threads): %d outputs differ from matmul_invariant",
                     llm_dtype_name(t), shared_x ? "shared" : "per-slot", llm_backend_kernels(be), threads, bad);
        cr_expect_leq(worst, t == LLM_DTYPE_F32 ? 1e-5 : 2e-2, "%s: relative error %g", llm_dtype_name(t), worst);
        free(out);
        llm_buffer_free(bw);
        llm_buffer_free(bx);
        llm_buffer_free(bo);
        llm_buffer_free(b1);
        llm_buffer_free(b2);
        llm_backend_free(be);
    }
    free(deq);
    free(x);
}

Test(moe_ops, matmul_id_matches_per_expert_products) {
    const llm_dtype types[] = {LLM_DTYPE_F32, LLM_DTYPE_F16, LLM_DTYPE_Q8_0, LLM_DTYPE_Q4_0, LLM_DTYPE_Q4_1,
                               LLM_DTYPE_Q5_0};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        for (int shared = 0; shared < 2; shared++)
            for (int th = 1; th <= 3; th += 2) check_matmul_id(types[i], shared, th);
}

/* ------------------------------------------------------------- moe_sum -- */

Test(moe_ops, sum_in_slot_order) {
    enum { N = 7, U = 5, E = 300 };
    float *e = malloc(sizeof(float) * N * U * E), w[N * U], *out = malloc(sizeof(float) * N * E);
    for (int i = 0; i < N * U * E; i++) e[i] = frand() * 10.0f;
    for (int i = 0; i < N * U; i++) w[i] = (float)rnd() / 4294967296.0f;
    for (size_t ki = 0; ki < 2; ki++) {
        for (int th = 1; th <= 3; th += 2) {
            llm_backend *be = make_backend(g_kernels[ki], th);
            llm_buffer *be_, *bw, *bo;
            llm_tensor te = upload(be, &be_, e, E, U, N), tw = upload(be, &bw, w, U, N, 1),
                       to = upload(be, &bo, NULL, E, N, 1);
            cr_assert_eq(llm_op_moe_sum(be, &to, &te, &tw), LLM_OK, "%s", llm_runtime_last_error());
            download(&to, out);
            int bad = 0;
            for (int t = 0; t < N; t++)
                for (int i = 0; i < E; i++) {
                    volatile float acc = e[(t * U) * E + i] * w[t * U];
                    for (int j = 1; j < U; j++) {
                        volatile float prod = e[(t * U + j) * E + i] * w[t * U + j];
                        acc = acc + prod;
                    }
                    bad += out[t * E + i] != acc;
                }
            cr_expect_eq(bad, 0, "%d sums differ (%s kernels, %d threads)", bad, llm_backend_kernels(be), th);
            llm_buffer_free(be_);
            llm_buffer_free(bw);
            llm_buffer_free(bo);
            llm_backend_free(be);
        }
    }
    free(e);
    free(out);
}

/* ---------------------------------------------------------- validation -- */

Test(moe_ops, rejects_bad_arguments) {
    llm_backend *be = make_backend(LLM_KERNELS_AUTO, 1);
    llm_buffer *bp, *bw, *bx, *bo, *bex, *be3;
    float deq[4 * 8 * 32];
    llm_tensor tp = upload(be, &bp, NULL, 4, 2, 1), tw = upload(be, &bw, NULL, 5, 2, 1);
    int32_t ids[2 * 5];
    /* 5 of 4 experts. */
    cr_expect_eq(llm_op_moe_topk(be, &tw, ids, &tp, 5, 1), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_op_moe_topk(be, &tw, ids, &tp, 0, 1), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_op_moe_topk(be, &tw, NULL, &tp, 5, 1), LLM_ERR_INVALID_ARG);
    llm_tensor ex = make_experts(be, &bex, LLM_DTYPE_Q8_0, 4, 8, 32, deq);
    llm_tensor tx = upload(be, &bx, NULL, 32, 1, 2), to = upload(be, &bo, NULL, 8, 2, 2);
    int32_t good[4] = {0, 3, 1, 2}, bad[4] = {0, 4, 1, 2}, neg[4] = {0, -1, 1, 2};
    cr_expect_eq(llm_op_matmul_id(be, &to, &tx, &ex, good), LLM_OK, "%s", llm_runtime_last_error());
    cr_expect_eq(llm_op_matmul_id(be, &to, &tx, &ex, bad), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_op_matmul_id(be, &to, &tx, &ex, neg), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_op_matmul_id(be, &to, &tx, &ex, NULL), LLM_ERR_INVALID_ARG);
    llm_tensor wrong = to;
    wrong.ne[0] = 4; /* M of 4 vs the experts' 8 rows */
    wrong.nb[1] = 16, wrong.nb[2] = 32, wrong.nb[3] = 64;
    cr_expect_eq(llm_op_matmul_id(be, &wrong, &tx, &ex, good), LLM_ERR_INVALID_ARG);
    llm_tensor e3 = upload(be, &be3, NULL, 8, 3, 2); /* 3 slots of e, 2 weights per row */
    cr_expect_eq(llm_op_moe_sum(be, &tp, &e3, &tp), LLM_ERR_INVALID_ARG);
    llm_buffer_free(bp);
    llm_buffer_free(bw);
    llm_buffer_free(bx);
    llm_buffer_free(bex);
    llm_buffer_free(bo);
    llm_buffer_free(be3);
    llm_backend_free(be);
}
