/* Prefill: the entry points that put text into a session's context.
 *
 *   llm_prefill             appends tokens
 *   llm_prefill_all_logits  appends tokens, and wants every new row
 *   llm_prefill_context     replaces the context, keeping the common prefix
 *
 * Each edits s->ctx (tokens, and n_cached where the cached prefix shrinks)
 * and calls llm__session_compute() (engine_context.c), the one compute
 * step, which computes tokens[n_cached..n). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

#define SFAIL(s, st, ...) llm__fail((s)->err, (st), __VA_ARGS__)

/* Consumes a pending cancel request. */
static bool take_cancel(llm_session *s) { return atomic_exchange(&s->cancel, 0) != 0; }

/* ---- entry points ------------------------------------------------------- */

static llm_status check_tokens(llm_session *s, const llm_token *t, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        if (t[i] < 0 || t[i] >= s->m->info.n_vocab)
            return SFAIL(s, LLM_ERR_INVALID_ARG, "token id %d at index %d is outside [0, %d)", t[i], i,
                         s->m->info.n_vocab);
    return LLM_OK;
}

/* llm_prefill, and with `all` llm_prefill_all_logits (arguments checked):
 * the new tokens follow the context, including a pending sampled token,
 * which is computed in the same first pass and gets no row. */
static llm_status prefill_append(llm_session *s, const llm_token *tokens, int32_t n, float *all) {
    llm__context *c = &s->ctx;
    llm_status st = check_tokens(s, tokens, n);
    if (st != LLM_OK) return st;
    if (c->n + n == 0) return SFAIL(s, LLM_ERR_INVALID_ARG, "llm_prefill: nothing to compute");
    if ((int64_t)c->n + n > s->n_ctx)
        return SFAIL(s, LLM_CONTEXT_FULL, "prompt does not fit: %d tokens in context + %d new > context size %d",
                     c->n_cached, c->n - c->n_cached + n, s->n_ctx);
    if (take_cancel(s)) return SFAIL(s, LLM_CANCELLED, "cancelled");
    if ((st = llm__ctx_reserve(s, c->n + n)) != LLM_OK) return st;
    const int32_t rows_from = c->n;
    if (n) memcpy(c->tokens + c->n, tokens, (size_t)n * sizeof *tokens);
    c->n += n;
    if (c->n_cached == c->n) c->n_cached--; /* nothing new: recompute the last token for its logits */
    if (n > 0) llm__constraint_restart(s->gen.con); /* a new answer; n == 0 continues this one */
    st = llm__session_compute(s, all, rows_from, false);
    llm__session_start_generation(s);
    return st;
}

llm_status llm_prefill(llm_session *s, const llm_token *tokens, int32_t n) {
    if (!s || n < 0 || (!tokens && n)) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_prefill: invalid argument");
    return prefill_append(s, tokens, n, NULL);
}

llm_status llm_prefill_all_logits(llm_session *s, const llm_token *tokens, int32_t n, float *logits,
                                  size_t cap) {
    if (!s) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_prefill_all_logits: NULL session");
    if (!tokens || n <= 0)
        return SFAIL(s, LLM_ERR_INVALID_ARG, "llm_prefill_all_logits: need at least one token (n = %d%s)", n,
                     tokens ? "" : ", tokens NULL");
    if (!logits) return SFAIL(s, LLM_ERR_INVALID_ARG, "llm_prefill_all_logits: logits is NULL");
    const size_t need = (size_t)n * (size_t)s->m->info.n_vocab;
    if (cap < need)
        return SFAIL(s, LLM_ERR_BUFFER_TOO_SMALL,
                     "llm_prefill_all_logits: logits holds %zu floats, %d tokens x %d vocab need %zu", cap, n,
                     s->m->info.n_vocab, need);
    return prefill_append(s, tokens, n, logits);
}

llm_status llm_prefill_context(llm_session *s, const llm_token *tokens, int32_t n) {
    if (!s || n <= 0 || !tokens)
        return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_prefill_context: need at least one token");
    llm__context *c = &s->ctx;
    llm_status st = check_tokens(s, tokens, n);
    if (st != LLM_OK) return st;
    if (n > s->n_ctx)
        return SFAIL(s, LLM_CONTEXT_FULL, "prompt does not fit: %d tokens > context size %d", n, s->n_ctx);
    if (take_cancel(s)) return SFAIL(s, LLM_CANCELLED, "cancelled");
    if ((st = llm__ctx_reserve(s, n)) != LLM_OK) return st;
    /* The same context again continues the answer; anything else starts a new one. */
    if (n != c->n || memcmp(c->tokens, tokens, (size_t)n * sizeof *tokens) != 0) llm__constraint_restart(s->gen.con);
    int32_t keep = 0;
    while (keep < c->n_cached && keep < n && c->tokens[keep] == tokens[keep]) keep++;
    if (keep == n) keep = n - 1; /* recompute the last token for its logits */
    memcpy(c->tokens + keep, tokens + keep, (size_t)(n - keep) * sizeof *tokens);
    c->n = n;
    c->n_cached = keep;
    st = llm__session_compute(s, NULL, 0, false);
    llm__session_start_generation(s);
    return st;
}
