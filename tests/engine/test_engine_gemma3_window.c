/* Gemma 3's sliding-window KV release (engine_kv.h), on the real Gemma 3
 * 270M Q4_K_M (LLM_GEMMA3_MODEL; skipped without it):
 * - 4,096 positions (4,032 prompt tokens in chunks of 256, then 64 greedy
 *   steps): after every step the window layers' pool holds at most
 *   ceil(512 / 16) + 2 blocks in use (the window, a partial block, one of
 *   slack), and the logits equal llama.cpp's, bit
 *   for bit, at the end of every chunk (top 8) and after the last step (top
 *   64), with the same greedy tokens (data/gemma3_window_golden.bin, made by
 *   data/make_gemma3_window_golden.py with swa_full: see there);
 * - the scheduler: several requests past the window, batched, give the
 *   tokens each gives alone;
 * - a prefix-cache hit, a fork and a truncate past the window equal a cold
 *   run, also when the window pool is so small that the early window blocks
 *   were evicted (then the prefix is recomputed).
 * Under AddressSanitizer the 4,096-position run stops after 1,024 prompt
 * tokens (two windows: blocks are released) and 4 greedy steps, and only
 * the first prefix case runs. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llama/engine.h"
#include "llama/engine_sched.h"

#include "under_asan.h"
#define LIGHT LLM_UNDER_ASAN

#define WINDOW 512
#define BLOCK 16
#define SWA_BOUND ((WINDOW + BLOCK - 1) / BLOCK + 2) /* blocks a sequence keeps between steps (one of slack) */

/* ---- the golden (layout: data/make_gemma3_window_golden.py) ---- */

typedef struct golden {
    uint32_t n_ctx, n_chunk, n_prompt, topk_ck, n_ck, n_gen, topk_final;
    int32_t *tokens;                  /* [n_prompt] */
    int32_t *ck_pos, *ck_ids;         /* [n_ck], [n_ck][topk_ck] */
    float *ck_logits;                 /* [n_ck][topk_ck] */
    int32_t *gen;                     /* [n_gen] */
    float *gen_gap;                   /* [n_gen] */
    int32_t final_pos, *final_ids;    /* [topk_final] */
    float *final_logits;              /* [topk_final] */
} golden;

static void rd(FILE *f, void *p, size_t n) { cr_assert_eq(fread(p, 1, n, f), n, "golden truncated"); }

static void *rd_alloc(FILE *f, size_t n) {
    void *p = malloc(n ? n : 1);
    cr_assert(p);
    rd(f, p, n);
    return p;
}

static void golden_read(golden *g) {
    const char *src = getenv("LLM_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/engine/data/gemma3_window_golden.bin", src ? src : ".");
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    char magic[8];
    uint32_t ver;
    rd(f, magic, 8);
    cr_assert_eq(memcmp(magic, "LLMGSWA1", 8), 0);
    rd(f, &ver, 4);
    cr_assert_eq(ver, 1u);
    rd(f, &g->n_ctx, 4);
    rd(f, &g->n_chunk, 4);
    rd(f, &g->n_prompt, 4);
    cr_assert(g->n_prompt > 0 && g->n_prompt <= g->n_ctx && g->n_ctx <= 65536 && g->n_chunk > 0);
    g->tokens = rd_alloc(f, 4u * g->n_prompt);
    rd(f, &g->topk_ck, 4);
    rd(f, &g->n_ck, 4);
    cr_assert(g->topk_ck <= 1024 && g->n_ck <= 4096);
    g->ck_pos = malloc(4u * g->n_ck);
    g->ck_ids = malloc(4u * g->n_ck * g->topk_ck);
    g->ck_logits = malloc(4u * g->n_ck * g->topk_ck);
    cr_assert(g->ck_pos && g->ck_ids && g->ck_logits);
    for (uint32_t c = 0; c < g->n_ck; c++) {
        rd(f, &g->ck_pos[c], 4);
        rd(f, g->ck_ids + (size_t)c * g->topk_ck, 4u * g->topk_ck);
        rd(f, g->ck_logits + (size_t)c * g->topk_ck, 4u * g->topk_ck);
    }
    rd(f, &g->n_gen, 4);
    cr_assert(g->n_gen <= 4096);
    g->gen = malloc(4u * g->n_gen + 4);
    g->gen_gap = malloc(4u * g->n_gen + 4);
    cr_assert(g->gen && g->gen_gap);
    for (uint32_t i = 0; i < g->n_gen; i++) {
        rd(f, &g->gen[i], 4);
        rd(f, &g->gen_gap[i], 4);
    }
    rd(f, &g->topk_final, 4);
    cr_assert(g->topk_final <= 1024);
    rd(f, &g->final_pos, 4);
    g->final_ids = rd_alloc(f, 4u * g->topk_final);
    g->final_logits = rd_alloc(f, 4u * g->topk_final);
    fclose(f);
}

static void golden_free(golden *g) {
    free(g->tokens);
    free(g->ck_pos);
    free(g->ck_ids);
    free(g->ck_logits);
    free(g->gen);
    free(g->gen_gap);
    free(g->final_ids);
    free(g->final_logits);
}

/* ---- helpers ---- */

static llm_model *load_b(int32_t n_ctx, int32_t kv_tokens, int32_t kv_swa_seqs, int32_t n_batch) {
    const char *p = getenv("LLM_GEMMA3_MODEL");
    if (!p || !*p || access(p, R_OK) != 0)
        cr_skip_test("Gemma 3 270M not found (set LLM_GEMMA3_MODEL; scripts/fetch-model.sh gemma3-270m)");
    llm_model_params mp = llm_model_default_params();
    mp.backend = "cpu";
    mp.n_threads = 2;
    mp.n_ctx = n_ctx;
    mp.kv_tokens = kv_tokens;
    mp.kv_block_size = BLOCK;
    mp.n_batch = n_batch;
    mp.kv_swa_seqs = kv_swa_seqs;
    llm_model *m;
    cr_assert_eq(llm_load_model(p, &mp, &m), LLM_OK, "load: %s", llm_last_error());
    return m;
}

static llm_model *load(int32_t n_ctx, int32_t kv_tokens, int32_t kv_swa_seqs) {
    return load_b(n_ctx, kv_tokens, kv_swa_seqs, 256);
}

static llm_session *session(llm_model *m) {
    llm_session_params sp = llm_session_default_params();
    sp.sampling.temperature = 0;
    llm_session *s;
    cr_assert_eq(llm_session_new(m, &sp, &s), LLM_OK, "%s", llm_model_last_error(m));
    return s;
}

static int32_t argmax(const float *x, int32_t n) {
    int32_t b = 0;
    for (int32_t i = 1; i < n; i++)
        if (x[i] > x[b]) b = i;
    return b;
}

/* Telemetry after a step: the window pool holds at most SWA_BOUND blocks
 * per live sequence. */
static void check_window_bound(const llm_session *s, int32_t n_seqs, int32_t pos) {
    llm_telemetry t;
    cr_assert_eq(llm_session_telemetry(s, &t), LLM_OK);
    cr_assert_gt(t.kv_swa_blocks_total, 0, "no window pool");
    cr_assert_leq(t.kv_swa_blocks_used, n_seqs * SWA_BOUND, "at %d tokens: %d window blocks in use > %d", pos,
                  t.kv_swa_blocks_used, n_seqs * SWA_BOUND);
}

/* The golden's top-k ids must be ours, with the same logit bits. */
static void check_top(const float *logits, const int32_t *ids, const float *vals, uint32_t k, const char *what) {
    for (uint32_t i = 0; i < k; i++)
        cr_assert(memcmp(&logits[ids[i]], &vals[i], sizeof(float)) == 0, "%s: logit of token %d: %.9g, llama.cpp %.9g",
                  what, ids[i], (double)logits[ids[i]], (double)vals[i]);
}

/* ---- 4,096 positions against llama.cpp ---- */

Test(gemma3_window, positions_4096_bounded_and_equal_llamacpp, .timeout = 600) {
    golden g;
    llm_model *m = load(4096, 0, 0);
    golden_read(&g);
    llm_model_info info;
    llm_model_get_info(m, &info);
    llm_session *s = session(m);
    const uint32_t n_prompt = LIGHT ? 4 * g.n_chunk : g.n_prompt;
    uint32_t ck = 0;
    for (uint32_t i = 0; i < n_prompt; i += g.n_chunk, ck++) {
        const int32_t n = (int32_t)(n_prompt - i < g.n_chunk ? n_prompt - i : g.n_chunk);
        cr_assert_eq(llm_prefill(s, g.tokens + i, n), LLM_OK, "%s", llm_model_last_error(m));
        check_window_bound(s, 1, (int32_t)i + n);
        char what[64];
        snprintf(what, sizeof what, "chunk ending at %d", g.ck_pos[ck]);
        cr_assert_eq(llm_session_n_past(s), g.ck_pos[ck] + 1);
        check_top(llm_session_logits(s), g.ck_ids + (size_t)ck * g.topk_ck, g.ck_logits + (size_t)ck * g.topk_ck,
                  g.topk_ck, what);
    }
    llm_telemetry t;
    cr_assert_eq(llm_session_telemetry(s, &t), LLM_OK);
    fprintf(stderr, "gemma3 window: %d tokens: main pool %d/%d blocks, window pool %d/%d blocks, %.1f MiB KV\n",
            llm_session_n_past(s), t.kv_blocks_used, t.kv_blocks_total, t.kv_swa_blocks_used, t.kv_swa_blocks_total,
            (double)t.kv_bytes / 1048576.0);
    if (LIGHT) {
        /* A few greedy steps only; the golden's tokens come after the whole prompt. */
        for (int i = 0; i < 4; i++) {
            llm_token tok = argmax(llm_session_logits(s), info.n_vocab);
            cr_assert_eq(llm_prefill(s, &tok, 1), LLM_OK, "%s", llm_model_last_error(m));
            check_window_bound(s, 1, llm_session_n_past(s));
        }
    } else {
        for (uint32_t i = 0; i < g.n_gen; i++) {
            llm_token tok = argmax(llm_session_logits(s), info.n_vocab);
            cr_assert_eq(tok, g.gen[i], "greedy step %u: %d, llama.cpp %d (gap %.3f)", i, tok, g.gen[i],
                         (double)g.gen_gap[i]);
            cr_assert_eq(llm_prefill(s, &tok, 1), LLM_OK, "%s", llm_model_last_error(m));
            check_window_bound(s, 1, llm_session_n_past(s));
        }
        cr_assert_eq(llm_session_n_past(s), g.final_pos + 1);
        check_top(llm_session_logits(s), g.final_ids, g.final_logits, g.topk_final, "after 4096 positions");
        cr_assert_eq(argmax(llm_session_logits(s), info.n_vocab), g.final_ids[0]);
    }
    llm_session_free(s);
    golden_free(&g);
    llm_model_free(m);
}

/* ---- the memory plan ---- */

/* Gemma 3 270M: 18 layers of one 256-wide K/V head in F16, 1024 bytes per
 * token and layer; layers 5, 11 and 17 global. At n_ctx 4096 (blocks of
 * 16, passes of 256) the 3 global layers keep 4096 / 16 + 1 = 257 blocks,
 * the 15 window layers (512 + 256 - 2) / 16 + 4 = 51 per session for
 * kv_tokens / n_ctx + 1 = 2 sessions; the plan and the loaded model say so. */
Test(gemma3_window, memory_plan_counts_the_window_pool) {
    const char *p = getenv("LLM_GEMMA3_MODEL");
    if (!p || !*p || access(p, R_OK) != 0) cr_skip_test("Gemma 3 270M not found (set LLM_GEMMA3_MODEL)");
    llm_model_params mp = llm_model_default_params();
    mp.n_ctx = 4096;
    mp.kv_block_size = BLOCK;
    mp.n_batch = 256;
    llm_memory_plan plan;
    cr_assert_eq(llm_model_plan(p, &mp, &plan), LLM_OK, "%s", llm_last_error());
    cr_assert_eq(plan.kv_blocks, 257);
    cr_assert_eq(plan.kv_swa_blocks, 102);
    cr_assert_eq(plan.kv_bytes, 3ull * 1024 * 16 * 257 + 15ull * 1024 * 16 * 102);
    mp.kv_swa_seqs = 1;
    cr_assert_eq(llm_model_plan(p, &mp, &plan), LLM_OK, "%s", llm_last_error());
    cr_assert_eq(plan.kv_swa_blocks, 51);
    /* A window as long as the context: no window pool, every layer in one. */
    mp.n_ctx = 512;
    cr_assert_eq(llm_model_plan(p, &mp, &plan), LLM_OK, "%s", llm_last_error());
    cr_assert_eq(plan.kv_swa_blocks, 0);
    cr_assert_eq(plan.kv_bytes, 18ull * 1024 * 16 * 33);
}

/* ---- prefix cache, fork, truncate past the window ----
 *
 * Logits are compared only between computations of the same shape: like
 * llama.cpp, the matmuls of Gemma's Q4_K / Q6_K weights take other kernels
 * (other summation orders) for groups of 4 rows and from 8 rows on than for
 * a lone row (runtime kernels.h: rows8, tiled), so a token computed alone
 * and the same token computed in a chunk can differ in the last bits. Here
 * every prompt ends in a chunk of 8+ tokens, a multiple of 4 (its last row
 * goes through the 4-row kernel either way), and every generated token is
 * computed alone. */

typedef struct run_out {
    llm_token toks[8];
    float *after_prompt; /* [n_vocab] */
    float *at_end;       /* [n_vocab] after the last generated token */
    int32_t reused;
} run_out;

#define STEPS 8

/* Prefills tokens[0..n) into a fresh session and generates STEPS greedy
 * tokens, each computed alone; returns the session. */
static llm_session *run(llm_model *m, const int32_t *tokens, int32_t n, run_out *o) {
    llm_model_info info;
    llm_model_get_info(m, &info);
    const size_t V = (size_t)info.n_vocab;
    o->after_prompt = malloc(V * sizeof(float));
    o->at_end = malloc(V * sizeof(float));
    cr_assert(o->after_prompt && o->at_end);
    llm_session *s = session(m);
    cr_assert_eq(llm_prefill(s, tokens, n), LLM_OK, "%s", llm_model_last_error(m));
    llm_telemetry t;
    cr_assert_eq(llm_session_telemetry(s, &t), LLM_OK);
    o->reused = t.reused_tokens;
    memcpy(o->after_prompt, llm_session_logits(s), V * sizeof(float));
    for (int i = 0; i < STEPS; i++) {
        o->toks[i] = argmax(llm_session_logits(s), info.n_vocab);
        cr_assert_eq(llm_prefill(s, &o->toks[i], 1), LLM_OK, "%s", llm_model_last_error(m));
    }
    memcpy(o->at_end, llm_session_logits(s), V * sizeof(float));
    return s;
}

static void run_out_free(run_out *o) {
    free(o->after_prompt);
    free(o->at_end);
}

static void prefix_fork_truncate(int32_t kv_swa_seqs, int32_t n_batch, int32_t n_prompt, bool expect_hit) {
    golden g;
    llm_model *m = load_b(2048, 4096, kv_swa_seqs, n_batch);
    golden_read(&g);
    llm_model_info info;
    llm_model_get_info(m, &info);
    const size_t V = (size_t)info.n_vocab;
    /* Cold run, kept alive while the second one takes its prefix. */
    run_out a, b;
    llm_session *s1 = run(m, g.tokens, n_prompt, &a);
    cr_assert_eq(a.reused, 0);
    llm_session *s2 = run(m, g.tokens, n_prompt, &b);
    if (expect_hit)
        cr_assert_geq(b.reused, (n_prompt - 1) / BLOCK * BLOCK, "prefix hit: %d of %d tokens", b.reused, n_prompt);
    else
        cr_assert_lt(b.reused, n_prompt - WINDOW, "the early window blocks should have been evicted (reused %d)",
                     b.reused);
    cr_assert_eq(memcmp(a.after_prompt, b.after_prompt, V * sizeof(float)), 0,
                 "prefix hit (%d tokens reused): logits differ", b.reused);
    cr_assert_eq(memcmp(a.toks, b.toks, sizeof a.toks), 0, "prefix hit: greedy tokens differ");
    cr_assert_eq(memcmp(a.at_end, b.at_end, V * sizeof(float)), 0, "prefix hit: last logits differ");
    /* Truncate inside the window and compute the same tokens again. */
    cr_assert_eq(llm_session_truncate(s2, n_prompt + STEPS - 2), LLM_OK, "%s", llm_model_last_error(m));
    for (int i = STEPS - 2; i < STEPS; i++)
        cr_assert_eq(llm_prefill(s2, &b.toks[i], 1), LLM_OK, "%s", llm_model_last_error(m));
    cr_assert_eq(memcmp(a.at_end, llm_session_logits(s2), V * sizeof(float)), 0, "truncate by 2: logits differ");
    /* A fork continues as the original does (shared blocks, copy-on-write
     * of the partial tail block in both layer groups). */
    llm_session *f;
    cr_assert_eq(llm_session_fork(s2, &f), LLM_OK, "%s", llm_last_error());
    for (int i = 0; i < STEPS; i++) {
        llm_token tf = argmax(llm_session_logits(f), info.n_vocab);
        llm_token t2 = argmax(llm_session_logits(s2), info.n_vocab);
        cr_assert_eq(tf, t2, "fork step %d: token %d, original %d", i, tf, t2);
        cr_assert_eq(llm_prefill(f, &tf, 1), LLM_OK, "%s", llm_model_last_error(m));
        cr_assert_eq(llm_prefill(s2, &t2, 1), LLM_OK, "%s", llm_model_last_error(m));
        cr_assert_eq(memcmp(llm_session_logits(f), llm_session_logits(s2), V * sizeof(float)), 0,
                     "fork step %d: logits differ", i);
        llm_telemetry t;
        cr_assert_eq(llm_session_telemetry(f, &t), LLM_OK);
        cr_assert_leq(t.kv_swa_blocks_used, 3 * SWA_BOUND);
    }
    llm_session_free(f);
    llm_session_free(s2);
    if (!expect_hit) goto done; /* the recompute after a cut is the first case's */
    /* Truncate far behind the window (the window layers cannot resume
     * there: recomputed), then the rest of the prompt again: the same
     * logits. */
    cr_assert_eq(llm_session_truncate(s1, 100), LLM_OK, "%s", llm_model_last_error(m));
    cr_assert_eq(llm_session_n_past(s1), 100);
    cr_assert_eq(llm_prefill(s1, g.tokens + 100, n_prompt - 100), LLM_OK, "%s", llm_model_last_error(m));
    cr_assert_eq(memcmp(a.after_prompt, llm_session_logits(s1), V * sizeof(float)), 0,
                 "truncate to 100: logits differ");
    check_window_bound(s1, 1, n_prompt);
done:
    llm_session_free(s1);
    run_out_free(&a);
    run_out_free(&b);
    golden_free(&g);
    llm_model_free(m);
}

/* The window pool holds every block of the prompt: a full prefix hit. */
Test(gemma3_window, prefix_hit_fork_truncate_equal_cold, .timeout = 600) {
    prefix_fork_truncate(0, 256, LIGHT ? 560 : 700, true);
}

/* A window pool for two sequences of passes of 64 (2 x 39 blocks) and a
 * prompt of more blocks than that: the prompt's early window blocks are
 * evicted, so the second run recomputes (at most a partial hit). Not under
 * AddressSanitizer (the paths are the first case's; only the sizes differ). */
Test(gemma3_window, evicted_window_recomputes_equal_cold, .timeout = 600) {
    if (LIGHT) cr_skip_test("heavy under AddressSanitizer");
    prefix_fork_truncate(2, 64, 1300, false);
}

/* ---- the scheduler ----
 *
 * A batch computes a request's decode step with others' rows, so with
 * Gemma's weight types (see above) its bits can differ from the request
 * computed alone: each request's greedy tokens must equal a plain session's,
 * except that they may part at a step where the session's top-2 gap is
 * below 0.5 (a near tie may go either way; after it nothing is compared). */

typedef struct result {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    llm_token toks[64];
    int32_t n_toks;
    llm_sched_event last;
} result;

static void on_event(const llm_sched_event *ev, void *user) {
    result *r = user;
    pthread_mutex_lock(&r->mu);
    if (ev->kind == LLM_SCHED_TEXT) {
        if (ev->token != LLM_TOKEN_NULL && r->n_toks < 64) r->toks[r->n_toks++] = ev->token;
    } else {
        r->last = *ev;
        r->last.text = NULL;
        r->last.message = NULL;
        r->done = true;
        pthread_cond_signal(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
}

static void result_init(result *r) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
}

static void result_wait(result *r) {
    pthread_mutex_lock(&r->mu);
    while (!r->done) pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
}

#define N_REQ 3
#define GEN 16
static const int32_t REQ_OFF[N_REQ] = {2000, 2500, 3300}; /* where each prompt starts in the text */
static const int32_t REQ_LEN[N_REQ] = {600, 640, 560};    /* all past the window */

static int32_t req_len(int k) { return REQ_LEN[k]; }

static void submit(llm_sched *sc, const golden *g, int k, result *r) {
    llm_sched_request q = llm_sched_default_request();
    q.prompt = g->tokens + REQ_OFF[k];
    q.n_prompt = req_len(k);
    q.max_tokens = GEN;
    q.sampling.temperature = 0;
    q.callback = on_event;
    q.user = r;
    cr_assert_eq(llm_sched_submit(sc, &q, NULL), LLM_OK, "%s", llm_last_error());
}

Test(gemma3_window, sched_batched_equals_alone, .timeout = 600) {
    if (LIGHT) cr_skip_test("heavy under AddressSanitizer (the window paths run in the tests above)");
    golden g;
    llm_model *m = load(1024, 4096, 0);
    golden_read(&g);
    llm_model_info info;
    llm_model_get_info(m, &info);
    /* The reference: each prompt in a plain session, greedy, with gaps. */
    llm_token want[N_REQ][GEN];
    float gap[N_REQ][GEN];
    for (int k = 0; k < N_REQ; k++) {
        llm_session *s = session(m);
        cr_assert_eq(llm_prefill(s, g.tokens + REQ_OFF[k], req_len(k)), LLM_OK, "%s", llm_model_last_error(m));
        for (int i = 0; i < GEN; i++) {
            const float *l = llm_session_logits(s);
            want[k][i] = argmax(l, info.n_vocab);
            float second = -1e30f;
            for (int32_t v = 0; v < info.n_vocab; v++)
                if (v != want[k][i] && l[v] > second) second = l[v];
            gap[k][i] = l[want[k][i]] - second;
            cr_assert_eq(llm_prefill(s, &want[k][i], 1), LLM_OK, "%s", llm_model_last_error(m));
        }
        llm_session_free(s);
    }
    llm_model_free(m);
    /* Fresh model (no prefix cache from the sessions): all together. */
    m = load(1024, 4096, 0);
    llm_sched_params pp = llm_sched_default_params();
    pp.max_running = N_REQ;
    pp.token_budget = 96; /* prompts are chunked across steps, beside the others' decodes */
    llm_sched *sc;
    cr_assert_eq(llm_sched_new(m, &pp, &sc), LLM_OK, "%s", llm_last_error());
    static result batched[N_REQ];
    for (int k = 0; k < N_REQ; k++) {
        result_init(&batched[k]);
        submit(sc, &g, k, &batched[k]);
    }
    for (int k = 0; k < N_REQ; k++) {
        result_wait(&batched[k]);
        cr_assert_eq(batched[k].last.finish, LLM_FINISH_LENGTH, "request %d: finish %d status %d", k,
                     batched[k].last.finish, batched[k].last.status);
        cr_assert_eq(batched[k].n_toks, GEN);
        int same = 0;
        while (same < GEN && batched[k].toks[same] == want[k][same]) same++;
        if (same < GEN)
            cr_assert_lt(gap[k][same], 0.5f, "request %d step %d: %d batched, %d alone (gap %.3f)", k, same,
                         batched[k].toks[same], want[k][same], (double)gap[k][same]);
        fprintf(stderr, "sched request %d: %d of %d greedy tokens equal%s\n", k, same, GEN,
                same < GEN ? " (then a near tie went the other way)" : "");
    }
    llm_sched_stats st;
    for (int i = 0; i < 1000; i++) {
        cr_assert_eq(llm_sched_get_stats(sc, &st), LLM_OK);
        if (st.running == 0) break;
        usleep(1000);
    }
    cr_assert_gt(st.kv_swa_blocks_total, 0);
    cr_assert_lt(st.steps, st.computed_tokens, "no batching happened");
    cr_assert_eq(st.kv_blocks_used, 0);
    cr_assert_eq(st.kv_swa_blocks_used, 0);
    llm_sched_free(sc);
    golden_free(&g);
    llm_model_free(m);
}
