/*
 * schema_internal.h -- JSON Schema -> GBNF, the parts shared by its files.
 *
 * The conversion runs in two passes, as llama.cpp's does, so the same schema
 * gives the same rules in the same order:
 *   schema_build.c    JSON (jansson) -> a tree of js_node, every keyword
 *                     checked: enforced, an annotation, or refused;
 *   schema_convert.c  js_node tree -> named GBNF rules (visit());
 *   schema_object.c   the text of object rules and the "none of these
 *                     keys" rule (leaf: it visits nothing);
 *   schema_regex.c    a "pattern" regex -> a GBNF rule;
 *   schema_rules.c    the rule table, the built-in rules, repetitions and
 *                     integer ranges;
 *   schema_text.c     the arena, the string builder, hash maps, JSON text;
 *   schema_api.c      the public functions of llama/json_schema.h.
 *
 * Memory: everything a conversion allocates comes from one arena in its
 * js_ctx and is released at once by ctx_free() (schema_api.c); error paths only
 * return. Errors are sticky: the first llm__js_fail() records the status
 * and the message (in the library's error slot); later calls return early.
 */
#ifndef LLM_GRAMMAR_SCHEMA_INTERNAL_H
#define LLM_GRAMMAR_SCHEMA_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "llama/error.h"
#include "llama/json_schema.h"

typedef struct js_ctx js_ctx;

/* ---- arena and strings (schema_text.c) ---------------------------------- */

typedef struct js_block {
    struct js_block *next;
    size_t used, cap; /* bytes of data[] in use / available */
    max_align_t data[];
} js_block;

/* Zeroed memory from the arena; NULL (and the context failed) when the
 * working-memory cap is reached or malloc fails. */
void *llm__js_alloc(js_ctx *c, size_t n);
char *llm__js_strndup(js_ctx *c, const char *s, size_t n);
char *llm__js_strdup(js_ctx *c, const char *s);

/* A growing string in the arena. Appends after a failure do nothing; the
 * failure is seen once, by llm__js_sb_str() returning NULL. */
typedef struct js_sb {
    js_ctx *c;
    char *p;
    size_t n, cap;
} js_sb;

void llm__js_sb_init(js_sb *b, js_ctx *c);
void llm__js_sb_putn(js_sb *b, const char *s, size_t n);
void llm__js_sb_puts(js_sb *b, const char *s);
void llm__js_sb_putc(js_sb *b, char ch);
LLM__PRINTF(2, 3) void llm__js_sb_printf(js_sb *b, const char *fmt, ...);
const char *llm__js_sb_str(js_sb *b); /* NUL-terminated; NULL after a failure */

/* An open-addressing map from NUL-terminated keys to pointers. Keys are
 * not copied: they must live as long as the map (arena strings do). */
typedef struct js_map {
    const char **keys; /* [cap] */
    void **vals;       /* [cap] */
    size_t n, cap;
} js_map;

void *llm__js_map_get(const js_map *m, const char *key); /* NULL when absent */
int llm__js_map_has(const js_map *m, const char *key);
int llm__js_map_put(js_ctx *c, js_map *m, const char *key, void *val); /* 0, or -1 failed */
void llm__js_map_del(js_map *m, const char *key);

/* Appends a JSON value as nlohmann::json::dump() writes it (compact,
 * insertion order, shortest round-trip reals), as llama.cpp prints const
 * and enum values and property names. */
void llm__js_dump_json(js_sb *b, const json_t *v);
void llm__js_dump_json_string(js_sb *b, const char *s, size_t n);

/* The JS_T_* type of a JSON value (an integral real counts as an integer). */
unsigned llm__js_json_type(const json_t *v);

/* Appends s as a GBNF string literal: quoted, with \r \n " \ escaped. */
void llm__js_put_literal(js_sb *b, const char *s, size_t n);

/* ---- schema nodes (schema_build.c) -------------------------------------- */

typedef enum js_kind {
    JS_ANY, JS_REF, JS_ANY_OF, JS_ALL_OF, JS_CONST, JS_ENUM, JS_NULL, JS_BOOLEAN,
    JS_NUMBER, JS_INTEGER, JS_STRING, JS_ARRAY, JS_TUPLE, JS_OBJECT
} js_kind;

/* JSON value types as bits (the "type" keyword's vocabulary). */
enum {
    JS_T_NULL = 1u << 0, JS_T_BOOLEAN = 1u << 1, JS_T_NUMBER = 1u << 2, JS_T_INTEGER = 1u << 3,
    JS_T_STRING = 1u << 4, JS_T_ARRAY = 1u << 5, JS_T_OBJECT = 1u << 6, JS_T_ALL = 0x7f
};

typedef enum js_format { JS_FMT_NONE, JS_FMT_UUID, JS_FMT_DATE, JS_FMT_TIME, JS_FMT_DATE_TIME } js_format;

typedef struct js_node js_node;

typedef struct js_prop {
    const char *name; /* UTF-8, may be "" */
    js_node *schema;
    int required;
} js_prop;

struct js_node {
    js_kind kind;
    const char *path;        /* JSON pointer of the schema, "#/properties/a", for messages */
    unsigned declared_types; /* JS_T_* of a "type" beside anyOf/allOf (checked once refs resolve), 0 if none */
    const json_t *value;     /* JS_CONST: the value; JS_ENUM: the array of values (owned by the document) */
    const char *ref;         /* JS_REF: "#/$defs/x" */
    js_node *target;         /* JS_REF: the node it names, set once every $ref is built */
    js_node **kids;          /* [n_kids] JS_ANY_OF / JS_ALL_OF alternatives, JS_TUPLE items */
    size_t n_kids;
    js_node *items;          /* JS_ARRAY: the item schema (a JS_ANY node when absent) */
    js_node *additional;     /* JS_OBJECT: schema of other keys; NULL when they are not allowed */
    js_prop *props;          /* [n_props] JS_OBJECT properties in schema order */
    size_t n_props;
    int64_t minimum, maximum; /* JS_INTEGER, inclusive; INT64_MIN / INT64_MAX when unbounded */
    int min_len, max_len;     /* JS_STRING; max -1 when unbounded */
    int min_items, max_items; /* JS_ARRAY; max -1 when unbounded */
    js_format format;         /* JS_STRING */
    const char *pattern;      /* JS_STRING, NULL when absent */
};

/* Builds the tree of c->doc into c->root; 0 or -1 (failed). */
int llm__js_build(js_ctx *c);

/* ---- rules (schema_rules.c) ---------------------------------------------- */

typedef struct js_rule {
    const char *name, *body;
} js_rule;

typedef struct js_rules {
    js_rule *v; /* [n] in insertion order */
    size_t n, cap;
    js_map index; /* name -> (js_rule index + 1) */
    size_t bytes; /* length of the grammar text they print */
} js_rules;

/* llama.cpp's _add_rule: the name with runs of characters outside
 * [a-zA-Z0-9-] replaced by '-'; a name taken by another body gets the first
 * free numeric suffix. Returns the name used (arena), NULL on failure. */
const char *llm__js_add_rule(js_ctx *c, const char *name, const char *body);

/* The body of the rule named `name`, NULL when there is none. */
const char *llm__js_rule_body(const js_ctx *c, const char *name);

/* Adds a built-in rule ("string", "value", "date-time-string", ...) under
 * `name` and the built-ins it uses under their own names. */
const char *llm__js_add_primitive(js_ctx *c, const char *name, const char *builtin);
int llm__js_is_reserved_name(const char *name);

size_t llm__js_rules_mark(const js_ctx *c);
int llm__js_rules_revert(js_ctx *c, size_t mark); /* drops the rules added after mark */

/* The grammar: every rule "name ::= body\n" in byte order of the names. */
const char *llm__js_rules_print(js_ctx *c, size_t *len);

/* llama.cpp's build_repetition: item repeated min..max times (max INT32_MAX
 * for no bound), items separated by `sep` when it is not "". */
void llm__js_repetition(js_sb *b, const char *item, int min, int max, const char *sep);

/* A GBNF expression of the decimal integers in [min, max]; INT64_MIN /
 * INT64_MAX stand for no bound (one of them must be a bound). */
void llm__js_int_range(js_sb *b, int64_t min, int64_t max);

/* ---- conversion ------------------------------------------------------------ */

/* schema_regex.c: the rule for a string matching `pattern`, added under
 * `name`. A pattern outside the supported subset gives the plain string
 * rule (or fails, with LLM_JSON_SCHEMA_STRICT_PATTERNS); an invalid one fails. */
const char *llm__js_visit_pattern(js_ctx *c, const char *pattern, const char *name, const char *path);

/* schema_convert.c */
const char *llm__js_visit(js_ctx *c, const js_node *n, const char *name);

/* schema_object.c: the body of an object rule whose member rules exist:
 * required members first, then optional ones, each of which may be left
 * out ("name-<member>-rest" rules chain them). */
typedef struct js_members {
    const char **req_kv;   /* [n_req] kv rules of the required properties, in schema order */
    size_t n_req;
    const char **opt_name; /* [n_opt] names of the optional properties, NULL for the additional keys (last) */
    const char **opt_kv;   /* [n_opt] their kv rules */
    size_t n_opt;
} js_members;
const char *llm__js_object_body(js_ctx *c, const char *name, const js_members *m);

/* schema_object.c: a JSON string (quotes included) that is none of names[0..n). */
const char *llm__js_not_strings(js_ctx *c, const char *const *names, size_t n);

/* ---- the context ----------------------------------------------------------- */

struct js_ctx {
    llm_status st;            /* first failure, LLM_OK while none */
    llm_json_schema_params p; /* limits and flags */
    json_t *doc;              /* the parsed schema (owned) */
    js_node *root;

    js_block *blocks; /* arena */
    size_t arena_bytes, arena_cap;

    js_map refs;        /* "$ref" string -> js_node* target (NULL while being built) */
    js_node **pending;  /* JS_REF nodes whose target is set after the build */
    size_t n_pending, cap_pending;
    size_t n_nodes;     /* built so far (bounded by p.max_nodes) */
    int depth;          /* current nesting (build and visit), bounded by p.max_depth */

    js_rules rules;
    js_map resolving; /* refs being visited (cycle guard) */
};

LLM__PRINTF(3, 4) int llm__js_fail(js_ctx *c, llm_status st, const char *fmt, ...);

/* Enter/leave one level of nesting; enter fails past p.max_depth. */
int llm__js_enter(js_ctx *c, const char *path);
void llm__js_leave(js_ctx *c);

#endif /* LLM_GRAMMAR_SCHEMA_INTERNAL_H */
