/*
 * test_kv_rows.c -- K/V caches of every cache type at the op level
 * (llm_op_kv_write, llm_op_attention on the CPU backend):
 *   - rows written into an F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0 or Q5_1 cache
 *     are byte for byte what llama.cpp's CPU backend stores: its
 *     from_float of that type, called in llama-cpp-python's libggml-cpu
 *     (data/kv_rows_golden.bin, scripts/golden/kernels/kv_rows_llamacpp.py;
 *     head_dim 32, so no Hadamard rotation), with AVX2 and scalar kernels;
 *   - attention over quantized caches (head_dim 64: rotated rows; 128: K
 *     rotated in rows of 128, V in rows of 64) is close to attention over the
 *     same values in F32 (a double-precision reference), within a bound per
 *     type set by its quantization step;
 *   - the flash-attention path gives the same bits whatever the thread count
 *     and whatever other queries share the batch;
 *   - scalar and AVX2 kernels agree within float rounding;
 *   - K and V of different types (Q8_0 K, F16 V: the F16 accumulator) work;
 *   - a quantized cache whose head_dim is not whole blocks is refused.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/runtime.h"

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static float frand(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (float)(g_rng >> 40) / 16777216.0f * 2.0f - 1.0f;
}

static llm_backend *cpu(int threads, llm_kernels k) {
    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = threads;
    bp.kernels = k;
    llm_backend *be = NULL;
    cr_assert_eq(llm_backend_create("cpu", &bp, &be), LLM_OK, "%s", llm_runtime_last_error());
    return be;
}

/* ---------------------------------------------------------------- writes -- */

static unsigned char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*len);
    cr_assert_eq(fread(b, 1, *len, f), *len);
    fclose(f);
    return b;
}

static uint32_t u32at(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void check_rows_golden(llm_kernels kernels) {
    const char *src = getenv("LLM_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/runtime/data/kv_rows_golden.bin", src ? src : ".");
    size_t len;
    unsigned char *g = read_all(path, &len);
    cr_assert(len > 16 && memcmp(g, "LLMKVROW", 8) == 0 && u32at(g + 8) == 1);
    const uint32_t n_types = u32at(g + 12);
    const unsigned char *p = g + 16;
    llm_backend *be = cpu(1, kernels);
    for (uint32_t ti = 0; ti < n_types; ti++) {
        const llm_dtype t = (llm_dtype)u32at(p);
        const uint32_t n = u32at(p + 4);
        const float *x = (const float *)(p + 8); /* little-endian host */
        const uint32_t nbytes = u32at(p + 8 + 4 * (size_t)n);
        const unsigned char *raw = p + 12 + 4 * (size_t)n;
        p = raw + nbytes;
        cr_assert((size_t)(p - g) <= len);
        /* n values = n / 32 tokens of one head of 32 in one block. */
        const int64_t hd = 32, ntok = n / 32;
        llm_buffer *bk, *bv, *bx;
        cr_assert_eq(llm_buffer_alloc(be, nbytes, &bk), LLM_OK);
        cr_assert_eq(llm_buffer_alloc(be, nbytes, &bv), LLM_OK);
        cr_assert_eq(llm_buffer_alloc(be, n * sizeof(float), &bx), LLM_OK);
        cr_assert_eq(llm_buffer_write(bx, 0, x, n * sizeof(float)), LLM_OK);
        llm_tensor kc = llm_tensor_4d(bk, 0, t, hd, ntok, 1, 1), vc = llm_tensor_4d(bv, 0, t, hd, ntok, 1, 1);
        llm_tensor xs = llm_tensor_4d(bx, 0, LLM_DTYPE_F32, hd, 1, ntok, 1);
        cr_assert(kc.buffer && llm_tensor_nbytes(&kc) == nbytes, "%s", llm_dtype_name(t));
        int32_t pos[64], table[1] = {0};
        for (int i = 0; i < ntok; i++) pos[i] = i;
        cr_assert_eq(llm_op_kv_write(be, &kc, &vc, &xs, &xs, pos, table, 1), LLM_OK, "%s: %s", llm_dtype_name(t),
                     llm_runtime_last_error());
        unsigned char *got = malloc(nbytes);
        for (int w = 0; w < 2; w++) {
            cr_assert_eq(llm_buffer_read(w ? bv : bk, 0, got, nbytes), LLM_OK);
            size_t bad = 0, first = 0;
            for (uint32_t i = 0; i < nbytes; i++) {
                if (got[i] != raw[i] && !bad++) first = i;
            }
            cr_expect_eq(bad, 0u, "%s (%s kernels, %s cache): %zu of %u bytes differ from llama.cpp's, first at %zu",
                         llm_dtype_name(t), llm_backend_kernels(be), w ? "V" : "K", bad, nbytes, first);
        }
        free(got);
        llm_buffer_free(bk);
        llm_buffer_free(bv);
        llm_buffer_free(bx);
    }
    cr_expect(p == g + len, "trailing bytes in the golden");
    llm_backend_free(be);
    free(g);
}

Test(kv_rows, writes_match_llamacpp) { check_rows_golden(LLM_KERNELS_AUTO); }
Test(kv_rows, writes_match_llamacpp_scalar) { check_rows_golden(LLM_KERNELS_SCALAR); }

/* ------------------------------------------------------------- attention -- */

enum { NPOS = 70, NB = 5, BS = 16, NH = 4, NKV = 2 };

typedef struct {
    llm_backend *be;
    int64_t hd;
    llm_buffer *bk, *bv, *bq, *bo;
    llm_tensor kc, vc;
    int32_t table[NB];
} fx;

static float *g_K, *g_V, *g_Q; /* host [NPOS][NKV][hd], [NPOS][NH][hd] */

static void make_data(int64_t hd) {
    g_rng = 0x9E3779B97F4A7C15ull;
    free(g_K);
    free(g_V);
    free(g_Q);
    g_K = malloc(sizeof(float) * NPOS * NKV * hd);
    g_V = malloc(sizeof(float) * NPOS * NKV * hd);
    g_Q = malloc(sizeof(float) * NPOS * NH * hd);
    for (int64_t i = 0; i < NPOS * NKV * hd; i++) g_K[i] = frand(), g_V[i] = frand();
    for (int64_t i = 0; i < NPOS * NH * hd; i++) g_Q[i] = frand();
}

static void fx_open(fx *f, int threads, llm_kernels kern, llm_dtype tk, llm_dtype tv, int64_t hd) {
    memset(f, 0, sizeof *f);
    f->be = cpu(threads, kern);
    f->hd = hd;
    llm_tensor k0 = llm_tensor_4d(NULL, 0, tk, hd, BS, NKV, NB), v0 = llm_tensor_4d(NULL, 0, tv, hd, BS, NKV, NB);
    cr_assert_eq(llm_buffer_alloc(f->be, k0.nb[3] * NB, &f->bk), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(f->be, v0.nb[3] * NB, &f->bv), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(f->be, sizeof(float) * NPOS * NH * hd, &f->bq), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(f->be, sizeof(float) * NPOS * NH * hd, &f->bo), LLM_OK);
    f->kc = llm_tensor_4d(f->bk, 0, tk, hd, BS, NKV, NB);
    f->vc = llm_tensor_4d(f->bv, 0, tv, hd, BS, NKV, NB);
    for (int i = 0; i < NB; i++) f->table[i] = (i * 3 + 1) % NB; /* scrambled */
    /* All positions written, in two batches. */
    llm_buffer *bk, *bv;
    cr_assert_eq(llm_buffer_alloc(f->be, sizeof(float) * NPOS * NKV * hd, &bk), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(f->be, sizeof(float) * NPOS * NKV * hd, &bv), LLM_OK);
    cr_assert_eq(llm_buffer_write(bk, 0, g_K, sizeof(float) * NPOS * NKV * hd), LLM_OK);
    cr_assert_eq(llm_buffer_write(bv, 0, g_V, sizeof(float) * NPOS * NKV * hd), LLM_OK);
    int32_t pos[NPOS];
    for (int i = 0; i < NPOS; i++) pos[i] = i;
    for (int first = 0; first < NPOS; first += 40) {
        const int n = NPOS - first < 40 ? NPOS - first : 40;
        const size_t off = sizeof(float) * (size_t)(first * NKV * hd);
        llm_tensor ks = llm_tensor_4d(bk, off, LLM_DTYPE_F32, hd, NKV, n, 1);
        llm_tensor vs = llm_tensor_4d(bv, off, LLM_DTYPE_F32, hd, NKV, n, 1);
        cr_assert_eq(llm_op_kv_write(f->be, &f->kc, &f->vc, &ks, &vs, pos + first, f->table, NB), LLM_OK, "%s",
                     llm_runtime_last_error());
    }
    llm_buffer_free(bk);
    llm_buffer_free(bv);
    cr_assert_eq(llm_buffer_write(f->bq, 0, g_Q, sizeof(float) * NPOS * NH * hd), LLM_OK);
}

static void fx_close(fx *f) {
    llm_buffer_free(f->bk);
    llm_buffer_free(f->bv);
    llm_buffer_free(f->bq);
    llm_buffer_free(f->bo);
    llm_backend_free(f->be);
}

/* Queries first .. first + n - 1 (at their own positions); out [n][NH][hd]. */
static void attend(fx *f, int first, int n, float *out) {
    int32_t pos[NPOS];
    for (int i = 0; i < n; i++) pos[i] = first + i;
    const size_t off = sizeof(float) * (size_t)(first * NH * f->hd);
    llm_tensor q = llm_tensor_4d(f->bq, off, LLM_DTYPE_F32, f->hd, NH, n, 1);
    llm_tensor o = llm_tensor_4d(f->bo, 0, LLM_DTYPE_F32, f->hd, NH, n, 1);
    cr_assert_eq(llm_op_attention(f->be, &o, &q, &f->kc, &f->vc, pos, f->table, NB, 1.0f / sqrtf((float)f->hd)),
                 LLM_OK, "%s", llm_runtime_last_error());
    cr_assert_eq(llm_buffer_read(f->bo, 0, out, sizeof(float) * (size_t)(n * NH * f->hd)), LLM_OK);
}

/* Double-precision causal GQA attention over the F32 values. */
static void reference(int64_t hd, float *out) {
    double *s = malloc(sizeof(double) * NPOS);
    for (int i = 0; i < NPOS; i++) {
        for (int h = 0; h < NH; h++) {
            const int kvh = h / (NH / NKV);
            const float *q = g_Q + ((size_t)i * NH + h) * hd;
            double mx = -INFINITY, sum = 0;
            for (int t = 0; t <= i; t++) {
                const float *k = g_K + ((size_t)t * NKV + kvh) * hd;
                double d = 0;
                for (int64_t e = 0; e < hd; e++) d += (double)q[e] * k[e];
                s[t] = d / sqrt((double)hd);
                mx = s[t] > mx ? s[t] : mx;
            }
            for (int t = 0; t <= i; t++) sum += (s[t] = exp(s[t] - mx));
            for (int64_t e = 0; e < hd; e++) {
                double acc = 0;
                for (int t = 0; t <= i; t++) acc += s[t] * g_V[((size_t)t * NKV + kvh) * hd + e];
                out[((size_t)i * NH + h) * hd + e] = (float)(acc / sum);
            }
        }
    }
    free(s);
}

static double max_diff(const float *a, const float *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = fabs((double)a[i] - b[i]);
        m = d > m || isnan(d) ? d : m;
    }
    return m;
}

/* Against the F32 reference: the bound is a few quantization steps of the
 * type (values in [-1, 1]; outputs are averages of V rows). */
static void check_type(llm_dtype tk, llm_dtype tv, int64_t hd, double bound) {
    make_data(hd);
    const size_t n = (size_t)NPOS * NH * hd;
    float *ref = malloc(sizeof(float) * n), *got = malloc(sizeof(float) * n), *one = malloc(sizeof(float) * NH * hd);
    float *t1 = malloc(sizeof(float) * n), *sc = malloc(sizeof(float) * n);
    reference(hd, ref);
    fx f;
    fx_open(&f, 3, LLM_KERNELS_AUTO, tk, tv, hd);
    attend(&f, 0, NPOS, got);
    const double d = max_diff(got, ref, n);
    fprintf(stderr, "%s K / %s V, head_dim %lld: max |diff| vs the f32 reference %.5f (bound %.3f)\n",
            llm_dtype_name(tk), llm_dtype_name(tv), (long long)hd, d, bound);
    cr_expect_leq(d, bound, "%s/%s hd %lld: %g", llm_dtype_name(tk), llm_dtype_name(tv), (long long)hd, d);
    /* Batch independence: each query alone gives the same bits. */
    for (int i = 0; i < NPOS; i += 23) {
        attend(&f, i, 1, one);
        cr_expect_eq(memcmp(one, got + (size_t)i * NH * hd, sizeof(float) * NH * hd), 0,
                     "query %d alone differs from the batch", i);
    }
    fx_close(&f);
    /* One thread: the same bits. */
    fx_open(&f, 1, LLM_KERNELS_AUTO, tk, tv, hd);
    attend(&f, 0, NPOS, t1);
    cr_expect_eq(memcmp(t1, got, sizeof(float) * n), 0, "1 thread differs from 3");
    fx_close(&f);
    /* Scalar kernels: the same within float rounding of the dots (and the
     * activation quantizer's rounding of q: a Q8 step of q moves a score). */
    fx_open(&f, 2, LLM_KERNELS_SCALAR, tk, tv, hd);
    attend(&f, 0, NPOS, sc);
    const double ds = max_diff(sc, got, n);
    cr_expect_leq(ds, bound / 2, "scalar vs auto kernels: %g", ds);
    fx_close(&f);
    free(ref);
    free(got);
    free(one);
    free(t1);
    free(sc);
}

Test(kv_rows, attention_q8_0) { check_type(LLM_DTYPE_Q8_0, LLM_DTYPE_Q8_0, 64, 0.03); }
Test(kv_rows, attention_q4_0) { check_type(LLM_DTYPE_Q4_0, LLM_DTYPE_Q4_0, 64, 0.25); }
Test(kv_rows, attention_q4_1) { check_type(LLM_DTYPE_Q4_1, LLM_DTYPE_Q4_1, 128, 0.25); }
Test(kv_rows, attention_q5_0) { check_type(LLM_DTYPE_Q5_0, LLM_DTYPE_Q5_0, 64, 0.12); }
Test(kv_rows, attention_q5_1) { check_type(LLM_DTYPE_Q5_1, LLM_DTYPE_Q5_1, 32, 0.12); }
Test(kv_rows, attention_bf16) { check_type(LLM_DTYPE_BF16, LLM_DTYPE_BF16, 64, 0.03); }
Test(kv_rows, attention_q8_0_k_f16_v) { check_type(LLM_DTYPE_Q8_0, LLM_DTYPE_F16, 64, 0.03); }
Test(kv_rows, attention_f16_k_q4_1_v) { check_type(LLM_DTYPE_F16, LLM_DTYPE_Q4_1, 64, 0.25); }

Test(kv_rows, quantized_cache_needs_whole_blocks) {
    /* head_dim 48 is not whole Q8_0 blocks: no tensor view of that shape. */
    llm_tensor t = llm_tensor_4d(NULL, 0, LLM_DTYPE_Q8_0, 48, 1, 16, 1);
    cr_expect_eq(t.ne[0], 0);
    llm_backend *be = cpu(1, LLM_KERNELS_AUTO);
    cr_expect(llm_backend_supports(be, LLM_OP_ATTENTION, LLM_DTYPE_Q5_1));
    cr_expect(!llm_backend_supports(be, LLM_OP_ATTENTION, LLM_DTYPE_Q4_K));
    /* A K-quant is no cache type. */
    llm_buffer *b;
    cr_assert_eq(llm_buffer_alloc(be, 144 * 16, &b), LLM_OK);
    llm_tensor kq = llm_tensor_4d(b, 0, LLM_DTYPE_Q4_K, 256, 1, 16, 1);
    llm_tensor x = llm_tensor_4d(b, 0, LLM_DTYPE_F32, 256, 1, 1, 1);
    int32_t pos[1] = {0}, table[1] = {0};
    cr_expect_eq(llm_op_kv_write(be, &kq, &kq, &x, &x, pos, table, 1), LLM_ERR_UNSUPPORTED);
    llm_buffer_free(b);
    llm_backend_free(be);
}
