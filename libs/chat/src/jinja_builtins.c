/* jinja_builtins.c -- the tests, string/dict methods and global functions
 * chat templates use, with Python/jinja2 semantics (filters: jinja_filters.c).
 * Unknown names are LLM_ERR_UNSUPPORTED (the caller may fall back to a
 * family renderer). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jinja.h"

static bool name_is(const char *a, const char *b) { return strcmp(a, b) == 0; }

/* Decode the code point at s[i], returning its byte length. */
static size_t cp_at(const char *s, size_t n, size_t i, uint32_t *cp) {
    const unsigned char *u = (const unsigned char *)s + i;
    size_t len = u[0] < 0x80 ? 1 : (u[0] & 0xE0) == 0xC0 ? 2 : (u[0] & 0xF0) == 0xE0 ? 3 : 4;
    if (i + len > n)
        len = n - i;
    uint32_t c = len == 1 ? u[0] : len == 2 ? (u[0] & 0x1Fu) : len == 3 ? (u[0] & 0x0Fu) : (u[0] & 0x07u);
    for (size_t k = 1; k < len; k++)
        c = (c << 6) | (u[k] & 0x3Fu);
    *cp = c;
    return len;
}

static bool in_chars(uint32_t c, const char *chars, size_t n) {
    for (size_t i = 0; i < n;) {
        uint32_t d;
        i += cp_at(chars, n, i, &d);
        if (c == d)
            return true;
    }
    return false;
}

jv llm__jj_strip(jj_state *S, jv v, const char *chars, size_t chars_n, int which) {
    (void)S;
    const char *s = v.u.str.s;
    size_t n = v.u.str.n, b = 0, e = n;
    if (!chars) { /* Python whitespace, as str.strip() with no argument */
        size_t pb, pe;
        llm__py_strip(s, n, &pb, &pe); /* all-whitespace text gives pb == pe == n */
        if (which == 3)
            return llm__jv_str(s + pb, pe - pb);
        if (which == 1)
            return llm__jv_str(s + pb, n - pb);
        return llm__jv_str(s, pb == n ? 0 : pe);
    }
    if (which & 1) {
        while (b < n) {
            uint32_t c;
            size_t l = cp_at(s, n, b, &c);
            if (!in_chars(c, chars, chars_n))
                break;
            b += l;
        }
    }
    if (which & 2) {
        while (e > b) {
            size_t st = e - 1;
            while (st > b && ((unsigned char)s[st] & 0xC0) == 0x80)
                st--;
            uint32_t c;
            cp_at(s, n, st, &c);
            if (!in_chars(c, chars, chars_n))
                break;
            e = st;
        }
    }
    return llm__jv_str(s + b, e - b);
}

jj_list llm__jj_iterate(jj_state *S, jv v, int line) {
    jj_list out = {NULL, 0, false, false, false};
    switch (v.type) {
    case JV_UNDEFINED: return out; /* jinja's Undefined iterates as empty */
    case JV_LIST:
        if (v.u.list->is_generator) {
            if (v.u.list->consumed)
                return out;
            v.u.list->consumed = true;
        }
        return *v.u.list;
    case JV_DICT:
        if (v.u.dict->is_namespace)
            break;
        out.items = v.u.dict->keys;
        out.n = v.u.dict->n;
        return out;
    case JV_STR: {
        size_t n = llm__jj_utf8_len(v.u.str.s, v.u.str.n);
        jv l = llm__jv_list_new(S, n);
        for (size_t i = 0, k = 0; k < n; k++) {
            uint32_t c;
            size_t len = cp_at(v.u.str.s, v.u.str.n, i, &c);
            l.u.list->items[k] = llm__jv_str(v.u.str.s + i, len);
            i += len;
        }
        return *l.u.list;
    }
    default: break;
    }
    llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: '%s' object is not iterable", line, llm__jv_type_name(v));
}

jv llm__jj_list_from(jj_state *S, const jv *items, size_t n) {
    jv l = llm__jv_list_new(S, n);
    if (n)
        memcpy(l.u.list->items, items, n * sizeof *items);
    return l;
}

/* Python str.split(sep) / str.split() */
static jv str_split(jj_state *S, jv s, const jv *sep) {
    const char *p = s.u.str.s;
    size_t n = s.u.str.n;
    size_t cnt = 0, cap = 8;
    jv *items = llm__jj_alloc(S, cap * sizeof *items);
#define PUSH(str, len)                                                                             \
    do {                                                                                           \
        if (cnt == cap) {                                                                          \
            jv *np = llm__jj_alloc(S, cap * 2 * sizeof *np);                                           \
            memcpy(np, items, cnt * sizeof *np);                                                   \
            items = np;                                                                            \
            cap *= 2;                                                                              \
        }                                                                                          \
        items[cnt++] = llm__jv_str((str), (len));                                                       \
    } while (0)
    if (!sep || sep->type == JV_NONE) {
        size_t i = 0;
        for (;;) {
            while (i < n) { /* skip whitespace */
                uint32_t c;
                size_t l = cp_at(p, n, i, &c);
                size_t b, e;
                llm__py_strip(p + i, l, &b, &e);
                if (b != l)
                    break;
                i += l;
            }
            if (i >= n)
                break;
            size_t start = i;
            while (i < n) {
                uint32_t c;
                size_t l = cp_at(p, n, i, &c);
                size_t b, e;
                llm__py_strip(p + i, l, &b, &e);
                if (b == l)
                    break;
                i += l;
            }
            PUSH(p + start, i - start);
        }
    } else {
        const char *d = sep->u.str.s;
        size_t dn = sep->u.str.n;
        if (dn == 0)
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "empty separator");
        size_t start = 0;
        for (size_t i = 0; i + dn <= n;) {
            if (memcmp(p + i, d, dn) == 0) {
                PUSH(p + start, i - start);
                i += dn;
                start = i;
            } else {
                i++;
            }
        }
        PUSH(p + start, n - start);
    }
#undef PUSH
    return llm__jj_list_from(S, items, cnt);
}

static jv str_case(jj_state *S, jv s, int mode) { /* 0 lower, 1 upper, 2 capitalize (ASCII only) */
    char *o = llm__jj_strndup(S, s.u.str.s, s.u.str.n);
    for (size_t i = 0; i < s.u.str.n; i++) {
        char c = o[i];
        bool up = mode == 1 || (mode == 2 && i == 0);
        if (up && c >= 'a' && c <= 'z')
            o[i] = (char)(c - 'a' + 'A');
        else if (!up && c >= 'A' && c <= 'Z')
            o[i] = (char)(c - 'A' + 'a');
    }
    return llm__jv_str(o, s.u.str.n);
}

static jv str_replace(jj_state *S, jv s, jv a, jv b) {
    llm__sb *sb = llm__jj_scratch_begin(S);
    const char *p = s.u.str.s;
    size_t n = s.u.str.n, an = a.u.str.n;
    for (size_t i = 0; i < n;) {
        if (an > 0 && i + an <= n && memcmp(p + i, a.u.str.s, an) == 0) {
            llm__sb_put(sb, b.u.str.s, b.u.str.n);
            i += an;
        } else {
            llm__sb_put(sb, p + i, 1);
            i++;
        }
    }
    size_t len;
    char *o = llm__jj_scratch_end(S, &len);
    return llm__jv_str(o, len);
}

static bool starts_or_ends(jv s, jv x, bool end) {
    if (x.type == JV_LIST) {
        for (size_t i = 0; i < x.u.list->n; i++)
            if (starts_or_ends(s, x.u.list->items[i], end))
                return true;
        return false;
    }
    if (x.type != JV_STR || x.u.str.n > s.u.str.n)
        return false;
    const char *p = end ? s.u.str.s + s.u.str.n - x.u.str.n : s.u.str.s;
    return memcmp(p, x.u.str.s, x.u.str.n) == 0;
}

/* Python's str.format with "{}" / "{N}" fields and "{{" "}}" escapes (no
 * format specs, names or attributes: those are LLM_ERR_UNSUPPORTED). */
static jv str_format(jj_state *S, jv fmt, const jv *args, size_t n, int line) {
    const char *f = fmt.u.str.s;
    size_t len = fmt.u.str.n, auto_i = 0;
    llm__sb *sb = llm__jj_scratch_begin(S);
    for (size_t i = 0; i < len; i++) {
        char c = f[i];
        if ((c == '{' || c == '}') && i + 1 < len && f[i + 1] == c) {
            llm__sb_put(sb, &c, 1);
            i++;
            continue;
        }
        if (c == '}')
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: Single '}' encountered in format string", line);
        if (c != '{') {
            llm__sb_put(sb, &c, 1);
            continue;
        }
        size_t j = i + 1, idx = 0;
        bool digits = false;
        while (j < len && f[j] >= '0' && f[j] <= '9' && j - i < 6) {
            idx = idx * 10 + (size_t)(f[j++] - '0');
            digits = true;
        }
        if (j >= len || f[j] != '}')
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: str.format() fields other than {} and {N}", line);
        if (!digits)
            idx = auto_i++;
        if (idx >= n)
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: Replacement index %zu out of range for positional args tuple",
                         line, idx);
        llm__jv_to_str(S, args[idx], sb);
        i = j;
    }
    size_t out_n;
    char *o = llm__jj_scratch_end(S, &out_n);
    return llm__jv_str(o, out_n);
}

/* Methods jinja2's ImmutableSandboxedEnvironment refuses (they mutate). */
static bool is_mutator(jv obj, const char *name) {
    static const char *const list_m[] = {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear",
                                         NULL};
    static const char *const dict_m[] = {"clear", "pop", "popitem", "setdefault", "update", NULL};
    const char *const *m = obj.type == JV_LIST ? list_m : obj.type == JV_DICT ? dict_m : NULL;
    for (; m && *m; m++)
        if (name_is(name, *m))
            return true;
    return false;
}

jv llm__jj_call_method(jj_state *S, jv obj, const char *name, const jv *args, size_t n, int line) {
    if (is_mutator(obj, name) && !(obj.type == JV_DICT && obj.u.dict->is_namespace))
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: access to attribute '%s' of '%s' object is unsafe.", line, name,
                     llm__jv_type_name(obj));
    if (obj.type == JV_STR) {
        if (name_is(name, "format"))
            return str_format(S, obj, args, n, line);
        if (name_is(name, "strip") || name_is(name, "lstrip") || name_is(name, "rstrip")) {
            int which = name[0] == 'l' ? 1 : name[0] == 'r' ? 2 : 3;
            if (n >= 1 && args[0].type == JV_STR)
                return llm__jj_strip(S, obj, args[0].u.str.s, args[0].u.str.n, which);
            return llm__jj_strip(S, obj, NULL, 0, which);
        }
        if (name_is(name, "split") && n <= 1)
            return str_split(S, obj, n ? &args[0] : NULL);
        if ((name_is(name, "startswith") || name_is(name, "endswith")) && n == 1)
            return llm__jv_bool(starts_or_ends(obj, args[0], name[0] == 'e'));
        if (name_is(name, "lower") && n == 0)
            return str_case(S, obj, 0);
        if (name_is(name, "upper") && n == 0)
            return str_case(S, obj, 1);
        if (name_is(name, "capitalize") && n == 0)
            return str_case(S, obj, 2);
        if (name_is(name, "replace") && n == 2 && args[0].type == JV_STR && args[1].type == JV_STR)
            return str_replace(S, obj, args[0], args[1]);
    } else if (obj.type == JV_DICT && !obj.u.dict->is_namespace) {
        jj_dict *d = obj.u.dict;
        if (name_is(name, "items") && n == 0) {
            jv l = llm__jv_list_new(S, d->n);
            for (size_t i = 0; i < d->n; i++) {
                jv pair = llm__jv_list_new(S, 2);
                pair.u.list->is_tuple = true;
                pair.u.list->items[0] = d->keys[i];
                pair.u.list->items[1] = d->vals[i];
                l.u.list->items[i] = pair;
            }
            return l;
        }
        if (name_is(name, "keys") && n == 0)
            return llm__jj_list_from(S, d->keys, d->n);
        if (name_is(name, "values") && n == 0)
            return llm__jj_list_from(S, d->vals, d->n);
        if (d->is_loop && name_is(name, "cycle")) { /* loop.cycle(a, b, ...): args[index0 % n] */
            jv i0;
            if (n == 0)
                llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: no items for cycling given", line);
            if (!llm__jj_dict_get(d, "index0", 6, &i0) || i0.type != JV_INT)
                llm__jj_fail(S, LLM_ERR_INTERNAL, "line %d: loop without index0", line);
            return args[(size_t)i0.u.i % n];
        }
        if (name_is(name, "get") && (n == 1 || n == 2)) {
            for (size_t i = 0; i < d->n; i++)
                if (llm__jv_equal(d->keys[i], args[0]))
                    return d->vals[i];
            return n == 2 ? args[1] : llm__jv_none();
        }
    } else if (obj.type == JV_UNDEFINED) {
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: '%s' called on an undefined value", line, name);
    }
    llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: method %s.%s() is not supported", line, llm__jv_type_name(obj),
            name);
}

bool llm__jj_global_func(const char *name, jv *out) {
    static const char *const names[] = {"raise_exception", "strftime_now", "namespace", "range", "dict"};
    for (int i = 0; i < 5; i++)
        if (name_is(name, names[i])) {
            out->type = JV_FUNC;
            out->u.func = i;
            return true;
        }
    return false;
}

jv llm__jj_call_func(jj_state *S, int func, const jv *args, size_t n, const char **kw, const jv *kwv,
                size_t n_kw, int line) {
    switch (func) {
    case JF_RAISE_EXCEPTION: {
        jv msg = n ? llm__jv_stringify(S, args[0]) : llm__jv_cstr("");
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: %.*s", line, (int)(msg.u.str.n > 200 ? 200 : msg.u.str.n),
                     msg.u.str.s);
    }
    case JF_STRFTIME_NOW: {
        if (n != 1 || args[0].type != JV_STR)
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: strftime_now(format) takes one string", line);
        int y = 1970, m = 1, d = 1;
        if (sscanf(S->ctx->date, "%d-%d-%d", &y, &m, &d) != 3 || m < 1 || m > 12 || d < 1 || d > 31)
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "the date '%s' is not YYYY-MM-DD", S->ctx->date);
        struct tm tm;
        memset(&tm, 0, sizeof tm);
        tm.tm_year = y - 1900, tm.tm_mon = m - 1, tm.tm_mday = d, tm.tm_hour = 12;
        time_t t = mktime(&tm); /* fills tm_wday / tm_yday */
        (void)t;
        tm.tm_hour = 0;
        char fmt[128], buf[256];
        if (args[0].u.str.n >= sizeof fmt)
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "strftime_now format too long");
        memcpy(fmt, args[0].u.str.s, args[0].u.str.n);
        fmt[args[0].u.str.n] = '\0';
        size_t len = strftime(buf, sizeof buf, fmt, &tm);
        return llm__jv_str(llm__jj_strndup(S, buf, len), len);
    }
    case JF_NAMESPACE:
    case JF_DICT: {
        jv d = llm__jv_dict_new(S);
        d.u.dict->is_namespace = func == JF_NAMESPACE;
        if (n > 0)
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: positional arguments to %s() are not supported",
                    line, func == JF_NAMESPACE ? "namespace" : "dict");
        for (size_t i = 0; i < n_kw; i++)
            llm__jj_dict_set(S, d.u.dict, llm__jv_cstr(kw[i]), kwv[i]);
        return d;
    }
    case JF_RANGE: {
        int64_t a = 0, b = 0, step = 1;
        for (size_t i = 0; i < n; i++)
            if (args[i].type != JV_INT)
                llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: range() needs integers", line);
        if (n == 1)
            b = args[0].u.i;
        else if (n == 2 || n == 3)
            a = args[0].u.i, b = args[1].u.i, step = n == 3 ? args[2].u.i : 1;
        else
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: range() takes 1 to 3 arguments", line);
        if (step == 0)
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: range() step must not be zero", line);
        int64_t count = step > 0 ? (b > a ? (b - a + step - 1) / step : 0) : (a > b ? (a - b - step - 1) / -step : 0);
        if (count > JJ_MAX_RANGE)
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: range() of more than %d items", line, JJ_MAX_RANGE);
        jv l = llm__jv_list_new(S, (size_t)count);
        for (int64_t i = 0; i < count; i++)
            l.u.list->items[i] = llm__jv_int(a + i * step);
        return l;
    }
    default: break;
    }
    llm__jj_fail(S, LLM_ERR_INTERNAL, "bad function id");
}

bool llm__jj_apply_test(jj_state *S, const char *name, jv v, const jv *args, size_t n, int line) {
    if (name_is(name, "defined"))
        return v.type != JV_UNDEFINED;
    if (name_is(name, "undefined"))
        return v.type == JV_UNDEFINED;
    if (name_is(name, "none"))
        return v.type == JV_NONE;
    if (name_is(name, "string"))
        return v.type == JV_STR;
    if (name_is(name, "number"))
        return v.type == JV_INT || v.type == JV_FLOAT;
    if (name_is(name, "integer"))
        return v.type == JV_INT;
    if (name_is(name, "float"))
        return v.type == JV_FLOAT;
    if (name_is(name, "boolean"))
        return v.type == JV_BOOL;
    if (name_is(name, "true"))
        return v.type == JV_BOOL && v.u.b;
    if (name_is(name, "false"))
        return v.type == JV_BOOL && !v.u.b;
    if (name_is(name, "mapping"))
        return v.type == JV_DICT;
    if (name_is(name, "iterable"))
        return v.type == JV_STR || v.type == JV_LIST || v.type == JV_DICT || v.type == JV_UNDEFINED;
    if (name_is(name, "sequence"))
        return v.type == JV_STR || v.type == JV_LIST || v.type == JV_DICT;
    if (name_is(name, "callable"))
        return v.type == JV_FUNC;
    if ((name_is(name, "equalto") || name_is(name, "eq") || name_is(name, "==")) && n == 1)
        return llm__jv_equal(v, args[0]);
    if ((name_is(name, "ne") || name_is(name, "!=")) && n == 1)
        return !llm__jv_equal(v, args[0]);
    if (name_is(name, "sameas") && n == 1)
        return v.type == args[0].type && llm__jv_equal(v, args[0]);
    if ((name_is(name, "odd") || name_is(name, "even")) && v.type == JV_INT)
        return (v.u.i % 2 != 0) == (name[0] == 'o');
    if (name_is(name, "divisibleby") && n == 1 && v.type == JV_INT && args[0].type == JV_INT &&
        args[0].u.i != 0)
        return v.u.i % args[0].u.i == 0;
    if (name_is(name, "in") && n == 1) {
        jj_list l = llm__jj_iterate(S, args[0], line);
        for (size_t i = 0; i < l.n; i++)
            if (llm__jv_equal(l.items[i], v))
                return true;
        return false;
    }
    llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: test '%s' is not supported", line, name);
}
