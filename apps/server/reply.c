/* Replies: the JSON body of a handler's answer, OpenAI-style errors, and
 * UTF-8 text as a JSON string. A leaf: every other file of the server calls
 * it, and it calls none of them. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

int reply_json(reply *r, unsigned status, json_t *j) {
    r->status = status;
    r->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    r->len = r->body ? strlen(r->body) : 0;
    r->ctype = "application/json";
    json_decref(j);
    if (!r->body) {
        r->status = 500;
        r->body = strdup("{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\"}}");
        r->len = r->body ? strlen(r->body) : 0;
    }
    return 0;
}

int reply_error(reply *r, unsigned status, const char *type, const char *param, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *e = json_object();
    json_t *m = json_stringn(msg, strlen(msg));
    if (!m) m = json_string("invalid request (the message is not UTF-8)");
    json_object_set_new(e, "message", m);
    json_object_set_new(e, "type", json_string(type));
    json_object_set_new(e, "param", param ? json_string(param) : json_null());
    json_object_set_new(e, "code", json_integer(status));
    json_t *root = json_object();
    json_object_set_new(root, "error", e);
    reply_json(r, status, root);
    return 0;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t k;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) k = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) k = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) k = 4, min = 0x10000;
    else return 0;
    if (n < k) return 0;
    unsigned cp = c & (0xFFu >> (k + 1));
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return k;
}

json_t *json_text(const char *s, size_t n) {
    json_t *j = json_stringn(s, n);
    if (j) return j;
    char *b = malloc(n * 3 + 1);
    if (!b) return json_string("");
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq((const unsigned char *)s + i, n - i);
        if (k) {
            memcpy(b + o, s + i, k);
            o += k;
            i += k;
        } else {
            memcpy(b + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    j = json_stringn(b, o);
    free(b);
    return j ? j : json_string("");
}
