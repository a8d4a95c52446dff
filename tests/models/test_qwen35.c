/* qwen35 (hybrid Gated DeltaNet / gated attention) on a tiny GGUF written
 * here: what a bad file gets (inconsistent recurrent layout, wrong-shaped or
 * misplaced tensors: a clear error naming the problem, never a crash), and
 * the forward's kernels: the scalar reference and the AVX2 kernels agree
 * within float rounding (the delta rule's dots sum in double in the scalar
 * reference, in llama.cpp's 8-lane order in AVX2). */
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

/* 2 layers: 0 recurrent, 1 full attention (full_attention_interval 2). */
enum { E = 32, NH = 2, NKV = 1, HD = 16, FF = 64, NV = 16, DS = 8, NK = 2, NVH = 4, KC = 4 };
enum { VI = DS * NVH, CH = 2 * DS * NK + VI };

typedef struct tspec {
    const char *name;
    int64_t ne0, ne1; /* ne1 = 0: 1-D */
    int norm;         /* 1: values around 1 */
} tspec;

static const tspec k_t[] = {
    {"token_embd.weight", E, NV, 0},          {"output_norm.weight", E, 0, 1},
    {"blk.0.attn_norm.weight", E, 0, 1},      {"blk.0.attn_qkv.weight", E, CH, 0},
    {"blk.0.attn_gate.weight", E, VI, 0},     {"blk.0.ssm_conv1d.weight", KC, CH, 0},
    {"blk.0.ssm_dt.bias", NVH, 0, 0},         {"blk.0.ssm_a", NVH, 0, 2},
    {"blk.0.ssm_beta.weight", E, NVH, 0},     {"blk.0.ssm_alpha.weight", E, NVH, 0},
    {"blk.0.ssm_norm.weight", DS, 0, 1},      {"blk.0.ssm_out.weight", VI, E, 0},
    {"blk.0.post_attention_norm.weight", E, 0, 1}, {"blk.0.ffn_gate.weight", E, FF, 0},
    {"blk.0.ffn_up.weight", E, FF, 0},        {"blk.0.ffn_down.weight", FF, E, 0},
    {"blk.1.attn_norm.weight", E, 0, 1},      {"blk.1.attn_q.weight", E, 2 * NH * HD, 0},
    {"blk.1.attn_k.weight", E, NKV * HD, 0},  {"blk.1.attn_v.weight", E, NKV * HD, 0},
    {"blk.1.attn_q_norm.weight", HD, 0, 1},   {"blk.1.attn_k_norm.weight", HD, 0, 1},
    {"blk.1.attn_output.weight", NH * HD, E, 0}, {"blk.1.post_attention_norm.weight", E, 0, 1},
    {"blk.1.ffn_gate.weight", E, FF, 0},      {"blk.1.ffn_up.weight", E, FF, 0},
    {"blk.1.ffn_down.weight", FF, E, 0},
};
#define N_T (sizeof k_t / sizeof k_t[0])

/* Tweaks of one file. */
typedef struct tweak {
    uint32_t conv_kernel, inner, groups; /* 0: the good value */
    int which;                           /* tensor index to rename / reshape, -1 none */
    const char *rename;
    int64_t ne1;                         /* != 0: that tensor's ne1 */
    const char *extra;                   /* an extra F32 [E] tensor */
} tweak;

static uint32_t rng = 12345;
static float frand(void) { /* [-1, 1) */
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / 8388608.0f - 1.0f;
}

static void write_model(gw *w, const tweak *tw) {
    gw_init(w);
    const size_t nt = N_T + (tw->extra ? 1 : 0);
    gw_header(w, 3, nt, 14);
    gw_kv_str(w, "general.architecture", "qwen35");
    gw_kv_u32(w, "qwen35.embedding_length", E);
    gw_kv_u32(w, "qwen35.block_count", 2);
    gw_kv_u32(w, "qwen35.attention.head_count", NH);
    gw_kv_u32(w, "qwen35.attention.head_count_kv", NKV);
    gw_kv_u32(w, "qwen35.attention.key_length", HD);
    gw_kv_u32(w, "qwen35.rope.dimension_count", 8);
    gw_kv_u32(w, "qwen35.feed_forward_length", FF);
    gw_kv_u32(w, "qwen35.ssm.conv_kernel", tw->conv_kernel ? tw->conv_kernel : KC);
    gw_kv_u32(w, "qwen35.ssm.inner_size", tw->inner ? tw->inner : VI);
    gw_kv_u32(w, "qwen35.ssm.state_size", DS);
    gw_kv_u32(w, "qwen35.ssm.time_step_rank", NVH);
    gw_kv_u32(w, "qwen35.ssm.group_count", tw->groups ? tw->groups : NK);
    gw_kv_u32(w, "qwen35.full_attention_interval", 2);
    uint64_t off = 0, sizes[N_T + 1];
    for (size_t i = 0; i < nt; i++) {
        const tspec xt = {tw->extra, E, 0, 0};
        const tspec *t = i < N_T ? &k_t[i] : &xt;
        int64_t ne[2] = {t->ne0, t->ne1};
        if ((int)i == tw->which && tw->ne1) ne[1] = tw->ne1;
        const char *name = (int)i == tw->which && tw->rename ? tw->rename : t->name;
        gw_tensor(w, name, ne[1] ? 2 : 1, ne, 0, off);
        sizes[i] = (uint64_t)ne[0] * (uint64_t)(ne[1] ? ne[1] : 1);
        off += (sizes[i] * 4 + 31) / 32 * 32;
    }
    gw_pad(w, 32);
    rng = 12345;
    for (size_t i = 0; i < nt; i++) {
        const int kind = i < N_T ? k_t[i].norm : 0;
        const float scale = i < N_T && k_t[i].ne1 ? 1.0f / sqrtf((float)k_t[i].ne0) : 0.3f;
        for (uint64_t k = 0; k < sizes[i]; k++) {
            float v = kind == 1 ? 1.0f + 0.1f * frand() : kind == 2 ? -1.0f - 4.0f * (frand() + 1.0f) : scale * frand();
            if (i < N_T && !strcmp(k_t[i].name, "blk.0.ssm_dt.bias")) v = -4.0f + frand();
            gw_f32(w, v);
        }
        gw_pad(w, 32);
    }
}

static char g_path[64];

static llm_status load(const tweak *tw, llm_model_desc **d) {
    gw w;
    write_model(&w, tw);
    snprintf(g_path, sizeof g_path, "/tmp/llm_test_qwen35_XXXXXX");
    int fd = mkstemp(g_path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(gw_save(&w, g_path), 0);
    gw_free(&w);
    *d = NULL;
    llm_status st = llm_model_desc_from_gguf(g_path, d);
    unlink(g_path);
    return st;
}

static const tweak GOOD = {0, 0, 0, -1, NULL, 0, NULL};

static void expect_desc_error(tweak tw, llm_status want, const char *needle) {
    llm_model_desc *d;
    llm_status st = load(&tw, &d);
    cr_expect_eq(st, want, "status %d, want %d (%s)", (int)st, (int)want, llm_models_last_error());
    cr_expect(strstr(llm_models_last_error(), needle) != NULL, "message '%s' lacks '%s'", llm_models_last_error(),
              needle);
    llm_model_desc_free(d);
}

static void expect_net_error(tweak tw, const char *needle) {
    llm_model_desc *d;
    cr_assert_eq(load(&tw, &d), LLM_OK, "%s", llm_models_last_error());
    llm_backend *be;
    cr_assert_eq(llm_backend_create("cpu", NULL, &be), LLM_OK);
    llm_net *net = NULL;
    cr_expect_eq(llm_net_create(d, be, NULL, &net), LLM_ERR_BAD_FORMAT);
    cr_expect(strstr(llm_net_last_error(), needle) != NULL, "message '%s' lacks '%s'", llm_net_last_error(), needle);
    llm_net_free(net);
    llm_backend_free(be);
    llm_model_desc_free(d);
}

Test(qwen35, bad_files_are_refused) {
    llm_model_desc *d;
    tweak tw = GOOD;
    cr_assert_eq(load(&tw, &d), LLM_OK, "%s", llm_models_last_error());
    const llm_model_hparams *hp = llm_model_desc_hparams(d);
    cr_expect(hp->ssm_n_layer == 1 && hp->ssm_layers[0] == 1 && hp->ssm_d_conv == KC && hp->n_rot == 8);
    llm_model_desc_free(d);

    tw = GOOD, tw.conv_kernel = 1;
    expect_desc_error(tw, LLM_ERR_BAD_FORMAT, "conv kernel 1");
    tw = GOOD, tw.inner = VI + 8;
    expect_desc_error(tw, LLM_ERR_BAD_FORMAT, "inconsistent recurrent layout");
    tw = GOOD, tw.groups = 3; /* 4 value heads are not a multiple of 3 key heads */
    expect_desc_error(tw, LLM_ERR_BAD_FORMAT, "key heads 3");
    tw = GOOD, tw.which = 5, tw.ne1 = CH + 1; /* conv1d [CH + 1][K] */
    expect_desc_error(tw, LLM_ERR_BAD_FORMAT, "blk.0.ssm_conv1d.weight");
    tw = GOOD, tw.extra = "blk.0.ssm_mystery";
    expect_desc_error(tw, LLM_ERR_UNSUPPORTED, "blk.0.ssm_mystery");
    /* A recurrent layer without its output projection; one with a full
     * attention tensor (renamed from the full layer's). */
    tw = GOOD, tw.which = 11, tw.rename = "blk.1.ssm_out.weight";
    expect_net_error(tw, "layer 0 is recurrent but lacks");
    tw = GOOD, tw.which = 4, tw.rename = "blk.1.attn_gate.weight";
    expect_net_error(tw, "layer 0 is recurrent but lacks");
}

/* The logits of 12 tokens run as one pass, then the same as 5 + 1 + 6
 * (the state carried between passes), with a kernel set. */
static void run(llm_kernels kernels, float *one, float *split) {
    llm_model_desc *d;
    tweak tw = GOOD;
    cr_assert_eq(load(&tw, &d), LLM_OK, "%s", llm_models_last_error());
    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = 2;
    bp.kernels = kernels;
    llm_backend *be;
    cr_assert_eq(llm_backend_create("cpu", &bp, &be), LLM_OK);
    llm_net *net;
    cr_assert_eq(llm_net_create(d, be, NULL, &net), LLM_OK, "%s", llm_net_last_error());
    cr_assert(llm_net_is_recurrent(net));
    llm_net_kv *kv;
    cr_assert_eq(llm_net_kv_create(net, 4, 16, &kv), LLM_OK);
    /* Layer 0 is recurrent: no K/V storage, and the plan counts layer 1's K/V only. */
    llm_tensor kt, vt;
    cr_expect_eq(llm_net_kv_layer(kv, 0, &kt, &vt), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_net_kv_layer(kv, 1, &kt, &vt), LLM_OK);
    llm_net_memory mem;
    cr_assert_eq(llm_net_plan(d, NULL, &mem), LLM_OK, "%s", llm_net_last_error());
    cr_expect_eq(mem.kv_bytes_per_token, mem.kv_bytes_per_token_layer, "K/V bytes per token %zu, one layer's %zu",
                 mem.kv_bytes_per_token, mem.kv_bytes_per_token_layer);
    cr_expect_gt(mem.state_bytes, 0);
    cr_expect_eq(llm_net_forward(net, kv, &(llm_net_batch){0}), LLM_ERR_INVALID_ARG); /* no tokens */
    cr_assert_eq(llm_net_kv_state_alloc(kv, 2), LLM_OK, "%s", llm_net_last_error());
    const int32_t toks[12] = {1, 5, 9, 2, 14, 3, 3, 7, 0, 11, 15, 6};
    int32_t pos[12], table[4] = {2, 0, 3, 1};
    for (int i = 0; i < 12; i++) pos[i] = i;
    const int cuts[2][4] = {{0, 12, 12, 12}, {0, 5, 6, 12}};
    for (int c = 0; c < 2; c++) {
        int32_t slot = c + 1;
        for (int k = 0; k < 3; k++) {
            const int a = cuts[c][k], n = cuts[c][k + 1] - a;
            if (n == 0) continue;
            llm_net_seq seq = {n, table, 4, NULL, 0};
            llm_net_batch b = llm_net_batch_default();
            b.tokens = toks + a;
            b.positions = pos + a;
            b.n_tokens = n;
            b.seqs = &seq;
            b.n_seqs = 1;
            b.state_slots = &slot;
            b.logits_mode = LLM_LOGITS_ALL;
            b.logits = (c ? split : one) + (size_t)a * NV;
            cr_assert_eq(llm_net_forward(net, kv, &b), LLM_OK, "%s", llm_net_last_error());
        }
        cr_expect_eq(llm_net_kv_state_pos(kv, slot), 12);
    }
    /* A fork: slot 2 copied into slot 1, continued equally from both. */
    cr_assert_eq(llm_net_kv_state_copy(kv, 2, 1), LLM_OK);
    cr_expect_eq(llm_net_kv_state_pos(kv, 1), 12);
    llm_net_kv_free(kv);
    llm_net_free(net);
    llm_backend_free(be);
    llm_model_desc_free(d);
}

Test(qwen35, kernels_and_passes_agree) {
    float one[2][12 * NV], split[2][12 * NV];
    run(LLM_KERNELS_SCALAR, one[0], split[0]);
    run(LLM_KERNELS_AUTO, one[1], split[1]);
    double maxd = 0;
    for (int v = 0; v < 2; v++)
        for (int i = 0; i < 12 * NV; i++) {
            cr_assert(isfinite(one[v][i]));
            /* Multi-row passes sum attention the same way; the single-token pass
             * (position 5) may differ in rounding only. */
            maxd = fmax(maxd, fabs((double)one[v][i] - split[v][i]));
        }
    cr_expect_leq(maxd, 1e-4, "one pass vs 5 + 1 + 6: max|diff| %g", maxd);
    double kd = 0;
    for (int i = 0; i < 12 * NV; i++) kd = fmax(kd, fabs((double)one[0][i] - one[1][i]));
    printf("qwen35 tiny: one pass vs 5 + 1 + 6 max|diff| %g, scalar vs AVX2 max|diff| %g, logit[0] %g\n", maxd, kd,
           (double)one[1][0]);
    cr_expect_leq(kd, 1e-4, "scalar vs AVX2 kernels: max|diff| %g", kd);
}
