/*
 * cuda_pair.c -- see cuda_pair.h.
 */
#include "cuda_pair.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "dtype/blocks.h"

void cu_skip_no_device(const char *why) {
    /* Printed as well, so CTest (SKIP_REGULAR_EXPRESSION) reports the test
     * as skipped: Criterion prints skip reasons only with --verbose. */
    fprintf(stderr, "no CUDA device: %s\n", why);
    cr_skip_test("no CUDA device: %s", why);
}

void cu_pair_open(cu_pair *p) {
    memset(p, 0, sizeof(*p));
    const char *sc = getenv("LLM_CUDA_TEST_SELFCHECK");
    llm_backend_params bp = llm_backend_default_params();
    if (sc && strcmp(sc, "1") == 0) {
        p->selfcheck = 1;
        bp.kernels = LLM_KERNELS_SCALAR;
        cr_assert_eq(llm_backend_create("cpu", &bp, &p->dev), LLM_OK, "%s", llm_runtime_last_error());
    } else {
        char msg[256];
        if (llm__cuda_device_count(msg, sizeof msg) <= 0) {
            cu_skip_no_device(msg);
        }
        cr_assert_eq(llm_backend_create("cuda", &bp, &p->dev), LLM_OK, "%s",
                     llm_runtime_last_error());
        cr_assert_str_eq(llm_backend_name(p->dev), "cuda");
    }
    bp = llm_backend_default_params();
    bp.n_threads = 2;
    cr_assert_eq(llm_backend_create("cpu", &bp, &p->cpu), LLM_OK, "%s", llm_runtime_last_error());
}

void cu_pair_close(cu_pair *p) {
    llm_backend_free(p->dev);
    llm_backend_free(p->cpu);
    memset(p, 0, sizeof(*p));
}

void cu_buf_alloc(cu_pair *p, cu_buf *b, size_t size) {
    memset(b, 0, sizeof(*b));
    cr_assert_eq(llm_buffer_alloc(p->dev, size, &b->dev), LLM_OK, "%s", llm_runtime_last_error());
    cr_assert_eq(llm_buffer_alloc(p->cpu, size, &b->cpu), LLM_OK, "%s", llm_runtime_last_error());
    b->size = size;
}

void cu_buf_free(cu_buf *b) {
    llm_buffer_free(b->dev);
    llm_buffer_free(b->cpu);
    memset(b, 0, sizeof(*b));
}

void cu_buf_write(cu_buf *b, size_t off, const void *src, size_t n) {
    cr_assert_eq(llm_buffer_write(b->dev, off, src, n), LLM_OK, "%s", llm_runtime_last_error());
    cr_assert_eq(llm_buffer_write(b->cpu, off, src, n), LLM_OK, "%s", llm_runtime_last_error());
}

uint32_t cu_rand_u32(uint64_t *s) {
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return (uint32_t)(x >> 16);
}

float cu_rand_float(uint64_t *s, float lo, float hi) {
    return lo + (hi - lo) * ((float)cu_rand_u32(s) / 4294967296.0f);
}

void cu_fill_uniform(cu_pair *p, cu_buf *b, size_t off, size_t n, float lo, float hi,
                     uint64_t seed, float *host) {
    float *tmp = malloc(n * sizeof(float) + 1);
    cr_assert_not_null(tmp);
    if (p->selfcheck) {
        uint64_t s = seed * 2654435761ull + 1;
        for (size_t i = 0; i < n; i++) tmp[i] = cu_rand_float(&s, lo, hi);
        cu_buf_write(b, off, tmp, n * sizeof(float));
    } else {
        cr_assert_eq(llm__cuda_fill_uniform(b->dev, off, n, lo, hi, seed), LLM_OK, "%s",
                     llm_runtime_last_error());
        cr_assert_eq(llm_buffer_read(b->dev, off, tmp, n * sizeof(float)), LLM_OK, "%s",
                     llm_runtime_last_error());
        for (size_t i = 0; i < n; i++) {
            cr_assert(tmp[i] >= lo && tmp[i] <= hi, "cuRAND value %g outside [%g, %g]",
                      (double)tmp[i], (double)lo, (double)hi);
        }
        cr_assert_eq(llm_buffer_write(b->cpu, off, tmp, n * sizeof(float)), LLM_OK);
    }
    if (host) memcpy(host, tmp, n * sizeof(float));
    free(tmp);
}

llm_tensor cu_view(const cu_buf *b, int on_dev, size_t off, llm_dtype t, int64_t ne0, int64_t ne1,
                   int64_t ne2) {
    return llm_tensor_4d(on_dev ? b->dev : b->cpu, off, t, ne0, ne1, ne2, 1);
}

void cu_read(const cu_buf *b, int on_dev, size_t off, void *dst, size_t n) {
    cr_assert_eq(llm_buffer_read(on_dev ? b->dev : b->cpu, off, dst, n), LLM_OK, "%s",
                 llm_runtime_last_error());
}

void cu_check_close(const float *got, const float *want, const double *scale, size_t n,
                    double atol, double rtol, const char *what) {
    size_t worst = 0;
    double worst_excess = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double s = scale ? scale[i] : fabs((double)want[i]);
        double tol = atol + rtol * s;
        double err = fabs((double)got[i] - (double)want[i]);
        if (isnan(got[i]) != isnan(want[i])) err = INFINITY;
        if (isnan(got[i]) && isnan(want[i])) err = 0.0;
        double excess = err - tol;
        if (excess > worst_excess) {
            worst_excess = excess;
            worst = i;
        }
    }
    if (n) {
        double s = scale ? scale[worst] : fabs((double)want[worst]);
        cr_assert(worst_excess <= 0.0,
                  "%s: element %zu of %zu: got %.9g, want %.9g (|diff| %.3g > tol %.3g)", what,
                  worst, n, (double)got[worst], (double)want[worst],
                  fabs((double)got[worst] - (double)want[worst]), atol + rtol * s);
    }
}

/* Byte offset of each half/float scale field to sanitize after random bytes. */
static void fix_scales(llm_dtype t, uint8_t *blk, uint64_t *s) {
    size_t half_at[2] = {SIZE_MAX, SIZE_MAX};
    switch (t) {
    case LLM_DTYPE_Q5_0: half_at[0] = offsetof(llm_block_q5_0, d); break;
    case LLM_DTYPE_Q5_1:
        half_at[0] = offsetof(llm_block_q5_1, d);
        half_at[1] = offsetof(llm_block_q5_1, m);
        break;
    case LLM_DTYPE_Q8_1:
        half_at[0] = offsetof(llm_block_q8_1, d);
        half_at[1] = offsetof(llm_block_q8_1, s);
        break;
    case LLM_DTYPE_Q2_K:
        half_at[0] = offsetof(llm_block_q2_k, d);
        half_at[1] = offsetof(llm_block_q2_k, dmin);
        break;
    case LLM_DTYPE_Q3_K: half_at[0] = offsetof(llm_block_q3_k, d); break;
    case LLM_DTYPE_Q4_K:
        half_at[0] = offsetof(llm_block_q4_k, d);
        half_at[1] = offsetof(llm_block_q4_k, dmin);
        break;
    case LLM_DTYPE_Q5_K:
        half_at[0] = offsetof(llm_block_q5_k, d);
        half_at[1] = offsetof(llm_block_q5_k, dmin);
        break;
    case LLM_DTYPE_Q6_K: half_at[0] = offsetof(llm_block_q6_k, d); break;
    case LLM_DTYPE_Q8_K: {
        float d = cu_rand_float(s, 0.002f, 0.01f);
        memcpy(blk + offsetof(llm_block_q8_k, d), &d, sizeof d);
        return;
    }
    default: return;
    }
    for (int i = 0; i < 2; i++) {
        if (half_at[i] == SIZE_MAX) continue;
        /* Small positive scales (and signed minimums) keep |w| around 0.1..1. */
        float v = cu_rand_float(s, 0.002f, 0.03f);
        if (i == 1 && (t == LLM_DTYPE_Q5_1)) v = cu_rand_float(s, -0.3f, 0.0f);
        uint16_t h = llm_fp32_to_fp16(v);
        memcpy(blk + half_at[i], &h, 2);
    }
}

uint8_t *cu_random_weights(llm_dtype t, int64_t k, int64_t n_rows, uint64_t seed, size_t *nbytes) {
    size_t row = 0;
    cr_assert_eq(llm_dtype_row_size(t, (uint64_t)k, &row), LLM_OK);
    uint8_t *w = malloc(row * (size_t)n_rows + 1);
    cr_assert_not_null(w);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    if (llm_dtype_can_quantize(t) && t != LLM_DTYPE_Q8_1 && t != LLM_DTYPE_Q8_K) {
        float *f = malloc(sizeof(float) * (size_t)k);
        cr_assert_not_null(f);
        for (int64_t r = 0; r < n_rows; r++) {
            for (int64_t i = 0; i < k; i++) f[i] = cu_rand_float(&s, -1.0f, 1.0f);
            cr_assert_eq(llm_dtype_quantize_row(t, f, w + (size_t)r * row, (size_t)k), LLM_OK);
        }
        free(f);
    } else {
        for (size_t i = 0; i < row * (size_t)n_rows; i++) w[i] = (uint8_t)cu_rand_u32(&s);
        size_t bb = llm_dtype_block_bytes(t);
        for (size_t b = 0; b < row * (size_t)n_rows / bb; b++) fix_scales(t, w + b * bb, &s);
    }
    *nbytes = row * (size_t)n_rows;
    return w;
}
