/*
 * test_cuda_ops.c -- every CUDA op against the CPU backend on the same random
 * inputs (generated on the GPU with cuRAND), several shapes including odd
 * sizes; matmul also against a double-precision reference of the dequantized
 * weights. Skipped, visibly, when no CUDA device is present.
 *
 * Tolerances (why):
 *  - get_rows, kv caches, add/mul/scale, argmax: exact. The device dequantizers
 *    use explicitly rounded multiplies/adds in the reference's order, F32->F16
 *    is round-to-nearest-even on both sides, and the others are one IEEE op.
 *  - rms_norm: 1e-6 relative (same float ops; only the double sum's order differs).
 *  - swiglu 1e-6, softmax 1e-6 absolute + 1e-5 relative: CUDA's expf may
 *    differ from glibc's by ~2 ulp.
 *  - geglu 1e-6 absolute + 1.5e-3 relative: CUDA's tanhf may differ from
 *    glibc's by an ulp or two, which now and then moves the F16-rounded gelu
 *    by one F16 ulp (2^-10 relative).
 *  - rope: 1e-5 absolute on inputs in [-1, 1]: identical float angles, only
 *    cosf/sinf may differ by an ulp or two, even at positions of a few thousand.
 *  - matmul vs the double reference sum_k x*w (w dequantized by the reference
 *    dequantizer), relative to S = sum_k |x*w|: float mat-vec (n <= 4,
 *    F32/F16/BF16 weights, F32 x) 1e-4 S; F16 GEMM path 2.5e-3 S (x and
 *    dequantized w each rounded to half: 2 * 2^-11, plus F32 accumulation);
 *    BF16 GEMM 1e-2 S (x rounded to bf16, 2^-8); 8-bit mat-vec (n <= 4,
 *    Q4_0/Q4_1/Q5_0/Q5_1/Q8_0) 1.5e-2 S, since x is quantized to 8 bits per
 *    block of 32 (per element error <= amax/254), as on the CPU.
 *    CUDA vs CPU: 1.5e-2 S in general (the CPU quantizes x, CUDA's GEMM does
 *    not); 2e-3 S for the 8-bit mat-vec, whose block sums equal the CPU's
 *    except where the CPU's AVX2 quantizer (x * (127 / amax), ties to even)
 *    and the reference one CUDA follows (x * (1 / d), ties away) round an
 *    element differently: one quantum (amax/127 * |w|) now and then.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "cuda_pair.h"

/* ----------------------------------------------------------------- basics -- */

Test(cuda_ops, buffers_and_backend) {
    cu_pair p;
    cu_pair_open(&p);
    cr_assert_eq(llm_backend_n_threads(p.dev), p.selfcheck ? llm_backend_n_threads(p.dev) : 1);
    cr_assert(strlen(llm_backend_kernels(p.dev)) > 0);
    llm_buffer *b = NULL;
    /* Fresh buffers read back as zeros. */
    cr_assert_eq(llm_buffer_alloc(p.dev, 1000, &b), LLM_OK, "%s", llm_runtime_last_error());
    uint8_t z[1000];
    memset(z, 0xAB, sizeof z);
    cr_assert_eq(llm_buffer_read(b, 0, z, sizeof z), LLM_OK);
    for (size_t i = 0; i < sizeof z; i++) cr_assert_eq(z[i], 0, "byte %zu not zero", i);
    /* Round trip at an odd offset, then clear. */
    uint8_t src[333], dst[333];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)(i * 7 + 1);
    cr_assert_eq(llm_buffer_write(b, 17, src, sizeof src), LLM_OK);
    cr_assert_eq(llm_buffer_read(b, 17, dst, sizeof dst), LLM_OK);
    cr_assert_arr_eq(src, dst, sizeof src);
    cr_assert_eq(llm_buffer_clear(b), LLM_OK);
    cr_assert_eq(llm_buffer_read(b, 17, dst, sizeof dst), LLM_OK);
    for (size_t i = 0; i < sizeof dst; i++) cr_assert_eq(dst[i], 0);
    cr_assert_eq(llm_buffer_read(b, 990, dst, 20), LLM_ERR_INVALID_ARG);
    /* Device copies: to another buffer, and overlapping (memmove) both ways. */
    llm_buffer *b2 = NULL;
    cr_assert_eq(llm_buffer_alloc(p.dev, 1000, &b2), LLM_OK);
    cr_assert_eq(llm_buffer_write(b, 100, src, sizeof src), LLM_OK);
    cr_assert_eq(llm_buffer_copy(b2, 7, b, 100, sizeof src), LLM_OK, "%s", llm_runtime_last_error());
    cr_assert_eq(llm_buffer_read(b2, 7, dst, sizeof dst), LLM_OK);
    cr_assert_arr_eq(src, dst, sizeof src);
    cr_assert_eq(llm_buffer_copy(b, 150, b, 100, sizeof src), LLM_OK); /* dst above src */
    cr_assert_eq(llm_buffer_read(b, 150, dst, sizeof dst), LLM_OK);
    cr_assert_arr_eq(src, dst, sizeof src, "overlapping copy upwards");
    cr_assert_eq(llm_buffer_copy(b, 120, b, 150, sizeof src), LLM_OK); /* dst below src */
    cr_assert_eq(llm_buffer_read(b, 120, dst, sizeof dst), LLM_OK);
    cr_assert_arr_eq(src, dst, sizeof src, "overlapping copy downwards");
    llm_buffer_free(b2);
    llm_buffer_free(b);
    /* wrap_host copies the region: later host changes do not show. */
    uint8_t host[64];
    for (size_t i = 0; i < sizeof host; i++) host[i] = (uint8_t)i;
    cr_assert_eq(llm_buffer_wrap_host(p.dev, host, sizeof host, &b), LLM_OK);
    cr_assert_eq(llm_backend_synchronize(p.dev), LLM_OK);
    if (!p.selfcheck) {
        memset(host, 0xFF, sizeof host);
        uint8_t back[64];
        cr_assert_eq(llm_buffer_read(b, 0, back, sizeof back), LLM_OK);
        for (size_t i = 0; i < sizeof back; i++) cr_assert_eq(back[i], (uint8_t)i);
    }
    llm_buffer_free(b);
    llm_buffer_free(NULL);
    /* Capabilities. */
    cr_assert(llm_backend_supports(p.dev, LLM_OP_MATMUL, LLM_DTYPE_Q4_1));
    cr_assert(llm_backend_supports(p.dev, LLM_OP_ATTENTION, LLM_DTYPE_F16));
    cr_assert(!llm_backend_supports(p.dev, LLM_OP_ATTENTION, LLM_DTYPE_Q8_0));
    cu_pair_close(&p);
}

Test(cuda_ops, curand_fill) {
    cu_pair p;
    cu_pair_open(&p);
    if (p.selfcheck) {
        cu_pair_close(&p);
        cr_skip_test("self-check mode: cuRAND is not exercised");
    }
    const size_t n = 100003;
    llm_buffer *b = NULL;
    cr_assert_eq(llm_buffer_alloc(p.dev, n * 4 + 64, &b), LLM_OK);
    float *a = malloc(n * 4), *c = malloc(n * 4), *d = malloc(n * 4);
    cr_assert(a && c && d);
    cr_assert_eq(llm__cuda_fill_uniform(b, 4, n, -2.0f, 3.0f, 42), LLM_OK, "%s",
                 llm_runtime_last_error());
    cr_assert_eq(llm_buffer_read(b, 4, a, n * 4), LLM_OK);
    cr_assert_eq(llm__cuda_fill_uniform(b, 4, n, -2.0f, 3.0f, 42), LLM_OK);
    cr_assert_eq(llm_buffer_read(b, 4, c, n * 4), LLM_OK);
    cr_assert_eq(llm__cuda_fill_uniform(b, 4, n, -2.0f, 3.0f, 43), LLM_OK);
    cr_assert_eq(llm_buffer_read(b, 4, d, n * 4), LLM_OK);
    cr_assert_arr_eq(a, c, n * 4, "same seed must give the same values");
    size_t same = 0;
    double mean = 0.0, var = 0.0;
    for (size_t i = 0; i < n; i++) {
        same += a[i] == d[i];
        cr_assert(a[i] >= -2.0f && a[i] <= 3.0f);
        mean += a[i];
    }
    mean /= (double)n;
    for (size_t i = 0; i < n; i++) var += (a[i] - mean) * (a[i] - mean);
    var /= (double)n;
    cr_assert_lt(same, n / 100, "different seeds gave %zu equal values", same);
    /* Uniform on [-2, 3]: mean 0.5 (sd of the mean 0.0046), variance 25/12. */
    cr_assert_lt(fabs(mean - 0.5), 0.03, "mean %g", mean);
    cr_assert_lt(fabs(var - 25.0 / 12.0), 0.05, "variance %g", var);
    /* Bad ranges are refused, not crashed on. */
    cr_assert_eq(llm__cuda_fill_uniform(b, 2, 1, 0.0f, 1.0f, 1), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm__cuda_fill_uniform(b, 0, n + 100, 0.0f, 1.0f, 1), LLM_ERR_INVALID_ARG);
    free(a);
    free(c);
    free(d);
    llm_buffer_free(b);
    cu_pair_close(&p);
}

/* --------------------------------------------------------------- get_rows -- */

static const llm_dtype k_all_types[] = {
    LLM_DTYPE_F32,  LLM_DTYPE_F16,  LLM_DTYPE_BF16, LLM_DTYPE_Q4_0, LLM_DTYPE_Q4_1,
    LLM_DTYPE_Q5_0, LLM_DTYPE_Q5_1, LLM_DTYPE_Q8_0, LLM_DTYPE_Q8_1, LLM_DTYPE_Q2_K,
    LLM_DTYPE_Q3_K, LLM_DTYPE_Q4_K, LLM_DTYPE_Q5_K, LLM_DTYPE_Q6_K, LLM_DTYPE_Q8_K,
};

Test(cuda_ops, get_rows_every_type_exact) {
    cu_pair p;
    cu_pair_open(&p);
    for (size_t ti = 0; ti < sizeof k_all_types / sizeof k_all_types[0]; ti++) {
        const llm_dtype t = k_all_types[ti];
        const int64_t d = llm_dtype_block_size(t) == 1 ? 37 : (int64_t)llm_dtype_block_size(t) * 3;
        const int64_t n_rows = 11, n = 9;
        size_t wbytes = 0;
        uint8_t *w = cu_random_weights(t, d, n_rows, 100 + ti, &wbytes);
        /* The CPU reads blocks at their natural alignment; the device reads
         * them byte by byte, so it gets them at an odd offset. */
        const size_t wo_cpu = 4, wo_dev = p.selfcheck ? 4 : 1;
        cu_buf wb, ob;
        cu_buf_alloc(&p, &wb, wbytes + 8);
        cu_buf_alloc(&p, &ob, (size_t)(n * d) * 4);
        cr_assert_eq(llm_buffer_write(wb.dev, wo_dev, w, wbytes), LLM_OK);
        cr_assert_eq(llm_buffer_write(wb.cpu, wo_cpu, w, wbytes), LLM_OK);
        int32_t ids[9] = {3, 0, 10, 3, 7, 1, 10, 5, 2};
        float *got = malloc((size_t)(n * d) * 4), *want = malloc((size_t)(n * d) * 4);
        for (int side = 0; side < 2; side++) {
            llm_tensor wt = cu_view(&wb, side == 0, side == 0 ? wo_dev : wo_cpu, t, d, n_rows, 1);
            llm_tensor ot = cu_view(&ob, side == 0, 0, LLM_DTYPE_F32, d, n, 1);
            cr_assert_eq(llm_op_get_rows(side == 0 ? p.dev : p.cpu, &ot, &wt, ids, n), LLM_OK,
                         "%s: %s", llm_dtype_name(t), llm_runtime_last_error());
            cu_read(&ob, side == 0, 0, side == 0 ? got : want, (size_t)(n * d) * 4);
        }
        cr_assert_arr_eq(got, want, (size_t)(n * d) * 4, "get_rows %s differs from the CPU",
                         llm_dtype_name(t));
        free(got);
        free(want);
        free(w);
        cu_buf_free(&wb);
        cu_buf_free(&ob);
    }
    cu_pair_close(&p);
}

/* ----------------------------------------------------------------- matmul -- */

typedef struct {
    int64_t n, k, m;
} mm_shape;

static int cpu_has_matmul(llm_dtype t) {
    return t != LLM_DTYPE_Q2_K && t != LLM_DTYPE_Q3_K && t != LLM_DTYPE_Q8_1 && t != LLM_DTYPE_Q8_K;
}

static int is_float_mv_type(llm_dtype t) {
    return t == LLM_DTYPE_F32 || t == LLM_DTYPE_F16 || t == LLM_DTYPE_BF16;
}

static int is_q8_mv_type(llm_dtype t) {
    return t == LLM_DTYPE_Q4_0 || t == LLM_DTYPE_Q4_1 || t == LLM_DTYPE_Q5_0 ||
           t == LLM_DTYPE_Q5_1 || t == LLM_DTYPE_Q8_0;
}

static void run_matmul(cu_pair *p, llm_dtype t, mm_shape s, uint64_t seed) {
    const int64_t n = s.n, K = s.k, M = s.m;
    size_t wbytes = 0;
    uint8_t *w = cu_random_weights(t, K, M, seed, &wbytes);
    /* The device gets quantized blocks at an odd offset (it reads them byte
     * by byte), float types at their alignment; the CPU needs alignment. */
    const size_t wo_cpu = 8, wo = llm_dtype_block_size(t) == 1 || p->selfcheck ? 8 : 5;
    cu_buf wb, xb, ob;
    cu_buf_alloc(p, &wb, wbytes + 16);
    cu_buf_alloc(p, &xb, (size_t)(n * K) * 4);
    cu_buf_alloc(p, &ob, (size_t)(n * M) * 4);
    cr_assert_eq(llm_buffer_write(wb.dev, wo, w, wbytes), LLM_OK);
    cr_assert_eq(llm_buffer_write(wb.cpu, wo_cpu, w, wbytes), LLM_OK);
    float *x = malloc((size_t)(n * K) * 4);
    cu_fill_uniform(p, &xb, 0, (size_t)(n * K), -1.0f, 1.0f, seed + 1, x);

    /* Double reference from the reference dequantizer. */
    size_t row = wbytes / (size_t)M;
    float *wf = malloc((size_t)K * 4);
    double *ref = malloc((size_t)(n * M) * sizeof(double)), *mag = malloc((size_t)(n * M) * sizeof(double));
    float *reff = malloc((size_t)(n * M) * 4);
    for (int64_t m = 0; m < M; m++) {
        cr_assert_eq(llm_dtype_dequantize_row(t, w + (size_t)m * row, wf, (size_t)K), LLM_OK);
        for (int64_t i = 0; i < n; i++) {
            double acc = 0.0, a = 0.0;
            for (int64_t k = 0; k < K; k++) {
                acc += (double)x[i * K + k] * (double)wf[k];
                a += fabs((double)x[i * K + k] * (double)wf[k]);
            }
            ref[i * M + m] = acc;
            reff[i * M + m] = (float)acc;
            mag[i * M + m] = a;
        }
    }
    float *got = malloc((size_t)(n * M) * 4), *cpu = malloc((size_t)(n * M) * 4);
    llm_tensor wt = cu_view(&wb, 1, wo, t, K, M, 1), xt = cu_view(&xb, 1, 0, LLM_DTYPE_F32, K, n, 1);
    llm_tensor ot = cu_view(&ob, 1, 0, LLM_DTYPE_F32, M, n, 1);
    cr_assert_eq(llm_op_matmul(p->dev, &ot, &xt, &wt), LLM_OK, "%s [%lld x %lld] n=%lld: %s",
                 llm_dtype_name(t), (long long)M, (long long)K, (long long)n,
                 llm_runtime_last_error());
    cu_read(&ob, 1, 0, got, (size_t)(n * M) * 4);

    char what[128];
    snprintf(what, sizeof what, "matmul %s n=%lld K=%lld M=%lld vs double reference",
             llm_dtype_name(t), (long long)n, (long long)K, (long long)M);
    const int mv8 = n <= 4 && is_q8_mv_type(t);
    double rtol = n <= 4 && is_float_mv_type(t) ? 1e-4
                  : mv8                         ? 1.5e-2
                  : t == LLM_DTYPE_BF16         ? 1e-2
                                                : 2.5e-3;
    if (p->selfcheck) rtol = 1.5e-2; /* the scalar CPU quantizes x too */
    cu_check_close(got, reff, mag, (size_t)(n * M), 1e-5, rtol, what);

    if (cpu_has_matmul(t)) {
        llm_tensor wc = cu_view(&wb, 0, wo_cpu, t, K, M, 1), xc = cu_view(&xb, 0, 0, LLM_DTYPE_F32, K, n, 1);
        llm_tensor oc = cu_view(&ob, 0, 0, LLM_DTYPE_F32, M, n, 1);
        cr_assert_eq(llm_op_matmul(p->cpu, &oc, &xc, &wc), LLM_OK, "%s", llm_runtime_last_error());
        cu_read(&ob, 0, 0, cpu, (size_t)(n * M) * 4);
        snprintf(what, sizeof what, "matmul %s n=%lld K=%lld M=%lld vs cpu", llm_dtype_name(t),
                 (long long)n, (long long)K, (long long)M);
        cu_check_close(got, cpu, mag, (size_t)(n * M), 1e-5, mv8 ? 2e-3 : 1.5e-2, what);
    }
    free(got);
    free(cpu);
    free(ref);
    free(reff);
    free(mag);
    free(wf);
    free(x);
    free(w);
    cu_buf_free(&wb);
    cu_buf_free(&xb);
    cu_buf_free(&ob);
}

Test(cuda_ops, matmul_every_type) {
    cu_pair p;
    cu_pair_open(&p);
    /* n = 1..4 take the mat-vec kernels, larger n the cuBLAS path. */
    static const mm_shape legacy[] = {{1, 32, 1}, {1, 256, 7}, {3, 512, 33}, {4, 96, 130},
                                      {5, 256, 65}, {17, 1024, 96}, {64, 128, 31}};
    static const mm_shape kquant[] = {{1, 256, 5}, {2, 512, 33}, {7, 768, 17}, {33, 256, 64}};
    static const mm_shape floats[] = {{1, 33, 5}, {3, 45, 11}, {1, 576, 129}, {9, 100, 7}, {40, 64, 70}};
    for (size_t ti = 0; ti < sizeof k_all_types / sizeof k_all_types[0]; ti++) {
        const llm_dtype t = k_all_types[ti];
        const size_t bs = llm_dtype_block_size(t);
        const mm_shape *sh = bs == 1 ? floats : bs == 32 ? legacy : kquant;
        size_t ns = bs == 1 ? sizeof floats / sizeof floats[0]
                    : bs == 32 ? sizeof legacy / sizeof legacy[0]
                               : sizeof kquant / sizeof kquant[0];
        /* CUDA multiplies every type; the self-check's CPU stand-in does not. */
        cr_assert(p.selfcheck || llm_backend_supports(p.dev, LLM_OP_MATMUL, t));
        if (!llm_backend_supports(p.dev, LLM_OP_MATMUL, t)) continue;
        for (size_t si = 0; si < ns; si++) {
            run_matmul(&p, t, sh[si], 1000 * ti + si);
        }
    }
    cu_pair_close(&p);
}

Test(cuda_ops, matmul_large_output_chunks) {
    /* M * K above the 32M-element dequantization chunk: several GEMM chunks. */
    cu_pair p;
    cu_pair_open(&p);
    if (p.selfcheck) {
        cu_pair_close(&p);
        cr_skip_test("self-check mode: too slow on the scalar CPU");
    }
    run_matmul(&p, LLM_DTYPE_Q8_0, (mm_shape){6, 576, 60000}, 77);
    cu_pair_close(&p);
}

/* --------------------------------------------------------- row-wise ops -- */

typedef struct {
    int64_t rows, d;
} rd_shape;
static const rd_shape k_rows[] = {{1, 1}, {1, 576}, {3, 33}, {7, 4096}, {2, 49152}, {130, 17}};

Test(cuda_ops, rms_norm) {
    cu_pair p;
    cu_pair_open(&p);
    for (size_t si = 0; si < sizeof k_rows / sizeof k_rows[0]; si++) {
        const int64_t r = k_rows[si].rows, d = k_rows[si].d;
        const size_t nb = (size_t)(r * d) * 4;
        cu_buf xb, wb, ob;
        cu_buf_alloc(&p, &xb, nb);
        cu_buf_alloc(&p, &wb, (size_t)d * 4);
        cu_buf_alloc(&p, &ob, nb);
        cu_fill_uniform(&p, &xb, 0, (size_t)(r * d), -3.0f, 3.0f, 10 + si, NULL);
        cu_fill_uniform(&p, &wb, 0, (size_t)d, 0.5f, 1.5f, 20 + si, NULL);
        float *got = malloc(nb), *want = malloc(nb);
        for (int with_w = 0; with_w < 2; with_w++) {
            for (int inplace = 0; inplace < 2; inplace++) {
                for (int side = 1; side >= 0; side--) {
                    llm_backend *be = side ? p.dev : p.cpu;
                    cu_buf *dst = &ob;
                    /* In-place: copy x into out first, then normalize out. */
                    llm_tensor x = cu_view(&xb, side, 0, LLM_DTYPE_F32, d, r, 1);
                    llm_tensor o = cu_view(dst, side, 0, LLM_DTYPE_F32, d, r, 1);
                    llm_tensor w = cu_view(&wb, side, 0, LLM_DTYPE_F32, d, 1, 1);
                    if (inplace) {
                        cr_assert_eq(llm_op_scale(be, &o, &x, 1.0f), LLM_OK);
                    }
                    cr_assert_eq(llm_op_rms_norm(be, &o, inplace ? &o : &x, with_w ? &w : NULL, 1e-5f),
                                 LLM_OK, "%s", llm_runtime_last_error());
                    cu_read(dst, side, 0, side ? got : want, nb);
                }
                cu_check_close(got, want, NULL, (size_t)(r * d), 1e-7, 1e-6, "rms_norm");
            }
        }
        free(got);
        free(want);
        cu_buf_free(&xb);
        cu_buf_free(&wb);
        cu_buf_free(&ob);
    }
    cu_pair_close(&p);
}

Test(cuda_ops, softmax) {
    cu_pair p;
    cu_pair_open(&p);
    for (size_t si = 0; si < sizeof k_rows / sizeof k_rows[0]; si++) {
        const int64_t r = k_rows[si].rows, d = k_rows[si].d;
        const size_t nb = (size_t)(r * d) * 4;
        cu_buf xb, ob;
        cu_buf_alloc(&p, &xb, nb);
        cu_buf_alloc(&p, &ob, nb);
        cu_fill_uniform(&p, &xb, 0, (size_t)(r * d), -20.0f, 20.0f, 30 + si, NULL);
        float *got = malloc(nb), *want = malloc(nb);
        for (int side = 1; side >= 0; side--) {
            llm_tensor x = cu_view(&xb, side, 0, LLM_DTYPE_F32, d, r, 1);
            llm_tensor o = cu_view(&ob, side, 0, LLM_DTYPE_F32, d, r, 1);
            cr_assert_eq(llm_op_softmax(side ? p.dev : p.cpu, &o, &x), LLM_OK);
            cu_read(&ob, side, 0, side ? got : want, nb);
        }
        cu_check_close(got, want, NULL, (size_t)(r * d), 1e-6, 1e-5, "softmax");
        /* In place gives the same result. */
        llm_tensor x = cu_view(&xb, 1, 0, LLM_DTYPE_F32, d, r, 1);
        cr_assert_eq(llm_op_softmax(p.dev, &x, &x), LLM_OK);
        cu_read(&xb, 1, 0, want, nb);
        cr_assert_arr_eq(got, want, nb, "softmax in place differs");
        free(got);
        free(want);
        cu_buf_free(&xb);
        cu_buf_free(&ob);
    }
    cu_pair_close(&p);
}

Test(cuda_ops, argmax_with_ties) {
    cu_pair p;
    cu_pair_open(&p);
    for (size_t si = 0; si < sizeof k_rows / sizeof k_rows[0]; si++) {
        const int64_t r = k_rows[si].rows, d = k_rows[si].d;
        const size_t nb = (size_t)(r * d) * 4;
        float *x = malloc(nb);
        uint64_t s = 99 + si;
        /* Coarse values make ties common; first index must win. */
        for (int64_t i = 0; i < r * d; i++) x[i] = (float)(cu_rand_u32(&s) % 50);
        if (r > 1) x[d - 1] = 1000.0f; /* max at the last element of row 0 */
        cu_buf xb;
        cu_buf_alloc(&p, &xb, nb);
        cu_buf_write(&xb, 0, x, nb);
        int32_t *a = malloc((size_t)r * 4), *b = malloc((size_t)r * 4);
        llm_tensor xd = cu_view(&xb, 1, 0, LLM_DTYPE_F32, d, r, 1);
        llm_tensor xc = cu_view(&xb, 0, 0, LLM_DTYPE_F32, d, r, 1);
        cr_assert_eq(llm_op_argmax(p.dev, &xd, a), LLM_OK, "%s", llm_runtime_last_error());
        cr_assert_eq(llm_op_argmax(p.cpu, &xc, b), LLM_OK);
        cr_assert_arr_eq(a, b, (size_t)r * 4, "argmax differs (rows %lld, d %lld)", (long long)r,
                         (long long)d);
        free(a);
        free(b);
        free(x);
        cu_buf_free(&xb);
    }
    cu_pair_close(&p);
}

/* ------------------------------------------------------------ elementwise -- */

Test(cuda_ops, elementwise) {
    cu_pair p;
    cu_pair_open(&p);
    static const int64_t sizes[] = {1, 7, 1000, 100003};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const int64_t n = sizes[si];
        const size_t nb = (size_t)n * 4;
        cu_buf ab, bb, ob;
        cu_buf_alloc(&p, &ab, nb);
        cu_buf_alloc(&p, &bb, nb);
        cu_buf_alloc(&p, &ob, nb);
        cu_fill_uniform(&p, &ab, 0, (size_t)n, -8.0f, 8.0f, 40 + si, NULL);
        cu_fill_uniform(&p, &bb, 0, (size_t)n, -2.0f, 2.0f, 50 + si, NULL);
        float *got = malloc(nb), *want = malloc(nb);
        for (int op = 0; op < 5; op++) {
            for (int side = 1; side >= 0; side--) {
                llm_backend *be = side ? p.dev : p.cpu;
                llm_tensor a = cu_view(&ab, side, 0, LLM_DTYPE_F32, n, 1, 1);
                llm_tensor b = cu_view(&bb, side, 0, LLM_DTYPE_F32, n, 1, 1);
                llm_tensor o = cu_view(&ob, side, 0, LLM_DTYPE_F32, n, 1, 1);
                llm_status st = op == 0   ? llm_op_add(be, &o, &a, &b)
                                : op == 1 ? llm_op_mul(be, &o, &a, &b)
                                : op == 2 ? llm_op_scale(be, &o, &a, -0.37f)
                                : op == 3 ? llm_op_swiglu(be, &o, &a, &b)
                                          : llm_op_geglu(be, &o, &a, &b);
                cr_assert_eq(st, LLM_OK, "%s", llm_runtime_last_error());
                cu_read(&ob, side, 0, side ? got : want, nb);
            }
            static const char *names[] = {"add", "mul", "scale", "swiglu", "geglu"};
            cu_check_close(got, want, NULL, (size_t)n, op == 3 ? 1e-7 : op == 4 ? 1e-6 : 0.0,
                           op == 3 ? 1e-6 : op == 4 ? 1.5e-3 : 0.0, names[op]);
        }
        /* A bias: b is one row of d floats added to every row of a. */
        const int64_t d = n < 97 ? n : 97, rows = n / d;
        for (int side = 1; side >= 0; side--) {
            llm_backend *be = side ? p.dev : p.cpu;
            llm_tensor a2 = cu_view(&ab, side, 0, LLM_DTYPE_F32, d, rows, 1);
            llm_tensor b2 = cu_view(&bb, side, 0, LLM_DTYPE_F32, d, 1, 1);
            llm_tensor o2 = cu_view(&ob, side, 0, LLM_DTYPE_F32, d, rows, 1);
            cr_assert_eq(llm_op_add(be, &o2, &a2, &b2), LLM_OK, "%s", llm_runtime_last_error());
            cu_read(&ob, side, 0, side ? got : want, (size_t)(d * rows) * 4);
        }
        cu_check_close(got, want, NULL, (size_t)(d * rows), 0.0, 0.0, "add bias row");
        /* Aliasing: out = a + out. */
        cr_assert_eq(llm_buffer_read(bb.dev, 0, want, nb), LLM_OK);
        llm_tensor a = cu_view(&ab, 1, 0, LLM_DTYPE_F32, n, 1, 1);
        llm_tensor b = cu_view(&bb, 1, 0, LLM_DTYPE_F32, n, 1, 1);
        cr_assert_eq(llm_op_add(p.dev, &b, &a, &b), LLM_OK);
        cu_read(&bb, 1, 0, got, nb);
        float *av = malloc(nb);
        cu_read(&ab, 1, 0, av, nb);
        for (int64_t i = 0; i < n; i++) cr_assert_eq(got[i], av[i] + want[i]);
        free(av);
        free(got);
        free(want);
        cu_buf_free(&ab);
        cu_buf_free(&bb);
        cu_buf_free(&ob);
    }
    cu_pair_close(&p);
}

/* -------------------------------------------------------------------- rope -- */

Test(cuda_ops, rope_modes_and_scaling) {
    cu_pair p;
    cu_pair_open(&p);
    static const struct {
        int64_t n, n_head, hd;
        int32_t n_dims;
        llm_rope_mode mode;
        llm_rope_scale_kind scaling;
        int use_ff; /* 2: with attn_factor (phi3 longrope) */
    } cases[] = {
        {1, 9, 64, 64, LLM_ROPE_MODE_NORMAL, LLM_ROPE_SCALE_NONE, 0},
        {5, 3, 64, 64, LLM_ROPE_MODE_NEOX, LLM_ROPE_SCALE_NONE, 0},
        {7, 4, 128, 128, LLM_ROPE_MODE_NORMAL, LLM_ROPE_SCALE_LLAMA3, 0},
        {3, 2, 80, 32, LLM_ROPE_MODE_NEOX, LLM_ROPE_SCALE_LINEAR, 0},
        {4, 5, 96, 64, LLM_ROPE_MODE_NORMAL, LLM_ROPE_SCALE_NONE, 1},
        {33, 1, 6, 6, LLM_ROPE_MODE_NEOX, LLM_ROPE_SCALE_NONE, 0},
        {6, 8, 96, 96, LLM_ROPE_MODE_NEOX, LLM_ROPE_SCALE_NONE, 2},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const int64_t n = cases[ci].n, nh = cases[ci].n_head, hd = cases[ci].hd;
        const size_t cnt = (size_t)(n * nh * hd), nb = cnt * 4;
        cu_buf xb, ob;
        cu_buf_alloc(&p, &xb, nb);
        cu_buf_alloc(&p, &ob, nb);
        cu_fill_uniform(&p, &xb, 0, cnt, -1.0f, 1.0f, 60 + ci, NULL);
        int32_t pos[64];
        for (int64_t i = 0; i < n; i++) pos[i] = (int32_t)(i * 397 % 4099 + (i == 0 ? 0 : 1));
        float ff[64];
        for (int i = 0; i < 64; i++) ff[i] = 1.0f + 0.25f * (float)i;
        llm_rope_params rp;
        memset(&rp, 0, sizeof rp);
        rp.n_dims = cases[ci].n_dims;
        rp.mode = cases[ci].mode;
        rp.freq_base = ci % 2 ? 10000.0f : 500000.0f;
        rp.scaling = cases[ci].scaling;
        rp.freq_scale = 0.25f;
        rp.llama3_factor = 8.0f;
        rp.llama3_low_freq_factor = 1.0f;
        rp.llama3_high_freq_factor = 4.0f;
        rp.llama3_orig_ctx = 8192;
        rp.freq_factors = cases[ci].use_ff ? ff : NULL;
        rp.attn_factor = cases[ci].use_ff == 2 ? 1.190238f : 0.0f;
        float *got = malloc(nb), *want = malloc(nb);
        for (int side = 1; side >= 0; side--) {
            llm_backend *be = side ? p.dev : p.cpu;
            llm_tensor x = cu_view(&xb, side, 0, LLM_DTYPE_F32, hd, nh, n);
            cr_assert_eq(llm_op_rope(be, &x, pos, &rp), LLM_OK, "%s", llm_runtime_last_error());
            cu_read(&xb, side, 0, side ? got : want, nb);
        }
        char what[64];
        snprintf(what, sizeof what, "rope case %zu", ci);
        cu_check_close(got, want, NULL, cnt, 1e-5, 0.0, what);
        free(got);
        free(want);
        cu_buf_free(&xb);
        cu_buf_free(&ob);
    }
    cu_pair_close(&p);
}
