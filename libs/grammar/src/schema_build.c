/*
 * schema_build.c -- a JSON Schema document (jansson) -> a tree of js_node.
 *
 * Which keyword decides a schema's kind follows llama.cpp's
 * common_chat_schema_from_json() in order: $ref, then oneOf/anyOf, then a
 * "type" array (one alternative per type, each seeing the other keywords),
 * const, enum, then by type (untyped: properties, allOf, items, string
 * keywords, else any value).
 *
 * Where llama.cpp silently drops a keyword, we do not: every keyword of a
 * schema object must be
 *   - an annotation (ANNOTATIONS below, and "format" values we do not know),
 *   - enforced by the kind chosen, or
 *   - vacuous for it: a keyword of another JSON type ("minLength" beside
 *     "type": "integer" constrains nothing),
 * otherwise the schema is refused with LLM_ERR_UNSUPPORTED naming the
 * keyword and the JSON pointer of the schema.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"

typedef enum kw_cat { CAT_ANNOT, CAT_GENERIC, CAT_STRING, CAT_NUMERIC, CAT_ARRAY, CAT_OBJECT } kw_cat;

static const struct {
    const char *name;
    kw_cat cat;
} KEYWORDS[] = {
    /* annotations: read by nothing, listed in llama/json_schema.h */
    {"$schema", CAT_ANNOT}, {"$id", CAT_ANNOT}, {"$comment", CAT_ANNOT}, {"title", CAT_ANNOT},
    {"description", CAT_ANNOT}, {"default", CAT_ANNOT}, {"examples", CAT_ANNOT},
    {"deprecated", CAT_ANNOT}, {"readOnly", CAT_ANNOT}, {"writeOnly", CAT_ANNOT},
    {"$defs", CAT_ANNOT}, {"definitions", CAT_ANNOT}, /* read only through $ref */
    {"type", CAT_GENERIC}, {"$ref", CAT_GENERIC}, {"anyOf", CAT_GENERIC}, {"oneOf", CAT_GENERIC},
    {"allOf", CAT_GENERIC}, {"const", CAT_GENERIC}, {"enum", CAT_GENERIC},
    {"pattern", CAT_STRING}, {"format", CAT_STRING}, {"minLength", CAT_STRING}, {"maxLength", CAT_STRING},
    {"minimum", CAT_NUMERIC}, {"maximum", CAT_NUMERIC}, {"exclusiveMinimum", CAT_NUMERIC},
    {"exclusiveMaximum", CAT_NUMERIC},
    {"items", CAT_ARRAY}, {"prefixItems", CAT_ARRAY}, {"minItems", CAT_ARRAY}, {"maxItems", CAT_ARRAY},
    {"properties", CAT_OBJECT}, {"required", CAT_OBJECT}, {"additionalProperties", CAT_OBJECT},
};
enum { N_KEYWORDS = sizeof KEYWORDS / sizeof KEYWORDS[0] };

static int kw_index(const char *name) {
    for (int i = 0; i < N_KEYWORDS; i++)
        if (strcmp(KEYWORDS[i].name, name) == 0)
            return i;
    return -1;
}

#define KW(name) (1ull << kw_index(name))

/* JSON value types each keyword category constrains. */
static unsigned cat_types(kw_cat cat) {
    switch (cat) {
    case CAT_STRING: return JS_T_STRING;
    case CAT_NUMERIC: return JS_T_NUMBER | JS_T_INTEGER;
    case CAT_ARRAY: return JS_T_ARRAY;
    case CAT_OBJECT: return JS_T_OBJECT;
    default: return 0;
    }
}

static const char *path_join(js_ctx *c, const char *path, const char *a, const char *b) {
    js_sb s;
    llm__js_sb_init(&s, c);
    llm__js_sb_puts(&s, path);
    llm__js_sb_putc(&s, '/');
    llm__js_sb_puts(&s, a);
    if (b) {
        llm__js_sb_putc(&s, '/');
        llm__js_sb_puts(&s, b);
    }
    return llm__js_sb_str(&s);
}

/* path + "/" + i, or path + "/" + key + "/" + i with a key */
static const char *path_index(js_ctx *c, const char *path, const char *key, size_t i) {
    char num[24];
    snprintf(num, sizeof num, "%zu", i);
    return key ? path_join(c, path, key, num) : path_join(c, path, num, NULL);
}

static js_node *new_node(js_ctx *c, js_kind kind, const char *path) {
    if (c->st != LLM_OK)
        return NULL;
    if (++c->n_nodes > c->p.max_nodes) {
        llm__js_fail(c, LLM_ERR_EXHAUSTED, "JSON schema: more than %zu schema nodes (at %s)",
                     c->p.max_nodes, path);
        return NULL;
    }
    js_node *n = llm__js_alloc(c, sizeof *n);
    if (n) {
        n->kind = kind;
        n->path = path;
        n->minimum = INT64_MIN;
        n->maximum = INT64_MAX;
        n->max_len = n->max_items = -1;
    }
    return n;
}

static unsigned type_bit(const char *t) {
    static const char *const names[] = {"null", "boolean", "number", "integer", "string", "array", "object"};
    for (unsigned i = 0; i < 7; i++)
        if (strcmp(t, names[i]) == 0)
            return 1u << i;
    return 0;
}

/* The JS_T_* set a "type" value names ("number" includes integers); 0 and
 * a failure when it is malformed. */
static unsigned parse_types(js_ctx *c, const json_t *type, const char *path) {
    unsigned set = 0;
    size_t n = json_is_array(type) ? json_array_size(type) : 1;
    if (json_is_array(type) && n == 0) {
        llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: type must not be empty at %s", path);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *t = json_is_array(type) ? json_array_get(type, i) : type;
        unsigned bit = json_is_string(t) ? type_bit(json_string_value(t)) : 0;
        if (!json_is_string(t)) {
            llm__js_fail(c, LLM_ERR_BAD_FORMAT,
                         "JSON schema: type must be a string or an array of strings at %s", path);
            return 0;
        }
        if (!bit) {
            llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: unrecognized type '%s' at %s",
                         json_string_value(t), path);
            return 0;
        }
        set |= bit == JS_T_NUMBER ? JS_T_NUMBER | JS_T_INTEGER : bit;
    }
    return set;
}


static js_format known_format(const json_t *f) {
    const char *s = json_is_string(f) ? json_string_value(f) : "";
    if (strcmp(s, "date") == 0)
        return JS_FMT_DATE;
    if (strcmp(s, "time") == 0)
        return JS_FMT_TIME;
    if (strcmp(s, "date-time") == 0)
        return JS_FMT_DATE_TIME;
    if (strcmp(s, "uuid") == 0 || (strlen(s) == 5 && strncmp(s, "uuid", 4) == 0 && s[4] >= '1' && s[4] <= '5'))
        return JS_FMT_UUID;
    return JS_FMT_NONE;
}

/* Fails naming the first keyword of `schema` (in document order) that is in
 * `present` but neither in `allowed` nor vacuous for `value_types`. */
static int check_keywords(js_ctx *c, const json_t *schema, uint64_t present, uint64_t allowed,
                          unsigned value_types, const char *what, const char *path) {
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)schema, key, val) {
        int i = kw_index(key);
        if (i < 0 || !(present >> i & 1) || (allowed >> i & 1))
            continue;
        if (KEYWORDS[i].cat != CAT_GENERIC && !(cat_types(KEYWORDS[i].cat) & value_types))
            continue; /* constrains values of a type this schema cannot produce */
        return llm__js_fail(c, LLM_ERR_UNSUPPORTED, "JSON schema: keyword '%s' beside %s is not supported at %s",
                            key, what, path);
    }
    return 0;
}

static js_node *build_node(js_ctx *c, const json_t *schema, const char *path, const json_t *type_override);

/* ---- $ref ----------------------------------------------------------------------- */

/* Follows a "#/a/b/0" pointer from the document root (~1 is '/', ~0 is '~'). */
static const json_t *resolve_ref(js_ctx *c, const char *ref, const char *path) {
    const json_t *t = c->doc;
    const char *s = ref + 2;
    for (;;) {
        size_t n = strcspn(s, "/");
        js_sb tok;
        llm__js_sb_init(&tok, c);
        for (size_t i = 0; i < n; i++) {
            if (s[i] == '~' && i + 1 < n && (s[i + 1] == '0' || s[i + 1] == '1')) {
                llm__js_sb_putc(&tok, s[i + 1] == '0' ? '~' : '/');
                i++;
            } else {
                llm__js_sb_putc(&tok, s[i]);
            }
        }
        const char *sel = llm__js_sb_str(&tok);
        if (!sel)
            return NULL;
        const json_t *next = NULL;
        if (json_is_object(t)) {
            next = json_object_get(t, sel);
        } else if (json_is_array(t) && *sel && strspn(sel, "0123456789") == strlen(sel) && strlen(sel) < 10) {
            next = json_array_get(t, (size_t)strtoul(sel, NULL, 10));
        }
        if (!next) {
            llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: cannot resolve $ref %s (%s not found) at %s",
                         ref, sel, path);
            return NULL;
        }
        t = next;
        if (!s[n])
            return t;
        s += n + 1;
    }
}

static js_node *build_ref(js_ctx *c, const json_t *v, const char *path) {
    if (!json_is_string(v)) {
        llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: $ref must be a string at %s", path);
        return NULL;
    }
    const char *ref = json_string_value(v);
    if (strncmp(ref, "#/", 2) != 0) {
        llm__js_fail(c, LLM_ERR_UNSUPPORTED,
                     "JSON schema: unsupported $ref '%s' at %s: only references into the same document "
                     "(\"#/...\") are supported",
                     ref, path);
        return NULL;
    }
    js_node *n = new_node(c, JS_REF, path);
    if (!n || !(n->ref = llm__js_strdup(c, ref)))
        return NULL;
    if (!llm__js_map_has(&c->refs, n->ref)) {
        /* reserve the key first, so that a cycle back to this $ref stops here */
        if (llm__js_map_put(c, &c->refs, n->ref, NULL) != 0)
            return NULL;
        const json_t *target = resolve_ref(c, ref, path);
        js_node *t = target ? build_node(c, target, n->ref, NULL) : NULL;
        if (!t || llm__js_map_put(c, &c->refs, n->ref, t) != 0)
            return NULL;
    }
    if (c->n_pending == c->cap_pending) {
        size_t cap = c->cap_pending ? 2 * c->cap_pending : 16;
        js_node **v2 = llm__js_alloc(c, cap * sizeof *v2);
        if (!v2)
            return NULL;
        if (c->n_pending)
            memcpy(v2, c->pending, c->n_pending * sizeof *v2);
        c->pending = v2;
        c->cap_pending = cap;
    }
    c->pending[c->n_pending++] = n;
    return n;
}

/* ---- combinators ---------------------------------------------------------------- */

static js_node *build_alternatives(js_ctx *c, js_kind kind, const json_t *alts, const char *path) {
    if (!json_is_array(alts)) {
        llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: must be an array of schemas at %s", path);
        return NULL;
    }
    if (json_array_size(alts) == 0) {
        llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: must not be empty at %s", path);
        return NULL;
    }
    js_node *n = new_node(c, kind, path);
    if (!n || !(n->kids = llm__js_alloc(c, json_array_size(alts) * sizeof *n->kids)))
        return NULL;
    for (size_t i = 0; i < json_array_size(alts); i++) {
        const char *p = path_index(c, path, NULL, i);
        if (!p || !(n->kids[i] = build_node(c, json_array_get(alts, i), p, NULL)))
            return NULL;
        n->n_kids++;
    }
    return n;
}

/* ---- type-specific keywords -------------------------------------------------------- */

/* minItems and friends: a non-negative integer, at most INT32_MAX - 1. */
static int get_count(js_ctx *c, const json_t *schema, const char *key, int def, const char *path) {
    const json_t *v = json_object_get(schema, key);
    if (!v)
        return def;
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: %s must be a non-negative integer at %s", key, path);
        return -2;
    }
    if (json_integer_value(v) >= INT32_MAX) {
        llm__js_fail(c, LLM_ERR_UNSUPPORTED, "JSON schema: %s too large at %s", key, path);
        return -2;
    }
    return (int)json_integer_value(v);
}

static js_node *build_object(js_ctx *c, const json_t *schema, const char *path) {
    js_node *n = new_node(c, JS_OBJECT, path);
    if (!n)
        return NULL;
    const json_t *required = json_object_get(schema, "required");
    const json_t *props = json_object_get(schema, "properties");
    if (required) {
        int ok = json_is_array(required);
        for (size_t i = 0; ok && i < json_array_size(required); i++)
            ok = json_is_string(json_array_get(required, i));
        if (!ok) {
            llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: required must be an array of strings at %s", path);
            return NULL;
        }
        for (size_t i = 0; i < json_array_size(required); i++) {
            const char *name = json_string_value(json_array_get(required, i));
            if (!props || !json_object_get(props, name)) {
                llm__js_fail(c, LLM_ERR_UNSUPPORTED,
                             "JSON schema: required property '%s' is not in properties at %s", name, path);
                return NULL;
            }
        }
    }
    if (props) {
        if (!json_is_object(props)) {
            llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: properties must be an object at %s", path);
            return NULL;
        }
        n->props = llm__js_alloc(c, (json_object_size(props) + 1) * sizeof *n->props);
        if (!n->props)
            return NULL;
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)props, key, val) {
            js_prop *p = &n->props[n->n_props];
            const char *pp = path_join(c, path, "properties", key);
            if (!pp || !(p->schema = build_node(c, val, pp, NULL)))
                return NULL;
            p->name = key; /* owned by the document, which outlives the conversion */
            for (size_t i = 0; required && i < json_array_size(required); i++)
                if (strcmp(json_string_value(json_array_get(required, i)), key) == 0)
                    p->required = 1;
            n->n_props++;
        }
    }
    const json_t *add = json_object_get(schema, "additionalProperties");
    if (add) {
        if (json_is_true(add)) {
            n->additional = new_node(c, JS_ANY, path);
        } else if (json_is_object(add)) {
            const char *pp = path_join(c, path, "additionalProperties", NULL);
            n->additional = pp ? build_node(c, add, pp, NULL) : NULL;
        } else if (!json_is_false(add)) {
            llm__js_fail(c, LLM_ERR_BAD_FORMAT,
                         "JSON schema: additionalProperties must be a boolean or a schema at %s", path);
            return NULL;
        }
        if (!json_is_false(add) && !n->additional)
            return NULL;
    } else if (!props) {
        /* {"type": "object"} on its own accepts any object */
        if (!(n->additional = new_node(c, JS_ANY, path)))
            return NULL;
    }
    return n;
}

static js_node *build_array(js_ctx *c, const json_t *schema, const char *path) {
    const json_t *items = json_object_get(schema, "items");
    const json_t *prefix = json_object_get(schema, "prefixItems");
    if (items && json_is_array(prefix)) { /* 2020-12: prefixItems first, items for the rest */
        llm__js_fail(c, LLM_ERR_UNSUPPORTED, "JSON schema: keyword 'prefixItems' beside items is not supported at %s",
                     path);
        return NULL;
    }
    /* "items" wins when both are present (prefixItems then is not an array,
     * which no draft gives a meaning); a schema in prefixItems is the item
     * schema, as in llama.cpp */
    const char *key = items ? "items" : "prefixItems";
    const json_t *v = items ? items : prefix;
    int min = get_count(c, schema, "minItems", 0, path), max = get_count(c, schema, "maxItems", -1, path);
    if (min < 0 || max < -1)
        return NULL;
    if (max >= 0 && min > max) {
        llm__js_fail(c, LLM_ERR_UNSUPPORTED, "JSON schema: minItems greater than maxItems at %s", path);
        return NULL;
    }
    if (json_is_array(v)) { /* a tuple: exactly these items */
        size_t k = json_array_size(v);
        if ((size_t)min > k || (max >= 0 && (size_t)max < k)) {
            llm__js_fail(c, LLM_ERR_UNSUPPORTED,
                         "JSON schema: minItems/maxItems contradict the %zu items of the tuple at %s", k, path);
            return NULL;
        }
        js_node *n = new_node(c, JS_TUPLE, path);
        if (!n || !(n->kids = llm__js_alloc(c, (k + 1) * sizeof *n->kids)))
            return NULL;
        for (size_t i = 0; i < k; i++) {
            const char *p = path_index(c, path, key, i);
            if (!p || !(n->kids[i] = build_node(c, json_array_get(v, i), p, NULL)))
                return NULL;
            n->n_kids++;
        }
        return n;
    }
    js_node *n = new_node(c, JS_ARRAY, path);
    if (!n)
        return NULL;
    n->min_items = min;
    n->max_items = max;
    if (v) {
        const char *p = path_join(c, path, key, NULL);
        n->items = p ? build_node(c, v, p, NULL) : NULL;
    } else {
        n->items = new_node(c, JS_ANY, path);
    }
    return n->items ? n : NULL;
}

static js_node *build_string(js_ctx *c, const json_t *schema, const char *path) {
    js_node *n = new_node(c, JS_STRING, path);
    if (!n)
        return NULL;
    const json_t *pattern = json_object_get(schema, "pattern");
    if (pattern && !json_is_string(pattern)) {
        llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: pattern must be a string at %s", path);
        return NULL;
    }
    n->pattern = pattern ? json_string_value(pattern) : NULL;
    n->format = known_format(json_object_get(schema, "format"));
    n->min_len = get_count(c, schema, "minLength", 0, path);
    n->max_len = get_count(c, schema, "maxLength", -1, path);
    if (n->min_len < 0 || n->max_len < -1)
        return NULL;
    int has_len = json_object_get(schema, "minLength") || json_object_get(schema, "maxLength");
    /* llama.cpp uses the first of pattern, format, lengths and drops the rest */
    if ((n->pattern && (n->format != JS_FMT_NONE || has_len)) || (n->format != JS_FMT_NONE && has_len)) {
        llm__js_fail(c, LLM_ERR_UNSUPPORTED,
                     "JSON schema: keyword '%s' beside %s is not supported at %s",
                     has_len ? (json_object_get(schema, "minLength") ? "minLength" : "maxLength") : "format",
                     n->pattern ? "pattern" : "format", path);
        return NULL;
    }
    if (n->max_len >= 0 && n->min_len > n->max_len) {
        llm__js_fail(c, LLM_ERR_UNSUPPORTED, "JSON schema: minLength greater than maxLength at %s", path);
        return NULL;
    }
    return n;
}

/* A bound as an integer: a fractional one rounded inwards (towards the
 * integers it still admits); within +-10^18 so that negation cannot overflow. */
static int get_bound(js_ctx *c, const json_t *schema, const char *key, int round_up, const char *path,
                     int64_t *out) {
    const json_t *v = json_object_get(schema, key);
    double d;
    if (json_is_integer(v)) {
        d = (double)json_integer_value(v);
        *out = json_integer_value(v);
    } else if (json_is_real(v)) {
        d = round_up ? ceil(json_real_value(v)) : floor(json_real_value(v));
        *out = fabs(d) <= 1e18 ? (int64_t)d : 0;
    } else if (json_is_boolean(v)) {
        return llm__js_fail(c, LLM_ERR_UNSUPPORTED,
                            "JSON schema: a boolean %s (draft 4) is not supported at %s", key, path);
    } else {
        return llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: %s must be a number at %s", key, path);
    }
    if (fabs(d) > 1e18 || *out > 1000000000000000000ll || *out < -1000000000000000000ll)
        return llm__js_fail(c, LLM_ERR_UNSUPPORTED, "JSON schema: %s beyond +-10^18 at %s", key, path);
    return 0;
}

static js_node *build_integer(js_ctx *c, const json_t *schema, const char *path) {
    js_node *n = new_node(c, JS_INTEGER, path);
    if (!n)
        return NULL;
    int64_t v;
    /* both of a pair may be given: the tighter one holds */
    if (json_object_get(schema, "minimum")) {
        if (get_bound(c, schema, "minimum", 1, path, &v) != 0)
            return NULL;
        n->minimum = v;
    }
    if (json_object_get(schema, "exclusiveMinimum")) {
        if (get_bound(c, schema, "exclusiveMinimum", 0, path, &v) != 0)
            return NULL;
        if (n->minimum == INT64_MIN || v + 1 > n->minimum)
            n->minimum = v + 1;
    }
    if (json_object_get(schema, "maximum")) {
        if (get_bound(c, schema, "maximum", 0, path, &v) != 0)
            return NULL;
        n->maximum = v;
    }
    if (json_object_get(schema, "exclusiveMaximum")) {
        if (get_bound(c, schema, "exclusiveMaximum", 1, path, &v) != 0)
            return NULL;
        if (n->maximum == INT64_MAX || v - 1 < n->maximum)
            n->maximum = v - 1;
    }
    if (n->minimum != INT64_MIN && n->maximum != INT64_MAX && n->minimum > n->maximum) {
        llm__js_fail(c, LLM_ERR_UNSUPPORTED, "JSON schema: no integer lies between the bounds at %s", path);
        return NULL;
    }
    return n;
}

/* ---- one schema ------------------------------------------------------------------------ */

/* Keywords of `schema` as a bit set over KEYWORDS; fails on one we do not know. */
static int present_keywords(js_ctx *c, const json_t *schema, const char *path, uint64_t *out) {
    const char *key;
    json_t *val;
    uint64_t set = 0;
    json_object_foreach((json_t *)schema, key, val) {
        int i = kw_index(key);
        if (i < 0)
            return llm__js_fail(c, LLM_ERR_UNSUPPORTED, "JSON schema: unsupported keyword '%s' at %s", key, path);
        if (strcmp(key, "$id") == 0 && schema != c->doc)
            return llm__js_fail(c, LLM_ERR_UNSUPPORTED,
                                "JSON schema: keyword '$id' below the root is not supported at %s", path);
        set |= 1ull << i;
    }
    /* what constrains nothing is left out */
    if (json_is_true(json_object_get(schema, "additionalProperties")))
        set &= ~KW("additionalProperties");
    const json_t *f = json_object_get(schema, "format");
    if (f && !json_is_string(f))
        return llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: format must be a string at %s", path);
    if (f && known_format(f) == JS_FMT_NONE) /* "email", "uri", ...: an annotation */
        set &= ~KW("format");
    *out = set;
    return 0;
}

static uint64_t annotations(void) {
    uint64_t m = 0;
    for (int i = 0; i < N_KEYWORDS; i++)
        if (KEYWORDS[i].cat == CAT_ANNOT)
            m |= 1ull << i;
    return m;
}

/* const / enum: the values must have a declared type; type-specific keywords
 * apply when some value has their type, and are then refused. */
static js_node *build_values(js_ctx *c, const json_t *schema, uint64_t kw, const char *path) {
    int is_const = (kw & KW("const")) != 0;
    const json_t *v = json_object_get(schema, is_const ? "const" : "enum");
    if (is_const && (kw & KW("enum"))) {
        llm__js_fail(c, LLM_ERR_UNSUPPORTED, "JSON schema: keyword 'enum' beside const is not supported at %s", path);
        return NULL;
    }
    if (!is_const && (!json_is_array(v) || json_array_size(v) == 0)) {
        llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: enum must be a non-empty array at %s", path);
        return NULL;
    }
    unsigned types = 0;
    size_t n_values = is_const ? 1 : json_array_size(v);
    const json_t *type = json_object_get(schema, "type");
    unsigned declared = type ? parse_types(c, type, path) : JS_T_ALL;
    if (!declared)
        return NULL;
    for (size_t i = 0; i < n_values; i++) {
        const json_t *x = is_const ? v : json_array_get(v, i);
        unsigned t = llm__js_json_type(x);
        if (!(t & declared) && !(t == JS_T_INTEGER && (declared & JS_T_NUMBER))) {
            js_sb b;
            llm__js_sb_init(&b, c);
            llm__js_dump_json(&b, x);
            const char *txt = llm__js_sb_str(&b);
            llm__js_fail(c, LLM_ERR_UNSUPPORTED, "JSON schema: %s value %.200s is not of the declared type at %s",
                         is_const ? "const" : "enum", txt ? txt : "", path);
            return NULL;
        }
        types |= t == JS_T_INTEGER ? JS_T_INTEGER | JS_T_NUMBER : t;
    }
    uint64_t allowed = annotations() | KW("type") | KW(is_const ? "const" : "enum");
    if (check_keywords(c, schema, kw, allowed, types, is_const ? "const" : "enum", path) != 0)
        return NULL;
    js_node *n = new_node(c, is_const ? JS_CONST : JS_ENUM, path);
    if (n)
        n->value = v;
    return n;
}

static js_node *build_typed(js_ctx *c, const json_t *schema, uint64_t kw, const char *type, const char *path) {
    const uint64_t annot = annotations();
    int has_properties = (kw & (KW("properties") | KW("additionalProperties"))) != 0;
    js_node *n = NULL;
    js_kind kind;
    if (!*type) { /* no type: the structural keywords decide, in llama.cpp's order */
        if (has_properties)
            kind = JS_OBJECT;
        else if (kw & KW("allOf"))
            kind = JS_ALL_OF;
        else if (kw & (KW("items") | KW("prefixItems")))
            kind = JS_ARRAY;
        else if (kw & (KW("pattern") | KW("minLength") | KW("maxLength") | KW("format")))
            kind = JS_STRING;
        else
            kind = JS_ANY;
    } else if (strcmp(type, "object") == 0) {
        kind = !has_properties && (kw & KW("allOf")) ? JS_ALL_OF : JS_OBJECT;
    } else if (strcmp(type, "string") == 0) {
        kind = kw & KW("allOf") ? JS_ALL_OF : JS_STRING;
    } else if (strcmp(type, "array") == 0) {
        kind = JS_ARRAY;
    } else if (strcmp(type, "integer") == 0) {
        kind = JS_INTEGER;
    } else if (strcmp(type, "number") == 0) {
        kind = JS_NUMBER;
    } else if (strcmp(type, "boolean") == 0) {
        kind = JS_BOOLEAN;
    } else if (strcmp(type, "null") == 0) {
        kind = JS_NULL;
    } else {
        llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: unrecognized type '%s' at %s", type, path);
        return NULL;
    }
    uint64_t allowed = annot | KW("type");
    unsigned types = 0; /* of the values this kind produces: other types' keywords are vacuous */
    const char *what = "type";
    switch (kind) {
    case JS_ANY: /* every type is possible: nothing is vacuous */
        types = JS_T_ALL;
        what = "no type";
        break;
    case JS_ALL_OF:
        allowed |= KW("allOf");
        types = JS_T_ALL;
        what = "allOf";
        break;
    case JS_OBJECT:
        allowed |= KW("properties") | KW("required") | KW("additionalProperties");
        types = JS_T_OBJECT;
        what = "properties";
        break;
    case JS_ARRAY:
        allowed |= KW("items") | KW("prefixItems") | KW("minItems") | KW("maxItems");
        types = JS_T_ARRAY;
        what = "an array type";
        break;
    case JS_STRING:
        allowed |= KW("pattern") | KW("format") | KW("minLength") | KW("maxLength");
        types = JS_T_STRING;
        what = "a string type";
        break;
    case JS_INTEGER:
        allowed |= KW("minimum") | KW("maximum") | KW("exclusiveMinimum") | KW("exclusiveMaximum");
        types = JS_T_INTEGER;
        what = "type integer";
        break;
    case JS_NUMBER: /* bounds are enforced for integers only */
        types = JS_T_NUMBER;
        what = "type number";
        break;
    default: /* boolean, null */
        types = JS_T_BOOLEAN;
        what = "type boolean or null";
        break;
    }
    if (check_keywords(c, schema, kw, allowed, types, what, path) != 0)
        return NULL;
    switch (kind) {
    case JS_ANY: return new_node(c, JS_ANY, path);
    case JS_ALL_OF: {
        const char *p = path_join(c, path, "allOf", NULL);
        n = p ? build_alternatives(c, JS_ALL_OF, json_object_get(schema, "allOf"), p) : NULL;
        if (n && *type)
            n->declared_types = type_bit(type);
        return n;
    }
    case JS_OBJECT: return build_object(c, schema, path);
    case JS_ARRAY: return build_array(c, schema, path);
    case JS_STRING: return build_string(c, schema, path);
    case JS_INTEGER: return build_integer(c, schema, path);
    default: return new_node(c, kind, path);
    }
}

static js_node *build_node_in(js_ctx *c, const json_t *schema, const char *path, const json_t *type_override) {
    if (json_is_true(schema))
        return new_node(c, JS_ANY, path);
    if (json_is_false(schema)) {
        llm__js_fail(c, LLM_ERR_UNSUPPORTED, "JSON schema: the schema false (no value is valid) at %s", path);
        return NULL;
    }
    if (!json_is_object(schema)) {
        llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: schema must be an object at %s", path);
        return NULL;
    }
    uint64_t kw = 0;
    if (present_keywords(c, schema, path, &kw) != 0)
        return NULL;
    const uint64_t annot = annotations();
    if (kw & KW("$ref")) { /* siblings of $ref are ignored by llama.cpp: refuse them */
        if (check_keywords(c, schema, kw, annot | KW("$ref"), JS_T_ALL, "$ref", path) != 0)
            return NULL;
        return build_ref(c, json_object_get(schema, "$ref"), path);
    }
    if (kw & (KW("oneOf") | KW("anyOf"))) { /* oneOf is taken as anyOf */
        const char *key = kw & KW("oneOf") ? "oneOf" : "anyOf";
        if (check_keywords(c, schema, kw, annot | KW(key) | KW("type"), JS_T_ALL, key, path) != 0)
            return NULL;
        const char *p = path_join(c, path, key, NULL);
        js_node *n = p ? build_alternatives(c, JS_ANY_OF, json_object_get(schema, key), p) : NULL;
        const json_t *type = json_object_get(schema, "type");
        if (n && type && !(n->declared_types = parse_types(c, type, path)))
            return NULL;
        return n;
    }
    const json_t *type = type_override ? type_override : json_object_get(schema, "type");
    if (json_is_array(type)) { /* {"type": [a, b], ...} is anyOf [{"type": a, ...}, {"type": b, ...}] */
        if (json_array_size(type) == 0) {
            llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: type must not be empty at %s", path);
            return NULL;
        }
        js_node *n = new_node(c, JS_ANY_OF, path);
        if (!n || !(n->kids = llm__js_alloc(c, json_array_size(type) * sizeof *n->kids)))
            return NULL;
        for (size_t i = 0; i < json_array_size(type); i++) {
            const char *p = path_index(c, path, "type", i);
            if (!p || !(n->kids[i] = build_node(c, schema, p, json_array_get(type, i))))
                return NULL;
            n->n_kids++;
        }
        return n;
    }
    if (kw & (KW("const") | KW("enum")))
        return build_values(c, schema, kw, path);
    if (type && !json_is_string(type)) {
        llm__js_fail(c, LLM_ERR_BAD_FORMAT, "JSON schema: type must be a string or an array of strings at %s", path);
        return NULL;
    }
    return build_typed(c, schema, kw, type ? json_string_value(type) : "", path);
}

static js_node *build_node(js_ctx *c, const json_t *schema, const char *path, const json_t *type_override) {
    if (!path || llm__js_enter(c, path) != 0)
        return NULL;
    js_node *n = build_node_in(c, schema, path, type_override);
    llm__js_leave(c);
    return n;
}

int llm__js_build(js_ctx *c) {
    c->root = build_node(c, c->doc, "#", NULL);
    if (!c->root)
        return -1;
    for (size_t i = 0; i < c->n_pending; i++)
        c->pending[i]->target = llm__js_map_get(&c->refs, c->pending[i]->ref);
    return 0;
}
