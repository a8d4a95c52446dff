/* jinja_filters.c -- the filters chat templates use ({{ x | name(args) }}),
 * with jinja2's semantics (select/reject, sorting, tojson as transformers
 * defines it, ...). Unknown names are LLM_ERR_UNSUPPORTED. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja.h"

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

/* selectattr / rejectattr: keep items whose attribute passes the test. */
static jv select_attr(jj_state *S, jv seq, const jv *args, size_t n, bool reject, int line) {
    if (n < 1 || args[0].type != JV_STR)
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: selectattr needs an attribute name", line);
    /* jinja2's select_or_reject: "if value:" -- a falsy sequence (none,
     * undefined, empty) selects nothing, without iterating. */
    jj_list in = llm__jv_truthy(seq) ? llm__jj_iterate(S, seq, line) : (jj_list){NULL, 0, false, false, false};
    jv out = llm__jv_list_new(S, in.n);
    out.u.list->is_generator = true;
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
        case JV_LIST:
            if (v.u.list->is_generator)
                llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: object of type 'generator' has no len()", line);
            return llm__jv_int((int64_t)v.u.list->n);
        case JV_DICT: return llm__jv_int((int64_t)v.u.dict->n);
        default: type_error(S, line, "length", v);
        }
    }
    if (name_is(name, "string"))
        return llm__jv_stringify(S, v);
    if (name_is(name, "list")) {
        jj_list l = llm__jj_iterate(S, v, line);
        return llm__jj_list_from(S, l.items, l.n);
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
        jv out = llm__jj_list_from(S, l.items, l.n);
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
        jj_list in = llm__jv_truthy(v) ? llm__jj_iterate(S, v, line) : (jj_list){NULL, 0, false, false, false};
        jv out = llm__jv_list_new(S, in.n);
        out.u.list->is_generator = true;
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
        return llm__jj_call_method(S, llm__jv_stringify(S, v), name, NULL, 0, line);
    if (name_is(name, "replace") && n == 2)
        return llm__jj_call_method(S, llm__jv_stringify(S, v), "replace",
                                   (jv[2]){need_str(S, args[0], line, "replace"), need_str(S, args[1], line, "replace")},
                                   2, line);
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
        out.u.list->is_generator = true;
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
