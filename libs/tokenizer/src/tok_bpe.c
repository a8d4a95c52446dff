/* tok_bpe.c -- rank-ordered BPE over token ids.
 *
 * A word starts as one symbol per byte (byte-level BPE) or per character
 * (HF BPE with byte fallback). The pair with the lowest merge rank is merged
 * first; ties go to the leftmost pair, as in HF tokenizers. Symbols live in a
 * doubly linked list and candidate pairs in a binary min-heap keyed by
 * (rank, left position), with stale entries dropped when popped: O(n log n)
 * per word, so a megabyte without spaces is still fast. */
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

#define SMALL 64

typedef struct bpe_heap {
    uint64_t *v; /* (rank << 32) | left position */
    size_t n;
} bpe_heap;

static void heap_push(bpe_heap *h, uint64_t x) {
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h->v[p] <= x) break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = x;
}

static uint64_t heap_pop(bpe_heap *h) {
    uint64_t top = h->v[0], x = h->v[--h->n];
    size_t i = 0, n = h->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h->v[c + 1] < h->v[c]) c++;
        if (x <= h->v[c]) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (n) h->v[i] = x;
    return top;
}

static void emit(const llm_tokenizer *t, llm_token id, tok_vec *out, int *err) {
    if (id < 0) id = t->bpe_unk;
    if (id >= 0 && llm__vec_push(out, id)) *err = 1;
}

llm_status llm__bpe_word(const llm_tokenizer *t, const llm_token *syms, size_t n, tok_vec *out) {
    int err = 0;
    if (n == 0) return LLM_OK;
    if (n == 1) {
        emit(t, syms[0], out, &err);
        return err ? llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory") : LLM_OK;
    }
    if (n > (size_t)INT32_MAX) return llm__tok_err(LLM_ERR_INVALID_ARG, "word too long");
    llm_token s_ids[SMALL];
    int32_t s_prev[SMALL], s_next[SMALL];
    uint64_t s_heap[2 * SMALL];
    llm_token *ids = s_ids;
    int32_t *prev = s_prev, *next = s_next;
    bpe_heap h = {s_heap, 0};
    void *block = NULL;
    if (n > SMALL) {
        /* ids, prev, next: 3 x n x 4 bytes; heap: at most 2n entries (n initial
         * pairs, plus 2 per merge minus 1 per merge popped). */
        block = malloc(n * (3 * sizeof(int32_t)) + 2 * n * sizeof(uint64_t) + 8);
        if (!block) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
        h.v = block;
        ids = (llm_token *)(h.v + 2 * n);
        prev = ids + n;
        next = prev + n;
    }
    memcpy(ids, syms, n * sizeof *ids);
    for (size_t i = 0; i < n; i++) {
        prev[i] = (int32_t)i - 1;
        next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
    }
    llm_token res;
    for (size_t i = 0; i + 1 < n; i++) {
        int32_t r = llm__tok_merge(t, ids[i], ids[i + 1], &res);
        if (r >= 0) heap_push(&h, ((uint64_t)(uint32_t)r << 32) | (uint32_t)i);
    }
    while (h.n > 0) {
        uint64_t top = heap_pop(&h);
        int32_t rank = (int32_t)(top >> 32);
        int32_t l = (int32_t)(uint32_t)top;
        int32_t r = next[l];
        if (ids[l] < -1 || r < 0) continue; /* left merged away, or nothing on its right */
        int32_t cur = llm__tok_merge(t, ids[l], ids[r], &res);
        if (cur != rank) continue; /* stale: one side changed since the push */
        ids[l] = res;
        ids[r] = -2; /* dead */
        next[l] = next[r];
        if (next[r] >= 0) prev[next[r]] = l;
        if (prev[l] >= 0) {
            int32_t pr = llm__tok_merge(t, ids[prev[l]], ids[l], &res);
            if (pr >= 0) heap_push(&h, ((uint64_t)(uint32_t)pr << 32) | (uint32_t)prev[l]);
        }
        if (next[l] >= 0) {
            int32_t nr = llm__tok_merge(t, ids[l], ids[next[l]], &res);
            if (nr >= 0) heap_push(&h, ((uint64_t)(uint32_t)nr << 32) | (uint32_t)l);
        }
    }
    for (int32_t i = 0; i >= 0 && !err; i = next[i]) emit(t, ids[i], out, &err);
    free(block);
    return err ? llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory") : LLM_OK;
}

/* A cache of words already encoded during one encode call. Text repeats
 * words a lot, so most words are looked up instead of merged. It lives only
 * for the call, which keeps the tokenizer immutable and thread-safe. */
typedef struct wc_entry {
    uint64_t h;
    size_t woff;         /* the word: text[woff .. woff + wlen) */
    uint32_t wlen;
    uint32_t ioff, ilen; /* its ids: cache ids[ioff .. ioff + ilen) */
} wc_entry;

typedef struct word_cache {
    wc_entry *e;  /* [mask + 1], wlen 0 = empty */
    size_t mask, n;
    tok_vec ids;
} word_cache;

#define WC_MAX_WORD 48

static uint64_t word_hash(const unsigned char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a: words are short, a simple hash is enough */
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h | 1;
}

static int wc_grow(word_cache *c) {
    size_t cap = c->e ? (c->mask + 1) * 2 : 512;
    wc_entry *ne = calloc(cap, sizeof *ne);
    if (!ne) return -1;
    for (size_t i = 0; c->e && i <= c->mask; i++) {
        if (!c->e[i].wlen) continue;
        size_t j = c->e[i].h & (cap - 1);
        while (ne[j].wlen) j = (j + 1) & (cap - 1);
        ne[j] = c->e[i];
    }
    free(c->e);
    c->e = ne;
    c->mask = cap - 1;
    return 0;
}

llm_status llm__bpe_encode(const llm_tokenizer *t, const char *text, size_t n, tok_vec *out) {
    tok_spans sp = {0};
    llm_status st = llm__pretok_split(t, text, n, &sp);
    llm_token small[SMALL];
    llm_token *syms = small;
    size_t syms_cap = SMALL;
    word_cache wc = {0};
    int use_cache = sp.n >= 64;
    for (size_t w = 0; w < sp.n && st == LLM_OK; w++) {
        const unsigned char *word = (const unsigned char *)text + sp.v[2 * w];
        size_t len = sp.v[2 * w + 1];
        wc_entry *slot = NULL;
        uint64_t h = 0;
        if (use_cache && len <= WC_MAX_WORD) {
            if ((!wc.e || 2 * (wc.n + 1) > wc.mask + 1) && wc_grow(&wc)) goto oom;
            h = word_hash(word, len);
            size_t j = h & wc.mask;
            while (wc.e[j].wlen && !(wc.e[j].h == h && wc.e[j].wlen == len &&
                                     memcmp(text + wc.e[j].woff, word, len) == 0))
                j = (j + 1) & wc.mask;
            slot = &wc.e[j];
            if (slot->wlen) { /* hit */
                for (uint32_t k = 0; k < slot->ilen; k++)
                    if (llm__vec_push(out, wc.ids.v[slot->ioff + k])) goto oom;
                continue;
            }
        }
        size_t before = out->n;
        llm_token id = t->ignore_merges ? llm__tok_lookup_raw(t, (const char *)word, len) : LLM_TOKEN_NULL;
        if (id >= 0) {
            if (llm__vec_push(out, id)) goto oom;
        } else {
            if (len > syms_cap) {
                llm_token *ns = malloc(len * sizeof *ns);
                if (!ns) goto oom;
                if (syms != small) free(syms);
                syms = ns;
                syms_cap = len;
            }
            for (size_t i = 0; i < len; i++) syms[i] = t->byte_tok[word[i]];
            st = llm__bpe_word(t, syms, len, out);
        }
        if (slot && st == LLM_OK) {
            slot->h = h;
            slot->woff = sp.v[2 * w];
            slot->wlen = (uint32_t)len;
            slot->ioff = (uint32_t)wc.ids.n;
            slot->ilen = (uint32_t)(out->n - before);
            for (size_t k = before; k < out->n; k++)
                if (llm__vec_push(&wc.ids, out->v[k])) goto oom;
            wc.n++;
        }
    }
    goto done;
oom:
    st = llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
done:
    free(wc.e);
    free(wc.ids.v);
    if (syms != small) free(syms);
    llm__spans_free(&sp);
    return st;
}

/* tokenizer.json BPE without ByteLevel: optional U+2581 normalisation
 * (Prepend / Replace / Metaspace), one symbol per character, byte fallback
 * for characters the vocabulary lacks. */
llm_status llm__hfbpe_encode(const llm_tokenizer *t, const char *text, size_t n, int first, tok_vec *out) {
    static const char k_ms[3] = {'\xE2', '\x96', '\x81'};
    tok_buf norm = {0};
    llm_status st = LLM_OK;
    int prepend = t->hf.prepend_space && (first || !t->hf.prepend_first_only);
    if (n == 0) return LLM_OK;
    /* Metaspace (2) does not prepend to text that starts with a space; Prepend (1) always does. */
    if (prepend && t->hf.prepend_space == 2 && text[0] == ' ') prepend = 0;
    if (prepend && llm__buf_append(&norm, k_ms, 3)) goto oom;
    for (size_t i = 0; i < n; i++) {
        if (text[i] == ' ' && t->hf.replace_space) {
            if (llm__buf_append(&norm, k_ms, 3)) goto oom;
        } else if (llm__buf_append(&norm, text + i, 1)) {
            goto oom;
        }
    }
    if (norm.n == 0) return LLM_OK;
    tok_vec syms = {0};
    size_t i = 0;
    while (i < norm.n && st == LLM_OK) {
        /* One word: up to the next U+2581 when splitting on it. */
        size_t j = i + 1;
        if (t->hf.newline_split) {
            int nl = norm.p[i] == '\n';
            while (j < norm.n && (norm.p[j] == '\n') == nl) j++;
            llm_token whole = nl ? llm__tok_lookup(t, norm.p + i, j - i) : LLM_TOKEN_NULL;
            if (whole >= 0) {
                if (llm__vec_push(out, whole)) goto oom2;
                i = j;
                continue;
            }
        } else if (t->hf.metaspace_split) {
            while (j < norm.n && !(j + 3 <= norm.n && memcmp(norm.p + j, k_ms, 3) == 0)) j++;
        } else {
            j = norm.n;
        }
        syms.n = 0;
        size_t k = i;
        while (k < j) {
            size_t cl = llm__utf8_len((unsigned char)norm.p[k]);
            if (k + cl > j) cl = j - k;
            llm_token id = llm__tok_lookup(t, norm.p + k, cl);
            if (id >= 0) {
                if (llm__vec_push(&syms, id)) goto oom2;
            } else if (t->byte_fallback) {
                int all = 1;
                for (size_t b = 0; b < cl; b++) all &= t->byte_tok[(unsigned char)norm.p[k + b]] >= 0;
                for (size_t b = 0; b < cl; b++)
                    if (llm__vec_push(&syms, all ? t->byte_tok[(unsigned char)norm.p[k + b]] : t->unk)) goto oom2;
            } else if (t->unk >= 0) {
                /* HF fuses consecutive unknowns into one. */
                if (!(syms.n > 0 && syms.v[syms.n - 1] == t->unk) && llm__vec_push(&syms, t->unk)) goto oom2;
            }
            k += cl;
        }
        st = llm__bpe_word(t, syms.v, syms.n, out);
        i = j;
    }
    free(syms.v);
    free(norm.p);
    return st;
oom2:
    free(syms.v);
oom:
    free(norm.p);
    return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
}
