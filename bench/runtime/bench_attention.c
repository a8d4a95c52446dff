/*
 * bench_attention.c -- CPU attention over a paged F16 cache at a given depth,
 * with and without a sliding window: one decode query (dot order) and a
 * prefill batch (tiled order) ending at the depth. Prints ms per call.
 *
 *   llm-bench-attention [-t THREADS] [-d DEPTH] [-w WINDOW] [-b BATCH]
 *                       [-H N_HEAD] [-K N_HEAD_KV] [-D HEAD_DIM] [-L LAYERS]
 *
 * Defaults: depth 4096, window 512, batch 512, and Gemma 3 270M's heads
 * (4 query heads, 1 KV head, head_dim 256). -L N gives N layers of cache
 * and the calls go round them, so with N x the cache size past the L3 the
 * decode reads its K and V from memory, as in a model whose weights stream
 * through the caches between two layers. Llama 3.2 1B at depth 4096:
 * -H 32 -K 8 -D 64 -L 16.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama/runtime.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Mean seconds per call of attention_ex over at least 1 s (after a warm-up). */
static double time_attn(llm_backend *be, const llm_tensor *o, const llm_tensor *q, const llm_tensor *kc,
                        const llm_tensor *vc, int layers, const int32_t *pos, const int32_t *table,
                        int32_t n_table, const llm_attn_params *p) {
    if (llm_op_attention_ex(be, o, q, kc, vc, pos, table, n_table, p) != LLM_OK) {
        fprintf(stderr, "attention: %s\n", llm_runtime_last_error());
        exit(1);
    }
    int iters = 0;
    double t0 = now_s(), t1;
    do {
        const int l = iters % layers;
        llm_op_attention_ex(be, o, q, kc + l, vc + l, pos, table, n_table, p);
        iters++;
        t1 = now_s();
    } while (t1 - t0 < 1.0);
    return (t1 - t0) / iters;
}

int main(int argc, char **argv) {
    int threads = 0, depth = 4096, window = 512, batch = 512, nh = 4, nkv = 1, hd = 256, layers = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        const int v = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "-t")) threads = v;
        else if (!strcmp(argv[i], "-d")) depth = v;
        else if (!strcmp(argv[i], "-w")) window = v;
        else if (!strcmp(argv[i], "-b")) batch = v;
        else if (!strcmp(argv[i], "-H")) nh = v;
        else if (!strcmp(argv[i], "-K")) nkv = v;
        else if (!strcmp(argv[i], "-D")) hd = v;
        else if (!strcmp(argv[i], "-L")) layers = v;
        else {
            fprintf(stderr,
                    "usage: %s [-t THREADS] [-d DEPTH] [-w WINDOW] [-b BATCH] [-H N_HEAD] [-K N_HEAD_KV] [-D HEAD_DIM] "
                    "[-L LAYERS]\n",
                    argv[0]);
            return 2;
        }
    }
    if (argc % 2 == 0 || depth < 1 || batch < 1 || batch > depth || window < 0 || nh < 1 || nkv < 1 || nh % nkv ||
        hd < 1 || layers < 1 || layers > 256) {
        fprintf(stderr, "%s: bad arguments\n", argv[0]);
        return 2;
    }
    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = threads;
    llm_backend *be = NULL;
    if (llm_backend_create("cpu", &bp, &be) != LLM_OK) {
        fprintf(stderr, "backend: %s\n", llm_runtime_last_error());
        return 1;
    }
    const int bs = 16, nblk = (depth + bs - 1) / bs;
    const size_t cache = 2 * (size_t)hd * (size_t)nkv * bs * (size_t)nblk;
    uint16_t *h = malloc(cache);
    for (size_t i = 0; i < cache / 2; i++) h[i] = llm_fp32_to_fp16((float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f);
    llm_buffer *bk, *bv, *bq, *bo;
    if (llm_buffer_alloc(be, cache * (size_t)layers, &bk) != LLM_OK ||
        llm_buffer_alloc(be, cache * (size_t)layers, &bv) != LLM_OK) {
        fprintf(stderr, "cache: %s\n", llm_runtime_last_error());
        return 1;
    }
    for (int l = 0; l < layers; l++) {
        llm_buffer_write(bk, cache * (size_t)l, h, cache);
        llm_buffer_write(bv, cache * (size_t)l, h, cache);
    }
    const size_t qn = (size_t)batch * (size_t)nh * (size_t)hd;
    float *qh = malloc(sizeof(float) * qn);
    for (size_t i = 0; i < qn; i++) qh[i] = (float)((i * 40503u) % 1001) / 500.0f - 1.0f;
    llm_buffer_alloc(be, sizeof(float) * qn, &bq);
    llm_buffer_alloc(be, sizeof(float) * qn, &bo);
    llm_buffer_write(bq, 0, qh, sizeof(float) * qn);
    int32_t *table = malloc(sizeof(int32_t) * (size_t)nblk), *pos = malloc(sizeof(int32_t) * (size_t)batch);
    for (int b = 0; b < nblk; b++) table[b] = (int32_t)((b * 7 + 3) % nblk); /* scattered blocks */
    for (int i = 0; i < batch; i++) pos[i] = depth - batch + i;
    llm_tensor kc[256], vc[256];
    for (int l = 0; l < layers; l++) {
        kc[l] = llm_tensor_4d(bk, cache * (size_t)l, LLM_DTYPE_F16, hd, bs, nkv, nblk);
        vc[l] = llm_tensor_4d(bv, cache * (size_t)l, LLM_DTYPE_F16, hd, bs, nkv, nblk);
    }
    printf("attention, F16 cache, depth %d, %d heads / %d KV heads x %d, %d layers (%.1f MiB of K and V), "
           "%d threads, kernels %s\n",
           depth, nh, nkv, hd, layers, 2.0 * (double)cache * layers / 1048576.0, llm_backend_n_threads(be),
           llm_backend_kernels(be));
    for (int mode = 0; mode < 2; mode++) {
        const int n = mode ? batch : 1;
        llm_tensor q = llm_tensor_4d(bq, 0, LLM_DTYPE_F32, hd, nh, n, 1);
        llm_tensor o = llm_tensor_4d(bo, 0, LLM_DTYPE_F32, hd, nh, n, 1);
        const int32_t *p = mode ? pos : pos + batch - 1;
        llm_attn_params full = llm_attn_default_params(), swa = full;
        full.scale = swa.scale = 1.0f / sqrtf((float)hd);
        swa.n_swa = window;
        const double tf = time_attn(be, &o, &q, kc, vc, layers, p, table, nblk, &full);
        const double tw = time_attn(be, &o, &q, kc, vc, layers, p, table, nblk, &swa);
        printf("  %-22s full %9.3f ms   window %d %9.3f ms   (x%.2f)\n",
               mode ? "prefill batch (tiled)" : "decode 1 token (dot)", tf * 1e3, window, tw * 1e3, tf / tw);
        if (mode) {
            printf("  %-22s full %9.0f tok/s  window %9.0f tok/s\n", "", batch / tf, batch / tw);
        }
    }
    llm_buffer_free(bk);
    llm_buffer_free(bv);
    llm_buffer_free(bq);
    llm_buffer_free(bo);
    free(h);
    free(qh);
    free(table);
    free(pos);
    llm_backend_free(be);
    return 0;
}
