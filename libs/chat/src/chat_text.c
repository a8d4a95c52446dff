/* chat_text.c -- string builder, UTF-8 checks, Python-compatible strip, and
 * the thread-local error text of the chat module. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat_internal.h"
#include "llama/error.h"

LLM__DEFINE_FAIL(llm__chat_fail, LLM__ERR_CHAT)

void llm__chat_clear_error(void) { llm__err_clear(LLM__ERR_CHAT); }

const char *llm_chat_last_error(void) { return llm__err_get(LLM__ERR_CHAT); }

void llm__sb_put(llm__sb *sb, const char *s, size_t n) {
    if (sb->failed || n == 0)
        return;
    if (sb->len + n + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 256;
        while (cap < sb->len + n + 1) {
            if (cap > SIZE_MAX / 2) {
                sb->failed = true;
                return;
            }
            cap *= 2;
        }
        char *p = realloc(sb->data, cap);
        if (!p) {
            sb->failed = true;
            return;
        }
        sb->data = p;
        sb->cap = cap;
    }
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void llm__sb_puts(llm__sb *sb, const char *s) { llm__sb_put(sb, s, strlen(s)); }

void llm__sb_free(llm__sb *sb) {
    free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
    sb->failed = false;
}

/* Decode one code point of valid UTF-8 at s; returns its length in bytes. */
/* One code point of s[0..avail). A truncated or malformed sequence (possible
 * in template string literals, which are not validated) decodes as one byte
 * U+FFFD, so callers never step past avail. */
static size_t utf8_decode(const unsigned char *s, size_t avail, uint32_t *cp) {
    size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : 4;
    bool ok = len <= avail && ((s[0] & 0xF8) != 0xF8);
    for (size_t k = 1; ok && k < len; k++)
        ok = (s[k] & 0xC0) == 0x80;
    if (!ok || (len > 1 && (s[0] & 0xC0) == 0x80)) {
        *cp = 0xFFFD;
        return 1;
    }
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xE0) == 0xC0) {
        *cp = ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3Fu);
        return 2;
    }
    if ((s[0] & 0xF0) == 0xE0) {
        *cp = ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3Fu);
        return 3;
    }
    *cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
          ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3Fu);
    return 4;
}

bool llm__chat_utf8_valid(const char *str) {
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        unsigned char c = s[0];
        size_t len;
        uint32_t min;
        if (c < 0x80) {
            s++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, min = 0x10000;
        } else {
            return false;
        }
        for (size_t i = 1; i < len; i++)
            if ((s[i] & 0xC0) != 0x80) /* also stops at the NUL */
                return false;
        uint32_t cp;
        utf8_decode(s, len, &cp);
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        s += len;
    }
    return true;
}

/* Python's str.isspace(): bidi class WS/B/S or category Zs. */
static bool py_isspace(uint32_t c) {
    if (c <= 0x20)
        return c == 0x20 || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
    switch (c) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
        return true;
    default:
        return c >= 0x2000 && c <= 0x200A;
    }
}

void llm__py_strip(const char *str, size_t n, size_t *begin, size_t *end) {
    const unsigned char *s = (const unsigned char *)str;
    size_t b = 0;
    while (b < n) {
        uint32_t cp;
        size_t l = utf8_decode(s + b, n - b, &cp);
        if (!py_isspace(cp))
            break;
        b += l;
    }
    size_t e = n;
    while (e > b) {
        size_t start = e - 1; /* back up to the lead byte */
        while (start > b && (s[start] & 0xC0) == 0x80)
            start--;
        uint32_t cp;
        utf8_decode(s + start, e - start, &cp);
        if (!py_isspace(cp))
            break;
        e = start;
    }
    *begin = b;
    *end = e;
}

void llm__sb_put_stripped(llm__sb *sb, const char *s) {
    size_t b, e;
    llm__py_strip(s, strlen(s), &b, &e);
    llm__sb_put(sb, s + b, e - b);
}
