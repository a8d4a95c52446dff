/*
 * llm-perplexity -m MODEL -f TEXT_FILE [-c CTX] [-t THREADS] [--tokens IDS_FILE]
 *
 * Splits the tokenized text into non-overlapping windows of CTX tokens, runs
 * each window from an empty context, and scores every position in the second
 * half of the window: the logits at position j (CTX/2 <= j < CTX-1) predict
 * token j+1. This is how llama.cpp's perplexity tool scores, so the figures
 * are comparable (scripts/golden/logits/llamacpp_perplexity.py computes
 * llama.cpp's). If the model asks for a BOS token, the first token of each
 * window is replaced by BOS, as llama.cpp does. Progress and tokens/s go to
 * stderr; stdout ends with "perplexity: <value>".
 *
 * --tokens FILE reads whitespace-separated token ids instead of tokenizing
 * (e.g. llama.cpp's own tokenization, to compare the forward alone).
 *
 * --kl-ref-cache-type T also runs every window on a second copy of the
 * model whose K and V caches are of type T (e.g. f16) and prints the mean
 * Kullback-Leibler divergence KL(P_ref || P) of the token distributions over
 * the scored positions ("kl-divergence: <value>"), and the reference's
 * perplexity: the quality cost of -ctk/-ctv against T.
 *
 * Uses only the engine API (llama/engine.h): llm_prefill_all_logits gives
 * the logits of every position of a window.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app_cache_type.h"
#include "app_common.h"
#include "llama/engine.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The text's tokens through the model's tokenizer, with the special tokens
 * (BOS) the model asks for. *bos = the BOS id if the tokenizer added one,
 * else -1. NULL after printing an error. */
static llm_token *tokenize_file(const llm_model *m, const char *path, int32_t *n_out, llm_token *bos) {
    size_t len;
    char *text = app_read_file(path, &len);
    if (!text) {
        fprintf(stderr, "llm-perplexity: cannot read %s: %s\n", path, strerror(errno));
        return NULL;
    }
    if (len > (size_t)INT32_MAX - 16) {
        fprintf(stderr, "llm-perplexity: %s is too large\n", path);
        free(text);
        return NULL;
    }
    int32_t cap = (int32_t)(len / 2 + 16), n = 0;
    llm_token *ids = malloc(sizeof *ids * (size_t)cap);
    llm_status st = ids ? llm_tokenize(m, text, len, LLM_ENCODE_ADD_SPECIAL, ids, cap, &n) : LLM_ERR_NO_MEMORY;
    if (st == LLM_ERR_BUFFER_TOO_SMALL) {
        cap = -n;
        llm_token *bigger = realloc(ids, sizeof *ids * (size_t)cap);
        if (bigger) ids = bigger;
        st = bigger ? llm_tokenize(m, text, len, LLM_ENCODE_ADD_SPECIAL, ids, cap, &n) : LLM_ERR_NO_MEMORY;
    }
    free(text);
    if (st != LLM_OK) {
        fprintf(stderr, "llm-perplexity: tokenize %s: %s\n", path,
                st == LLM_ERR_NO_MEMORY ? "out of memory" : llm_last_error());
        free(ids);
        return NULL;
    }
    llm_model_info info;
    llm_model_get_info(m, &info);
    *bos = (n > 0 && info.bos != LLM_TOKEN_NULL && ids[0] == info.bos) ? info.bos : -1;
    *n_out = n;
    return ids;
}

/* Whitespace-separated token ids. NULL after printing an error. */
static llm_token *read_ids(const char *path, int32_t *n_out) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "llm-perplexity: cannot read %s: %s\n", path, strerror(errno));
        return NULL;
    }
    int32_t cap = 1024, n = 0;
    long v;
    llm_token *ids = malloc(sizeof *ids * (size_t)cap);
    int r = 0;
    while (ids && (r = fscanf(f, "%ld", &v)) == 1) {
        if (v < 0 || v > INT32_MAX) {
            fprintf(stderr, "llm-perplexity: %s: token id %ld out of range\n", path, v);
            free(ids);
            ids = NULL;
            break;
        }
        if (n == cap) {
            llm_token *bigger = n < INT32_MAX / 2 ? realloc(ids, sizeof *ids * (size_t)(cap *= 2)) : NULL;
            if (!bigger) {
                fprintf(stderr, "llm-perplexity: out of memory\n");
                free(ids);
                ids = NULL;
                break;
            }
            ids = bigger;
        }
        ids[n++] = (llm_token)v;
    }
    if (ids && r != EOF) {
        fprintf(stderr, "llm-perplexity: %s: not a list of token ids (after %d ids)\n", path, n);
        free(ids);
        ids = NULL;
    }
    fclose(f);
    *n_out = n;
    return ids;
}

/* -log softmax(logits)[tok], accumulated in double like llama.cpp. */
static double nll(const float *logits, int32_t n_vocab, llm_token tok) {
    float mx = logits[0];
    for (int32_t i = 1; i < n_vocab; i++) mx = logits[i] > mx ? logits[i] : mx;
    double sum = 0.0;
    for (int32_t i = 0; i < n_vocab; i++) sum += exp((double)(logits[i] - mx));
    return log(sum) - (double)(logits[tok] - mx);
}

/* KL(softmax(ref) || softmax(x)) in double. */
static double kl_div(const float *ref, const float *x, int32_t n_vocab) {
    float mr = ref[0], mx = x[0];
    for (int32_t i = 1; i < n_vocab; i++) {
        mr = ref[i] > mr ? ref[i] : mr;
        mx = x[i] > mx ? x[i] : mx;
    }
    double zr = 0.0, zx = 0.0;
    for (int32_t i = 0; i < n_vocab; i++) {
        zr += exp((double)(ref[i] - mr));
        zx += exp((double)(x[i] - mx));
    }
    const double lzr = log(zr), lzx = log(zx);
    double kl = 0.0;
    for (int32_t i = 0; i < n_vocab; i++) {
        const double lr = (double)(ref[i] - mr) - lzr, lx = (double)(x[i] - mx) - lzx;
        kl += exp(lr) * (lr - lx);
    }
    return kl;
}

static void usage(FILE *to) {
    fprintf(to,
            "usage: llm-perplexity -m MODEL -f TEXT_FILE [-c CTX] [-t THREADS]\n"
            "       llm-perplexity -m MODEL --tokens IDS_FILE [-c CTX] [-t THREADS]\n"
            "\n"
            "Perplexity of MODEL over a text: the tokens are cut into non-overlapping\n"
            "windows of CTX tokens, each run from an empty context, and the second half\n"
            "of each window is scored, as llama.cpp's perplexity tool does.\n"
            "\n"
            "  -m MODEL          model (.gguf file or Hugging Face folder)\n"
            "  -f TEXT_FILE      UTF-8 text to score\n"
            "  --tokens IDS_FILE whitespace-separated token ids instead of -f\n"
            "  -c CTX            window size in tokens, 4 to 1048576 (default 512)\n"
            "  -t THREADS        CPU threads, at most the number of cores (default: all)\n"
            APP_CACHE_TYPE_HELP
            "  --kl-ref-cache-type T  also run with K and V caches of type T and print the mean\n"
            "                    KL divergence of the token distributions against it\n"
            "  --force           run even when the memory plan exceeds the available memory\n"
            "  -h, --help        this help\n"
            "\n"
            "Progress and tokens/s go to stderr; stdout ends with \"perplexity: <value>\".\n");
}

int main(int argc, char **argv) {
    const char *model_path = NULL, *file = NULL, *tokfile = NULL;
    int32_t ctx = 512, threads = 0;
    bool force = false;
    llm_kv_type type_k = LLM_KV_F16, type_v = LLM_KV_F16, kl_ref = LLM_KV_F16;
    bool kl = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int is_v = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return app_finish_stdout("llm-perplexity");
        }
        if (!strcmp(a, "--force")) {
            force = true;
            continue;
        }
        bool known = !strcmp(a, "-m") || !strcmp(a, "-f") || !strcmp(a, "--tokens") ||
                     !strcmp(a, "-c") || !strcmp(a, "-t") || app_is_cache_type_opt(a, &is_v) ||
                     !strcmp(a, "--kl-ref-cache-type");
        if (!known) {
            fprintf(stderr, "llm-perplexity: unknown option: %s\n", a);
            usage(stderr);
            return 2;
        }
        if (app_need_value("llm-perplexity", a, i + 1 < argc ? argv[i + 1] : NULL)) return 2;
        const char *v = argv[++i];
        if (!strcmp(a, "-m")) model_path = v;
        else if (!strcmp(a, "-f")) file = v;
        else if (!strcmp(a, "--tokens")) tokfile = v;
        else if (!strcmp(a, "-c")) {
            if (app_parse_i32("llm-perplexity", a, v, 4, 1 << 20, &ctx)) return 2;
        } else if (!strcmp(a, "-t")) {
            if (app_parse_threads("llm-perplexity", a, v, &threads)) return 2;
        } else if (app_is_cache_type_opt(a, &is_v)) {
            if (app_parse_cache_type("llm-perplexity", a, v, is_v ? &type_v : &type_k)) return 2;
        } else if (!strcmp(a, "--kl-ref-cache-type")) {
            if (app_parse_cache_type("llm-perplexity", a, v, &kl_ref)) return 2;
            kl = true;
        } else {
            fprintf(stderr, "llm-perplexity: unknown option: %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!model_path || (!file == !tokfile)) {
        fprintf(stderr, "llm-perplexity: need -m MODEL and exactly one of -f TEXT_FILE, --tokens IDS_FILE\n");
        usage(stderr);
        return 2;
    }

    if (app_check_input_file("llm-perplexity", file ? file : tokfile)) return 1;
    llm_model_params mp = llm_model_default_params();
    mp.n_threads = threads;
    mp.n_ctx = ctx;
    mp.type_k = type_k;
    mp.type_v = type_v;
    /* One window per forward pass where memory allows, as llama.cpp does. */
    mp.n_batch = ctx < 512 ? ctx : 512;
    /* The engine's plan plus this program's logits buffer, [ctx][n_vocab]
     * floats, checked before anything large is allocated: n_vocab comes
     * from a vocabulary-only load (no weights, no KV cache). */
    llm_memory_plan plan;
    if (llm_model_plan(model_path, &mp, &plan) != LLM_OK) {
        fprintf(stderr, "llm-perplexity: %s\n", llm_last_error());
        return 1;
    }
    llm_model_params vp = mp;
    vp.vocab_only = true;
    llm_model *m = NULL;
    llm_model_info info;
    if (llm_load_model(model_path, &vp, &m) != LLM_OK) {
        fprintf(stderr, "llm-perplexity: %s\n", llm_last_error());
        return 1;
    }
    llm_model_get_info(m, &info);
    llm_model_free(m);
    m = NULL;
    llm_model_params rp = mp;
    rp.type_k = rp.type_v = kl_ref;
    llm_memory_plan rplan = {0};
    if (kl && llm_model_plan(model_path, &rp, &rplan) != LLM_OK) {
        fprintf(stderr, "llm-perplexity: %s\n", llm_last_error());
        return 1;
    }
    const uint64_t one = plan.total_bytes + (uint64_t)ctx * (uint64_t)info.n_vocab * 4u;
    if (app_check_memory("llm-perplexity", one + (kl ? rplan.total_bytes + one - plan.total_bytes : 0), force, "-c"))
        return 1;
    if (llm_load_model(model_path, &mp, &m) != LLM_OK) {
        fprintf(stderr, "llm-perplexity: %s\n", llm_last_error());
        return 1;
    }
    llm_model_get_info(m, &info);
    int rc = 1;
    llm_session *s = NULL, *rs = NULL;
    llm_model *rm = NULL;
    float *logits = NULL, *rlogits = NULL;
    llm_token *win = NULL;
    int32_t n_tok = 0;
    llm_token bos = -1;
    llm_token *toks = tokfile ? read_ids(tokfile, &n_tok) : tokenize_file(m, file, &n_tok, &bos);
    if (!toks) goto out;
    const int32_t n_win = n_tok / ctx, V = info.n_vocab;
    fprintf(stderr, "%d tokens, %d windows of %d%s\n", n_tok, n_win, ctx, bos >= 0 ? " (BOS first)" : "");
    if (n_win < 1) {
        fprintf(stderr, "llm-perplexity: need at least %d tokens (-c), the text has %d\n", ctx, n_tok);
        goto out;
    }
    if (llm_session_new(m, NULL, &s) != LLM_OK) {
        fprintf(stderr, "llm-perplexity: %s\n", llm_last_error());
        goto out;
    }
    if (kl && (llm_load_model(model_path, &rp, &rm) != LLM_OK || llm_session_new(rm, NULL, &rs) != LLM_OK)) {
        fprintf(stderr, "llm-perplexity: reference model: %s\n", llm_last_error());
        goto out;
    }
    const size_t cap = (size_t)ctx * (size_t)V;
    if (kl && !(rlogits = malloc(sizeof *rlogits * cap))) {
        fprintf(stderr, "llm-perplexity: out of memory (%zu MiB of logits)\n", sizeof *rlogits * cap >> 20);
        goto out;
    }
    logits = malloc(sizeof *logits * cap);
    win = malloc(sizeof *win * (size_t)ctx);
    if (!logits || !win) {
        fprintf(stderr, "llm-perplexity: out of memory (%zu MiB of logits)\n", sizeof *logits * cap >> 20);
        goto out;
    }
    double sum_nll = 0.0, sum_rnll = 0.0, sum_kl = 0.0, t0 = now_s();
    long count = 0;
    const int32_t first = ctx / 2;
    for (int32_t w = 0; w < n_win; w++) {
        memcpy(win, toks + (size_t)w * (size_t)ctx, sizeof *win * (size_t)ctx);
        if (bos >= 0) win[0] = bos;
        llm_session_reset(s); /* every window starts from an empty context */
        if (llm_prefill_all_logits(s, win, ctx, logits, cap) != LLM_OK) {
            fprintf(stderr, "llm-perplexity: window %d: %s\n", w + 1, llm_session_last_error(s));
            goto out;
        }
        for (int32_t j = first; j < ctx - 1; j++) {
            double x = nll(logits + (size_t)j * (size_t)V, V, win[j + 1]);
            if (!isfinite(x)) {
                fprintf(stderr,
                        "llm-perplexity: window %d, position %d: the model produced non-finite logits "
                        "(NaN or infinity): no perplexity can be computed\n",
                        w + 1, j);
                goto out;
            }
            sum_nll += x;
            count++;
        }
        if (kl) {
            llm_session_reset(rs);
            if (llm_prefill_all_logits(rs, win, ctx, rlogits, cap) != LLM_OK) {
                fprintf(stderr, "llm-perplexity: window %d (reference): %s\n", w + 1, llm_session_last_error(rs));
                goto out;
            }
            for (int32_t j = first; j < ctx - 1; j++) {
                const float *ref = rlogits + (size_t)j * (size_t)V;
                sum_rnll += nll(ref, V, win[j + 1]);
                sum_kl += kl_div(ref, logits + (size_t)j * (size_t)V, V);
            }
        }
        double el = now_s() - t0;
        fprintf(stderr, "[%d/%d] ppl %.4f  (%.1f tok/s)\n", w + 1, n_win, exp(sum_nll / (double)count),
                (double)(w + 1) * ctx / el);
    }
    double el = now_s() - t0;
    fprintf(stderr, "%d tokens evaluated in %.2f s: %.1f tokens/s\n", n_win * ctx, el, n_win * ctx / el);
    printf("perplexity: %.4f\n", exp(sum_nll / (double)count));
    if (kl) {
        printf("reference perplexity (%s cache): %.4f\n", llm_kv_type_name(kl_ref), exp(sum_rnll / (double)count));
        printf("kl-divergence: %.6f\n", sum_kl / (double)count);
    }
    rc = app_finish_stdout("llm-perplexity");
out:
    free(logits);
    free(rlogits);
    llm_session_free(rs);
    llm_model_free(rm);
    free(win);
    free(toks);
    llm_session_free(s);
    llm_model_free(m);
    return rc;
}
