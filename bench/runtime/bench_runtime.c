/*
 * bench_runtime.c -- prints matmul throughput per weight type (GB/s of weight
 * bytes streamed, decode-shaped: one activation row; with -N, a prompt pass's
 * N rows and multiply-adds per second) and, given a model, prefill and decode
 * tokens/s with a per-op time breakdown.
 *
 *   llm-bench-runtime [-m MODEL.gguf] [-t THREADS] [-p PROMPT_TOKENS] [-n DECODE_TOKENS] [-M MATMUL_ROWS]
 *                     [-N ACT_ROWS]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama/arch.h"
#include "llama/runtime.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* M = 4096 rows (the matrix stays in the last-level cache), or with -M a
 * larger count: the first 4096 quantized rows are repeated, so a matrix of
 * 65536 rows (75 MB at Q4_0) is read from memory, as a model's are. */
static void bench_matmul(llm_backend *be, int64_t M, int64_t N) {
    const llm_dtype types[] = {LLM_DTYPE_F32, LLM_DTYPE_F16, LLM_DTYPE_BF16, LLM_DTYPE_Q4_0, LLM_DTYPE_Q4_1,
                               LLM_DTYPE_Q8_0, LLM_DTYPE_Q4_K, LLM_DTYPE_Q6_K};
    const int64_t K = 2048, MQ = 4096;
    float *wf = malloc(sizeof(float) * (size_t)(K * MQ)), *x = malloc(sizeof(float) * (size_t)(K * N));
    for (int64_t i = 0; i < K * MQ; i++) wf[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
    for (int64_t i = 0; i < K * N; i++) x[i] = (float)((i * 7 + i / K) % 17) / 17.0f - 0.5f;
    printf("matmul [%lld][%lld] x [%lld][%lld]^T, %d threads, kernels %s\n", (long long)N, (long long)K, (long long)M,
           (long long)K, llm_backend_n_threads(be), llm_backend_kernels(be));
    for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++) {
        size_t row;
        llm_dtype_row_size(types[ti], (uint64_t)K, &row);
        char *wq = malloc(row * (size_t)M);
        for (int64_t m = 0; m < M; m++) {
            if (m < MQ) llm_dtype_quantize_row(types[ti], wf + m * K, wq + row * (size_t)m, (size_t)K);
            else memcpy(wq + row * (size_t)m, wq + row * (size_t)(m % MQ), row);
        }
        llm_buffer *bw, *bx, *bo;
        llm_buffer_wrap_host(be, wq, row * (size_t)M, &bw);
        llm_buffer_alloc(be, sizeof(float) * (size_t)(K * N), &bx);
        llm_buffer_alloc(be, sizeof(float) * (size_t)(M * N), &bo);
        llm_buffer_write(bx, 0, x, sizeof(float) * (size_t)(K * N));
        llm_tensor tw = llm_tensor_2d(bw, 0, types[ti], K, M), tx = llm_tensor_2d(bx, 0, LLM_DTYPE_F32, K, N);
        llm_tensor to = llm_tensor_2d(bo, 0, LLM_DTYPE_F32, M, N);
        /* As loaded, then (where the backend keeps one: runtime.h
         * llm_backend_prepare_weight) in its own layout, marked '*'. */
        for (int prepared = 0; prepared < 2; prepared++) {
            int kept = 0;
            if (prepared && (llm_backend_prepare_weight(be, &tw, &kept) != LLM_OK || !kept)) break;
            llm_op_matmul(be, &to, &tx, &tw); /* warm-up */
            int iters = 0;
            double t0 = now_s(), t1;
            do {
                llm_op_matmul(be, &to, &tx, &tw);
                iters++;
                t1 = now_s();
            } while (t1 - t0 < 0.5);
            double per = (t1 - t0) / iters;
            char name[16];
            snprintf(name, sizeof name, "%s%s", llm_dtype_name(types[ti]), prepared ? "*" : "");
            if (N == 1) {
                printf("  %-6s %8.2f GB/s  %8.3f ms/op\n", name, (double)(row * (size_t)M) / per / 1e9, per * 1e3);
            } else {
                printf("  %-6s %8.2f GMAC/s  %8.3f ms/op\n", name, (double)(M * K * N) / per / 1e9, per * 1e3);
            }
        }
        llm_buffer_free(bw);
        llm_buffer_free(bx);
        llm_buffer_free(bo);
        free(wq);
    }
    free(wf);
    free(x);
}

static void print_stats(llm_backend *be, double total_s) {
    llm_op_stats st[LLM_OP_COUNT];
    llm_backend_stats(be, st);
    for (int op = 0; op < LLM_OP_COUNT; op++) {
        if (!st[op].calls) continue;
        printf("    %-10s %7llu calls %9.2f ms (%4.1f%%) %8.2f GB/s\n", llm_op_name((llm_op)op),
               (unsigned long long)st[op].calls, (double)st[op].ns / 1e6,
               100.0 * (double)st[op].ns / 1e9 / total_s,
               st[op].ns ? (double)st[op].bytes / (double)st[op].ns : 0.0);
    }
}

int main(int argc, char **argv) {
    const char *model = getenv("LLM_DEFAULT_MODEL");
    int threads = 0, n_prompt = 128, n_decode = 64;
    int64_t mm_rows = 4096, act_rows = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) model = argv[++i];
        else if (!strcmp(argv[i], "-t") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc) n_prompt = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-n") && i + 1 < argc) n_decode = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-M") && i + 1 < argc) mm_rows = atoll(argv[++i]);
        else if (!strcmp(argv[i], "-N") && i + 1 < argc) act_rows = atoll(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-m MODEL] [-t THREADS] [-p PROMPT] [-n DECODE] [-M MATMUL_ROWS] [-N ACT_ROWS]\n",
                    argv[0]);
            return 2;
        }
    }
    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = threads;
    llm_backend *be = NULL;
    if (llm_backend_create("cpu", &bp, &be) != LLM_OK) {
        fprintf(stderr, "backend: %s\n", llm_runtime_last_error());
        return 1;
    }
    if (mm_rows < 8 || mm_rows % 8) {
        fprintf(stderr, "-M: a positive multiple of 8\n");
        return 2;
    }
    if (act_rows < 1 || act_rows > 4096) {
        fprintf(stderr, "-N: 1 to 4096 activation rows\n");
        return 2;
    }
    bench_matmul(be, mm_rows, act_rows);
    if (!model) {
        llm_backend_free(be);
        return 0;
    }
    llm_model_desc *desc = NULL;
    llm_net *net = NULL;
    llm_net_kv *kv = NULL;
    llm_net_params np = llm_net_default_params();
    if (n_prompt > np.max_batch) np.max_batch = n_prompt;
    if (llm_model_desc_from_gguf(model, &desc) != LLM_OK || llm_net_create(desc, be, &np, &net) != LLM_OK) {
        fprintf(stderr, "model: %s %s\n", llm_models_last_error(), llm_net_last_error());
        return 1;
    }
    const int total = n_prompt + n_decode, bsz = 16, nblk = (total + bsz - 1) / bsz + 1;
    llm_net_kv_create(net, nblk, bsz, &kv);
    int32_t *table = malloc(sizeof(int32_t) * (size_t)nblk), *toks = malloc(sizeof(int32_t) * (size_t)total);
    int32_t *pos = malloc(sizeof(int32_t) * (size_t)total);
    for (int i = 0; i < nblk; i++) table[i] = i;
    for (int i = 0; i < total; i++) { toks[i] = 100 + (i * 37) % 1000; pos[i] = i; }
    float *logits = malloc(sizeof(float) * llm_net_hparams(net)->n_vocab);
    llm_net_seq seq = {n_prompt, table, nblk, NULL, 0};
    llm_net_batch b = llm_net_batch_default();
    b.tokens = toks; b.positions = pos; b.n_tokens = n_prompt; b.seqs = &seq; b.n_seqs = 1; b.logits = logits;
    llm_backend_reset_stats(be);
    double t0 = now_s();
    llm_status st = llm_net_forward(net, kv, &b);
    double tp = now_s() - t0;
    printf("model %s\n  prefill %d tokens: %.1f tok/s (%.1f ms) [%s]\n", model, n_prompt, n_prompt / tp, tp * 1e3,
           llm_status_str(st));
    print_stats(be, tp);
    llm_backend_reset_stats(be);
    t0 = now_s();
    for (int i = 0; i < n_decode; i++) {
        seq.n_tokens = 1;
        b.tokens = toks + n_prompt + i; b.positions = pos + n_prompt + i; b.n_tokens = 1;
        llm_net_forward(net, kv, &b);
    }
    double td = now_s() - t0;
    printf("  decode %d tokens: %.1f tok/s (%.2f ms/token)\n", n_decode, n_decode / td, td * 1e3 / n_decode);
    print_stats(be, td);
    free(table); free(toks); free(pos); free(logits);
    llm_net_kv_free(kv);
    llm_net_free(net);
    llm_model_desc_free(desc);
    llm_backend_free(be);
    return 0;
}
