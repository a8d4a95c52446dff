/*
 * test_geglu.c -- llm_op_geglu (out = gelu_tanh(gate) * up) against
 * llama.cpp's own ggml_geglu_split, bit for bit: hashes made by
 * scripts/golden/kernels/geglu_llamacpp.py from the libggml-cpu that
 * llama-cpp-python 0.3.36 ships, over every F16 input (so every entry of
 * the F16 GELU table, and the +-10 cut-offs) and over random rows with
 * values at and beyond +-10. Also: a double-precision gelu_tanh within F16
 * precision, thread-count invariance, aliasing and argument validation.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "golden_gen.h"
#include "llama/runtime.h"

/* geglu_llamacpp.py output: case, row length, rows, FNV-1a 64 of the output floats. */
static const struct {
    const char *name;
    int64_t n, rows;
    uint64_t hash;
} g_geglu_golden[] = {
    {"all_f16", 65536, 1, 0x92D95B74D334447DULL},
    {"rows", 1000, 3, 0x2361F7AFBE247D85ULL},
};

static uint64_t fnv(const void *data, size_t len) {
    const uint8_t *p = data;
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001B3ull;
    }
    return h;
}

/* uniform() of the script: each step rounded to float. */
static float uniform(uint32_t *s, float lo, float width) {
    const float u = (float)((double)gold_next(s) / 4294967296.0);
    return u * width + lo;
}

/* The inputs of golden case c into gate / up (n * rows floats each). */
static void make_case(int c, float *gate, float *up) {
    if (c == 0) {
        for (uint32_t h = 0; h < 65536; h++) {
            gate[h] = llm_fp16_to_fp32((uint16_t)h);
            up[h] = 1.0f;
        }
        return;
    }
    static const float special[8] = {-10.5f, -10.0f, -9.999f, -0.0f, 0.0f, 9.999f, 10.0f, 10.5f};
    uint32_t s = gold_seed(7000);
    const int64_t n = g_geglu_golden[1].n;
    for (int64_t r = 0; r < g_geglu_golden[1].rows; r++) {
        for (int64_t i = 0; i < n; i++) {
            gate[r * n + i] = uniform(&s, -12.0f, 24.0f);
            up[r * n + i] = uniform(&s, -2.0f, 4.0f);
        }
        for (int i = 0; i < 8; i++) gate[r * n + i] = special[i];
    }
}

static llm_backend *make_backend(llm_kernels k, int threads) {
    llm_backend_params p = llm_backend_default_params();
    p.kernels = k;
    p.n_threads = threads;
    llm_backend *be = NULL;
    cr_assert_eq(llm_backend_create("cpu", &p, &be), LLM_OK, "%s", llm_runtime_last_error());
    return be;
}

/* out = geglu(gate, up) on be; alias: 0 separate out, 1 out = gate, 2 out = up. */
static void run(llm_backend *be, const float *gate, const float *up, int64_t n, int64_t rows, int alias,
                float *out) {
    const size_t bytes = sizeof(float) * (size_t)(n * rows);
    llm_buffer *bg, *bu, *bo = NULL;
    cr_assert_eq(llm_buffer_alloc(be, bytes, &bg), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(be, bytes, &bu), LLM_OK);
    llm_buffer_write(bg, 0, gate, bytes);
    llm_buffer_write(bu, 0, up, bytes);
    llm_tensor tg = llm_tensor_2d(bg, 0, LLM_DTYPE_F32, n, rows), tu = llm_tensor_2d(bu, 0, LLM_DTYPE_F32, n, rows);
    llm_tensor to = alias == 1 ? tg : tu;
    if (alias == 0) {
        cr_assert_eq(llm_buffer_alloc(be, bytes, &bo), LLM_OK);
        to = llm_tensor_2d(bo, 0, LLM_DTYPE_F32, n, rows);
    }
    cr_assert_eq(llm_op_geglu(be, &to, &tg, &tu), LLM_OK, "%s", llm_runtime_last_error());
    llm_buffer_read(to.buffer, 0, out, bytes);
    llm_buffer_free(bg);
    llm_buffer_free(bu);
    llm_buffer_free(bo);
}

Test(geglu, equals_llamacpp) {
    static const llm_kernels kinds[2] = {LLM_KERNELS_SCALAR, LLM_KERNELS_AUTO};
    for (int c = 0; c < 2; c++) {
        const int64_t n = g_geglu_golden[c].n, rows = g_geglu_golden[c].rows;
        float *gate = malloc(sizeof(float) * (size_t)(n * rows)), *up = malloc(sizeof(float) * (size_t)(n * rows));
        float *out = malloc(sizeof(float) * (size_t)(n * rows));
        make_case(c, gate, up);
        for (int k = 0; k < 2; k++) {
            for (int threads = 1; threads <= 3; threads += 2) {
                llm_backend *be = make_backend(kinds[k], threads);
                for (int alias = 0; alias < 3; alias++) {
                    run(be, gate, up, n, rows, alias, out);
                    cr_assert_eq(fnv(out, sizeof(float) * (size_t)(n * rows)), g_geglu_golden[c].hash,
                                 "case %s, %s, %d threads, alias %d: output differs from llama.cpp's",
                                 g_geglu_golden[c].name, llm_backend_kernels(be), threads, alias);
                }
                llm_backend_free(be);
            }
        }
        free(gate);
        free(up);
        free(out);
    }
}

/* The table rule is gelu_tanh to F16 precision: within 2^-10 relative (one
 * F16 rounding of gate, one of the result) plus the F16 subnormal step. */
Test(geglu, close_to_double_gelu) {
    llm_backend *be = make_backend(LLM_KERNELS_AUTO, 2);
    enum { N = 4001 };
    static float gate[N], up[N], out[N];
    for (int i = 0; i < N; i++) {
        gate[i] = -12.0f + 24.0f * (float)i / (float)(N - 1);
        up[i] = 1.0f;
    }
    run(be, gate, up, N, 1, 0, out);
    for (int i = 0; i < N; i++) {
        const double x = gate[i];
        const double want = x <= -10 ? 0.0 : x >= 10 ? x : 0.5 * x * (1.0 + tanh(0.79788456080286535588 * x * (1.0 + 0.044715 * x * x)));
        cr_assert_leq(fabs(out[i] - want), 2e-3 * fabs(want) + 2e-3 * fabs(x) + 1e-7, "gelu(%g) = %g, want %g", x,
                      (double)out[i], want);
    }
    llm_backend_free(be);
}

Test(geglu, validation) {
    llm_backend *be = make_backend(LLM_KERNELS_AUTO, 1);
    cr_assert(llm_backend_supports(be, LLM_OP_GEGLU, LLM_DTYPE_F32));
    cr_assert(!llm_backend_supports(be, LLM_OP_GEGLU, LLM_DTYPE_F16));
    cr_assert_str_eq(llm_op_name(LLM_OP_GEGLU), "geglu");
    llm_buffer *b;
    cr_assert_eq(llm_buffer_alloc(be, 4 * 64, &b), LLM_OK);
    llm_tensor a = llm_tensor_2d(b, 0, LLM_DTYPE_F32, 8, 4), c = llm_tensor_2d(b, 0, LLM_DTYPE_F32, 8, 3);
    llm_tensor h = llm_tensor_2d(b, 0, LLM_DTYPE_F16, 8, 4);
    cr_assert_eq(llm_op_geglu(be, &a, &a, &c), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_op_geglu(be, &a, &h, &a), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_op_geglu(NULL, &a, &a, &a), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_op_geglu(be, &a, &a, &a), LLM_OK);
    llm_op_stats st[LLM_OP_COUNT];
    llm_backend_stats(be, st);
    cr_assert_eq(st[LLM_OP_GEGLU].calls, 1);
    llm_buffer_free(b);
    llm_backend_free(be);
}
