/* tok_encode.c -- llm_tokenizer_encode: UTF-8 check, special/added-token
 * partitioning (leftmost match, longest first, before any pre-tokenization),
 * then the family's algorithm on each raw fragment, BOS/EOS around it. */
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
