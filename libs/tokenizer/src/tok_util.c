/* tok_util.c -- thread-local errors, UTF-8 helpers, growable buffers and the
 * GPT-2 byte <-> unicode mapping used by byte-level BPE. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"
#include "llama/error.h"

const char *llm_tokenizer_last_error(void) { return llm__err_get(LLM__ERR_TOKENIZER); }

LLM__DEFINE_FAIL(llm__tok_err, LLM__ERR_TOKENIZER)

size_t llm__utf8_validate(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint32_t min;
        uint32_t cp;
        if ((c & 0xE0) == 0xC0) {
            len = 2, min = 0x80, cp = c & 0x1Fu;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, min = 0x800, cp = c & 0x0Fu;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, min = 0x10000, cp = c & 0x07u;
        } else {
            return i;
        }
        if (i + len > n) return i;
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (p[i + k] & 0x3Fu);
        }
        /* Overlong forms, surrogates and values past U+10FFFF are invalid. */
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += len;
    }
    return n;
}

uint32_t llm__utf8_decode(const char *s, size_t n, size_t *adv) {
    const unsigned char *p = (const unsigned char *)s;
    size_t len = llm__utf8_len(p[0]);
    if (len > n) len = 1;
    uint32_t cp;
    switch (len) {
    case 2: cp = p[0] & 0x1Fu; break;
    case 3: cp = p[0] & 0x0Fu; break;
    case 4: cp = p[0] & 0x07u; break;
    default: *adv = 1; return p[0];
    }
    for (size_t k = 1; k < len; k++) cp = (cp << 6) | (p[k] & 0x3Fu);
    *adv = len;
    return cp;
}

size_t llm__utf8_encode(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

int llm__vec_push(tok_vec *v, llm_token id) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        llm_token *nv = realloc(v->v, cap * sizeof *nv);
        if (!nv) return -1;
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = id;
    return 0;
}

int llm__buf_append(tok_buf *b, const void *p, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) return -1;
        b->p = np;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

/* GPT-2's byte map: printable Latin-1 bytes stand for themselves, the other
 * 68 bytes are moved, in order, to U+0100 and up, so every byte has a
 * visible, non-space character. */
static int byte_is_printable(unsigned b) {
    return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
}

uint32_t llm__byte_to_cp(unsigned char b) {
    if (byte_is_printable(b)) return b;
    uint32_t k = 0;
    for (unsigned i = 0; i < b; i++)
        if (!byte_is_printable(i)) k++;
    return 256 + k;
}

int llm__cp_to_byte(uint32_t cp) {
    if (cp < 256) return byte_is_printable(cp) ? (int)cp : -1;
    if (cp >= 256 + 68) return -1;
    uint32_t k = cp - 256;
    for (unsigned i = 0; i < 256; i++) {
        if (!byte_is_printable(i)) {
            if (k == 0) return (int)i;
            k--;
        }
    }
    return -1;
}
