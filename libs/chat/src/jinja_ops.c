/* jinja_ops.c -- the operators of template expressions on values, with
 * Python semantics: subscripts (x[i], negative from the end; x[a:b:c]),
 * unary - and +, arithmetic (integer overflow is an error, not a wrap;
 * // and % floor as Python does), comparisons (numbers with numbers, strings
 * with strings), `in`, `~` (str join) and `+` (numbers, lists, strings --
 * markupsafe-aware), `*` repetition. The evaluator (jinja_eval.c) evaluates
 * the operands and calls these. */
#include <string.h>

#include "jinja.h"

_Noreturn static void undefined_error(jj_state *S, int line, const char *what) {
    llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: %s of an undefined value", line, what);
}

/* Python index normalisation; false when out of range. */
static bool norm_index(int64_t i, size_t n, size_t *out) {
    if (i < 0)
        i += (int64_t)n;
    if (i < 0 || (uint64_t)i >= n)
        return false;
    *out = (size_t)i;
    return true;
}

jv llm__jj_get_item(jj_state *S, jv obj, jv key, int line) {
    size_t idx;
    switch (obj.type) {
    case JV_UNDEFINED: undefined_error(S, line, "subscript");
    case JV_LIST:
        if (obj.u.list->is_generator)
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: 'generator' object is not subscriptable", line);
        if (key.type == JV_INT && norm_index(key.u.i, obj.u.list->n, &idx))
            return obj.u.list->items[idx];
        return llm__jv_undefined();
    case JV_DICT:
        for (size_t i = 0; i < obj.u.dict->n; i++)
            if (llm__jv_equal(obj.u.dict->keys[i], key))
                return obj.u.dict->vals[i];
        return llm__jv_undefined();
    case JV_STR:
        if (key.type == JV_INT &&
            norm_index(key.u.i, llm__jj_utf8_len(obj.u.str.s, obj.u.str.n), &idx)) {
            size_t b = llm__jj_utf8_offset(obj.u.str.s, obj.u.str.n, idx);
            size_t e = llm__jj_utf8_offset(obj.u.str.s, obj.u.str.n, idx + 1);
            return llm__jv_str(obj.u.str.s + b, e - b);
        }
        return llm__jv_undefined();
    default: return llm__jv_undefined();
    }
}

/* Python slice semantics over a sequence of length n. */
jv llm__jj_slice(jj_state *S, jv obj, jv a, jv b, jv c, int line) {
    if (obj.type == JV_UNDEFINED)
        undefined_error(S, line, "slice");
    if (obj.type != JV_LIST && obj.type != JV_STR)
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: cannot slice a %s", line, llm__jv_type_name(obj));
    for (int k = 0; k < 3; k++) {
        jv x = k == 0 ? a : k == 1 ? b : c;
        if (x.type != JV_INT && x.type != JV_NONE && x.type != JV_UNDEFINED)
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: slice indices must be integers", line);
    }
    int64_t n = obj.type == JV_LIST ? (int64_t)obj.u.list->n
                                    : (int64_t)llm__jj_utf8_len(obj.u.str.s, obj.u.str.n);
    int64_t st = c.type == JV_INT ? c.u.i : 1;
    if (st == 0)
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: slice step cannot be zero", line);
    int64_t lo, hi;
    if (st > 0) {
        lo = a.type == JV_INT ? a.u.i : 0;
        hi = b.type == JV_INT ? b.u.i : n;
        if (lo < 0) lo = lo + n < 0 ? 0 : lo + n;
        if (lo > n) lo = n;
        if (hi < 0) hi = hi + n < 0 ? 0 : hi + n;
        if (hi > n) hi = n;
    } else {
        lo = a.type == JV_INT ? a.u.i : n - 1;
        hi = b.type == JV_INT ? b.u.i : -1 - n; /* "before the start" */
        if (lo < 0) lo = lo + n < 0 ? -1 : lo + n;
        if (lo >= n) lo = n - 1;
        if (hi < 0) hi = hi + n < 0 ? -1 : hi + n;
        if (hi >= n) hi = n - 1;
    }
    size_t count = 0;
    for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st)
        count++;
    if (obj.type == JV_LIST) {
        jv out = llm__jv_list_new(S, count);
        size_t k = 0;
        for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st)
            out.u.list->items[k++] = obj.u.list->items[i];
        return out;
    }
    if (st == 1) {
        size_t bo = llm__jj_utf8_offset(obj.u.str.s, obj.u.str.n, (size_t)lo);
        size_t eo = llm__jj_utf8_offset(obj.u.str.s, obj.u.str.n, (size_t)(hi > lo ? hi : lo));
        return llm__jv_str(obj.u.str.s + bo, eo - bo);
    }
    llm__sb *sb = llm__jj_scratch_begin(S);
    for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) {
        size_t bo = llm__jj_utf8_offset(obj.u.str.s, obj.u.str.n, (size_t)i);
        size_t eo = llm__jj_utf8_offset(obj.u.str.s, obj.u.str.n, (size_t)i + 1);
        llm__sb_put(sb, obj.u.str.s + bo, eo - bo);
    }
    size_t len;
    char *s = llm__jj_scratch_end(S, &len);
    return llm__jv_str(s, len);
}

/* floor() without libm (the tokenizer library does not link it). */
static double floor_nolibm(double x) {
    if (!(x > -4503599627370496.0 && x < 4503599627370496.0)) /* |x| >= 2^52, inf or nan */
        return x;
    double t = (double)(int64_t)x;
    return t > x ? t - 1.0 : t;
}

static bool is_num(jv v) { return v.type == JV_INT || v.type == JV_FLOAT || v.type == JV_BOOL; }
static bool is_intlike(jv v) { return v.type == JV_INT || v.type == JV_BOOL; }
static int64_t ival(jv v) { return v.type == JV_INT ? v.u.i : (int64_t)v.u.b; }
static double fval(jv v) { return v.type == JV_FLOAT ? v.u.f : (double)ival(v); }

/* markupsafe.escape of a plain string. */
static jv html_escape(jj_state *S, jv v) {
    llm__sb *sb = llm__jj_scratch_begin(S);
    for (size_t i = 0; i < v.u.str.n; i++) {
        char c = v.u.str.s[i];
        switch (c) {
        case '&': llm__sb_puts(sb, "&amp;"); break;
        case '<': llm__sb_puts(sb, "&lt;"); break;
        case '>': llm__sb_puts(sb, "&gt;"); break;
        case '\'': llm__sb_puts(sb, "&#39;"); break;
        case '"': llm__sb_puts(sb, "&#34;"); break;
        default: llm__sb_put(sb, &c, 1);
        }
    }
    size_t n;
    char *o = llm__jj_scratch_end(S, &n);
    return llm__jv_str(o, n);
}

/* a + b of two strings; markup: Python's `+` (Markup + str escapes the str),
 * else jinja's `~` (plain str join when autoescape is off). */
static jv concat(jj_state *S, jv a, jv b, bool markup) {
    bool safe = markup && (a.u.str.safe || b.u.str.safe);
    if (safe && !a.u.str.safe)
        a = html_escape(S, a);
    if (safe && !b.u.str.safe)
        b = html_escape(S, b);
    size_t n = a.u.str.n + b.u.str.n;
    char *p = llm__jj_alloc(S, n + 1);
    memcpy(p, a.u.str.s, a.u.str.n);
    memcpy(p + a.u.str.n, b.u.str.s, b.u.str.n);
    jv r = llm__jv_str(p, n);
    r.u.str.safe = safe;
    return r;
}

static jv repeat(jj_state *S, jv seq, int64_t times, int line) {
    if (times < 0)
        times = 0;
    size_t unit = seq.type == JV_STR ? seq.u.str.n : seq.u.list->n;
    if (unit == 0) /* '' * 10**10 is empty at once (the copy loops below used to spin) */
        times = 0;
    if (unit && (uint64_t)times > JJ_MAX_OUTPUT / unit)
        llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: repetition too large", line);
    size_t total = unit * (size_t)times;
    if (seq.type == JV_STR) {
        char *p = llm__jj_alloc(S, total + 1);
        for (int64_t i = 0; i < times; i++)
            memcpy(p + (size_t)i * unit, seq.u.str.s, unit);
        return llm__jv_str(p, total);
    }
    jv out = llm__jv_list_new(S, total);
    for (int64_t i = 0; i < times; i++)
        if (unit)
            memcpy(out.u.list->items + (size_t)i * unit, seq.u.list->items, unit * sizeof(jv));
    return out;
}

static int compare(jj_state *S, jv a, jv b, const char *op, int line) {
    if (is_num(a) && is_num(b)) {
        if (is_intlike(a) && is_intlike(b))
            return ival(a) < ival(b) ? -1 : ival(a) > ival(b);
        double x = fval(a), y = fval(b);
        return x < y ? -1 : x > y;
    }
    if (a.type == JV_STR && b.type == JV_STR) {
        size_t n = a.u.str.n < b.u.str.n ? a.u.str.n : b.u.str.n;
        int c = memcmp(a.u.str.s, b.u.str.s, n);
        if (c)
            return c < 0 ? -1 : 1;
        return a.u.str.n < b.u.str.n ? -1 : a.u.str.n > b.u.str.n;
    }
    llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: '%s' not supported between %s and %s", line, op,
            llm__jv_type_name(a), llm__jv_type_name(b));
}

static bool contains(jj_state *S, jv hay, jv needle, int line) {
    if (hay.type == JV_STR) {
        if (needle.type != JV_STR)
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: 'in <string>' requires a string", line);
        if (needle.u.str.n == 0)
            return true;
        for (size_t i = 0; i + needle.u.str.n <= hay.u.str.n; i++)
            if (memcmp(hay.u.str.s + i, needle.u.str.s, needle.u.str.n) == 0)
                return true;
        return false;
    }
    jj_list l = llm__jj_iterate(S, hay, line);
    for (size_t i = 0; i < l.n; i++)
        if (llm__jv_equal(l.items[i], needle))
            return true;
    return false;
}

/* -v (neg) or +v: numbers only (a bool counts as an int), as in jinja2. */
jv llm__jj_unary(jj_state *S, bool neg, jv v, int line) {
    jv r;
    if (v.type == JV_UNDEFINED)
        undefined_error(S, line, "unary operator");
    if (is_intlike(v)) {
        if (neg && ival(v) == INT64_MIN)
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: integer overflow", line);
        r = llm__jv_int(neg ? -ival(v) : ival(v));
    } else if (v.type == JV_FLOAT) {
        r = llm__jv_float(neg ? -v.u.f : v.u.f);
    } else {
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: bad operand type for unary -: %s", line,
                llm__jv_type_name(v));
    }
    return r;
}

/* a op b for an EX_BIN node's operator (jinja.h lists them). */
jv llm__jj_binary(jj_state *S, const char *op, jv a, jv b, int line) {
    if (op[0] == '~' ) {
        return concat(S, llm__jv_stringify(S, a), llm__jv_stringify(S, b), false);
    }
    if (!strcmp(op, "=="))
        return llm__jv_bool(llm__jv_equal(a, b));
    if (!strcmp(op, "!="))
        return llm__jv_bool(!llm__jv_equal(a, b));
    if (!strcmp(op, "in"))
        return llm__jv_bool(contains(S, b, a, line));
    if (!strcmp(op, "not in"))
        return llm__jv_bool(!contains(S, b, a, line));
    if (!strcmp(op, "<"))
        return llm__jv_bool(compare(S, a, b, op, line) < 0);
    if (!strcmp(op, ">"))
        return llm__jv_bool(compare(S, a, b, op, line) > 0);
    if (!strcmp(op, "<="))
        return llm__jv_bool(compare(S, a, b, op, line) <= 0);
    if (!strcmp(op, ">="))
        return llm__jv_bool(compare(S, a, b, op, line) >= 0);
    if (a.type == JV_UNDEFINED || b.type == JV_UNDEFINED)
        undefined_error(S, line, op);
    int64_t r;
    if (!strcmp(op, "+")) {
        if (is_intlike(a) && is_intlike(b)) {
            if (__builtin_add_overflow(ival(a), ival(b), &r))
                llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: integer overflow", line);
            return llm__jv_int(r);
        }
        if (is_num(a) && is_num(b))
            return llm__jv_float(fval(a) + fval(b));
        if (a.type == JV_STR && b.type == JV_STR)
            return concat(S, a, b, true);
        if (a.type == JV_LIST && b.type == JV_LIST) {
            jv out = llm__jv_list_new(S, a.u.list->n + b.u.list->n);
            if (a.u.list->n)
                memcpy(out.u.list->items, a.u.list->items, a.u.list->n * sizeof(jv));
            if (b.u.list->n)
                memcpy(out.u.list->items + a.u.list->n, b.u.list->items, b.u.list->n * sizeof(jv));
            return out;
        }
    } else if (!strcmp(op, "-")) {
        if (is_intlike(a) && is_intlike(b)) {
            if (__builtin_sub_overflow(ival(a), ival(b), &r))
                llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: integer overflow", line);
            return llm__jv_int(r);
        }
        if (is_num(a) && is_num(b))
            return llm__jv_float(fval(a) - fval(b));
    } else if (!strcmp(op, "*")) {
        if (is_intlike(a) && is_intlike(b)) {
            if (__builtin_mul_overflow(ival(a), ival(b), &r))
                llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: integer overflow", line);
            return llm__jv_int(r);
        }
        if (is_num(a) && is_num(b))
            return llm__jv_float(fval(a) * fval(b));
        if ((a.type == JV_STR || a.type == JV_LIST) && is_intlike(b))
            return repeat(S, a, ival(b), line);
        if ((b.type == JV_STR || b.type == JV_LIST) && is_intlike(a))
            return repeat(S, b, ival(a), line);
    } else if (!strcmp(op, "/")) {
        if (is_num(a) && is_num(b)) {
            if (fval(b) == 0.0)
                llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: division by zero", line);
            return llm__jv_float(fval(a) / fval(b));
        }
    } else if (!strcmp(op, "//") || !strcmp(op, "%")) {
        bool mod = op[0] == '%';
        if (is_intlike(a) && is_intlike(b)) {
            int64_t x = ival(a), y = ival(b);
            if (y == 0)
                llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: integer division or modulo by zero", line);
            if (x == INT64_MIN && y == -1)
                llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: integer overflow", line);
            int64_t q = x / y, m = x % y;
            if (m != 0 && ((m < 0) != (y < 0))) { /* Python floors */
                q -= 1;
                m += y;
            }
            return llm__jv_int(mod ? m : q);
        }
        if (is_num(a) && is_num(b)) {
            double x = fval(a), y = fval(b);
            if (y == 0.0)
                llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: float division or modulo by zero", line);
            double q = floor_nolibm(x / y);
            return llm__jv_float(mod ? x - q * y : q);
        }
        if (mod && a.type == JV_STR)
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: string %% formatting is not supported", line);
    } else if (!strcmp(op, "**")) {
        if (is_intlike(a) && is_intlike(b) && ival(b) >= 0) {
            int64_t base = ival(a), ex = ival(b), acc = 1;
            for (int64_t i = 0; i < ex; i++)
                if (__builtin_mul_overflow(acc, base, &acc))
                    llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: integer overflow", line);
            return llm__jv_int(acc);
        }
        if (is_num(a) && is_intlike(b) && ival(b) >= 0 && ival(b) <= 1024) {
            double acc = 1.0;
            for (int64_t i = 0; i < ival(b); i++)
                acc *= fval(a);
            return llm__jv_float(acc);
        }
        if (is_num(a) && is_num(b))
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: ** with a negative or fractional exponent", line);
    }
    llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: unsupported operand types for %s: %s and %s", line, op,
            llm__jv_type_name(a), llm__jv_type_name(b));
}
