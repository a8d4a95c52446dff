/* test_tok_json_reader.c -- the tokenizer's own JSON reader (white-box,
 * libs/tokenizer/src/tok_json.h) and the errors tokenizer.json loading gives
 * for malformed JSON. Reference: RFC 8259 (what is valid), and for decoded
 * values what Python's json module decodes the same texts to. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/tokenizer.h"
#include "tok_json.h"

static const llm__tj *parse_ok(const char *text, llm__tj_doc **doc) {
    const llm__tj *root = NULL;
    llm_status st = llm__tj_parse(text, strlen(text), "t.json", doc, &root);
    cr_assert_eq(st, LLM_OK, "%s: %s", text, llm_tokenizer_last_error());
    cr_assert_not_null(root);
    return root;
}

/* Malformed text of len bytes: BAD_FORMAT, no document, and a message that
 * holds `want` and the position. */
static void parse_bad_n(const char *text, size_t len, const char *want) {
    llm__tj_doc *doc = (llm__tj_doc *)1;
    const llm__tj *root = (const llm__tj *)1;
    llm_status st = llm__tj_parse(text, len, "t.json", &doc, &root);
    cr_expect_eq(st, LLM_ERR_BAD_FORMAT, "%.80s: status %d", text, (int)st);
    cr_expect_null(doc);
    cr_expect_null(root);
    const char *msg = llm_tokenizer_last_error();
    cr_expect(strstr(msg, want) != NULL, "%.80s: message \"%s\" lacks \"%s\"", text, msg, want);
    cr_expect(strstr(msg, "t.json: ") == msg && strstr(msg, " at line ") && strstr(msg, "(byte "),
              "message \"%s\" does not say where", msg);
}

static void parse_bad(const char *text, const char *want) { parse_bad_n(text, strlen(text), want); }

Test(tok_json_reader, values_and_escapes) {
    llm__tj_doc *doc = NULL;
    const llm__tj *r = parse_ok(" {\"s\": \"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83e\\udd99\\u0000z\", "
                                "\"i\": -9223372036854775808, \"j\": 9223372036854775807, \"d\": -1.5e-3, "
                                "\"z\": 0, \"t\": true, \"f\": false, \"n\": null, \"a\": [1, [], {}], "
                                "\"\\u0041\": \"key decoded\"} \n",
                                &doc);
    cr_assert_eq(r->type, LLM__TJ_OBJECT);
    cr_expect_eq(llm__tj_size(r), 10);
    const llm__tj *s = llm__tj_get(r, "s");
    static const char want[] = "a\"\\/\b\f\n\r\t\xC3\xA9\xF0\x9F\xA6\x99\0z";
    cr_assert(llm__tj_is(s, LLM__TJ_STRING));
    cr_assert_eq(s->n, sizeof want - 1);
    cr_expect_eq(memcmp(llm__tj_str(s), want, sizeof want), 0); /* NUL-terminated too */
    cr_expect_eq(llm__tj_get(r, "i")->num.i, INT64_MIN);
    cr_expect_eq(llm__tj_get(r, "j")->num.i, INT64_MAX);
    cr_expect(llm__tj_is(llm__tj_get(r, "d"), LLM__TJ_REAL));
    cr_expect_eq(llm__tj_num(llm__tj_get(r, "d")), -1.5e-3);
    cr_expect(llm__tj_is(llm__tj_get(r, "z"), LLM__TJ_INT));
    cr_expect(llm__tj_is(llm__tj_get(r, "t"), LLM__TJ_TRUE));
    cr_expect(llm__tj_is(llm__tj_get(r, "f"), LLM__TJ_FALSE));
    cr_expect(llm__tj_is(llm__tj_get(r, "n"), LLM__TJ_NULL));
    const llm__tj *a = llm__tj_get(r, "a");
    cr_expect_eq(llm__tj_size(a), 3);
    cr_expect_eq(llm__tj_at(a, 0)->num.i, 1);
    cr_expect(llm__tj_is(llm__tj_at(a, 1), LLM__TJ_ARRAY));
    cr_expect(llm__tj_is(llm__tj_at(a, 2), LLM__TJ_OBJECT));
    cr_expect_null(llm__tj_at(a, 3));
    cr_expect_str_eq(llm__tj_str(llm__tj_get(r, "A")), "key decoded");
    cr_expect_null(llm__tj_get(r, "missing"));
    cr_expect_null(llm__tj_get(a, "s")); /* not an object */
    /* Members keep file order. */
    cr_expect_str_eq(llm__tj_first(r)->key, "s");
    llm__tj_free(doc);

    /* Any value at top level. */
    r = parse_ok("\"x\"", &doc);
    cr_expect_str_eq(llm__tj_str(r), "x");
    llm__tj_free(doc);
    llm__tj_free(NULL);
}

Test(tok_json_reader, truncated) {
    parse_bad("", "unexpected end of text");
    parse_bad("{\"a\": [1, 2", "',' or ']' expected");
    parse_bad("{\"a\": 1", "',' or '}' expected");
    parse_bad("{\"a\": \"abc", "unterminated string");
    parse_bad("{\"a\": \"abc\\", "unterminated string");
    parse_bad("{\"a\":", "unexpected end of text");
    parse_bad("[1.", "invalid number");
    parse_bad("[tru", "invalid value");
    /* A NUL byte ends nothing: the length does. */
    parse_bad_n("[1]\0", 4, "text after the JSON value");
}

Test(tok_json_reader, bad_escapes) {
    parse_bad("[\"a\\q\"]", "bad escape in a string");
    parse_bad("[\"a\\u12G4\"]", "bad \\u escape");
    parse_bad("[\"a\\u12\"]", "bad \\u escape");
    parse_bad("[\"a\tb\"]", "control character in a string");
    parse_bad("[\"a\nb\"]", "control character in a string");
}

Test(tok_json_reader, bad_surrogates) {
    parse_bad("[\"\\ud800\"]", "high surrogate in a \\u escape without a low one");
    parse_bad("[\"\\ud800x\"]", "high surrogate");
    parse_bad("[\"\\ud800\\u0041\"]", "high surrogate");
    parse_bad("[\"\\ud800\\ud800\"]", "high surrogate");
    parse_bad("[\"\\udc00\"]", "lone low surrogate");
    parse_bad("[\"\\udfff\\ud800\"]", "lone low surrogate");
}

Test(tok_json_reader, bad_utf8) {
    parse_bad("[\"\xC0\x80\"]", "invalid UTF-8");         /* overlong NUL */
    parse_bad("[\"\xED\xA0\x80\"]", "invalid UTF-8");     /* an encoded surrogate */
    parse_bad("[\"\xF4\x90\x80\x80\"]", "invalid UTF-8"); /* past U+10FFFF */
    parse_bad("[\"\xE2\x82\"]", "invalid UTF-8");         /* cut short */
    parse_bad("[\"\xFF\"]", "invalid UTF-8");
    parse_bad("{\"\x80\": 1}", "invalid UTF-8");          /* keys too */
}

Test(tok_json_reader, deep_nesting) {
    char buf[2 * LLM__TJ_MAX_DEPTH + 8];
    /* At the limit: fine. */
    memset(buf, '[', LLM__TJ_MAX_DEPTH);
    memset(buf + LLM__TJ_MAX_DEPTH, ']', LLM__TJ_MAX_DEPTH);
    llm__tj_doc *doc = NULL;
    const llm__tj *root = NULL;
    cr_expect_eq(llm__tj_parse(buf, 2 * LLM__TJ_MAX_DEPTH, "t.json", &doc, &root), LLM_OK, "%s",
                 llm_tokenizer_last_error());
    llm__tj_free(doc);
    /* One deeper: an error, not a stack overflow. */
    memset(buf, '[', LLM__TJ_MAX_DEPTH + 1);
    memset(buf + LLM__TJ_MAX_DEPTH + 1, ']', LLM__TJ_MAX_DEPTH + 1);
    parse_bad_n(buf, 2 * LLM__TJ_MAX_DEPTH + 2, "nested too deeply");
    /* Far deeper (a hostile file): the same error, found at the limit. */
    size_t n = 1000000;
    char *deep = malloc(n);
    cr_assert_not_null(deep);
    memset(deep, '[', n);
    parse_bad_n(deep, n, "nested too deeply");
    free(deep);
}

Test(tok_json_reader, strict_grammar) {
    parse_bad("[01]", "leading zero");
    parse_bad("[-]", "invalid number");
    parse_bad("[1e]", "invalid number");
    parse_bad("[+1]", "invalid value");
    parse_bad("[.5]", "invalid value");
    parse_bad("[NaN]", "invalid value");
    parse_bad("[1,]", "invalid value");
    parse_bad("{\"a\":1,}", "object key (a string) expected");
    parse_bad("{'a':1}", "object key (a string) expected");
    parse_bad("{\"a\" 1}", "':' expected");
    parse_bad("[1] // c", "text after the JSON value");
    parse_bad("[9223372036854775808]", "integer out of range");
    parse_bad("[-9223372036854775809]", "integer out of range");
    parse_bad("[1e400]", "number out of range");
    parse_bad("{\"a\":1,\"b\":2,\"a\":3}", "duplicate key");
    /* Duplicates in a big object go through the hash table. */
    char big[4096];
    size_t k = 0;
    big[k++] = '{';
    for (int i = 0; i < 100; i++) k += (size_t)snprintf(big + k, sizeof big - k, "\"k%d\":%d,", i, i);
    k += (size_t)snprintf(big + k, sizeof big - k, "\"k57\":0}");
    parse_bad_n(big, k, "duplicate key");
}

Test(tok_json_reader, error_position) {
    parse_bad("{\n  \"a\": [1,\n  2 x]}", "at line 3 column 5 (byte 17)");
    /* Columns count characters: "é" is one. */
    parse_bad("[\"\xC3\xA9\", x]", "at line 1 column 7 (byte 7)");
}

/* Through the public loader: malformed JSON is BAD_FORMAT naming the file
 * kind and the problem, and nothing is returned. */
Test(tok_json_reader, tokenizer_json_errors) {
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}", "tokenizer.json: ',' or '}' expected"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\\x\": 0}}}", "tokenizer.json: bad escape"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\\udc00\": 0}}}", "tokenizer.json: lone low surrogate"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"a\": 1}}}", "tokenizer.json: duplicate key"},
        {"[]", "tokenizer.json: top level is not an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        llm_tokenizer *tok = (llm_tokenizer *)1;
        cr_expect_eq(llm_tokenizer_from_hf_json(cases[i].json, strlen(cases[i].json), &tok), LLM_ERR_BAD_FORMAT);
        cr_expect_null(tok);
        cr_expect(strstr(llm_tokenizer_last_error(), cases[i].want) != NULL, "\"%s\" lacks \"%s\"",
                  llm_tokenizer_last_error(), cases[i].want);
    }
}
