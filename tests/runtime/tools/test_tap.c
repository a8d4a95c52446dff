/*
 * test_tap.c -- the debug tap of llm_net_batch (llama/arch.h) on the default
 * model: every layer reports its 11 stages in forward order with the
 * documented shapes; the residual taps are consistent with each other bit for
 * bit (ffn_inp = previous l_out + attn_out, l_out = ffn_inp + ffn_out), which
 * a tap pointing at the wrong buffer or taken at the wrong time breaks;
 * result_norm is the last row (LAST) or the hidden states (hidden set); and a
 * tapped forward gives the same logits, bit for bit, as an untapped one.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/arch.h"

#define N_BLOCKS 8
#define BLOCK 16
#define N_TOK 6

static const char *const STAGES[] = {"attn_norm", "Qcur",    "Kcur",     "Vcur",
                                     "kqv_out",   "attn_out", "ffn_inp", "ffn_norm",
                                     "ffn_swiglu", "ffn_out", "l_out"};
#define N_STAGES ((int)(sizeof(STAGES) / sizeof(STAGES[0])))

typedef struct rec {
    const llm_model_hparams *hp;
    int64_t n;           /* tokens of the batch */
    int calls, bad_order, bad_shape, bad_sum, n_result;
    int64_t result_rows;
    float *prev_out;     /* [n][E] residual entering the layer (l_out of l-1) */
    float *attn_out, *ffn_inp, *ffn_out, *cur; /* [n][E] or bigger scratch */
    float *result;       /* [n][E] */
    int started;         /* prev_out holds a layer's output */
} rec;

static int64_t want_ne0(const rec *r, int s) {
    const llm_model_hparams *hp = r->hp;
    if (s >= 1 && s <= 3) return hp->head_dim;
    if (s == 4) return (int64_t)hp->n_head * hp->head_dim;
    if (s == 8) return hp->n_ff;
    return hp->n_embd;
}

static void tap(void *user, const char *name, int32_t layer, const llm_tensor *t) {
    rec *r = user;
    const int64_t E = r->hp->n_embd;
    if (layer < 0) {
        if (strcmp(name, "result_norm") != 0 || t->ne[0] != E) r->bad_shape++;
        r->n_result++;
        r->result_rows = t->ne[1];
        cr_assert_eq(llm_buffer_read(t->buffer, t->offset, r->result, llm_tensor_nbytes(t)), LLM_OK);
        return;
    }
    int s = r->calls % N_STAGES;
    if ((int64_t)(r->calls / N_STAGES) != layer || strcmp(name, STAGES[s]) != 0) r->bad_order++;
    r->calls++;
    int64_t ne0 = want_ne0(r, s);
    const int per_head = s >= 1 && s <= 3; /* [n][heads][head_dim] */
    int64_t heads = s == 1 ? r->hp->n_head : r->hp->n_head_kv;
    int64_t rows = per_head ? t->ne[2] : t->ne[1];
    if (t->dtype != LLM_DTYPE_F32 || t->ne[0] != ne0 || rows != r->n || t->ne[3] != 1 ||
        (per_head ? t->ne[1] != heads : t->ne[2] != 1) || t->nb[0] != sizeof(float)) {
        r->bad_shape++;
        return;
    }
    cr_assert_eq(llm_buffer_read(t->buffer, t->offset, r->cur, llm_tensor_nbytes(t)), LLM_OK);
    size_t nE = (size_t)(r->n * E);
    if (!strcmp(name, "attn_out")) memcpy(r->attn_out, r->cur, nE * sizeof(float));
    if (!strcmp(name, "ffn_out")) memcpy(r->ffn_out, r->cur, nE * sizeof(float));
    if (!strcmp(name, "ffn_inp")) {
        if (r->started) {
            for (size_t i = 0; i < nE; i++) {
                if (r->cur[i] != r->prev_out[i] + r->attn_out[i]) {
                    r->bad_sum++;
                    break;
                }
            }
        }
        memcpy(r->ffn_inp, r->cur, nE * sizeof(float));
    }
    if (!strcmp(name, "l_out")) {
        for (size_t i = 0; i < nE; i++) {
            if (r->cur[i] != r->ffn_inp[i] + r->ffn_out[i]) {
                r->bad_sum++;
                break;
            }
        }
        memcpy(r->prev_out, r->cur, nE * sizeof(float));
        r->started = 1;
    }
}

typedef struct fx {
    llm_model_desc *desc;
    llm_backend *be;
    llm_net *net;
    llm_net_kv *kv;
    int32_t table[N_BLOCKS];
    int32_t n_vocab;
} fx;

static void fx_open(fx *f) {
    memset(f, 0, sizeof(*f));
    const char *path = getenv("LLM_DEFAULT_MODEL");
    if (!path || !*path) cr_skip_test("LLM_DEFAULT_MODEL not set");
    FILE *probe = fopen(path, "rb");
    if (!probe) cr_skip_test("default model %s not present (run scripts/setup)", path);
    fclose(probe);
    cr_assert_eq(llm_model_desc_from_gguf(path, &f->desc), LLM_OK, "%s", llm_models_last_error());
    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = 2;
    cr_assert_eq(llm_backend_create("cpu", &bp, &f->be), LLM_OK);
    cr_assert_eq(llm_net_create(f->desc, f->be, NULL, &f->net), LLM_OK, "%s", llm_net_last_error());
    cr_assert_eq(llm_net_kv_create(f->net, N_BLOCKS, BLOCK, &f->kv), LLM_OK);
    for (int i = 0; i < N_BLOCKS; i++) f->table[i] = N_BLOCKS - 1 - i;
    f->n_vocab = (int32_t)llm_net_hparams(f->net)->n_vocab;
}

static void fx_close(fx *f) {
    llm_net_kv_free(f->kv);
    llm_net_free(f->net);
    llm_backend_free(f->be);
    llm_model_desc_free(f->desc);
}

static void rec_init(rec *r, const fx *f, int64_t n) {
    memset(r, 0, sizeof(*r));
    r->hp = llm_net_hparams(f->net);
    r->n = n;
    size_t big = (size_t)n * (size_t)(r->hp->n_ff > r->hp->n_embd ? r->hp->n_ff : r->hp->n_embd);
    size_t q = (size_t)n * r->hp->n_head * r->hp->head_dim;
    if (q > big) big = q;
    r->cur = malloc(big * sizeof(float));
    r->prev_out = malloc(sizeof(float) * (size_t)n * r->hp->n_embd);
    r->attn_out = malloc(sizeof(float) * (size_t)n * r->hp->n_embd);
    r->ffn_inp = malloc(sizeof(float) * (size_t)n * r->hp->n_embd);
    r->ffn_out = malloc(sizeof(float) * (size_t)n * r->hp->n_embd);
    r->result = malloc(sizeof(float) * (size_t)n * r->hp->n_embd);
    cr_assert(r->cur && r->prev_out && r->attn_out && r->ffn_inp && r->ffn_out && r->result);
}

static void rec_free(rec *r) {
    free(r->cur);
    free(r->prev_out);
    free(r->attn_out);
    free(r->ffn_inp);
    free(r->ffn_out);
    free(r->result);
}

static void check_rec(const rec *r, const char *what) {
    cr_expect_eq(r->calls, (int)r->hp->n_layer * N_STAGES, "%s: %d stage calls", what, r->calls);
    cr_expect_eq(r->bad_order, 0, "%s: stages out of order", what);
    cr_expect_eq(r->bad_shape, 0, "%s: bad shapes", what);
    cr_expect_eq(r->bad_sum, 0, "%s: residual taps inconsistent", what);
    cr_expect_eq(r->n_result, 1, "%s: result_norm reported %d times", what, r->n_result);
}

Test(tap, stages_shapes_residuals_and_no_effect_on_logits) {
    fx f;
    fx_open(&f);
    const int32_t toks[N_TOK] = {504, 3575, 282, 4649, 314, 9690};
    int32_t pos[N_TOK];
    for (int i = 0; i < N_TOK; i++) pos[i] = i;
    llm_net_seq seq = {N_TOK, f.table, N_BLOCKS, NULL, 0};
    float *plain = malloc(sizeof(float) * (size_t)f.n_vocab);
    float *tapped = malloc(sizeof(float) * (size_t)f.n_vocab);
    cr_assert(plain && tapped);

    llm_net_batch b = llm_net_batch_default();
    cr_assert_null(b.tap);
    b.tokens = toks;
    b.positions = pos;
    b.n_tokens = N_TOK;
    b.seqs = &seq;
    b.n_seqs = 1;
    b.logits = plain;
    cr_assert_eq(llm_net_forward(f.net, f.kv, &b), LLM_OK, "%s", llm_net_last_error());

    rec r;
    rec_init(&r, &f, N_TOK);
    b.logits = tapped;
    b.tap = tap;
    b.tap_user = &r;
    cr_assert_eq(llm_net_forward(f.net, f.kv, &b), LLM_OK, "%s", llm_net_last_error());
    check_rec(&r, "prefill LAST");
    cr_expect_eq(r.result_rows, 1, "LAST: result_norm has %lld rows", (long long)r.result_rows);
    cr_expect_eq(memcmp(plain, tapped, sizeof(float) * (size_t)f.n_vocab), 0,
                 "the tap changed the logits");
    rec_free(&r);

    /* With hidden states: result_norm is every row, equal to what hidden gets. */
    const int64_t E = llm_net_hparams(f.net)->n_embd;
    float *hidden = malloc(sizeof(float) * (size_t)(N_TOK * E));
    cr_assert(hidden);
    rec_init(&r, &f, N_TOK);
    b.tap_user = &r;
    b.hidden = hidden;
    cr_assert_eq(llm_net_forward(f.net, f.kv, &b), LLM_OK, "%s", llm_net_last_error());
    check_rec(&r, "prefill hidden");
    cr_expect_eq(r.result_rows, N_TOK);
    cr_expect_eq(memcmp(r.result, hidden, sizeof(float) * (size_t)(N_TOK * E)), 0);
    cr_expect_eq(memcmp(plain, tapped, sizeof(float) * (size_t)f.n_vocab), 0);
    rec_free(&r);
    free(hidden);

    /* A one-token decode step at position N_TOK. */
    rec_init(&r, &f, 1);
    const int32_t one = 198, p1 = N_TOK;
    llm_net_seq s1 = {1, f.table, N_BLOCKS, NULL, 0};
    llm_net_batch d = llm_net_batch_default();
    d.tokens = &one;
    d.positions = &p1;
    d.n_tokens = 1;
    d.seqs = &s1;
    d.n_seqs = 1;
    d.logits = tapped;
    d.tap = tap;
    d.tap_user = &r;
    cr_assert_eq(llm_net_forward(f.net, f.kv, &d), LLM_OK, "%s", llm_net_last_error());
    check_rec(&r, "decode");
    rec_free(&r);

    free(plain);
    free(tapped);
    fx_close(&f);
}
