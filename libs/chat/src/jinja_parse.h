/* jinja_parse.h -- private to the template parser (jinja_parse.c: statements
 * and blocks; jinja_parse_expr.c: the expression grammar): the parser state,
 * its token helpers, and the expression entry points the statement parser
 * calls. Errors longjmp through llm__jj_fail (syntax errors are
 * LLM_ERR_BAD_FORMAT, nesting beyond JJ_MAX_DEPTH LLM_ERR_UNSUPPORTED). */
#ifndef LLM_CHAT_JINJA_PARSE_H
#define LLM_CHAT_JINJA_PARSE_H

#include <string.h>

#include "jinja.h"

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

static inline const jj_tok *cur(parser *P) { return &P->t[P->i]; }
static inline const jj_tok *peek(parser *P, size_t k) {
    return P->i + k < P->n ? &P->t[P->i + k] : &P->t[P->n - 1];
}
static inline void advance(parser *P) {
    if (P->i + 1 < P->n)
        P->i++;
}

static inline bool tok_is(const jj_tok *t, jj_tok_type type, const char *s) {
    if (t->type != type)
        return false;
    return !s || (t->n == strlen(s) && memcmp(t->s, s, t->n) == 0);
}
static inline bool is_op(parser *P, const char *op) { return tok_is(cur(P), TK_OP, op); }
static inline bool is_name(parser *P, const char *name) { return tok_is(cur(P), TK_NAME, name); }

_Noreturn static inline void syntax(parser *P, const char *what) {
    const jj_tok *t = cur(P);
    llm__jj_fail(P->S, LLM_ERR_BAD_FORMAT, "template syntax error, line %d: %s (at '%.*s')", t->line, what,
            (int)(t->n > 20 ? 20 : t->n), t->s ? t->s : "");
}

static inline void expect_op(parser *P, const char *op) {
    if (!is_op(P, op))
        syntax(P, op);
    advance(P);
}

static inline const char *take_name(parser *P) {
    if (cur(P)->type != TK_NAME)
        syntax(P, "expected a name");
    const char *s = llm__jj_strndup(P->S, cur(P)->s, cur(P)->n);
    advance(P);
    return s;
}

static inline jj_ex *new_ex(parser *P, jj_ex_kind kind) {
    jj_ex *e = llm__jj_alloc(P->S, sizeof *e);
    e->kind = kind;
    e->line = cur(P)->line;
    return e;
}

static inline void enter(parser *P) {
    if (++P->S->depth > JJ_MAX_DEPTH)
        llm__jj_fail(P->S, LLM_ERR_UNSUPPORTED, "template nesting deeper than %d", JJ_MAX_DEPTH);
}
static inline void leave(parser *P) { P->S->depth--; }

static inline void pv_push(jj_state *S, ptrvec *v, void *x) {
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

/* ---- the expression grammar (jinja_parse_expr.c) ---- */

/* A full expression, conditional expressions included (jinja2's
 * parse_expression): `a if cond [else b]` over or/and/not, comparisons,
 * arithmetic, filters and tests, postfix access, literals. */
jj_ex *llm__jj_parse_expr(parser *P);
/* An expression without the conditional (`x if c else y`) level: a for
 * loop's iterable, where a trailing `if` filters the loop. */
jj_ex *llm__jj_parse_or(parser *P);
/* "(args...)" after a callee, filter or test name, P at the "(": positional
 * then name=value keyword arguments, into e->args / e->kw_names / e->kw_vals. */
void llm__jj_parse_args(parser *P, jj_ex *e);
/* The "| filter(args)" and "is [not] test" chain after e (jinja2's
 * parse_filter_expr); returns e itself when none follows. */
jj_ex *llm__jj_parse_filters(parser *P, jj_ex *e);

#endif /* LLM_CHAT_JINJA_PARSE_H */
