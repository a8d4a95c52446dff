/*
 * chain.c -- the sampler chain: samplers, their parameters and per-sampler
 * state (penalty history), and the sample() driver.
 *
 * During sample() the candidates are either DENSE (the whole vocabulary,
 * position == token id, read from the caller's array until a sampler needs
 * to write, then from a private copy: copy-on-write) or SPARSE (a list of
 * (id, logit) in one of two ping-pong buffers). Every buffer is sized for
 * n_vocab_max at create time.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "chain_internal.h"
#include "llama/error.h"

LLM__DEFINE_FAIL(llm__sampling_fail, LLM__ERR_SAMPLING)

const char *llm_sampling_last_error(void) { return llm__err_get(LLM__ERR_SAMPLING); }

const char *llm_sampling_version(void) { return "0.1.0"; }

llm_sampler_chain_params llm_sampler_chain_default_params(void) {
    llm_sampler_chain_params p;
    p.n_vocab_max = 262144;
    p.seed = 0x5eed;
    return p;
}

void llm_sampler_chain_free(llm_sampler_chain *ch) {
    if (!ch) return;
    for (size_t i = 0; i < ch->n_s; i++) {
        free(ch->s[i].bias);
        free(ch->s[i].ring);
        free(ch->s[i].count);
    }
    free(ch->s);
    free(ch->work);
    free(ch->iota);
    for (int b = 0; b < 2; b++) {
        free(ch->cid[b]);
        free(ch->cx[b]);
    }
    free(ch->scratch.keys);
    free(ch->scratch.blocks);
    free(ch->pslot);
    free(ch->pid);
    free(ch->pval);
    free(ch);
}

llm_status llm_sampler_chain_create(const llm_sampler_chain_params *params,
                                    llm_sampler_chain **out) {
    if (out) *out = NULL;
    if (!params || !out) return llm__sampling_fail(LLM_ERR_INVALID_ARG, "NULL argument");
    if (params->n_vocab_max <= 0)
        return llm__sampling_fail(LLM_ERR_INVALID_ARG, "n_vocab_max must be > 0 (got %d)",
                                  (int)params->n_vocab_max);
    llm_sampler_chain *ch = calloc(1, sizeof *ch);
    if (!ch) return llm__sampling_fail(LLM_ERR_NO_MEMORY, "out of memory");
    size_t v = (size_t)params->n_vocab_max;
    ch->n_vocab_max = params->n_vocab_max;
    ch->seed = params->seed;
    ch->work = malloc(v * sizeof(float));
    ch->iota = malloc(v * sizeof(int32_t));
    for (int b = 0; b < 2; b++) {
        ch->cid[b] = malloc(v * sizeof(int32_t));
        ch->cx[b] = malloc(v * sizeof(float));
    }
    ch->scratch.keys = malloc(v * sizeof(uint64_t));
    ch->scratch.blocks = malloc((v / 256 + 1) * sizeof(float));
    ch->pslot = malloc(v * sizeof(int32_t));
    ch->pid = malloc(LLM__PATCH_CAP * sizeof(int32_t));
    ch->pval = malloc(LLM__PATCH_CAP * sizeof(float));
    if (!ch->work || !ch->iota || !ch->cid[0] || !ch->cid[1] || !ch->cx[0] || !ch->cx[1] ||
        !ch->scratch.keys || !ch->scratch.blocks || !ch->pslot || !ch->pid || !ch->pval) {
        llm_sampler_chain_free(ch);
        return llm__sampling_fail(LLM_ERR_NO_MEMORY, "out of memory for %zu-token buffers", v);
    }
    for (size_t i = 0; i < v; i++) {
        ch->iota[i] = (int32_t)i;
        ch->pslot[i] = -1;
    }
    *out = ch;
    return LLM_OK;
}

/* ---- adders -------------------------------------------------------------- */

static llm_status push(llm_sampler_chain *ch, const sampler *s) {
    if (ch->n_s > 0) {
        sampler_kind k = ch->s[ch->n_s - 1].kind;
        if (k == K_GREEDY || k == K_DIST)
            return llm__sampling_fail(LLM_ERR_STATE,
                                      "the chain already ends with a selector (greedy/dist)");
    }
    if (ch->n_s == ch->cap_s) {
        size_t cap = ch->cap_s ? ch->cap_s * 2 : 8;
        sampler *ns = realloc(ch->s, cap * sizeof *ns);
        if (!ns) return llm__sampling_fail(LLM_ERR_NO_MEMORY, "out of memory");
        ch->s = ns;
        ch->cap_s = cap;
    }
    ch->s[ch->n_s++] = *s;
    return LLM_OK;
}

static llm_status bad(const char *what) {
    return llm__sampling_fail(LLM_ERR_INVALID_ARG, "%s", what);
}

static int cmp_bias(const void *a, const void *b) {
    int32_t x = ((const llm_logit_bias *)a)->token, y = ((const llm_logit_bias *)b)->token;
    return (x > y) - (x < y);
}

llm_status llm_sampler_chain_add_logit_bias(llm_sampler_chain *ch, const llm_logit_bias *bias,
                                            size_t n_bias) {
    if (!ch || (!bias && n_bias > 0)) return bad("NULL argument");
    for (size_t i = 0; i < n_bias; i++) {
        if (bias[i].token < 0 || bias[i].token >= ch->n_vocab_max)
            return llm__sampling_fail(LLM_ERR_INVALID_ARG, "logit bias token %d out of range",
                                      (int)bias[i].token);
        if (bias[i].bias != bias[i].bias) return bad("logit bias is NaN");
    }
    sampler s = {.kind = K_BIAS};
    if (n_bias > 0) {
        s.bias = malloc(n_bias * sizeof *s.bias);
        if (!s.bias) return llm__sampling_fail(LLM_ERR_NO_MEMORY, "out of memory");
        memcpy(s.bias, bias, n_bias * sizeof *s.bias);
        /* Sort by token (stable order of equal tokens does not matter: sums
         * are formed below in input order of the sorted array, and equal
         * tokens are merged by adding in that order). */
        qsort(s.bias, n_bias, sizeof *s.bias, cmp_bias);
        size_t w = 0;
        for (size_t r = 0; r < n_bias; r++) {
            if (w > 0 && s.bias[w - 1].token == s.bias[r].token)
                s.bias[w - 1].bias += s.bias[r].bias;
            else
                s.bias[w++] = s.bias[r];
        }
        s.n_bias = w;
    }
    llm_status st = push(ch, &s);
    if (st != LLM_OK) free(s.bias);
    return st;
}

llm_status llm_sampler_chain_add_penalties(llm_sampler_chain *ch, int32_t window, float repeat,
                                           float frequency, float presence) {
    if (!ch) return bad("NULL chain");
    if (window < 0) return bad("penalty window must be >= 0");
    if (!(repeat > 0.0f) || !is_finite_f(repeat)) return bad("repeat penalty must be > 0");
    if (!is_finite_f(frequency) || !is_finite_f(presence)) return bad("penalty not finite");
    sampler s = {.kind = K_PENALTIES, .f = repeat, .freq = frequency, .pres = presence,
                 .i = window};
    if (window > 0) {
        s.ring = malloc((size_t)window * sizeof(int32_t));
        s.count = calloc((size_t)ch->n_vocab_max, sizeof(int32_t));
        if (!s.ring || !s.count) {
            free(s.ring);
            free(s.count);
            return llm__sampling_fail(LLM_ERR_NO_MEMORY, "out of memory");
        }
    }
    llm_status st = push(ch, &s);
    if (st != LLM_OK) {
        free(s.ring);
        free(s.count);
    }
    return st;
}

llm_status llm_sampler_chain_add_top_k(llm_sampler_chain *ch, int32_t k) {
    if (!ch) return bad("NULL chain");
    sampler s = {.kind = K_TOP_K, .i = k};
    return push(ch, &s);
}

static llm_status add_p(llm_sampler_chain *ch, sampler_kind kind, float p, size_t min_keep,
                        bool zero_ok) {
    if (!ch) return bad("NULL chain");
    if (!(zero_ok ? p >= 0.0f : p > 0.0f) || !(p <= 1.0f))
        return llm__sampling_fail(LLM_ERR_INVALID_ARG, "p out of range: %g", (double)p);
    sampler s = {.kind = kind, .f = p, .min_keep = min_keep};
    return push(ch, &s);
}

llm_status llm_sampler_chain_add_top_p(llm_sampler_chain *ch, float p, size_t min_keep) {
    return add_p(ch, K_TOP_P, p, min_keep, false);
}
llm_status llm_sampler_chain_add_min_p(llm_sampler_chain *ch, float p, size_t min_keep) {
    return add_p(ch, K_MIN_P, p, min_keep, true);
}
llm_status llm_sampler_chain_add_typical(llm_sampler_chain *ch, float p, size_t min_keep) {
    return add_p(ch, K_TYPICAL, p, min_keep, false);
}

llm_status llm_sampler_chain_add_temperature(llm_sampler_chain *ch, float t) {
    if (!ch) return bad("NULL chain");
    if (t != t || t == INFINITY) return bad("temperature must be finite");
    sampler s = {.kind = K_TEMPERATURE, .f = t};
    return push(ch, &s);
}

llm_status llm_sampler_chain_add_mask(llm_sampler_chain *ch, llm_sampler_mask_fn fn, void *user) {
    if (!ch || !fn) return bad("NULL argument");
    sampler s = {.kind = K_MASK, .fn = fn, .user = user};
    return push(ch, &s);
}

llm_status llm_sampler_chain_add_greedy(llm_sampler_chain *ch) {
    if (!ch) return bad("NULL chain");
    sampler s = {.kind = K_GREEDY};
    return push(ch, &s);
}

llm_status llm_sampler_chain_add_dist(llm_sampler_chain *ch) {
    if (!ch) return bad("NULL chain");
    sampler s = {.kind = K_DIST};
    return push(ch, &s);
}

size_t llm_sampler_chain_length(const llm_sampler_chain *ch) { return ch ? ch->n_s : 0; }

/* ---- history -------------------------------------------------------------- */

llm_status llm_sampler_chain_accept(llm_sampler_chain *ch, int32_t token) {
    if (!ch) return bad("NULL chain");
    if (token < 0 || token >= ch->n_vocab_max)
        return llm__sampling_fail(LLM_ERR_INVALID_ARG, "token %d out of range", (int)token);
    for (size_t k = 0; k < ch->n_s; k++) {
        sampler *s = &ch->s[k];
        if (s->kind != K_PENALTIES || s->i == 0) continue;
        size_t w = (size_t)s->i;
        if (s->ring_len == w) { /* full: evict the oldest, at ring_head */
            s->count[s->ring[s->ring_head]]--;
            s->ring[s->ring_head] = token;
            s->ring_head = (s->ring_head + 1) % w;
        } else {
            s->ring[(s->ring_head + s->ring_len) % w] = token;
            s->ring_len++;
        }
        s->count[token]++;
    }
    return LLM_OK;
}

void llm_sampler_chain_reset(llm_sampler_chain *ch) {
    if (!ch) return;
    for (size_t k = 0; k < ch->n_s; k++) {
        sampler *s = &ch->s[k];
        if (s->kind != K_PENALTIES || s->i == 0) continue;
        for (size_t r = 0; r < s->ring_len; r++) s->count[s->ring[(s->ring_head + r) % (size_t)s->i]] = 0;
        s->ring_len = 0;
        s->ring_head = 0;
    }
    ch->rng_n = 0;
    ch->last_n = 0;
}

void llm_sampler_chain_set_seed(llm_sampler_chain *ch, uint64_t seed) {
    if (!ch) return;
    ch->seed = seed;
    ch->rng_n = 0;
}
