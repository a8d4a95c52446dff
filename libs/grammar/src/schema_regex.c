/*
 * schema_regex.c -- a JSON Schema "pattern" -> a GBNF rule.
 *
 * The subset llama.cpp converts: anchored patterns ("^...$") made of
 * literals, '.', character classes copied as they are (GBNF's syntax is
 * regex's), groups "(...)" and "(?:...)", '|', and the quantifiers * + ?
 * {n} {n,} {,m} {n,m}. Escapes: the regex metacharacters (\. \( ...) and
 * the escapes GBNF shares (\t \r \n \\ \" \[ \] \- \xHH \uHHHH \UHHHHHHHH).
 *
 * Two kinds of failure, as in llama.cpp: a pattern that is valid but outside
 * the subset (\d, lookaround, no anchors, ...) is "unsupported", and then the
 * string is unconstrained (or, with LLM_JSON_SCHEMA_STRICT_PATTERNS, the
 * schema is refused); a pattern no regex flavour accepts (unbalanced
 * parentheses, nothing to repeat) is an error.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"

enum { RX_MAX_DEPTH = 100 };
enum { RX_OK, RX_UNSUPPORTED, RX_INVALID };

typedef struct piece {
    const char *s;  /* a literal (its GBNF-escaped text, no quotes) or a GBNF expression */
    int is_literal;
} piece;

typedef struct rx {
    js_ctx *c;
    const char *p; /* the pattern without its anchors */
    size_t len, i;
    int depth;
    const char *name;
    js_map sub_ids; /* repeated sub-expression -> its rule */
    size_t n_sub_ids;
    int err; /* RX_* */
    char why[160];
} rx;

static int rx_err(rx *r, int kind, const char *fmt, const char *arg) {
    if (r->err == RX_OK) {
        r->err = kind;
        snprintf(r->why, sizeof r->why, fmt, arg);
    }
    return -1;
}

static const char *to_rule(rx *r, piece pc) {
    if (!pc.is_literal)
        return pc.s;
    js_sb b;
    llm__js_sb_init(&b, r->c);
    llm__js_sb_putc(&b, '"');
    llm__js_sb_puts(&b, pc.s);
    llm__js_sb_putc(&b, '"');
    return llm__js_sb_str(&b);
}

/* Length of a GBNF-compatible escape at p[i] ('\\'), 0 if it is not one. */
static size_t gbnf_escape_length(const char *p, size_t len, size_t i) {
    if (i + 1 >= len || p[i] != '\\')
        return 0;
    size_t n_hex;
    switch (p[i + 1]) {
    case 'x': n_hex = 2; break;
    case 'u': n_hex = 4; break;
    case 'U': n_hex = 8; break;
    case 't': case 'r': case 'n': case '\\': case '"': case '[': case ']': case '-': return 2;
    default: return 0;
    }
    if (i + 2 + n_hex > len)
        return 0;
    for (size_t k = i + 2; k < i + 2 + n_hex; k++)
        if (!isxdigit((unsigned char)p[k]))
            return 0;
    return 2 + n_hex;
}

/* Bytes of the UTF-8 character at p[i] (1 for ASCII or a stray byte). */
static size_t utf8_len(const char *p, size_t len, size_t i) {
    unsigned char b = (unsigned char)p[i];
    size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    for (size_t k = 1; k < n; k++)
        if (i + k >= len || ((unsigned char)p[i + k] & 0xC0) != 0x80)
            return 1;
    return n;
}

static int is_non_literal(char ch) { return ch && strchr("|.()[]{}*+?^$", ch) != NULL; }

typedef struct seq {
    piece *v;
    size_t n, cap;
} seq;

static int seq_push(rx *r, seq *s, const char *str, int is_literal) {
    if (!str)
        return -1;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        piece *v = llm__js_alloc(r->c, cap * sizeof *v);
        if (!v)
            return -1;
        if (s->n)
            memcpy(v, s->v, s->n * sizeof *v);
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n].s = str;
    s->v[s->n].is_literal = is_literal;
    s->n++;
    return 0;
}

/* The sequence joined with spaces, consecutive literals merged into one. */
static const char *join_seq(rx *r, const seq *s) {
    js_sb out, lit;
    llm__js_sb_init(&out, r->c);
    llm__js_sb_init(&lit, r->c);
    int first = 1;
    for (size_t k = 0; k <= s->n; k++) {
        if (k < s->n && s->v[k].is_literal) {
            llm__js_sb_puts(&lit, s->v[k].s);
            continue;
        }
        if (lit.n) { /* flush the literal */
            if (!first)
                llm__js_sb_putc(&out, ' ');
            llm__js_sb_putc(&out, '"');
            llm__js_sb_putn(&out, lit.p, lit.n);
            llm__js_sb_putc(&out, '"');
            lit.n = 0;
            first = 0;
        }
        if (k < s->n) {
            if (!first)
                llm__js_sb_putc(&out, ' ');
            llm__js_sb_puts(&out, s->v[k].s);
            first = 0;
        }
    }
    return llm__js_sb_str(&out);
}

/* {n}, {n,}, {,m}, {n,m}: 0 and the bounds, -1 when not supported. */
static int parse_braces(rx *r, const char *s, size_t n, int *min, int *max) {
    const char *comma = memchr(s, ',', n);
    if (comma && memchr(comma + 1, ',', n - (size_t)(comma + 1 - s)))
        return rx_err(r, RX_UNSUPPORTED, "wrong number of values in curly brackets%s", "");
    for (int part = 0; part < (comma ? 2 : 1); part++) {
        const char *a = part ? comma + 1 : s;
        const char *e = comma && !part ? comma : s + n;
        long long v = -1;
        if (a == e) {
            if (!comma)
                return rx_err(r, RX_UNSUPPORTED, "invalid number in curly brackets%s", "");
        } else {
            if (strspn(a, "0123456789") < (size_t)(e - a) || e - a > 9)
                return rx_err(r, RX_UNSUPPORTED, "invalid number in curly brackets%s", "");
            v = strtoll(a, NULL, 10);
        }
        if (part == 0) {
            *min = v < 0 ? 0 : (int)v;
            *max = comma ? INT32_MAX : *min;
        } else if (v >= 0) {
            *max = (int)v;
        }
    }
    if (*min > *max)
        return rx_err(r, RX_INVALID, "numbers out of order in curly brackets%s", "");
    return 0;
}

static const char *transform(rx *r);

/* One step of transform() at r->p[r->i]: appends to s; 1 at a ')' that
 * closes the group, 0 to go on, -1 on failure. */
static int step(rx *r, seq *s) {
    js_ctx *c = r->c;
    const char *p = r->p;
    char ch = p[r->i];
    if (ch == '.') {
        r->i++;
        return seq_push(r, s, llm__js_add_rule(c, "dot", "[^\\x0A\\x0D]"), 0);
    }
    if (ch == '(') {
        r->i++;
        if (r->i < r->len && p[r->i] == '?') {
            if (r->i + 1 < r->len && p[r->i + 1] == ':')
                r->i += 2; /* a non-capturing group is a group */
            else
                return rx_err(r, RX_UNSUPPORTED, "unsupported group syntax%s", "");
        }
        if (++r->depth > RX_MAX_DEPTH)
            return rx_err(r, RX_UNSUPPORTED, "pattern nesting too deep%s", "");
        const char *inner = transform(r);
        if (!inner)
            return -1;
        js_sb b;
        llm__js_sb_init(&b, c);
        llm__js_sb_putc(&b, '(');
        llm__js_sb_puts(&b, inner);
        llm__js_sb_putc(&b, ')');
        return seq_push(r, s, llm__js_sb_str(&b), 0);
    }
    if (ch == ')') {
        r->i++;
        if (r->depth == 0)
            return rx_err(r, RX_INVALID, "unbalanced parentheses%s", "");
        r->depth--;
        return 1;
    }
    if (ch == '^' || ch == '$')
        return rx_err(r, RX_UNSUPPORTED, "anchor inside the pattern%s", "");
    if (ch == '[') {
        size_t start = r->i++;
        while (r->i < r->len && p[r->i] != ']') {
            if (p[r->i] == '\\') {
                size_t n = gbnf_escape_length(p, r->len, r->i);
                if (!n)
                    return rx_err(r, RX_UNSUPPORTED, "unsupported escape in character class%s", "");
                r->i += n;
            } else {
                r->i++;
            }
        }
        if (r->i >= r->len)
            return rx_err(r, RX_INVALID, "unterminated character class%s", "");
        r->i++;
        return seq_push(r, s, llm__js_strndup(c, p + start, r->i - start), 0);
    }
    if (ch == '|') {
        r->i++;
        return seq_push(r, s, "|", 0);
    }
    if (ch == '*' || ch == '+' || ch == '?') {
        if (!s->n)
            return rx_err(r, RX_INVALID, "nothing to repeat%s", "");
        js_sb b;
        llm__js_sb_init(&b, c);
        llm__js_sb_puts(&b, to_rule(r, s->v[s->n - 1]));
        llm__js_sb_putc(&b, ch);
        r->i++;
        const char *q = llm__js_sb_str(&b);
        if (!q)
            return -1;
        s->v[s->n - 1].s = q;
        s->v[s->n - 1].is_literal = 0;
        return 0;
    }
    if (ch == '{') {
        size_t start = ++r->i;
        while (r->i < r->len && p[r->i] != '}')
            r->i++;
        if (r->i >= r->len)
            return rx_err(r, RX_UNSUPPORTED, "unterminated curly brackets%s", "");
        int min, max;
        if (parse_braces(r, p + start, r->i - start, &min, &max) != 0)
            return -1;
        r->i++;
        if (!s->n)
            return rx_err(r, RX_INVALID, "nothing to repeat%s", "");
        piece *last = &s->v[s->n - 1];
        const char *item = last->s;
        if (!last->is_literal) { /* a repeated expression gets a rule of its own */
            const char *id = llm__js_map_get(&r->sub_ids, item);
            if (!id) {
                char num[24];
                snprintf(num, sizeof num, "-%zu", ++r->n_sub_ids);
                js_sb nm;
                llm__js_sb_init(&nm, c);
                llm__js_sb_puts(&nm, r->name);
                llm__js_sb_puts(&nm, num);
                id = llm__js_add_rule(c, llm__js_sb_str(&nm), item);
                if (!id || llm__js_map_put(c, &r->sub_ids, item, (void *)id) != 0)
                    return -1;
            }
            item = id;
        } else {
            item = to_rule(r, *last);
        }
        js_sb b;
        llm__js_sb_init(&b, c);
        llm__js_repetition(&b, item ? item : "", min, max, "");
        const char *q = item ? llm__js_sb_str(&b) : NULL;
        if (!q)
            return -1;
        last->s = q;
        last->is_literal = 0;
        return 0;
    }
    /* a run of literal characters; the last one stays apart when a quantifier follows */
    js_sb lit;
    llm__js_sb_init(&lit, c);
    while (r->i < r->len) {
        size_t i = r->i;
        if (p[i] == '\\') {
            if (i == r->len - 1)
                return rx_err(r, RX_INVALID, "trailing backslash%s", "");
            if (strchr("^$.[]()|{}*+?", p[i + 1]) && p[i + 1]) {
                llm__js_sb_putc(&lit, p[i + 1]);
                r->i += 2;
            } else {
                size_t n = gbnf_escape_length(p, r->len, i);
                if (!n)
                    return rx_err(r, RX_UNSUPPORTED, "unsupported escape%s", "");
                llm__js_sb_putn(&lit, p + i, n);
                r->i += n;
            }
        } else if (p[i] == '"') {
            llm__js_sb_puts(&lit, "\\\"");
            r->i++;
        } else if (!is_non_literal(p[i])) {
            /* one character: a whole UTF-8 sequence (llama.cpp looks at bytes
             * here, so "é+" repeats only the last byte of é) */
            size_t n = utf8_len(p, r->len, i), next = i + n;
            if (!(next >= r->len || lit.n == 0 || p[next] == '.' || !is_non_literal(p[next])))
                break;
            llm__js_sb_putn(&lit, p + i, n);
            r->i += n;
        } else {
            break;
        }
    }
    if (lit.n == 0) /* nothing was consumed: a stray ']' or '}' */
        return rx_err(r, RX_UNSUPPORTED, "unsupported character%s", "");
    return seq_push(r, s, llm__js_sb_str(&lit), 1);
}

/* A sequence up to the end or the ')' closing the current group. */
static const char *transform(rx *r) {
    seq s = {0};
    while (r->i < r->len) {
        int rc = step(r, &s);
        if (rc < 0)
            return NULL;
        if (rc == 1)
            break;
    }
    return join_seq(r, &s);
}

static const char *pattern_to_rule(rx *r, const char *pattern, const char *name) {
    size_t len = strlen(pattern);
    if (len < 2 || pattern[0] != '^' || pattern[len - 1] != '$') {
        rx_err(r, RX_UNSUPPORTED, "not anchored with '^' and '$'%s", "");
        return NULL;
    }
    r->p = pattern + 1;
    r->len = len - 2;
    r->name = name;
    const char *body = transform(r);
    if (!body)
        return NULL;
    if (r->depth != 0) {
        rx_err(r, RX_INVALID, "unbalanced parentheses%s", "");
        return NULL;
    }
    js_sb b;
    llm__js_sb_init(&b, r->c);
    llm__js_sb_puts(&b, "\"\\\"\" (");
    llm__js_sb_puts(&b, body);
    llm__js_sb_puts(&b, ") \"\\\"\"");
    return llm__js_add_rule(r->c, name, llm__js_sb_str(&b));
}

const char *llm__js_visit_pattern(js_ctx *c, const char *pattern, const char *name, const char *path) {
    size_t mark = llm__js_rules_mark(c);
    rx r;
    memset(&r, 0, sizeof r);
    r.c = c;
    const char *rule = pattern_to_rule(&r, pattern, name);
    if (rule || c->st != LLM_OK)
        return rule;
    llm__js_rules_revert(c, mark); /* the rules of the partial conversion must not leak */
    if (r.err == RX_INVALID) {
        llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: invalid pattern %.200s at %s: %s", pattern, path, r.why);
        return NULL;
    }
    if (c->p.flags & LLM_JSON_SCHEMA_STRICT_PATTERNS) {
        llm__js_fail(c, LLM_ERR_UNSUPPORTED, "JSON schema: unsupported pattern %.200s at %s: %s", pattern, path,
                     r.why);
        return NULL;
    }
    /* as llama.cpp: the string is left unconstrained */
    return llm__js_add_rule(c, name, llm__js_add_primitive(c, "string", "string"));
}
