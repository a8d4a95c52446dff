/*
 * llama/json_schema.h -- JSON Schema to GBNF, as llama.cpp converts it.
 *
 * Link llama-grammar. Messages of failed calls: llm_grammar_last_error()
 * (llama/grammar.h).
 *
 *     const char *schema = "{\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integer\"}},"
 *                          " \"required\": [\"n\"]}";
 *     char *gbnf = NULL;
 *     size_t len = 0;
 *     llm_status st = llm_json_schema_to_gbnf_alloc(schema, strlen(schema), NULL, &gbnf, &len);
 *     if (st < 0) {
 *         fprintf(stderr, "%s: %s\n", llm_status_str(st), llm_grammar_last_error());
 *         return st;
 *     }
 *     // gbnf: "integer ::= ...\nn-kv ::= ...\nroot ::= \"{\" space n-kv space \"}\"\n..."
 *     llm_json_schema_free(gbnf);
 *
 * The grammar
 *   The result is GBNF text whose start rule is "root", one rule per line,
 *   "name ::= body\n", rules in byte order of their names. It accepts the
 *   JSON text of the values the schema describes, with optional whitespace
 *   after punctuation (the rule "space"). For every schema of llama.cpp's
 *   tests/test-json-schema-to-grammar.cpp (as vendored in llama-cpp-python
 *   0.3.36) the text is the one llama.cpp produces; the rules follow
 *   llama.cpp's common/json-schema-to-grammar.cpp, including its choices:
 *     - object properties come in schema order, the required ones first;
 *       optional ones may be left out, never reordered; a property list
 *       without "additionalProperties" admits no other key;
 *     - a schema without "type" is read by its keywords (properties:
 *       object, items: array, pattern/format/length: string), else any value;
 *     - oneOf is taken as anyOf (a value matching two alternatives is
 *       accepted); a "type" array is an anyOf of one schema per type;
 *     - allOf merges the properties of object schemas (all required, except
 *       those from an anyOf inside it, which become optional) or intersects
 *       enums;
 *     - numbers keep at most 16 integral and 16 fraction digits; integers
 *       within minimum/maximum use a digit-by-digit rule;
 *     - a "pattern" outside the supported regex subset (\d, \w, lookaround,
 *       unanchored, ...) leaves the string unconstrained, as llama.cpp does
 *       (llama.cpp prints a warning; we print nothing): pass
 *       LLM_JSON_SCHEMA_STRICT_PATTERNS to refuse such a schema instead.
 *   The text differs from llama.cpp's only where llama.cpp's is wrong: a
 *   regex quantifier after a non-ASCII character repeats the character,
 *   not its last byte ("^é+$"); in the rule excluding known property names
 *   from additional keys, '\\', ']', a '-' not ending the class and a '^'
 *   opening it are escaped (llama.cpp writes [^"-a], a range); $ref
 *   pointers decode ~0 and ~1.
 *
 * Supported keywords
 *   type (a string or an array of strings), properties, required,
 *   additionalProperties (boolean or schema), items (schema, or an array:
 *   a tuple), prefixItems (an array: a tuple), minItems, maxItems,
 *   minLength, maxLength, pattern, format (date, time, date-time, uuid and
 *   uuid1..uuid5), minimum, maximum, exclusiveMinimum, exclusiveMaximum
 *   (integers only; a fractional bound is rounded inwards), enum, const,
 *   anyOf, oneOf, allOf, $ref ("#/..." JSON pointers into the same document,
 *   e.g. "#/$defs/x" or "#/definitions/x"; recursion is fine). The schema
 *   true is any value; {} is any value; {"type": "object"} any object.
 *
 * Ignored keywords (annotations, and containers read through $ref)
 *   $schema, $id (at the root only), $comment, title, description, default,
 *   examples, deprecated, readOnly, writeOnly, $defs, definitions, and a
 *   "format" other than those above ("email", "uri", "int32", ...: JSON
 *   Schema makes format an annotation).
 *
 * Refused (LLM_ERR_UNSUPPORTED, the message names the keyword and the JSON
 * pointer of the schema holding it, e.g. "keyword 'uniqueItems' ... at
 * #/properties/tags")
 *   - any other keyword (uniqueItems, multipleOf, patternProperties,
 *     minProperties, if/then/else, not, ...);
 *   - a keyword llama.cpp would silently drop: siblings of $ref, keywords
 *     beside anyOf/oneOf other than "type", "type" beside anyOf/allOf when
 *     some alternative has another type, minimum/maximum on "number",
 *     minLength/format beside pattern, lengths beside a format, "required"
 *     naming a property not in "properties", allOf beside properties, allOf
 *     of something else than objects and enums, prefixItems beside items,
 *     const/enum values outside the declared type, enum beside const. A
 *     keyword for another JSON type than the schema's is not refused: it
 *     constrains nothing ("minLength" in {"type": "integer", ...});
 *   - remote $refs ("other.json#/x", "https://..."), "#" and "#anchor";
 *   - schemas no value satisfies: false, minItems > maxItems, minimum >
 *     maximum, minLength > maxLength, tuples contradicting minItems/maxItems,
 *     allOf enums without a common value;
 *   - bounds beyond +-10^18, counts beyond 2^31 - 2.
 *
 * Errors of the document itself are LLM_ERR_BAD_FORMAT: text that is not
 * JSON (the message gives line and column), duplicate object keys, a schema
 * that is not an object or boolean, an unknown "type", a keyword of the
 * wrong JSON type, a $ref that does not resolve, an invalid regex.
 *
 * Limits (llm_json_schema_params): nesting of schemas (and of $ref chains)
 * deeper than max_depth is LLM_ERR_UNSUPPORTED; more than max_nodes schema
 * nodes (a "type" array copies its schema once per type) or a grammar longer
 * than max_grammar_bytes is LLM_ERR_EXHAUSTED. Working memory is bounded by
 * a multiple of max_grammar_bytes. The JSON parser itself stops at 2048
 * levels of nesting.
 *
 * Thread safety: every function may be called from any thread at once; no
 * state is shared between calls. Nothing is printed; no call exits or aborts.
 *
 * Includes only standard C headers and llama/status.h; C11 and C++.
 */
#ifndef LLAMA_JSON_SCHEMA_H
#define LLAMA_JSON_SCHEMA_H

#include <stddef.h>

#include "llama/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of llm_json_schema_params. */
enum {
    /* Refuse (LLM_ERR_UNSUPPORTED) a "pattern" outside the supported regex
     * subset instead of leaving the string unconstrained as llama.cpp does. */
    LLM_JSON_SCHEMA_STRICT_PATTERNS = 1u << 0
};

typedef struct llm_json_schema_params {
    unsigned flags;           /* LLM_JSON_SCHEMA_* (default 0) */
    int max_depth;            /* schema nesting and $ref chains (default 64, at least 1) */
    size_t max_nodes;         /* schema nodes built (default 100000) */
    size_t max_grammar_bytes; /* length of the grammar text (default 4 MiB) */
} llm_json_schema_params;

/* The defaults above. */
llm_json_schema_params llm_json_schema_default_params(void);

/* Convert the JSON Schema in schema_json[0..len) (UTF-8 JSON text, need
 * not be NUL-terminated) into GBNF text, with params (NULL: the defaults).
 *
 * On LLM_OK the grammar is in buf[0 .. *needed) followed by a NUL, so the
 * buffer must hold *needed + 1 bytes. When cap < *needed + 1 the call returns
 * LLM_ERR_BUFFER_TOO_SMALL, sets *needed to the grammar's length (without
 * the NUL) and writes "" into buf when cap > 0; buf may be NULL when cap is
 * 0, which is how to ask for the size (the conversion runs each time).
 *
 * Returns LLM_ERR_INVALID_ARG (NULL schema_json with len > 0, NULL needed,
 * NULL buf with cap > 0, params with max_depth < 1 or a zero limit),
 * LLM_ERR_BAD_FORMAT, LLM_ERR_UNSUPPORTED, LLM_ERR_EXHAUSTED (see above),
 * LLM_ERR_NO_MEMORY. On an error other than LLM_ERR_BUFFER_TOO_SMALL,
 * *needed is 0 and buf holds "" when cap > 0; llm_grammar_last_error()
 * says why. */
llm_status llm_json_schema_to_gbnf(const char *schema_json, size_t len, const llm_json_schema_params *params,
                                   char *buf, size_t cap, size_t *needed);

/* As llm_json_schema_to_gbnf(), but the NUL-terminated grammar is allocated
 * with malloc(): the caller owns *out and releases it with
 * llm_json_schema_free() (or free()). *out_len (may be NULL) receives its
 * length without the NUL. On error *out is NULL and *out_len is 0.
 * LLM_ERR_INVALID_ARG also for a NULL out. */
llm_status llm_json_schema_to_gbnf_alloc(const char *schema_json, size_t len,
                                         const llm_json_schema_params *params, char **out, size_t *out_len);

/* Releases a grammar from llm_json_schema_to_gbnf_alloc(). NULL is harmless. */
void llm_json_schema_free(char *gbnf);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_JSON_SCHEMA_H */
