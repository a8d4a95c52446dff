/*
 * bench_cuda.c -- speed of the CUDA backend's hot ops and of the whole
 * forward, printed as figures (never asserted). Run by hand on a GPU machine:
 *
 *     build/bin/bench_cuda [model.gguf]
 *
 * Prints per op: microseconds per call and effective bandwidth (decode
 * mat-vec: weight bytes / time) or throughput (prefill GEMM: 2nMK / time);
 * then prefill and decode tokens/s of the default model on "cuda" and "cpu".
 * Without a CUDA device it says so and exits 0.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/cuda.h"
#include "llama/arch.h"
#include "llama/runtime.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t g_rng = 88172645463325252ull;
static float frand(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (float)(g_rng >> 40) / 16777216.0f * 2.0f - 1.0f;
}

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        llm_status st_ = (expr);                                                                   \
        if (st_ != LLM_OK) {                                                                       \
            fprintf(stderr, "%s failed: %s\n", #expr, llm_runtime_last_error());                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Weights of type t [m][k]: quantized from random floats where the reference
 * quantizer supports t, else random bytes with every 2-byte field at offset 0
 * and 2 of each block set to a small half (K-quants: d, dmin). */
static void *make_weights(llm_dtype t, int64_t k, int64_t m, size_t *bytes) {
    size_t row = 0;
    if (llm_dtype_row_size(t, (uint64_t)k, &row) != LLM_OK) exit(1);
    uint8_t *w = malloc(row * (size_t)m);
    float *f = malloc(sizeof(float) * (size_t)k);
    if (!w || !f) exit(1);
    for (int64_t r = 0; r < m; r++) {
        if (llm_dtype_can_quantize(t)) {
            for (int64_t i = 0; i < k; i++) f[i] = frand();
            CHECK(llm_dtype_quantize_row(t, f, w + (size_t)r * row, (size_t)k));
        } else {
            for (size_t i = 0; i < row; i++) w[(size_t)r * row + i] = (uint8_t)(frand() * 127.0f);
            size_t bb = llm_dtype_block_bytes(t);
            uint16_t h = llm_fp32_to_fp16(0.01f);
            for (size_t b = 0; b < row / bb; b++) {
                memcpy(w + (size_t)r * row + b * bb, &h, 2);
                memcpy(w + (size_t)r * row + b * bb + 2, &h, 2);
            }
        }
    }
    free(f);
    *bytes = row * (size_t)m;
    return w;
}

static void bench_matmul(llm_backend *be, llm_dtype t, int64_t n, int64_t k, int64_t m) {
    size_t wb = 0;
    void *w = make_weights(t, k, m, &wb);
    llm_buffer *bw = NULL, *bx = NULL, *bo = NULL;
    CHECK(llm_buffer_wrap_host(be, w, wb, &bw));
    CHECK(llm_buffer_alloc(be, (size_t)(n * k) * 4, &bx));
    CHECK(llm_buffer_alloc(be, (size_t)(n * m) * 4, &bo));
    CHECK(llm__cuda_fill_uniform(bx, 0, (size_t)(n * k), -1.0f, 1.0f, 5));
    llm_tensor wt = llm_tensor_2d(bw, 0, t, k, m), xt = llm_tensor_2d(bx, 0, LLM_DTYPE_F32, k, n);
    llm_tensor ot = llm_tensor_2d(bo, 0, LLM_DTYPE_F32, m, n);
    for (int i = 0; i < 3; i++) CHECK(llm_op_matmul(be, &ot, &xt, &wt));
    CHECK(llm_backend_synchronize(be));
    int iters = n == 1 ? 200 : 20;
    double t0 = now_s();
    for (int i = 0; i < iters; i++) CHECK(llm_op_matmul(be, &ot, &xt, &wt));
    CHECK(llm_backend_synchronize(be));
    double dt = (now_s() - t0) / iters;
    if (n <= 4) {
        printf("matmul %-5s n=%-4lld [%lld x %lld]  %9.1f us  %7.1f GB/s (weights)\n",
               llm_dtype_name(t), (long long)n, (long long)m, (long long)k, dt * 1e6,
               (double)wb / dt * 1e-9);
    } else {
        printf("matmul %-5s n=%-4lld [%lld x %lld]  %9.1f us  %7.2f TFLOP/s\n", llm_dtype_name(t),
               (long long)n, (long long)m, (long long)k, dt * 1e6,
               2.0 * (double)n * (double)m * (double)k / dt * 1e-12);
    }
    llm_buffer_free(bw);
    llm_buffer_free(bx);
    llm_buffer_free(bo);
    free(w);
}

static void bench_attention(llm_backend *be, int64_t ctx) {
    const int64_t nh = 32, nkv = 8, hd = 128, bs = 16, nb = (ctx + bs - 1) / bs;
    llm_buffer *kb = NULL, *vb = NULL, *qb = NULL, *ob = NULL;
    CHECK(llm_buffer_alloc(be, (size_t)(nb * bs * nkv * hd) * 2, &kb));
    CHECK(llm_buffer_alloc(be, (size_t)(nb * bs * nkv * hd) * 2, &vb));
    CHECK(llm_buffer_alloc(be, (size_t)(nh * hd) * 4, &qb));
    CHECK(llm_buffer_alloc(be, (size_t)(nh * hd) * 4, &ob));
    CHECK(llm__cuda_fill_uniform(qb, 0, (size_t)(nh * hd), -1.0f, 1.0f, 9));
    int32_t *table = malloc(sizeof(int32_t) * (size_t)nb);
    for (int64_t i = 0; i < nb; i++) table[i] = (int32_t)i;
    llm_tensor kc = llm_tensor_4d(kb, 0, LLM_DTYPE_F16, hd, bs, nkv, nb);
    llm_tensor vc = llm_tensor_4d(vb, 0, LLM_DTYPE_F16, hd, bs, nkv, nb);
    llm_tensor q = llm_tensor_4d(qb, 0, LLM_DTYPE_F32, hd, nh, 1, 1);
    llm_tensor o = llm_tensor_4d(ob, 0, LLM_DTYPE_F32, hd, nh, 1, 1);
    int32_t pos = (int32_t)(ctx - 1);
    for (int i = 0; i < 3; i++) CHECK(llm_op_attention(be, &o, &q, &kc, &vc, &pos, table, (int32_t)nb, 0.088f));
    CHECK(llm_backend_synchronize(be));
    const int iters = 100;
    double t0 = now_s();
    for (int i = 0; i < iters; i++) CHECK(llm_op_attention(be, &o, &q, &kc, &vc, &pos, table, (int32_t)nb, 0.088f));
    CHECK(llm_backend_synchronize(be));
    double dt = (now_s() - t0) / iters;
    printf("attention decode F16 32 heads / 8 kv, hd 128, context %5lld  %9.1f us  %7.1f GB/s (K+V)\n",
           (long long)ctx, dt * 1e6, 2.0 * (double)(ctx * nkv * hd * 2) / dt * 1e-9);
    free(table);
    llm_buffer_free(kb);
    llm_buffer_free(vb);
    llm_buffer_free(qb);
    llm_buffer_free(ob);
}

static void bench_forward(const char *path, const char *backend) {
    llm_model_desc *desc = NULL;
    if (llm_model_desc_from_gguf(path, &desc) != LLM_OK) {
        printf("forward: cannot open %s: %s\n", path, llm_models_last_error());
        return;
    }
    llm_backend *be = NULL;
    CHECK(llm_backend_create(backend, NULL, &be));
    llm_net *net = NULL;
    llm_net_kv *kv = NULL;
    if (llm_net_create(desc, be, NULL, &net) != LLM_OK || llm_net_kv_create(net, 64, 16, &kv) != LLM_OK) {
        printf("forward on %s: %s\n", backend, llm_net_last_error());
        exit(1);
    }
    const int32_t n_prompt = 256, n_gen = 64, nv = (int32_t)llm_net_hparams(net)->n_vocab;
    int32_t table[64], tokens[256], pos[256];
    for (int i = 0; i < 64; i++) table[i] = i;
    for (int i = 0; i < n_prompt; i++) {
        tokens[i] = (int32_t)(100 + (i * 37) % 5000);
        pos[i] = i;
    }
    float *logits = malloc(sizeof(float) * (size_t)nv);
    llm_net_seq seq = {n_prompt, table, 64, NULL, 0};
    llm_net_batch b = llm_net_batch_default();
    b.tokens = tokens;
    b.positions = pos;
    b.n_tokens = n_prompt;
    b.seqs = &seq;
    b.n_seqs = 1;
    b.logits = logits;
    double t0 = now_s();
    if (llm_net_forward(net, kv, &b) != LLM_OK) {
        printf("forward: %s\n", llm_net_last_error());
        exit(1);
    }
    double tp = now_s() - t0;
    t0 = now_s();
    for (int32_t s = 0; s < n_gen; s++) {
        int32_t tok = (int32_t)(s * 13 % 1000), p = n_prompt + s;
        seq.n_tokens = 1;
        b.tokens = &tok;
        b.positions = &p;
        b.n_tokens = 1;
        if (llm_net_forward(net, kv, &b) != LLM_OK) {
            printf("forward: %s\n", llm_net_last_error());
            exit(1);
        }
    }
    double tg = now_s() - t0;
    printf("forward %-4s (%s): prefill %d tokens %8.1f tok/s, decode %d tokens %8.1f tok/s\n",
           backend, llm_backend_kernels(be), n_prompt, n_prompt / tp, n_gen, n_gen / tg);
    free(logits);
    llm_net_kv_free(kv);
    llm_net_free(net);
    llm_backend_free(be);
    llm_model_desc_free(desc);
}

int main(int argc, char **argv) {
    char msg[256];
    if (llm__cuda_device_count(msg, sizeof msg) <= 0) {
        printf("bench_cuda: no CUDA device: %s\n", msg);
        return 0;
    }
    llm_backend *be = NULL;
    CHECK(llm_backend_create("cuda", NULL, &be));
    printf("device: %s\n", llm_backend_kernels(be));
    static const llm_dtype types[] = {LLM_DTYPE_Q4_0, LLM_DTYPE_Q4_1, LLM_DTYPE_Q8_0,
                                      LLM_DTYPE_F16, LLM_DTYPE_Q4_K, LLM_DTYPE_Q6_K};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        bench_matmul(be, types[i], 1, 4096, 4096);
        bench_matmul(be, types[i], 1, 4096, 14336);
    }
    bench_matmul(be, LLM_DTYPE_Q4_1, 4, 4096, 4096);
    bench_matmul(be, LLM_DTYPE_Q4_1, 512, 4096, 4096);
    bench_matmul(be, LLM_DTYPE_F16, 512, 4096, 4096);
    bench_matmul(be, LLM_DTYPE_Q4_K, 512, 4096, 14336);
    bench_attention(be, 512);
    bench_attention(be, 4096);
    bench_attention(be, 16384);
    llm_backend_free(be);
    const char *path = argc > 1 ? argv[1] : getenv("LLM_DEFAULT_MODEL");
    if (path && *path) {
        bench_forward(path, "cuda");
        bench_forward(path, "cpu");
    }
    return 0;
}
