/*
 * test_encoder_ops.c -- the encoder ops (llm_op_layer_norm, llm_op_gelu,
 * llm_op_attention_full) on every CPU kernel set against double-precision
 * references: LayerNorm within 1e-5 relative, erf GELU within 3e-7 absolute
 * of libm's erf, attention within 1e-5; the AVX2 GELU equal to the scalar
 * one bit for bit; results independent of the thread count; validation.
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

/* A contiguous F32 tensor [d2][d1][d0] holding v (copied in). */
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

Test(encoder_ops, layer_norm_matches_double_reference) {
    const int64_t d = 384, rows = 37;
    float *x = malloc(sizeof(float) * d * rows), *w = malloc(sizeof(float) * d), *b = malloc(sizeof(float) * d);
    float *y = malloc(sizeof(float) * d * rows);
    uint32_t s = 1;
    for (int64_t i = 0; i < d * rows; i++) x[i] = 3.0f * frand(&s) + 0.5f;
    for (int64_t i = 0; i < d; i++) w[i] = 1.0f + 0.2f * frand(&s), b[i] = 0.1f * frand(&s);
    for (int k = 0; k < 2; k++) {
        llm_backend *be = make(k ? LLM_KERNELS_AUTO : LLM_KERNELS_SCALAR, 2);
        llm_buffer *bx, *bw, *bb, *by;
        llm_tensor tx = put(be, &bx, x, d, rows, 1), tw = put(be, &bw, w, d, 1, 1), tb = put(be, &bb, b, d, 1, 1);
        llm_tensor ty = put(be, &by, NULL, d, rows, 1);
        cr_assert_eq(llm_op_layer_norm(be, &ty, &tx, &tw, &tb, 1e-12f), LLM_OK, "%s", llm_runtime_last_error());
        llm_buffer_read(by, 0, y, sizeof(float) * d * rows);
        for (int64_t r = 0; r < rows; r++) {
            double mu = 0, var = 0;
            for (int64_t j = 0; j < d; j++) mu += x[r * d + j];
            mu /= (double)d;
            for (int64_t j = 0; j < d; j++) var += (x[r * d + j] - mu) * (x[r * d + j] - mu);
            var /= (double)d;
            for (int64_t j = 0; j < d; j++) {
                const double ref = (x[r * d + j] - mu) / sqrt(var + 1e-12) * w[j] + b[j];
                cr_assert(fabs(y[r * d + j] - ref) <= 1e-5 * (1 + fabs(ref)), "row %lld col %lld: %g vs %g",
                          (long long)r, (long long)j, y[r * d + j], ref);
            }
        }
        /* NULL weight and bias: plain normalisation; in place. */
        cr_assert_eq(llm_op_layer_norm(be, &tx, &tx, NULL, NULL, 1e-5f), LLM_OK);
        llm_buffer_free(bx), llm_buffer_free(bw), llm_buffer_free(bb), llm_buffer_free(by);
        llm_backend_free(be);
    }
    free(x), free(w), free(b), free(y);
}

Test(encoder_ops, gelu_erf_accuracy_and_scalar_equals_avx2) {
    const int64_t n = 200003; /* odd: a tail after the 8-lane blocks */
    float *x = malloc(sizeof(float) * n), *y[2];
    for (int64_t i = 0; i < n; i++) x[i] = -12.0f + 24.0f * (float)i / (float)(n - 1);
    x[0] = -0.0f, x[1] = 0.0f, x[2] = -10.0f, x[3] = 10.0f, x[4] = -9.99999f, x[5] = 9.99999f;
    for (int k = 0; k < 2; k++) {
        llm_backend *be = make(k ? LLM_KERNELS_AUTO : LLM_KERNELS_SCALAR, k ? 2 : 1);
        llm_buffer *bx, *by;
        llm_tensor tx = put(be, &bx, x, n, 1, 1), ty = put(be, &by, NULL, n, 1, 1);
        cr_assert_eq(llm_op_gelu(be, &ty, &tx), LLM_OK);
        y[k] = malloc(sizeof(float) * n);
        llm_buffer_read(by, 0, y[k], sizeof(float) * n);
        llm_buffer_free(bx), llm_buffer_free(by);
        llm_backend_free(be);
    }
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        const double ref = 0.5 * x[i] * (1.0 + erf(x[i] / sqrt(2.0)));
        const double e = fabs(y[0][i] - ref);
        worst = e > worst ? e : worst;
        cr_assert(e <= 3e-7 * (1 + fabs(ref)), "gelu(%g) = %.9g, erf reference %.9g", x[i], y[0][i], ref);
    }
    cr_expect(!memcmp(y[0], y[1], sizeof(float) * n), "the AVX2 GELU differs from the scalar reference");
    cr_log_info("gelu: max abs error %.3g", worst);
    free(x), free(y[0]), free(y[1]);
}

Test(encoder_ops, attention_full_matches_reference_and_threads) {
    const int64_t n = 19, nh = 4, nkv = 2, hd = 32;
    const size_t qn = (size_t)(n * nh * hd), kn = (size_t)(n * nkv * hd);
    float *q = malloc(sizeof(float) * qn), *k = malloc(sizeof(float) * kn), *v = malloc(sizeof(float) * kn);
    float *o[2];
    uint32_t s = 7;
    for (size_t i = 0; i < qn; i++) q[i] = frand(&s);
    for (size_t i = 0; i < kn; i++) k[i] = frand(&s), v[i] = frand(&s);
    const float scale = 1.0f / sqrtf((float)hd);
    for (int t = 0; t < 2; t++) {
        llm_backend *be = make(LLM_KERNELS_AUTO, t ? 2 : 1);
        llm_buffer *bq, *bk, *bv, *bo;
        llm_tensor tq = put(be, &bq, q, hd, nh, n), tk = put(be, &bk, k, hd, nkv, n), tv = put(be, &bv, v, hd, nkv, n);
        llm_tensor to = put(be, &bo, NULL, hd, nh, n);
        const int32_t one[1] = {(int32_t)n};
        cr_assert_eq(llm_op_attention_full(be, &to, &tq, &tk, &tv, one, 1, scale), LLM_OK, "%s",
                     llm_runtime_last_error());
        o[t] = malloc(sizeof(float) * qn);
        llm_buffer_read(bo, 0, o[t], sizeof(float) * qn);
        /* a mismatched k is refused */
        llm_tensor bad = tk;
        bad.ne[1] = 3;
        cr_expect_eq(llm_op_attention_full(be, &to, &tq, &bad, &tv, one, 1, scale), LLM_ERR_INVALID_ARG);
        const int32_t short_lens[2] = {5, 5}; /* cover 10 of 19 tokens */
        cr_expect_eq(llm_op_attention_full(be, &to, &tq, &tk, &tv, short_lens, 2, scale), LLM_ERR_INVALID_ARG);
        /* Packed: sequences of 7, 1 and 11 tokens give what each gives alone. */
        const int32_t lens[3] = {7, 1, 11};
        cr_assert_eq(llm_op_attention_full(be, &to, &tq, &tk, &tv, lens, 3, scale), LLM_OK);
        float *packed = malloc(sizeof(float) * qn);
        llm_buffer_read(bo, 0, packed, sizeof(float) * qn);
        for (int sq = 0, t0 = 0; sq < 3; t0 += lens[sq++]) {
            llm_tensor q1 = llm_tensor_4d(bq, (size_t)(t0 * nh * hd) * 4, LLM_DTYPE_F32, hd, nh, lens[sq], 1);
            llm_tensor k1 = llm_tensor_4d(bk, (size_t)(t0 * nkv * hd) * 4, LLM_DTYPE_F32, hd, nkv, lens[sq], 1);
            llm_tensor v1 = llm_tensor_4d(bv, (size_t)(t0 * nkv * hd) * 4, LLM_DTYPE_F32, hd, nkv, lens[sq], 1);
            llm_tensor o1 = llm_tensor_4d(bo, 0, LLM_DTYPE_F32, hd, nh, lens[sq], 1);
            cr_assert_eq(llm_op_attention_full(be, &o1, &q1, &k1, &v1, &lens[sq], 1, scale), LLM_OK);
            float *alone = malloc(sizeof(float) * (size_t)(lens[sq] * nh * hd));
            llm_buffer_read(bo, 0, alone, sizeof(float) * (size_t)(lens[sq] * nh * hd));
            cr_expect(!memcmp(alone, packed + t0 * nh * hd, sizeof(float) * (size_t)(lens[sq] * nh * hd)),
                      "sequence %d packed != alone", sq);
            free(alone);
        }
        free(packed);
        llm_buffer_free(bq), llm_buffer_free(bk), llm_buffer_free(bv), llm_buffer_free(bo);
        llm_backend_free(be);
    }
    cr_expect(!memcmp(o[0], o[1], sizeof(float) * qn), "1 and 2 threads differ");
    for (int64_t i = 0; i < n; i++)
        for (int64_t h = 0; h < nh; h++) {
            const int64_t g = h / (nh / nkv);
            double sc[64], mx = -1e300, sum = 0;
            for (int64_t j = 0; j < n; j++) {
                double dot = 0;
                for (int64_t d = 0; d < hd; d++) dot += (double)q[(i * nh + h) * hd + d] * k[(j * nkv + g) * hd + d];
                sc[j] = dot * scale;
                mx = sc[j] > mx ? sc[j] : mx;
            }
            for (int64_t j = 0; j < n; j++) sum += sc[j] = exp(sc[j] - mx);
            for (int64_t d = 0; d < hd; d++) {
                double ref = 0;
                for (int64_t j = 0; j < n; j++) ref += sc[j] / sum * v[(j * nkv + g) * hd + d];
                cr_assert(fabs(o[0][(i * nh + h) * hd + d] - ref) <= 1e-5, "q %lld head %lld dim %lld: %g vs %g",
                          (long long)i, (long long)h, (long long)d, o[0][(i * nh + h) * hd + d], ref);
            }
        }
    free(q), free(k), free(v), free(o[0]), free(o[1]);
}

Test(encoder_ops, supported_on_cpu) {
    llm_backend *be = make(LLM_KERNELS_AUTO, 1);
    cr_expect(llm_backend_supports(be, LLM_OP_LAYER_NORM, LLM_DTYPE_F32));
    cr_expect(llm_backend_supports(be, LLM_OP_GELU, LLM_DTYPE_F32));
    cr_expect(llm_backend_supports(be, LLM_OP_ATTENTION_FULL, LLM_DTYPE_F32));
    cr_expect(!llm_backend_supports(be, LLM_OP_GELU, LLM_DTYPE_F16));
    cr_expect_str_eq(llm_op_name(LLM_OP_ATTENTION_FULL), "attention_full");
    llm_backend_free(be);
}
