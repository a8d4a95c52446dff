/*
 * test_ops.c -- the public ops of every CPU kernel selection (scalar, auto,
 * and auto capped at AVX2 / AVX-VNNI) against plain double-precision references written here, plus thread
 * count invariance (bit-identical) and argument validation.
 *
 * Tolerances: elementwise ops 1e-6 relative (one float rounding); rms_norm and
 * softmax 1e-5 relative; rope 1e-5 absolute on unit inputs (float angles, as
 * llama.cpp computes them, vs double angles here: positions < 2000); matmul
 * on F32 weights 1e-5 of sum |x*w|; quantized weights are checked against the
 * dequantized weights times the exact x, with 2% of sum |x*w| for the 8-bit
 * activation quantization (amax/127 steps: per element error <= amax/254);
 * attention 2e-3 absolute with an F16 cache (q, K and V are rounded to half,
 * 2^-11 relative each) and 1e-5 with an F32 cache.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llama/runtime.h"

static uint64_t g_rng = 0x1234567887654321ull;
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

/* A buffer holding host data, and an F32 tensor [rows][cols] over it. */
static llm_tensor upload(llm_backend *be, llm_buffer **buf, const float *data, int64_t cols, int64_t rows) {
    size_t bytes = sizeof(float) * (size_t)(cols * rows);
    cr_assert_eq(llm_buffer_alloc(be, bytes, buf), LLM_OK);
    if (data) cr_assert_eq(llm_buffer_write(*buf, 0, data, bytes), LLM_OK);
    return llm_tensor_2d(*buf, 0, LLM_DTYPE_F32, cols, rows);
}

static void download(const llm_tensor *t, float *dst) {
    cr_assert_eq(llm_buffer_read(t->buffer, t->offset, dst, llm_tensor_nbytes(t)), LLM_OK);
}

static const llm_kernels g_kernels[] = {LLM_KERNELS_SCALAR, LLM_KERNELS_AUTO, LLM_KERNELS_AVX2, LLM_KERNELS_AVX_VNNI};

/* LLM_CPU_KERNELS caps an AUTO selection (runtime.h llm_kernels); a value
 * it does not know is an error, not a silent default; an explicit
 * selection ignores it; an unknown selection is refused. */
Test(ops, kernel_selection_and_its_environment_cap) {
    llm_backend_params p = llm_backend_default_params();
    p.n_threads = 1;
    llm_backend *be = NULL;
    cr_assert_eq(setenv("LLM_CPU_KERNELS", "avx9", 1), 0);
    cr_assert_eq(llm_backend_create("cpu", &p, &be), LLM_ERR_INVALID_ARG);
    cr_assert_null(be);
    cr_assert(strstr(llm_runtime_last_error(), "LLM_CPU_KERNELS=avx9"), "%s", llm_runtime_last_error());
    cr_assert_eq(setenv("LLM_CPU_KERNELS", "scalar", 1), 0);
    cr_assert_eq(llm_backend_create("cpu", &p, &be), LLM_OK);
    cr_assert_str_eq(llm_backend_kernels(be), "scalar");
    llm_backend_free(be);
    p.kernels = LLM_KERNELS_AVX2; /* explicit: the variable does not apply */
    cr_assert_eq(llm_backend_create("cpu", &p, &be), LLM_OK);
    const int has_avx2 = strcmp(llm_backend_kernels(be), "scalar") != 0;
    if (has_avx2) cr_assert_str_eq(llm_backend_kernels(be), "avx2+fma+f16c");
    llm_backend_free(be);
    cr_assert_eq(setenv("LLM_CPU_KERNELS", "avx2", 1), 0);
    p.kernels = LLM_KERNELS_AUTO;
    cr_assert_eq(llm_backend_create("cpu", &p, &be), LLM_OK);
    cr_assert_str_eq(llm_backend_kernels(be), has_avx2 ? "avx2+fma+f16c" : "scalar");
    llm_backend_free(be);
    cr_assert_eq(unsetenv("LLM_CPU_KERNELS"), 0);
    p.kernels = (llm_kernels)7;
    cr_assert_eq(llm_backend_create("cpu", &p, &be), LLM_ERR_INVALID_ARG);
    cr_assert_null(be);
}

Test(ops, backend_basics) {
    llm_backend *be = NULL;
    cr_assert_eq(llm_backend_create("nope", NULL, &be), LLM_ERR_NOT_FOUND);
    cr_assert_null(be);
    cr_assert_eq(llm_backend_create("auto", NULL, &be), LLM_OK);
    /* "auto" is CUDA on a machine with a device and a CUDA build, else the CPU. */
    cr_assert(strcmp(llm_backend_name(be), "cpu") == 0 || strcmp(llm_backend_name(be), "cuda") == 0,
              "auto gave '%s'", llm_backend_name(be));
    cr_assert_geq(llm_backend_n_threads(be), 1);
    llm_buffer *b = NULL;
    cr_assert_eq(llm_buffer_alloc(be, 64, &b), LLM_OK);
    char in[16] = "abcdefghijklmno", out[16] = {0};
    cr_assert_eq(llm_buffer_write(b, 48, in, 16), LLM_OK);
    cr_assert_eq(llm_buffer_write(b, 49, in, 16), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_buffer_read(b, 48, out, 16), LLM_OK);
    cr_assert_eq(memcmp(in, out, 16), 0);
    /* Device-side copy, overlapping ranges included. */
    cr_assert_eq(llm_buffer_copy(b, 0, b, 48, 16), LLM_OK);
    cr_assert_eq(llm_buffer_copy(b, 4, b, 0, 16), LLM_OK); /* overlap: memmove semantics */
    cr_assert_eq(llm_buffer_read(b, 4, out, 16), LLM_OK);
    cr_assert_eq(memcmp(in, out, 16), 0);
    cr_assert_eq(llm_buffer_copy(b, 60, b, 0, 16), LLM_ERR_INVALID_ARG);
    llm_buffer *w = NULL;
    cr_assert_eq(llm_buffer_wrap_host(be, in, sizeof(in), &w), LLM_OK);
    cr_assert_eq(llm_buffer_copy(w, 0, b, 0, 4), LLM_ERR_STATE);
    cr_assert_eq(llm_buffer_write(w, 0, out, 1), LLM_ERR_STATE);
    cr_assert_eq(llm_buffer_read(w, 0, out, 16), LLM_OK);
    cr_assert_eq(memcmp(in, out, 16), 0);
    /* A shape mismatch is an error with a message, not a crash. */
    llm_tensor t = llm_tensor_2d(b, 0, LLM_DTYPE_F32, 4, 4), u = llm_tensor_2d(b, 0, LLM_DTYPE_F32, 3, 4);
    cr_assert_eq(llm_op_add(be, &t, &t, &u), LLM_ERR_INVALID_ARG);
    cr_assert_neq(strlen(llm_runtime_last_error()), 0);
    llm_tensor big = llm_tensor_2d(b, 0, LLM_DTYPE_F32, 4, 5); /* 80 bytes > 64 */
    cr_assert_eq(llm_op_scale(be, &big, &big, 2.0f), LLM_ERR_INVALID_ARG);
    llm_buffer_free(w);
    llm_buffer_free(b);
    llm_buffer_free(NULL);
    llm_backend_free(be);
    llm_backend_free(NULL);
}

Test(ops, elementwise_norm_softmax_argmax) {
    for (int ki = 0; ki < (int)(sizeof g_kernels / sizeof g_kernels[0]); ki++) {
        llm_backend *be = make_backend(g_kernels[ki], 2);
        const int64_t cols = 1 + rnd() % 200 + 300, rows = 37;
        const int64_t n = cols * rows;
        float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
        float *w = malloc(sizeof(float) * cols), *o = malloc(sizeof(float) * n);
        for (int64_t i = 0; i < n; i++) { a[i] = frand() * 4; b[i] = frand() * 4; }
        for (int64_t i = 0; i < cols; i++) w[i] = frand();
        llm_buffer *ba, *bb, *bw, *bo;
        llm_tensor ta = upload(be, &ba, a, cols, rows), tb = upload(be, &bb, b, cols, rows);
        llm_tensor tw = upload(be, &bw, w, cols, 1), to = upload(be, &bo, NULL, cols, rows);

        cr_assert_eq(llm_op_add(be, &to, &ta, &tb), LLM_OK);
        download(&to, o);
        for (int64_t i = 0; i < n; i++) cr_assert_float_eq(o[i], a[i] + b[i], 1e-6);
        /* A single row broadcasts over every row (a bias): one exact F32 add. */
        cr_assert_eq(llm_op_add(be, &to, &ta, &tw), LLM_OK, "%s", llm_runtime_last_error());
        download(&to, o);
        for (int64_t i = 0; i < n; i++) cr_assert_eq(o[i], a[i] + w[i % cols]);
        /* mul broadcasts a row too (qwen35's per-head decay scale): one exact F32 product. */
        cr_assert_eq(llm_op_mul(be, &to, &ta, &tw), LLM_OK, "%s", llm_runtime_last_error());
        download(&to, o);
        for (int64_t i = 0; i < n; i++) cr_assert_eq(o[i], a[i] * w[i % cols]);
        llm_tensor two = llm_tensor_2d(bb, 0, LLM_DTYPE_F32, cols, 2);
        cr_assert_eq(llm_op_add(be, &to, &ta, &two), LLM_ERR_INVALID_ARG);
        cr_assert_eq(llm_op_mul(be, &to, &ta, &two), LLM_ERR_INVALID_ARG);
        cr_assert_eq(llm_op_mul(be, &to, &ta, &tb), LLM_OK);
        download(&to, o);
        for (int64_t i = 0; i < n; i++) cr_assert_float_eq(o[i], a[i] * b[i], 1e-5);
        cr_assert_eq(llm_op_swiglu(be, &to, &ta, &tb), LLM_OK);
        download(&to, o);
        for (int64_t i = 0; i < n; i++) {
            double ref = a[i] / (1.0 + exp(-(double)a[i])) * b[i];
            cr_assert(fabs(o[i] - ref) <= 1e-5 * (fabs(ref) + 1));
        }
        cr_assert_eq(llm_op_scale(be, &to, &ta, 0.125f), LLM_OK);
        download(&to, o);
        for (int64_t i = 0; i < n; i++) cr_assert_eq(o[i], a[i] * 0.125f);

        cr_assert_eq(llm_op_rms_norm(be, &to, &ta, &tw, 1e-5f), LLM_OK);
        download(&to, o);
        for (int64_t r = 0; r < rows; r++) {
            double ss = 0;
            for (int64_t i = 0; i < cols; i++) ss += (double)a[r * cols + i] * a[r * cols + i];
            double sc = 1.0 / sqrt(ss / (double)cols + 1e-5);
            for (int64_t i = 0; i < cols; i++) {
                double ref = a[r * cols + i] * sc * w[i];
                cr_assert(fabs(o[r * cols + i] - ref) <= 1e-5 * fabs(ref) + 1e-7);
            }
        }
        cr_assert_eq(llm_op_softmax(be, &to, &ta), LLM_OK);
        download(&to, o);
        for (int64_t r = 0; r < rows; r++) {
            double mx = -1e30, sum = 0;
            for (int64_t i = 0; i < cols; i++) mx = fmax(mx, a[r * cols + i]);
            for (int64_t i = 0; i < cols; i++) sum += exp(a[r * cols + i] - mx);
            for (int64_t i = 0; i < cols; i++) {
                double ref = exp(a[r * cols + i] - mx) / sum;
                cr_assert(fabs(o[r * cols + i] - ref) <= 1e-5 * ref + 1e-9);
            }
        }
        int32_t ids[37];
        cr_assert_eq(llm_op_argmax(be, &ta, ids), LLM_OK);
        for (int64_t r = 0; r < rows; r++) {
            int64_t best = 0;
            for (int64_t i = 1; i < cols; i++) if (a[r * cols + i] > a[r * cols + best]) best = i;
            cr_assert_eq(ids[r], best);
        }
        llm_buffer_free(ba); llm_buffer_free(bb); llm_buffer_free(bw); llm_buffer_free(bo);
        free(a); free(b); free(w); free(o);
        llm_backend_free(be);
    }
}

static void rope_ref(double *v, int hd, int n_dims, int neox, double pos, double base,
                     const double *factor, double fscale, double mscale) {
    int half = n_dims / 2;
    for (int i = 0; i < half; i++) {
        double th = pos * pow(base, -2.0 * i / n_dims) / factor[i] * fscale;
        int i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
        double x0 = v[i0], x1 = v[i1];
        v[i0] = mscale * (x0 * cos(th) - x1 * sin(th));
        v[i1] = mscale * (x0 * sin(th) + x1 * cos(th));
    }
    (void)hd;
}

Test(ops, rope_modes_and_scaling) {
    llm_backend *be = make_backend(LLM_KERNELS_AUTO, 2);
    const int hd = 64, nh = 3, n = 7;
    float ff[32]; /* variant 5: per-frequency divisors and a magnitude factor (phi3 longrope) */
    for (int i = 0; i < 32; i++) ff[i] = 1.0f + 0.37f * (float)i;
    for (int variant = 0; variant < 6; variant++) {
        llm_rope_params p;
        memset(&p, 0, sizeof(p));
        p.n_dims = variant == 4 ? 32 : hd; /* partial rotation leaves the rest alone */
        p.mode = (variant & 1) ? LLM_ROPE_MODE_NEOX : LLM_ROPE_MODE_NORMAL;
        p.freq_base = variant == 0 ? 10000.0f : 100000.0f;
        p.scaling = LLM_ROPE_SCALE_NONE;
        p.freq_scale = 1.0f;
        double factor[64], fscale = 1.0, mscale = 1.0;
        for (int i = 0; i < 32; i++) factor[i] = 1.0;
        if (variant == 5) {
            p.freq_factors = ff;
            p.attn_factor = 1.190238f;
            mscale = 1.190238f;
            for (int i = 0; i < 32; i++) factor[i] = ff[i];
        } else if (variant == 2) {
            p.scaling = LLM_ROPE_SCALE_LINEAR;
            p.freq_scale = 0.25f;
            fscale = 0.25;
        } else if (variant == 3) {
            p.scaling = LLM_ROPE_SCALE_LLAMA3;
            p.llama3_factor = 8;
            p.llama3_low_freq_factor = 1;
            p.llama3_high_freq_factor = 4;
            p.llama3_orig_ctx = 8192;
            for (int i = 0; i < 32; i++) {
                double freq = pow(100000.0, -2.0 * i / 64), wl = 2 * 3.14159265358979323846 / freq;
                double lo = 8192 / 1.0, hi = 8192 / 4.0;
                if (wl < hi) factor[i] = 1;
                else if (wl > lo) factor[i] = 8;
                else {
                    double s = (8192 / wl - 1) / (4 - 1);
                    factor[i] = 1 / ((1 - s) / 8 + s);
                }
            }
        }
        float x[7 * 3 * 64], o[7 * 3 * 64];
        int32_t pos[7] = {0, 1, 5, 17, 100, 511, 1999};
        for (int i = 0; i < n * nh * hd; i++) x[i] = frand();
        llm_buffer *b;
        cr_assert_eq(llm_buffer_alloc(be, sizeof(x), &b), LLM_OK);
        llm_buffer_write(b, 0, x, sizeof(x));
        llm_tensor t = llm_tensor_4d(b, 0, LLM_DTYPE_F32, hd, nh, n, 1);
        cr_assert_eq(llm_op_rope(be, &t, pos, &p), LLM_OK, "%s", llm_runtime_last_error());
        llm_buffer_read(b, 0, o, sizeof(o));
        for (int t0 = 0; t0 < n; t0++) {
            for (int h = 0; h < nh; h++) {
                double v[64];
                for (int d = 0; d < hd; d++) v[d] = x[(t0 * nh + h) * hd + d];
                rope_ref(v, hd, p.n_dims, p.mode == LLM_ROPE_MODE_NEOX, pos[t0], p.freq_base, factor, fscale, mscale);
                for (int d = 0; d < hd; d++) {
                    /* float angles of ~2000 rad carry ~1e-4 absolute error, like llama.cpp's */
                    double tol = 1e-5 + 2.5e-7 * pos[t0];
                    cr_assert(fabs(o[(t0 * nh + h) * hd + d] - v[d]) <= tol,
                              "variant %d pos %d d %d: %g vs %g", variant, pos[t0], d,
                              (double)o[(t0 * nh + h) * hd + d], v[d]);
                }
            }
        }
        llm_buffer_free(b);
    }
    llm_backend_free(be);
}

static const llm_dtype g_wtypes[] = {LLM_DTYPE_F32, LLM_DTYPE_F16, LLM_DTYPE_BF16, LLM_DTYPE_Q4_0,
                                     LLM_DTYPE_Q4_1, LLM_DTYPE_Q8_0};

/* Quantizable weight types: matmul vs the dequantized weights in double. */
Test(ops, matmul_all_kernels_vs_reference) {
    for (int ki = 0; ki < (int)(sizeof g_kernels / sizeof g_kernels[0]); ki++) {
        llm_backend *be = make_backend(g_kernels[ki], 2);
        for (size_t ti = 0; ti < sizeof(g_wtypes) / sizeof(g_wtypes[0]); ti++) {
            llm_dtype wt = g_wtypes[ti];
            const int64_t K = 32 * (1 + rnd() % 12), M = 1 + rnd() % 70, n = 1 + rnd() % 9;
            float *wf = malloc(sizeof(float) * K * M), *x = malloc(sizeof(float) * K * n);
            float *wd = malloc(sizeof(float) * K * M), *o = malloc(sizeof(float) * M * n);
            for (int64_t i = 0; i < K * M; i++) wf[i] = frand();
            for (int64_t i = 0; i < K * n; i++) x[i] = frand() * 2;
            size_t row;
            llm_dtype_row_size(wt, (uint64_t)K, &row);
            uint8_t *wq = malloc(row * M);
            for (int64_t m = 0; m < M; m++) {
                cr_assert_eq(llm_dtype_quantize_row(wt, wf + m * K, wq + m * row, (size_t)K), LLM_OK);
                llm_dtype_dequantize_row(wt, wq + m * row, wd + m * K, (size_t)K);
            }
            llm_buffer *bw, *bx, *bo;
            cr_assert_eq(llm_buffer_wrap_host(be, wq, row * M, &bw), LLM_OK);
            llm_tensor tw = llm_tensor_2d(bw, 0, wt, K, M);
            llm_tensor tx = upload(be, &bx, x, K, n), to = upload(be, &bo, NULL, M, n);
            cr_assert_eq(llm_op_matmul(be, &to, &tx, &tw), LLM_OK, "%s", llm_runtime_last_error());
            download(&to, o);
            for (int64_t i = 0; i < n; i++) {
                for (int64_t m = 0; m < M; m++) {
                    double ref = 0, mag = 0;
                    for (int64_t k = 0; k < K; k++) {
                        ref += (double)x[i * K + k] * wd[m * K + k];
                        mag += fabs((double)x[i * K + k] * wd[m * K + k]);
                    }
                    int exact_act = wt == LLM_DTYPE_F32;
                    double tol = exact_act ? 1e-5 * mag + 1e-6 : 2e-2 * mag + 1e-4;
                    cr_assert(fabs(o[i * M + m] - ref) <= tol, "%s %s [%lld][%lld]: %g vs %g",
                              llm_backend_kernels(be), llm_dtype_name(wt), (long long)i,
                              (long long)m, (double)o[i * M + m], ref);
                }
            }
            llm_buffer_free(bw); llm_buffer_free(bx); llm_buffer_free(bo);
            free(wf); free(x); free(wd); free(o); free(wq);
        }
        llm_backend_free(be);
    }
}

/* Same inputs, 1 vs 2 vs 3 threads: identical bits (each output computed by one thread). */
Test(ops, thread_count_is_bit_identical) {
    const int64_t K = 576, M = 301, n = 13;
    float *wf = malloc(sizeof(float) * K * M), *x = malloc(sizeof(float) * K * n);
    for (int64_t i = 0; i < K * M; i++) wf[i] = frand();
    for (int64_t i = 0; i < K * n; i++) x[i] = frand();
    size_t row;
    llm_dtype_row_size(LLM_DTYPE_Q4_1, (uint64_t)K, &row);
    uint8_t *wq = malloc(row * M);
    for (int64_t m = 0; m < M; m++) llm_dtype_quantize_row(LLM_DTYPE_Q4_1, wf + m * K, wq + m * row, K);
    float *res[3];
    for (int t = 0; t < 3; t++) {
        llm_backend *be = make_backend(LLM_KERNELS_AUTO, t + 1);
        llm_buffer *bw, *bx, *bo;
        llm_buffer_wrap_host(be, wq, row * M, &bw);
        llm_tensor tw = llm_tensor_2d(bw, 0, LLM_DTYPE_Q4_1, K, M);
        llm_tensor tx = upload(be, &bx, x, K, n), to = upload(be, &bo, NULL, M, n);
        cr_assert_eq(llm_op_matmul(be, &to, &tx, &tw), LLM_OK);
        res[t] = malloc(sizeof(float) * M * n);
        download(&to, res[t]);
        llm_buffer_free(bw); llm_buffer_free(bx); llm_buffer_free(bo);
        llm_backend_free(be);
    }
    cr_assert_eq(memcmp(res[0], res[1], sizeof(float) * M * n), 0);
    cr_assert_eq(memcmp(res[0], res[2], sizeof(float) * M * n), 0);
    for (int t = 0; t < 3; t++) free(res[t]);
    free(wf); free(x); free(wq);
}

/* Paged attention through a shuffled block table == dense causal GQA attention. */
Test(ops, paged_attention_vs_dense) {
    for (int ki = 0; ki < (int)(sizeof g_kernels / sizeof g_kernels[0]); ki++) {
        for (int f16 = 0; f16 < 2; f16++) {
            llm_backend *be = make_backend(g_kernels[ki], 2);
            const int hd = 40 + 8 * (int)(rnd() % 4), nkv = 2, nh = 6, bs = 5, nblk = 12;
            const int past = 13, n = 9, total = past + n; /* 22 positions: 5 blocks */
            int32_t table[5] = {7, 2, 11, 0, 5};
            llm_dtype ct = f16 ? LLM_DTYPE_F16 : LLM_DTYPE_F32;
            size_t es = f16 ? 2 : 4, cache_bytes = es * (size_t)hd * nkv * bs * nblk;
            llm_buffer *bk, *bv;
            llm_buffer_alloc(be, cache_bytes, &bk);
            llm_buffer_alloc(be, cache_bytes, &bv);
            llm_tensor kc = llm_tensor_4d(bk, 0, ct, hd, bs, nkv, nblk);
            llm_tensor vc = llm_tensor_4d(bv, 0, ct, hd, bs, nkv, nblk);
            float *K = malloc(sizeof(float) * total * nkv * hd), *V = malloc(sizeof(float) * total * nkv * hd);
            float *Q = malloc(sizeof(float) * n * nh * hd), *O = malloc(sizeof(float) * n * nh * hd);
            for (int i = 0; i < total * nkv * hd; i++) { K[i] = frand(); V[i] = frand(); }
            for (int i = 0; i < n * nh * hd; i++) Q[i] = frand() * 2;
            int32_t pos[32];
            for (int i = 0; i < total; i++) pos[i] = i;
            /* Write the past in two chunks, then the new tokens, as prefill + decode would. */
            int chunks[3][2] = {{0, 8}, {8, past}, {past, total}};
            for (int c = 0; c < 3; c++) {
                int a = chunks[c][0], len = chunks[c][1] - a;
                llm_buffer *tk, *tv;
                llm_buffer_alloc(be, sizeof(float) * len * nkv * hd, &tk);
                llm_buffer_alloc(be, sizeof(float) * len * nkv * hd, &tv);
                llm_buffer_write(tk, 0, K + a * nkv * hd, sizeof(float) * len * nkv * hd);
                llm_buffer_write(tv, 0, V + a * nkv * hd, sizeof(float) * len * nkv * hd);
                llm_tensor k = llm_tensor_4d(tk, 0, LLM_DTYPE_F32, hd, nkv, len, 1);
                llm_tensor v = llm_tensor_4d(tv, 0, LLM_DTYPE_F32, hd, nkv, len, 1);
                cr_assert_eq(llm_op_kv_write(be, &kc, &vc, &k, &v, pos + a, table, 5), LLM_OK,
                             "%s", llm_runtime_last_error());
                llm_buffer_free(tk);
                llm_buffer_free(tv);
            }
            llm_buffer *bq, *bo;
            llm_buffer_alloc(be, sizeof(float) * n * nh * hd, &bq);
            llm_buffer_alloc(be, sizeof(float) * n * nh * hd, &bo);
            llm_buffer_write(bq, 0, Q, sizeof(float) * n * nh * hd);
            llm_tensor q = llm_tensor_4d(bq, 0, LLM_DTYPE_F32, hd, nh, n, 1);
            llm_tensor o = llm_tensor_4d(bo, 0, LLM_DTYPE_F32, hd, nh, n, 1);
            const float scale = 1.0f / sqrtf((float)hd);
            cr_assert_eq(llm_op_attention(be, &o, &q, &kc, &vc, pos + past, table, 5, scale), LLM_OK,
                         "%s", llm_runtime_last_error());
            llm_buffer_read(bo, 0, O, sizeof(float) * n * nh * hd);
            for (int i = 0; i < n; i++) {
                for (int h = 0; h < nh; h++) {
                    int kvh = h / (nh / nkv), len = past + i + 1;
                    double s[32], mx = -1e30, sum = 0;
                    for (int t = 0; t < len; t++) {
                        double d = 0;
                        for (int e = 0; e < hd; e++) d += (double)Q[(i * nh + h) * hd + e] * K[(t * nkv + kvh) * hd + e];
                        s[t] = d * scale;
                        mx = fmax(mx, s[t]);
                    }
                    for (int t = 0; t < len; t++) { s[t] = exp(s[t] - mx); sum += s[t]; }
                    for (int e = 0; e < hd; e++) {
                        double ref = 0;
                        for (int t = 0; t < len; t++) ref += s[t] / sum * V[(t * nkv + kvh) * hd + e];
                        double got = O[(i * nh + h) * hd + e];
                        cr_assert(fabs(got - ref) <= (f16 ? 2e-3 : 1e-5), "%s f16=%d i=%d h=%d e=%d: %g vs %g",
                                  llm_backend_kernels(be), f16, i, h, e, got, ref);
                    }
                }
            }
            /* A position outside the table is rejected before any work. */
            int32_t bad = 25;
            cr_assert_eq(llm_op_attention(be, &o, &q, &kc, &vc, &bad, table, 5, scale), LLM_ERR_INVALID_ARG);
            llm_buffer_free(bk); llm_buffer_free(bv); llm_buffer_free(bq); llm_buffer_free(bo);
            free(K); free(V); free(Q); free(O);
            llm_backend_free(be);
        }
    }
}

Test(ops, get_rows_dequantizes) {
    llm_backend *be = make_backend(LLM_KERNELS_AUTO, 2);
    const int64_t d = 96, rows = 10;
    float wf[960], ref[96], o[3 * 96];
    for (int i = 0; i < 960; i++) wf[i] = frand();
    size_t row;
    llm_dtype_row_size(LLM_DTYPE_Q8_0, d, &row);
    uint8_t wq[10 * 102];
    for (int r = 0; r < rows; r++) llm_dtype_quantize_row(LLM_DTYPE_Q8_0, wf + r * d, wq + r * row, d);
    llm_buffer *bw, *bo;
    llm_buffer_wrap_host(be, wq, row * rows, &bw);
    llm_tensor tw = llm_tensor_2d(bw, 0, LLM_DTYPE_Q8_0, d, rows);
    llm_tensor to = upload(be, &bo, NULL, d, 3);
    int32_t ids[3] = {9, 0, 4};
    cr_assert_eq(llm_op_get_rows(be, &to, &tw, ids, 3), LLM_OK);
    download(&to, o);
    for (int i = 0; i < 3; i++) {
        llm_dtype_dequantize_row(LLM_DTYPE_Q8_0, wq + ids[i] * row, ref, d);
        cr_assert_eq(memcmp(ref, o + i * d, sizeof(ref)), 0);
    }
    ids[1] = 10;
    cr_assert_eq(llm_op_get_rows(be, &to, &tw, ids, 3), LLM_ERR_INVALID_ARG);
    llm_op_stats st[LLM_OP_COUNT];
    llm_backend_stats(be, st);
    cr_assert_eq(st[LLM_OP_GET_ROWS].calls, 1); /* failed validation is not counted */
    llm_buffer_free(bw);
    llm_buffer_free(bo);
    llm_backend_free(be);
}
