/*
 * schema_rules.c -- the table of named GBNF rules a conversion builds, the
 * built-in rules, and the two generators of repetition text (bounded
 * repeats, decimal integer ranges). Rule names and bodies follow
 * llama.cpp's json-schema-to-grammar so that a schema prints the same text.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"

/* ---- built-in rules ------------------------------------------------------------- */

typedef struct builtin {
    const char *name, *body;
    const char *deps[6];
} builtin;

/* The JSON grammar pieces (those of llama.cpp's PRIMITIVE_RULES and
 * STRING_FORMAT_RULES): whitespace is "space" after punctuation; numbers
 * keep at most 16 integral and 16 fraction digits. */
static const builtin BUILTINS[] = {
    {"boolean", "(\"true\" | \"false\")", {0}},
    {"decimal-part", "[0-9]{1,16}", {0}},
    {"integral-part", "[0] | [1-9] [0-9]{0,15}", {0}},
    {"number", "(\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)?",
     {"integral-part", "decimal-part"}},
    {"integer", "(\"-\"? integral-part)", {"integral-part"}},
    {"value", "object | array | string | number | boolean | null",
     {"object", "array", "string", "number", "boolean", "null"}},
    {"object", "\"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? space \"}\"",
     {"string", "value"}},
    {"array", "\"[\" space ( value (\",\" space value)* )? space \"]\"", {"value"}},
    {"uuid",
     "\"\\\"\" [0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" "
     "[0-9a-fA-F]{12} \"\\\"\"",
     {0}},
    {"char", "[^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})", {0}},
    {"string", "\"\\\"\" char* \"\\\"\"", {"char"}},
    {"null", "\"null\"", {0}},
    {"date", "[0-9]{4} \"-\" ( \"0\" [1-9] | \"1\" [0-2] ) \"-\" ( \"0\" [1-9] | [1-2] [0-9] | \"3\" [0-1] )",
     {0}},
    {"time",
     "([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] ( \".\" [0-9]{3} )? ( \"Z\" | ( \"+\" "
     "| \"-\" ) ( [01] [0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] )",
     {0}},
    {"date-time", "date \"T\" time", {"date", "time"}},
    {"date-string", "\"\\\"\" date \"\\\"\"", {"date"}},
    {"time-string", "\"\\\"\" time \"\\\"\"", {"time"}},
    {"date-time-string", "\"\\\"\" date-time \"\\\"\"", {"date-time"}},
};

static const builtin *find_builtin(const char *name) {
    for (size_t i = 0; i < sizeof BUILTINS / sizeof BUILTINS[0]; i++)
        if (strcmp(BUILTINS[i].name, name) == 0)
            return &BUILTINS[i];
    return NULL;
}

int llm__js_is_reserved_name(const char *name) {
    return strcmp(name, "root") == 0 || find_builtin(name) != NULL;
}

/* ---- the rule table ---------------------------------------------------------------- */

const char *llm__js_rule_body(const js_ctx *c, const char *name) {
    size_t i = (size_t)(uintptr_t)llm__js_map_get(&c->rules.index, name);
    return i ? c->rules.v[i - 1].body : NULL;
}

static int rule_append(js_ctx *c, const char *name, const char *body) {
    js_rules *r = &c->rules;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        js_rule *v = llm__js_alloc(c, cap * sizeof *v);
        if (!v)
            return -1;
        if (r->n)
            memcpy(v, r->v, r->n * sizeof *v);
        r->v = v;
        r->cap = cap;
    }
    size_t bytes = strlen(name) + strlen(body) + 6; /* "name ::= body\n" */
    if (r->bytes + bytes > c->p.max_grammar_bytes)
        return llm__js_fail(c, LLM_ERR_EXHAUSTED,
                            "JSON schema: the grammar would exceed max_grammar_bytes (%zu)",
                            c->p.max_grammar_bytes);
    r->v[r->n].name = name;
    r->v[r->n].body = body;
    r->n++;
    r->bytes += bytes;
    return llm__js_map_put(c, &r->index, name, (void *)(uintptr_t)r->n);
}

static int is_name_char(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-';
}

/* The first of esc0, esc1, ... that is free or holds the same body. */
static const char *add_rule_numbered(js_ctx *c, const char *esc, const char *body) {
    for (unsigned i = 0;; i++) {
        js_sb b;
        llm__js_sb_init(&b, c);
        llm__js_sb_puts(&b, esc);
        llm__js_sb_printf(&b, "%u", i);
        const char *name = llm__js_sb_str(&b);
        if (!name)
            return NULL;
        const char *have = llm__js_rule_body(c, name);
        if (!have)
            return rule_append(c, name, body) == 0 ? name : NULL;
        if (strcmp(have, body) == 0)
            return name;
    }
}

const char *llm__js_add_rule(js_ctx *c, const char *name, const char *body) {
    if (c->st != LLM_OK || !name || !body)
        return NULL;
    js_sb b;
    llm__js_sb_init(&b, c);
    for (const char *s = name; *s;) {
        if (is_name_char(*s)) {
            llm__js_sb_putc(&b, *s++);
        } else {
            llm__js_sb_putc(&b, '-');
            while (*s && !is_name_char(*s))
                s++;
        }
    }
    const char *esc = llm__js_sb_str(&b);
    if (!esc)
        return NULL;
    const char *have = llm__js_rule_body(c, esc);
    if (!have)
        return rule_append(c, esc, body) == 0 ? esc : NULL;
    if (strcmp(have, body) == 0)
        return esc;
    return add_rule_numbered(c, esc, body);
}

const char *llm__js_add_primitive(js_ctx *c, const char *name, const char *builtin_name) {
    const builtin *bi = find_builtin(builtin_name);
    if (!bi) {
        llm__js_fail(c, LLM_ERR_INTERNAL, "JSON schema: no built-in rule %s", builtin_name);
        return NULL;
    }
    const char *n = llm__js_add_rule(c, name, bi->body);
    for (size_t i = 0; n && i < sizeof bi->deps / sizeof bi->deps[0] && bi->deps[i]; i++)
        if (!llm__js_rule_body(c, bi->deps[i]) && !llm__js_add_primitive(c, bi->deps[i], bi->deps[i]))
            return NULL;
    return n;
}

size_t llm__js_rules_mark(const js_ctx *c) { return c->rules.n; }

int llm__js_rules_revert(js_ctx *c, size_t mark) {
    js_rules *r = &c->rules;
    while (r->n > mark) {
        js_rule *e = &r->v[--r->n];
        llm__js_map_del(&r->index, e->name);
        r->bytes -= strlen(e->name) + strlen(e->body) + 6;
    }
    return 0;
}

static int cmp_rule(const void *a, const void *b) {
    return strcmp(((const js_rule *)a)->name, ((const js_rule *)b)->name);
}

const char *llm__js_rules_print(js_ctx *c, size_t *len) {
    js_rules *r = &c->rules;
    js_rule *sorted = llm__js_alloc(c, (r->n ? r->n : 1) * sizeof *sorted);
    if (!sorted)
        return NULL;
    if (r->n)
        memcpy(sorted, r->v, r->n * sizeof *sorted);
    qsort(sorted, r->n, sizeof *sorted, cmp_rule);
    js_sb b;
    llm__js_sb_init(&b, c);
    for (size_t i = 0; i < r->n; i++) {
        llm__js_sb_puts(&b, sorted[i].name);
        llm__js_sb_puts(&b, " ::= ");
        llm__js_sb_puts(&b, sorted[i].body);
        llm__js_sb_putc(&b, '\n');
    }
    const char *s = llm__js_sb_str(&b);
    if (s && len)
        *len = b.n;
    return s;
}

/* ---- repetition ------------------------------------------------------------------------ */

void llm__js_repetition(js_sb *b, const char *item, int min, int max, const char *sep) {
    int has_max = max != INT32_MAX;
    if (max == 0)
        return;
    if (min == 0 && max == 1) {
        llm__js_sb_puts(b, item);
        llm__js_sb_putc(b, '?');
        return;
    }
    if (!*sep) {
        llm__js_sb_puts(b, item);
        if (min == 1 && !has_max)
            llm__js_sb_putc(b, '+');
        else if (min == 0 && !has_max)
            llm__js_sb_putc(b, '*');
        else if (has_max)
            llm__js_sb_printf(b, "{%d,%d}", min, max);
        else
            llm__js_sb_printf(b, "{%d,}", min);
        return;
    }
    /* item ("(" sep item ")") repeated one less, all optional when min is 0 */
    js_sb rest;
    llm__js_sb_init(&rest, b->c);
    llm__js_sb_putc(&rest, '(');
    llm__js_sb_puts(&rest, sep);
    llm__js_sb_putc(&rest, ' ');
    llm__js_sb_puts(&rest, item);
    llm__js_sb_putc(&rest, ')');
    const char *rest_item = llm__js_sb_str(&rest);
    if (!rest_item)
        return;
    if (min == 0)
        llm__js_sb_putc(b, '(');
    llm__js_sb_puts(b, item);
    llm__js_sb_putc(b, ' ');
    llm__js_repetition(b, rest_item, min == 0 ? 0 : min - 1, has_max ? max - 1 : max, "");
    if (min == 0)
        llm__js_sb_puts(b, ")?");
}

/* ---- integer ranges ----------------------------------------------------------------- */

static void digit_range(js_sb *b, char from, char to) {
    llm__js_sb_putc(b, '[');
    llm__js_sb_putc(b, from);
    if (from != to) {
        llm__js_sb_putc(b, '-');
        llm__js_sb_putc(b, to);
    }
    llm__js_sb_putc(b, ']');
}

/* [0-9] repeated min..max times (max INT32_MAX for no bound) */
static void more_digits(js_sb *b, int min, int max) {
    llm__js_sb_puts(b, "[0-9]");
    if (min == max && min == 1)
        return;
    llm__js_sb_printf(b, "{%d", min);
    if (max != min) {
        llm__js_sb_putc(b, ',');
        if (max != INT32_MAX)
            llm__js_sb_printf(b, "%d", max);
    }
    llm__js_sb_putc(b, '}');
}

/* The numbers from..to, both written with the same number of digits
 * (at most 19 here, since bounds are within 10^18). */
static void uniform_range(js_sb *b, const char *from, const char *to) {
    size_t lf = strlen(from), lt = strlen(to), i = 0;
    while (i < lf && i < lt && from[i] == to[i])
        i++;
    if (i > 0) {
        llm__js_sb_putc(b, '"');
        llm__js_sb_putn(b, from, i);
        llm__js_sb_putc(b, '"');
    }
    if (i >= lf || i >= lt)
        return;
    if (i > 0)
        llm__js_sb_putc(b, ' ');
    size_t sub = lf - i - 1;
    if (sub == 0) {
        llm__js_sb_putc(b, '[');
        llm__js_sb_putc(b, from[i]);
        llm__js_sb_putc(b, '-');
        llm__js_sb_putc(b, to[i]);
        llm__js_sb_putc(b, ']');
        return;
    }
    char zeros[24], nines[24];
    memset(zeros, '0', sub);
    memset(nines, '9', sub);
    zeros[sub] = nines[sub] = '\0';
    const char *from_sub = from + i + 1, *to_sub = to + i + 1;
    int to_reached = 0;
    llm__js_sb_putc(b, '(');
    if (strcmp(from_sub, zeros) == 0) {
        digit_range(b, from[i], (char)(to[i] - 1));
        llm__js_sb_putc(b, ' ');
        more_digits(b, (int)sub, (int)sub);
    } else {
        llm__js_sb_putc(b, '[');
        llm__js_sb_putc(b, from[i]);
        llm__js_sb_puts(b, "] (");
        uniform_range(b, from_sub, nines);
        llm__js_sb_putc(b, ')');
        if (from[i] < to[i] - 1) {
            llm__js_sb_puts(b, " | ");
            if (strcmp(to_sub, nines) == 0) {
                digit_range(b, (char)(from[i] + 1), to[i]);
                to_reached = 1;
            } else {
                digit_range(b, (char)(from[i] + 1), (char)(to[i] - 1));
            }
            llm__js_sb_putc(b, ' ');
            more_digits(b, (int)sub, (int)sub);
        }
    }
    if (!to_reached) {
        llm__js_sb_puts(b, " | ");
        digit_range(b, to[i], to[i]);
        llm__js_sb_putc(b, ' ');
        uniform_range(b, zeros, to_sub);
    }
    llm__js_sb_putc(b, ')');
}

static void int_range(js_sb *b, int64_t min, int64_t max, int decimals_left, int top_level) {
    int has_min = min != INT64_MIN, has_max = max != INT64_MAX;
    char min_s[24], max_s[24];
    if (has_min && has_max) {
        if (min < 0 && max < 0) {
            llm__js_sb_puts(b, "\"-\" (");
            int_range(b, -max, -min, decimals_left, 1);
            llm__js_sb_putc(b, ')');
            return;
        }
        if (min < 0) {
            llm__js_sb_puts(b, "\"-\" (");
            int_range(b, 0, -min, decimals_left, 1);
            llm__js_sb_puts(b, ") | ");
            min = 0;
        }
        snprintf(min_s, sizeof min_s, "%" PRId64, min);
        snprintf(max_s, sizeof max_s, "%" PRId64, max);
        for (size_t digits = strlen(min_s); digits < strlen(max_s); digits++) {
            char nines[24];
            memset(nines, '9', digits);
            nines[digits] = '\0';
            uniform_range(b, min_s, nines);
            min_s[0] = '1'; /* 10...0 with one more digit */
            memset(min_s + 1, '0', digits);
            min_s[digits + 1] = '\0';
            llm__js_sb_puts(b, " | ");
        }
        uniform_range(b, min_s, max_s);
        return;
    }
    int less = decimals_left - 1 > 1 ? decimals_left - 1 : 1;
    if (has_min) {
        if (min < 0) {
            llm__js_sb_puts(b, "\"-\" (");
            int_range(b, INT64_MIN, -min, decimals_left, 0);
            llm__js_sb_puts(b, ") | [0] | [1-9] ");
            more_digits(b, 0, decimals_left - 1);
        } else if (min == 0) {
            if (top_level) {
                llm__js_sb_puts(b, "[0] | [1-9] ");
                more_digits(b, 0, less);
            } else {
                more_digits(b, 1, decimals_left);
            }
        } else if (min <= 9) {
            char ch = (char)('0' + min), start = top_level ? '1' : '0';
            if (ch > start) {
                digit_range(b, start, (char)(ch - 1));
                llm__js_sb_putc(b, ' ');
                more_digits(b, 1, less);
                llm__js_sb_puts(b, " | ");
            }
            digit_range(b, ch, '9');
            llm__js_sb_putc(b, ' ');
            more_digits(b, 0, less);
        } else {
            snprintf(min_s, sizeof min_s, "%" PRId64, min);
            int len = (int)strlen(min_s);
            char ch = min_s[0];
            if (ch > '1') {
                digit_range(b, top_level ? '1' : '0', (char)(ch - 1));
                llm__js_sb_putc(b, ' ');
                more_digits(b, len, less);
                llm__js_sb_puts(b, " | ");
            }
            digit_range(b, ch, ch);
            llm__js_sb_puts(b, " (");
            int_range(b, strtoll(min_s + 1, NULL, 10), INT64_MAX, less, 0);
            llm__js_sb_putc(b, ')');
            if (ch < '9') {
                llm__js_sb_puts(b, " | ");
                digit_range(b, (char)(ch + 1), '9');
                llm__js_sb_putc(b, ' ');
                more_digits(b, len - 1, less);
            }
        }
        return;
    }
    if (max >= 0) {
        if (top_level) {
            llm__js_sb_puts(b, "\"-\" [1-9] ");
            more_digits(b, 0, less);
            llm__js_sb_puts(b, " | ");
        }
        int_range(b, 0, max, decimals_left, 1);
    } else {
        llm__js_sb_puts(b, "\"-\" (");
        int_range(b, -max, INT64_MAX, decimals_left, 0);
        llm__js_sb_putc(b, ')');
    }
}

void llm__js_int_range(js_sb *b, int64_t min, int64_t max) { int_range(b, min, max, 16, 1); }
