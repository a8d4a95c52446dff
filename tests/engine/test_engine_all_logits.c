/* llm_prefill_all_logits: the logits of every position of a prefill.
 *
 * Row i must be exactly the last-position logits that llm_prefill() leaves
 * after prefilling tokens[0..i]; the reference is always llm_prefill() in
 * the same process (same kernels, one thread), so the check is bit for bit:
 * a difference means a row was taken at the wrong position, the chunking
 * across forward passes lost or shifted a row, or the K/V the rows attended
 * to differ. M, the model under test, has n_batch 8 so that a 24-token
 * prompt spans three forward passes and the chunk boundaries are exercised.
 *
 * The reference prefills run on a second instance R of the same model with
 * n_batch 64 and no prefix cache, so that tokens[0..i] is ONE forward pass
 * (with the cache, the blocks of earlier references would be reused and
 * the last token computed alone). Why one pass: the CPU
 * attention sums a token that is alone in its forward pass in another order
 * than a token in a batch of two or more (as llama.cpp does; see
 * libs/runtime/src/cpu/attention_cpu.c), so a reference whose last token
 * were alone in a pass (i = 8, 16, ... with n_batch 8) would agree only to
 * rounding. Row 0 is alone in both but attends to one key, so its softmax
 * is exactly 1 whatever the order. The session state afterwards (context,
 * prefix cache, decoding) must be the same as after llm_prefill(), and bad
 * arguments must fail cleanly and change nothing. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llama/engine.h"

#define N_PROMPT 24 /* three 8-token forward passes; one full 16-token KV block + a partial one */
#define N_BATCH 8

static llm_model *M, *R; /* under test (n_batch 8), reference (n_batch 64) */
static int32_t NV;

static llm_model *load_one(const char *path, int32_t n_batch, bool prefix_cache) {
    llm_model_params mp = llm_model_default_params();
    mp.backend = "cpu";
    mp.n_threads = 1;
    mp.n_ctx = 64;
    mp.kv_tokens = 256;
    mp.kv_block_size = 16;
    mp.n_batch = n_batch;
    mp.prefix_cache = prefix_cache;
    llm_model *m;
    cr_assert_eq(llm_load_model(path, &mp, &m), LLM_OK, "load: %s", llm_last_error());
    return m;
}

static void load(void) {
    const char *p = getenv("LLM_DEFAULT_MODEL");
    if (!p || !*p || access(p, R_OK) != 0)
        cr_skip_test("default model not found (set LLM_DEFAULT_MODEL; scripts/setup.sh)");
    M = load_one(p, N_BATCH, true);
    R = load_one(p, 64, false);
    llm_model_info info;
    cr_assert_eq(llm_model_get_info(M, &info), LLM_OK);
    NV = info.n_vocab;
}

static void unload(void) {
    llm_model_free(M);
    llm_model_free(R);
    M = R = NULL;
}

/* A prompt of exactly N_PROMPT ordinary tokens. */
static void prompt(llm_token *out) {
    static const char text[] =
        "The quick brown fox jumps over the lazy dog while the cat watches from the "
        "window, thinking about dinner, the weather, and whether the mail will arrive "
        "before noon or after the long walk through the park near the river bank.";
    llm_token buf[256];
    int32_t n = 0;
    cr_assert_eq(llm_tokenize(M, text, strlen(text), 0, buf, 256, &n), LLM_OK, "%s", llm_last_error());
    cr_assert_geq(n, N_PROMPT, "prompt text too short: %d tokens", n);
    memcpy(out, buf, N_PROMPT * sizeof *out);
}

static llm_session *session_on(llm_model *m) {
    llm_session_params sp = llm_session_default_params();
    sp.sampling.temperature = 0; /* greedy: the pending-token case is deterministic */
    llm_session *s;
    cr_assert_eq(llm_session_new(m, &sp, &s), LLM_OK, "%s", llm_last_error());
    return s;
}

static llm_session *session(void) { return session_on(M); }

static float *rows_alloc(int32_t n) {
    float *r = malloc((size_t)n * (size_t)NV * sizeof *r);
    cr_assert_not_null(r);
    return r;
}

static llm_telemetry telem(const llm_session *s) {
    llm_telemetry t;
    cr_assert_eq(llm_session_telemetry(s, &t), LLM_OK);
    return t;
}

static void assert_row(const float *row, const llm_session *ref, const char *what, int32_t i) {
    const float *l = llm_session_logits(ref);
    cr_assert_not_null(l, "%s %d: reference has no logits", what, i);
    cr_assert(memcmp(row, l, (size_t)NV * sizeof *row) == 0, "%s: row %d differs from llm_prefill's logits",
              what, i);
}

Test(all_logits, rows_equal_prefill_of_each_prefix, .fini = unload) {
    load();
    llm_token p[N_PROMPT];
    prompt(p);
    float *rows = rows_alloc(N_PROMPT);

    /* A fresh pool: everything computed. */
    llm_session *s = session();
    cr_assert_eq(llm_prefill_all_logits(s, p, N_PROMPT, rows, (size_t)N_PROMPT * (size_t)NV), LLM_OK, "%s",
                 llm_session_last_error(s));
    /* The session is as after llm_prefill: context, last row ready. */
    cr_assert_eq(llm_session_n_past(s), N_PROMPT);
    llm_token ctx[N_PROMPT];
    cr_assert_eq(llm_session_tokens(s, ctx, N_PROMPT), N_PROMPT);
    cr_assert(memcmp(ctx, p, sizeof p) == 0);
    assert_row(rows + (size_t)(N_PROMPT - 1) * (size_t)NV, s, "own session", N_PROMPT - 1);
    llm_telemetry t = telem(s);
    cr_assert_eq(t.prefill_tokens, N_PROMPT);
    cr_assert_eq(t.reused_tokens, 0);

    /* The last row equals a plain llm_prefill of the same tokens on the
     * same model; its full block comes from the prefix cache, which
     * proves all_logits committed it as llm_prefill does. */
    llm_session *c = session();
    cr_assert_eq(llm_prefill(c, p, N_PROMPT), LLM_OK, "%s", llm_session_last_error(c));
    cr_assert_eq(telem(c).reused_tokens, 16, "all_logits did not offer its full block to the prefix cache");
    assert_row(rows + (size_t)(N_PROMPT - 1) * (size_t)NV, c, "llm_prefill of all tokens", N_PROMPT - 1);

    /* Row i equals the logits after prefilling tokens[0..i] (in one pass,
     * on R). Rows differ from each other (guards against one row copied
     * everywhere). */
    llm_session *r = session_on(R);
    for (int32_t i = 0; i < N_PROMPT; i++) {
        cr_assert_eq(llm_session_reset(r), LLM_OK);
        cr_assert_eq(llm_prefill(r, p, i + 1), LLM_OK, "%s", llm_session_last_error(r));
        assert_row(rows + (size_t)i * (size_t)NV, r, "prefix", i);
        if (i > 0)
            cr_assert(memcmp(rows + (size_t)i * (size_t)NV, rows + (size_t)(i - 1) * (size_t)NV,
                             (size_t)NV * sizeof *rows) != 0, "rows %d and %d are equal", i - 1, i);
    }

    /* Again on a session whose prefix is cached: still every token computed
     * (rows need them), same rows. */
    float *again = rows_alloc(N_PROMPT);
    cr_assert_eq(llm_session_reset(s), LLM_OK);
    cr_assert_eq(llm_prefill_all_logits(s, p, N_PROMPT, again, (size_t)N_PROMPT * (size_t)NV), LLM_OK, "%s",
                 llm_session_last_error(s));
    t = telem(s);
    cr_assert_eq(t.prefill_tokens, N_PROMPT);
    cr_assert_eq(t.reused_tokens, 0);
    cr_assert(memcmp(rows, again, (size_t)N_PROMPT * (size_t)NV * sizeof *rows) == 0, "second run differs");

    /* Decoding continues from the last row like after llm_prefill: the
     * next token and the logits after it agree with session c's. */
    llm_token a, b;
    cr_assert_eq(llm_session_next_token(s, &a, NULL, NULL), LLM_OK, "%s", llm_session_last_error(s));
    cr_assert_eq(llm_session_next_token(c, &b, NULL, NULL), LLM_OK, "%s", llm_session_last_error(c));
    cr_assert_eq(a, b);
    cr_assert_eq(llm_session_next_token(s, &a, NULL, NULL), LLM_OK, "%s", llm_session_last_error(s));
    cr_assert_eq(llm_session_next_token(c, &b, NULL, NULL), LLM_OK, "%s", llm_session_last_error(c));
    cr_assert_eq(a, b);
    cr_assert_eq(llm_session_n_past(s), N_PROMPT + 1);

    free(again);
    free(rows);
    llm_session_free(r);
    llm_session_free(c);
    llm_session_free(s);
}

Test(all_logits, appends_after_context_and_pending_token, .fini = unload) {
    load();
    llm_token p[N_PROMPT];
    prompt(p);
    const int32_t head = 13, tail = 10; /* odd sizes: batches straddle block and chunk edges */

    /* head tokens, one greedy token sampled (pending, not yet computed),
     * then tail tokens with all logits: the pending token goes first and
     * gets no row, as with llm_prefill. */
    llm_session *s = session();
    cr_assert_eq(llm_prefill(s, p, head), LLM_OK, "%s", llm_session_last_error(s));
    llm_token pend;
    cr_assert_eq(llm_session_next_token(s, &pend, NULL, NULL), LLM_OK, "%s", llm_session_last_error(s));
    float *rows = rows_alloc(tail);
    cr_assert_eq(llm_prefill_all_logits(s, p + head, tail, rows, (size_t)tail * (size_t)NV), LLM_OK, "%s",
                 llm_session_last_error(s));
    cr_assert_eq(llm_session_n_past(s), head + 1 + tail);

    llm_token want[N_PROMPT + 1];
    memcpy(want, p, (size_t)head * sizeof *p);
    want[head] = pend;
    memcpy(want + head + 1, p + head, (size_t)tail * sizeof *p);
    llm_token got[N_PROMPT + 1];
    cr_assert_eq(llm_session_tokens(s, got, N_PROMPT + 1), head + 1 + tail);
    cr_assert(memcmp(got, want, (size_t)(head + 1 + tail) * sizeof *got) == 0);

    llm_session *r = session_on(R);
    for (int32_t i = 0; i < tail; i++) {
        cr_assert_eq(llm_session_reset(r), LLM_OK);
        cr_assert_eq(llm_prefill(r, want, head + 2 + i), LLM_OK, "%s", llm_session_last_error(r));
        assert_row(rows + (size_t)i * (size_t)NV, r, "after context + pending", i);
    }
    free(rows);
    llm_session_free(r);
    llm_session_free(s);
}

Test(all_logits, whole_context_in_one_pass_two_threads, .fini = unload) {
    /* Default n_batch (256, capped to n_ctx): the whole 64-token context in
     * one forward pass (the tests above cover the chunked case), with two
     * threads, on arbitrary (not text-like) token ids. */
    const char *path = getenv("LLM_DEFAULT_MODEL");
    if (!path || !*path || access(path, R_OK) != 0)
        cr_skip_test("default model not found (set LLM_DEFAULT_MODEL; scripts/setup.sh)");
    llm_model_params mp = llm_model_default_params();
    mp.backend = "cpu";
    mp.n_threads = 2;
    mp.n_ctx = 64;
    cr_assert_eq(llm_load_model(path, &mp, &M), LLM_OK, "load: %s", llm_last_error());
    llm_model_info info;
    llm_model_get_info(M, &info);
    NV = info.n_vocab;
    llm_token p[64];
    for (int32_t i = 0; i < 64; i++) p[i] = (llm_token)((i * 7919 + 13) % NV);
    float *rows = rows_alloc(64);
    llm_session *s = session();
    cr_assert_eq(llm_prefill_all_logits(s, p, 64, rows, (size_t)64 * (size_t)NV), LLM_OK, "%s",
                 llm_session_last_error(s));
    llm_session *r = session();
    for (int32_t i = 0; i < 64; i += 21) { /* 0, 21, 42, 63 */
        cr_assert_eq(llm_session_reset(r), LLM_OK);
        cr_assert_eq(llm_prefill(r, p, i + 1), LLM_OK, "%s", llm_session_last_error(r));
        assert_row(rows + (size_t)i * (size_t)NV, r, "n_ctx in one pass", i);
    }
    free(rows);
    llm_session_free(r);
    llm_session_free(s);
}

/* Each bad call fails with `want`, leaves a message, and changes nothing. */
static void bad(llm_session *s, const llm_token *t, int32_t n, float *out, size_t cap, llm_status want,
                const char *what) {
    int32_t before = llm_session_n_past(s);
    llm_status st = llm_prefill_all_logits(s, t, n, out, cap);
    cr_assert_eq(st, want, "%s: got %d (%s), want %d", what, st, llm_last_error(), want);
    cr_assert_neq(llm_last_error()[0], '\0', "%s: no message", what);
    if (s) {
        cr_assert_neq(llm_session_last_error(s)[0], '\0', "%s: no session message", what);
        cr_assert_eq(llm_session_n_past(s), before, "%s: context changed", what);
    }
}

Test(all_logits, bad_arguments, .fini = unload) {
    load();
    llm_token p[N_PROMPT];
    prompt(p);
    float *rows = rows_alloc(N_PROMPT);
    const size_t cap = (size_t)N_PROMPT * (size_t)NV;
    llm_session *s = session();
    cr_assert_eq(llm_prefill(s, p, 4), LLM_OK);
    const float *l4 = llm_session_logits(s);
    cr_assert_not_null(l4);
    float keep[8];
    memcpy(keep, l4, sizeof keep);

    bad(NULL, p, 4, rows, cap, LLM_ERR_INVALID_ARG, "NULL session");
    bad(s, NULL, 4, rows, cap, LLM_ERR_INVALID_ARG, "NULL tokens");
    bad(s, p, 0, rows, cap, LLM_ERR_INVALID_ARG, "n == 0");
    bad(s, p, -3, rows, cap, LLM_ERR_INVALID_ARG, "n < 0");
    bad(s, p, 4, NULL, cap, LLM_ERR_INVALID_ARG, "NULL logits");
    bad(s, p, 4, rows, 4 * (size_t)NV - 1, LLM_ERR_BUFFER_TOO_SMALL, "cap one float short");
    bad(s, p, 4, rows, 0, LLM_ERR_BUFFER_TOO_SMALL, "cap 0");
    llm_token badtok[3] = {p[0], (llm_token)NV, p[1]};
    bad(s, badtok, 3, rows, cap, LLM_ERR_INVALID_ARG, "token id == n_vocab");
    badtok[1] = -1;
    bad(s, badtok, 3, rows, cap, LLM_ERR_INVALID_ARG, "negative token id");
    /* 4 in context + 61 > n_ctx 64: refused before computing anything. */
    llm_token many[61];
    for (int32_t i = 0; i < 61; i++) many[i] = p[i % N_PROMPT];
    float *big = rows_alloc(61);
    bad(s, many, 61, big, (size_t)61 * (size_t)NV, LLM_CONTEXT_FULL, "context full");
    free(big);

    /* Nothing above touched the session: its logits are still there, and
     * exactly n rows fit when cap is exact. */
    const float *l = llm_session_logits(s);
    cr_assert_not_null(l, "a refused call dropped the logits");
    cr_assert(memcmp(l, keep, sizeof keep) == 0);
    cr_assert_eq(llm_prefill_all_logits(s, p + 4, 3, rows, 3 * (size_t)NV), LLM_OK, "%s",
                 llm_session_last_error(s));
    cr_assert_eq(llm_session_n_past(s), 7);

    /* A pending cancel request stops the call before any work. */
    llm_session_cancel(s);
    cr_assert_eq(llm_prefill_all_logits(s, p + 7, 3, rows, cap), LLM_CANCELLED);
    cr_assert_eq(llm_session_n_past(s), 7);

    free(rows);
    llm_session_free(s);
}
