/* jinja_value.c -- the arena, value constructors, Python truthiness and
 * equality, str()/repr() and json.dumps() of values. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja.h"

struct jj_chunk {
    jj_chunk *next;
    size_t used, cap;
    max_align_t data[]; /* cap bytes */
};

_Noreturn void llm__jj_fail(jj_state *S, llm_status st, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    llm__chat_fail(st, "%s", msg);
    S->error = st;
    longjmp(S->on_error, 1);
}

void *llm__jj_alloc(jj_state *S, size_t size) {
    if (size > JJ_MAX_ARENA)
        llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "the template needs more than %u bytes of memory", JJ_MAX_ARENA);
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (size == 0)
        size = sizeof(max_align_t);
    jj_chunk *c = S->arena.head;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > 65536 ? size : 65536;
        if (S->arena.total + cap > JJ_MAX_ARENA)
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "the template needs more than %u bytes of memory",
                    JJ_MAX_ARENA);
        c = malloc(sizeof *c + cap);
        if (!c)
            llm__jj_fail(S, LLM_ERR_NO_MEMORY, "out of memory");
        S->arena.total += cap;
        c->next = S->arena.head;
        c->used = 0;
        c->cap = cap;
        S->arena.head = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *llm__jj_strndup(jj_state *S, const char *s, size_t n) {
    char *p = llm__jj_alloc(S, n + 1);
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

llm__sb *llm__jj_scratch_begin(jj_state *S) {
    jj_capture *c = llm__jj_alloc(S, sizeof *c); /* zeroed */
    c->next = S->captures;
    S->captures = c;
    return &c->sb;
}

char *llm__jj_scratch_end(jj_state *S, size_t *len) {
    jj_capture *c = S->captures;
    /* Copy while still chained: if the arena is full, the error path frees c. */
    char *s = c->sb.failed ? NULL : llm__jj_strndup(S, c->sb.data ? c->sb.data : "", c->sb.len);
    *len = c->sb.len;
    S->captures = c->next;
    bool failed = c->sb.failed;
    llm__sb_free(&c->sb);
    if (failed)
        llm__jj_fail(S, LLM_ERR_NO_MEMORY, "out of memory");
    return s;
}

void llm__jj_arena_free(jj_arena *a) {
    jj_chunk *c = a->head;
    while (c) {
        jj_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->total = 0;
}

jv llm__jv_undefined(void) { jv v = {JV_UNDEFINED, {0}}; return v; }
jv llm__jv_none(void) { jv v = {JV_NONE, {0}}; return v; }
jv llm__jv_bool(bool b) { jv v = {JV_BOOL, {0}}; v.u.b = b; return v; }
jv llm__jv_int(int64_t i) { jv v = {JV_INT, {0}}; v.u.i = i; return v; }
jv llm__jv_float(double f) { jv v = {JV_FLOAT, {0}}; v.u.f = f; return v; }
jv llm__jv_str(const char *s, size_t n) {
    jv v = {JV_STR, {0}};
    v.u.str.s = s;
    v.u.str.n = n;
    return v;
}
jv llm__jv_cstr(const char *s) { return llm__jv_str(s, strlen(s)); }

jv llm__jv_list_new(jj_state *S, size_t n) {
    jv v = {JV_LIST, {0}};
    v.u.list = llm__jj_alloc(S, sizeof *v.u.list);
    v.u.list->items = n ? llm__jj_alloc(S, n * sizeof(jv)) : NULL;
    v.u.list->n = n;
    return v;
}

jv llm__jv_dict_new(jj_state *S) {
    jv v = {JV_DICT, {0}};
    v.u.dict = llm__jj_alloc(S, sizeof *v.u.dict);
    return v;
}

static bool str_eq(jv a, const char *s, size_t n) {
    return a.type == JV_STR && a.u.str.n == n && memcmp(a.u.str.s, s, n) == 0;
}

bool llm__jj_dict_get(const jj_dict *d, const char *key, size_t n, jv *out) {
    for (size_t i = 0; i < d->n; i++)
        if (str_eq(d->keys[i], key, n)) {
            *out = d->vals[i];
            return true;
        }
    return false;
}

void llm__jj_dict_set(jj_state *S, jj_dict *d, jv key, jv val) {
    for (size_t i = 0; i < d->n; i++)
        if (llm__jv_equal(d->keys[i], key)) {
            d->vals[i] = val;
            return;
        }
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        jv *k = llm__jj_alloc(S, cap * sizeof *k), *v = llm__jj_alloc(S, cap * sizeof *v);
        if (d->n) {
            memcpy(k, d->keys, d->n * sizeof *k);
            memcpy(v, d->vals, d->n * sizeof *v);
        }
        d->keys = k, d->vals = v, d->cap = cap;
    }
    d->keys[d->n] = key;
    d->vals[d->n] = val;
    d->n++;
}

bool llm__jv_truthy(jv v) {
    switch (v.type) {
    case JV_UNDEFINED: case JV_NONE: return false;
    case JV_BOOL: return v.u.b;
    case JV_INT: return v.u.i != 0;
    case JV_FLOAT: return v.u.f != 0.0;
    case JV_STR: return v.u.str.n > 0;
    case JV_LIST: return v.u.list->is_generator || v.u.list->n > 0;
    case JV_DICT: return v.u.dict->is_namespace || v.u.dict->n > 0;
    case JV_FUNC:
    case JV_MACRO: return true;
    }
    return false;
}

static bool is_num(jv v) { return v.type == JV_INT || v.type == JV_FLOAT || v.type == JV_BOOL; }
static double num(jv v) {
    return v.type == JV_FLOAT ? v.u.f : v.type == JV_INT ? (double)v.u.i : (v.u.b ? 1.0 : 0.0);
}

bool llm__jv_equal(jv a, jv b) {
    if (is_num(a) && is_num(b)) {
        if (a.type != JV_FLOAT && b.type != JV_FLOAT)
            return (a.type == JV_INT ? a.u.i : a.u.b) == (b.type == JV_INT ? b.u.i : b.u.b);
        return num(a) == num(b);
    }
    if (a.type != b.type)
        return false;
    switch (a.type) {
    case JV_UNDEFINED: case JV_NONE: return true;
    case JV_STR: return str_eq(b, a.u.str.s, a.u.str.n);
    case JV_LIST:
        if (a.u.list->n != b.u.list->n || a.u.list->is_tuple != b.u.list->is_tuple)
            return false;
        for (size_t i = 0; i < a.u.list->n; i++)
            if (!llm__jv_equal(a.u.list->items[i], b.u.list->items[i]))
                return false;
        return true;
    case JV_DICT: {
        if (a.u.dict == b.u.dict)
            return true;
        if (a.u.dict->is_namespace || b.u.dict->is_namespace || a.u.dict->n != b.u.dict->n)
            return false;
        for (size_t i = 0; i < a.u.dict->n; i++) {
            jv other;
            jv k = a.u.dict->keys[i];
            if (k.type != JV_STR || !llm__jj_dict_get(b.u.dict, k.u.str.s, k.u.str.n, &other) ||
                !llm__jv_equal(a.u.dict->vals[i], other))
                return false;
        }
        return true;
    }
    case JV_FUNC: return a.u.func == b.u.func;
    case JV_MACRO: return a.u.macro == b.u.macro;
    default: return false;
    }
}

const char *llm__jv_type_name(jv v) {
    static const char *const names[] = {"undefined", "NoneType", "bool", "int", "float",
                                        "str", "list", "dict", "function", "Macro"};
    if (v.type == JV_DICT && v.u.dict->is_namespace)
        return "Namespace";
    if (v.type == JV_LIST && v.u.list->is_generator)
        return "generator";
    return names[v.type];
}

/* Python's repr() of a float: the shortest digits that read back the same
 * value, in fixed notation for exponents -4..15 and d.ddde+XX otherwise. */
static void put_float(llm__sb *sb, double f) {
    char buf[64], digits[32], out[64];
    if (isnan(f)) {
        llm__sb_puts(sb, "nan");
        return;
    }
    if (isinf(f)) {
        llm__sb_puts(sb, f < 0 ? "-inf" : "inf");
        return;
    }
    if (f == 0.0) {
        llm__sb_puts(sb, signbit(f) ? "-0.0" : "0.0");
        return;
    }
    int prec = 0;
    for (prec = 0; prec < 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec, f);
        if (strtod(buf, NULL) == f)
            break;
    }
    /* buf = [-]d.ddde[+-]XX */
    const char *p = buf;
    bool neg = *p == '-';
    if (neg)
        p++;
    size_t nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.')
            digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    int exp = atoi(p + 1);
    size_t k = 0;
    if (neg)
        out[k++] = '-';
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            out[k++] = '0';
            out[k++] = '.';
            for (int i = -1; i > exp; i--)
                out[k++] = '0';
            for (size_t i = 0; i < nd; i++)
                out[k++] = digits[i];
        } else {
            for (int i = 0; i <= exp; i++)
                out[k++] = (size_t)i < nd ? digits[i] : '0';
            out[k++] = '.';
            if ((size_t)exp + 1 < nd)
                for (size_t i = (size_t)exp + 1; i < nd; i++)
                    out[k++] = digits[i];
            else
                out[k++] = '0';
        }
        out[k] = '\0';
    } else {
        out[k++] = digits[0];
        if (nd > 1) {
            out[k++] = '.';
            for (size_t i = 1; i < nd; i++)
                out[k++] = digits[i];
        }
        snprintf(out + k, sizeof out - k, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    }
    llm__sb_puts(sb, out);
}

static void put_repr_str(llm__sb *sb, const char *s, size_t n) {
    bool has_sq = memchr(s, '\'', n) != NULL, has_dq = memchr(s, '"', n) != NULL;
    char q = (has_sq && !has_dq) ? '"' : '\'';
    llm__sb_put(sb, &q, 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char buf[8];
        if (c == '\\' || c == (unsigned char)q) {
            buf[0] = '\\', buf[1] = (char)c;
            llm__sb_put(sb, buf, 2);
        } else if (c == '\n') {
            llm__sb_puts(sb, "\\n");
        } else if (c == '\r') {
            llm__sb_puts(sb, "\\r");
        } else if (c == '\t') {
            llm__sb_puts(sb, "\\t");
        } else if (c < 0x20 || c == 0x7F) {
            snprintf(buf, sizeof buf, "\\x%02x", c);
            llm__sb_puts(sb, buf);
        } else {
            llm__sb_put(sb, s + i, 1);
        }
    }
    llm__sb_put(sb, &q, 1);
}

static void put_repr(jj_state *S, jv v, llm__sb *sb);

void llm__jv_to_str(jj_state *S, jv v, llm__sb *sb) {
    char buf[32];
    switch (v.type) {
    case JV_UNDEFINED: return;
    case JV_NONE: llm__sb_puts(sb, "None"); return;
    case JV_BOOL: llm__sb_puts(sb, v.u.b ? "True" : "False"); return;
    case JV_INT:
        snprintf(buf, sizeof buf, "%lld", (long long)v.u.i);
        llm__sb_puts(sb, buf);
        return;
    case JV_FLOAT: put_float(sb, v.u.f); return;
    case JV_STR: llm__sb_put(sb, v.u.str.s, v.u.str.n); return;
    default: put_repr(S, v, sb); return;
    }
}

static void put_repr(jj_state *S, jv v, llm__sb *sb) {
    if (++S->depth > JJ_MAX_DEPTH)
        llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "value nested deeper than %d", JJ_MAX_DEPTH);
    switch (v.type) {
    case JV_STR: put_repr_str(sb, v.u.str.s, v.u.str.n); break;
    case JV_UNDEFINED: break;
    case JV_LIST:
        if (v.u.list->is_generator) /* "<generator object ... at 0x...>": an address */
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "printing a generator (jinja2 prints its address)");
        llm__sb_puts(sb, v.u.list->is_tuple ? "(" : "[");
        for (size_t i = 0; i < v.u.list->n; i++) {
            if (i)
                llm__sb_puts(sb, ", ");
            put_repr(S, v.u.list->items[i], sb);
        }
        if (v.u.list->is_tuple && v.u.list->n == 1)
            llm__sb_puts(sb, ",");
        llm__sb_puts(sb, v.u.list->is_tuple ? ")" : "]");
        break;
    case JV_DICT:
        if (v.u.dict->is_namespace) {
            llm__sb_puts(sb, "<Namespace ");
        }
        llm__sb_puts(sb, "{");
        for (size_t i = 0; i < v.u.dict->n; i++) {
            if (i)
                llm__sb_puts(sb, ", ");
            put_repr(S, v.u.dict->keys[i], sb);
            llm__sb_puts(sb, ": ");
            put_repr(S, v.u.dict->vals[i], sb);
        }
        llm__sb_puts(sb, v.u.dict->is_namespace ? "}>" : "}");
        break;
    case JV_FUNC: llm__sb_puts(sb, "<function>"); break;
    case JV_MACRO: llm__sb_puts(sb, "<Macro>"); break;
    default: llm__jv_to_str(S, v, sb); break;
    }
    S->depth--;
}

jv llm__jv_stringify(jj_state *S, jv v) {
    if (v.type == JV_STR)
        return v;
    llm__jv_to_str(S, v, llm__jj_scratch_begin(S));
    size_t n;
    char *s = llm__jj_scratch_end(S, &n);
    return llm__jv_str(s, n);
}

static void put_json_str(llm__sb *sb, const char *s, size_t n, bool ascii) {
    llm__sb_puts(sb, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char buf[16];
        switch (c) {
        case '"': llm__sb_puts(sb, "\\\""); break;
        case '\\': llm__sb_puts(sb, "\\\\"); break;
        case '\n': llm__sb_puts(sb, "\\n"); break;
        case '\r': llm__sb_puts(sb, "\\r"); break;
        case '\t': llm__sb_puts(sb, "\\t"); break;
        case '\b': llm__sb_puts(sb, "\\b"); break;
        case '\f': llm__sb_puts(sb, "\\f"); break;
        default:
            if (c < 0x20 || (ascii && c == 0x7F)) {
                snprintf(buf, sizeof buf, "\\u%04x", c);
                llm__sb_puts(sb, buf);
            } else if (ascii && c >= 0x80) { /* \uXXXX, surrogate pairs above U+FFFF */
                uint32_t cp;
                size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
                if (i + len > n)
                    len = n - i;
                cp = c & (len == 4 ? 0x07 : len == 3 ? 0x0F : 0x1F);
                for (size_t k = 1; k < len; k++)
                    cp = (cp << 6) | ((unsigned char)s[i + k] & 0x3F);
                i += len - 1;
                if (cp >= 0x10000) {
                    cp -= 0x10000;
                    snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
                } else {
                    snprintf(buf, sizeof buf, "\\u%04x", cp);
                }
                llm__sb_puts(sb, buf);
            } else {
                llm__sb_put(sb, s + i, 1);
            }
        }
    }
    llm__sb_puts(sb, "\"");
}

static void json_nl(llm__sb *sb, int indent, int level) {
    llm__sb_puts(sb, "\n");
    for (int i = 0; i < indent * level; i++)
        llm__sb_puts(sb, " ");
}

/* Python's str ordering (code points = UTF-8 bytes) of the keys of d. */
static int cmp_key(const jv *a, const jv *b) {
    size_t n = a->u.str.n < b->u.str.n ? a->u.str.n : b->u.str.n;
    int c = memcmp(a->u.str.s, b->u.str.s, n);
    return c ? c : (a->u.str.n > b->u.str.n) - (a->u.str.n < b->u.str.n);
}

static void put_json_key(jj_state *S, jv k, const jj_json_opts *o, llm__sb *sb) {
    if (k.type == JV_STR) {
        put_json_str(sb, k.u.str.s, k.u.str.n, o->ensure_ascii);
        return;
    }
    /* json.dumps turns int/bool/None keys into strings */
    jv ks = k.type == JV_NONE ? llm__jv_cstr("null")
            : k.type == JV_BOOL ? llm__jv_cstr(k.u.b ? "true" : "false") : llm__jv_stringify(S, k);
    put_json_str(sb, ks.u.str.s, ks.u.str.n, o->ensure_ascii);
}

static void to_json(jj_state *S, jv v, const jj_json_opts *o, int level, llm__sb *sb) {
    if (++S->depth > JJ_MAX_DEPTH)
        llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "value nested deeper than %d", JJ_MAX_DEPTH);
    switch (v.type) {
    case JV_NONE: llm__sb_puts(sb, "null"); break;
    case JV_BOOL: llm__sb_puts(sb, v.u.b ? "true" : "false"); break;
    case JV_INT: case JV_FLOAT:
        if (v.type == JV_FLOAT && (isnan(v.u.f) || isinf(v.u.f)))
            llm__sb_puts(sb, isnan(v.u.f) ? "NaN" : v.u.f < 0 ? "-Infinity" : "Infinity");
        else
            llm__jv_to_str(S, v, sb);
        break;
    case JV_STR: put_json_str(sb, v.u.str.s, v.u.str.n, o->ensure_ascii); break;
    case JV_LIST:
    case JV_DICT: {
        bool is_list = v.type == JV_LIST;
        if (is_list && v.u.list->is_generator)
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "Object of type generator is not JSON serializable");
        size_t n = is_list ? v.u.list->n : v.u.dict->n;
        if (!is_list && v.u.dict->is_namespace)
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "Object of type Namespace is not JSON serializable");
        llm__sb_puts(sb, is_list ? "[" : "{");
        if (n == 0) {
            llm__sb_puts(sb, is_list ? "]" : "}");
            break;
        }
        /* Key order: insertion, or sorted (string keys only, as Python). */
        size_t *order = llm__jj_alloc(S, n * sizeof *order);
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        if (!is_list && o->sort_keys) {
            for (size_t i = 0; i < n; i++)
                if (v.u.dict->keys[i].type != JV_STR)
                    llm__jj_fail(S, LLM_ERR_INVALID_ARG, "'<' not supported between instances of '%s' and 'str'",
                                 llm__jv_type_name(v.u.dict->keys[i]));
            for (size_t i = 1; i < n; i++) /* insertion sort: stable, dicts are small */
                for (size_t j = i; j > 0 && cmp_key(&v.u.dict->keys[order[j - 1]], &v.u.dict->keys[order[j]]) > 0; j--) {
                    size_t t = order[j];
                    order[j] = order[j - 1];
                    order[j - 1] = t;
                }
        }
        for (size_t i = 0; i < n; i++) {
            if (i) {
                if (o->item_sep)
                    llm__sb_put(sb, o->item_sep, o->item_sep_n);
                else
                    llm__sb_puts(sb, o->indent >= 0 ? "," : ", ");
            }
            if (o->indent >= 0)
                json_nl(sb, o->indent, level + 1);
            if (is_list) {
                to_json(S, v.u.list->items[i], o, level + 1, sb);
            } else {
                put_json_key(S, v.u.dict->keys[order[i]], o, sb);
                if (o->key_sep)
                    llm__sb_put(sb, o->key_sep, o->key_sep_n);
                else
                    llm__sb_puts(sb, ": ");
                to_json(S, v.u.dict->vals[order[i]], o, level + 1, sb);
            }
        }
        if (o->indent >= 0)
            json_nl(sb, o->indent, level);
        llm__sb_puts(sb, is_list ? "]" : "}");
        break;
    }
    default:
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "Object of type %s is not JSON serializable", llm__jv_type_name(v));
    }
    S->depth--;
}

void llm__jv_to_json(jj_state *S, jv v, const jj_json_opts *o, llm__sb *sb) { to_json(S, v, o, 0, sb); }

size_t llm__jj_utf8_len(const char *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            k++;
    return k;
}

size_t llm__jj_utf8_offset(const char *s, size_t n, size_t cp) {
    size_t k = 0, i = 0;
    for (; i < n; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (k == cp)
                return i;
            k++;
        }
    }
    return n;
}
