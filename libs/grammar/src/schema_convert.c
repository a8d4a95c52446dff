/*
 * schema_convert.c -- a js_node tree -> named GBNF rules.
 *
 * visit() gives each schema the rule name llama.cpp's converter gives it
 * ("root", then property names, "-item", "-tuple-N", "alternative-N",
 * "ref-" + the $ref pointer, reserved names suffixed with "-"), so that the
 * printed grammar is the one llama.cpp prints for the same schema.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"

/* Arena concatenation of pieces up to a NULL; NULL on failure. A piece
 * that failed upstream is passed as P(x), so the context's sticky error
 * (already set) makes the result NULL. */
static const char *cat(js_ctx *c, ...) {
    va_list ap;
    js_sb b;
    llm__js_sb_init(&b, c);
    va_start(ap, c);
    for (const char *s; (s = va_arg(ap, const char *)) != NULL;)
        llm__js_sb_puts(&b, s);
    va_end(ap);
    return llm__js_sb_str(&b);
}

#define P(s) ((s) ? (s) : "")

static const char *numbered(js_ctx *c, const char *prefix, size_t i) {
    char num[24];
    snprintf(num, sizeof num, "%zu", i);
    return cat(c, prefix, num, (const char *)NULL);
}

static const char *visit_primitive(js_ctx *c, const char *rule_name, const char *type) {
    return llm__js_add_primitive(c, strcmp(rule_name, "root") == 0 ? "root" : type, type);
}

static const char *value_literal(js_ctx *c, const json_t *v) {
    js_sb json, lit;
    llm__js_sb_init(&json, c);
    llm__js_dump_json(&json, v);
    const char *s = llm__js_sb_str(&json);
    if (!s)
        return NULL;
    llm__js_sb_init(&lit, c);
    llm__js_put_literal(&lit, s, json.n);
    return llm__js_sb_str(&lit);
}

/* ---- value types --------------------------------------------------------------------- */

/* The JSON value types a node's values can have: refs followed, a cycle
 * contributes nothing. */
static unsigned value_types(const js_node *n, int depth) {
    if (depth > 64) /* a $ref cycle contributes nothing */
        return 0;
    switch (n->kind) {
    case JS_ANY: return JS_T_ALL;
    case JS_NULL: return JS_T_NULL;
    case JS_BOOLEAN: return JS_T_BOOLEAN;
    case JS_NUMBER: return JS_T_NUMBER | JS_T_INTEGER;
    case JS_INTEGER: return JS_T_INTEGER;
    case JS_STRING: return JS_T_STRING;
    case JS_ARRAY:
    case JS_TUPLE: return JS_T_ARRAY;
    case JS_OBJECT: return JS_T_OBJECT;
    case JS_CONST: return llm__js_json_type(n->value);
    case JS_ENUM: {
        unsigned t = 0;
        for (size_t i = 0; i < json_array_size(n->value); i++)
            t |= llm__js_json_type(json_array_get(n->value, i));
        return t;
    }
    case JS_REF: return n->target ? value_types(n->target, depth + 1) : 0;
    case JS_ANY_OF: {
        unsigned t = 0;
        for (size_t i = 0; i < n->n_kids; i++)
            t |= value_types(n->kids[i], depth + 1);
        return t;
    }
    case JS_ALL_OF: {
        unsigned t = JS_T_ALL;
        for (size_t i = 0; i < n->n_kids; i++)
            t &= value_types(n->kids[i], depth + 1);
        return t;
    }
    }
    return 0;
}

static int check_declared(js_ctx *c, const js_node *n, const char *what) {
    if (n->declared_types && (value_types(n, 0) & ~n->declared_types))
        return llm__js_fail(c, LLM_ERR_UNSUPPORTED,
                            "JSON schema: keyword 'type' beside %s admits fewer types than its schemas at %s",
                            what, n->path);
    return 0;
}

/* ---- $ref ----------------------------------------------------------------------- */

static const char *resolve_ref(js_ctx *c, const js_node *n) {
    const char *hash = strchr(n->ref, '#');
    const char *frag = hash ? hash + 1 : n->ref;
    const char *ref_name = cat(c, "ref", frag, (const char *)NULL);
    js_sb b;
    llm__js_sb_init(&b, c);
    for (const char *s = ref_name; s && *s;) { /* runs outside [a-zA-Z0-9-] become one '-' */
        char ch = *s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-') {
            llm__js_sb_putc(&b, ch);
            s++;
            continue;
        }
        llm__js_sb_putc(&b, '-');
        while (*s && !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                       *s == '-'))
            s++;
    }
    const char *name = llm__js_sb_str(&b);
    if (!name)
        return NULL;
    if (llm__js_rule_body(c, name) || llm__js_map_has(&c->resolving, n->ref))
        return name;
    if (!n->target) {
        llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: unresolved $ref %s at %s", n->ref, n->path);
        return NULL;
    }
    if (llm__js_map_put(c, &c->resolving, n->ref, (void *)1) != 0)
        return NULL;
    name = llm__js_visit(c, n->target, name);
    llm__js_map_del(&c->resolving, n->ref);
    return name;
}

/* ---- objects ---------------------------------------------------------------------- */

typedef struct js_prop_ref {
    const char *name;
    const js_node *schema;
    int required;
} js_prop_ref;

static const char *join3(js_ctx *c, const char *a, const char *b, const char *d) {
    return a && b && d ? cat(c, a, b, d, (const char *)NULL) : NULL;
}

/* llama.cpp's _build_object_rule: each property visited and its
 * "name-prop-kv" rule added in schema order, then the additional keys'
 * rules, then the body (schema_object.c). */
static const char *object_rule(js_ctx *c, const js_prop_ref *props, size_t n_props, const char *name,
                               const js_node *additional) {
    const char *sep = *name ? "-" : "";
    js_map kv_of = {0}; /* property name -> its kv rule (the last one, as llama.cpp's map) */
    const char **names = llm__js_alloc(c, (n_props + 1) * sizeof *names);
    js_members m = {llm__js_alloc(c, (n_props + 1) * sizeof(char *)), 0,
                    llm__js_alloc(c, (n_props + 2) * sizeof(char *)),
                    llm__js_alloc(c, (n_props + 2) * sizeof(char *)), 0};
    if (!names || !m.req_kv || !m.opt_name || !m.opt_kv)
        return NULL;
    for (size_t i = 0; i < n_props; i++) {
        const char *pn = props[i].name;
        const char *prop_rule = llm__js_visit(c, props[i].schema, P(join3(c, name, sep, pn)));
        js_sb key, body;
        llm__js_sb_init(&key, c);
        llm__js_dump_json_string(&key, pn, strlen(pn));
        const char *key_json = llm__js_sb_str(&key);
        llm__js_sb_init(&body, c);
        llm__js_put_literal(&body, P(key_json), key_json ? key.n : 0);
        llm__js_sb_puts(&body, " space \":\" space ");
        llm__js_sb_puts(&body, P(prop_rule));
        const char *kv = llm__js_add_rule(c, join3(c, name, sep, join3(c, pn, "-kv", "")), llm__js_sb_str(&body));
        if (!kv || llm__js_map_put(c, &kv_of, pn, (void *)kv) != 0)
            return NULL;
        names[i] = pn;
        if (props[i].required)
            m.req_kv[m.n_req++] = pn;
        else
            m.opt_name[m.n_opt++] = pn;
    }
    for (size_t i = 0; i < m.n_req; i++)
        m.req_kv[i] = llm__js_map_get(&kv_of, m.req_kv[i]);
    for (size_t i = 0; i < m.n_opt; i++)
        m.opt_kv[i] = llm__js_map_get(&kv_of, m.opt_name[i]);
    if (additional) {
        const char *sub = join3(c, name, sep, "additional");
        const char *value_rule = additional->kind != JS_ANY
                                     ? llm__js_visit(c, additional, P(join3(c, sub, "-value", "")))
                                     : llm__js_add_primitive(c, "value", "value");
        const char *key_rule = n_props == 0 ? llm__js_add_primitive(c, "string", "string")
                                            : llm__js_add_rule(c, P(join3(c, sub, "-k", "")),
                                                               llm__js_not_strings(c, names, n_props));
        const char *kv = llm__js_add_rule(c, P(join3(c, sub, "-kv", "")), join3(c, key_rule, " \":\" space ", value_rule));
        if (!kv)
            return NULL;
        m.opt_name[m.n_opt] = NULL;
        m.opt_kv[m.n_opt++] = kv;
    }
    return c->st == LLM_OK ? llm__js_object_body(c, name, &m) : NULL;
}

/* ---- allOf ------------------------------------------------------------------------ */

typedef struct all_of_acc {
    js_prop_ref *props; /* grows in the arena */
    size_t n_props, cap_props;
    js_map required; /* property names made required */
    js_map enum_count; /* literal -> how many components list it */
    size_t n_literals;
    const char **literals; /* in first-seen order */
    size_t cap_literals;
} all_of_acc;

static int acc_prop(js_ctx *c, all_of_acc *a, const js_prop *p, int is_required) {
    if (a->n_props == a->cap_props) {
        size_t cap = a->cap_props ? 2 * a->cap_props : 16;
        js_prop_ref *v = llm__js_alloc(c, cap * sizeof *v);
        if (!v)
            return -1;
        if (a->n_props)
            memcpy(v, a->props, a->n_props * sizeof *v);
        a->props = v;
        a->cap_props = cap;
    }
    a->props[a->n_props].name = p->name;
    a->props[a->n_props].schema = p->schema;
    a->n_props++;
    return is_required ? llm__js_map_put(c, &a->required, p->name, (void *)1) : 0;
}

static int acc_literal(js_ctx *c, all_of_acc *a, const json_t *v) {
    const char *lit = value_literal(c, v);
    if (!lit)
        return -1;
    size_t count = (size_t)(uintptr_t)llm__js_map_get(&a->enum_count, lit);
    if (count == 0) {
        if (a->n_literals == a->cap_literals) {
            size_t cap = a->cap_literals ? 2 * a->cap_literals : 16;
            const char **l = llm__js_alloc(c, cap * sizeof *l);
            if (!l)
                return -1;
            if (a->n_literals)
                memcpy(l, a->literals, a->n_literals * sizeof *l);
            a->literals = l;
            a->cap_literals = cap;
        }
        a->literals[a->n_literals++] = lit;
    }
    return llm__js_map_put(c, &a->enum_count, lit, (void *)(uintptr_t)(count + 1));
}

/* A component of allOf: objects give properties (required unless they come
 * from an anyOf alternative), enums give values; {} gives nothing. What
 * llama.cpp would drop silently (a string schema, a nested allOf, ...) is
 * refused. */
static int add_component(js_ctx *c, all_of_acc *a, const js_node *n, int is_required) {
    if (llm__js_enter(c, n->path) != 0)
        return -1;
    int rc = 0;
    switch (n->kind) {
    case JS_REF:
        rc = n->target ? add_component(c, a, n->target, is_required) : 0;
        break;
    case JS_OBJECT:
        for (size_t i = 0; rc == 0 && i < n->n_props; i++)
            rc = acc_prop(c, a, &n->props[i], is_required);
        break;
    case JS_ENUM:
        for (size_t i = 0; rc == 0 && i < json_array_size(n->value); i++)
            rc = acc_literal(c, a, json_array_get(n->value, i));
        break;
    case JS_ANY: break;
    default:
        rc = llm__js_fail(c, LLM_ERR_UNSUPPORTED,
                          "JSON schema: allOf supports objects and enums only; not the schema at %s", n->path);
    }
    llm__js_leave(c);
    return rc;
}

static int cmp_str(const void *x, const void *y) {
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static const char *visit_all_of(js_ctx *c, const js_node *n, const char *name, const char *rule_name) {
    all_of_acc a;
    memset(&a, 0, sizeof a);
    if (check_declared(c, n, "allOf") != 0)
        return NULL;
    for (size_t i = 0; i < n->n_kids; i++) {
        const js_node *k = n->kids[i];
        if (k->kind == JS_ANY_OF) {
            for (size_t j = 0; j < k->n_kids; j++)
                if (add_component(c, &a, k->kids[j], 0) != 0)
                    return NULL;
        } else if (add_component(c, &a, k, 1) != 0) {
            return NULL;
        }
    }
    if (a.n_literals) {
        /* the values every component lists, in byte order of their literals */
        const char **common = llm__js_alloc(c, a.n_literals * sizeof *common);
        size_t n_common = 0;
        if (!common)
            return NULL;
        for (size_t i = 0; i < a.n_literals; i++)
            if ((size_t)(uintptr_t)llm__js_map_get(&a.enum_count, a.literals[i]) == n->n_kids)
                common[n_common++] = a.literals[i];
        if (!n_common) {
            llm__js_fail(c, LLM_ERR_UNSUPPORTED, "JSON schema: the enums of allOf have no value in common at %s",
                         n->path);
            return NULL;
        }
        qsort(common, n_common, sizeof *common, cmp_str);
        js_sb b;
        llm__js_sb_init(&b, c);
        llm__js_sb_putc(&b, '(');
        for (size_t i = 0; i < n_common; i++) {
            if (i)
                llm__js_sb_puts(&b, " | ");
            llm__js_sb_puts(&b, common[i]);
        }
        llm__js_sb_putc(&b, ')');
        return llm__js_add_rule(c, rule_name, llm__js_sb_str(&b));
    }
    for (size_t i = 0; i < a.n_props; i++)
        a.props[i].required = llm__js_map_has(&a.required, a.props[i].name);
    return llm__js_add_rule(c, rule_name, object_rule(c, a.props, a.n_props, name, NULL));
}

/* ---- visit ---------------------------------------------------------------------------- */

static const char *visit_string(js_ctx *c, const js_node *n, const char *rule_name) {
    if (n->pattern)
        return llm__js_visit_pattern(c, n->pattern, rule_name, n->path);
    if (n->format == JS_FMT_UUID)
        return visit_primitive(c, rule_name, "uuid");
    if (n->format != JS_FMT_NONE) {
        const char *prim = n->format == JS_FMT_DATE ? "date-string"
                           : n->format == JS_FMT_TIME ? "time-string"
                                                      : "date-time-string";
        return llm__js_add_rule(c, rule_name, llm__js_add_primitive(c, prim, prim));
    }
    if (n->min_len > 0 || n->max_len >= 0) {
        const char *ch = llm__js_add_primitive(c, "char", "char");
        js_sb b;
        llm__js_sb_init(&b, c);
        llm__js_sb_puts(&b, "\"\\\"\" ");
        llm__js_repetition(&b, P(ch), n->min_len, n->max_len < 0 ? INT32_MAX : n->max_len, "");
        llm__js_sb_puts(&b, " \"\\\"\"");
        return llm__js_add_rule(c, rule_name, ch ? llm__js_sb_str(&b) : NULL);
    }
    return visit_primitive(c, rule_name, "string");
}

static const char *visit_kind(js_ctx *c, const js_node *n, const char *name, const char *rule_name,
                              const char *sub_name) {
    js_sb b;
    llm__js_sb_init(&b, c);
    switch (n->kind) {
    case JS_REF: return llm__js_add_rule(c, rule_name, resolve_ref(c, n));
    case JS_ANY_OF:
        if (check_declared(c, n, "anyOf/oneOf") != 0)
            return NULL;
        for (size_t i = 0; i < n->n_kids; i++) {
            const char *alt = numbered(c, *name ? cat(c, name, "-", (const char *)NULL) : "alternative-", i);
            if (i)
                llm__js_sb_puts(&b, " | ");
            llm__js_sb_puts(&b, P(alt ? llm__js_visit(c, n->kids[i], alt) : NULL));
        }
        return llm__js_add_rule(c, rule_name, llm__js_sb_str(&b));
    case JS_ALL_OF: return visit_all_of(c, n, name, rule_name);
    case JS_CONST: return llm__js_add_rule(c, rule_name, value_literal(c, n->value));
    case JS_ENUM:
        llm__js_sb_putc(&b, '(');
        for (size_t i = 0; i < json_array_size(n->value); i++) {
            if (i)
                llm__js_sb_puts(&b, " | ");
            llm__js_sb_puts(&b, P(value_literal(c, json_array_get(n->value, i))));
        }
        llm__js_sb_putc(&b, ')');
        return llm__js_add_rule(c, rule_name, llm__js_sb_str(&b));
    case JS_OBJECT: {
        if (n->n_props == 0 && n->additional && n->additional->kind == JS_ANY)
            return llm__js_add_rule(c, rule_name, llm__js_add_primitive(c, "object", "object"));
        js_prop_ref *props = llm__js_alloc(c, (n->n_props + 1) * sizeof *props);
        if (!props)
            return NULL;
        for (size_t i = 0; i < n->n_props; i++) {
            props[i].name = n->props[i].name;
            props[i].schema = n->props[i].schema;
            props[i].required = n->props[i].required;
        }
        return llm__js_add_rule(c, rule_name, object_rule(c, props, n->n_props, name, n->additional));
    }
    case JS_TUPLE:
        llm__js_sb_puts(&b, "\"[\" space ");
        for (size_t i = 0; i < n->n_kids; i++) {
            const char *item = numbered(c, cat(c, sub_name, "tuple-", (const char *)NULL), i);
            if (i)
                llm__js_sb_puts(&b, " \",\" space ");
            llm__js_sb_puts(&b, P(item ? llm__js_visit(c, n->kids[i], item) : NULL));
        }
        llm__js_sb_puts(&b, " space \"]\"");
        return llm__js_add_rule(c, rule_name, llm__js_sb_str(&b));
    case JS_ARRAY: {
        if (n->items->kind == JS_ANY && n->min_items == 0 && n->max_items < 0)
            return visit_primitive(c, rule_name, "array");
        const char *item_name = cat(c, sub_name, "item", (const char *)NULL);
        const char *item = item_name ? llm__js_visit(c, n->items, item_name) : NULL;
        llm__js_sb_puts(&b, "\"[\" space ");
        llm__js_repetition(&b, P(item), n->min_items, n->max_items < 0 ? INT32_MAX : n->max_items, "\",\" space");
        llm__js_sb_puts(&b, " space \"]\"");
        return llm__js_add_rule(c, rule_name, item ? llm__js_sb_str(&b) : NULL);
    }
    case JS_STRING: return visit_string(c, n, rule_name);
    case JS_INTEGER:
        if (n->minimum == INT64_MIN && n->maximum == INT64_MAX)
            return visit_primitive(c, rule_name, "integer");
        llm__js_sb_putc(&b, '(');
        llm__js_int_range(&b, n->minimum, n->maximum);
        llm__js_sb_putc(&b, ')');
        return llm__js_add_rule(c, rule_name, llm__js_sb_str(&b));
    case JS_NUMBER: return visit_primitive(c, rule_name, "number");
    case JS_BOOLEAN: return visit_primitive(c, rule_name, "boolean");
    case JS_NULL: return visit_primitive(c, rule_name, "null");
    case JS_ANY: return llm__js_add_rule(c, rule_name, llm__js_add_primitive(c, "value", "value"));
    }
    llm__js_fail(c, LLM_ERR_INTERNAL, "JSON schema: unknown node kind at %s", n->path);
    return NULL;
}

const char *llm__js_visit(js_ctx *c, const js_node *n, const char *name) {
    if (llm__js_enter(c, n->path) != 0)
        return NULL;
    const char *rule_name = llm__js_is_reserved_name(name) ? cat(c, name, "-", (const char *)NULL)
                            : *name                        ? name
                                                           : "root";
    const char *sub_name = *name ? cat(c, name, "-", (const char *)NULL) : "";
    const char *r = rule_name && sub_name ? visit_kind(c, n, name, rule_name, sub_name) : NULL;
    llm__js_leave(c);
    return c->st == LLM_OK ? r : NULL;
}
