/*
 * schema_errors_test.c -- what llm_json_schema_to_gbnf refuses, and how:
 * unsupported keywords named with their JSON pointer, keywords llama.cpp
 * would drop silently, malformed documents, hostile inputs (deep nesting,
 * blow-up, huge enums, caps), and the buffer contract.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/grammar.h"
#include "llama/json_schema.h"

/* Converts with params (NULL: defaults); returns the status, the grammar
 * (or NULL) in *out. */
static llm_status conv(const char *schema, const llm_json_schema_params *p, char **out) {
    *out = NULL;
    return llm_json_schema_to_gbnf_alloc(schema, strlen(schema), p, out, NULL);
}

/* The schema must fail with st and a message holding every one of the
 * NULL-terminated fragments. */
static void expect_fail(const char *schema, llm_status st, ...) {
    char *g = NULL;
    llm_status got = conv(schema, NULL, &g);
    cr_expect_eq(got, st, "%s: got %s (%s), want %s", schema, llm_status_str(got), llm_grammar_last_error(),
                 llm_status_str(st));
    cr_expect_null(g);
    va_list ap;
    va_start(ap, st);
    for (const char *frag; (frag = va_arg(ap, const char *)) != NULL;)
        cr_expect(strstr(llm_grammar_last_error(), frag) != NULL, "%s: message '%s' lacks '%s'", schema,
                  llm_grammar_last_error(), frag);
    va_end(ap);
    llm_json_schema_free(g);
}

static char *expect_ok(const char *schema) {
    char *g = NULL;
    llm_status st = conv(schema, NULL, &g);
    cr_assert_eq(st, LLM_OK, "%s: %s: %s", schema, llm_status_str(st), llm_grammar_last_error());
    cr_assert_not_null(g);
    cr_assert(strstr(g, "root ::= ") != NULL);
    return g;
}

Test(schema_errors, unsupported_keywords_are_named_with_their_path) {
    expect_fail("{\"type\":\"object\",\"properties\":{\"tags\":{\"type\":\"array\",\"uniqueItems\":true}}}",
                LLM_ERR_UNSUPPORTED, "'uniqueItems'", "#/properties/tags", NULL);
    expect_fail("{\"type\":\"integer\",\"multipleOf\":3}", LLM_ERR_UNSUPPORTED, "'multipleOf'", " #", NULL);
    expect_fail("{\"type\":\"object\",\"patternProperties\":{\"^a\":{}}}", LLM_ERR_UNSUPPORTED,
                "'patternProperties'", NULL);
    expect_fail("{\"not\":{\"type\":\"string\"}}", LLM_ERR_UNSUPPORTED, "'not'", NULL);
    expect_fail("{\"if\":{},\"then\":{}}", LLM_ERR_UNSUPPORTED, "'if'", NULL);
    expect_fail("{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\",\"minProperties\":1}]}",
                LLM_ERR_UNSUPPORTED, "'minProperties'", "#/anyOf/1", NULL);
    expect_fail("{\"$ref\":\"#/$defs/a\",\"$defs\":{\"a\":{\"type\":\"string\",\"contentEncoding\":\"x\"}}}",
                LLM_ERR_UNSUPPORTED, "'contentEncoding'", "#/$defs/a", NULL);
    expect_fail("{\"type\":\"object\",\"properties\":{\"a\":{\"$id\":\"x\"}}}", LLM_ERR_UNSUPPORTED, "'$id'", NULL);
}

Test(schema_errors, keywords_llama_cpp_drops_are_refused) {
    expect_fail("{\"$ref\":\"#/$defs/a\",\"type\":\"string\",\"$defs\":{\"a\":{}}}", LLM_ERR_UNSUPPORTED, "'type'",
                "$ref", NULL);
    expect_fail("{\"type\":\"number\",\"minimum\":0}", LLM_ERR_UNSUPPORTED, "'minimum'", "number", NULL);
    expect_fail("{\"type\":\"string\",\"pattern\":\"^a$\",\"maxLength\":3}", LLM_ERR_UNSUPPORTED, "'maxLength'",
                "pattern", NULL);
    expect_fail("{\"type\":\"string\",\"format\":\"date\",\"minLength\":3}", LLM_ERR_UNSUPPORTED, "'minLength'",
                NULL);
    expect_fail("{\"type\":\"object\",\"properties\":{\"a\":{}},\"required\":[\"b\"]}", LLM_ERR_UNSUPPORTED,
                "'b'", NULL);
    expect_fail("{\"properties\":{\"a\":{}},\"allOf\":[{}]}", LLM_ERR_UNSUPPORTED, "'allOf'", NULL);
    expect_fail("{\"anyOf\":[{},{}],\"required\":[\"a\"]}", LLM_ERR_UNSUPPORTED, "'required'", NULL);
    expect_fail("{\"anyOf\":[{\"type\":\"string\"}],\"oneOf\":[{}]}", LLM_ERR_UNSUPPORTED, NULL);
    expect_fail("{\"type\":\"string\",\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}",
                LLM_ERR_UNSUPPORTED, "'type'", NULL);
    expect_fail("{\"allOf\":[{\"type\":\"string\",\"minLength\":2}]}", LLM_ERR_UNSUPPORTED, "allOf", NULL);
    expect_fail("{\"allOf\":[{\"enum\":[\"a\"]},{\"enum\":[\"b\"]}]}", LLM_ERR_UNSUPPORTED, "in common", NULL);
    expect_fail("{\"type\":\"array\",\"prefixItems\":[{}],\"items\":{}}", LLM_ERR_UNSUPPORTED, "'prefixItems'",
                NULL);
    expect_fail("{\"type\":\"string\",\"enum\":[\"a\",1]}", LLM_ERR_UNSUPPORTED, "enum value 1", NULL);
    expect_fail("{\"const\":\"a\",\"enum\":[\"a\"]}", LLM_ERR_UNSUPPORTED, "'enum'", NULL);
    expect_fail("{\"minimum\":3}", LLM_ERR_UNSUPPORTED, "'minimum'", NULL);
    expect_fail("{\"type\":\"integer\",\"minimum\":0,\"exclusiveMinimum\":true}", LLM_ERR_UNSUPPORTED, NULL);
}

Test(schema_errors, vacuous_and_annotation_keywords_are_accepted) {
    /* keywords of another type constrain nothing; annotations are ignored */
    char *g = expect_ok("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"x\",\"title\":\"t\","
                        "\"description\":\"d\",\"examples\":[1],\"default\":2,\"deprecated\":false,"
                        "\"type\":\"integer\",\"minLength\":3,\"items\":{},\"required\":[\"q\"]}");
    cr_expect(strstr(g, "root ::= (\"-\"? integral-part)\n") != NULL, "%s", g);
    llm_json_schema_free(g);
    g = expect_ok("{\"type\":\"string\",\"format\":\"email\"}"); /* unknown format: an annotation */
    cr_expect(strstr(g, "root ::= \"\\\"\" char* \"\\\"\"\n") != NULL, "%s", g);
    llm_json_schema_free(g);
    g = expect_ok("{\"const\":5,\"minLength\":2,\"type\":\"number\"}");
    cr_expect(strstr(g, "root ::= \"5\"\n") != NULL, "%s", g);
    llm_json_schema_free(g);
    g = expect_ok("true");
    cr_expect(strstr(g, "root ::= value\n") != NULL, "%s", g);
    llm_json_schema_free(g);
    /* both bounds of a pair: the tighter one */
    g = expect_ok("{\"type\":\"integer\",\"minimum\":2,\"exclusiveMinimum\":5,\"maximum\":9,\"exclusiveMaximum\":20}");
    cr_expect(strstr(g, "root ::= ([6-9])\n") != NULL, "%s", g);
    llm_json_schema_free(g);
}

Test(schema_errors, refs) {
    expect_fail("{\"$ref\":\"https://example.com/s.json\"}", LLM_ERR_UNSUPPORTED, "https://example.com/s.json", NULL);
    expect_fail("{\"$ref\":\"other.json#/a\"}", LLM_ERR_UNSUPPORTED, NULL);
    expect_fail("{\"$ref\":\"#\"}", LLM_ERR_UNSUPPORTED, NULL);
    expect_fail("{\"$ref\":\"#/$defs/missing\",\"$defs\":{}}", LLM_ERR_BAD_FORMAT, "missing", NULL);
    expect_fail("{\"$ref\":5}", LLM_ERR_BAD_FORMAT, "$ref", NULL);
    /* recursion through $ref converts; a $ref to itself is refused by depth, not by looping */
    char *g = expect_ok("{\"$ref\":\"#/$defs/n\",\"$defs\":{\"n\":{\"type\":\"object\",\"properties\":"
                        "{\"next\":{\"$ref\":\"#/$defs/n\"}},\"additionalProperties\":false}}}");
    cr_expect(strstr(g, "ref-defs-n ::= \"{\" space  (ref-defs-n-next-kv )? space \"}\"\n") != NULL, "%s", g);
    llm_json_schema_free(g);
    g = NULL;
    llm_status st = conv("{\"$ref\":\"#/$defs/a\",\"$defs\":{\"a\":{\"$ref\":\"#/$defs/a\"}}}", NULL, &g);
    cr_expect(st < 0 || g != NULL);
    llm_json_schema_free(g);
    /* JSON pointer escapes */
    g = expect_ok("{\"$ref\":\"#/$defs/a~1b\",\"$defs\":{\"a/b\":{\"type\":\"null\"}}}");
    llm_json_schema_free(g);
}

Test(schema_errors, malformed_documents) {
    expect_fail("", LLM_ERR_BAD_FORMAT, "invalid JSON", NULL);
    expect_fail("{\"type\": ", LLM_ERR_BAD_FORMAT, "line 1", NULL);
    expect_fail("{\"type\":\"string\",\"type\":\"integer\"}", LLM_ERR_BAD_FORMAT, NULL);
    expect_fail("42", LLM_ERR_BAD_FORMAT, "must be an object", NULL);
    expect_fail("false", LLM_ERR_UNSUPPORTED, "false", NULL);
    expect_fail("{\"type\":\"kaboom\"}", LLM_ERR_BAD_FORMAT, "kaboom", NULL);
    expect_fail("{\"type\":[]}", LLM_ERR_BAD_FORMAT, NULL);
    expect_fail("{\"type\":\"array\",\"minItems\":-1}", LLM_ERR_BAD_FORMAT, "minItems", NULL);
    expect_fail("{\"type\":\"array\",\"minItems\":3,\"maxItems\":2}", LLM_ERR_UNSUPPORTED, "minItems", NULL);
    expect_fail("{\"type\":\"integer\",\"minimum\":5,\"maximum\":4}", LLM_ERR_UNSUPPORTED, NULL);
    expect_fail("{\"type\":\"integer\",\"minimum\":1e30}", LLM_ERR_UNSUPPORTED, "minimum", NULL);
    expect_fail("{\"const\":123456789012345678901234567890}", LLM_ERR_BAD_FORMAT, NULL);
    expect_fail("{\"enum\":[]}", LLM_ERR_BAD_FORMAT, "enum", NULL);
    expect_fail("{\"type\":\"string\",\"pattern\":\"^(a$\"}", LLM_ERR_BAD_FORMAT, "pattern", NULL);
    expect_fail("{\"type\":\"string\",\"pattern\":\"^a{3,2}$\"}", LLM_ERR_BAD_FORMAT, NULL);
    expect_fail("{\"properties\":{\"a\":{\"type\":\"string\"}},\"additionalProperties\":3}", LLM_ERR_BAD_FORMAT,
                NULL);
    expect_fail("{\"items\":[{}],\"minItems\":2}", LLM_ERR_UNSUPPORTED, "tuple", NULL);
}

Test(schema_errors, patterns_outside_the_subset) {
    /* as llama.cpp: any string; strict: refused */
    char *g = expect_ok("{\"type\":\"string\",\"pattern\":\"^\\\\d+$\"}");
    cr_expect(strstr(g, "root ::= string\n") != NULL, "%s", g);
    llm_json_schema_free(g);
    llm_json_schema_params p = llm_json_schema_default_params();
    p.flags = LLM_JSON_SCHEMA_STRICT_PATTERNS;
    const char *s = "{\"type\":\"string\",\"pattern\":\"^\\\\d+$\"}";
    llm_status st = conv(s, &p, &g);
    cr_expect_eq(st, LLM_ERR_UNSUPPORTED);
    cr_expect(strstr(llm_grammar_last_error(), "unsupported escape") != NULL, "%s", llm_grammar_last_error());
    cr_expect_null(g);
    st = conv("{\"type\":\"string\",\"pattern\":\"^[a-z]+$\"}", &p, &g);
    cr_expect_eq(st, LLM_OK);
    llm_json_schema_free(g);
}

/* ---- hostile inputs ------------------------------------------------------------------ */

static char *repeat_schema(const char *open, const char *inner, const char *close, int n) {
    size_t lo = strlen(open), li = strlen(inner), lc = strlen(close);
    char *s = malloc(n * (lo + lc) + li + 1), *p = s;
    for (int i = 0; i < n; i++, p += lo)
        memcpy(p, open, lo);
    memcpy(p, inner, li);
    p += li;
    for (int i = 0; i < n; i++, p += lc)
        memcpy(p, close, lc);
    *p = '\0';
    return s;
}

Test(schema_errors, deep_nesting_is_refused_cleanly) {
    char *s = repeat_schema("{\"type\":\"array\",\"items\":", "{}", "}", 100);
    expect_fail(s, LLM_ERR_UNSUPPORTED, "nesting deeper than 64", NULL);
    free(s);
    s = repeat_schema("{\"type\":\"array\",\"items\":", "{}", "}", 60); /* within the limit */
    char *g = expect_ok(s);
    llm_json_schema_free(g);
    free(s);
    s = repeat_schema("[", "", "]", 100000); /* beyond the JSON parser's own limit */
    expect_fail(s, LLM_ERR_BAD_FORMAT, NULL);
    free(s);
    /* a chain of $refs counts as nesting */
    char *chain = malloc(100 * 64 + 64), *p = chain;
    p += sprintf(p, "{\"$ref\":\"#/$defs/d0\",\"$defs\":{");
    for (int i = 0; i < 100; i++)
        p += sprintf(p, "\"d%d\":{\"$ref\":\"#/$defs/d%d\"},", i, i + 1);
    sprintf(p, "\"d100\":{\"type\":\"null\"}}}");
    expect_fail(chain, LLM_ERR_UNSUPPORTED, "nesting", NULL);
    free(chain);
}

Test(schema_errors, blow_up_is_bounded) {
    /* each type array doubles the tree: 2^30 nodes if unbounded */
    char *s = repeat_schema("{\"type\":[\"array\",\"array\"],\"items\":", "{}", "}", 30);
    expect_fail(s, LLM_ERR_EXHAUSTED, NULL); /* the node cap or the working-memory cap */
    free(s);
    /* a huge enum converts, and a small cap stops it with a clear error */
    size_t n = 100000;
    char *e = malloc(n * 12 + 32), *p = e;
    p += sprintf(p, "{\"enum\":[");
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s\"v%zu\"", i ? "," : "", i);
    sprintf(p, "]}");
    char *g = expect_ok(e);
    cr_expect(strstr(g, "\"\\\"v99999\\\"\")\n") != NULL);
    llm_json_schema_free(g);
    llm_json_schema_params prm = llm_json_schema_default_params();
    prm.max_grammar_bytes = 4096;
    g = NULL;
    llm_status st = conv(e, &prm, &g);
    cr_expect_eq(st, LLM_ERR_EXHAUSTED);
    cr_expect(strstr(llm_grammar_last_error(), "max_grammar_bytes") != NULL, "%s", llm_grammar_last_error());
    cr_expect_null(g);
    free(e);
}

/* ---- the buffer contract ------------------------------------------------------------- */

Test(schema_errors, caller_buffer) {
    const char *s = "{\"type\":\"boolean\"}";
    const char *want = "root ::= (\"true\" | \"false\")\nspace ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n";
    size_t need = 123;
    cr_assert_eq(llm_json_schema_to_gbnf(s, strlen(s), NULL, NULL, 0, &need), LLM_ERR_BUFFER_TOO_SMALL);
    cr_assert_eq(need, strlen(want));
    char small[8] = "xxxxxxx";
    cr_expect_eq(llm_json_schema_to_gbnf(s, strlen(s), NULL, small, need, &need), LLM_ERR_BUFFER_TOO_SMALL);
    cr_expect_str_eq(small, "");
    char *buf = malloc(need + 1);
    size_t got = 0;
    cr_assert_eq(llm_json_schema_to_gbnf(s, strlen(s), NULL, buf, need + 1, &got), LLM_OK);
    cr_expect_eq(got, need);
    cr_expect_str_eq(buf, want);
    /* not NUL-terminated input: only len bytes are read */
    char padded[64];
    memset(padded, '}', sizeof padded);
    memcpy(padded, s, strlen(s));
    cr_expect_eq(llm_json_schema_to_gbnf(padded, strlen(s), NULL, buf, need + 1, &got), LLM_OK);
    cr_expect_str_eq(buf, want);
    /* errors leave "" and 0 */
    cr_expect_eq(llm_json_schema_to_gbnf("{", 1, NULL, buf, need + 1, &got), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(got, 0);
    cr_expect_str_eq(buf, "");
    free(buf);
}

Test(schema_errors, invalid_arguments) {
    size_t need;
    char buf[4], *out = (char *)1;
    size_t out_len = 7;
    cr_expect_eq(llm_json_schema_to_gbnf(NULL, 3, NULL, buf, sizeof buf, &need), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_json_schema_to_gbnf("{}", 2, NULL, buf, sizeof buf, NULL), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_json_schema_to_gbnf("{}", 2, NULL, NULL, 5, &need), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_json_schema_to_gbnf_alloc("{}", 2, NULL, NULL, NULL), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_json_schema_to_gbnf_alloc(NULL, 2, NULL, &out, &out_len), LLM_ERR_INVALID_ARG);
    cr_expect_null(out);
    cr_expect_eq(out_len, 0);
    llm_json_schema_params p = llm_json_schema_default_params();
    p.max_depth = 0;
    cr_expect_eq(llm_json_schema_to_gbnf_alloc("{}", 2, &p, &out, NULL), LLM_ERR_INVALID_ARG);
    cr_expect_gt(strlen(llm_grammar_last_error()), 0);
    llm_json_schema_free(NULL);
}
