/* jinja.h -- a small, sandboxed interpreter for the Jinja2 subset that chat
 * templates use (private to the chat module).
 *
 * It reproduces jinja2 as Hugging Face transformers configures it
 * (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols,
 * helpers raise_exception / strftime_now / namespace / tojson): text, {{ }},
 * {% if/elif/else %}, {% for %} (loop.*, loop.cycle, else, inline if, tuple
 * unpacking), {% set %} (also namespace attributes and block set),
 * {% break/continue %}, {% macro %} (positional, keyword and default
 * arguments, recursion), {% filter %} blocks, {% raw %}, {% generation %},
 * comments, whitespace control; expressions with Python semantics for the
 * values a conversation holds (strings, numbers, booleans, none, lists,
 * dicts; markupsafe's Markup as far as |safe, |e and `+` go); the filters,
 * tests and string/dict methods templates use. Variables come from the
 * conversation or from any JSON object (llm_chat_render_json).
 *
 * Also {% call %} blocks with caller() (and call-block parameters), macro
 * varargs/kwargs/caller as jinja2 decides them (by the names a body reads),
 * recursive loops with loop(...) and loop.depth, {% block %} (rendered in
 * place, as jinja2 does without extends; `self.NAME()`), and
 * {% include/import/from/extends %}, which parse and then raise as jinja2
 * does when it has no template loader (transformers gives it none).
 *
 * Left out, each reported as LLM_ERR_UNSUPPORTED, never guessed: printing a
 * generator (jinja2 prints its memory address), str.format specs, and
 * filters/methods no chat template of the 70 in llama.cpp's test set uses.
 * Generators (map, select, reject, selectattr, rejectattr) are modelled:
 * always true, one iteration, no len/index/JSON.
 *
 * Sandboxing: templates cannot reach anything but the values passed in; no
 * mutation of lists or dicts (as in the immutable sandbox); parse depth,
 * evaluation steps, range() sizes and output size are bounded.
 *
 * Files: jinja_lex.c (tokens), jinja_parse.c (AST: statements and blocks),
 * jinja_parse_expr.c (AST: the expression grammar; jinja_parse.h holds what
 * the two parser files share), jinja_value.c (values, arena, str/repr/json),
 * jinja_ops.c (operators on values: subscripts, slices, unary and binary
 * operators), jinja_builtins.c (tests, methods, functions), jinja_filters.c
 * (filters), jinja_eval.c (statements, expressions, calls and macros, entry
 * point).
 */
#ifndef LLM_CHAT_JINJA_H
#define LLM_CHAT_JINJA_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chat_internal.h"

/* Render template_str for ctx into out. Returns LLM_OK; LLM_ERR_BAD_FORMAT
 * (syntax error); LLM_ERR_UNSUPPORTED (a construct or limit we do not
 * handle); LLM_ERR_INVALID_ARG (the template raised: raise_exception, an
 * undefined value used, a type error); LLM_ERR_NO_MEMORY. The message is in
 * llm_chat_last_error(). */
llm_status llm__jinja_render(const char *template_str, const llm__chat_ctx *ctx, llm__sb *out);

/* ---- everything below is shared by the jinja_*.c files only ---- */

#define JJ_MAX_DEPTH 200             /* parser and evaluator nesting */
#define JJ_MAX_STEPS 20000000ull     /* evaluation steps per render */
#define JJ_MAX_OUTPUT (64u << 20)    /* bytes of rendered text */
#define JJ_MAX_RANGE 1000000         /* items of one range() */
#define JJ_MAX_ARENA (256u << 20)    /* bytes of interpreter memory per render */

/* Arena: every allocation of one render lives until the render ends. */
typedef struct jj_chunk jj_chunk;
typedef struct jj_arena {
    jj_chunk *head;
    size_t total; /* bytes of all chunks */
} jj_arena;

/* Output captured by {% set x %}...{% endset %}; chained so that an error
 * (longjmp) can free the buffers of every open capture. */
typedef struct jj_capture {
    llm__sb sb;
    struct jj_capture *next;
} jj_capture;

/* The interpreter state; errors longjmp to `on_error`. */
typedef struct jj_state {
    jj_arena arena;
    jmp_buf on_error;
    llm_status error;
    uint64_t steps;
    int depth;
    const llm__chat_ctx *ctx;
    llm__sb *out;
    struct jj_scope *scope; /* innermost */
    jj_capture *captures;   /* open block-set captures, innermost first */
    struct jj_scope *root;  /* the template's top-level scope (what {% block %} bodies see) */
    const struct jj_st **blocks; /* the template's {% block %} statements [n_blocks] */
    size_t n_blocks;
} jj_state;

_Noreturn void llm__jj_fail(jj_state *S, llm_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void *llm__jj_alloc(jj_state *S, size_t size); /* zeroed; fails via llm__jj_fail */
char *llm__jj_strndup(jj_state *S, const char *s, size_t n);
/* A scratch text buffer for work that may still fail (llm__jj_fail longjmps): it
 * is chained on S->captures, so the error path frees it. Scratch buffers nest
 * like the calls that open them; llm__jj_scratch_end closes the innermost one and
 * returns its text copied into the arena (length in *len; out of memory while
 * building it is an LLM_ERR_NO_MEMORY failure). */
llm__sb *llm__jj_scratch_begin(jj_state *S);
char *llm__jj_scratch_end(jj_state *S, size_t *len);
void llm__jj_arena_free(jj_arena *a);

/* ---- values ---- */
typedef enum {
    JV_UNDEFINED,
    JV_NONE,
    JV_BOOL,
    JV_INT,
    JV_FLOAT,
    JV_STR,
    JV_LIST,
    JV_DICT,  /* also namespace objects (mutable via set ns.x) and loop */
    JV_FUNC,  /* a global function: raise_exception, strftime_now, ... */
    JV_MACRO, /* a {% macro %} of the template */
} jv_type;

struct jj_st;
struct jj_scope;
/* A macro value: its definition and the scope it was defined in. Also the
 * caller of a {% call %} block (def = the ST_CALL_BLOCK), a recursive loop's
 * loop(...) (def = the ST_FOR, depth = the calling loop's) and self.NAME
 * (def = the ST_BLOCK). */
typedef struct jj_macro {
    const struct jj_st *def;
    struct jj_scope *scope;
    int depth;
} jj_macro;

typedef struct jv jv;
typedef struct jj_list {
    jv *items; /* [n] */
    size_t n;
    bool is_tuple; /* prints as (a, b); never equal to a list */
    /* A jinja2 generator (the result of map, select, reject, selectattr,
     * rejectattr): always true, iterates once, has no len(), index, str()
     * or JSON form (TypeError in jinja2). */
    bool is_generator;
    bool consumed; /* a generator already iterated: iterates as empty */
} jj_list;
typedef struct jj_dict {
    jv *keys; /* [n] strings, insertion order */
    jv *vals; /* [n] */
    size_t n, cap;
    bool is_namespace;
    bool is_loop; /* the loop variable of a for: has loop.cycle(...) */
} jj_dict;

struct jv {
    jv_type type;
    union {
        bool b;
        int64_t i;
        double f;
        struct {
            const char *s; /* not NUL-terminated in general */
            size_t n;
            bool safe; /* markupsafe.Markup (from |safe): `+` escapes the other operand */
        } str;
        jj_list *list;
        jj_dict *dict;
        int func;
        const jj_macro *macro;
    } u;
};

jv llm__jv_undefined(void);
jv llm__jv_none(void);
jv llm__jv_bool(bool b);
jv llm__jv_int(int64_t i);
jv llm__jv_float(double f);
jv llm__jv_str(const char *s, size_t n); /* no copy */
jv llm__jv_cstr(const char *s);          /* no copy */
jv llm__jv_list_new(jj_state *S, size_t n); /* n undefined items to fill */
jv llm__jv_dict_new(jj_state *S);
void llm__jj_dict_set(jj_state *S, jj_dict *d, jv key, jv val);
bool llm__jj_dict_get(const jj_dict *d, const char *key, size_t n, jv *out);

bool llm__jv_truthy(jv v);
bool llm__jv_equal(jv a, jv b);
const char *llm__jv_type_name(jv v);
/* Python str(v) appended to sb; repr for containers' items. */
void llm__jv_to_str(jj_state *S, jv v, llm__sb *sb);
jv llm__jv_stringify(jj_state *S, jv v); /* str(v) as a string value */
/* json.dumps options (transformers' tojson filter passes them through). */
typedef struct jj_json_opts {
    int indent;               /* < 0: None */
    const char *item_sep;     /* NULL: Python's default for the indent */
    size_t item_sep_n;
    const char *key_sep;      /* NULL: ": " */
    size_t key_sep_n;
    bool sort_keys;
    bool ensure_ascii;
} jj_json_opts;
/* json.dumps(v, **opts) appended to sb. */
void llm__jv_to_json(jj_state *S, jv v, const jj_json_opts *o, llm__sb *sb);
/* Number of code points of a valid UTF-8 string. */
size_t llm__jj_utf8_len(const char *s, size_t n);
/* Byte offset of code point index cp (clamped to n). */
size_t llm__jj_utf8_offset(const char *s, size_t n, size_t cp);

/* ---- tokens ---- */
typedef enum {
    TK_EOF,
    TK_TEXT,
    TK_VAR_BEGIN,
    TK_VAR_END,
    TK_BLOCK_BEGIN,
    TK_BLOCK_END,
    TK_NAME,
    TK_STRING, /* value already unescaped */
    TK_INT,
    TK_FLOAT,
    TK_OP,
} jj_tok_type;

typedef struct jj_tok {
    jj_tok_type type;
    const char *s; /* TEXT/NAME/STRING/OP text */
    size_t n;
    int64_t i;
    double f;
    int line;
} jj_tok;

/* Tokenize the whole template (whitespace control applied to TEXT tokens). */
jj_tok *llm__jj_lex(jj_state *S, const char *src, size_t *n_tok);

/* ---- AST ---- */
typedef enum {
    EX_LIT, EX_NAME, EX_ATTR, EX_INDEX, EX_SLICE, EX_CALL, EX_FILTER, EX_TEST,
    EX_NEG, EX_POS, EX_NOT, EX_AND, EX_OR, EX_BIN, EX_COND, EX_LIST, EX_DICT,
} jj_ex_kind;

typedef struct jj_ex jj_ex;
struct jj_ex {
    jj_ex_kind kind;
    int line;
    jv lit;           /* EX_LIT */
    const char *name; /* EX_NAME, EX_ATTR, EX_FILTER, EX_TEST names; EX_BIN operator */
    jj_ex *a, *b, *c; /* operands: object/left/then, index/right/cond, else/step */
    jj_ex **args;     /* call/filter/test positional args; list items; dict keys */
    size_t n_args;
    const char **kw_names; /* keyword args (call/filter) */
    jj_ex **kw_vals;       /* ...; dict values */
    size_t n_kw;
    bool negate;           /* EX_TEST: "is not"; EX_LIST: a tuple */
};

typedef enum {
    ST_TEXT, ST_OUTPUT, ST_IF, ST_FOR, ST_SET, ST_SET_BLOCK, ST_BREAK, ST_CONTINUE, ST_BLOCK,
    ST_MACRO,        /* target[0] = name, params, body */
    ST_FILTER_BLOCK, /* body rendered, bound to JJ_FILTER_VAR, then expr (filters on it) */
    ST_CALL_BLOCK,   /* expr = the call, params/defaults/body = the caller macro */
    ST_LOAD,         /* include/import/from/extends (load_kind) of template expr */
} jj_st_kind;

/* jj_st.flags */
enum {
    JJ_CATCH_CALLER = 1,  /* MACRO, CALL_BLOCK: the body reads `caller` */
    JJ_CATCH_KWARGS = 2,  /* ... `kwargs` */
    JJ_CATCH_VARARGS = 4, /* ... `varargs` */
    JJ_RECURSIVE = 8,     /* FOR: `recursive` */
    JJ_SCOPED = 16,       /* BLOCK: `scoped` */
    JJ_REQUIRED = 32,     /* BLOCK: `required` */
    JJ_IGNORE_MISSING = 64, /* LOAD include: `ignore missing` */
};
enum { JJ_LOAD_INCLUDE, JJ_LOAD_IMPORT, JJ_LOAD_FROM, JJ_LOAD_EXTENDS };

/* The variable a {% filter %} block's filter chain starts from (no template
 * can name it). */
#define JJ_FILTER_VAR " filter body"
/* The key of a recursive loop's `loop` that holds loop(...) (no template can
 * name it). */
#define JJ_LOOP_RECURSE " recurse"

typedef struct jj_st jj_st;
typedef struct jj_body {
    jj_st **st; /* [n] */
    size_t n;
} jj_body;

struct jj_st {
    jj_st_kind kind;
    int line;
    const char *text; /* ST_TEXT */
    size_t text_n;
    jj_ex *expr;      /* OUTPUT value, IF cond, FOR iterable, SET value */
    jj_ex *filter;    /* FOR inline if */
    const char *target[4]; /* FOR loop variables / SET name / MACRO, BLOCK name (NULL: generation) */
    size_t n_target;
    const char *attr; /* SET ns.attr */
    jj_body body;     /* IF then, FOR body, SET_BLOCK body, BLOCK body */
    jj_body orelse;   /* IF else (elif chains nest here), FOR else */
    const char **params; /* MACRO parameter names [n_params] */
    jj_ex **defaults;    /* MACRO default values [n_params], NULL where none */
    size_t n_params;
    unsigned flags;      /* JJ_CATCH_*, JJ_RECURSIVE, ... */
    int load_kind;       /* LOAD: JJ_LOAD_* */
};

jj_body llm__jj_parse(jj_state *S, const jj_tok *toks, size_t n_tok);

/* ---- builtins (jinja_builtins.c) ---- */
enum { JF_RAISE_EXCEPTION, JF_STRFTIME_NOW, JF_NAMESPACE, JF_RANGE, JF_DICT };
/* Look up a global function by name; false when there is none. */
bool llm__jj_global_func(const char *name, jv *out);
jv llm__jj_call_func(jj_state *S, int func, const jv *args, size_t n, const char **kw, const jv *kwv,
                size_t n_kw, int line);
jv llm__jj_call_method(jj_state *S, jv obj, const char *name, const jv *args, size_t n, int line);
jv llm__jj_apply_filter(jj_state *S, const char *name, jv v, const jv *args, size_t n, const char **kw,
                   const jv *kwv, size_t n_kw, int line);
bool llm__jj_apply_test(jj_state *S, const char *name, jv v, const jv *args, size_t n, int line);
/* A new list holding copies of items[0..n). */
jv llm__jj_list_from(jj_state *S, const jv *items, size_t n);
/* Items of an iterable (list items, dict keys, string characters). */
jj_list llm__jj_iterate(jj_state *S, jv v, int line);
/* Python-style strip of chars (NULL: whitespace); which: 1 left, 2 right, 3 both. */
jv llm__jj_strip(jj_state *S, jv s, const char *chars, size_t chars_n, int which);

/* ---- operators (jinja_ops.c), with Python semantics ---- */
/* obj[key]: a list or string index (negative counts from the end), a dict
 * key; undefined when out of range or missing. Fails on an undefined obj or
 * a generator. */
jv llm__jj_get_item(jj_state *S, jv obj, jv key, int line);
/* obj[a:b:c] of a list or string; a, b, c are ints, or none/undefined where
 * omitted. Fails on other types and on a zero step. */
jv llm__jj_slice(jj_state *S, jv obj, jv a, jv b, jv c, int line);
/* -v (neg) or +v of a number (a bool counts as an int). */
jv llm__jj_unary(jj_state *S, bool neg, jv v, int line);
/* a op b, op being an EX_BIN operator: "==", "!=", "<", ">", "<=", ">=",
 * "in", "not in", "~", "+", "-", "*", "/", "//", "%", "**". A type error or
 * a division by zero is LLM_ERR_INVALID_ARG; integer overflow (never a wrap),
 * a repetition beyond JJ_MAX_OUTPUT and what we do not model (str %
 * formatting, a negative or fractional exponent) LLM_ERR_UNSUPPORTED. */
jv llm__jj_binary(jj_state *S, const char *op, jv a, jv b, int line);

#endif /* LLM_CHAT_JINJA_H */
