/* jinja_builtins.c -- the filters, tests, string/dict methods and global
 * functions chat templates use, with Python/jinja2 semantics. Unknown names
 * are LLM_ERR_UNSUPPORTED (the caller may fall back to a family renderer). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chat/jinja.h"

static bool name_is(const char *a, const char *b) { return strcmp(a, b) == 0; }

_Noreturn static void type_error(jj_state *S, int line, const char *what, jv v) {
    llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: %s not supported for a value of type %s", line, what,
            llm__jv_type_name(v));
}

static jv need_str(jj_state *S, jv v, int line, const char *what) {
    if (v.type != JV_STR)
        type_error(S, line, what, v);
    return v;
}

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
    jj_list out = {NULL, 0, false};
    switch (v.type) {
    case JV_UNDEFINED: return out; /* jinja's Undefined iterates as empty */
    case JV_LIST: return *v.u.list;
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

static jv list_from(jj_state *S, const jv *items, size_t n) {
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
    return list_from(S, items, cnt);
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
            return list_from(S, d->keys, d->n);
        if (name_is(name, "values") && n == 0)
            return list_from(S, d->vals, d->n);
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

/* selectattr / rejectattr: keep items whose attribute passes the test. */
static jv select_attr(jj_state *S, jv seq, const jv *args, size_t n, bool reject, int line) {
    if (n < 1 || args[0].type != JV_STR)
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: selectattr needs an attribute name", line);
    /* jinja2's select_or_reject: "if value:" -- a falsy sequence (none,
     * undefined, empty) selects nothing, without iterating. */
    jj_list in = llm__jv_truthy(seq) ? llm__jj_iterate(S, seq, line) : (jj_list){NULL, 0, false};
    jv out = llm__jv_list_new(S, in.n);
    size_t k = 0;
    for (size_t i = 0; i < in.n; i++) {
        jv item = in.items[i], attr = llm__jv_undefined();
        if (item.type == JV_DICT)
            llm__jj_dict_get(item.u.dict, args[0].u.str.s, args[0].u.str.n, &attr);
        bool ok;
        if (n == 1) {
            ok = llm__jv_truthy(attr);
        } else {
            if (args[1].type != JV_STR)
                llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: test name must be a string", line);
            char *test = llm__jj_strndup(S, args[1].u.str.s, args[1].u.str.n);
            ok = llm__jj_apply_test(S, test, attr, args + 2, n - 2, line);
        }
        if (ok != reject)
            out.u.list->items[k++] = item;
    }
    out.u.list->n = k;
    return out;
}

/* jinja2's sort key comparison: numbers numerically, strings by code point
 * (lowercased first unless case_sensitive; ASCII case folding); other mixes
 * are a TypeError as in Python. */
static int sort_cmp(jj_state *S, jv a, jv b, bool case_sensitive, int line) {
    bool na = a.type == JV_INT || a.type == JV_FLOAT || a.type == JV_BOOL;
    bool nb = b.type == JV_INT || b.type == JV_FLOAT || b.type == JV_BOOL;
    if (na && nb) {
        double x = a.type == JV_FLOAT ? a.u.f : a.type == JV_BOOL ? a.u.b : (double)a.u.i;
        double y = b.type == JV_FLOAT ? b.u.f : b.type == JV_BOOL ? b.u.b : (double)b.u.i;
        return x < y ? -1 : x > y;
    }
    if (a.type == JV_STR && b.type == JV_STR) {
        size_t n = a.u.str.n < b.u.str.n ? a.u.str.n : b.u.str.n;
        for (size_t i = 0; i < n; i++) {
            unsigned char x = (unsigned char)a.u.str.s[i], y = (unsigned char)b.u.str.s[i];
            if (!case_sensitive) {
                if (x >= 'A' && x <= 'Z')
                    x = (unsigned char)(x - 'A' + 'a');
                if (y >= 'A' && y <= 'Z')
                    y = (unsigned char)(y - 'A' + 'a');
            }
            if (x != y)
                return x < y ? -1 : 1;
        }
        return (a.u.str.n > b.u.str.n) - (a.u.str.n < b.u.str.n);
    }
    llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: '<' not supported between instances of '%s' and '%s'", line,
                 llm__jv_type_name(a), llm__jv_type_name(b));
}

static const jv *kwarg(const char **kw, const jv *kwv, size_t n_kw, const char *name);

/* dictsort(case_sensitive=False, by='key', reverse=False): (key, value)
 * tuples in sorted order (a stable sort, as Python's). */
static jv dictsort(jj_state *S, jv v, const jv *args, size_t n, const char **kw, const jv *kwv, size_t n_kw,
                   int line) {
    if (v.type != JV_DICT)
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: dictsort of a %s", line, llm__jv_type_name(v));
    const jv *cs = n >= 1 ? &args[0] : kwarg(kw, kwv, n_kw, "case_sensitive");
    const jv *by = n >= 2 ? &args[1] : kwarg(kw, kwv, n_kw, "by");
    const jv *rev = n >= 3 ? &args[2] : kwarg(kw, kwv, n_kw, "reverse");
    int pos = 0;
    if (by && by->type == JV_STR && by->u.str.n == 5 && memcmp(by->u.str.s, "value", 5) == 0)
        pos = 1;
    else if (by && !(by->type == JV_STR && by->u.str.n == 3 && memcmp(by->u.str.s, "key", 3) == 0))
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: You can only sort by either \"key\" or \"value\"", line);
    bool case_s = cs && llm__jv_truthy(*cs), reverse = rev && llm__jv_truthy(*rev);
    jj_dict *d = v.u.dict;
    jv l = llm__jv_list_new(S, d->n);
    for (size_t i = 0; i < d->n; i++) {
        jv pair = llm__jv_list_new(S, 2);
        pair.u.list->is_tuple = true;
        pair.u.list->items[0] = d->keys[i];
        pair.u.list->items[1] = d->vals[i];
        l.u.list->items[i] = pair;
    }
    jv *it = l.u.list->items;
    for (size_t i = 1; i < d->n; i++) /* insertion sort: stable */
        for (size_t j = i; j > 0; j--) {
            int c = sort_cmp(S, it[j - 1].u.list->items[pos], it[j].u.list->items[pos], case_s, line);
            if (reverse ? c >= 0 : c <= 0)
                break;
            jv t = it[j];
            it[j] = it[j - 1];
            it[j - 1] = t;
        }
    return l;
}

static const jv *kwarg(const char **kw, const jv *kwv, size_t n_kw, const char *name) {
    for (size_t i = 0; i < n_kw; i++)
        if (name_is(kw[i], name))
            return &kwv[i];
    return NULL;
}

jv llm__jj_apply_filter(jj_state *S, const char *name, jv v, const jv *args, size_t n, const char **kw,
                   const jv *kwv, size_t n_kw, int line) {
    if (name_is(name, "trim")) {
        jv s = llm__jv_stringify(S, v);
        if (n >= 1 && args[0].type == JV_STR)
            return llm__jj_strip(S, s, args[0].u.str.s, args[0].u.str.n, 3);
        return llm__jj_strip(S, s, NULL, 0, 3);
    }
    if (name_is(name, "length") || name_is(name, "count")) {
        switch (v.type) {
        case JV_UNDEFINED: return llm__jv_int(0);
        case JV_STR: return llm__jv_int((int64_t)llm__jj_utf8_len(v.u.str.s, v.u.str.n));
        case JV_LIST: return llm__jv_int((int64_t)v.u.list->n);
        case JV_DICT: return llm__jv_int((int64_t)v.u.dict->n);
        default: type_error(S, line, "length", v);
        }
    }
    if (name_is(name, "string"))
        return llm__jv_stringify(S, v);
    if (name_is(name, "list")) {
        jj_list l = llm__jj_iterate(S, v, line);
        return list_from(S, l.items, l.n);
    }
    if (name_is(name, "tojson")) {
        /* transformers: tojson(x, ensure_ascii=False, indent=None,
         * separators=None, sort_keys=False) = json.dumps with those. */
        static const char *const names[] = {"ensure_ascii", "indent", "separators", "sort_keys"};
        const jv *opt[4] = {NULL, NULL, NULL, NULL};
        if (n > 4)
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: tojson() takes at most 5 arguments", line);
        for (size_t i = 0; i < n; i++)
            opt[i] = &args[i];
        for (size_t k = 0; k < n_kw; k++) {
            size_t i = 0;
            while (i < 4 && strcmp(kw[k], names[i]) != 0)
                i++;
            if (i == 4)
                llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: tojson() got an unexpected keyword argument '%s'", line,
                             kw[k]);
            opt[i] = &kwv[k];
        }
        jj_json_opts jo = {-1, NULL, 0, NULL, 0, false, false};
        if (opt[0])
            jo.ensure_ascii = llm__jv_truthy(*opt[0]);
        if (opt[1] && opt[1]->type == JV_INT)
            jo.indent = opt[1]->u.i < 0 ? 0 : (int)(opt[1]->u.i > 64 ? 64 : opt[1]->u.i);
        else if (opt[1] && opt[1]->type != JV_NONE)
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: tojson indent other than an integer", line);
        if (opt[2] && opt[2]->type != JV_NONE) {
            const jv *sep = opt[2];
            if (sep->type != JV_LIST || sep->u.list->n != 2 || sep->u.list->items[0].type != JV_STR ||
                sep->u.list->items[1].type != JV_STR)
                llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: tojson separators must be two strings", line);
            jo.item_sep = sep->u.list->items[0].u.str.s, jo.item_sep_n = sep->u.list->items[0].u.str.n;
            jo.key_sep = sep->u.list->items[1].u.str.s, jo.key_sep_n = sep->u.list->items[1].u.str.n;
        }
        if (opt[3])
            jo.sort_keys = llm__jv_truthy(*opt[3]);
        /* to_json fails on values JSON cannot hold: the scratch buffer is
         * freed by the error path (a plain local one leaked there). */
        llm__jv_to_json(S, v, &jo, llm__jj_scratch_begin(S));
        size_t len;
        char *o = llm__jj_scratch_end(S, &len);
        return llm__jv_str(o, len);
    }
    if (name_is(name, "dictsort"))
        return dictsort(S, v, args, n, kw, kwv, n_kw, line);
    if (name_is(name, "min") || name_is(name, "max")) {
        const jv *cs = n >= 1 ? &args[0] : kwarg(kw, kwv, n_kw, "case_sensitive");
        if (n > 1 || kwarg(kw, kwv, n_kw, "attribute"))
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: %s() with an attribute", line, name);
        jj_list l = llm__jj_iterate(S, v, line);
        if (l.n == 0)
            return llm__jv_undefined();
        size_t best = 0;
        for (size_t i = 1; i < l.n; i++) {
            int c = sort_cmp(S, l.items[i], l.items[best], cs && llm__jv_truthy(*cs), line);
            if (name[1] == 'i' ? c < 0 : c > 0)
                best = i;
        }
        return l.items[best];
    }
    if (name_is(name, "sort")) { /* sort(reverse=False, case_sensitive=False, attribute=None), stable */
        const jv *rev = n >= 1 ? &args[0] : kwarg(kw, kwv, n_kw, "reverse");
        const jv *cs = n >= 2 ? &args[1] : kwarg(kw, kwv, n_kw, "case_sensitive");
        const jv *at = n >= 3 ? &args[2] : kwarg(kw, kwv, n_kw, "attribute");
        if (at && at->type != JV_STR && at->type != JV_NONE)
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: sort attribute other than a name", line);
        jj_list l = llm__jj_iterate(S, v, line);
        jv out = list_from(S, l.items, l.n);
        jv *it = out.u.list->items;
        bool reverse = rev && llm__jv_truthy(*rev), case_s = cs && llm__jv_truthy(*cs);
        for (size_t i = 1; i < l.n; i++)
            for (size_t j = i; j > 0; j--) {
                jv a = it[j - 1], b = it[j];
                if (at && at->type == JV_STR) {
                    jv x = llm__jv_undefined(), y = llm__jv_undefined();
                    if (a.type == JV_DICT)
                        llm__jj_dict_get(a.u.dict, at->u.str.s, at->u.str.n, &x);
                    if (b.type == JV_DICT)
                        llm__jj_dict_get(b.u.dict, at->u.str.s, at->u.str.n, &y);
                    a = x, b = y;
                }
                int c = sort_cmp(S, a, b, case_s, line);
                if (reverse ? c >= 0 : c <= 0)
                    break;
                jv t = it[j];
                it[j] = it[j - 1];
                it[j - 1] = t;
            }
        return out;
    }
    if (name_is(name, "select") || name_is(name, "reject")) { /* select("test", args...) */
        bool keep_true = name[0] == 's';
        if (n >= 1 && args[0].type != JV_STR)
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: %s needs a test name", line, name);
        jj_list in = llm__jv_truthy(v) ? llm__jj_iterate(S, v, line) : (jj_list){NULL, 0, false};
        jv out = llm__jv_list_new(S, in.n);
        size_t k = 0;
        char tname[64];
        if (n >= 1)
            snprintf(tname, sizeof tname, "%.*s", (int)args[0].u.str.n, args[0].u.str.s);
        for (size_t i = 0; i < in.n; i++) {
            bool t = n >= 1 ? llm__jj_apply_test(S, tname, in.items[i], args + 1, n - 1, line)
                            : llm__jv_truthy(in.items[i]);
            if (t == keep_true)
                out.u.list->items[k++] = in.items[i];
        }
        out.u.list->n = k;
        return out;
    }
    if (name_is(name, "escape") || name_is(name, "e")) { /* markupsafe.escape: Markup stays as it is */
        if (v.type == JV_STR && v.u.str.safe)
            return v;
        jv s = llm__jv_stringify(S, v);
        llm__sb *sb = llm__jj_scratch_begin(S);
        for (size_t i = 0; i < s.u.str.n; i++) {
            char c = s.u.str.s[i];
            const char *r = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '\'' ? "&#39;"
                          : c == '"' ? "&#34;" : NULL;
            if (r)
                llm__sb_puts(sb, r);
            else
                llm__sb_put(sb, &c, 1);
        }
        size_t len;
        char *o = llm__jj_scratch_end(S, &len);
        jv r = llm__jv_str(o, len);
        r.u.str.safe = true;
        return r;
    }
    if (name_is(name, "indent")) { /* indent(width=4, first=False, blank=False) */
        const jv *w = n >= 1 ? &args[0] : kwarg(kw, kwv, n_kw, "width");
        const jv *fi = n >= 2 ? &args[1] : kwarg(kw, kwv, n_kw, "first");
        const jv *bl = n >= 3 ? &args[2] : kwarg(kw, kwv, n_kw, "blank");
        jv pad = w && w->type == JV_STR ? *w : llm__jv_cstr("    ");
        if (w && w->type == JV_INT) {
            int64_t k = w->u.i < 0 ? 0 : w->u.i > 256 ? 256 : w->u.i;
            char *p = llm__jj_alloc(S, (size_t)k + 1);
            memset(p, ' ', (size_t)k);
            pad = llm__jv_str(p, (size_t)k);
        }
        jv s = llm__jv_stringify(S, v);
        bool first = fi && llm__jv_truthy(*fi), blank = bl && llm__jv_truthy(*bl);
        llm__sb *sb = llm__jj_scratch_begin(S);
        /* Lines split as str.splitlines() on \n only (templates hold \n). */
        size_t start = 0;
        for (size_t i = 0; i <= s.u.str.n; i++) {
            if (i < s.u.str.n && s.u.str.s[i] != '\n')
                continue;
            bool is_first = start == 0, empty = i == start;
            if (is_first ? first : (blank || !empty))
                llm__sb_put(sb, pad.u.str.s, pad.u.str.n);
            llm__sb_put(sb, s.u.str.s + start, i - start);
            if (i < s.u.str.n)
                llm__sb_put(sb, "\n", 1);
            start = i + 1;
        }
        size_t len;
        char *o = llm__jj_scratch_end(S, &len);
        return llm__jv_str(o, len);
    }
    if (name_is(name, "selectattr") || name_is(name, "rejectattr"))
        return select_attr(S, v, args, n, name[0] == 'r', line);
    if (name_is(name, "join")) {
        jj_list l = llm__jj_iterate(S, v, line);
        jv sep = n >= 1 ? need_str(S, args[0], line, "join separator") : llm__jv_cstr("");
        llm__sb *sb = llm__jj_scratch_begin(S);
        for (size_t i = 0; i < l.n; i++) {
            if (i)
                llm__sb_put(sb, sep.u.str.s, sep.u.str.n);
            llm__jv_to_str(S, l.items[i], sb);
        }
        size_t len;
        char *o = llm__jj_scratch_end(S, &len);
        return llm__jv_str(o, len);
    }
    if (name_is(name, "first") || name_is(name, "last")) {
        jj_list l = llm__jj_iterate(S, v, line);
        if (l.n == 0)
            return llm__jv_undefined();
        return name[0] == 'f' ? l.items[0] : l.items[l.n - 1];
    }
    if (name_is(name, "lower") || name_is(name, "upper") || name_is(name, "capitalize"))
        return str_case(S, llm__jv_stringify(S, v), name[0] == 'l' ? 0 : name[0] == 'u' ? 1 : 2);
    if (name_is(name, "replace") && n == 2)
        return str_replace(S, llm__jv_stringify(S, v), need_str(S, args[0], line, "replace"),
                           need_str(S, args[1], line, "replace"));
    if (name_is(name, "default") || name_is(name, "d")) {
        bool boolean = n >= 2 && llm__jv_truthy(args[1]);
        if (v.type == JV_UNDEFINED || (boolean && !llm__jv_truthy(v)))
            return n >= 1 ? args[0] : llm__jv_cstr("");
        return v;
    }
    if (name_is(name, "items") && v.type == JV_DICT)
        return llm__jj_call_method(S, v, "items", NULL, 0, line);
    if (name_is(name, "safe")) {
        jv r = llm__jv_stringify(S, v);
        r.u.str.safe = true;
        return r;
    }
    if (name_is(name, "int")) {
        if (v.type == JV_INT)
            return v;
        if (v.type == JV_FLOAT)
            return llm__jv_int((int64_t)v.u.f);
        if (v.type == JV_BOOL)
            return llm__jv_int(v.u.b);
        if (v.type == JV_STR) {
            char *s = llm__jj_strndup(S, v.u.str.s, v.u.str.n), *end;
            long long x = strtoll(s, &end, 10);
            return llm__jv_int(end != s && *end == '\0' ? x : 0);
        }
        return llm__jv_int(0);
    }
    if (name_is(name, "reverse")) {
        jj_list l = llm__jj_iterate(S, v, line);
        jv out = llm__jv_list_new(S, l.n);
        for (size_t i = 0; i < l.n; i++)
            out.u.list->items[i] = l.items[l.n - 1 - i];
        return out;
    }
    if (name_is(name, "map")) {
        const jv *attr = kwarg(kw, kwv, n_kw, "attribute");
        if (!attr || attr->type != JV_STR)
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: only map(attribute=...) is supported", line);
        jj_list l = llm__jj_iterate(S, v, line);
        jv out = llm__jv_list_new(S, l.n);
        for (size_t i = 0; i < l.n; i++) {
            jv x = llm__jv_undefined();
            if (l.items[i].type == JV_DICT)
                llm__jj_dict_get(l.items[i].u.dict, attr->u.str.s, attr->u.str.n, &x);
            out.u.list->items[i] = x;
        }
        return out;
    }
    llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: filter '%s' is not supported", line, name);
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
