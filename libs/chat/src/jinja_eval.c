/* jinja_eval.c -- evaluation of the template tree, and the entry point:
 * scopes, expressions (the operators themselves are in jinja_ops.c), calls
 * of functions, methods and macros, statements and loops.
 *
 * Scoping follows jinja2: a for-loop body gets a fresh scope on every
 * iteration (so `set` inside a loop never leaks out, nor into the next
 * iteration -- templates use namespace() for that); if-blocks share their
 * enclosing scope. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jinja.h"

typedef struct jj_scope {
    struct jj_scope *parent;
    jj_dict vars;
} jj_scope;

enum { FLOW_NORMAL, FLOW_BREAK, FLOW_CONTINUE };

static void step(jj_state *S) {
    if (++S->steps > JJ_MAX_STEPS)
        llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "template evaluation exceeded %llu steps",
                (unsigned long long)JJ_MAX_STEPS);
}

static bool lookup(jj_state *S, const char *name, jv *out) {
    size_t n = strlen(name);
    for (jj_scope *sc = S->scope; sc; sc = sc->parent)
        if (llm__jj_dict_get(&sc->vars, name, n, out))
            return true;
    return false;
}

static void assign(jj_state *S, const char *name, jv v) { llm__jj_dict_set(S, &S->scope->vars, llm__jv_cstr(name), v); }

static jv eval(jj_state *S, const jj_ex *e);

static jv get_attr(jj_state *S, jv obj, const char *name, int line) {
    if (obj.type == JV_UNDEFINED)
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: attribute '%s' of an undefined value", line, name);
    jv out;
    if (obj.type == JV_DICT && llm__jj_dict_get(obj.u.dict, name, strlen(name), &out))
        return out;
    return llm__jv_undefined();
}

/* Evaluate positional and keyword arguments of a call, filter or test. */
static void eval_args(jj_state *S, const jj_ex *e, jv **args, jv **kwv) {
    *args = e->n_args ? llm__jj_alloc(S, e->n_args * sizeof(jv)) : NULL;
    for (size_t i = 0; i < e->n_args; i++)
        (*args)[i] = eval(S, e->args[i]);
    *kwv = e->n_kw ? llm__jj_alloc(S, e->n_kw * sizeof(jv)) : NULL;
    for (size_t i = 0; i < e->n_kw; i++)
        (*kwv)[i] = eval(S, e->kw_vals[i]);
}

static int exec_body(jj_state *S, const jj_body *b);
static void push_scope(jj_state *S);

/* Render body into a fresh capture and return the text (arena copy). */
static jv capture(jj_state *S, const jj_body *body) {
    llm__sb *saved = S->out;
    llm__jj_scratch_begin(S);
    S->out = &S->captures->sb;
    exec_body(S, body);
    S->out = saved;
    size_t n;
    char *s = llm__jj_scratch_end(S, &n);
    return llm__jv_str(s, n);
}

static int run_loop(jj_state *S, const jj_st *st, jv iterable, int depth);

/* Find the first keyword argument not yet taken that is named name. */
static int take_kw(const char **kw, size_t n_kw, bool *taken, const char *name) {
    for (size_t k = 0; k < n_kw; k++)
        if (!taken[k] && strcmp(kw[k], name) == 0) {
            taken[k] = true;
            return (int)k;
        }
    return -1;
}

/* Call a macro as jinja2's Macro.__call__ does: positional arguments, then
 * keyword arguments for the parameters left, then the defaults (evaluated in
 * the macro's scope, after the arguments before them); a parameter left
 * without a value is undefined. The special parameters come next: caller
 * (the {% call %} body, undefined when none), kwargs (a dict of the keyword
 * arguments left), varargs (a tuple of the positional arguments beyond the
 * parameters), each only when the body reads it (flags); otherwise those
 * arguments are errors. The body renders in a new scope whose parent is the
 * defining scope; the result is its text.
 *
 * The same value type also carries loop(...) of a recursive for (renders the
 * loop over the argument one level deeper) and self.NAME() (renders a block). */
static jv call_macro(jj_state *S, const jj_macro *m, const jv *args, size_t n_args, const char **kw, const jv *kwv,
                     size_t n_kw, int line) {
    const jj_st *d = m->def;
    jj_scope *saved = S->scope;
    if (d->kind == ST_FOR || d->kind == ST_BLOCK) {
        if (d->kind == ST_FOR ? (n_args != 1 || n_kw) : (n_args || n_kw))
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: %s takes %s", line,
                         d->kind == ST_FOR ? "loop()" : "a block", d->kind == ST_FOR ? "one argument" : "no arguments");
        if (d->kind == ST_BLOCK && (d->flags & JJ_REQUIRED))
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: required block '%s' not found", line, d->target[0]);
        llm__sb *out = S->out;
        llm__jj_scratch_begin(S);
        S->out = &S->captures->sb;
        S->scope = m->scope;
        push_scope(S);
        if (d->kind == ST_FOR)
            run_loop(S, d, args[0], m->depth + 1);
        else
            exec_body(S, &d->body);
        S->scope = saved;
        S->out = out;
        size_t n;
        char *s = llm__jj_scratch_end(S, &n);
        return llm__jv_str(s, n);
    }
    const char *name = d->target[0];
    size_t np = d->n_params, n_pos = n_args < np ? n_args : np;
    bool *taken = llm__jj_alloc(S, (n_kw ? n_kw : 1) * sizeof *taken);
    bool *set = llm__jj_alloc(S, (np ? np : 1) * sizeof *set);
    S->scope = m->scope;
    push_scope(S);
    for (size_t i = 0; i < n_pos; i++) {
        assign(S, d->params[i], args[i]);
        set[i] = true;
    }
    for (size_t i = n_pos; i < np; i++) {
        int k = take_kw(kw, n_kw, taken, d->params[i]);
        if (k >= 0) {
            assign(S, d->params[i], kwv[k]);
            set[i] = true;
        }
    }
    if (d->flags & JJ_CATCH_CALLER) {
        int k = take_kw(kw, n_kw, taken, "caller");
        assign(S, "caller", k >= 0 ? kwv[k] : llm__jv_undefined());
    }
    if (d->flags & JJ_CATCH_KWARGS) {
        jv rest = llm__jv_dict_new(S);
        for (size_t k = 0; k < n_kw; k++)
            if (!taken[k])
                llm__jj_dict_set(S, rest.u.dict, llm__jv_cstr(kw[k]), kwv[k]);
        assign(S, "kwargs", rest);
    } else {
        for (size_t k = 0; k < n_kw; k++)
            if (!taken[k])
                llm__jj_fail(S, LLM_ERR_INVALID_ARG, strcmp(kw[k], "caller") == 0
                             ? "line %d: macro '%s' was invoked with two values for the special caller argument%s"
                             : "line %d: macro '%s' takes no keyword argument '%s'", line, name,
                             strcmp(kw[k], "caller") == 0 ? "" : kw[k]);
    }
    if (d->flags & JJ_CATCH_VARARGS) {
        jv rest = llm__jj_list_from(S, n_args > np ? args + np : NULL, n_args > np ? n_args - np : 0);
        rest.u.list->is_tuple = true;
        assign(S, "varargs", rest);
    } else if (n_args > np) {
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: macro '%s' takes not more than %zu argument(s)", line, name, np);
    }
    for (size_t i = 0; i < np; i++)
        if (!set[i])
            assign(S, d->params[i], d->defaults[i] ? eval(S, d->defaults[i]) : llm__jv_undefined());
    jv r = capture(S, &d->body);
    S->scope = saved;
    return r;
}

/* A call, with one extra keyword argument when extra_kw is set (the caller
 * of a {% call %} block). */
static jv call_with(jj_state *S, const jj_ex *e, const char *extra_kw, jv extra_val) {
    jv *args, *kwv;
    const char **kw = e->kw_names;
    size_t n_kw = e->n_kw;
    jv f;
    jv obj = llm__jv_undefined();
    bool method = false;
    if (e->a->kind == EX_ATTR) { /* obj.method(...) */
        obj = eval(S, e->a->a);
        f = obj.type == JV_DICT ? get_attr(S, obj, e->a->name, e->line) : llm__jv_undefined();
        method = f.type != JV_FUNC && f.type != JV_MACRO;
    } else {
        f = eval(S, e->a);
    }
    eval_args(S, e, &args, &kwv);
    if (extra_kw) { /* append the extra keyword */
        const char **k2 = llm__jj_alloc(S, (n_kw + 1) * sizeof *k2);
        jv *v2 = llm__jj_alloc(S, (n_kw + 1) * sizeof *v2);
        for (size_t i = 0; i < n_kw; i++) {
            k2[i] = kw[i];
            v2[i] = kwv[i];
        }
        k2[n_kw] = extra_kw;
        v2[n_kw] = extra_val;
        kw = k2;
        kwv = v2;
        n_kw++;
    }
    if (method) {
        if (n_kw)
            llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "line %d: keyword arguments to methods", e->line);
        return llm__jj_call_method(S, obj, e->a->name, args, e->n_args, e->line);
    }
    if (f.type == JV_UNDEFINED) {
        const char *fname = e->a->kind == EX_NAME ? e->a->name : "";
        /* caller (no {% call %} block) and super (no parent block) are undefined
         * in jinja2 too; any other name may be a jinja2 global we lack. */
        bool known = !strcmp(fname, "caller") || !strcmp(fname, "super");
        llm__jj_fail(S, known ? LLM_ERR_INVALID_ARG : LLM_ERR_UNSUPPORTED, "line %d: call of an undefined function%s%s",
                     e->line, *fname ? " " : "", fname);
    }
    if (f.type == JV_DICT && f.u.dict->is_loop) { /* loop(...) */
        jv rec;
        if (!llm__jj_dict_get(f.u.dict, JJ_LOOP_RECURSE, strlen(JJ_LOOP_RECURSE), &rec))
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: the loop must have the 'recursive' marker to be called "
                         "recursively", e->line);
        f = rec;
    }
    if (f.type == JV_MACRO)
        return call_macro(S, f.u.macro, args, e->n_args, kw, kwv, n_kw, e->line);
    if (f.type != JV_FUNC)
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: '%s' object is not callable", e->line, llm__jv_type_name(f));
    return llm__jj_call_func(S, f.u.func, args, e->n_args, kw, kwv, n_kw, e->line);
}

static jv call(jj_state *S, const jj_ex *e) { return call_with(S, e, NULL, llm__jv_undefined()); }

/* `self` of jinja2 (TemplateReference): self.NAME() renders block NAME. */
static jv self_ref(jj_state *S) {
    jv d = llm__jv_dict_new(S);
    for (size_t i = 0; i < S->n_blocks; i++) {
        jj_macro *m = llm__jj_alloc(S, sizeof *m);
        m->def = S->blocks[i];
        m->scope = S->root;
        jv v;
        v.type = JV_MACRO;
        v.u.macro = m;
        llm__jj_dict_set(S, d.u.dict, llm__jv_cstr(S->blocks[i]->target[0]), v);
    }
    return d;
}

static jv eval(jj_state *S, const jj_ex *e) {
    step(S);
    if (++S->depth > JJ_MAX_DEPTH)
        llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "expression nesting deeper than %d", JJ_MAX_DEPTH);
    jv r, *args, *kwv;
    switch (e->kind) {
    case EX_LIT: r = e->lit; break;
    case EX_NAME:
        if (!lookup(S, e->name, &r) && !llm__jj_global_func(e->name, &r))
            r = strcmp(e->name, "self") == 0 ? self_ref(S) : llm__jv_undefined();
        break;
    case EX_ATTR: r = get_attr(S, eval(S, e->a), e->name, e->line); break;
    case EX_INDEX: {
        jv obj = eval(S, e->a);
        r = llm__jj_get_item(S, obj, eval(S, e->b), e->line);
        break;
    }
    case EX_SLICE: {
        jv obj = eval(S, e->a);
        jv a = e->b ? eval(S, e->b) : llm__jv_none(), b = e->c ? eval(S, e->c) : llm__jv_none();
        jv c = e->args[0] ? eval(S, e->args[0]) : llm__jv_none();
        r = llm__jj_slice(S, obj, a, b, c, e->line);
        break;
    }
    case EX_CALL: r = call(S, e); break;
    case EX_FILTER: {
        jv v = eval(S, e->a);
        eval_args(S, e, &args, &kwv);
        r = llm__jj_apply_filter(S, e->name, v, args, e->n_args, e->kw_names, kwv, e->n_kw, e->line);
        break;
    }
    case EX_TEST: {
        jv v = eval(S, e->a);
        eval_args(S, e, &args, &kwv);
        r = llm__jv_bool(llm__jj_apply_test(S, e->name, v, args, e->n_args, e->line) != e->negate);
        break;
    }
    case EX_NEG:
    case EX_POS: r = llm__jj_unary(S, e->kind == EX_NEG, eval(S, e->a), e->line); break;
    case EX_NOT: r = llm__jv_bool(!llm__jv_truthy(eval(S, e->a))); break;
    case EX_AND: r = eval(S, e->a); if (llm__jv_truthy(r)) r = eval(S, e->b); break;
    case EX_OR: r = eval(S, e->a); if (!llm__jv_truthy(r)) r = eval(S, e->b); break;
    case EX_BIN: {
        jv a = eval(S, e->a), b = eval(S, e->b);
        r = llm__jj_binary(S, e->name, a, b, e->line);
        break;
    }
    case EX_COND:
        if (llm__jv_truthy(eval(S, e->b)))
            r = eval(S, e->a);
        else
            r = e->c ? eval(S, e->c) : llm__jv_undefined();
        break;
    case EX_LIST:
        r = llm__jv_list_new(S, e->n_args);
        r.u.list->is_tuple = e->negate;
        for (size_t i = 0; i < e->n_args; i++)
            r.u.list->items[i] = eval(S, e->args[i]);
        break;
    case EX_DICT:
        r = llm__jv_dict_new(S);
        for (size_t i = 0; i < e->n_args; i++) {
            jv k = eval(S, e->args[i]);
            llm__jj_dict_set(S, r.u.dict, k, eval(S, e->kw_vals[i]));
        }
        break;
    default: llm__jj_fail(S, LLM_ERR_INTERNAL, "bad expression node");
    }
    S->depth--;
    return r;
}

static void emit(jj_state *S, const char *s, size_t n) {
    if (S->out->len + n > JJ_MAX_OUTPUT)
        llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "rendered text exceeds %u bytes", JJ_MAX_OUTPUT);
    llm__sb_put(S->out, s, n);
    if (S->out->failed)
        llm__jj_fail(S, LLM_ERR_NO_MEMORY, "out of memory");
}

static void push_scope(jj_state *S) {
    jj_scope *sc = llm__jj_alloc(S, sizeof *sc);
    sc->parent = S->scope;
    S->scope = sc;
}

static void bind_targets(jj_state *S, const jj_st *st, jv item) {
    if (st->n_target == 1) {
        assign(S, st->target[0], item);
        return;
    }
    if (item.type != JV_LIST || item.u.list->n != st->n_target)
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: cannot unpack a %s into %zu loop variables", st->line,
                llm__jv_type_name(item), st->n_target);
    for (size_t k = 0; k < st->n_target; k++)
        assign(S, st->target[k], item.u.list->items[k]);
}

/* The loop over iterable at depth (1 for a loop as written, deeper for
 * loop(...) of a recursive one), in the current scope. */
static int run_loop(jj_state *S, const jj_st *st, jv iterable, int depth) {
    jj_list items = llm__jj_iterate(S, iterable, st->line);
    jj_scope *outer = S->scope;
    if (st->filter) { /* the inline if filters before loop.* is computed */
        jv kept = llm__jv_list_new(S, items.n);
        size_t k = 0;
        for (size_t i = 0; i < items.n; i++) {
            jj_scope *saved = S->scope;
            push_scope(S);
            bind_targets(S, st, items.items[i]);
            bool ok = llm__jv_truthy(eval(S, st->filter));
            S->scope = saved;
            if (ok)
                kept.u.list->items[k++] = items.items[i];
        }
        items.items = kept.u.list->items;
        items.n = k;
    }
    if (items.n == 0)
        return exec_body(S, &st->orelse);
    jv recurse = llm__jv_undefined();
    if (st->flags & JJ_RECURSIVE) {
        jj_macro *m = llm__jj_alloc(S, sizeof *m);
        m->def = st;
        m->scope = outer;
        m->depth = depth;
        recurse.type = JV_MACRO;
        recurse.u.macro = m;
    }
    for (size_t i = 0; i < items.n; i++) {
        step(S);
        jj_scope *saved = S->scope;
        push_scope(S);
        jv loop = llm__jv_dict_new(S);
        jj_dict *d = loop.u.dict;
        d->is_loop = true;
        size_t n = items.n;
        llm__jj_dict_set(S, d, llm__jv_cstr("index"), llm__jv_int((int64_t)i + 1));
        llm__jj_dict_set(S, d, llm__jv_cstr("index0"), llm__jv_int((int64_t)i));
        llm__jj_dict_set(S, d, llm__jv_cstr("revindex"), llm__jv_int((int64_t)(n - i)));
        llm__jj_dict_set(S, d, llm__jv_cstr("revindex0"), llm__jv_int((int64_t)(n - i - 1)));
        llm__jj_dict_set(S, d, llm__jv_cstr("first"), llm__jv_bool(i == 0));
        llm__jj_dict_set(S, d, llm__jv_cstr("last"), llm__jv_bool(i + 1 == n));
        llm__jj_dict_set(S, d, llm__jv_cstr("length"), llm__jv_int((int64_t)n));
        llm__jj_dict_set(S, d, llm__jv_cstr("depth"), llm__jv_int(depth));
        llm__jj_dict_set(S, d, llm__jv_cstr("depth0"), llm__jv_int(depth - 1));
        if (i > 0)
            llm__jj_dict_set(S, d, llm__jv_cstr("previtem"), items.items[i - 1]);
        if (i + 1 < n)
            llm__jj_dict_set(S, d, llm__jv_cstr("nextitem"), items.items[i + 1]);
        if (st->flags & JJ_RECURSIVE)
            llm__jj_dict_set(S, d, llm__jv_cstr(JJ_LOOP_RECURSE), recurse);
        assign(S, "loop", loop);
        bind_targets(S, st, items.items[i]);
        int flow = exec_body(S, &st->body);
        S->scope = saved;
        if (flow == FLOW_BREAK)
            break;
    }
    return FLOW_NORMAL;
}

static int exec_for(jj_state *S, const jj_st *st) { return run_loop(S, st, eval(S, st->expr), 1); }

/* {% include/import/from/extends %}: jinja2 without a loader raises
 * TypeError, except an include "ignore missing" of a falsy non-string
 * (select_template's TemplatesNotFound, which that clause swallows). */
static void exec_load(jj_state *S, const jj_st *st) {
    static const char *const what[] = {"include", "import", "from ... import", "extends"};
    jv v = eval(S, st->expr);
    bool is_name = v.type == JV_STR || v.type == JV_UNDEFINED;
    if (st->load_kind == JJ_LOAD_INCLUDE && !is_name && !llm__jv_truthy(v)) {
        if (st->flags & JJ_IGNORE_MISSING)
            return;
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: include: tried to select from an empty list of templates",
                     st->line);
    }
    llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: %s: no loader for this environment specified (templates cannot "
                 "load other templates)", st->line, what[st->load_kind]);
}

/* {% block %} rendered in place: it sees the template's top-level variables
 * (not the loop or macro around it) unless scoped; its sets stay inside. */
static int exec_block(jj_state *S, const jj_st *st) {
    if (!st->target[0]) /* {% generation %} */
        return exec_body(S, &st->body);
    if (st->flags & JJ_REQUIRED)
        llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: required block '%s' not found", st->line, st->target[0]);
    jj_scope *saved = S->scope;
    if (!(st->flags & JJ_SCOPED))
        S->scope = S->root;
    push_scope(S);
    exec_body(S, &st->body);
    S->scope = saved;
    return FLOW_NORMAL;
}

static int exec_st(jj_state *S, const jj_st *st) {
    step(S);
    switch (st->kind) {
    case ST_TEXT: emit(S, st->text, st->text_n); return FLOW_NORMAL;
    case ST_OUTPUT: {
        jv v = eval(S, st->expr);
        if (v.type == JV_STR) {
            emit(S, v.u.str.s, v.u.str.n);
        } else {
            jv s = llm__jv_stringify(S, v);
            emit(S, s.u.str.s, s.u.str.n);
        }
        return FLOW_NORMAL;
    }
    case ST_IF:
        return llm__jv_truthy(eval(S, st->expr)) ? exec_body(S, &st->body) : exec_body(S, &st->orelse);
    case ST_FOR: return exec_for(S, st);
    case ST_SET: {
        jv v = eval(S, st->expr);
        if (!st->attr) {
            assign(S, st->target[0], v);
            return FLOW_NORMAL;
        }
        jv ns;
        if (!lookup(S, st->target[0], &ns) || ns.type != JV_DICT || !ns.u.dict->is_namespace)
            llm__jj_fail(S, LLM_ERR_INVALID_ARG, "line %d: cannot assign attribute on non-namespace object",
                    st->line);
        llm__jj_dict_set(S, ns.u.dict, llm__jv_cstr(st->attr), v);
        return FLOW_NORMAL;
    }
    case ST_SET_BLOCK: {
        llm__sb *saved = S->out;
        jj_capture *cap = llm__jj_alloc(S, sizeof *cap);
        cap->next = S->captures;
        S->captures = cap;
        S->out = &cap->sb;
        int flow = exec_body(S, &st->body);
        S->out = saved;
        size_t n;
        char *s = llm__jj_scratch_end(S, &n); /* pops cap */
        assign(S, st->target[0], llm__jv_str(s, n));
        return flow;
    }
    case ST_BREAK: return FLOW_BREAK;
    case ST_CONTINUE: return FLOW_CONTINUE;
    case ST_BLOCK: return exec_block(S, st);
    case ST_LOAD: exec_load(S, st); return FLOW_NORMAL;
    case ST_CALL_BLOCK: {
        jj_macro *m = llm__jj_alloc(S, sizeof *m);
        m->def = st;
        m->scope = S->scope;
        jv caller;
        caller.type = JV_MACRO;
        caller.u.macro = m;
        jv v = call_with(S, st->expr, "caller", caller);
        if (v.type != JV_STR)
            v = llm__jv_stringify(S, v);
        emit(S, v.u.str.s, v.u.str.n);
        return FLOW_NORMAL;
    }
    case ST_MACRO: {
        jj_macro *m = llm__jj_alloc(S, sizeof *m);
        m->def = st;
        m->scope = S->scope;
        jv v;
        v.type = JV_MACRO;
        v.u.macro = m;
        assign(S, st->target[0], v);
        return FLOW_NORMAL;
    }
    case ST_FILTER_BLOCK: {
        jv body = capture(S, &st->body);
        jj_scope *saved = S->scope;
        push_scope(S);
        assign(S, JJ_FILTER_VAR, body);
        jv v = eval(S, st->expr);
        S->scope = saved;
        if (v.type != JV_STR)
            v = llm__jv_stringify(S, v);
        emit(S, v.u.str.s, v.u.str.n);
        return FLOW_NORMAL;
    }
    }
    return FLOW_NORMAL;
}

static int exec_body(jj_state *S, const jj_body *b) {
    if (++S->depth > JJ_MAX_DEPTH)
        llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "statement nesting deeper than %d", JJ_MAX_DEPTH);
    int flow = FLOW_NORMAL;
    for (size_t i = 0; i < b->n && flow == FLOW_NORMAL; i++)
        flow = exec_st(S, b->st[i]);
    S->depth--;
    return flow;
}

/* A JSON value as a template value (strings are copied into the arena). */
static jv from_json(jj_state *S, const json_t *j, int depth) {
    if (depth > JJ_MAX_DEPTH)
        llm__jj_fail(S, LLM_ERR_UNSUPPORTED, "template variables nest deeper than %d", JJ_MAX_DEPTH);
    switch (json_typeof(j)) {
    case JSON_NULL: return llm__jv_none();
    case JSON_TRUE: return llm__jv_bool(true);
    case JSON_FALSE: return llm__jv_bool(false);
    case JSON_INTEGER: return llm__jv_int((int64_t)json_integer_value(j));
    case JSON_REAL: return llm__jv_float(json_real_value(j));
    case JSON_STRING: {
        size_t n = json_string_length(j);
        return llm__jv_str(llm__jj_strndup(S, json_string_value(j), n), n);
    }
    case JSON_ARRAY: {
        jv l = llm__jv_list_new(S, json_array_size(j));
        for (size_t i = 0; i < json_array_size(j); i++)
            l.u.list->items[i] = from_json(S, json_array_get(j, i), depth + 1);
        return l;
    }
    case JSON_OBJECT: {
        jv d = llm__jv_dict_new(S);
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)j, key, val) {
            llm__jj_dict_set(S, d.u.dict, llm__jv_cstr(llm__jj_strndup(S, key, strlen(key))),
                             from_json(S, val, depth + 1));
        }
        return d;
    }
    }
    return llm__jv_none();
}

llm_status llm__jinja_render(const char *template_str, const llm__chat_ctx *ctx, llm__sb *out) {
    jj_state *S = calloc(1, sizeof *S);
    if (!S)
        return llm__chat_fail(LLM_ERR_NO_MEMORY, "out of memory");
    S->ctx = ctx;
    S->out = out;
    if (setjmp(S->on_error)) {
        llm_status st = S->error;
        for (jj_capture *c = S->captures; c; c = c->next) /* failed inside block sets */
            llm__sb_free(&c->sb);
        llm__jj_arena_free(&S->arena);
        free(S);
        return st;
    }
    size_t n_tok;
    jj_tok *toks = llm__jj_lex(S, template_str, &n_tok);
    jj_body body = llm__jj_parse(S, toks, n_tok);
    S->depth = 0;

    push_scope(S);
    jv msgs = llm__jv_list_new(S, ctx->n);
    for (size_t i = 0; i < ctx->n; i++) {
        jv m = llm__jv_dict_new(S);
        llm__jj_dict_set(S, m.u.dict, llm__jv_cstr("role"), llm__jv_cstr(ctx->msgs[i].role));
        llm__jj_dict_set(S, m.u.dict, llm__jv_cstr("content"), llm__jv_cstr(ctx->msgs[i].content));
        msgs.u.list->items[i] = m;
    }
    /* What transformers' apply_chat_template passes for a plain conversation. */
    assign(S, "messages", msgs);
    assign(S, "bos_token", llm__jv_cstr(ctx->bos));
    assign(S, "eos_token", llm__jv_cstr(ctx->eos));
    assign(S, "add_generation_prompt", llm__jv_bool(ctx->add_gen));
    assign(S, "tools", llm__jv_none());
    assign(S, "documents", llm__jv_none());
    if (ctx->vars) {
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)ctx->vars, key, val) {
            assign(S, llm__jj_strndup(S, key, strlen(key)), from_json(S, val, 0));
        }
    }
    push_scope(S); /* the template's own top-level variables */
    S->root = S->scope;
    exec_body(S, &body);
    llm__jj_arena_free(&S->arena);
    free(S);
    return LLM_OK;
}
