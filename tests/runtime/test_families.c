/*
 * test_families.c -- the decoder families on their synthetic models
 * (scripts/golden/families/make_synthetic.py: real head layout, real
 * tokenizer and chat template, a few layers of random weights) against
 * llama.cpp's logits and 32-token greedy continuations
 * (scripts/golden/families/golden/FAMILY.bin, made by
 * make_family_golden.py with llama-cpp-python 0.3.36 built for AVX2).
 *
 * The models are generated at test time by the CTest fixture
 * runtime_families_generate into LLM_BINARY_DIR/synthetic, each checked
 * against its SHA-256; a family whose file is missing (no numpy/gguf: that
 * test is then reported as skipped, or a hash mismatch: that test fails) is
 * skipped here. Requirements as for the default model (test_forward.c):
 * bit-identical logits with the AVX2 kernels, argmax equal at every
 * position, the greedy continuation equal.
 *
 *   llama3   llama architecture, Llama 3.2 1B's heads (32 / 8 of 64), llama3
 *            rope scaling through rope_freqs.weight, tied Q8_0 embeddings, Q4_0
 *            layers, the Llama 3 byte-level BPE vocabulary
 *   mistral  llama architecture, Mistral 7B's heads (32 / 8 of 128), the
 *            SentencePiece vocabulary, untied F16
 *   qwen2    Qwen2.5 0.5B's head size and GQA ratio (7 / 1 of 64), Q/K/V biases,
 *            NEOX rope, tied Q4_0 embeddings, F16 layers, the Qwen2 BPE vocabulary
 *   qwen3    Qwen3 0.6B's heads (16 / 8 of 128), per-head Q/K RMSNorm, NEOX rope,
 *            Q8_0, the Qwen2 vocabulary with Qwen3's template
 *   qwen35   Qwen3.5 0.8B's layout: 3 Gated DeltaNet layers (16 key / 16 value
 *            heads of 128, conv kernel 4) then 1 gated full-attention layer
 *            (8 / 2 heads of 256, rope over 64 dims), Q8_0, the Qwen3.5
 *            vocabulary; also prefilled in chunks of 64 (qwen35_chunked_logits)
 *   qwen3moe Qwen3-30B-A3B's heads (32 / 4 of 128), 32 experts of which 8 are
 *            used per token, F32 router (see the end of this file)
 *   phi3     Phi-3.5 mini's head size (8 / 8 of 96), fused attn_qkv and gate/up
 *            ffn_up, LongRoPE (rope_factors_short / _long, attn_factor), untied
 *            Q8_0, the Phi-3 SentencePiece vocabulary and template. Twice: with
 *            the net's n_ctx_seq 0 against llama.cpp at n_ctx 1024 (short
 *            factors), and with n_ctx_seq 8192 against llama.cpp at n_ctx 8192
 *            (golden/phi3.longctx.bin: above the original 4096, long factors)
 *
 * And one model in two formats: qwen2_hf and gemma3_hf are written both as a
 * GGUF (what llama.cpp's converter makes of an F16 checkpoint: F16 matrices,
 * F32 norms and biases; Gemma's norms 1 + w rounded to F16) and as that
 * Hugging Face checkpoint (config.json, F16 model.safetensors, qwen2 also
 * tokenizer.json); both must give the same logits, bit for bit, on the
 * prompts of a golden of the same vocabulary (qwen2's, mistral's).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden_check.h"


/* suffix: "" (llama.cpp at n_ctx 1024, the net at n_ctx_seq 0) or
 * ".longctx" (both at n_ctx 8192). */
static void open_family(gc_fx *f, golden_set *g, const char *family, const char *suffix) {
    const char *bin = getenv("LLM_BINARY_DIR"), *src = getenv("LLM_SOURCE_DIR");
    char model[1024], gold[1024];
    snprintf(model, sizeof model, "%s/synthetic/%s.gguf", bin ? bin : ".", family);
    snprintf(gold, sizeof gold, "%s/scripts/golden/families/golden/%s%s.bin", src ? src : ".", family, suffix);
    gc_open_ctx(f, model, 2, LLM_KERNELS_AUTO, *suffix ? 8192 : 0);
    cr_assert_eq(golden_load(gold, g), 0, "cannot read %s", gold);
}

static void check_logits_ctx(const char *family, const char *suffix) {
    gc_fx f;
    golden_set g;
    open_family(&f, &g, family, suffix);
    gc_check_logits(&f, &g, gc_exact_kernels(&f), LIGHT ? 48 : 0);
    golden_free(&g);
    gc_close(&f);
}

static void check_logits(const char *family) { check_logits_ctx(family, ""); }

static void check_greedy_ctx(const char *family, const char *suffix) {
    gc_fx f;
    golden_set g;
    open_family(&f, &g, family, suffix);
    gc_check_greedy(&f, &g, LIGHT ? 1 : 0, LIGHT ? 96 : 0, LIGHT ? 8 : 0);
    golden_free(&g);
    gc_close(&f);
}

static void check_greedy(const char *family) { check_greedy_ctx(family, ""); }

/* A family's logits against its golden (llama.cpp at n_ctx 1024) with the
 * net's params np, bit for bit; max_pos as gc_check_logits (0: all). */
static void check_logits_np(const char *family, const llm_net_params *np, int32_t max_pos) {
    const char *bin = getenv("LLM_BINARY_DIR"), *src = getenv("LLM_SOURCE_DIR");
    char model[1024], gold[1024];
    snprintf(model, sizeof model, "%s/synthetic/%s.gguf", bin ? bin : ".", family);
    snprintf(gold, sizeof gold, "%s/scripts/golden/families/golden/%s.bin", src ? src : ".", family);
    gc_fx f;
    gc_open_np(&f, model, 2, LLM_KERNELS_AUTO, np);
    golden_set g;
    cr_assert_eq(golden_load(gold, &g), 0, "cannot read %s", gold);
    gc_check_logits(&f, &g, gc_exact_kernels(&f), max_pos);
    golden_free(&g);
    gc_close(&f);
}

/* Gemma 3 270M Q4_K_M, the real model (scripts/fetch-model.sh gemma3-270m),
 * against tests/runtime/data/gemma3_golden.bin (make_logits_golden.py
 * --full last-of-first, the default model's six prompts): window layers
 * (5 of 6, 512 keys, their own RoPE theta), GEGLU, Q/K norms, post-norms,
 * Q5_0 / Q8_0 / Q4_K / Q6_K weights, a 262144-token SentencePiece vocabulary. */
static void open_gemma3_np(gc_fx *f, golden_set *g, const llm_net_params *np) {
    const char *src = getenv("LLM_SOURCE_DIR");
    char gold[1024];
    snprintf(gold, sizeof gold, "%s/tests/runtime/data/gemma3_golden.bin", src ? src : ".");
    gc_open_np(f, getenv("LLM_GEMMA3_MODEL"), 2, LLM_KERNELS_AUTO, np);
    cr_assert_eq(golden_load(gold, g), 0, "cannot read %s", gold);
}

static void open_gemma3(gc_fx *f, golden_set *g) {
    const llm_net_params np = llm_net_default_params();
    open_gemma3_np(f, g, &np);
}

Test(families, gemma3_270m_logits) {
    gc_fx f;
    golden_set g;
    open_gemma3(&f, &g);
    gc_check_logits(&f, &g, gc_exact_kernels(&f), LIGHT ? 48 : 0);
    golden_free(&g);
    gc_close(&f);
}

/* Its FFN (GEGLU) in runs of 8..15 rows: still llama.cpp's logits, bit for
 * bit (see check_logits_ffn_runs below). */
Test(families, gemma3_270m_ffn_runs_logits) {
    llm_net_params np = llm_net_default_params();
    np.ffn_rows = 8;
    gc_fx f;
    golden_set g;
    open_gemma3_np(&f, &g, &np);
    gc_check_logits(&f, &g, gc_exact_kernels(&f), LIGHT ? 48 : 0);
    golden_free(&g);
    gc_close(&f);
}

Test(families, gemma3_270m_greedy) {
    gc_fx f;
    golden_set g;
    open_gemma3(&f, &g);
    gc_check_greedy(&f, &g, LIGHT ? 1 : 0, LIGHT ? 96 : 0, LIGHT ? 8 : 0);
    golden_free(&g);
    gc_close(&f);
}

#define FAMILY(name)                                                                               \
    Test(families, name##_logits) { check_logits(#name); }                                         \
    Test(families, name##_greedy) { check_greedy(#name); }

FAMILY(llama3)
FAMILY(mistral)
FAMILY(qwen2)
FAMILY(qwen3)
FAMILY(phi3)
FAMILY(qwen35)

/* The gated FFN in runs of 8..15 rows (llm_net_params.ffn_rows 8; the
 * default is 128, past most golden prompts): each prompt's pass goes
 * through many run boundaries, and the logits must still be llama.cpp's
 * (one batch there), bit for bit, with Q4_0 (llama3), F16 (mistral, qwen2:
 * the tiled F16 product) and Q8_0 (qwen3; phi3 through the row views of its
 * fused gate/up weight; qwen35 between its recurrent and attention layers)
 * weights, and for Gemma 3's GEGLU with the real 270M model's Q4_K / Q6_K /
 * Q5_0 / Q8_0 (gemma3_270m_ffn_runs_logits, above). Every one fails when a
 * run reads the wrong rows. Runs that break the kernel rule (all of 9 rows,
 * or of 5) fail gemma3's and qwen2's only: the Q8_0 and Q4_0 products give
 * each row the same bits in any grouping, so those tests guard the offsets,
 * not the rule. */
static void check_logits_ffn_runs(const char *family) {
    llm_net_params np = llm_net_default_params();
    np.ffn_rows = 8;
    check_logits_np(family, &np, LIGHT ? 48 : 0);
}

Test(families, llama3_ffn_runs_logits) { check_logits_ffn_runs("llama3"); }
Test(families, mistral_ffn_runs_logits) { check_logits_ffn_runs("mistral"); }
Test(families, qwen2_ffn_runs_logits) { check_logits_ffn_runs("qwen2"); }
Test(families, qwen3_ffn_runs_logits) { check_logits_ffn_runs("qwen3"); }
Test(families, phi3_ffn_runs_logits) { check_logits_ffn_runs("phi3"); }
Test(families, qwen35_ffn_runs_logits) { check_logits_ffn_runs("qwen35"); }

/* The arena's gate / up slots: [ffn_rows + 7][n_ff] each for a family
 * whose FFN runs in runs of rows, so ffn_rows 8 against 600 (past
 * max_batch 512: one pass) saves two slots of 512 - 15 rows. qwen3moe
 * has no dense FFN, and its experts' products do not run in runs (the CPU
 * picks an expert's kernel by the rows routed to it, which runs would
 * change), so its arena does not depend on ffn_rows. */
static size_t ffn_arena(const llm_model_desc *d, int32_t ffn_rows) {
    llm_net_params p = llm_net_default_params();
    p.ffn_rows = ffn_rows;
    llm_net_memory m;
    cr_assert_eq(llm_net_plan(d, &p, &m), LLM_OK, "%s", llm_net_last_error());
    return m.arena_bytes;
}

Test(families, ffn_runs_arena) {
    static const struct {
        const char *family;
        int runs;
    } fams[] = {{"llama3", 1}, {"qwen2", 1}, {"qwen3", 1}, {"phi3", 1}, {"qwen35", 1}, {"gemma3_hf", 1},
                {"qwen3moe", 0}};
    const char *bin = getenv("LLM_BINARY_DIR");
    int checked = 0;
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
        char model[1024];
        snprintf(model, sizeof model, "%s/synthetic/%s.gguf", bin ? bin : ".", fams[i].family);
        FILE *probe = fopen(model, "rb");
        if (!probe) {
            fprintf(stderr, "%s: not generated, skipped\n", model);
            continue;
        }
        fclose(probe);
        llm_model_desc *d;
        cr_assert_eq(llm_model_desc_from_gguf(model, &d), LLM_OK, "%s", llm_models_last_error());
        const size_t F = llm_model_desc_hparams(d)->n_ff, al = 63;
        const size_t slot512 = (512 * F * 4 + al) & ~al, slot15 = (15 * F * 4 + al) & ~al;
        const size_t saved = ffn_arena(d, 600) - ffn_arena(d, 8);
        cr_expect_eq(saved, fams[i].runs ? 2 * (slot512 - slot15) : 0, "%s: n_ff %zu, ffn_rows 8 saves %zu bytes",
                     fams[i].family, F, saved);
        llm_model_desc_free(d);
        checked++;
    }
    if (!checked) cr_skip_test("no synthetic model generated");
}

/* qwen35 prefilled in chunks of 64 tokens (llama.cpp: one batch): the
 * recurrent states (convolution and delta rule) carry over every chunk
 * boundary of the 500-token prompt, bit for bit. */
Test(families, qwen35_chunked_logits) {
    llm_net_params np = llm_net_default_params();
    np.max_batch = 64;
    check_logits_np("qwen35", &np, LIGHT ? 160 : 0);
}

/* A cancelled (or failed) pass leaves some recurrent layers advanced and
 * others not: the net marks the slot invalid, so continuing the sequence is
 * refused (the engine then recomputes it), and a restart from position 0
 * gives the clean result again. */
static int cancel_after(void *user) { return --*(int *)user < 0; }

Test(families, qwen35_cancel_invalidates_state) {
    const char *bin = getenv("LLM_BINARY_DIR");
    char model[1024];
    snprintf(model, sizeof model, "%s/synthetic/qwen35.gguf", bin ? bin : ".");
    gc_fx f;
    gc_open(&f, model, 2, LLM_KERNELS_AUTO);
    const int32_t toks[8] = {785, 6722, 315, 9625, 374, 264, 3283, 315};
    float *ref = malloc(sizeof(float) * (size_t)f.n_vocab), *lg = malloc(sizeof(float) * (size_t)f.n_vocab);
    cr_assert(ref && lg);
    gc_run(&f, toks, 8, 0, LLM_LOGITS_LAST, ref);
    cr_assert_eq(llm_net_kv_state_pos(f.kv, 1), 8);
    int32_t pos[4] = {0, 1, 2, 3}, slot = 1, budget = 20; /* cancelled inside the second layer */
    llm_net_seq seq = {4, f.table, GC_N_BLOCKS, NULL, 0};
    llm_net_batch b = llm_net_batch_default();
    b.tokens = toks;
    b.positions = pos;
    b.n_tokens = 4;
    b.seqs = &seq;
    b.n_seqs = 1;
    b.state_slots = &slot;
    b.logits = lg;
    b.cancel = cancel_after;
    b.cancel_user = &budget;
    cr_assert_eq(llm_net_forward(f.net, f.kv, &b), LLM_CANCELLED);
    cr_assert_eq(llm_net_kv_state_pos(f.kv, 1), -1, "a cancelled pass left a valid state");
    for (int i = 0; i < 4; i++) pos[i] = 4 + i;
    b.tokens = toks + 4;
    b.cancel = NULL;
    cr_assert_eq(llm_net_forward(f.net, f.kv, &b), LLM_ERR_INVALID_ARG, "continued from an invalid state");
    slot = 2; /* out of range: one slot */
    cr_assert_eq(llm_net_forward(f.net, f.kv, &b), LLM_ERR_INVALID_ARG);
    gc_run(&f, toks, 8, 0, LLM_LOGITS_LAST, lg);
    cr_assert(memcmp(ref, lg, sizeof(float) * (size_t)f.n_vocab) == 0, "the recomputed logits differ");
    free(ref);
    free(lg);
    gc_close(&f);
}

/* phi3 at a context above its original one: the long rope factors. The two
 * goldens must differ (else this would not test the choice). */
Test(families, phi3_longctx_logits) {
    const char *src = getenv("LLM_SOURCE_DIR");
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s/scripts/golden/families/golden/phi3.bin", src ? src : ".");
    snprintf(b, sizeof b, "%s/scripts/golden/families/golden/phi3.longctx.bin", src ? src : ".");
    golden_set ga, gb;
    cr_assert_eq(golden_load(a, &ga), 0, "cannot read %s", a);
    cr_assert_eq(golden_load(b, &gb), 0, "cannot read %s", b);
    const golden_prompt *pa = &ga.prompts[ga.n_prompts - 1], *pb = &gb.prompts[gb.n_prompts - 1];
    cr_assert_eq(pa->n_tokens, pb->n_tokens);
    int differ = 0;
    for (int32_t i = 0; i < pa->n_tokens * ga.topk; i++) differ += pa->top_logits[i] != pb->top_logits[i];
    cr_assert_gt(differ, 0, "phi3: llama.cpp gives the same logits at n_ctx 1024 and 8192");
    golden_free(&ga);
    golden_free(&gb);
    check_logits_ctx("phi3", ".longctx");
}
Test(families, phi3_longctx_greedy) { check_greedy_ctx("phi3", ".longctx"); }

/* The logits of the first n positions of golden prompt p on a model (GGUF or folder). */
static float *all_logits(const char *path, const golden_prompt *p, int32_t n, int32_t *n_vocab) {
    gc_fx f;
    gc_open(&f, path, 2, LLM_KERNELS_AUTO);
    *n_vocab = f.n_vocab;
    float *out = malloc(sizeof(float) * (size_t)n * (size_t)f.n_vocab);
    cr_assert_not_null(out);
    gc_run(&f, p->tokens, n, 0, LLM_LOGITS_ALL, out);
    gc_close(&f);
    return out;
}

static void check_folder_equals_gguf(const char *family, const char *golden_family) {
    const char *bin = getenv("LLM_BINARY_DIR"), *src = getenv("LLM_SOURCE_DIR");
    char gguf[1024], dir[1024], st[1100], gold[1024];
    snprintf(gguf, sizeof gguf, "%s/synthetic/%s.gguf", bin ? bin : ".", family);
    snprintf(dir, sizeof dir, "%s/synthetic/%s", bin ? bin : ".", family);
    snprintf(st, sizeof st, "%s/model.safetensors", dir);
    snprintf(gold, sizeof gold, "%s/scripts/golden/families/golden/%s.bin", src ? src : ".", golden_family);
    FILE *probe = fopen(st, "rb");
    if (!probe) cr_skip_test("%s not generated (runtime_families_generate_%s says why)", st, family);
    fclose(probe);
    golden_set g;
    cr_assert_eq(golden_load(gold, &g), 0, "cannot read %s", gold);
    for (int32_t pi = 0; pi < g.n_prompts; pi++) {
        const golden_prompt *p = &g.prompts[pi];
        int32_t vg, vh, np = LIGHT && p->n_tokens > 48 ? 48 : p->n_tokens;
        float *lg = all_logits(gguf, p, np, &vg), *lh = all_logits(dir, p, np, &vh);
        cr_assert_eq(vg, vh, "vocabulary %d (GGUF) vs %d (folder)", vg, vh);
        size_t n = (size_t)np * (size_t)vg, differ = 0;
        double maxd = 0;
        for (size_t i = 0; i < n; i++) {
            if (memcmp(&lg[i], &lh[i], sizeof(float)) != 0) differ++;
            double d = fabs((double)lg[i] - (double)lh[i]);
            if (d > maxd) maxd = d;
        }
        printf("%s %-12s %4d pos: %zu of %zu logits differ, max|diff| %g\n", family, p->name, np, differ, n, maxd);
        cr_expect_eq(differ, 0, "%s: the folder's logits differ from the GGUF's (%zu, max|diff| %g)", p->name, differ,
                     maxd);
        free(lg);
        free(lh);
    }
    golden_free(&g);
}

Test(families, qwen2_hf_folder_equals_gguf) { check_folder_equals_gguf("qwen2_hf", "qwen2"); }
Test(families, gemma3_hf_folder_equals_gguf) { check_folder_equals_gguf("gemma3_hf", "mistral"); }

/* The synthetic llama3 (Llama 3.2 1B's heads: 32 query and 8 KV heads of 64,
 * GQA groups of 4) with quantized KV caches against llama.cpp run with the
 * same cache types and flash attention (tests/runtime/data/
 * kvq_llama3_<type>_golden.bin, scripts/golden/logits/make_kvq_golden.py
 * --tag llama3 --small): bit-identical with the AVX2 kernels. */
static void check_llama3_kv(const char *tname, llm_dtype t) {
    const char *bin = getenv("LLM_BINARY_DIR"), *src = getenv("LLM_SOURCE_DIR");
    char model[1024], gold[1024];
    snprintf(model, sizeof model, "%s/synthetic/llama3.gguf", bin ? bin : ".");
    snprintf(gold, sizeof gold, "%s/tests/runtime/data/kvq_llama3_%s_golden.bin", src ? src : ".", tname);
    gc_fx f;
    gc_open_kv(&f, model, 2, LLM_KERNELS_AUTO, t, t);
    golden_set g;
    cr_assert_eq(golden_load(gold, &g), 0, "cannot read %s", gold);
    gc_check_logits(&f, &g, gc_exact_kernels(&f), LIGHT ? 48 : 0);
    gc_check_greedy(&f, &g, LIGHT ? 1 : 0, 0, LIGHT ? 4 : 0);
    golden_free(&g);
    gc_close(&f);
}

Test(families, llama3_kv_q8_0) { check_llama3_kv("q8_0", LLM_DTYPE_Q8_0); }
Test(families, llama3_kv_q4_0) { check_llama3_kv("q4_0", LLM_DTYPE_Q4_0); }

/* qwen3moe: Qwen3-30B-A3B's heads (32 / 4 of 128) and a mixture of experts
 * (32 experts of 128, 8 used, F32 router, normalised top-k weights), Q8_0,
 * the Qwen2 vocabulary with Qwen3's template; its golden has a fifth prompt
 * of 700 tokens (longer than the net's max_batch and llama.cpp's n_ubatch of
 * 512, so two prefill chunks route their own tokens). */
FAMILY(qwen3moe)
