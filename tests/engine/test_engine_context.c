/* The session compute model (engine_prefill.c, engine_decode.c): a
 * session's context holds every token of the conversation, n_past of them
 * computed into the KV cache; every entry point edits the context and runs
 * one compute step. These tests pin the context each entry point leaves:
 *
 *   - a sampled token joins the context at once but is computed by the next
 *     step, so n_past lags by one while a token is pending, and a prefill
 *     after decoding computes the pending token first (no token lost, none
 *     doubled);
 *   - an end-of-generation token never enters the context;
 *   - a prefill that is refused (context full) changes nothing; a cancelled
 *     one keeps exactly the computed prefix;
 *   - truncate and prefill_context edit the context and recompute only what
 *     changed; the logits after any sequence of edits equal those of a fresh
 *     session prefilled with the same tokens in the same passes.
 *
 * The reference for logits is a fresh session on the same model given the
 * same tokens with the same pass boundaries, so equality is bit for bit. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llama/engine.h"

static llm_model *M;
static int32_t NV;

static void load(void) {
    const char *p = getenv("LLM_DEFAULT_MODEL");
    if (!p || !*p || access(p, R_OK) != 0)
        cr_skip_test("default model not found (set LLM_DEFAULT_MODEL; scripts/setup.sh)");
    llm_model_params mp = llm_model_default_params();
    mp.backend = "cpu";
    mp.n_threads = 1;
    mp.n_ctx = 64;
    mp.kv_tokens = 512;
    mp.kv_block_size = 16;
    mp.prefix_cache = false; /* every computed token is computed here, not reused */
    cr_assert_eq(llm_load_model(p, &mp, &M), LLM_OK, "load: %s", llm_last_error());
    llm_model_info info;
    cr_assert_eq(llm_model_get_info(M, &info), LLM_OK);
    NV = info.n_vocab;
}

static void unload(void) {
    llm_model_free(M);
    M = NULL;
}

static llm_session *greedy_session(void) {
    llm_session_params sp = llm_session_default_params();
    sp.sampling.temperature = 0.0f;
    llm_session *s;
    cr_assert_eq(llm_session_new(M, &sp, &s), LLM_OK, "%s", llm_last_error());
    return s;
}

static int32_t tok(const char *text, llm_token *out, int32_t cap) {
    int32_t n = 0;
    cr_assert_eq(llm_tokenize(M, text, strlen(text), 0, out, cap, &n), LLM_OK, "%s", llm_last_error());
    return n;
}

static int32_t ctx_tokens(const llm_session *s, llm_token *out) {
    int32_t n = llm_session_tokens(s, out, 64);
    cr_assert_geq(n, 0);
    cr_assert_eq(n, llm_session_n_past(s));
    return n;
}

Test(context, pending_token_is_computed_by_the_next_step, .init = load, .fini = unload) {
    llm_token p[64], q[64], got[64], want[64];
    int32_t np = tok("The capital of France is", p, 64);
    int32_t nq = tok(" Also,", q, 64);
    llm_session *s = greedy_session();
    cr_assert_eq(llm_prefill(s, p, np), LLM_OK, "%s", llm_session_last_error(s));
    llm_token t1, t2;
    cr_assert_eq(llm_session_next_token(s, &t1, NULL, NULL), LLM_OK);
    /* t1 is pending: not computed yet, no logits ready. */
    cr_assert_eq(llm_session_n_past(s), np);
    cr_assert_null(llm_session_logits(s));
    cr_assert_eq(llm_session_next_token(s, &t2, NULL, NULL), LLM_OK);
    cr_assert_eq(llm_session_n_past(s), np + 1, "the decode step computed t1");
    /* The prefill computes t2 (pending) in its first pass, then q. */
    cr_assert_eq(llm_prefill(s, q, nq), LLM_OK, "%s", llm_session_last_error(s));
    int32_t n = ctx_tokens(s, got);
    memcpy(want, p, (size_t)np * sizeof *p);
    want[np] = t1;
    want[np + 1] = t2;
    memcpy(want + np + 2, q, (size_t)nq * sizeof *q);
    cr_assert_eq(n, np + 2 + nq);
    cr_assert_arr_eq(got, want, (size_t)n * sizeof *got);

    /* Reference: the same tokens in the same passes (p; t1 alone; t2 + q). */
    llm_session *r = greedy_session();
    cr_assert_eq(llm_prefill(r, p, np), LLM_OK);
    cr_assert_eq(llm_prefill(r, &t1, 1), LLM_OK);
    cr_assert_eq(llm_prefill(r, want + np + 1, 1 + nq), LLM_OK);
    cr_assert_arr_eq(llm_session_logits(s), llm_session_logits(r), (size_t)NV * sizeof(float));
    llm_session_free(r);
    llm_session_free(s);
}

Test(context, refused_prefill_changes_nothing, .init = load, .fini = unload) {
    llm_token p[64], big[80], before[64], after[64];
    int32_t np = tok("Hello there, how are you today?", p, 64);
    for (int i = 0; i < 80; i++) big[i] = p[i % np];
    llm_session *s = greedy_session();
    cr_assert_eq(llm_prefill(s, p, np), LLM_OK);
    llm_token t;
    cr_assert_eq(llm_session_next_token(s, &t, NULL, NULL), LLM_OK); /* t pending */
    int32_t n0 = ctx_tokens(s, before);
    cr_assert_eq(llm_prefill(s, big, 64 - np), LLM_CONTEXT_FULL, "np + pending + new > 64");
    int32_t n1 = ctx_tokens(s, after);
    cr_assert_eq(n0, n1);
    cr_assert_arr_eq(before, after, (size_t)n0 * sizeof *before);
    /* The pending token is still there: a one-token prefill fits and computes it. */
    cr_assert_eq(llm_prefill(s, big, 64 - np - 1), LLM_OK, "%s", llm_session_last_error(s));
    cr_assert_eq(llm_session_n_past(s), 64);
    cr_assert_eq(llm_session_next_token(s, &t, NULL, NULL), LLM_OK);
    cr_assert_eq(llm_session_next_token(s, &t, NULL, NULL), LLM_CONTEXT_FULL);
    llm_session_free(s);
}

Test(context, truncate_and_replace_recompute_only_the_change, .init = load, .fini = unload) {
    llm_token a[64], b[64], got[64];
    int32_t na = tok("One two three four five six seven eight nine ten", a, 64);
    llm_session *s = greedy_session();
    cr_assert_eq(llm_prefill(s, a, na), LLM_OK);
    cr_assert_eq(llm_session_truncate(s, na - 3), LLM_OK);
    cr_assert_eq(llm_session_n_past(s), na - 3);
    cr_assert_null(llm_session_logits(s));
    cr_assert_eq(llm_session_truncate(s, na), LLM_ERR_INVALID_ARG, "cannot grow by truncating");
    /* prefill_context with a different tail: keeps the common prefix. */
    memcpy(b, a, (size_t)na * sizeof *a);
    b[na - 1] = a[0];
    cr_assert_eq(llm_prefill_context(s, b, na), LLM_OK, "%s", llm_session_last_error(s));
    llm_telemetry t;
    cr_assert_eq(llm_session_telemetry(s, &t), LLM_OK);
    cr_assert_eq(t.prefill_tokens, 3, "only the 3 tokens after the kept prefix are computed");
    cr_assert_eq(t.reused_tokens, na - 3);
    cr_assert_eq(ctx_tokens(s, got), na);
    cr_assert_arr_eq(got, b, (size_t)na * sizeof *b);
    /* The same context again: the last token is recomputed for its logits. */
    cr_assert_eq(llm_prefill_context(s, b, na), LLM_OK);
    cr_assert_eq(llm_session_telemetry(s, &t), LLM_OK);
    cr_assert_eq(t.prefill_tokens, 1);
    /* Reference: the same passes (na - 3, then 2, then the last alone). */
    llm_session *r = greedy_session();
    cr_assert_eq(llm_prefill(r, b, na - 3), LLM_OK);
    cr_assert_eq(llm_prefill(r, b + na - 3, 2), LLM_OK);
    cr_assert_eq(llm_prefill(r, b + na - 1, 1), LLM_OK);
    cr_assert_arr_eq(llm_session_logits(s), llm_session_logits(r), (size_t)NV * sizeof(float));
    /* An empty prefill recomputes the last token too: same pass shape, same bits. */
    cr_assert_eq(llm_prefill(s, NULL, 0), LLM_OK);
    cr_assert_arr_eq(llm_session_logits(s), llm_session_logits(r), (size_t)NV * sizeof(float));
    cr_assert_eq(llm_session_n_past(s), na);
    llm_session_free(r);
    llm_session_free(s);
}

Test(context, end_of_generation_never_enters, .init = load, .fini = unload) {
    /* A chat turn the instruct model ends with <|im_end|> within a few tokens. */
    static const char chat[] = "<|im_start|>user\nSay just the word yes.<|im_end|>\n<|im_start|>assistant\n";
    llm_token p[64], want[64], got[64];
    int32_t np = 0;
    cr_assert_eq(llm_tokenize(M, chat, strlen(chat), LLM_ENCODE_PARSE_SPECIAL, p, 64, &np), LLM_OK);
    llm_session *s = greedy_session();
    cr_assert_eq(llm_prefill(s, p, np), LLM_OK);
    memcpy(want, p, (size_t)np * sizeof *p);
    int32_t n = np;
    llm_status st = LLM_OK;
    llm_token t = LLM_TOKEN_NULL;
    while (st == LLM_OK && n < 60) {
        st = llm_session_next_token(s, &t, NULL, NULL);
        if (st == LLM_OK) want[n++] = t;
    }
    cr_assert_eq(st, LLM_END_OF_STREAM, "the model ends its answer (%s)", llm_session_last_error(s));
    cr_assert(llm_token_is_eog(M, t));
    /* Every answer token was computed (the EOG step computed the last one);
     * the EOG token itself is not in the context. */
    cr_assert_eq(ctx_tokens(s, got), n);
    cr_assert_arr_eq(got, want, (size_t)n * sizeof *got);
    /* The next turn continues right after the answer. */
    llm_token q[8];
    int32_t nq = tok(" ok", q, 8);
    cr_assert_eq(llm_prefill(s, q, nq), LLM_OK);
    cr_assert_eq(llm_session_n_past(s), n + nq);
    llm_session_free(s);
}
