/* Text <-> tokens through the model's tokenizer, with the engine's buffer
 * conventions (negated needed size) and UTF-8 validation of inputs. */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

/* Offset of the first invalid UTF-8 byte in s[0..n), or n if valid. */
static size_t utf8_check(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        unsigned min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            k = 1;
            min = 0x80;
            c &= 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            k = 2;
            min = 0x800;
            c &= 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            k = 3;
            min = 0x10000;
            c &= 0x07;
        } else {
            return i;
        }
        if (i + k >= n) return i; /* truncated sequence */
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return i;
            c = (c << 6) | (s[i + j] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return i;
        i += k + 1;
    }
    return n;
}

llm_status llm_tokenize(const llm_model *m, const char *text, size_t len, unsigned flags,
                        llm_token *out, int32_t cap, int32_t *n_out) {
    if (!m || !n_out || (!text && len) || (!out && cap > 0) || cap < 0)
        return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_tokenize: invalid argument");
    size_t bad = utf8_check((const unsigned char *)text, len);
    if (bad != len)
        return llm__fail(NULL, LLM_ERR_BAD_UTF8,
                         "input is not valid UTF-8 (bad byte 0x%02x at byte offset %zu)",
                         (unsigned char)text[bad], bad);
    unsigned tf = 0;
    if (flags & LLM_ENCODE_ADD_SPECIAL) tf |= LLM_TOKENIZE_ADD_SPECIAL;
    if (flags & LLM_ENCODE_PARSE_SPECIAL) tf |= LLM_TOKENIZE_PARSE_SPECIAL;
    int32_t n = 0;
    llm_status st = llm_tokenizer_encode(m->tok, text, len, tf, out, cap, &n);
    if (st == LLM_ERR_BUFFER_TOO_SMALL) {
        *n_out = -n;
        return llm__fail(NULL, st, "token buffer too small: %d tokens needed", n);
    }
    if (st != LLM_OK) return llm__fail(NULL, st, "%s", llm_tokenizer_last_error());
    *n_out = n;
    return LLM_OK;
}

llm_status llm_detokenize(const llm_model *m, const llm_token *tokens, int32_t n, bool render_special,
                          char *buf, size_t cap, int32_t *n_out) {
    if (!m || !n_out || n < 0 || (!tokens && n) || (!buf && cap))
        return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_detokenize: invalid argument");
    for (int32_t i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= m->info.n_vocab)
            return llm__fail(NULL, LLM_ERR_INVALID_ARG,
                             "token id %d at index %d is outside [0, %d)", tokens[i], i, m->info.n_vocab);
    size_t len = 0;
    char dummy[1];
    llm_status st = llm_tokenizer_decode(m->tok, tokens, n, render_special ? 0 : LLM_DETOKENIZE_SKIP_SPECIAL,
                                         buf ? buf : dummy, buf ? cap : 0, &len);
    if (st == LLM_ERR_BUFFER_TOO_SMALL) {
        /* Our contract: the NUL is optional, so exactly `len` bytes suffice. */
        if (len <= cap && buf && len > 0) {
            char *tmp = malloc(len + 1);
            if (!tmp) return llm__fail(NULL, LLM_ERR_NO_MEMORY, "out of memory");
            size_t l2 = 0;
            st = llm_tokenizer_decode(m->tok, tokens, n, render_special ? 0 : LLM_DETOKENIZE_SKIP_SPECIAL,
                                      tmp, len + 1, &l2);
            if (st == LLM_OK) memcpy(buf, tmp, l2);
            free(tmp);
            if (st != LLM_OK) return llm__fail(NULL, st, "%s", llm_tokenizer_last_error());
            *n_out = (int32_t)l2;
            return LLM_OK;
        }
        *n_out = -(int32_t)len;
        return llm__fail(NULL, st, "text buffer too small: %zu bytes needed", len);
    }
    if (st != LLM_OK) return llm__fail(NULL, st, "%s", llm_tokenizer_last_error());
    *n_out = (int32_t)len;
    return LLM_OK;
}

struct llm_token_stream {
    const llm_model *m;
    llm_detokenizer *d;
};

llm_status llm_token_stream_new(const llm_model *m, bool render_special, llm_token_stream **out) {
    if (out) *out = NULL;
    if (!m || !out) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_token_stream_new: NULL argument");
    llm_token_stream *s = calloc(1, sizeof *s);
    if (!s) return llm__fail(NULL, LLM_ERR_NO_MEMORY, "out of memory");
    s->m = m;
    llm_status st = llm_detokenizer_create(m->tok, render_special ? 0 : LLM_DETOKENIZE_SKIP_SPECIAL, &s->d);
    if (st != LLM_OK) {
        free(s);
        return llm__fail(NULL, st, "%s", llm_tokenizer_last_error());
    }
    *out = s;
    return LLM_OK;
}

llm_status llm_token_stream_push(llm_token_stream *s, llm_token tok, const char **text, size_t *len) {
    if (!s || !text || !len) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_token_stream_push: NULL argument");
    if (tok < 0 || tok >= s->m->info.n_vocab)
        return llm__fail(NULL, LLM_ERR_INVALID_ARG, "token id %d is outside [0, %d)", tok, s->m->info.n_vocab);
    llm_status st = llm_detokenizer_push(s->d, tok, text, len);
    if (st != LLM_OK) return llm__fail(NULL, st, "%s", llm_tokenizer_last_error());
    return LLM_OK;
}

llm_status llm_token_stream_flush(llm_token_stream *s, const char **text, size_t *len) {
    if (!s || !text || !len) return llm__fail(NULL, LLM_ERR_INVALID_ARG, "llm_token_stream_flush: NULL argument");
    llm_status st = llm_detokenizer_flush(s->d, text, len);
    if (st != LLM_OK) return llm__fail(NULL, st, "%s", llm_tokenizer_last_error());
    return LLM_OK;
}

void llm_token_stream_free(llm_token_stream *s) {
    if (!s) return;
    llm_detokenizer_free(s->d);
    free(s);
}
