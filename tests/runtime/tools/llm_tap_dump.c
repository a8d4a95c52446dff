/*
 * llm_tap_dump.c -- dumps every intermediate tensor of our llama forward
 * (the debug tap of llama/arch.h) for a token list, to compare op by op with
 * llama.cpp (scripts/golden/logits/llamacpp_tap.py writes the same format;
 * scripts/golden/logits/compare_taps.py compares two dumps). Not installed.
 *
 *   llm-tap-dump MODEL.gguf TOKENS OUTDIR [--threads N] [--decode-from K]
 *                [--layers 0,3,28-29] [--kv f16|f32] [--logits]
 *
 * TOKENS is a text file of token ids (separated by spaces, commas, newlines or
 * brackets, so a JSON list works). Step 0 runs tokens [0, K) as one batch,
 * then each remaining token is its own decode step (steps 1..n-K); without
 * --decode-from the whole list is one batch; a negative K counts from the
 * end (-3: the last three tokens are decode steps). The K/V cache holds 1024
 * positions (64 blocks of 16, identity block table), as llama.cpp's n_ctx.
 *
 * OUTDIR gets one raw little-endian float32 file per tapped tensor,
 * s<step>_l<layer>_<name>.f32 (layer -1 is written "lm1"), laid out
 * [rows][features] with rows = the step's tokens, and index.json:
 *   {"source": "ours", "tokens": [...], "decode_from": K, "kv": "f16",
 *    "threads": N, "entries": [{"step": s, "layer": l, "name": "Qcur",
 *    "shape": [rows, n_head, head_dim], "file": "..."}, ...]}
 * entries in forward order. --logits also dumps each step's logits for every
 * token as "result_output" (layer -1, [rows][n_vocab]).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "llama/arch.h"

#define N_CTX 1024
#define BLOCK 16
#define MAX_LAYERS 1024

typedef struct dump {
    const char *dir;
    FILE *index;
    int n_entries;
    int step;
    int64_t rows;               /* tokens of the current step */
    unsigned char want[MAX_LAYERS]; /* layers to dump (all when !filter) */
    int filter;
    int failed;
    float *buf;
    size_t cap;
    /* The FFN's n_ff-wide stages of a long batch come in runs of rows
     * (llama/arch.h): joined here into one [rows][n_ff] entry. */
    float *join;
    size_t join_cap;
    int64_t join_rows;
} dump;

static int write_entry(dump *d, const char *name, int32_t layer, const float *data,
                       const int64_t *shape, int n_shape) {
    char file[256], path[4096];
    char lname[16];
    if (layer < 0) {
        snprintf(lname, sizeof(lname), "lm%d", -layer);
    } else {
        snprintf(lname, sizeof(lname), "%d", layer);
    }
    snprintf(file, sizeof(file), "s%d_l%s_%s.f32", d->step, lname, name);
    snprintf(path, sizeof(path), "%s/%s", d->dir, file);
    size_t n = 1;
    for (int i = 0; i < n_shape; i++) n *= (size_t)shape[i];
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, sizeof(float), n, f) != n) {
        fprintf(stderr, "llm-tap-dump: cannot write %s: %s\n", path, strerror(errno));
        if (f) fclose(f);
        return -1;
    }
    fclose(f);
    fprintf(d->index, "%s\n    {\"step\": %d, \"layer\": %d, \"name\": \"%s\", \"shape\": [",
            d->n_entries ? "," : "", d->step, (int)layer, name);
    for (int i = 0; i < n_shape; i++) fprintf(d->index, "%s%lld", i ? ", " : "", (long long)shape[i]);
    fprintf(d->index, "], \"file\": \"%s\"}", file);
    d->n_entries++;
    return 0;
}

/* *p holds at least need bytes (grown with realloc): 0, or -1 out of memory. */
static int reserve(float **p, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    float *np = realloc(*p, need);
    if (!np) return -1;
    *p = np;
    *cap = need;
    return 0;
}

/* The tap: copies the tensor to host (all tapped tensors are contiguous F32)
 * and writes it. Failures are remembered; the forward cannot be stopped. */
static void tap(void *user, const char *name, int32_t layer, const llm_tensor *t) {
    dump *d = user;
    if (d->failed) return;
    if (layer >= 0 && d->filter && (layer >= MAX_LAYERS || !d->want[layer])) return;
    size_t nbytes = llm_tensor_nbytes(t);
    if (t->dtype != LLM_DTYPE_F32 || t->nb[0] != sizeof(float)) {
        fprintf(stderr, "llm-tap-dump: %s-%d is not contiguous f32\n", name, (int)layer);
        d->failed = 1;
        return;
    }
    /* A run of rows of the FFN's n_ff-wide stages (runs come in row order,
     * one stage at a time): read into its place in the joined tensor. */
    const int run = layer >= 0 && t->ne[2] == 1 && t->ne[1] < d->rows &&
                    (!strcmp(name, "ffn_gate_b") || !strcmp(name, "ffn_up_b") || !strcmp(name, "ffn_swiglu") ||
                     !strcmp(name, "ffn_geglu"));
    if (run ? reserve(&d->join, &d->join_cap, (size_t)d->rows * (size_t)t->ne[0] * sizeof(float))
            : reserve(&d->buf, &d->cap, nbytes)) {
        d->failed = 1;
        return;
    }
    float *dst = run ? d->join + (size_t)d->join_rows * (size_t)t->ne[0] : d->buf;
    if (llm_buffer_read(t->buffer, t->offset, dst, nbytes) != LLM_OK) {
        fprintf(stderr, "llm-tap-dump: reading %s-%d: %s\n", name, (int)layer, llm_runtime_last_error());
        d->failed = 1;
        return;
    }
    if (run) {
        d->join_rows += t->ne[1];
        if (d->join_rows < d->rows) return;
        d->join_rows = 0;
        const int64_t jshape[2] = {d->rows, t->ne[0]};
        if (write_entry(d, name, layer, d->join, jshape, 2) != 0) d->failed = 1;
        return;
    }
    /* Shape outermost first, rows (the step's tokens) first: per-layer
     * tensors are [n][...]; result_norm is 2-D [rows][n_embd]. */
    int64_t shape[4];
    int ns = 0;
    if (t->ne[2] > 1 || (layer >= 0 && t->ne[1] != d->rows)) {
        shape[ns++] = t->ne[2];
        shape[ns++] = t->ne[1];
    } else {
        shape[ns++] = t->ne[1];
    }
    shape[ns++] = t->ne[0];
    if (t->ne[3] != 1) {
        fprintf(stderr, "llm-tap-dump: %s-%d is 4-D\n", name, (int)layer);
        d->failed = 1;
        return;
    }
    if (write_entry(d, name, layer, d->buf, shape, ns) != 0) d->failed = 1;
}

static int parse_layers(dump *d, const char *s) {
    d->filter = 1;
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s || a < 0 || a >= MAX_LAYERS) return -1;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            if (end == s + 1 || b < a || b >= MAX_LAYERS) return -1;
            s = end;
        }
        for (long i = a; i <= b; i++) d->want[i] = 1;
        if (*s == ',') s++;
        else if (*s) return -1;
    }
    return 0;
}

/* Token ids from a text file: every run of digits is one id; anything else
 * separates (so "1 2 3", "1,2,3" and "[1, 2, 3]" all work). */
static int32_t *read_tokens(const char *path, int32_t *n_out) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    int32_t cap = 256, n = 0;
    int32_t *v = malloc(sizeof(int32_t) * (size_t)cap);
    long cur = 0;
    int in_num = 0, c;
    do {
        c = fgetc(f);
        if (c >= '0' && c <= '9') {
            cur = cur * 10 + (c - '0');
            in_num = 1;
            if (cur > 0x7fffffffL) break;
            continue;
        }
        if (!in_num) continue;
        if (n == cap) {
            cap *= 2;
            int32_t *nv = realloc(v, sizeof(int32_t) * (size_t)cap);
            if (!nv) break;
            v = nv;
        }
        if (!v) break;
        v[n++] = (int32_t)cur;
        cur = 0;
        in_num = 0;
    } while (c != EOF);
    fclose(f);
    if (c != EOF) { /* overflow or out of memory */
        free(v);
        return NULL;
    }
    *n_out = n;
    return v;
}

static void usage(void) {
    fprintf(stderr, "usage: llm-tap-dump MODEL.gguf TOKENS OUTDIR [--threads N] [--decode-from K]\n"
                    "                    [--layers 0,3,28-29] [--kv f16|f32] [--logits]\n");
}

int main(int argc, char **argv) {
    dump d;
    memset(&d, 0, sizeof(d));
    const char *pos_args[3] = {NULL, NULL, NULL};
    int n_pos = 0, threads = 2, want_logits = 0;
    long decode_from = 0;
    int have_df = 0;
    llm_dtype kv_type = LLM_DTYPE_F16;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--threads") && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else if (!strcmp(a, "--decode-from") && i + 1 < argc) {
            decode_from = atol(argv[++i]);
            have_df = 1;
        } else if (!strcmp(a, "--layers") && i + 1 < argc) {
            if (parse_layers(&d, argv[++i]) != 0) {
                fprintf(stderr, "llm-tap-dump: bad --layers '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--kv") && i + 1 < argc) {
            const char *k = argv[++i];
            if (!strcmp(k, "f16")) kv_type = LLM_DTYPE_F16;
            else if (!strcmp(k, "f32")) kv_type = LLM_DTYPE_F32;
            else { usage(); return 2; }
        } else if (!strcmp(a, "--logits")) {
            want_logits = 1;
        } else if (a[0] == '-' && a[1] == '-') {
            usage();
            return 2;
        } else if (n_pos < 3) {
            pos_args[n_pos++] = a;
        } else {
            usage();
            return 2;
        }
    }
    if (n_pos != 3) {
        usage();
        return 2;
    }
    int32_t n = 0;
    int32_t *tokens = read_tokens(pos_args[1], &n);
    if (!tokens || n <= 0 || n > N_CTX) {
        fprintf(stderr, "llm-tap-dump: cannot read 1..%d tokens from %s\n", N_CTX, pos_args[1]);
        free(tokens);
        return 1;
    }
    if (!have_df) decode_from = n;
    if (decode_from < 0) decode_from += n; /* -3: the last 3 tokens are decode steps */
    if (decode_from < 1 || decode_from > n) {
        fprintf(stderr, "llm-tap-dump: --decode-from must be in 1..%d (or -%d..-1)\n", n, n - 1);
        free(tokens);
        return 2;
    }
    d.dir = pos_args[2];
    if (mkdir(d.dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "llm-tap-dump: cannot create %s: %s\n", d.dir, strerror(errno));
        free(tokens);
        return 1;
    }

    int rc = 1;
    llm_model_desc *desc = NULL;
    llm_backend *be = NULL;
    llm_net *net = NULL;
    llm_net_kv *kv = NULL;
    float *hidden = NULL, *logits = NULL;
    int32_t *positions = NULL;
    int32_t table[N_CTX / BLOCK];
    for (int i = 0; i < N_CTX / BLOCK; i++) table[i] = i;
    char path[4096];

    if (llm_model_desc_from_gguf(pos_args[0], &desc) != LLM_OK) {
        fprintf(stderr, "llm-tap-dump: %s\n", llm_models_last_error());
        goto out;
    }
    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = threads;
    llm_net_params np = llm_net_default_params();
    np.type_k = np.type_v = kv_type;
    if (np.max_batch < decode_from) np.max_batch = (int32_t)decode_from;
    if (llm_backend_create("cpu", &bp, &be) != LLM_OK ||
        llm_net_create(desc, be, &np, &net) != LLM_OK ||
        llm_net_kv_create(net, N_CTX / BLOCK, BLOCK, &kv) != LLM_OK ||
        (llm_net_is_recurrent(net) && llm_net_kv_state_alloc(kv, 1) != LLM_OK)) {
        fprintf(stderr, "llm-tap-dump: %s %s\n", llm_runtime_last_error(), llm_net_last_error());
        goto out;
    }
    const llm_model_hparams *hp = llm_net_hparams(net);
    const int64_t E = hp->n_embd, V = hp->n_vocab;
    hidden = malloc(sizeof(float) * (size_t)(decode_from * E));
    logits = want_logits ? malloc(sizeof(float) * (size_t)(decode_from * V)) : malloc(sizeof(float) * (size_t)V);
    positions = malloc(sizeof(int32_t) * (size_t)n);
    if (!hidden || !logits || !positions) goto out;
    for (int32_t i = 0; i < n; i++) positions[i] = i;

    snprintf(path, sizeof(path), "%s/index.json", d.dir);
    d.index = fopen(path, "w");
    if (!d.index) {
        fprintf(stderr, "llm-tap-dump: cannot write %s\n", path);
        goto out;
    }
    fprintf(d.index, "{\"source\": \"ours\", \"model\": \"%s\", \"threads\": %d, \"kv\": \"%s\", "
                     "\"decode_from\": %ld, \"kernels\": \"%s\",\n \"tokens\": [",
            pos_args[0], threads, kv_type == LLM_DTYPE_F16 ? "f16" : "f32", decode_from,
            llm_backend_kernels(be));
    for (int32_t i = 0; i < n; i++) fprintf(d.index, "%s%d", i ? ", " : "", tokens[i]);
    fprintf(d.index, "],\n \"entries\": [");

    for (int32_t t0 = 0, step = 0; t0 < n; step++) {
        int32_t m = step == 0 ? (int32_t)decode_from : 1;
        llm_net_seq seq = {m, table, N_CTX / BLOCK, NULL, 0};
        const int32_t slot = 1; /* recurrent nets: state slot 1 */
        llm_net_batch b = llm_net_batch_default();
        b.tokens = tokens + t0;
        b.positions = positions + t0;
        b.n_tokens = m;
        b.seqs = &seq;
        b.state_slots = &slot;
        b.n_seqs = 1;
        b.hidden = hidden; /* result_norm over every row, as llama.cpp with all outputs */
        b.logits_mode = want_logits ? LLM_LOGITS_ALL : LLM_LOGITS_LAST;
        b.logits = logits;
        b.tap = tap;
        b.tap_user = &d;
        d.step = step;
        d.rows = m;
        if (llm_net_forward(net, kv, &b) != LLM_OK) {
            fprintf(stderr, "llm-tap-dump: step %d: %s\n", step, llm_net_last_error());
            goto out;
        }
        if (d.failed) goto out;
        if (want_logits) {
            int64_t shape[2] = {m, V};
            if (write_entry(&d, "result_output", -1, logits, shape, 2) != 0) goto out;
        }
        t0 += m;
    }
    fprintf(d.index, "\n ]}\n");
    if (fclose(d.index) != 0) {
        d.index = NULL;
        goto out;
    }
    d.index = NULL;
    fprintf(stderr, "llm-tap-dump: %d tensors, %d tokens (decode from %ld) -> %s\n", d.n_entries, n,
            decode_from, d.dir);
    rc = 0;
out:
    if (d.index) fclose(d.index);
    free(d.buf);
    free(d.join);
    free(hidden);
    free(logits);
    free(positions);
    free(tokens);
    llm_net_kv_free(kv);
    llm_net_free(net);
    llm_backend_free(be);
    llm_model_desc_free(desc);
    return rc;
}
