/* Decoding: sampling the next token from a session's logits and turning it
 * into text. A sampled token joins the context at once (so the user's view
 * and the context agree) but is computed only by the next step (a decode
 * step, or the next prefill, which computes it in its first pass). So when
 * generation stops, nothing was computed that is not part of the
 * conversation, and an end-of-generation token never enters the context. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

#define SFAIL(s, st, ...) llm__fail((s)->err, (st), __VA_ARGS__)

/* The pull API's text buffer: cleared per token, then appended to. The
 * sources (detokenizer, stop matcher) own their text only until their next
 * call, so it is copied here right away. */
static llm_status text_append(llm_session *s, size_t *used, const char *a, size_t na) {
    llm__generation *g = &s->gen;
    if (*used + na + 1 > g->text_cap) {
        size_t cap = g->text_cap ? g->text_cap : 64;
        while (cap < *used + na + 1) cap *= 2;
        char *t = realloc(g->text, cap);
        if (!t) return SFAIL(s, LLM_ERR_NO_MEMORY, "out of memory");
        g->text = t;
        g->text_cap = cap;
    }
    if (na) memcpy(g->text + *used, a, na);
    *used += na;
    g->text[*used] = '\0';
    return LLM_OK;
}

/* Feeds a piece of detokenized text through the stop matcher into the text
 * buffer. Returns LLM_OK, LLM_END_OF_STREAM (a stop string matched) or an
 * error. */
static llm_status emit(llm_session *s, size_t *used, const char *piece, size_t npiece) {
    const char *out = "";
    size_t nout = 0;
    llm_status ms = llm_stop_matcher_feed(s->gen.stop, piece, npiece, &out, &nout);
    if (ms < 0) return SFAIL(s, ms, "%s", llm_sampling_last_error());
    llm_status st = text_append(s, used, out, nout);
    return st != LLM_OK ? st : ms;
}

llm_status llm_session_next_token(llm_session *s, llm_token *tok_out, const char **text, size_t *len) {
    if (tok_out) *tok_out = LLM_TOKEN_NULL;
    if (text) *text = "";
    if (len) *len = 0;
    if (!s) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_session_next_token: NULL session");
    if (atomic_exchange(&s->cancel, 0)) return SFAIL(s, LLM_CANCELLED, "cancelled");
    if (s->gen.stopped) return SFAIL(s, LLM_END_OF_STREAM, "a stop string ended the generation");
    llm_model *m = s->m;
    llm__context *c = &s->ctx;
    llm__session_stats *x = &s->stats;
    double t0 = llm__now_ms();
    if (c->n_cached < c->n) {
        if (c->n > s->n_ctx) return SFAIL(s, LLM_CONTEXT_FULL, "context full (%d tokens)", s->n_ctx);
        llm_status st = llm__session_compute(s, NULL, 0, true);
        if (st != LLM_OK) return st;
    }
    if (!s->logits_ready) return SFAIL(s, LLM_ERR_STATE, "no logits: prefill a prompt before decoding");
    int32_t tok;
    llm_status st = llm_sampler_chain_sample(s->gen.chain, s->logits, m->info.n_vocab, &tok);
    if (st != LLM_OK) return SFAIL(s, st, "sampling: %s", llm_sampling_last_error());
    if (s->gen.con && (st = llm__constraint_accept(s->gen.con, c->n, tok, s->err)) != LLM_OK) return st;
    llm_sampler_chain_accept(s->gen.chain, tok);
    const bool eog = llm__model_is_eog(m, tok);
    if (!eog) {
        /* The token joins the context; the next step computes it. */
        if ((st = llm__ctx_reserve(s, c->n + 1)) != LLM_OK) return st;
        c->tokens[c->n++] = tok;
    }
    s->logits_ready = false; /* they belong to the step just sampled */
    double t1 = llm__now_ms();
    if (x->decode_tokens == 0) x->ttft_ms = t1 - x->t_prefill_start;
    x->decode_tokens++;
    x->total_decode++;
    x->decode_ms += t1 - t0;
    if (tok_out) *tok_out = tok;

    const char *piece = "", *out = "";
    size_t npiece = 0, nout = 0, used = 0;
    if ((st = text_append(s, &used, "", 0)) != LLM_OK) return st;
    if (eog) {
        /* Never computed, never shown. Release what the detokenizer and the
         * stop matcher still hold. */
        s->gen.stopped = true;
        llm_detokenizer_flush(s->gen.detok, &piece, &npiece);
        llm_status ms = emit(s, &used, piece, npiece);
        if (ms == LLM_OK && llm_stop_matcher_flush(s->gen.stop, &out, &nout) == LLM_OK)
            ms = text_append(s, &used, out, nout);
        if (ms < 0) return ms;
        if (text) *text = s->gen.text;
        if (len) *len = used;
        return SFAIL(s, LLM_END_OF_STREAM, "end-of-generation token %d", tok);
    }
    st = llm_detokenizer_push(s->gen.detok, tok, &piece, &npiece);
    if (st != LLM_OK) return SFAIL(s, st, "%s", llm_tokenizer_last_error());
    st = emit(s, &used, piece, npiece);
    if (st < 0) return st;
    if (text) *text = s->gen.text;
    if (len) *len = used;
    if (st == LLM_END_OF_STREAM) {
        s->gen.stopped = true;
        return SFAIL(s, LLM_END_OF_STREAM, "stop string matched");
    }
    return LLM_OK;
}

llm_status llm_decode(llm_session *s, int32_t max_tokens, llm_token_callback cb, void *user) {
    if (!s) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_decode: NULL session");
    for (int32_t i = 0; max_tokens <= 0 || i < max_tokens; i++) {
        llm_token tok;
        const char *text;
        size_t len;
        llm_status st = llm_session_next_token(s, &tok, &text, &len);
        if (st == LLM_OK || st == LLM_END_OF_STREAM) {
            if (cb && (len || st == LLM_OK) && !cb(text, len, tok, user)) return LLM_OK;
            if (st == LLM_END_OF_STREAM) return st;
            continue;
        }
        return st;
    }
    return LLM_OK;
}
