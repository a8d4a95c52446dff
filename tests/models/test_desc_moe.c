/*
 * test_desc_moe.c -- a tiny qwen3moe GGUF (written byte by byte) through the
 * descriptor and the net: the expert keys and the 3-D expert tensors are
 * read and checked, and every bad file is refused with a message that names
 * what is wrong (expert counts, top-k above the expert count, a missing or
 * misshapen expert tensor, an expert tensor of one layer too many, expert
 * groups); the good file builds a net and runs a forward on the CPU.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf_writer.h"
#include "llama/arch.h"
#include "llama/models.h"
#include "llama/runtime.h"

enum { E = 32, NH = 2, NKV = 1, HD = 16, FE = 32, NX = 4, NU = 2, NV = 8 };

typedef struct tspec {
    const char *name;
    int64_t ne[3]; /* ne[1] = 0: 1-D; ne[2] = 0: 2-D */
} tspec;

static const tspec k_moe[] = {
    {"token_embd.weight", {E, NV, 0}},
    {"output_norm.weight", {E, 0, 0}},
    {"blk.0.attn_norm.weight", {E, 0, 0}},
    {"blk.0.attn_q.weight", {E, NH * HD, 0}},
    {"blk.0.attn_k.weight", {E, NKV * HD, 0}},
    {"blk.0.attn_v.weight", {E, NKV * HD, 0}},
    {"blk.0.attn_q_norm.weight", {HD, 0, 0}},
    {"blk.0.attn_k_norm.weight", {HD, 0, 0}},
    {"blk.0.attn_output.weight", {NH * HD, E, 0}},
    {"blk.0.ffn_norm.weight", {E, 0, 0}},
    {"blk.0.ffn_gate_inp.weight", {E, NX, 0}},
    {"blk.0.ffn_gate_exps.weight", {E, FE, NX}},
    {"blk.0.ffn_up_exps.weight", {E, FE, NX}},
    {"blk.0.ffn_down_exps.weight", {FE, E, NX}},
};
#define N_MOE (sizeof k_moe / sizeof k_moe[0])

/* What to change in the file. */
typedef struct tweak {
    uint32_t n_expert, n_used; /* the keys' values */
    int skip;                  /* index of a tensor left out, or -1 */
    int reshape;               /* index of a tensor whose ne[2] becomes NX + 1, or -1 */
    const char *extra;         /* an extra F32 [E] tensor, or NULL */
    int groups;                /* > 0: qwen3moe.expert_group_count */
} tweak;

static tweak defaults(void) { return (tweak){NX, NU, -1, -1, NULL, 0}; }

/* All F32, norms 1, every matrix a small pattern (so the forward computes
 * something finite and not all-equal). */
static void moe_gguf(gw *w, const tweak *t) {
    gw_init(w);
    size_t nt = 0;
    for (size_t i = 0; i < N_MOE; i++) nt += (int)i != t->skip;
    nt += t->extra ? 1 : 0;
    gw_header(w, 3, nt, 11 + (t->groups ? 1 : 0));
    gw_kv_str(w, "general.architecture", "qwen3moe");
    gw_kv_u32(w, "qwen3moe.embedding_length", E);
    gw_kv_u32(w, "qwen3moe.block_count", 1);
    gw_kv_u32(w, "qwen3moe.attention.head_count", NH);
    gw_kv_u32(w, "qwen3moe.attention.head_count_kv", NKV);
    gw_kv_u32(w, "qwen3moe.attention.key_length", HD);
    gw_kv_u32(w, "qwen3moe.attention.value_length", HD);
    gw_kv_u32(w, "qwen3moe.feed_forward_length", FE * NU);
    gw_kv_u32(w, "qwen3moe.expert_count", t->n_expert);
    gw_kv_u32(w, "qwen3moe.expert_used_count", t->n_used);
    gw_kv_u32(w, "qwen3moe.expert_feed_forward_length", FE);
    if (t->groups) gw_kv_u32(w, "qwen3moe.expert_group_count", (uint32_t)t->groups);
    uint64_t off = 0, sizes[N_MOE + 1];
    int64_t nes[N_MOE + 1][3];
    size_t k = 0;
    for (size_t i = 0; i < N_MOE + 1; i++) {
        if (i == N_MOE && !t->extra) break;
        if ((int)i == t->skip) continue;
        const tspec xt = {t->extra, {E, 0, 0}};
        const tspec *s = i < N_MOE ? &k_moe[i] : &xt;
        int64_t ne[3] = {s->ne[0], s->ne[1], s->ne[2]};
        if ((int)i == t->reshape) ne[2] = NX + 1;
        const uint32_t nd = ne[2] ? 3 : ne[1] ? 2 : 1;
        gw_tensor(w, s->name, nd, ne, 0, off);
        memcpy(nes[k], ne, sizeof ne);
        sizes[k] = (uint64_t)ne[0] * (uint64_t)(ne[1] ? ne[1] : 1) * (uint64_t)(ne[2] ? ne[2] : 1) * 4;
        off += (sizes[k] + 31) / 32 * 32;
        k++;
    }
    gw_pad(w, 32);
    for (size_t i = 0; i < k; i++) {
        const int vec = nes[i][1] == 0;
        for (uint64_t j = 0; j < sizes[i] / 4; j++)
            gw_f32(w, vec ? 1.0f : (float)((int)((j * 7 + i * 3) % 11) - 5) * 0.05f);
        gw_pad(w, 32);
    }
}

static llm_status desc_of(const tweak *t, llm_model_desc **d) {
    gw w;
    moe_gguf(&w, t);
    char path[] = "/tmp/llm_test_moe_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(gw_save(&w, path), 0);
    gw_free(&w);
    *d = NULL;
    llm_status st = llm_model_desc_from_gguf(path, d);
    unlink(path);
    return st;
}

static void expect_error(const tweak *t, llm_status want, const char *needle) {
    llm_model_desc *d = NULL;
    const llm_status st = desc_of(t, &d);
    cr_expect_eq(st, want, "status %d, want %d: %s", (int)st, (int)want, llm_models_last_error());
    cr_expect(strstr(llm_models_last_error(), needle) != NULL, "message '%s' should name '%s'",
              llm_models_last_error(), needle);
    cr_expect_null(d);
    llm_model_desc_free(d);
}

Test(desc_moe, good_file_hparams_net_and_forward) {
    const tweak t = defaults();
    llm_model_desc *d = NULL;
    cr_assert_eq(desc_of(&t, &d), LLM_OK, "%s", llm_models_last_error());
    const llm_model_hparams *hp = llm_model_desc_hparams(d);
    cr_expect(hp->n_expert == NX && hp->n_expert_used == NU && hp->n_ff_exp == FE && hp->head_dim == HD);
    const llm_model_tensor *g = llm_model_desc_find_tensor(d, "blk.0.ffn_gate_exps.weight");
    cr_assert_not_null(g);
    cr_expect(g->ne[0] == E && g->ne[1] == FE && g->ne[2] == NX);

    llm_backend *be = NULL;
    cr_assert_eq(llm_backend_create("cpu", NULL, &be), LLM_OK);
    llm_net_params np = llm_net_default_params();
    np.max_batch = 8;
    llm_net *net = NULL;
    cr_assert_eq(llm_net_create(d, be, &np, &net), LLM_OK, "%s", llm_net_last_error());
    llm_net_kv *kv = NULL;
    cr_assert_eq(llm_net_kv_create(net, 4, 16, &kv), LLM_OK, "%s", llm_net_last_error());
    int32_t table[4] = {0, 1, 2, 3}, tokens[5] = {1, 2, 3, 4, 5}, pos[5] = {0, 1, 2, 3, 4};
    float logits[5 * NV];
    /* Two sequences of one batch, logits of their last rows (the last layer's
     * experts then run for those rows only). */
    llm_net_seq seqs[2] = {{3, table, 2, NULL, 0}, {2, table + 2, 2, NULL, 0}};
    int32_t pos2[5] = {0, 1, 2, 0, 1};
    llm_net_batch b = llm_net_batch_default();
    b.tokens = tokens;
    b.positions = pos2;
    b.n_tokens = 5;
    b.seqs = seqs;
    b.n_seqs = 2;
    b.logits_mode = LLM_LOGITS_LAST;
    b.logits = logits;
    cr_assert_eq(llm_net_forward(net, kv, &b), LLM_OK, "%s", llm_net_last_error());
    float last[2 * NV];
    memcpy(last, logits, sizeof last);
    /* The same rows with every row's logits: the sequences' last rows agree
     * to float rounding (the router multiplies a different row count). */
    b.logits_mode = LLM_LOGITS_ALL;
    cr_assert_eq(llm_net_forward(net, kv, &b), LLM_OK, "%s", llm_net_last_error());
    for (int v = 0; v < NV; v++) {
        cr_expect(isfinite(last[v]) && fabsf(last[v] - logits[2 * NV + v]) <= 1e-4f, "seq 0 logit %d: %g vs %g", v,
                  (double)last[v], (double)logits[2 * NV + v]);
        cr_expect(fabsf(last[NV + v] - logits[4 * NV + v]) <= 1e-4f, "seq 1 logit %d: %g vs %g", v,
                  (double)last[NV + v], (double)logits[4 * NV + v]);
    }
    /* One sequence alone. */
    llm_net_seq one = {5, table, 4, NULL, 0};
    b.seqs = &one;
    b.n_seqs = 1;
    b.positions = pos;
    b.logits_mode = LLM_LOGITS_NONE;
    cr_assert_eq(llm_net_forward(net, kv, &b), LLM_OK, "%s", llm_net_last_error());
    llm_net_kv_free(kv);
    llm_net_free(net);
    llm_backend_free(be);
    llm_model_desc_free(d);
}

Test(desc_moe, rejections_name_the_problem) {
    tweak t = defaults();
    t.n_used = NX + 1; /* top-k above the expert count */
    expect_error(&t, LLM_ERR_BAD_FORMAT, "5 used per token");
    t = defaults();
    t.n_expert = 0;
    expect_error(&t, LLM_ERR_BAD_FORMAT, "0 experts");
    t = defaults();
    t.n_used = 0;
    expect_error(&t, LLM_ERR_BAD_FORMAT, "0 used");
    t = defaults();
    t.n_expert = 5000;
    expect_error(&t, LLM_ERR_BAD_FORMAT, "5000 experts");
    t = defaults();
    t.skip = 12; /* ffn_up_exps */
    expect_error(&t, LLM_ERR_NOT_FOUND, "blk.0.ffn_up_exps.weight");
    t = defaults();
    t.skip = 10; /* the router */
    expect_error(&t, LLM_ERR_NOT_FOUND, "blk.0.ffn_gate_inp.weight");
    t = defaults();
    t.reshape = 13; /* ffn_down_exps with one expert too many */
    expect_error(&t, LLM_ERR_BAD_FORMAT, "blk.0.ffn_down_exps.weight");
    t = defaults();
    t.extra = "blk.0.ffn_gate_shexp.weight"; /* a shared expert: not this architecture */
    expect_error(&t, LLM_ERR_UNSUPPORTED, "blk.0.ffn_gate_shexp.weight");
    t = defaults();
    t.groups = 2;
    expect_error(&t, LLM_ERR_UNSUPPORTED, "expert groups");
}
