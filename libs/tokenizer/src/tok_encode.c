/* tok_encode.c -- llm_tokenizer_encode: UTF-8 check, special/added-token
 * partitioning (before any pre-tokenization), then the family's algorithm on
 * each raw fragment, BOS/EOS around it.
 *
 * Two partition rules, which differ only where special-token texts overlap
 * in the text or where lstrip/rstrip meet non-ASCII whitespace:
 *   - HF (tokenizer.json vocabularies): the leftmost match wins, the longest
 *     at that position (AddedVocabulary's leftmost-longest automaton);
 *     lstrip/rstrip take Unicode whitespace.
 *   - llama.cpp (GGUF and spec vocabularies; tokenizer_st_partition): special
 *     tokens are taken longest first, each at every place it occurs in what
 *     is still raw text, so ">>ABSTRACT<<|endoftext|>" in falcon gives
 *     <|endoftext|> (13 bytes) and not >>ABSTRACT<< (12) although the latter
 *     starts first; LSTRIP/RSTRIP take ASCII whitespace only (isspace), so
 *     phi-3's <|end|> keeps a following U+3000. Between special tokens of
 *     equal length llama.cpp's order is unspecified (std::sort is not
 *     stable); we take the leftmost. */
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "tok_internal.h"

static int is_special_type(int ty) {
    return ty == LLM_TOKEN_TYPE_CONTROL || ty == LLM_TOKEN_TYPE_USER_DEFINED || ty == LLM_TOKEN_TYPE_UNKNOWN;
}

static int special_allowed(const llm_tokenizer *t, llm_token id, unsigned flags) {
    if (flags & LLM_TOKENIZE_PARSE_SPECIAL) return 1;
    /* Without parse_special only user-defined added tokens stay whole (as in
     * llama.cpp and HF, where non-special added tokens are always matched). */
    return t->types[id] == LLM_TOKEN_TYPE_USER_DEFINED;
}

/* Unicode White_Space (what Rust's char::is_whitespace tests). */
static int is_ws_cp(uint32_t c) {
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
           c == 0x3000;
}

/* Byte length of the whitespace character at s[0..n), or 0. */
static size_t space_len_at(const char *s, size_t n) {
    size_t adv;
    uint32_t c = llm__utf8_decode(s, n, &adv);
    return is_ws_cp(c) ? adv : 0;
}

/* Byte length of the character ending s[0..n) (valid UTF-8). */
static size_t space_len_before(const char *s, size_t n) {
    size_t k = n - 1;
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    return n - k;
}

static int is_space_before(const char *s, size_t n) {
    size_t l = space_len_before(s, n);
    return space_len_at(s + n - l, l) == l;
}

static llm_status encode_raw(const llm_tokenizer *t, const char *s, size_t n, int after_special, int first,
                             tok_vec *out) {
    switch (t->type) {
    case LLM_TOKENIZER_BPE:
        if (t->hf.nfc && n > 0) {
            utf8proc_uint8_t *nfc = NULL;
            utf8proc_ssize_t m = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &nfc,
                                              (utf8proc_option_t)(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
            if (m < 0) return llm__tok_err(LLM_ERR_NO_MEMORY, "NFC normalisation failed");
            llm_tokenizer tmp_t = *t;
            tmp_t.hf.nfc = 0;
            llm_status st = encode_raw(&tmp_t, (const char *)nfc, (size_t)m, after_special, first, out);
            free(nfc);
            return st;
        }
        if (t->hf.bytelevel_prefix_space && n > 0 && s[0] != ' ') {
            char *tmp = malloc(n + 1);
            if (!tmp) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
            tmp[0] = ' ';
            memcpy(tmp + 1, s, n);
            llm_status st = llm__bpe_encode(t, tmp, n + 1, out);
            free(tmp);
            return st;
        }
        return llm__bpe_encode(t, s, n, out);
    case LLM_TOKENIZER_SPM: return llm__spm_encode(t, s, n, t->add_space_prefix && after_special, out);
    case LLM_TOKENIZER_WPM: return llm__wpm_encode(t, s, n, out);
    case LLM_TOKENIZER_HF_BPE: return llm__hfbpe_encode(t, s, n, first, out);
    case LLM_TOKENIZER_UGM: return llm__ugm_encode(t, s, n, out); /* every fragment alike */
    default: return llm__tok_err(LLM_ERR_INTERNAL, "bad tokenizer type");
    }
}

static int is_ascii_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* A special token placed by the llama.cpp partition: the token at
 * [pos, pos + len), and [lo, hi) what it consumes with stripped spaces. */
typedef struct tok_span {
    size_t pos, len, lo, hi;
    llm_token id;
} tok_span;

static int span_by_len_then_pos(const void *a, const void *b) {
    const tok_span *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}
static int span_by_pos(const void *a, const void *b) {
    const tok_span *x = a, *y = b;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int spans_push(tok_span **v, size_t *n, size_t *cap, tok_span s) {
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        tok_span *p = realloc(*v, nc * sizeof *p);
        if (!p) return -1;
        *v = p;
        *cap = nc;
    }
    (*v)[(*n)++] = s;
    return 0;
}

/* llama.cpp's partition: every occurrence of every allowed special token,
 * then placed longest first (leftmost first among equal lengths) where the
 * text is still raw, each stripping ASCII spaces next to it as its
 * attributes say. *spans gets the placed tokens in text order. */
static llm_status partition_llamacpp(const llm_tokenizer *t, const char *text, size_t len, unsigned flags,
                                     tok_span **spans, size_t *n_spans) {
    const unsigned char *first = t->special_first[(flags & LLM_TOKENIZE_PARSE_SPECIAL) ? 1 : 0];
    tok_span *m = NULL;
    size_t n = 0, cap = 0;
    *spans = NULL;
    *n_spans = 0;
    for (size_t i = 0; i < len; i++) {
        if (!first[(unsigned char)text[i]]) continue;
        if (!t->specials_shadowed) {
            for (int32_t k = 0; k < t->n_special_lens; k++) {
                size_t l = t->special_lens[k];
                if (l > len - i) continue;
                llm_token id = llm__tok_lookup(t, text + i, l);
                if (id >= 0 && is_special_type(t->types[id]) && special_allowed(t, id, flags) &&
                    spans_push(&m, &n, &cap, (tok_span){i, l, i, i + l, id}))
                    goto oom;
            }
        } else {
            for (int32_t k = 0; k < t->n_specials; k++) {
                llm_token id = t->specials[k];
                size_t l = t->len[id];
                if (l <= len - i && special_allowed(t, id, flags) && memcmp(text + i, t->blob + t->off[id], l) == 0 &&
                    spans_push(&m, &n, &cap, (tok_span){i, l, i, i + l, id}))
                    goto oom;
            }
        }
    }
    if (n == 0) return LLM_OK;
    qsort(m, n, sizeof *m, span_by_len_then_pos);
    unsigned char *taken = calloc(len, 1); /* bytes no longer raw text */
    if (!taken) goto oom;
    size_t placed = 0;
    for (size_t k = 0; k < n; k++) {
        tok_span s = m[k];
        size_t j = s.pos;
        while (j < s.pos + s.len && !taken[j]) j++;
        if (j < s.pos + s.len) continue; /* overlaps a longer token already placed */
        memset(taken + s.pos, 1, s.len);
        if (t->strip && (t->strip[s.id] & TOK_LSTRIP))
            while (s.lo > 0 && !taken[s.lo - 1] && is_ascii_space((unsigned char)text[s.lo - 1])) taken[--s.lo] = 1;
        if (t->strip && (t->strip[s.id] & TOK_RSTRIP))
            while (s.hi < len && !taken[s.hi] && is_ascii_space((unsigned char)text[s.hi])) taken[s.hi++] = 1;
        m[placed++] = s;
    }
    free(taken);
    qsort(m, placed, sizeof *m, span_by_pos);
    *spans = m;
    *n_spans = placed;
    return LLM_OK;
oom:
    free(m);
    return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
}

llm_status llm_tokenizer_encode(const llm_tokenizer *t, const char *text, size_t len, unsigned flags,
                                llm_token *out, int32_t cap, int32_t *n_out) {
    if (!t || !n_out || (!text && len) || (!out && cap > 0) || cap < 0)
        return llm__tok_err(LLM_ERR_INVALID_ARG, "llm_tokenizer_encode: bad arguments");
    *n_out = 0;
    size_t bad = llm__utf8_validate(text, len);
    if (bad < len)
        return llm__tok_err(LLM_ERR_BAD_UTF8, "invalid UTF-8 at byte offset %zu (byte 0x%02X)", bad,
                            (unsigned)(unsigned char)text[bad]);
    tok_vec v = {0};
    llm_status st = LLM_OK;
    int add = (flags & LLM_TOKENIZE_ADD_SPECIAL) != 0;
    llm_token bos = t->type == LLM_TOKENIZER_WPM && t->cls >= 0 ? t->cls : t->bos;
    llm_token eos = t->type == LLM_TOKENIZER_WPM && t->sep >= 0 ? t->sep : t->eos;
    if (add && t->add_bos && bos >= 0 && llm__vec_push(&v, bos)) goto oom;

    if (t->llamacpp_partition) {
        tok_span *sp;
        size_t n_sp, raw = 0;
        int after_special = 1, n_frag = 0;
        if ((st = partition_llamacpp(t, text, len, flags, &sp, &n_sp)) != LLM_OK) goto fail;
        for (size_t k = 0; k <= n_sp && st == LLM_OK; k++) {
            size_t lo = k < n_sp ? sp[k].lo : len;
            if (lo > raw) st = encode_raw(t, text + raw, lo - raw, after_special, n_frag++ == 0, &v);
            if (k < n_sp && st == LLM_OK) {
                if (llm__vec_push(&v, sp[k].id)) {
                    free(sp);
                    goto oom;
                }
                after_special = 1;
                raw = sp[k].hi;
            }
        }
        free(sp);
        if (st != LLM_OK) goto fail;
        goto done;
    }

    /* Which first bytes can start a special token under these flags. */
    const unsigned char *first = t->special_first[(flags & LLM_TOKENIZE_PARSE_SPECIAL) ? 1 : 0];
    int any = t->n_specials > 0;
    size_t raw = 0, i = 0;
    int after_special = 1, n_frag = 0;
    while (any && i < len) {
        if (!first[(unsigned char)text[i]]) {
            i++;
            continue;
        }
        llm_token hit = LLM_TOKEN_NULL;
        if (!t->specials_shadowed) {
            /* One hash lookup per distinct length, longest first. */
            for (int32_t k = 0; k < t->n_special_lens && hit < 0; k++) {
                size_t l = t->special_lens[k];
                if (l > len - i) continue;
                llm_token id = llm__tok_lookup(t, text + i, l);
                if (id >= 0 && is_special_type(t->types[id]) && special_allowed(t, id, flags)) hit = id;
            }
        } else {
            for (int32_t k = 0; k < t->n_specials && hit < 0; k++) {
                llm_token id = t->specials[k];
                size_t l = t->len[id];
                if (l <= len - i && special_allowed(t, id, flags) && memcmp(text + i, t->blob + t->off[id], l) == 0)
                    hit = id;
            }
        }
        if (hit < 0) {
            i++;
            continue;
        }
        size_t end = i + t->len[hit];
        if (t->strip && (t->strip[hit] & TOK_LSTRIP))
            while (i > raw && is_space_before(text + raw, i - raw)) i -= space_len_before(text + raw, i - raw);
        if (t->strip && (t->strip[hit] & TOK_RSTRIP))
            while (end < len && space_len_at(text + end, len - end)) end += space_len_at(text + end, len - end);
        if (i > raw) {
            st = encode_raw(t, text + raw, i - raw, after_special, n_frag++ == 0, &v);
            if (st != LLM_OK) goto fail;
        }
        if (llm__vec_push(&v, hit)) goto oom;
        after_special = 1;
        i = end;
        raw = i;
    }
    if (len > raw) {
        st = encode_raw(t, text + raw, len - raw, after_special, n_frag == 0, &v);
        if (st != LLM_OK) goto fail;
    }
done:
    if (add && t->add_eos && eos >= 0 && llm__vec_push(&v, eos)) goto oom;

    if (v.n > (size_t)INT32_MAX) {
        st = llm__tok_err(LLM_ERR_INVALID_ARG, "too many tokens");
        goto fail;
    }
    *n_out = (int32_t)v.n;
    if (v.n > (size_t)cap) {
        st = llm__tok_err(LLM_ERR_BUFFER_TOO_SMALL, "need room for %zu tokens, have %d", v.n, (int)cap);
        goto fail;
    }
    if (v.n) memcpy(out, v.v, v.n * sizeof *out);
    free(v.v);
    return LLM_OK;
oom:
    st = llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
fail:
    free(v.v);
    return st;
}
