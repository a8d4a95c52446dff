/*
 * schema_text.c -- the conversion's arena, string builder, hash map and JSON
 * text writer (the leaf every other schema_*.c file calls into).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"

/* ---- errors and nesting -------------------------------------------------- */

int llm__js_fail(js_ctx *c, llm_status st, const char *fmt, ...) {
    if (c->st == LLM_OK) {
        va_list ap;
        va_start(ap, fmt);
        c->st = st;
        llm__err_vset(LLM__ERR_GRAMMAR, st, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int llm__js_enter(js_ctx *c, const char *path) {
    if (c->st != LLM_OK)
        return -1;
    if (c->depth >= c->p.max_depth)
        return llm__js_fail(c, LLM_ERR_UNSUPPORTED,
                            "JSON schema: nesting deeper than %d levels at %s", c->p.max_depth, path);
    c->depth++;
    return 0;
}

void llm__js_leave(js_ctx *c) { c->depth--; }

/* ---- arena ------------------------------------------------------------------- */

void *llm__js_alloc(js_ctx *c, size_t n) {
    if (c->st != LLM_OK)
        return NULL;
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    js_block *b = c->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        if (c->arena_bytes + cap > c->arena_cap) {
            llm__js_fail(c, LLM_ERR_EXHAUSTED,
                         "JSON schema: conversion needs more than %zu bytes of working memory",
                         c->arena_cap);
            return NULL;
        }
        b = malloc(sizeof(js_block) + cap);
        if (!b) {
            llm__js_fail(c, LLM_ERR_NO_MEMORY, "JSON schema: out of memory");
            return NULL;
        }
        b->used = 0;
        b->cap = cap;
        b->next = c->blocks;
        c->blocks = b;
        c->arena_bytes += cap;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *llm__js_strndup(js_ctx *c, const char *s, size_t n) {
    char *p = llm__js_alloc(c, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

char *llm__js_strdup(js_ctx *c, const char *s) { return llm__js_strndup(c, s, strlen(s)); }

/* ---- string builder ------------------------------------------------------------ */

void llm__js_sb_init(js_sb *b, js_ctx *c) {
    b->c = c;
    b->p = NULL;
    b->n = b->cap = 0;
}

/* Grows into a new arena chunk of twice the size (the old one is left
 * behind: at most the final size again). A string longer than the grammar
 * cap can never be part of the output, so it fails here, early. */
static int sb_reserve(js_sb *b, size_t extra) {
    if (b->c->st != LLM_OK)
        return -1;
    if (b->n + extra + 1 <= b->cap)
        return 0;
    if (b->n + extra > b->c->p.max_grammar_bytes)
        return llm__js_fail(b->c, LLM_ERR_EXHAUSTED,
                            "JSON schema: the grammar would exceed max_grammar_bytes (%zu)",
                            b->c->p.max_grammar_bytes);
    size_t cap = b->cap ? b->cap * 2 : 64;
    while (cap < b->n + extra + 1)
        cap *= 2;
    char *p = llm__js_alloc(b->c, cap);
    if (!p)
        return -1;
    if (b->n)
        memcpy(p, b->p, b->n);
    b->p = p;
    b->cap = cap;
    return 0;
}

void llm__js_sb_putn(js_sb *b, const char *s, size_t n) {
    if (sb_reserve(b, n) == 0 && n) {
        memcpy(b->p + b->n, s, n);
        b->n += n;
    }
}

void llm__js_sb_puts(js_sb *b, const char *s) { llm__js_sb_putn(b, s, strlen(s)); }

void llm__js_sb_putc(js_sb *b, char ch) { llm__js_sb_putn(b, &ch, 1); }

void llm__js_sb_printf(js_sb *b, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) { /* only short numeric pieces are printed */
        llm__js_fail(b->c, LLM_ERR_INTERNAL, "JSON schema: formatted piece too long");
        return;
    }
    llm__js_sb_putn(b, tmp, (size_t)n);
}

const char *llm__js_sb_str(js_sb *b) {
    if (sb_reserve(b, 0) != 0)
        return NULL;
    b->p[b->n] = '\0';
    return b->p;
}

/* ---- hash map --------------------------------------------------------------------- */

static uint64_t hash_str(const char *s) { /* FNV-1a */
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static size_t map_slot(const js_map *m, const char *key) {
    size_t i = (size_t)hash_str(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

void *llm__js_map_get(const js_map *m, const char *key) {
    if (!m->cap)
        return NULL;
    size_t i = map_slot(m, key);
    return m->keys[i] ? m->vals[i] : NULL;
}

int llm__js_map_has(const js_map *m, const char *key) {
    return m->cap && m->keys[map_slot(m, key)] != NULL;
}

int llm__js_map_put(js_ctx *c, js_map *m, const char *key, void *val) {
    if (2 * (m->n + 1) > m->cap) { /* keep the load under one half */
        size_t cap = m->cap ? m->cap * 2 : 16;
        js_map g = {llm__js_alloc(c, cap * sizeof(char *)), llm__js_alloc(c, cap * sizeof(void *)), 0,
                    cap};
        if (!g.keys || !g.vals)
            return -1;
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                size_t j = map_slot(&g, m->keys[i]);
                g.keys[j] = m->keys[i];
                g.vals[j] = m->vals[i];
                g.n++;
            }
        *m = g;
    }
    size_t i = map_slot(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->n++;
    }
    m->vals[i] = val;
    return 0;
}

void llm__js_map_del(js_map *m, const char *key) {
    if (!m->cap)
        return;
    size_t i = map_slot(m, key);
    if (!m->keys[i])
        return;
    m->keys[i] = NULL;
    m->n--;
    /* re-insert the rest of the cluster (linear probing has no tombstones) */
    for (size_t j = (i + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
        const char *k = m->keys[j];
        void *v = m->vals[j];
        m->keys[j] = NULL;
        size_t s = map_slot(m, k);
        m->keys[s] = k;
        m->vals[s] = v;
    }
}

/* ---- JSON values -------------------------------------------------------------------------- */

unsigned llm__js_json_type(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_NULL: return JS_T_NULL;
    case JSON_TRUE:
    case JSON_FALSE: return JS_T_BOOLEAN;
    case JSON_INTEGER: return JS_T_INTEGER;
    case JSON_REAL: return json_real_value(v) == floor(json_real_value(v)) ? JS_T_INTEGER : JS_T_NUMBER;
    case JSON_STRING: return JS_T_STRING;
    case JSON_ARRAY: return JS_T_ARRAY;
    default: return JS_T_OBJECT;
    }
}

/* ---- JSON text as nlohmann::json::dump() writes it ----------------------------- */

void llm__js_dump_json_string(js_sb *b, const char *s, size_t n) {
    llm__js_sb_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        switch (ch) {
        case '\b': llm__js_sb_puts(b, "\\b"); break;
        case '\t': llm__js_sb_puts(b, "\\t"); break;
        case '\n': llm__js_sb_puts(b, "\\n"); break;
        case '\f': llm__js_sb_puts(b, "\\f"); break;
        case '\r': llm__js_sb_puts(b, "\\r"); break;
        case '"': llm__js_sb_puts(b, "\\\""); break;
        case '\\': llm__js_sb_puts(b, "\\\\"); break;
        default:
            if (ch < 0x20)
                llm__js_sb_printf(b, "\\u%04x", ch);
            else
                llm__js_sb_putc(b, (char)ch);
        }
    }
    llm__js_sb_putc(b, '"');
}

/* nlohmann prints the shortest digits that read back to the same double,
 * fixed-point for decimal exponents in (-4, 15], with ".0" on whole values,
 * otherwise d.ddde+XX (at least two exponent digits). */
static void dump_real(js_sb *b, double x) {
    if (!isfinite(x)) {
        llm__js_sb_puts(b, "null");
        return;
    }
    if (x == 0) {
        llm__js_sb_puts(b, signbit(x) ? "-0.0" : "0.0");
        return;
    }
    char tmp[40], dig[20];
    int k = 0, e10 = 0;
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, x);
        if (strtod(tmp, NULL) == x || prec == 17)
            break;
    }
    const char *p = tmp;
    if (*p == '-') {
        llm__js_sb_putc(b, '-');
        p++;
    }
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            dig[k++] = *p;
    e10 = atoi(p + 1);
    while (k > 1 && dig[k - 1] == '0')
        k--;
    int n = e10 + 1; /* position of the decimal point after the first digit */
    if (k <= n && n <= 15) {
        llm__js_sb_putn(b, dig, (size_t)k);
        for (int i = k; i < n; i++)
            llm__js_sb_putc(b, '0');
        llm__js_sb_puts(b, ".0");
    } else if (0 < n && n <= 15) {
        llm__js_sb_putn(b, dig, (size_t)n);
        llm__js_sb_putc(b, '.');
        llm__js_sb_putn(b, dig + n, (size_t)(k - n));
    } else if (-4 < n && n <= 0) {
        llm__js_sb_puts(b, "0.");
        for (int i = n; i < 0; i++)
            llm__js_sb_putc(b, '0');
        llm__js_sb_putn(b, dig, (size_t)k);
    } else {
        llm__js_sb_putc(b, dig[0]);
        if (k > 1) {
            llm__js_sb_putc(b, '.');
            llm__js_sb_putn(b, dig + 1, (size_t)(k - 1));
        }
        int ex = n - 1;
        llm__js_sb_printf(b, "e%c%02d", ex < 0 ? '-' : '+', ex < 0 ? -ex : ex);
    }
}

void llm__js_dump_json(js_sb *b, const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_NULL: llm__js_sb_puts(b, "null"); break;
    case JSON_TRUE: llm__js_sb_puts(b, "true"); break;
    case JSON_FALSE: llm__js_sb_puts(b, "false"); break;
    case JSON_INTEGER: llm__js_sb_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
    case JSON_REAL: dump_real(b, json_real_value(v)); break;
    case JSON_STRING: llm__js_dump_json_string(b, json_string_value(v), json_string_length(v)); break;
    case JSON_ARRAY: {
        llm__js_sb_putc(b, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                llm__js_sb_putc(b, ',');
            llm__js_dump_json(b, json_array_get(v, i));
        }
        llm__js_sb_putc(b, ']');
        break;
    }
    case JSON_OBJECT: {
        const char *key;
        json_t *val;
        int first = 1;
        llm__js_sb_putc(b, '{');
        json_object_foreach((json_t *)v, key, val) {
            if (!first)
                llm__js_sb_putc(b, ',');
            first = 0;
            llm__js_dump_json_string(b, key, strlen(key));
            llm__js_sb_putc(b, ':');
            llm__js_dump_json(b, val);
        }
        llm__js_sb_putc(b, '}');
        break;
    }
    }
}

void llm__js_put_literal(js_sb *b, const char *s, size_t n) {
    llm__js_sb_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '\r': llm__js_sb_puts(b, "\\r"); break;
        case '\n': llm__js_sb_puts(b, "\\n"); break;
        case '"': llm__js_sb_puts(b, "\\\""); break;
        case '\\': llm__js_sb_puts(b, "\\\\"); break;
        default: llm__js_sb_putc(b, s[i]);
        }
    }
    llm__js_sb_putc(b, '"');
}
