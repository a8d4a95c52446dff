/* tok_spm.c -- SentencePiece-style BPE (the "llama" tokenizer of GGUF).
 *
 * Spaces become U+2581, optionally with one in front (the dummy prefix).
 * Start from one symbol per character; repeatedly merge the adjacent pair
 * whose concatenation is a token with the highest score (ties: leftmost).
 * A final symbol that is not a token is spelled with byte tokens <0xXX>
 * (byte fallback), or UNK when the vocabulary has no byte tokens. */
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

typedef struct spm_sym {
    int32_t prev, next;
    uint32_t off, len; /* bytes in the escaped text; len 0 = merged away */
} spm_sym;

typedef struct spm_bigram {
    float score;
    int32_t left;
    uint32_t size; /* byte length of the pair when pushed (detects staleness) */
} spm_bigram;

/* a comes out of the heap before b. */
static int bigram_before(const spm_bigram *a, const spm_bigram *b) {
    if (a->score != b->score) return a->score > b->score;
    return a->left < b->left;
}

typedef struct spm_heap {
    spm_bigram *v;
    size_t n, cap;
} spm_heap;

static int heap_push(spm_heap *h, spm_bigram x) {
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        spm_bigram *nv = realloc(h->v, cap * sizeof *nv);
        if (!nv) return -1;
        h->v = nv;
        h->cap = cap;
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!bigram_before(&x, &h->v[p])) break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = x;
    return 0;
}

static spm_bigram heap_pop(spm_heap *h) {
    spm_bigram top = h->v[0], x = h->v[--h->n];
    size_t i = 0, n = h->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && bigram_before(&h->v[c + 1], &h->v[c])) c++;
        if (!bigram_before(&h->v[c], &x)) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (n) h->v[i] = x;
    return top;
}

static int try_pair(const llm_tokenizer *t, const char *s, const spm_sym *sy, int32_t l, int32_t r, spm_heap *h) {
    if (l < 0 || r < 0) return 0;
    uint32_t size = sy[l].len + sy[r].len;
    llm_token id = llm__tok_lookup(t, s + sy[l].off, size);
    if (id < 0) return 0;
    spm_bigram b = {t->scores[id], l, size};
    return heap_push(h, b);
}

llm_status llm__spm_encode(const llm_tokenizer *t, const char *text, size_t n, int space_prefix, tok_vec *out) {
    static const char k_ms[3] = {'\xE2', '\x96', '\x81'};
    tok_buf s = {0};
    spm_sym *sy = NULL;
    spm_heap h = {0};
    llm_status st = LLM_OK;
    if (space_prefix && llm__buf_append(&s, k_ms, 3)) goto oom;
    for (size_t i = 0; i < n; i++) {
        if (text[i] == ' ' ? llm__buf_append(&s, k_ms, 3) : llm__buf_append(&s, text + i, 1)) goto oom;
    }
    if (s.n == 0) return LLM_OK;
    if (s.n > UINT32_MAX / 2) {
        free(s.p);
        return llm__tok_err(LLM_ERR_INVALID_ARG, "text too long");
    }
    sy = malloc(s.n * sizeof *sy);
    if (!sy) goto oom;
    int32_t ns = 0;
    for (size_t i = 0; i < s.n;) {
        size_t cl = llm__utf8_len((unsigned char)s.p[i]);
        if (i + cl > s.n) cl = s.n - i;
        sy[ns].prev = ns - 1;
        sy[ns].next = -1;
        if (ns > 0) sy[ns - 1].next = ns;
        sy[ns].off = (uint32_t)i;
        sy[ns].len = (uint32_t)cl;
        ns++;
        i += cl;
    }
    for (int32_t i = 1; i < ns; i++)
        if (try_pair(t, s.p, sy, i - 1, i, &h)) goto oom;
    while (h.n > 0) {
        spm_bigram b = heap_pop(&h);
        spm_sym *l = &sy[b.left];
        if (l->len == 0 || l->next < 0) continue;
        spm_sym *r = &sy[l->next];
        if (r->len == 0 || l->len + r->len != b.size) continue; /* stale */
        l->len += r->len;
        r->len = 0;
        l->next = r->next;
        if (r->next >= 0) sy[r->next].prev = b.left;
        if (try_pair(t, s.p, sy, l->prev, b.left, &h) || try_pair(t, s.p, sy, b.left, l->next, &h)) goto oom;
    }
    for (int32_t i = 0; i >= 0; i = sy[i].next) {
        llm_token id = llm__tok_lookup(t, s.p + sy[i].off, sy[i].len);
        if (id >= 0) {
            if (llm__vec_push(out, id)) goto oom;
            continue;
        }
        for (uint32_t k = 0; k < sy[i].len; k++) {
            unsigned char c = (unsigned char)s.p[sy[i].off + k];
            llm_token bt = t->byte_tok[c];
            if (bt < 0) bt = llm__tok_lookup(t, (const char *)&c, 1);
            if (bt < 0) bt = t->unk;
            if (bt >= 0 && llm__vec_push(out, bt)) goto oom;
        }
    }
    goto done;
oom:
    st = llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
done:
    free(h.v);
    free(sy);
    free(s.p);
    return st;
}
