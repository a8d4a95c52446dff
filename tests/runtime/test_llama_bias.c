/*
 * test_llama_bias.c -- a llama checkpoint WITH attention and FFN biases
 * (attn_q/k/v/output.bias, ffn_gate/up/down.bias) against llama.cpp.
 *
 * The GGUF is not committed: CTest runs scripts/golden/models/make_llama_bias.py
 * first (seeded, checked against its SHA-256; the test is SKIPPED, exit 77,
 * when numpy or the gguf package is missing) and passes its path in
 * LLM_BIAS_GGUF. The reference (data/llama_bias_golden.bin) comes from
 * llama.cpp (llama-cpp-python 0.3.36) on that same file, made by the same
 * script: every position's logits of three prompts, and hashes of the float
 * bits of layer 0's stages up to the FFN projections for one prompt.
 *
 * Required, with the AVX2 kernels (what x86 CI runs):
 * - every logit of every position equals llama.cpp's bit for bit: a bias is
 *   one F32 add after its projection, as ggml_add does;
 * - and so does every layer-0 stage the biases touch before the first SwiGLU
 *   (Qcur, Kcur, Vcur, kqv_out, attn_out, ffn_inp, ffn_norm, ffn_gate_b,
 *   ffn_up_b), compared by a hash of their float bits, so that a wrong
 *   intermediate cannot hide behind a right argmax.
 * With the scalar reference kernels (they sum in double): logits max |diff|
 * <= SCALAR_TOL (measured 0.040 on logits of spread ~1). A forward that
 * dropped any bias misses by far more (the q/k biases have std 1 and 2).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/arch.h"

#define N_BLOCKS 8
#define BLOCK 16
#define SCALAR_TOL 0.1

typedef struct {
    int32_t n;
    int32_t *tokens; /* [n] */
    float *logits;   /* [n][n_vocab] */
} prompt;

typedef struct {
    char name[32];
    int32_t layer;
    uint32_t n;     /* floats */
    uint64_t fnv;   /* FNV-1a 64 of the floats' bytes */
    float first;
    int seen;       /* set by the tap */
} tap_ref;

typedef struct {
    uint32_t n_vocab, n_prompts;
    prompt *p; /* [n_prompts] */
    uint32_t tap_prompt, n_taps;
    tap_ref taps[16];
} gold;

static uint32_t rd_u32(FILE *f) {
    uint32_t v = 0;
    cr_assert_eq(fread(&v, 4, 1, f), 1u, "golden file truncated");
    return v;
}

static void load_gold(gold *g) {
    const char *src = getenv("LLM_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/runtime/data/llama_bias_golden.bin", src ? src : ".");
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot read %s", path);
    char magic[8];
    cr_assert_eq(fread(magic, 8, 1, f), 1u);
    cr_assert_eq(memcmp(magic, "LLMBIAS1", 8), 0, "%s: bad magic", path);
    cr_assert_eq(rd_u32(f), 1u, "%s: version", path);
    g->n_vocab = rd_u32(f);
    g->n_prompts = rd_u32(f);
    cr_assert(g->n_vocab > 0 && g->n_vocab < 1000000 && g->n_prompts > 0 && g->n_prompts < 100);
    g->p = calloc(g->n_prompts, sizeof *g->p);
    for (uint32_t i = 0; i < g->n_prompts; i++) {
        prompt *p = &g->p[i];
        p->n = (int32_t)rd_u32(f);
        cr_assert(p->n > 0 && p->n <= N_BLOCKS * BLOCK);
        p->tokens = malloc(sizeof(int32_t) * (size_t)p->n);
        p->logits = malloc(sizeof(float) * (size_t)p->n * g->n_vocab);
        cr_assert_eq(fread(p->tokens, 4, (size_t)p->n, f), (size_t)p->n);
        cr_assert_eq(fread(p->logits, 4, (size_t)p->n * g->n_vocab, f), (size_t)p->n * g->n_vocab);
    }
    memset(g->taps, 0, sizeof g->taps);
    g->tap_prompt = rd_u32(f);
    g->n_taps = rd_u32(f);
    cr_assert(g->tap_prompt < g->n_prompts && g->n_taps <= 16);
    for (uint32_t i = 0; i < g->n_taps; i++) {
        tap_ref *t = &g->taps[i];
        const uint32_t len = rd_u32(f);
        cr_assert(len > 0 && len < sizeof t->name);
        cr_assert_eq(fread(t->name, 1, len, f), len);
        t->name[len] = '\0';
        cr_assert_eq(fread(&t->layer, 4, 1, f), 1u);
        t->n = rd_u32(f);
        cr_assert_eq(fread(&t->fnv, 8, 1, f), 1u);
        cr_assert_eq(fread(&t->first, 4, 1, f), 1u);
    }
    fclose(f);
}

static void free_gold(gold *g) {
    for (uint32_t i = 0; i < g->n_prompts; i++) {
        free(g->p[i].tokens);
        free(g->p[i].logits);
    }
    free(g->p);
}

static llm_model_desc *open_desc(void) {
    const char *path = getenv("LLM_BIAS_GGUF");
    cr_assert(path && *path, "LLM_BIAS_GGUF not set: run through CTest (it generates the file)");
    llm_model_desc *d = NULL;
    cr_assert_eq(llm_model_desc_from_gguf(path, &d), LLM_OK, "%s", llm_models_last_error());
    return d;
}

static uint64_t fnv1a64(const unsigned char *p, size_t n) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001B3ull;
    return h;
}

typedef struct {
    gold *g;
    int mismatches;
} tap_ctx;

/* Hashes each stage the golden pins and compares it with llama.cpp's. */
static void tap(void *user, const char *name, int32_t layer, const llm_tensor *t) {
    tap_ctx *c = user;
    for (uint32_t i = 0; i < c->g->n_taps; i++) {
        tap_ref *r = &c->g->taps[i];
        if (r->layer != layer || strcmp(r->name, name) != 0) continue;
        const size_t bytes = llm_tensor_nbytes(t);
        float *buf = malloc(bytes);
        if (!buf || llm_buffer_read(t->buffer, t->offset, buf, bytes) != LLM_OK) {
            c->mismatches++;
            free(buf);
            return;
        }
        r->seen = 1;
        const uint64_t h = fnv1a64((const unsigned char *)buf, bytes);
        if (bytes != (size_t)r->n * 4 || h != r->fnv) {
            c->mismatches++;
            cr_log_error("layer %d %s: ours differs from llama.cpp's (first %.9g vs %.9g, %zu vs %u floats)", layer,
                         name, (double)buf[0], (double)r->first, bytes / 4, r->n);
        }
        free(buf);
    }
}

/* Runs every prompt (one batch each, all logits) and returns the largest
 * |ours - llama.cpp| over all of them; with tc, taps the golden's tap prompt. */
static double max_diff(llm_model_desc *d, gold *g, llm_kernels kernels, char *kname, size_t cap, tap_ctx *tc) {
    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = 2;
    bp.kernels = kernels;
    llm_backend *be = NULL;
    cr_assert_eq(llm_backend_create("cpu", &bp, &be), LLM_OK, "%s", llm_runtime_last_error());
    snprintf(kname, cap, "%s", llm_backend_kernels(be));
    llm_net *net = NULL;
    llm_net_kv *kv = NULL;
    cr_assert_eq(llm_net_create(d, be, NULL, &net), LLM_OK, "%s", llm_net_last_error());
    cr_assert_eq(llm_net_kv_create(net, N_BLOCKS, BLOCK, &kv), LLM_OK, "%s", llm_net_last_error());
    cr_assert_eq(llm_net_hparams(net)->n_vocab, g->n_vocab);
    int32_t table[N_BLOCKS];
    for (int i = 0; i < N_BLOCKS; i++) table[i] = (i * 3 + 5) % N_BLOCKS; /* scrambled pages */
    double worst = 0;
    for (uint32_t i = 0; i < g->n_prompts; i++) {
        const prompt *p = &g->p[i];
        int32_t *pos = malloc(sizeof(int32_t) * (size_t)p->n);
        float *out = malloc(sizeof(float) * (size_t)p->n * g->n_vocab);
        for (int32_t t = 0; t < p->n; t++) pos[t] = t;
        llm_net_seq seq = {p->n, table, N_BLOCKS, NULL, 0};
        llm_net_batch b = llm_net_batch_default();
        b.tokens = p->tokens;
        b.positions = pos;
        b.n_tokens = p->n;
        b.seqs = &seq;
        b.n_seqs = 1;
        b.logits_mode = LLM_LOGITS_ALL;
        b.logits = out;
        if (tc && i == g->tap_prompt) {
            b.tap = tap;
            b.tap_user = tc;
        }
        cr_assert_eq(llm_net_forward(net, kv, &b), LLM_OK, "%s", llm_net_last_error());
        for (size_t k = 0; k < (size_t)p->n * g->n_vocab; k++) {
            const double dd = fabs((double)out[k] - (double)p->logits[k]);
            if (!(dd <= worst)) worst = dd; /* NaN too */
        }
        free(pos);
        free(out);
    }
    llm_net_kv_free(kv);
    llm_net_free(net);
    llm_backend_free(be);
    return worst;
}

Test(llama_bias, matches_llamacpp) {
    gold g;
    load_gold(&g);
    llm_model_desc *d = open_desc();
    /* The file really has the biases the test is about. */
    static const char *const biases[] = {"attn_q.bias", "attn_k.bias", "attn_v.bias", "attn_output.bias",
                                         "ffn_gate.bias", "ffn_up.bias", "ffn_down.bias"};
    for (size_t i = 0; i < sizeof biases / sizeof biases[0]; i++) {
        cr_assert_not_null(llm_model_desc_find_tensorf(d, "blk.1.%s", biases[i]), "no %s", biases[i]);
    }
    char kname[64];
    tap_ctx tc = {&g, 0};
    const double auto_diff = max_diff(d, &g, LLM_KERNELS_AUTO, kname, sizeof kname, &tc);
    if (strncmp(kname, "avx2+fma+f16c", 13) == 0) {
        for (uint32_t i = 0; i < g.n_taps; i++) {
            cr_expect(g.taps[i].seen, "stage %s of layer %d never tapped", g.taps[i].name, g.taps[i].layer);
        }
        cr_expect_eq(tc.mismatches, 0, "%d layer-0 stages differ from llama.cpp's bits", tc.mismatches);
        cr_expect_eq(auto_diff, 0.0, "%s kernels: logits should equal llama.cpp's bit for bit (max|diff| %g)",
                     kname, auto_diff);
    } else {
        cr_log_info("kernels %s: llama.cpp's order is the AVX2 one; logits within the scalar bound", kname);
        cr_expect_leq(auto_diff, SCALAR_TOL, "%s kernels: logits max|diff| %g", kname, auto_diff);
    }
    const double scalar_diff = max_diff(d, &g, LLM_KERNELS_SCALAR, kname, sizeof kname, NULL);
    cr_expect_leq(scalar_diff, SCALAR_TOL, "scalar kernels: logits max|diff| %g", scalar_diff);
    fprintf(stderr, "llama_bias: logits max|diff| vs llama.cpp: auto %g, scalar %g; %u stages bit-identical\n",
            auto_diff, scalar_diff, g.n_taps - (uint32_t)tc.mismatches);
    llm_model_desc_free(d);
    free_gold(&g);
}
