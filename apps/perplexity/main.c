/*
 * llm-perplexity -m MODEL -f TEXT_FILE [-c CTX] [-t THREADS] [--tokens IDS_FILE]
 *
 * Splits the tokenized text into non-overlapping windows of CTX tokens, runs
 * each window from an empty cache, and scores every position in the second
 * half of the window: the logits at position j (CTX/2 <= j < CTX-1) predict
 * token j+1. This is how llama.cpp's perplexity tool scores, so the figures
 * are comparable (scripts/golden/logits/llamacpp_perplexity.py computes
 * llama.cpp's). If the model asks for a BOS token, the first token of each
 * window is replaced by BOS, as llama.cpp does. Progress and tokens/s go to
 * stderr; stdout ends with "perplexity: <value>".
 *
 * --tokens FILE reads whitespace-separated token ids instead of tokenizing
 * (e.g. llama.cpp's own tokenization, to compare the forward alone).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama/arch.h"
#include "llama/engine.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); buf = NULL; }
            buf = nb;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Tokens through the engine (the project's tokenizer for this model). */
static int32_t *tokenize_text(const char *model, const char *path, int32_t *n_out, int32_t *bos) {
    size_t len;
    char *text = read_file(path, &len);
    if (!text) {
        fprintf(stderr, "cannot read %s\n", path);
        return NULL;
    }
    llm_model_params mp = llm_model_default_params();
    mp.backend = "cpu";
    mp.n_ctx = 64; /* only the tokenizer is used: keep the KV pool small */
    llm_model *m = NULL;
    if (llm_load_model(model, &mp, &m) != LLM_OK) {
        fprintf(stderr, "engine: %s (use --tokens FILE with pre-tokenized ids)\n", llm_last_error());
        free(text);
        return NULL;
    }
    int32_t cap = (int32_t)(len / 2 + 16), n = 0;
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)cap);
    llm_status st = llm_tokenize(m, text, len, LLM_ENCODE_ADD_SPECIAL, ids, cap, &n);
    if (st == LLM_ERR_BUFFER_TOO_SMALL) {
        cap = -n;
        ids = realloc(ids, sizeof(int32_t) * (size_t)cap);
        st = llm_tokenize(m, text, len, LLM_ENCODE_ADD_SPECIAL, ids, cap, &n);
    }
    llm_model_info info;
    llm_model_get_info(m, &info);
    if (st != LLM_OK) {
        fprintf(stderr, "tokenize: %s\n", llm_model_last_error(m));
        free(ids);
        ids = NULL;
    }
    /* BOS only if the tokenizer added one (the model asks for it). */
    *bos = (ids && n > 0 && info.bos >= 0 && ids[0] == info.bos) ? info.bos : -1;
    llm_model_free(m);
    free(text);
    *n_out = n;
    return ids;
}

static int32_t *read_ids(const char *path, int32_t *n_out) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    int32_t cap = 1024, n = 0, v;
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)cap);
    while (ids && fscanf(f, "%d", &v) == 1) {
        if (n == cap) ids = realloc(ids, sizeof(int32_t) * (size_t)(cap *= 2));
        if (ids) ids[n++] = v;
    }
    fclose(f);
    *n_out = n;
    return ids;
}

/* -log softmax(logits)[tok], in double like llama.cpp. */
static double nll(const float *logits, int32_t n_vocab, int32_t tok) {
    float mx = logits[0];
    for (int32_t i = 1; i < n_vocab; i++) mx = logits[i] > mx ? logits[i] : mx;
    double sum = 0.0;
    for (int32_t i = 0; i < n_vocab; i++) sum += exp((double)(logits[i] - mx));
    return log(sum) - (double)(logits[tok] - mx);
}

static void usage(const char *argv0) {
    fprintf(stderr, "usage: %s -m MODEL -f TEXT_FILE [-c CTX] [-t THREADS] [--tokens IDS_FILE]\n", argv0);
}

int main(int argc, char **argv) {
    const char *model = NULL, *file = NULL, *tokfile = NULL;
    int ctx = 512, threads = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) model = argv[++i];
        else if (!strcmp(argv[i], "-f") && i + 1 < argc) file = argv[++i];
        else if (!strcmp(argv[i], "-c") && i + 1 < argc) ctx = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tokens") && i + 1 < argc) tokfile = argv[++i];
        else { usage(argv[0]); return 2; }
    }
    if (!model || (!file && !tokfile) || ctx < 4) { usage(argv[0]); return 2; }

    int32_t n_tok = 0, bos = -1;
    int32_t *toks = tokfile ? read_ids(tokfile, &n_tok) : tokenize_text(model, file, &n_tok, &bos);
    if (!toks) { fprintf(stderr, "no tokens\n"); return 1; }
    const int32_t n_win = n_tok / ctx;
    fprintf(stderr, "%d tokens, %d windows of %d%s\n", n_tok, n_win, ctx, bos >= 0 ? " (BOS first)" : "");
    if (n_win < 1) { fprintf(stderr, "need at least %d tokens\n", ctx); free(toks); return 1; }

    llm_model_desc *desc = NULL;
    llm_backend *be = NULL;
    llm_net *net = NULL;
    llm_net_kv *kv = NULL;
    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = threads;
    llm_net_params np = llm_net_default_params();
    np.max_batch = ctx;
    const int32_t bs = 16, nblk = (ctx + bs - 1) / bs;
    if (llm_model_desc_from_gguf(model, &desc) != LLM_OK) {
        fprintf(stderr, "model: %s\n", llm_models_last_error());
        return 1;
    }
    if (llm_backend_create("cpu", &bp, &be) != LLM_OK || llm_net_create(desc, be, &np, &net) != LLM_OK ||
        llm_net_kv_create(net, nblk, bs, &kv) != LLM_OK) {
        fprintf(stderr, "setup: %s %s\n", llm_runtime_last_error(), llm_net_last_error());
        return 1;
    }
    const int32_t V = (int32_t)llm_net_hparams(net)->n_vocab;
    float *logits = malloc(sizeof(float) * (size_t)ctx * (size_t)V);
    int32_t *table = malloc(sizeof(int32_t) * (size_t)nblk), *pos = malloc(sizeof(int32_t) * (size_t)ctx);
    int32_t *win = malloc(sizeof(int32_t) * (size_t)ctx);
    for (int32_t i = 0; i < nblk; i++) table[i] = i;
    for (int32_t i = 0; i < ctx; i++) pos[i] = i;
    double sum_nll = 0.0, t0 = now_s();
    long count = 0;
    const int32_t first = ctx / 2;
    for (int32_t w = 0; w < n_win; w++) {
        memcpy(win, toks + (size_t)w * ctx, sizeof(int32_t) * (size_t)ctx);
        if (bos >= 0) win[0] = bos;
        for (int32_t i = 0; i < ctx; i++) {
            if (win[i] < 0 || win[i] >= V) { fprintf(stderr, "token id %d out of range\n", win[i]); return 1; }
        }
        llm_net_seq seq = {ctx, table, nblk};
        llm_net_batch b = llm_net_batch_default();
        b.tokens = win; b.positions = pos; b.n_tokens = ctx; b.seqs = &seq; b.n_seqs = 1;
        b.logits_mode = LLM_LOGITS_ALL; b.logits = logits;
        if (llm_net_forward(net, kv, &b) != LLM_OK) {
            fprintf(stderr, "forward: %s\n", llm_net_last_error());
            return 1;
        }
        for (int32_t j = first; j < ctx - 1; j++) {
            sum_nll += nll(logits + (size_t)j * V, V, win[j + 1]);
            count++;
        }
        double el = now_s() - t0;
        fprintf(stderr, "[%d/%d] ppl %.4f  (%.1f tok/s)\n", w + 1, n_win, exp(sum_nll / (double)count),
                (double)(w + 1) * ctx / el);
    }
    double el = now_s() - t0;
    fprintf(stderr, "%d tokens evaluated in %.2f s: %.1f tokens/s\n", n_win * ctx, el, n_win * ctx / el);
    printf("perplexity: %.4f\n", exp(sum_nll / (double)count));
    free(logits); free(table); free(pos); free(win); free(toks);
    llm_net_kv_free(kv);
    llm_net_free(net);
    llm_backend_free(be);
    llm_model_desc_free(desc);
    return 0;
}
