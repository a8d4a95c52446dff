/*
 * gbnf_parse.c -- GBNF text to rules, with llama.cpp's rewriting of groups
 * and repetitions into generated rules, and its checks.
 *
 * Rewrites (S is the preceding item; each S' is a new rule):
 *   S{m,n} -> S..S (m times) S'(n-m)  with S'(k) ::= S S'(k-1) | ,  S'(1) ::= S |
 *   S{m,}  -> S..S (m times) S'       with S' ::= S S' |
 *   S* = S{0,}   S+ = S{1,}   S? = S{0,1}
 * Recursion is bounded: parentheses nest at most GBNF_MAX_NESTING deep, and
 * the left-recursion check walks rules with an explicit stack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gbnf_internal.h"

#define GBNF_MAX_REPETITION 2000     /* llama.cpp's MAX_REPETITION_THRESHOLD */
#define GBNF_MAX_NESTING 512
#define GBNF_MAX_ELEMS (1u << 20)

typedef struct prule {
    gelem *v;
    uint32_t n, cap;
    int defined;
} prule;

typedef struct parser {
    const char *src; /* NUL-terminated copy */
    const llm_grammar_vocab *vocab;
    char **names;    /* [n_sym] */
    prule *rules;    /* [n_sym] */
    uint32_t n_sym, cap_sym;
    uint32_t *index;  /* open addressing over symbol ids + 1, 0 = free; [index_cap] */
    uint32_t index_cap;
    size_t n_elems;
    int depth;
} parser;

static llm_status perr(const parser *P, const char *at, llm_status st, const char *msg) {
    size_t line = 1, col = 1;
    for (const char *s = P->src; s < at && *s; s++) {
        if (*s == '\n') {
            line++;
            col = 1;
        } else if (((unsigned char)*s & 0xC0) != 0x80) {
            col++;
        }
    }
    return GERR(st, "line %zu, column %zu: %s", line, col, msg);
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || is_digit(c);
}

static const char *skip_space(const char *s, int newline_ok) {
    while (*s == ' ' || *s == '\t' || *s == '#' || (newline_ok && (*s == '\r' || *s == '\n'))) {
        if (*s == '#') {
            while (*s && *s != '\r' && *s != '\n') s++;
        } else {
            s++;
        }
    }
    return s;
}

static llm_status rule_push(parser *P, prule *r, uint32_t type, uint32_t value) {
    if (P->n_elems >= GBNF_MAX_ELEMS)
        return GERR(LLM_ERR_UNSUPPORTED, "grammar too large: more than %u elements", GBNF_MAX_ELEMS);
    if (r->n == r->cap) {
        uint32_t cap = r->cap ? r->cap * 2 : 16;
        gelem *v = realloc(r->v, cap * sizeof *v);
        if (!v) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n].type = type;
    r->v[r->n].value = value;
    r->n++;
    P->n_elems++;
    return LLM_OK;
}

static uint32_t name_hash(const char *s, size_t len) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static llm_status index_grow(parser *P) {
    uint32_t cap = P->index_cap ? 2 * P->index_cap : 64;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    for (uint32_t i = 0; i < P->n_sym; i++) {
        uint32_t h = name_hash(P->names[i], strlen(P->names[i])) & (cap - 1);
        while (t[h]) h = (h + 1) & (cap - 1);
        t[h] = i + 1;
    }
    free(P->index);
    P->index = t;
    P->index_cap = cap;
    return LLM_OK;
}

/* The slot of name in the index: holding its id + 1, or 0 (free) when absent. */
static uint32_t *index_slot(parser *P, const char *name, size_t len) {
    uint32_t mask = P->index_cap - 1, h = name_hash(name, len) & mask;
    for (;;) {
        uint32_t k = P->index[h];
        if (!k || (strlen(P->names[k - 1]) == len && memcmp(P->names[k - 1], name, len) == 0)) return &P->index[h];
        h = (h + 1) & mask;
    }
}

static llm_status add_symbol(parser *P, const char *name, size_t len, uint32_t *id) {
    if (P->n_sym == P->cap_sym) {
        uint32_t cap = P->cap_sym ? P->cap_sym * 2 : 32;
        char **nn = realloc(P->names, cap * sizeof *nn);
        if (!nn) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
        P->names = nn;
        prule *nr = realloc(P->rules, cap * sizeof *nr);
        if (!nr) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
        P->rules = nr;
        P->cap_sym = cap;
    }
    if (2 * (P->n_sym + 1) > P->index_cap) {
        llm_status st = index_grow(P);
        if (st != LLM_OK) return st;
    }
    char *s = malloc(len + 1);
    if (!s) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    memcpy(s, name, len);
    s[len] = 0;
    uint32_t *slot = index_slot(P, s, len);
    if (!*slot) *slot = P->n_sym + 1; /* a generated name equal to a user's keeps the first */
    P->names[P->n_sym] = s;
    memset(&P->rules[P->n_sym], 0, sizeof P->rules[0]);
    *id = P->n_sym++;
    return LLM_OK;
}

static llm_status symbol_id(parser *P, const char *name, size_t len, uint32_t *id) {
    if (P->index_cap) {
        uint32_t k = *index_slot(P, name, len);
        if (k) {
            *id = k - 1;
            return LLM_OK;
        }
    }
    return add_symbol(P, name, len, id);
}

static llm_status new_symbol(parser *P, uint32_t base, uint32_t *id) {
    char buf[512];
    int n = snprintf(buf, sizeof buf, "%.400s_%u", P->names[base], P->n_sym);
    return add_symbol(P, buf, (size_t)n, id);
}

/* The rule text of rule id, replacing any earlier definition. */
static void set_rule(parser *P, uint32_t id, prule *r) {
    prule *dst = &P->rules[id];
    if (dst->defined) P->n_elems -= dst->n;
    free(dst->v);
    *dst = *r;
    dst->defined = 1;
    memset(r, 0, sizeof *r);
}

static llm_status parse_hex(parser *P, const char *s, int n, uint32_t *cp, const char **end) {
    uint32_t v = 0;
    for (int i = 0; i < n; i++) {
        char c = s[i];
        uint32_t d;
        if (c >= '0' && c <= '9') d = (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') d = (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') d = (uint32_t)(c - 'A' + 10);
        else {
            char msg[64];
            snprintf(msg, sizeof msg, "expecting %d hex digits", n);
            return perr(P, s + i, LLM_ERR_BAD_FORMAT, msg);
        }
        v = (v << 4) | d;
    }
    *cp = v;
    *end = s + n;
    return LLM_OK;
}

/* One literal character (escape or UTF-8) at s. */
static llm_status parse_char(parser *P, const char *s, uint32_t *cp, const char **end) {
    if (*s == '\\') {
        switch (s[1]) {
        case 'x': return parse_hex(P, s + 2, 2, cp, end);
        case 'u': return parse_hex(P, s + 2, 4, cp, end);
        case 'U': return parse_hex(P, s + 2, 8, cp, end);
        case 't': *cp = '\t'; break;
        case 'r': *cp = '\r'; break;
        case 'n': *cp = '\n'; break;
        case '\\': case '"': case '[': case ']': case '-': *cp = (uint8_t)s[1]; break;
        case 0: return perr(P, s, LLM_ERR_BAD_FORMAT, "unexpected end of input after '\\'");
        default: return perr(P, s, LLM_ERR_BAD_FORMAT, "unknown escape");
        }
        *end = s + 2;
        return LLM_OK;
    }
    if (!*s) return perr(P, s, LLM_ERR_BAD_FORMAT, "unexpected end of input");
    gpartial p = {0, 0};
    const char *q = s;
    for (;;) {
        uint32_t c;
        int r = llm__gutf8_step(&p, (uint8_t)*q++, &c);
        if (r == 1) {
            *cp = c;
            *end = q;
            return LLM_OK;
        }
        if (r < 0 || !*q) return perr(P, s, LLM_ERR_BAD_UTF8, "invalid UTF-8");
    }
}

/* A token reference at s ('<' ... '>'); *neg already consumed by caller. */
static llm_status parse_token(parser *P, const char *s, uint32_t *tok, const char **end) {
    const char *q = s + 1;
    if (*q == '[') {
        q++;
        if (!is_digit(*q)) return perr(P, q, LLM_ERR_BAD_FORMAT, "expecting a token id");
        uint64_t id = 0;
        while (is_digit(*q)) {
            id = id * 10 + (uint64_t)(*q - '0');
            if (id > UINT32_MAX) return perr(P, s, LLM_ERR_BAD_FORMAT, "token id too big");
            q++;
        }
        if (*q != ']') return perr(P, q, LLM_ERR_BAD_FORMAT, "expecting ']'");
        if (q[1] != '>') return perr(P, q + 1, LLM_ERR_BAD_FORMAT, "expecting '>'");
        if (P->vocab && id >= (uint64_t)P->vocab->n_tokens)
            return perr(P, s, LLM_ERR_BAD_FORMAT, "token id out of the vocabulary");
        *tok = (uint32_t)id;
        *end = q + 2;
        return LLM_OK;
    }
    if (!P->vocab) return perr(P, s, LLM_ERR_BAD_FORMAT, "no vocabulary to resolve a token name");
    while (*q && *q != '>') q++;
    if (*q != '>') return perr(P, q, LLM_ERR_BAD_FORMAT, "expecting '>'");
    q++;
    size_t len = (size_t)(q - s);
    const llm_grammar_vocab *v = P->vocab;
    int32_t found = -1;
    for (int32_t t = 0; t < v->n_tokens; t++) {
        if (v->off[t + 1] - v->off[t] != len || memcmp(v->bytes + v->off[t], s, len) != 0) continue;
        if (found < 0 || ((v->flags[t] & LLM_GRAMMAR_TOKEN_SPECIAL) && !(v->flags[found] & LLM_GRAMMAR_TOKEN_SPECIAL)))
            found = t;
    }
    if (found < 0) return perr(P, s, LLM_ERR_BAD_FORMAT, "no token has this text");
    *tok = (uint32_t)found;
    *end = q;
    return LLM_OK;
}

static llm_status parse_alternates(parser *P, const char **pos, uint32_t name, uint32_t id, int nested);

/* Rewrites rule->v[last..n) repeated min..max times (max UINT64_MAX: unbounded). */
static llm_status repeat(parser *P, const char *at, uint32_t name, prule *rule, uint32_t last,
                         uint64_t min, uint64_t max, uint64_t *n_prev) {
    int no_max = max == UINT64_MAX;
    if (last == rule->n) return perr(P, at, LLM_ERR_BAD_FORMAT, "expecting an item before */+/?/{");
    uint64_t total = 1;
    if (!no_max && max > 0) total = max;
    else if (min > 0) total = min;
    if (*n_prev * total > GBNF_MAX_REPETITION)
        return perr(P, at, LLM_ERR_UNSUPPORTED, "repetitions of repetitions exceed 2000 rules");
    uint32_t plen = rule->n - last;
    gelem *prev = malloc(plen * sizeof *prev);
    if (!prev) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    memcpy(prev, rule->v + last, plen * sizeof *prev);
    llm_status st = LLM_OK;
    if (min == 0) {
        P->n_elems -= plen;
        rule->n = last;
    }
    for (uint64_t i = 1; i < min && st == LLM_OK; i++)
        for (uint32_t k = 0; k < plen && st == LLM_OK; k++) st = rule_push(P, rule, prev[k].type, prev[k].value);
    uint64_t n_opt = no_max ? 1 : max - min;
    uint32_t last_rec = 0;
    for (uint64_t i = 0; i < n_opt && st == LLM_OK; i++) {
        uint32_t rec_id;
        prule rec = {0};
        st = new_symbol(P, name, &rec_id);
        for (uint32_t k = 0; k < plen && st == LLM_OK; k++) st = rule_push(P, &rec, prev[k].type, prev[k].value);
        if (st == LLM_OK && (i > 0 || no_max)) st = rule_push(P, &rec, GE_RULE_REF, no_max ? rec_id : last_rec);
        if (st == LLM_OK) st = rule_push(P, &rec, GE_ALT, 0);
        if (st == LLM_OK) st = rule_push(P, &rec, GE_END, 0);
        if (st == LLM_OK) set_rule(P, rec_id, &rec);
        else {
            P->n_elems -= rec.n;
            free(rec.v);
        }
        last_rec = rec_id;
    }
    if (st == LLM_OK && n_opt > 0) st = rule_push(P, rule, GE_RULE_REF, last_rec);
    *n_prev *= total;
    free(prev);
    return st;
}

static llm_status parse_count(parser *P, const char **pos, uint64_t *v) {
    const char *s = *pos;
    if (!is_digit(*s)) return perr(P, s, LLM_ERR_BAD_FORMAT, "expecting an integer");
    uint64_t x = 0;
    while (is_digit(*s)) {
        if (x < (UINT64_MAX - 9) / 10) x = x * 10 + (uint64_t)(*s - '0');
        else x = UINT64_MAX - 1; /* saturate: refused or unbounded below */
        s++;
    }
    *v = x;
    *pos = s;
    return LLM_OK;
}

static llm_status parse_sequence(parser *P, const char **pos, uint32_t name, prule *rule, int nested) {
    const char *s = *pos;
    uint32_t last = rule->n;
    uint64_t n_prev = 1;
    llm_status st = LLM_OK;
    while (*s && st == LLM_OK) {
        const char *at = s;
        if (*s == '"') {
            s++;
            last = rule->n;
            n_prev = 1;
            while (*s != '"' && st == LLM_OK) {
                if (!*s) return perr(P, at, LLM_ERR_BAD_FORMAT, "unterminated string literal");
                uint32_t cp;
                st = parse_char(P, s, &cp, &s);
                if (st == LLM_OK) st = rule_push(P, rule, GE_CHAR, cp);
            }
            if (st == LLM_OK) s = skip_space(s + 1, nested);
        } else if (*s == '[') {
            s++;
            uint32_t start = GE_CHAR;
            if (*s == '^') {
                s++;
                start = GE_CHAR_NOT;
            }
            last = rule->n;
            n_prev = 1;
            while (*s != ']' && st == LLM_OK) {
                if (!*s) return perr(P, at, LLM_ERR_BAD_FORMAT, "unterminated character class");
                uint32_t cp;
                st = parse_char(P, s, &cp, &s);
                if (st == LLM_OK) st = rule_push(P, rule, last < rule->n ? GE_CHAR_ALT : start, cp);
                if (st == LLM_OK && s[0] == '-' && s[1] != ']') {
                    if (!s[1]) return perr(P, at, LLM_ERR_BAD_FORMAT, "unterminated character class");
                    st = parse_char(P, s + 1, &cp, &s);
                    if (st == LLM_OK) st = rule_push(P, rule, GE_RNG_UPPER, cp);
                }
            }
            if (st == LLM_OK) s = skip_space(s + 1, nested);
        } else if (*s == '<' || *s == '!') {
            uint32_t type = GE_TOKEN, tok = 0;
            if (*s == '!') {
                type = GE_TOKEN_NOT;
                s++;
                if (*s != '<') return perr(P, s, LLM_ERR_BAD_FORMAT, "expecting '<' after '!'");
            }
            st = parse_token(P, s, &tok, &s);
            if (st != LLM_OK) return st;
            last = rule->n;
            n_prev = 1;
            st = rule_push(P, rule, type, tok);
            s = skip_space(s, nested);
        } else if (is_word(*s)) {
            const char *e = s;
            while (is_word(*e)) e++;
            uint32_t ref;
            st = symbol_id(P, s, (size_t)(e - s), &ref);
            if (st != LLM_OK) return st;
            s = skip_space(e, nested);
            last = rule->n;
            n_prev = 1;
            st = rule_push(P, rule, GE_RULE_REF, ref);
        } else if (*s == '(') {
            if (P->depth >= GBNF_MAX_NESTING)
                return perr(P, s, LLM_ERR_UNSUPPORTED, "parentheses nested too deep");
            s = skip_space(s + 1, 1);
            uint32_t before = P->n_sym, sub;
            st = new_symbol(P, name, &sub);
            if (st != LLM_OK) return st;
            P->depth++;
            st = parse_alternates(P, &s, name, sub, 1);
            P->depth--;
            if (st != LLM_OK) return st;
            n_prev = P->n_sym - before > 1 ? P->n_sym - before : 1;
            last = rule->n;
            st = rule_push(P, rule, GE_RULE_REF, sub);
            if (*s != ')') return perr(P, s, LLM_ERR_BAD_FORMAT, "expecting ')'");
            s = skip_space(s + 1, nested);
        } else if (*s == '.') {
            last = rule->n;
            n_prev = 1;
            st = rule_push(P, rule, GE_CHAR_ANY, 0);
            s = skip_space(s + 1, nested);
        } else if (*s == '*' || *s == '+' || *s == '?') {
            char op = *s;
            s = skip_space(s + 1, nested);
            st = repeat(P, at, name, rule, last, op == '+' ? 1 : 0, op == '?' ? 1 : UINT64_MAX, &n_prev);
        } else if (*s == '{') {
            s = skip_space(s + 1, nested);
            uint64_t min = 0, max = UINT64_MAX;
            st = parse_count(P, &s, &min);
            if (st != LLM_OK) return st;
            s = skip_space(s, nested);
            if (*s == '}') {
                max = min;
                s = skip_space(s + 1, nested);
            } else if (*s == ',') {
                s = skip_space(s + 1, nested);
                if (is_digit(*s)) {
                    st = parse_count(P, &s, &max);
                    if (st != LLM_OK) return st;
                    s = skip_space(s, nested);
                }
                if (*s != '}') return perr(P, s, LLM_ERR_BAD_FORMAT, "expecting '}'");
                s = skip_space(s + 1, nested);
            } else {
                return perr(P, s, LLM_ERR_BAD_FORMAT, "expecting ',' or '}'");
            }
            if (min > GBNF_MAX_REPETITION)
                return perr(P, at, LLM_ERR_UNSUPPORTED, "repetition count above 2000");
            if (max != UINT64_MAX && max > GBNF_MAX_REPETITION) max = UINT64_MAX;
            if (max < min) return perr(P, at, LLM_ERR_BAD_FORMAT, "repetition maximum below minimum");
            st = repeat(P, at, name, rule, last, min, max, &n_prev);
        } else {
            break;
        }
    }
    *pos = s;
    return st;
}

static llm_status parse_alternates(parser *P, const char **pos, uint32_t name, uint32_t id, int nested) {
    prule rule = {0};
    llm_status st = parse_sequence(P, pos, name, &rule, nested);
    while (st == LLM_OK && **pos == '|') {
        st = rule_push(P, &rule, GE_ALT, 0);
        if (st != LLM_OK) break;
        *pos = skip_space(*pos + 1, 1);
        st = parse_sequence(P, pos, name, &rule, nested);
    }
    if (st == LLM_OK) st = rule_push(P, &rule, GE_END, 0);
    if (st == LLM_OK) {
        set_rule(P, id, &rule);
    } else {
        P->n_elems -= rule.n;
        free(rule.v);
    }
    return st;
}

static llm_status parse_rule(parser *P, const char **pos) {
    const char *s = *pos, *e = s;
    while (is_word(*e)) e++;
    if (e == s) return perr(P, s, LLM_ERR_BAD_FORMAT, "expecting a rule name");
    uint32_t id;
    llm_status st = symbol_id(P, s, (size_t)(e - s), &id);
    if (st != LLM_OK) return st;
    s = skip_space(e, 0);
    if (!(s[0] == ':' && s[1] == ':' && s[2] == '=')) return perr(P, s, LLM_ERR_BAD_FORMAT, "expecting '::='");
    s = skip_space(s + 3, 1);
    st = parse_alternates(P, &s, id, id, 0);
    if (st != LLM_OK) return st;
    if (*s == '\r') s += s[1] == '\n' ? 2 : 1;
    else if (*s == '\n') s++;
    else if (*s) return perr(P, s, LLM_ERR_BAD_FORMAT, "expecting a newline or the end");
    *pos = skip_space(s, 1);
    return LLM_OK;
}

/* Left recursion, as llama.cpp defines it: a rule reaches itself through
 * leftmost references, where a reference is skipped over when its rule has
 * a literally empty alternative. Depth-first with an explicit stack. */
typedef struct lr_frame {
    uint32_t rule, i, child;
    int recurse;
} lr_frame;

static int has_empty_alt(const llm_grammar *g, uint32_t r) {
    const gelem *e = g->elems + g->rule_start[r];
    int at_start = 1;
    for (uint32_t j = 0;; j++) {
        if (e[j].type == GE_END || e[j].type == GE_ALT) {
            if (at_start) return 1;
            if (e[j].type == GE_END) return 0;
            at_start = 1;
        } else {
            at_start = 0;
        }
    }
}

static llm_status check_left_recursion(const llm_grammar *g) {
    uint32_t n = g->n_rules;
    uint8_t *state = calloc(n, 1); /* 0 new, 1 in progress, 2 done */
    uint8_t *nullable = calloc(n, 1);
    lr_frame *fr = malloc(((size_t)n + 1) * sizeof *fr);
    if (!state || !nullable || !fr) {
        free(state), free(nullable), free(fr);
        return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    }
    for (uint32_t r = 0; r < n; r++) nullable[r] = (uint8_t)has_empty_alt(g, r);
    llm_status st = LLM_OK;
    for (uint32_t r0 = 0; r0 < n && st == LLM_OK; r0++) {
        if (state[r0]) continue;
        uint32_t sp = 1;
        fr[0] = (lr_frame){r0, 0, UINT32_MAX, 1};
        state[r0] = 1;
        while (sp > 0) {
            lr_frame *f = &fr[sp - 1];
            if (f->child != UINT32_MAX) { /* returning from a child */
                if (!nullable[f->child]) f->recurse = 0;
                f->child = UINT32_MAX;
                f->i++;
                continue;
            }
            const gelem *e = g->elems + g->rule_start[f->rule] + f->i;
            if (e->type == GE_END) {
                state[f->rule] = 2;
                sp--;
                continue;
            }
            if (e->type == GE_RULE_REF && f->recurse) {
                uint32_t c = e->value;
                if (state[c] == 1) {
                    st = GERR(LLM_ERR_BAD_FORMAT, "left recursion through rule '%s'", g->rule_names[c]);
                    break;
                }
                f->child = c;
                if (state[c] == 0) {
                    state[c] = 1;
                    fr[sp++] = (lr_frame){c, 0, UINT32_MAX, 1};
                }
                continue;
            }
            f->recurse = e->type == GE_ALT;
            f->i++;
        }
    }
    free(state), free(nullable), free(fr);
    return st;
}

static void parser_free(parser *P) {
    for (uint32_t i = 0; i < P->n_sym; i++) {
        free(P->names ? P->names[i] : NULL);
        free(P->rules ? P->rules[i].v : NULL);
    }
    free(P->names);
    free(P->rules);
}

void llm_grammar_free(llm_grammar *g) {
    if (!g) return;
    for (uint32_t i = 0; i < g->n_rules; i++) free(g->rule_names[i]);
    free(g->rule_names);
    free(g->rule_start);
    free(g->elems);
    free(g);
}

int32_t llm_grammar_n_rules(const llm_grammar *g) { return g ? (int32_t)g->n_rules : 0; }

static llm_status validate_utf8(parser *P, size_t len) {
    gpartial p = {0, 0};
    const char *start = P->src;
    for (size_t i = 0; i < len; i++) {
        uint32_t cp;
        if (p.n_remain == 0) start = P->src + i;
        if (llm__gutf8_step(&p, (uint8_t)P->src[i], &cp) < 0)
            return perr(P, start, LLM_ERR_BAD_UTF8, "invalid UTF-8");
    }
    if (p.n_remain) return perr(P, start, LLM_ERR_BAD_UTF8, "truncated UTF-8 sequence");
    return LLM_OK;
}

llm_status llm_grammar_parse(const char *text, size_t len, const llm_grammar_vocab *vocab, llm_grammar **out) {
    if (out) *out = NULL;
    if (!out || (!text && len)) return GERR(LLM_ERR_INVALID_ARG, "llm_grammar_parse: NULL argument");
    if (text && memchr(text, 0, len)) return GERR(LLM_ERR_BAD_FORMAT, "grammar text holds a NUL byte");
    char *src = malloc(len + 1);
    if (!src) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    if (len) memcpy(src, text, len);
    src[len] = 0;
    parser P = {.src = src, .vocab = vocab};
    llm_status st = validate_utf8(&P, len);
    const char *pos = skip_space(src, 1);
    while (st == LLM_OK && *pos) st = parse_rule(&P, &pos);
    for (uint32_t i = 0; st == LLM_OK && i < P.n_sym; i++)
        if (!P.rules[i].defined) st = GERR(LLM_ERR_BAD_FORMAT, "undefined rule '%s'", P.names[i]);
    uint32_t root = 0;
    if (st == LLM_OK) {
        for (root = 0; root < P.n_sym && strcmp(P.names[root], "root") != 0; root++) {}
        if (root == P.n_sym) st = GERR(LLM_ERR_BAD_FORMAT, "the grammar has no 'root' rule");
    }
    llm_grammar *g = NULL;
    if (st == LLM_OK) {
        g = calloc(1, sizeof *g);
        if (g) {
            g->elems = malloc((P.n_elems ? P.n_elems : 1) * sizeof *g->elems);
            g->rule_start = malloc(P.n_sym * sizeof *g->rule_start);
        }
        if (!g || !g->elems || !g->rule_start) {
            st = GERR(LLM_ERR_NO_MEMORY, "out of memory");
        } else {
            uint32_t k = 0;
            for (uint32_t i = 0; i < P.n_sym; i++) {
                g->rule_start[i] = k;
                memcpy(g->elems + k, P.rules[i].v, P.rules[i].n * sizeof *g->elems);
                k += P.rules[i].n;
            }
            g->n_elems = k;
            g->rule_names = P.names;
            g->n_rules = P.n_sym;
            g->root = root;
            P.names = NULL;
            st = check_left_recursion(g);
        }
    }
    free(P.index);
    if (P.names == NULL) { /* names moved to g */
        for (uint32_t i = 0; i < P.n_sym; i++) free(P.rules[i].v);
        free(P.rules);
    } else {
        parser_free(&P);
    }
    free(src);
    if (st != LLM_OK) {
        llm_grammar_free(g);
        return st;
    }
    *out = g;
    return LLM_OK;
}
