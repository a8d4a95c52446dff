/*
 * gbnf_vocab.c -- token bytes, flags, and a byte trie of the text tokens.
 *
 * Text tokens (neither EOG nor special, non-empty) are sorted by bytes; the
 * trie is stored in pre-order, so a node's subtree is the node range
 * [i, skip) and its tokens the sorted range [lo, hi): a walk that rejects a
 * prefix skips its whole subtree in one step.
 */
#include <stdlib.h>
#include <string.h>

#include "gbnf_internal.h"

static int cmp_tokens(const llm_grammar_vocab *v, int32_t x, int32_t y) {
    size_t lx = v->off[x + 1] - v->off[x], ly = v->off[y + 1] - v->off[y];
    int c = memcmp(v->bytes + v->off[x], v->bytes + v->off[y], lx < ly ? lx : ly);
    if (c) return c;
    if (lx != ly) return lx < ly ? -1 : 1;
    return x < y ? -1 : 1;
}

/* Bottom-up merge sort of the text tokens by bytes (qsort has no context). */
static llm_status sort_tokens(llm_grammar_vocab *v) {
    int32_t n = v->n_text;
    int32_t *a = v->sorted, *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    if (!tmp) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    for (int32_t w = 1; w < n; w *= 2) {
        for (int32_t lo = 0; lo < n; lo += 2 * w) {
            int32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = cmp_tokens(v, a[i], a[j]) <= 0 ? a[i++] : a[j++];
            while (i < mid) tmp[k++] = a[i++];
            while (j < hi) tmp[k++] = a[j++];
        }
        memcpy(a, tmp, (size_t)n * sizeof *a);
    }
    free(tmp);
    return LLM_OK;
}

/* GBELOW_* of one token's bytes. */
static uint8_t token_flags(const uint8_t *b, size_t len) {
    gpartial p = {0, 0};
    uint8_t f = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t cp;
        int r = llm__gutf8_step(&p, b[i], &cp);
        if (r < 0) return GBELOW_BAD;
        if (r > 0 && b[i] >= 0x80) f |= (cp < 0x80 || cp > 0x10FFFF) ? GBELOW_BAD : GBELOW_NONASCII;
    }
    return p.n_remain ? (uint8_t)(f | GBELOW_BAD) : f;
}

/* The bytes and token flags below each trie node, for trie walks that
 * accept a whole subtree at once (see gbnf_mask.c). */
static llm_status build_below(llm_grammar_vocab *v) {
    const gtrie_node *t = v->trie;
    uint32_t n = v->n_nodes;
    v->below = calloc(n ? n : 1, sizeof *v->below);
    v->below_flags = calloc(n ? n : 1, 1);
    if (!v->below || !v->below_flags) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    for (uint32_t i = n; i-- > 0;) { /* children come after their parent */
        uint64_t m[2] = {0, 0};
        uint8_t f = 0;
        for (uint32_t k = t[i].lo; k < t[i].lo + t[i].n_end; k++) {
            int32_t tok = v->sorted[k];
            f |= token_flags((const uint8_t *)v->bytes + v->off[tok], v->off[tok + 1] - v->off[tok]);
        }
        for (uint32_t j = i + 1; j < t[i].skip; j = t[j].skip) {
            m[0] |= v->below[j][0];
            m[1] |= v->below[j][1];
            if (t[j].byte < 0x80) m[t[j].byte >> 6] |= 1ull << (t[j].byte & 63);
            f |= v->below_flags[j];
        }
        v->below[i][0] = m[0];
        v->below[i][1] = m[1];
        v->below_flags[i] = f;
    }
    return LLM_OK;
}

static llm_status build_trie(llm_grammar_vocab *v) {
    size_t cap = 1024;
    gtrie_node *t = malloc(cap * sizeof *t);
    uint32_t *path = malloc(((size_t)v->max_len + 1) * sizeof *path);
    if (!t || !path) {
        free(t), free(path);
        return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    }
    uint32_t n = 0, plen = 0; /* path[0..plen): open nodes of the previous token */
    for (int32_t r = 0; r < v->n_text; r++) {
        int32_t tok = v->sorted[r];
        const uint8_t *b = (const uint8_t *)v->bytes + v->off[tok];
        uint32_t len = (uint32_t)(v->off[tok + 1] - v->off[tok]);
        uint32_t keep = 0; /* shared prefix with the open path */
        while (keep < plen && keep < len && t[path[keep]].byte == b[keep]) keep++;
        for (uint32_t d = keep; d < plen; d++) t[path[d]].skip = n; /* close */
        plen = keep;
        for (uint32_t d = keep; d < len; d++) {
            if (n == cap) {
                cap *= 2;
                gtrie_node *nt = realloc(t, cap * sizeof *t);
                if (!nt) {
                    free(t), free(path);
                    return GERR(LLM_ERR_NO_MEMORY, "out of memory");
                }
                t = nt;
            }
            t[n] = (gtrie_node){.skip = 0, .lo = (uint32_t)r, .hi = (uint32_t)r, .depth = d, .n_end = 0, .byte = b[d]};
            path[plen++] = n++;
        }
        for (uint32_t d = 0; d < len; d++) t[path[d]].hi = (uint32_t)r + 1;
        t[path[len - 1]].n_end++;
    }
    for (uint32_t d = 0; d < plen; d++) t[path[d]].skip = n;
    free(path);
    v->trie = t;
    v->n_nodes = n;
    return build_below(v);
}

void llm_grammar_vocab_free(llm_grammar_vocab *v) {
    if (!v) return;
    free(v->bytes);
    free(v->off);
    free(v->flags);
    free(v->sorted);
    free(v->rank);
    free(v->trie);
    free(v->below);
    free(v->below_flags);
    free(v->eog);
    free(v);
}

int32_t llm_grammar_vocab_n_tokens(const llm_grammar_vocab *v) { return v ? v->n_tokens : 0; }

const char *llm_grammar_vocab_token_bytes(const llm_grammar_vocab *v, int32_t t, size_t *len) {
    if (!v || t < 0 || t >= v->n_tokens) {
        if (len) *len = 0;
        return NULL;
    }
    if (len) *len = v->off[t + 1] - v->off[t];
    return v->bytes + v->off[t];
}

unsigned llm_grammar_vocab_token_flags(const llm_grammar_vocab *v, int32_t t) {
    return v && t >= 0 && t < v->n_tokens ? v->flags[t] : 0u;
}

llm_status llm_grammar_vocab_create(const char *const *bytes, const size_t *lens, int32_t n_tokens,
                                    const uint8_t *flags, llm_grammar_vocab **out) {
    if (out) *out = NULL;
    if (!bytes || !lens || !out || n_tokens <= 0)
        return GERR(LLM_ERR_INVALID_ARG, "llm_grammar_vocab_create: NULL argument or n_tokens <= 0");
    size_t total = 0;
    for (int32_t t = 0; t < n_tokens; t++) {
        if (!bytes[t] && lens[t]) return GERR(LLM_ERR_INVALID_ARG, "token %d: NULL bytes", (int)t);
        if (lens[t] > (1u << 24)) return GERR(LLM_ERR_INVALID_ARG, "token %d: longer than 16 MiB", (int)t);
        total += lens[t];
    }
    llm_grammar_vocab *v = calloc(1, sizeof *v);
    if (!v) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    v->n_tokens = n_tokens;
    v->bytes = malloc(total ? total : 1);
    v->off = malloc(((size_t)n_tokens + 1) * sizeof *v->off);
    v->flags = calloc((size_t)n_tokens, 1);
    v->sorted = malloc((size_t)n_tokens * sizeof *v->sorted);
    v->rank = malloc((size_t)n_tokens * sizeof *v->rank);
    v->eog = malloc((size_t)n_tokens * sizeof *v->eog);
    if (!v->bytes || !v->off || !v->flags || !v->sorted || !v->rank || !v->eog) {
        llm_grammar_vocab_free(v);
        return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    }
    size_t o = 0;
    for (int32_t t = 0; t < n_tokens; t++) {
        v->off[t] = o;
        if (lens[t]) memcpy(v->bytes + o, bytes[t], lens[t]);
        o += lens[t];
        if (flags) v->flags[t] = flags[t] & (LLM_GRAMMAR_TOKEN_EOG | LLM_GRAMMAR_TOKEN_SPECIAL);
        v->rank[t] = -1;
        if (v->flags[t] & LLM_GRAMMAR_TOKEN_EOG) v->eog[v->n_eog++] = t;
        if (!v->flags[t] && lens[t]) {
            v->sorted[v->n_text++] = t;
            if (lens[t] > v->max_len) v->max_len = (uint32_t)lens[t];
        }
    }
    v->off[n_tokens] = o;
    llm_status st = sort_tokens(v);
    if (st != LLM_OK) {
        llm_grammar_vocab_free(v);
        return st;
    }
    for (int32_t r = 0; r < v->n_text; r++) v->rank[v->sorted[r]] = r;
    st = build_trie(v);
    if (st != LLM_OK) {
        llm_grammar_vocab_free(v);
        return st;
    }
    *out = v;
    return LLM_OK;
}
