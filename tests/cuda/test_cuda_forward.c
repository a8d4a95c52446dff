/*
 * test_cuda_forward.c -- the whole llama forward (llm_net, libs/models) of the
 * default model on "cuda" against "cpu": a 19-token prompt (prefill, logits
 * for every position) and 8 greedy decode steps through the paged KV cache
 * with a scrambled block table, both sides fed the same tokens.
 *
 * Tolerances (why): the CPU quantizes activations to 8 bits per block before
 * its integer dot products (as llama.cpp's CPU backend does); CUDA keeps them
 * F32 (mat-vec, decode) or rounds them to F16 (cuBLAS, prefill). This small
 * model amplifies such differences: even the CPU's scalar and AVX2 kernels,
 * which differ only in quantizer rounding ties and summation order, end up
 * with logit RMSE up to 0.4 and max |diff| ~1 over 19 + 8 positions
 * (LLM_CUDA_TEST_SELFCHECK=1 prints these figures). We require per position
 * RMSE <= 0.6 and max |diff| <= 3 over the full vocabulary, and the same
 * argmax wherever the CPU's top-2 gap is >= 0.5 (closer calls are printed).
 * A wrong kernel gives RMSE in the units and unrelated argmaxes.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "llama/arch.h"

#define N_BLOCKS 16
#define BLOCK 16
#define N_DECODE 8
#define MAX_ABS_TOL 3.0
#define RMSE_TOL 0.6
#define NEAR_TIE 0.5f

/* "The capital of France is Paris. The capital of Germany is Berlin. The
 * capital of Italy is" in SmolLM2's vocabulary (llm-tokenize). */
static const int32_t k_prompt[] = {504, 3575, 282,   4649, 314, 7042, 30,  378,  3575, 282,
                                   4521, 314, 11452, 30,   378, 3575, 282, 7158, 314};
#define N_PROMPT ((int32_t)(sizeof k_prompt / sizeof k_prompt[0]))

typedef struct {
    llm_backend *be;
    llm_net *net;
    llm_net_kv *kv;
    int32_t table[N_BLOCKS];
} side;

static void side_open(side *s, const llm_model_desc *desc, const char *name, llm_kernels k) {
    memset(s, 0, sizeof(*s));
    llm_backend_params bp = llm_backend_default_params();
    bp.kernels = k;
    bp.n_threads = 2;
    cr_assert_eq(llm_backend_create(name, &bp, &s->be), LLM_OK, "%s", llm_runtime_last_error());
    cr_assert_eq(llm_net_create(desc, s->be, NULL, &s->net), LLM_OK, "%s: %s", name,
                 llm_net_last_error());
    cr_assert_eq(llm_net_kv_create(s->net, N_BLOCKS, BLOCK, &s->kv), LLM_OK, "%s",
                 llm_net_last_error());
    for (int i = 0; i < N_BLOCKS; i++) s->table[i] = (i * 7 + 3) % N_BLOCKS;
}

static void side_close(side *s) {
    llm_net_kv_free(s->kv);
    llm_net_free(s->net);
    llm_backend_free(s->be);
}

static void forward(side *s, const int32_t *tokens, int32_t n, int32_t first, llm_logits_mode mode,
                    float *logits) {
    int32_t pos[64];
    for (int32_t i = 0; i < n; i++) pos[i] = first + i;
    llm_net_seq seq = {n, s->table, N_BLOCKS, NULL, 0};
    llm_net_batch b = llm_net_batch_default();
    b.tokens = tokens;
    b.positions = pos;
    b.n_tokens = n;
    b.seqs = &seq;
    b.n_seqs = 1;
    b.logits_mode = mode;
    b.logits = logits;
    cr_assert_eq(llm_net_forward(s->net, s->kv, &b), LLM_OK, "%s: %s",
                 llm_backend_name(s->be), llm_net_last_error());
}

static int32_t top2(const float *v, int32_t n, float *gap) {
    int32_t a = 0, b = -1;
    for (int32_t i = 1; i < n; i++) {
        if (v[i] > v[a]) {
            b = a;
            a = i;
        } else if (b < 0 || v[i] > v[b]) {
            b = i;
        }
    }
    *gap = v[a] - v[b];
    return a;
}

/* Compares one row; returns 1 on an argmax mismatch outside a near tie. */
static int compare_row(const float *dev, const float *cpu, int32_t nv, const char *what,
                       double *worst_abs, double *worst_rmse) {
    double mx = 0.0, se = 0.0;
    for (int32_t i = 0; i < nv; i++) {
        double d = (double)dev[i] - (double)cpu[i];
        cr_assert(isfinite(dev[i]), "%s: logit %d is %g", what, i, (double)dev[i]);
        mx = fabs(d) > mx ? fabs(d) : mx;
        se += d * d;
    }
    double rmse = sqrt(se / nv);
    *worst_abs = mx > *worst_abs ? mx : *worst_abs;
    *worst_rmse = rmse > *worst_rmse ? rmse : *worst_rmse;
    cr_expect_leq(mx, MAX_ABS_TOL, "%s: max |diff| %g", what, mx);
    cr_expect_leq(rmse, RMSE_TOL, "%s: rmse %g", what, rmse);
    float gd, gc;
    int32_t ad = top2(dev, nv, &gd), ac = top2(cpu, nv, &gc);
    if (ad != ac) {
        fprintf(stderr, "  %s: argmax %d (cuda) vs %d (cpu), cpu gap %.4f%s\n", what, ad, ac,
                (double)gc, gc < NEAR_TIE ? " (near tie)" : " MISMATCH");
        return gc >= NEAR_TIE;
    }
    return 0;
}

/* Skips without a device or model; else loads the model and opens both sides. */
static llm_model_desc *open_both(side *d, side *c) {
    int selfcheck = getenv("LLM_CUDA_TEST_SELFCHECK") && strcmp(getenv("LLM_CUDA_TEST_SELFCHECK"), "1") == 0;
    char msg[256];
    if (!selfcheck && llm__cuda_device_count(msg, sizeof msg) <= 0) {
        fprintf(stderr, "no CUDA device: %s\n", msg); /* for CTest's skip regex */
        cr_skip_test("no CUDA device: %s", msg);
    }
    const char *path = getenv("LLM_DEFAULT_MODEL");
    if (!path || !*path) cr_skip_test("LLM_DEFAULT_MODEL not set");
    FILE *probe = fopen(path, "rb");
    if (!probe) cr_skip_test("default model %s not present (run scripts/setup)", path);
    fclose(probe);
    llm_model_desc *desc = NULL;
    cr_assert_eq(llm_model_desc_from_gguf(path, &desc), LLM_OK, "%s", llm_models_last_error());
    side_open(d, desc, selfcheck ? "cpu" : "cuda", selfcheck ? LLM_KERNELS_SCALAR : LLM_KERNELS_AUTO);
    side_open(c, desc, "cpu", LLM_KERNELS_AUTO);
    return desc;
}

Test(cuda_forward, default_model_cuda_vs_cpu, .timeout = 600) {
    side d, c;
    llm_model_desc *desc = open_both(&d, &c);
    const int32_t nv = (int32_t)llm_net_hparams(c.net)->n_vocab;
    float *ld = malloc(sizeof(float) * (size_t)nv * N_PROMPT);
    float *lc = malloc(sizeof(float) * (size_t)nv * N_PROMPT);
    cr_assert(ld && lc);

    forward(&d, k_prompt, N_PROMPT, 0, LLM_LOGITS_ALL, ld);
    forward(&c, k_prompt, N_PROMPT, 0, LLM_LOGITS_ALL, lc);
    int bad = 0;
    double wa = 0.0, wr = 0.0;
    char what[64];
    for (int32_t t = 0; t < N_PROMPT; t++) {
        snprintf(what, sizeof what, "prefill pos %d", t);
        bad += compare_row(ld + (size_t)t * nv, lc + (size_t)t * nv, nv, what, &wa, &wr);
    }
    fprintf(stderr, "prefill (%d positions): max |diff| %.4f, worst rmse %.5f\n", N_PROMPT, wa, wr);

    /* Greedy decode, both sides fed the CPU's choice so they stay aligned. */
    float gap;
    int32_t tok = top2(lc + (size_t)(N_PROMPT - 1) * nv, nv, &gap);
    wa = wr = 0.0;
    for (int32_t step = 0; step < N_DECODE; step++) {
        forward(&d, &tok, 1, N_PROMPT + step, LLM_LOGITS_LAST, ld);
        forward(&c, &tok, 1, N_PROMPT + step, LLM_LOGITS_LAST, lc);
        snprintf(what, sizeof what, "decode step %d", step);
        bad += compare_row(ld, lc, nv, what, &wa, &wr);
        tok = top2(lc, nv, &gap);
    }
    fprintf(stderr, "decode (%d steps): max |diff| %.4f, worst rmse %.5f\n", N_DECODE, wa, wr);
    cr_expect_eq(bad, 0, "%d argmax mismatches outside near ties", bad);

    free(ld);
    free(lc);
    side_close(&d);
    side_close(&c);
    llm_model_desc_free(desc);
}

/* Two sequences in one batch, each through its own block table, logits of
 * each sequence's last token: exercises per-sequence attention and the
 * last-row gather (get_rows on activations). */
Test(cuda_forward, two_sequences_in_one_batch, .timeout = 600) {
    side d, c;
    llm_model_desc *desc = open_both(&d, &c);
    const int32_t nv = (int32_t)llm_net_hparams(c.net)->n_vocab;
    const int32_t na = N_PROMPT, nb = 11;
    int32_t tokens[64], pos[64], tab_b[N_BLOCKS];
    for (int32_t i = 0; i < na; i++) {
        tokens[i] = k_prompt[i];
        pos[i] = i;
    }
    for (int32_t i = 0; i < nb; i++) {
        tokens[na + i] = k_prompt[N_PROMPT - 1 - i]; /* a different sequence */
        pos[na + i] = i;
    }
    /* Sequence A uses blocks 3 and 10 of side.table; B gets 5 and 12. */
    for (int i = 0; i < N_BLOCKS; i++) tab_b[i] = (i * 7 + 5) % N_BLOCKS;
    float *ld = malloc(sizeof(float) * (size_t)nv * 2), *lc = malloc(sizeof(float) * (size_t)nv * 2);
    cr_assert(ld && lc);
    side *sides[2] = {&d, &c};
    for (int k = 0; k < 2; k++) {
        llm_net_seq seqs[2] = {{na, sides[k]->table, N_BLOCKS, NULL, 0}, {nb, tab_b, N_BLOCKS, NULL, 0}};
        llm_net_batch b = llm_net_batch_default();
        b.tokens = tokens;
        b.positions = pos;
        b.n_tokens = na + nb;
        b.seqs = seqs;
        b.n_seqs = 2;
        b.logits_mode = LLM_LOGITS_LAST;
        b.logits = k == 0 ? ld : lc;
        cr_assert_eq(llm_net_forward(sides[k]->net, sides[k]->kv, &b), LLM_OK, "%s",
                     llm_net_last_error());
    }
    double wa = 0.0, wr = 0.0;
    int bad = compare_row(ld, lc, nv, "batch seq A", &wa, &wr);
    bad += compare_row(ld + nv, lc + nv, nv, "batch seq B", &wa, &wr);
    fprintf(stderr, "two sequences: max |diff| %.4f, worst rmse %.5f\n", wa, wr);
    cr_expect_eq(bad, 0, "%d argmax mismatches outside near ties", bad);
    free(ld);
    free(lc);
    side_close(&d);
    side_close(&c);
    llm_model_desc_free(desc);
}
