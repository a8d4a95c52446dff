/*
 * schema_api.c -- the public functions of llama/json_schema.h: argument
 * checks, JSON parsing, the two passes, the caller's buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"

/* Working memory allowed per byte of grammar: names, intermediate strings,
 * the tree; generous, it only stops runaway conversions. */
enum { JS_ARENA_PER_GRAMMAR_BYTE = 16 };

llm_json_schema_params llm_json_schema_default_params(void) {
    llm_json_schema_params p;
    p.flags = 0;
    p.max_depth = 64;
    p.max_nodes = 100000;
    p.max_grammar_bytes = (size_t)4 << 20;
    return p;
}

static void ctx_free(js_ctx *c) {
    for (js_block *b = c->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    c->blocks = NULL;
    if (c->doc)
        json_decref(c->doc);
    c->doc = NULL;
}

/* Runs the conversion; on LLM_OK *out points into the arena of c. */
static llm_status convert(js_ctx *c, const char *schema_json, size_t len, const llm_json_schema_params *params,
                          const char **out, size_t *out_len) {
    memset(c, 0, sizeof *c);
    c->p = params ? *params : llm_json_schema_default_params();
    if (c->p.max_depth < 1 || c->p.max_nodes == 0 || c->p.max_grammar_bytes == 0)
        return llm__err_set(LLM__ERR_GRAMMAR, LLM_ERR_INVALID_ARG,
                            "JSON schema: max_depth, max_nodes and max_grammar_bytes must be positive");
    size_t cap = c->p.max_grammar_bytes;
    c->arena_cap = cap > SIZE_MAX / JS_ARENA_PER_GRAMMAR_BYTE ? SIZE_MAX : cap * JS_ARENA_PER_GRAMMAR_BYTE;
    if (c->arena_cap < ((size_t)64 << 20))
        c->arena_cap = (size_t)64 << 20;

    json_error_t jerr;
    c->doc = json_loadb(schema_json ? schema_json : "", len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (!c->doc)
        return llm__err_set(LLM__ERR_GRAMMAR, LLM_ERR_BAD_FORMAT, "JSON schema: invalid JSON at line %d column %d: %s",
                            jerr.line, jerr.column, jerr.text);
    if (llm__js_build(c) != 0)
        return c->st;
    /* the whitespace rule comes first, as in llama.cpp (it can only matter
     * for a schema property named "space") */
    if (!llm__js_add_rule(c, "space", "| \" \" | \"\\n\"{1,2} [ \\t]{0,20}"))
        return c->st;
    if (!llm__js_visit(c, c->root, ""))
        return c->st != LLM_OK ? c->st : llm__err_set(LLM__ERR_GRAMMAR, LLM_ERR_INTERNAL, "JSON schema: no root rule");
    *out = llm__js_rules_print(c, out_len);
    return *out ? LLM_OK : c->st;
}

llm_status llm_json_schema_to_gbnf(const char *schema_json, size_t len, const llm_json_schema_params *params,
                                   char *buf, size_t cap, size_t *needed) {
    if (needed)
        *needed = 0;
    if (buf && cap)
        buf[0] = '\0';
    if (!needed || (!schema_json && len) || (!buf && cap))
        return llm__err_set(LLM__ERR_GRAMMAR, LLM_ERR_INVALID_ARG,
                            "llm_json_schema_to_gbnf: NULL needed, schema_json or buf");
    js_ctx c;
    const char *text = NULL;
    size_t n = 0;
    llm_status st = convert(&c, schema_json, len, params, &text, &n);
    if (st == LLM_OK) {
        *needed = n;
        if (cap < n + 1) {
            st = llm__err_set(LLM__ERR_GRAMMAR, LLM_ERR_BUFFER_TOO_SMALL,
                              "llm_json_schema_to_gbnf: the grammar needs %zu bytes and a NUL, buffer holds %zu", n,
                              cap);
        } else {
            memcpy(buf, text, n + 1);
        }
    }
    ctx_free(&c);
    return st;
}

llm_status llm_json_schema_to_gbnf_alloc(const char *schema_json, size_t len, const llm_json_schema_params *params,
                                         char **out, size_t *out_len) {
    if (out)
        *out = NULL;
    if (out_len)
        *out_len = 0;
    if (!out || (!schema_json && len))
        return llm__err_set(LLM__ERR_GRAMMAR, LLM_ERR_INVALID_ARG,
                            "llm_json_schema_to_gbnf_alloc: NULL out or schema_json");
    js_ctx c;
    const char *text = NULL;
    size_t n = 0;
    llm_status st = convert(&c, schema_json, len, params, &text, &n);
    if (st == LLM_OK) {
        char *s = malloc(n + 1);
        if (!s) {
            st = llm__err_set(LLM__ERR_GRAMMAR, LLM_ERR_NO_MEMORY, "llm_json_schema_to_gbnf_alloc: out of memory");
        } else {
            memcpy(s, text, n + 1);
            *out = s;
            if (out_len)
                *out_len = n;
        }
    }
    ctx_free(&c);
    return st;
}

void llm_json_schema_free(char *gbnf) { free(gbnf); }
