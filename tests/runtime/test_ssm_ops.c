/*
 * test_ssm_ops.c -- the recurrent ops (llm_op_unary, llm_op_ssm_conv,
 * llm_op_gated_delta) on every CPU kernel set against double-precision
 * references: unary within 1e-6 / 2e-6 relative (SiLU's exp is swiglu's
 * polynomial), the AVX2 set's unary equal to the scalar set's bit for bit;
 * the convolution equal to the float formula bit for bit (same order); the
 * delta rule within 1e-4 (with 2 key heads for 4 value heads); a sequence
 * split in two calls equal to one call (the carried state); 1 and 2
 * threads; validation.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llama/runtime.h"

static llm_backend *make(llm_kernels k, int threads) {
    llm_backend_params p = llm_backend_default_params();
    p.kernels = k;
    p.n_threads = threads;
    llm_backend *be = NULL;
    cr_assert_eq(llm_backend_create("cpu", &p, &be), LLM_OK, "%s", llm_runtime_last_error());
    return be;
}

static llm_tensor put(llm_backend *be, llm_buffer **buf, const float *v, int64_t d0, int64_t d1, int64_t d2) {
    const size_t n = (size_t)(d0 * d1 * d2);
    cr_assert_eq(llm_buffer_alloc(be, n * sizeof(float), buf), LLM_OK);
    if (v) cr_assert_eq(llm_buffer_write(*buf, 0, v, n * sizeof(float)), LLM_OK);
    return llm_tensor_4d(*buf, 0, LLM_DTYPE_F32, d0, d1, d2, 1);
}

static float frand(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) / 16777216.0 * 2.0 - 1.0);
}

Test(ssm_ops, unary_matches_double_reference) {
    const int64_t d = 100, rows = 7, n = d * rows;
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n), *ys = malloc(sizeof(float) * n);
    uint32_t s = 3;
    for (int64_t i = 0; i < n; i++) x[i] = 12.0f * frand(&s);
    x[0] = 25.0f; /* softplus above its cut-off */
    for (int kind = 0; kind < 3; kind++) {
        for (int k = 0; k < 2; k++) {
            llm_backend *be = make(k ? LLM_KERNELS_AUTO : LLM_KERNELS_SCALAR, 2);
            llm_buffer *bx, *by;
            llm_tensor tx = put(be, &bx, x, d, rows, 1), ty = put(be, &by, NULL, d, rows, 1);
            cr_assert_eq(llm_op_unary(be, &ty, &tx, (llm_unary)kind), LLM_OK, "%s", llm_runtime_last_error());
            llm_buffer_read(by, 0, k ? y : ys, sizeof(float) * (size_t)n);
            for (int64_t i = 0; i < n; i++) {
                const double v = x[i];
                const double ref = kind == 0 ? v / (1 + exp(-v)) : kind == 1 ? 1 / (1 + exp(-v)) : log1p(exp(v));
                const float got = (k ? y : ys)[i];
                cr_assert(fabs(got - ref) <= (kind == 0 ? 1e-6 : 2e-6) * (1 + fabs(ref)), "kind %d x %g: %g vs %g",
                          kind, v, (double)got, ref);
            }
            llm_buffer_free(bx);
            llm_buffer_free(by);
            llm_backend_free(be);
        }
        cr_assert(memcmp(y, ys, sizeof(float) * (size_t)n) == 0, "kind %d: AVX2 differs from the scalar set", kind);
    }
    llm_backend *be = make(LLM_KERNELS_AUTO, 1);
    llm_buffer *bx;
    llm_tensor tx = put(be, &bx, x, d, rows, 1);
    cr_expect_eq(llm_op_unary(be, &tx, &tx, (llm_unary)7), LLM_ERR_INVALID_ARG);
    llm_buffer_free(bx);
    llm_backend_free(be);
    free(x);
    free(y);
    free(ys);
}

/* Causal convolution: one call of 9 rows equals 4 + 5 rows with the state
 * carried, both equal to the plain formula in float (same order). */
Test(ssm_ops, conv_carries_state) {
    enum { C = 40, K = 4, N = 9 };
    float x[N * C], w[C * K], out[N * C], out2[N * C], st[(K - 1) * C];
    uint32_t s = 5;
    for (int i = 0; i < N * C; i++) x[i] = frand(&s);
    for (int i = 0; i < C * K; i++) w[i] = frand(&s);
    for (int k = 0; k < 2; k++) {
        llm_backend *be = make(k ? LLM_KERNELS_AUTO : LLM_KERNELS_SCALAR, 2);
        llm_buffer *bx, *bw, *bo, *bs, *bs2;
        llm_tensor tx = put(be, &bx, x, C, N, 1), tw = put(be, &bw, w, K, C, 1), to = put(be, &bo, NULL, C, N, 1);
        llm_tensor ts = put(be, &bs, NULL, C, K - 1, 1), ts2 = put(be, &bs2, NULL, C, K - 1, 1);
        cr_assert_eq(llm_op_ssm_conv(be, &to, &tx, &ts, &tw), LLM_OK, "%s", llm_runtime_last_error());
        llm_buffer_read(bo, 0, out, sizeof out);
        llm_buffer_read(bs, 0, st, sizeof st);
        for (int t = 0; t < N; t++)
            for (int c = 0; c < C; c++) {
                float sum = 0.0f;
                for (int i = 0; i < K; i++) {
                    const int r = t + i - (K - 1);
                    sum += (r < 0 ? 0.0f : x[r * C + c]) * w[c * K + i];
                }
                cr_assert_eq(out[t * C + c], sum, "t %d c %d", t, c);
            }
        for (int r = 0; r < K - 1; r++)
            for (int c = 0; c < C; c++) cr_assert_eq(st[r * C + c], x[(N - (K - 1) + r) * C + c]);
        /* In two calls. */
        llm_tensor x1 = llm_tensor_4d(bx, 0, LLM_DTYPE_F32, C, 4, 1, 1), o1 = llm_tensor_4d(bo, 0, LLM_DTYPE_F32, C, 4, 1, 1);
        llm_tensor x2 = llm_tensor_4d(bx, 4 * C * 4, LLM_DTYPE_F32, C, 5, 1, 1);
        llm_tensor o2 = llm_tensor_4d(bo, 4 * C * 4, LLM_DTYPE_F32, C, 5, 1, 1);
        cr_assert_eq(llm_op_ssm_conv(be, &o1, &x1, &ts2, &tw), LLM_OK);
        cr_assert_eq(llm_op_ssm_conv(be, &o2, &x2, &ts2, &tw), LLM_OK);
        llm_buffer_read(bo, 0, out2, sizeof out2);
        cr_assert(memcmp(out, out2, sizeof out) == 0, "4 + 5 rows differ from 9");
        cr_expect_eq(llm_op_ssm_conv(be, &tx, &tx, &ts, &tw), LLM_ERR_INVALID_ARG); /* out aliases x */
        cr_expect_eq(llm_op_ssm_conv(be, &to, &tx, &tx, &tw), LLM_ERR_INVALID_ARG); /* state of N rows */
        llm_buffer_free(bx);
        llm_buffer_free(bw);
        llm_buffer_free(bo);
        llm_buffer_free(bs);
        llm_buffer_free(bs2);
        llm_backend_free(be);
    }
}

/* The delta rule against a double reference, with 2 key heads for 4 value
 * heads (key head h % 2), and split into 3 + 2 tokens. */
Test(ssm_ops, gated_delta_matches_reference) {
    enum { D = 32, HK = 2, HV = 4, N = 5 };
    static float q[N * HK * D], kk[N * HK * D], v[N * HV * D], g[N * HV], beta[N * HV];
    static float out[N * HV * D], out2[N * HV * D], st0[HV * D * D];
    static double S[HV][D][D];
    uint32_t s = 9;
    for (int i = 0; i < N * HK * D; i++) q[i] = frand(&s) / 4, kk[i] = frand(&s) / 4;
    for (int i = 0; i < N * HV * D; i++) v[i] = frand(&s);
    for (int i = 0; i < N * HV; i++) g[i] = -0.5f * (frand(&s) + 1.0f), beta[i] = 0.5f + 0.4f * frand(&s);
    for (int i = 0; i < HV * D * D; i++) st0[i] = 0.1f * frand(&s);
    for (int k = 0; k < 2; k++) {
        for (int threads = 1; threads <= 2; threads++) {
            llm_backend *be = make(k ? LLM_KERNELS_AUTO : LLM_KERNELS_SCALAR, threads);
            llm_buffer *bq, *bk, *bv, *bg, *bb, *bo, *bs, *bs2;
            llm_tensor tq = put(be, &bq, q, D, HK, N), tk = put(be, &bk, kk, D, HK, N), tv = put(be, &bv, v, D, HV, N);
            llm_tensor tg = put(be, &bg, g, HV, N, 1), tb = put(be, &bb, beta, HV, N, 1);
            llm_tensor to = put(be, &bo, NULL, D, HV, N), ts = put(be, &bs, st0, D, D, HV);
            llm_tensor ts2 = put(be, &bs2, st0, D, D, HV);
            cr_assert_eq(llm_op_gated_delta(be, &to, &tq, &tk, &tv, &tg, &tb, &ts), LLM_OK, "%s",
                         llm_runtime_last_error());
            llm_buffer_read(bo, 0, out, sizeof out);
            /* reference: S[h][j][i] = S_math[i][j] */
            for (int h = 0; h < HV; h++)
                for (int j = 0; j < D; j++)
                    for (int i = 0; i < D; i++) S[h][j][i] = st0[(h * D + j) * D + i];
            for (int t = 0; t < N; t++)
                for (int h = 0; h < HV; h++) {
                    const float *qh = q + (t * HK + h % HK) * D, *kh = kk + (t * HK + h % HK) * D;
                    const double e = exp(g[t * HV + h]);
                    double d[D];
                    for (int j = 0; j < D; j++) {
                        double sk = 0;
                        for (int i = 0; i < D; i++) S[h][j][i] *= e, sk += S[h][j][i] * kh[i];
                        d[j] = (v[(t * HV + h) * D + j] - sk) * beta[t * HV + h];
                    }
                    for (int j = 0; j < D; j++) {
                        double o = 0;
                        for (int i = 0; i < D; i++) S[h][j][i] += kh[i] * d[j], o += S[h][j][i] * qh[i];
                        const double ref = o / sqrt((double)D), got = out[(t * HV + h) * D + j];
                        cr_assert(fabs(got - ref) <= 1e-4 * (1 + fabs(ref)), "t %d h %d j %d: %g vs %g", t, h, j, got,
                                  ref);
                    }
                }
            /* 3 + 2 tokens, the state carried in place. */
            for (int part = 0; part < 2; part++) {
                const int64_t a = part ? 3 : 0, n = part ? 2 : 3;
                llm_tensor pq = llm_tensor_4d(bq, (size_t)(a * HK * D * 4), LLM_DTYPE_F32, D, HK, n, 1);
                llm_tensor pk = llm_tensor_4d(bk, (size_t)(a * HK * D * 4), LLM_DTYPE_F32, D, HK, n, 1);
                llm_tensor pv = llm_tensor_4d(bv, (size_t)(a * HV * D * 4), LLM_DTYPE_F32, D, HV, n, 1);
                llm_tensor po = llm_tensor_4d(bo, (size_t)(a * HV * D * 4), LLM_DTYPE_F32, D, HV, n, 1);
                llm_tensor pg = llm_tensor_4d(bg, (size_t)(a * HV * 4), LLM_DTYPE_F32, HV, n, 1, 1);
                llm_tensor pb = llm_tensor_4d(bb, (size_t)(a * HV * 4), LLM_DTYPE_F32, HV, n, 1, 1);
                cr_assert_eq(llm_op_gated_delta(be, &po, &pq, &pk, &pv, &pg, &pb, &ts2), LLM_OK);
            }
            llm_buffer_read(bo, 0, out2, sizeof out2);
            cr_assert(memcmp(out, out2, sizeof out) == 0, "3 + 2 tokens differ from 5");
            cr_expect_eq(llm_op_gated_delta(be, &to, &tv, &tk, &tv, &tg, &tb, &ts), LLM_ERR_INVALID_ARG); /* q heads */
            llm_buffer *bufs[] = {bq, bk, bv, bg, bb, bo, bs, bs2};
            for (int i = 0; i < 8; i++) llm_buffer_free(bufs[i]);
            llm_backend_free(be);
        }
    }
}
