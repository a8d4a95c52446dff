/* jinja_parse_expr.c -- the expression grammar of the template parser,
 * following jinja2's operator precedence, loosest first: conditional
 * (`a if c else b`), or, and, not, comparisons (chained: a < b < c), + -,
 * ~, * / // %, **, then unary - + with postfix access (.name, [index],
 * [a:b:c], calls) and the filters and tests after it (filters and tests bind
 * tighter than any binary operator: 'a' + x | trim is 'a' + (x | trim)), and
 * literals (strings, numbers, true/false/none, lists, tuples, dicts).
 * Statements and blocks: jinja_parse.c. */
#include "jinja_parse.h"

static jj_ex *parse_unary(parser *P, bool with_filter);
static jj_ex *parse_primary(parser *P);

/* (args...) after the callee: positional then name=value keywords. */
void llm__jj_parse_args(parser *P, jj_ex *e) {
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
            pv_push(P->S, &kwv, llm__jj_parse_expr(P));
        } else {
            if (kwn.n)
                syntax(P, "positional argument after keyword argument");
            pv_push(P->S, &args, llm__jj_parse_expr(P));
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
                parts[k] = llm__jj_parse_expr(P);
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
            llm__jj_parse_args(P, c);
            e = c;
        } else {
            return e;
        }
    }
}

/* | filter and "is [not] test" chains (jinja's parse_filter_expr). */
jj_ex *llm__jj_parse_filters(parser *P, jj_ex *e) {
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
                llm__jj_parse_args(P, f);
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
                llm__jj_parse_args(P, t);
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
            llm__jj_parse_args(P, c);
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
        jj_ex *first = llm__jj_parse_expr(P);
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
            pv_push(P->S, &items, llm__jj_parse_expr(P));
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
            pv_push(P->S, &items, llm__jj_parse_expr(P));
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
            pv_push(P->S, &keys, llm__jj_parse_expr(P));
            expect_op(P, ":");
            pv_push(P->S, &vals, llm__jj_parse_expr(P));
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
        e = llm__jj_parse_filters(P, e);
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

jj_ex *llm__jj_parse_or(parser *P) {
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
jj_ex *llm__jj_parse_expr(parser *P) {
    enter(P);
    jj_ex *e = llm__jj_parse_or(P);
    while (is_name(P, "if")) {
        advance(P);
        jj_ex *c = new_ex(P, EX_COND);
        c->a = e;
        c->b = llm__jj_parse_or(P);
        if (is_name(P, "else")) {
            advance(P);
            c->c = llm__jj_parse_expr(P);
        }
        e = c;
    }
    leave(P);
    return e;
}
