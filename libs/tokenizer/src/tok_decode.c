/* tok_decode.c -- ids to text: whole-sequence decode and the streaming
 * detokenizer that only ever hands out complete UTF-8. */
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

/* The bytes one token contributes at this point of the text. *strip says
 * whether the leading space of the first word is still to be removed. */
static const char *token_piece(const llm_tokenizer *t, llm_token id, unsigned flags, int *strip, size_t *len) {
    int ty = t->types[id];
    if ((flags & LLM_DETOKENIZE_SKIP_SPECIAL) && ty == LLM_TOKEN_TYPE_CONTROL) {
        *len = 0;
        return "";
    }
    const char *p = t->dblob + t->doff[id];
    size_t n = t->dlen[id];
    if (*strip) {
        *strip = 0;
        if (n > 0 && p[0] == ' ') p++, n--;
    }
    *len = n;
    return p;
}

static int strips_space(const llm_tokenizer *t, unsigned flags) {
    if (flags & LLM_DETOKENIZE_KEEP_LEADING_SPACE) return 0;
    if (t->type == LLM_TOKENIZER_WPM) return 1; /* pieces carry a space before each word */
    if (t->type == LLM_TOKENIZER_SPM || t->type == LLM_TOKENIZER_UGM) return t->add_space_prefix;
    if (t->type == LLM_TOKENIZER_HF_BPE) return t->hf.prepend_space != 0;
    return 0;
}

llm_status llm_tokenizer_decode(const llm_tokenizer *t, const llm_token *ids, int32_t n, unsigned flags, char *out,
                                size_t cap, size_t *n_out) {
    if (!t || !n_out || (!ids && n > 0) || n < 0 || (!out && cap > 0))
        return llm__tok_err(LLM_ERR_INVALID_ARG, "llm_tokenizer_decode: bad arguments");
    *n_out = 0;
    int strip = strips_space(t, flags);
    size_t total = 0;
    for (int32_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->n)
            return llm__tok_err(LLM_ERR_INVALID_ARG, "token id %d out of range [0, %d)", (int)ids[i], (int)t->n);
        size_t l;
        const char *p = token_piece(t, ids[i], flags, &strip, &l);
        if (total + l < cap) memcpy(out + total, p, l);
        total += l;
    }
    *n_out = total;
    if (total + 1 > cap) {
        if (cap > 0) out[cap - 1] = '\0';
        return llm__tok_err(LLM_ERR_BUFFER_TOO_SMALL, "need %zu bytes plus NUL, have %zu", total, cap);
    }
    out[total] = '\0';
    return LLM_OK;
}

struct llm_detokenizer {
    const llm_tokenizer *t;
    unsigned flags;
    int strip;
    tok_buf held; /* bytes of a character not yet complete */
    tok_buf out;  /* what the last call hands out */
};

llm_status llm_detokenizer_create(const llm_tokenizer *t, unsigned flags, llm_detokenizer **out) {
    if (!out) return llm__tok_err(LLM_ERR_INVALID_ARG, "out is NULL");
    *out = NULL;
    if (!t) return llm__tok_err(LLM_ERR_INVALID_ARG, "tokenizer is NULL");
    llm_detokenizer *d = calloc(1, sizeof *d);
    if (!d) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    d->t = t;
    d->flags = flags;
    d->strip = strips_space(t, flags);
    *out = d;
    return LLM_OK;
}

void llm_detokenizer_free(llm_detokenizer *d) {
    if (!d) return;
    free(d->held.p);
    free(d->out.p);
    free(d);
}

void llm_detokenizer_reset(llm_detokenizer *d) {
    if (!d) return;
    d->held.n = 0;
    d->out.n = 0;
    d->strip = strips_space(d->t, d->flags);
}

/* Length of the valid UTF-8 sequence at p[0..n): > 0 complete and valid,
 * 0 valid so far but incomplete, -1 invalid (the first byte must be replaced). */
static int seq_status(const unsigned char *p, size_t n) {
    unsigned char c = p[0];
    size_t len;
    uint32_t min, cp;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) len = 2, min = 0x80, cp = c & 0x1Fu;
    else if ((c & 0xF0) == 0xE0) len = 3, min = 0x800, cp = c & 0x0Fu;
    else if ((c & 0xF8) == 0xF0) len = 4, min = 0x10000, cp = c & 0x07u;
    else return -1;
    size_t have = n < len ? n : len;
    for (size_t k = 1; k < have; k++) {
        if ((p[k] & 0xC0) != 0x80) return -1;
        cp = (cp << 6) | (p[k] & 0x3Fu);
    }
    if (have < len) {
        /* Reject early what can never become valid: overlong 2-byte leads, bad
         * second bytes of E0/ED/F0/F4 and leads above F4. */
        if (c == 0xC0 || c == 0xC1 || c > 0xF4) return -1;
        if (have >= 2) {
            unsigned char d = p[1];
            if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d > 0x9F) || (c == 0xF0 && d < 0x90) ||
                (c == 0xF4 && d > 0x8F))
                return -1;
        }
        return 0;
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    return (int)len;
}

/* Move every complete character from held to out; keep an incomplete tail
 * unless final, in which case it becomes U+FFFD. */
static int drain(llm_detokenizer *d, int final) {
    static const char k_repl[3] = {'\xEF', '\xBF', '\xBD'};
    const unsigned char *p = (const unsigned char *)d->held.p;
    size_t n = d->held.n, i = 0;
    while (i < n) {
        int s = seq_status(p + i, n - i);
        if (s > 0) {
            if (llm__buf_append(&d->out, p + i, (size_t)s)) return -1;
            i += (size_t)s;
        } else if (s < 0 || final) {
            if (llm__buf_append(&d->out, k_repl, 3)) return -1;
            /* An incomplete tail at the end is one replacement character. */
            i = s < 0 ? i + 1 : n;
        } else {
            break;
        }
    }
    if (i > 0 && n > i) memmove(d->held.p, d->held.p + i, n - i);
    d->held.n = n - i;
    return 0;
}

llm_status llm_detokenizer_push(llm_detokenizer *d, llm_token id, const char **text, size_t *len) {
    if (!d || !text || !len) return llm__tok_err(LLM_ERR_INVALID_ARG, "llm_detokenizer_push: bad arguments");
    *text = "";
    *len = 0;
    if (id < 0 || id >= d->t->n)
        return llm__tok_err(LLM_ERR_INVALID_ARG, "token id %d out of range [0, %d)", (int)id, (int)d->t->n);
    size_t l;
    const char *p = token_piece(d->t, id, d->flags, &d->strip, &l);
    d->out.n = 0;
    if (llm__buf_append(&d->out, "", 0) || llm__buf_append(&d->held, p, l) || drain(d, 0))
        return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    *text = d->out.p;
    *len = d->out.n;
    return LLM_OK;
}

llm_status llm_detokenizer_flush(llm_detokenizer *d, const char **text, size_t *len) {
    if (!d || !text || !len) return llm__tok_err(LLM_ERR_INVALID_ARG, "llm_detokenizer_flush: bad arguments");
    d->out.n = 0;
    if (llm__buf_append(&d->out, "", 0) || (d->held.n && llm__buf_append(&d->held, "", 0)) || drain(d, 1))
        return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    *text = d->out.p;
    *len = d->out.n;
    d->held.n = 0;
    d->strip = strips_space(d->t, d->flags);
    return LLM_OK;
}
