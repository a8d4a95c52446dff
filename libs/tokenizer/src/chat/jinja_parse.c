/* jinja_parse.c -- tokens -> statement/expression tree, following jinja2's
 * grammar and operator precedence (filters and tests bind tighter than any
 * binary operator: 'a' + x | trim is 'a' + (x | trim)). */
#include <string.h>

#include "chat/jinja.h"

/* A growable array of pointers in the arena. */
typedef struct ptrvec {
    void **p;
    size_t n, cap;
} ptrvec;

typedef struct parser {
    jj_state *S;
    const jj_tok *t;
    size_t n, i;
    ptrvec blocks; /* {% block %} statements, for duplicate names and self.NAME */
} parser;

static const jj_tok *cur(parser *P) { return &P->t[P->i]; }
static const jj_tok *peek(parser *P, size_t k) {
    return P->i + k < P->n ? &P->t[P->i + k] : &P->t[P->n - 1];
}
static void advance(parser *P) {
    if (P->i + 1 < P->n)
        P->i++;
}

static bool tok_is(const jj_tok *t, jj_tok_type type, const char *s) {
    if (t->type != type)
        return false;
    return !s || (t->n == strlen(s) && memcmp(t->s, s, t->n) == 0);
}
static bool is_op(parser *P, const char *op) { return tok_is(cur(P), TK_OP, op); }
static bool is_name(parser *P, const char *name) { return tok_is(cur(P), TK_NAME, name); }

_Noreturn static void syntax(parser *P, const char *what) {
    const jj_tok *t = cur(P);
    llm__jj_fail(P->S, LLM_ERR_BAD_FORMAT, "template syntax error, line %d: %s (at '%.*s')", t->line, what,
            (int)(t->n > 20 ? 20 : t->n), t->s ? t->s : "");
}

static void expect_op(parser *P, const char *op) {
    if (!is_op(P, op))
        syntax(P, op);
    advance(P);
}

static const char *take_name(parser *P) {
    if (cur(P)->type != TK_NAME)
        syntax(P, "expected a name");
    const char *s = llm__jj_strndup(P->S, cur(P)->s, cur(P)->n);
    advance(P);
    return s;
}

static jj_ex *new_ex(parser *P, jj_ex_kind kind) {
    jj_ex *e = llm__jj_alloc(P->S, sizeof *e);
    e->kind = kind;
    e->line = cur(P)->line;
    return e;
}

static void enter(parser *P) {
    if (++P->S->depth > JJ_MAX_DEPTH)
        llm__jj_fail(P->S, LLM_ERR_UNSUPPORTED, "template nesting deeper than %d", JJ_MAX_DEPTH);
}
static void leave(parser *P) { P->S->depth--; }

static void pv_push(jj_state *S, ptrvec *v, void *x) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        void **p = llm__jj_alloc(S, cap * sizeof *p);
        if (v->n)
            memcpy(p, v->p, v->n * sizeof *p);
        v->p = p;
        v->cap = cap;
    }
    v->p[v->n++] = x;
}

static jj_ex *parse_expr(parser *P);
static jj_ex *parse_or(parser *P);
static jj_ex *parse_unary(parser *P, bool with_filter);
static jj_ex *parse_primary(parser *P);

/* (args...) after the callee: positional then name=value keywords. */
static void parse_args(parser *P, jj_ex *e) {
    expect_op(P, "(");
    ptrvec args = {0}, kwn = {0}, kwv = {0};
    while (!is_op(P, ")")) {
        if (args.n + kwn.n > 0)
            expect_op(P, ",");
        if (is_op(P, ")"))
            break;
        if (cur(P)->type == TK_NAME && tok_is(peek(P, 1), TK_OP, "=")) {
            pv_push(P->S, &kwn, (void *)take_name(P));
            advance(P);
            pv_push(P->S, &kwv, parse_expr(P));
        } else {
            if (kwn.n)
                syntax(P, "positional argument after keyword argument");
            pv_push(P->S, &args, parse_expr(P));
        }
    }
    advance(P);
    e->args = (jj_ex **)args.p;
    e->n_args = args.n;
    e->kw_names = (const char **)kwn.p;
    e->kw_vals = (jj_ex **)kwv.p;
    e->n_kw = kwn.n;
}

static jj_ex *parse_postfix(parser *P, jj_ex *e) {
    for (;;) {
        if (is_op(P, ".")) {
            advance(P);
            jj_ex *a = new_ex(P, EX_ATTR);
            a->a = e;
            if (cur(P)->type == TK_INT) { /* x.0 is x[0] */
                a->kind = EX_INDEX;
                a->b = new_ex(P, EX_LIT);
                a->b->lit = llm__jv_int(cur(P)->i);
                advance(P);
            } else {
                a->name = take_name(P);
            }
            e = a;
        } else if (is_op(P, "[")) {
            advance(P);
            jj_ex *x = new_ex(P, EX_INDEX);
            x->a = e;
            jj_ex *parts[3] = {NULL, NULL, NULL};
            int k = 0;
            bool slice = false;
            for (;;) {
                if (is_op(P, ":")) {
                    slice = true;
                    if (++k > 2)
                        syntax(P, "too many ':' in a slice");
                    advance(P);
                    continue;
                }
                if (is_op(P, "]"))
                    break;
                if (parts[k])
                    syntax(P, "expected ':' or ']'");
                parts[k] = parse_expr(P);
            }
            advance(P);
            if (slice) {
                x->kind = EX_SLICE;
                x->b = parts[0];
                x->c = parts[1];
                x->args = llm__jj_alloc(P->S, sizeof *x->args);
                x->args[0] = parts[2];
                x->n_args = 1;
            } else {
                if (!parts[0])
                    syntax(P, "empty subscript");
                x->b = parts[0];
            }
            e = x;
        } else if (is_op(P, "(")) {
            jj_ex *c = new_ex(P, EX_CALL);
            c->a = e;
            parse_args(P, c);
            e = c;
        } else {
            return e;
        }
    }
}

/* | filter and "is [not] test" chains (jinja's parse_filter_expr). */
static jj_ex *parse_filters(parser *P, jj_ex *e) {
    for (;;) {
        if (is_op(P, "|")) {
            advance(P);
            jj_ex *f = new_ex(P, EX_FILTER);
            f->a = e;
            f->name = take_name(P);
            while (is_op(P, ".")) { /* dotted filter names: keep the last part */
                advance(P);
                f->name = take_name(P);
            }
            if (is_op(P, "("))
                parse_args(P, f);
            e = f;
        } else if (is_name(P, "is")) {
            advance(P);
            jj_ex *t = new_ex(P, EX_TEST);
            t->a = e;
            if (is_name(P, "not")) {
                t->negate = true;
                advance(P);
            }
            t->name = take_name(P);
            if (is_op(P, "(")) {
                parse_args(P, t);
            } else {
                const jj_tok *c = cur(P);
                bool arg = c->type == TK_STRING || c->type == TK_INT || c->type == TK_FLOAT ||
                           tok_is(c, TK_OP, "[") || tok_is(c, TK_OP, "{") || tok_is(c, TK_OP, "(") ||
                           (c->type == TK_NAME && !tok_is(c, TK_NAME, "else") &&
                            !tok_is(c, TK_NAME, "or") && !tok_is(c, TK_NAME, "and"));
                if (arg) {
                    t->args = llm__jj_alloc(P->S, sizeof *t->args);
                    t->args[0] = parse_postfix(P, parse_primary(P));
                    t->n_args = 1;
                }
            }
            e = t;
        } else if (is_op(P, "(")) {
            jj_ex *c = new_ex(P, EX_CALL);
            c->a = e;
            parse_args(P, c);
            e = c;
        } else {
            return e;
        }
    }
}

static jj_ex *parse_primary(parser *P) {
    const jj_tok *t = cur(P);
    jj_ex *e;
    if (t->type == TK_NAME) {
        e = new_ex(P, EX_LIT);
        if (tok_is(t, TK_NAME, "true") || tok_is(t, TK_NAME, "True"))
            e->lit = llm__jv_bool(true);
        else if (tok_is(t, TK_NAME, "false") || tok_is(t, TK_NAME, "False"))
            e->lit = llm__jv_bool(false);
        else if (tok_is(t, TK_NAME, "none") || tok_is(t, TK_NAME, "None"))
            e->lit = llm__jv_none();
        else {
            e->kind = EX_NAME;
            e->name = llm__jj_strndup(P->S, t->s, t->n);
        }
        advance(P);
        return e;
    }
    if (t->type == TK_STRING) { /* adjacent literals concatenate */
        llm__sb sb = {0};
        while (cur(P)->type == TK_STRING) {
            llm__sb_put(&sb, cur(P)->s, cur(P)->n);
            advance(P);
        }
        e = new_ex(P, EX_LIT);
        char *s = llm__jj_strndup(P->S, sb.data ? sb.data : "", sb.len);
        bool failed = sb.failed;
        size_t n = sb.len;
        llm__sb_free(&sb);
        if (failed)
            llm__jj_fail(P->S, LLM_ERR_NO_MEMORY, "out of memory");
        e->lit = llm__jv_str(s, n);
        return e;
    }
    if (t->type == TK_INT || t->type == TK_FLOAT) {
        e = new_ex(P, EX_LIT);
        e->lit = t->type == TK_INT ? llm__jv_int(t->i) : llm__jv_float(t->f);
        advance(P);
        return e;
    }
    if (tok_is(t, TK_OP, "(")) {
        advance(P);
        if (is_op(P, ")")) { /* empty tuple */
            advance(P);
            e = new_ex(P, EX_LIST);
            e->negate = true;
            return e;
        }
        jj_ex *first = parse_expr(P);
        if (!is_op(P, ",")) {
            expect_op(P, ")");
            return first;
        }
        ptrvec items = {0};
        pv_push(P->S, &items, first);
        while (is_op(P, ",")) {
            advance(P);
            if (is_op(P, ")"))
                break;
            pv_push(P->S, &items, parse_expr(P));
        }
        expect_op(P, ")");
        e = new_ex(P, EX_LIST);
        e->args = (jj_ex **)items.p;
        e->n_args = items.n;
        e->negate = true; /* a tuple */
        return e;
    }
    if (tok_is(t, TK_OP, "[")) {
        advance(P);
        ptrvec items = {0};
        while (!is_op(P, "]")) {
            if (items.n)
                expect_op(P, ",");
            if (is_op(P, "]"))
                break;
            pv_push(P->S, &items, parse_expr(P));
        }
        advance(P);
        e = new_ex(P, EX_LIST);
        e->args = (jj_ex **)items.p;
        e->n_args = items.n;
        return e;
    }
    if (tok_is(t, TK_OP, "{")) {
        advance(P);
        ptrvec keys = {0}, vals = {0};
        while (!is_op(P, "}")) {
            if (keys.n)
                expect_op(P, ",");
            if (is_op(P, "}"))
                break;
            pv_push(P->S, &keys, parse_expr(P));
            expect_op(P, ":");
            pv_push(P->S, &vals, parse_expr(P));
        }
        advance(P);
        e = new_ex(P, EX_DICT);
        e->args = (jj_ex **)keys.p;
        e->kw_vals = (jj_ex **)vals.p;
        e->n_args = keys.n;
        return e;
    }
    syntax(P, "expected an expression");
}

static jj_ex *parse_unary(parser *P, bool with_filter) {
    enter(P);
    jj_ex *e;
    if (is_op(P, "-") || is_op(P, "+")) {
        e = new_ex(P, is_op(P, "-") ? EX_NEG : EX_POS);
        advance(P);
        e->a = parse_unary(P, false);
    } else {
        e = parse_primary(P);
    }
    e = parse_postfix(P, e);
    if (with_filter)
        e = parse_filters(P, e);
    leave(P);
    return e;
}

static jj_ex *bin(parser *P, const char *op, jj_ex *l, jj_ex *r) {
    jj_ex *e = new_ex(P, EX_BIN);
    e->name = op;
    e->a = l;
    e->b = r;
    return e;
}

static jj_ex *parse_pow(parser *P) {
    jj_ex *l = parse_unary(P, true);
    while (is_op(P, "**")) {
        advance(P);
        l = bin(P, "**", l, parse_unary(P, true));
    }
    return l;
}

static jj_ex *parse_math2(parser *P) {
    jj_ex *l = parse_pow(P);
    for (;;) {
        const char *op = is_op(P, "*") ? "*" : is_op(P, "/") ? "/" : is_op(P, "//") ? "//"
                       : is_op(P, "%") ? "%" : NULL;
        if (!op)
            return l;
        advance(P);
        l = bin(P, op, l, parse_pow(P));
    }
}

static jj_ex *parse_concat(parser *P) {
    jj_ex *l = parse_math2(P);
    while (is_op(P, "~")) {
        advance(P);
        l = bin(P, "~", l, parse_math2(P));
    }
    return l;
}

static jj_ex *parse_math1(parser *P) {
    jj_ex *l = parse_concat(P);
    for (;;) {
        const char *op = is_op(P, "+") ? "+" : is_op(P, "-") ? "-" : NULL;
        if (!op)
            return l;
        advance(P);
        l = bin(P, op, l, parse_concat(P));
    }
}

static jj_ex *parse_compare(parser *P) {
    jj_ex *l = parse_math1(P);
    jj_ex *result = NULL; /* chained comparisons: a < b < c is (a < b) and (b < c) */
    for (;;) {
        const char *op = NULL;
        static const char *const ops[] = {"==", "!=", "<=", ">=", "<", ">"};
        for (size_t k = 0; k < 6 && !op; k++)
            if (is_op(P, ops[k]))
                op = ops[k];
        if (!op && is_name(P, "in"))
            op = "in";
        if (!op && is_name(P, "not") && tok_is(peek(P, 1), TK_NAME, "in")) {
            advance(P);
            op = "not in";
        }
        if (!op)
            break;
        advance(P);
        jj_ex *r = parse_math1(P);
        jj_ex *c = bin(P, op, l, r);
        if (result) {
            jj_ex *a = new_ex(P, EX_AND);
            a->a = result;
            a->b = c;
            result = a;
        } else {
            result = c;
        }
        l = r;
    }
    return result ? result : l;
}

static jj_ex *parse_not(parser *P) {
    if (is_name(P, "not")) {
        enter(P);
        jj_ex *e = new_ex(P, EX_NOT);
        advance(P);
        e->a = parse_not(P);
        leave(P);
        return e;
    }
    return parse_compare(P);
}

static jj_ex *parse_and(parser *P) {
    jj_ex *l = parse_not(P);
    while (is_name(P, "and")) {
        advance(P);
        jj_ex *e = new_ex(P, EX_AND);
        e->a = l;
        e->b = parse_not(P);
        l = e;
    }
    return l;
}

static jj_ex *parse_or(parser *P) {
    jj_ex *l = parse_and(P);
    while (is_name(P, "or")) {
        advance(P);
        jj_ex *e = new_ex(P, EX_OR);
        e->a = l;
        e->b = parse_and(P);
        l = e;
    }
    return l;
}

/* condexpr: a if cond [else b] */
static jj_ex *parse_expr(parser *P) {
    enter(P);
    jj_ex *e = parse_or(P);
    while (is_name(P, "if")) {
        advance(P);
        jj_ex *c = new_ex(P, EX_COND);
        c->a = e;
        c->b = parse_or(P);
        if (is_name(P, "else")) {
            advance(P);
            c->c = parse_expr(P);
        }
        e = c;
    }
    leave(P);
    return e;
}

/* ---- statements ---- */

static jj_st *new_st(parser *P, jj_st_kind kind) {
    jj_st *s = llm__jj_alloc(P->S, sizeof *s);
    s->kind = kind;
    s->line = cur(P)->line;
    return s;
}

static void expect_block_end(parser *P) {
    if (cur(P)->type != TK_BLOCK_END)
        syntax(P, "expected '%}'");
    advance(P);
}

/* Parse statements until a {% name %} in `ends` (left unconsumed, with
 * P->i at that name) or EOF (only when ends is NULL). */
static jj_body parse_body(parser *P, const char *const *ends);

static bool at_end_tag(parser *P, const char *const *ends) {
    if (cur(P)->type != TK_BLOCK_BEGIN || !ends)
        return false;
    const jj_tok *n = peek(P, 1);
    for (size_t k = 0; ends[k]; k++)
        if (tok_is(n, TK_NAME, ends[k]))
            return true;
    return false;
}

static jj_st *parse_if(parser *P) { /* at the condition, after if/elif */
    jj_st *s = new_st(P, ST_IF);
    s->expr = parse_expr(P);
    expect_block_end(P);
    static const char *const ends[] = {"elif", "else", "endif", NULL};
    s->body = parse_body(P, ends);
    advance(P); /* BLOCK_BEGIN */
    if (is_name(P, "elif")) {
        advance(P);
        jj_st *e = parse_if(P);
        s->orelse.st = llm__jj_alloc(P->S, sizeof *s->orelse.st);
        s->orelse.st[0] = e;
        s->orelse.n = 1;
        return s; /* the nested if consumed endif */
    }
    if (is_name(P, "else")) {
        advance(P);
        expect_block_end(P);
        static const char *const end[] = {"endif", NULL};
        s->orelse = parse_body(P, end);
        advance(P);
    }
    if (!is_name(P, "endif"))
        syntax(P, "expected endif");
    advance(P);
    expect_block_end(P);
    return s;
}

static jj_st *parse_for(parser *P) {
    jj_st *s = new_st(P, ST_FOR);
    bool paren = is_op(P, "(");
    if (paren)
        advance(P);
    for (;;) {
        if (s->n_target == 4)
            syntax(P, "too many loop variables");
        s->target[s->n_target++] = take_name(P);
        if (!is_op(P, ","))
            break;
        advance(P);
    }
    if (paren)
        expect_op(P, ")");
    if (!is_name(P, "in"))
        syntax(P, "expected 'in'");
    advance(P);
    s->expr = parse_or(P); /* no conditional expression: "if" filters */
    if (is_name(P, "if")) {
        advance(P);
        s->filter = parse_expr(P);
    }
    if (is_name(P, "recursive")) {
        advance(P);
        s->flags |= JJ_RECURSIVE;
    }
    expect_block_end(P);
    static const char *const ends[] = {"else", "endfor", NULL};
    s->body = parse_body(P, ends);
    advance(P);
    if (is_name(P, "else")) {
        advance(P);
        expect_block_end(P);
        static const char *const end[] = {"endfor", NULL};
        s->orelse = parse_body(P, end);
        advance(P);
    }
    if (!is_name(P, "endfor"))
        syntax(P, "expected endfor");
    advance(P);
    expect_block_end(P);
    return s;
}

static jj_st *parse_set(parser *P) {
    jj_st *s = new_st(P, ST_SET);
    s->target[0] = take_name(P);
    s->n_target = 1;
    if (is_op(P, ".")) {
        advance(P);
        s->attr = take_name(P);
    } else if (is_op(P, ",")) {
        llm__jj_fail(P->S, LLM_ERR_UNSUPPORTED, "line %d: tuple assignment is not supported", s->line);
    }
    if (cur(P)->type == TK_BLOCK_END) { /* {% set x %}...{% endset %} */
        if (s->attr)
            syntax(P, "block set of an attribute");
        advance(P);
        s->kind = ST_SET_BLOCK;
        static const char *const end[] = {"endset", NULL};
        s->body = parse_body(P, end);
        advance(P);
        advance(P);
        expect_block_end(P);
        return s;
    }
    expect_op(P, "=");
    s->expr = parse_expr(P);
    if (is_op(P, ","))
        llm__jj_fail(P->S, LLM_ERR_UNSUPPORTED, "line %d: tuple values are not supported", s->line);
    expect_block_end(P);
    return s;
}

/* The names a macro or call-block body reads before anything there assigns
 * them, among caller, kwargs and varargs: jinja2 (find_undeclared) gives the
 * macro those special parameters only then. Walked in jinja2's node field
 * order; {% block %} bodies are not entered. */
typedef struct undeclared {
    unsigned want, found;
} undeclared;
static const char *const k_special[3] = {"caller", "kwargs", "varargs"};
static unsigned special_bit(const char *name) {
    for (unsigned k = 0; k < 3; k++)
        if (strcmp(name, k_special[k]) == 0)
            return 1u << k; /* JJ_CATCH_CALLER, _KWARGS, _VARARGS */
    return 0;
}
static void ud_store(undeclared *u, const char *name) { u->want &= ~special_bit(name); }
static void ud_ex(undeclared *u, const jj_ex *e) {
    if (!e)
        return;
    if (e->kind == EX_NAME) {
        unsigned b = special_bit(e->name);
        u->found |= b & u->want;
        return;
    }
    ud_ex(u, e->a);
    ud_ex(u, e->b);
    ud_ex(u, e->c);
    for (size_t i = 0; i < e->n_args; i++)
        ud_ex(u, e->args[i]);
    for (size_t i = 0; i < e->n_kw; i++)
        ud_ex(u, e->kw_vals[i]);
}
static void ud_body(undeclared *u, const jj_body *b);
static void ud_st(undeclared *u, const jj_st *st) {
    switch (st->kind) {
    case ST_TEXT: case ST_BREAK: case ST_CONTINUE: break;
    case ST_OUTPUT: case ST_LOAD: ud_ex(u, st->expr); break;
    case ST_IF: ud_ex(u, st->expr); ud_body(u, &st->body); ud_body(u, &st->orelse); break;
    case ST_FOR:
        for (size_t k = 0; k < st->n_target; k++)
            ud_store(u, st->target[k]);
        ud_ex(u, st->expr);
        ud_body(u, &st->body);
        ud_body(u, &st->orelse);
        ud_ex(u, st->filter);
        break;
    case ST_SET:
        if (!st->attr)
            ud_store(u, st->target[0]);
        ud_ex(u, st->expr);
        break;
    case ST_SET_BLOCK: ud_store(u, st->target[0]); ud_body(u, &st->body); break;
    case ST_MACRO:
    case ST_CALL_BLOCK:
        if (st->kind == ST_CALL_BLOCK)
            ud_ex(u, st->expr);
        for (size_t k = 0; k < st->n_params; k++)
            ud_store(u, st->params[k]);
        for (size_t k = 0; k < st->n_params; k++)
            ud_ex(u, st->defaults[k]);
        ud_body(u, &st->body);
        break;
    case ST_FILTER_BLOCK: ud_body(u, &st->body); ud_ex(u, st->expr); break;
    case ST_BLOCK:
        if (!st->target[0]) /* {% generation %} is a call block in transformers */
            ud_body(u, &st->body);
        break;
    }
}
static void ud_body(undeclared *u, const jj_body *b) {
    for (size_t i = 0; i < b->n && u->found != u->want; i++)
        ud_st(u, b->st[i]);
}

/* "(a, b=default, ...)" of a macro or call block, into s->params/defaults. */
static void parse_signature(parser *P, jj_st *s) {
    expect_op(P, "(");
    ptrvec names = {0}, defs = {0};
    while (!is_op(P, ")")) {
        if (names.n)
            expect_op(P, ",");
        if (is_op(P, ")"))
            break;
        pv_push(P->S, &names, (void *)take_name(P));
        jj_ex *d = NULL;
        if (is_op(P, "=")) {
            advance(P);
            d = parse_expr(P);
        } else if (defs.n && defs.p[defs.n - 1]) {
            syntax(P, "non-default argument follows default argument");
        }
        pv_push(P->S, &defs, d);
    }
    advance(P);
    s->params = (const char **)names.p;
    s->defaults = (jj_ex **)defs.p;
    s->n_params = names.n;
}

/* Which special parameters (caller, kwargs, varargs) a macro or call block
 * gets: those its body reads, unless a parameter has that name (jinja2's
 * macro_body). A `caller` parameter read by the body needs a default. */
static void set_specials(parser *P, jj_st *s) {
    undeclared u = {JJ_CATCH_CALLER | JJ_CATCH_KWARGS | JJ_CATCH_VARARGS, 0};
    ud_body(&u, &s->body);
    for (size_t k = 0; k < s->n_params; k++) {
        unsigned b = special_bit(s->params[k]);
        if (b == JJ_CATCH_CALLER && (u.found & b) && !s->defaults[k])
            llm__jj_fail(P->S, LLM_ERR_BAD_FORMAT, "template syntax error, line %d: the special 'caller' argument "
                         "of a macro or call block must be omitted or given a default", s->line);
        u.found &= ~b;
    }
    s->flags |= u.found;
}

/* {% macro name(a, b=default, ...) %} body {% endmacro %}, after "macro". */
static jj_st *parse_macro(parser *P) {
    jj_st *s = new_st(P, ST_MACRO);
    s->target[0] = take_name(P);
    s->n_target = 1;
    parse_signature(P, s);
    expect_block_end(P);
    static const char *const end[] = {"endmacro", NULL};
    s->body = parse_body(P, end);
    advance(P);
    advance(P);
    if (cur(P)->type == TK_NAME) /* {% endmacro name %} */
        advance(P);
    expect_block_end(P);
    set_specials(P, s);
    return s;
}

/* {% call(params) macro(args) %} body {% endcall %}, after "call". */
static jj_st *parse_call_block(parser *P) {
    jj_st *s = new_st(P, ST_CALL_BLOCK);
    s->target[0] = "caller";
    s->n_target = 1;
    if (is_op(P, "("))
        parse_signature(P, s);
    s->expr = parse_expr(P);
    if (s->expr->kind != EX_CALL)
        syntax(P, "expected call");
    expect_block_end(P);
    static const char *const end[] = {"endcall", NULL};
    s->body = parse_body(P, end);
    advance(P);
    advance(P);
    expect_block_end(P);
    set_specials(P, s);
    return s;
}

/* {% block name [scoped] [required] %} body {% endblock [name] %}, after
 * "block". Without {% extends %} (we have no loader) jinja2 renders a block
 * where it stands. */
static jj_st *parse_block(parser *P) {
    jj_st *s = new_st(P, ST_BLOCK);
    s->target[0] = take_name(P);
    s->n_target = 1;
    for (size_t i = 0; i < P->blocks.n; i++)
        if (strcmp(((const jj_st *)P->blocks.p[i])->target[0], s->target[0]) == 0)
            llm__jj_fail(P->S, LLM_ERR_BAD_FORMAT, "template syntax error, line %d: block '%s' defined twice",
                         s->line, s->target[0]);
    pv_push(P->S, &P->blocks, s);
    if (is_name(P, "scoped")) {
        advance(P);
        s->flags |= JJ_SCOPED;
    }
    if (is_name(P, "required")) {
        advance(P);
        s->flags |= JJ_REQUIRED;
    }
    expect_block_end(P);
    static const char *const end[] = {"endblock", NULL};
    s->body = parse_body(P, end);
    advance(P);
    advance(P);
    if (cur(P)->type == TK_NAME && cur(P)->n == strlen(s->target[0]) && memcmp(cur(P)->s, s->target[0], cur(P)->n) == 0)
        advance(P);
    expect_block_end(P);
    if (s->flags & JJ_REQUIRED)
        for (size_t i = 0; i < s->body.n; i++) {
            const jj_st *b = s->body.st[i];
            bool blank = b->kind == ST_TEXT;
            for (size_t k = 0; blank && k < b->text_n; k++)
                blank = strchr(" \t\n\r\v\f", b->text[k]) != NULL;
            if (!blank)
                llm__jj_fail(P->S, LLM_ERR_BAD_FORMAT, "template syntax error, line %d: required blocks can "
                             "only contain comments or whitespace", s->line);
        }
    return s;
}

/* [with context | without context] after an include/import/from. */
static void skip_context(parser *P) {
    if ((is_name(P, "with") || is_name(P, "without")) && tok_is(peek(P, 1), TK_NAME, "context")) {
        advance(P);
        advance(P);
    }
}

/* {% include/import/from/extends ... %}, after the keyword: parsed as
 * jinja2 does; they fail when run (there is no template loader). */
static jj_st *parse_load(parser *P, int kind) {
    jj_st *s = new_st(P, ST_LOAD);
    s->load_kind = kind;
    s->expr = parse_expr(P);
    if (kind == JJ_LOAD_INCLUDE) {
        if (is_name(P, "ignore") && tok_is(peek(P, 1), TK_NAME, "missing")) {
            advance(P);
            advance(P);
            s->flags |= JJ_IGNORE_MISSING;
        }
        skip_context(P);
    } else if (kind == JJ_LOAD_IMPORT) {
        if (!is_name(P, "as"))
            syntax(P, "expected 'as'");
        advance(P);
        take_name(P);
        skip_context(P);
    } else if (kind == JJ_LOAD_FROM) {
        if (!is_name(P, "import"))
            syntax(P, "expected 'import'");
        advance(P);
        for (;;) {
            if ((is_name(P, "with") || is_name(P, "without")) && tok_is(peek(P, 1), TK_NAME, "context")) {
                skip_context(P);
                break;
            }
            if (cur(P)->type == TK_NAME && cur(P)->n && cur(P)->s[0] == '_')
                syntax(P, "names starting with an underline can not be imported");
            take_name(P);
            if (is_name(P, "as")) {
                advance(P);
                take_name(P);
            }
            if (!is_op(P, ","))
                break;
            advance(P);
            if (cur(P)->type != TK_NAME)
                break;
        }
    }
    expect_block_end(P);
    return s;
}

/* {% filter name(args) | ... %} body {% endfilter %}, after "filter". */
static jj_st *parse_filter_block(parser *P) {
    jj_st *s = new_st(P, ST_FILTER_BLOCK);
    jj_ex *base = new_ex(P, EX_NAME);
    base->name = JJ_FILTER_VAR;
    /* The first filter has no leading '|': parse it as "| name(...)". */
    jj_ex *f = new_ex(P, EX_FILTER);
    f->a = base;
    f->name = take_name(P);
    if (is_op(P, "("))
        parse_args(P, f);
    s->expr = parse_filters(P, f);
    expect_block_end(P);
    static const char *const end[] = {"endfilter", NULL};
    s->body = parse_body(P, end);
    advance(P);
    advance(P);
    expect_block_end(P);
    return s;
}

static jj_st *parse_statement(parser *P) {
    advance(P); /* BLOCK_BEGIN */
    const jj_tok *t = cur(P);
    if (t->type != TK_NAME)
        syntax(P, "expected a statement name");
    enter(P);
    jj_st *s;
    if (tok_is(t, TK_NAME, "if")) {
        advance(P);
        s = parse_if(P);
    } else if (tok_is(t, TK_NAME, "for")) {
        advance(P);
        s = parse_for(P);
    } else if (tok_is(t, TK_NAME, "set")) {
        advance(P);
        s = parse_set(P);
    } else if (tok_is(t, TK_NAME, "break") || tok_is(t, TK_NAME, "continue")) {
        s = new_st(P, tok_is(t, TK_NAME, "break") ? ST_BREAK : ST_CONTINUE);
        advance(P);
        expect_block_end(P);
    } else if (tok_is(t, TK_NAME, "macro")) {
        advance(P);
        s = parse_macro(P);
    } else if (tok_is(t, TK_NAME, "filter")) {
        advance(P);
        s = parse_filter_block(P);
    } else if (tok_is(t, TK_NAME, "call")) {
        advance(P);
        s = parse_call_block(P);
    } else if (tok_is(t, TK_NAME, "block")) {
        advance(P);
        s = parse_block(P);
    } else if (tok_is(t, TK_NAME, "include") || tok_is(t, TK_NAME, "import") || tok_is(t, TK_NAME, "from") ||
               tok_is(t, TK_NAME, "extends")) {
        int kind = tok_is(t, TK_NAME, "include") ? JJ_LOAD_INCLUDE
                   : tok_is(t, TK_NAME, "import") ? JJ_LOAD_IMPORT
                   : tok_is(t, TK_NAME, "from")   ? JJ_LOAD_FROM
                                                  : JJ_LOAD_EXTENDS;
        advance(P);
        s = parse_load(P, kind);
    } else if (tok_is(t, TK_NAME, "generation")) { /* transformers' tracker: plain body */
        s = new_st(P, ST_BLOCK);
        advance(P);
        expect_block_end(P);
        static const char *const end[] = {"endgeneration", NULL};
        s->body = parse_body(P, end);
        advance(P);
        advance(P);
        expect_block_end(P);
    } else if (tok_is(t, TK_NAME, "endif") || tok_is(t, TK_NAME, "endfor") || tok_is(t, TK_NAME, "else") ||
               tok_is(t, TK_NAME, "elif") || tok_is(t, TK_NAME, "endset") ||
               tok_is(t, TK_NAME, "endgeneration") || tok_is(t, TK_NAME, "endmacro") ||
               tok_is(t, TK_NAME, "endfilter") || tok_is(t, TK_NAME, "endcall") ||
               tok_is(t, TK_NAME, "endblock")) {
        syntax(P, "unexpected end tag");
    } else {
        llm__jj_fail(P->S, LLM_ERR_UNSUPPORTED, "line %d: the '%.*s' statement is not supported", t->line,
                (int)(t->n > 30 ? 30 : t->n), t->s);
    }
    leave(P);
    return s;
}

static jj_body parse_body(parser *P, const char *const *ends) {
    ptrvec v = {0};
    for (;;) {
        const jj_tok *t = cur(P);
        if (t->type == TK_EOF) {
            if (ends)
                syntax(P, "unexpected end of template (missing end tag)");
            break;
        }
        if (at_end_tag(P, ends))
            break;
        if (t->type == TK_TEXT) {
            jj_st *s = new_st(P, ST_TEXT);
            s->text = t->s;
            s->text_n = t->n;
            advance(P);
            pv_push(P->S, &v, s);
        } else if (t->type == TK_VAR_BEGIN) {
            jj_st *s = new_st(P, ST_OUTPUT);
            advance(P);
            s->expr = parse_expr(P);
            if (cur(P)->type != TK_VAR_END)
                syntax(P, "expected '}}'");
            advance(P);
            pv_push(P->S, &v, s);
        } else if (t->type == TK_BLOCK_BEGIN) {
            pv_push(P->S, &v, parse_statement(P));
        } else {
            syntax(P, "unexpected token");
        }
    }
    jj_body b = {(jj_st **)v.p, v.n};
    return b;
}

jj_body llm__jj_parse(jj_state *S, const jj_tok *toks, size_t n_tok) {
    parser P = {S, toks, n_tok, 0, {0}};
    jj_body b = parse_body(&P, NULL);
    S->blocks = (const jj_st **)P.blocks.p;
    S->n_blocks = P.blocks.n;
    return b;
}
