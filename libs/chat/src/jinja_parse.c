/* jinja_parse.c -- tokens -> statement tree: text, {{ }} output and the
 * {% %} statements (if/elif/else, for, set and block set, break/continue,
 * macro, call, filter, block, include/import/from/extends, generation), with
 * the end tags each one takes, following jinja2's grammar. The expressions
 * inside them come from the expression grammar in jinja_parse_expr.c. */
#include <string.h>

#include "jinja_parse.h"

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
    s->expr = llm__jj_parse_expr(P);
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
    s->expr = llm__jj_parse_or(P); /* no conditional expression: "if" filters */
    if (is_name(P, "if")) {
        advance(P);
        s->filter = llm__jj_parse_expr(P);
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
    s->expr = llm__jj_parse_expr(P);
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
            d = llm__jj_parse_expr(P);
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
    s->expr = llm__jj_parse_expr(P);
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
    s->expr = llm__jj_parse_expr(P);
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
        llm__jj_parse_args(P, f);
    s->expr = llm__jj_parse_filters(P, f);
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
            s->expr = llm__jj_parse_expr(P);
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
