/*
 * schema_golden_test.c -- every case of llama.cpp's
 * tests/test-json-schema-to-grammar.cpp (llama-cpp-python 0.3.36), as
 * extracted into golden/schema_cases.json by
 * scripts/golden/grammar/schema_extract_llamacpp_cases.py: SUCCESS cases
 * must convert to llama.cpp's grammar text, FAILURE cases must be refused.
 *
 * The comparison is llama.cpp's own: both texts pass through its trim()
 * (whitespace around the whole text and at the start of each line removed),
 * which only undoes the indentation of the C++ raw strings. Rule order and
 * everything inside a line must match exactly.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/grammar.h"
#include "llama/json_schema.h"

#define GOLDEN "tests/grammar/golden/schema_cases.json"

/* llama.cpp's trim(): strip " \n\r\t" around the text, then spaces and tabs
 * at the start of every line. Returns a malloc'd string. */
static char *trim(const char *s) {
    size_t n = strlen(s);
    while (n && strchr(" \n\r\t", s[n - 1]))
        n--;
    while (n && strchr(" \n\r\t", *s)) {
        s++;
        n--;
    }
    char *out = malloc(n + 1), *o = out;
    int line_start = 1;
    for (size_t i = 0; i < n; i++) {
        if (line_start && (s[i] == ' ' || s[i] == '\t'))
            continue;
        line_start = s[i] == '\n';
        *o++ = s[i];
    }
    *o = '\0';
    return out;
}

Test(schema_golden, llama_cpp_cases) {
    json_error_t err;
    json_t *doc = json_load_file(GOLDEN, 0, &err);
    cr_assert_not_null(doc, "%s: %s", GOLDEN, err.text);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "source")), "llama-cpp-python 0.3.36 (vendor/llama.cpp)");
    json_t *cases = json_object_get(doc, "cases");
    size_t n_exact = 0, n_refused = 0, n_bad = 0;
    for (size_t i = 0; i < json_array_size(cases); i++) {
        json_t *tc = json_array_get(cases, i);
        const char *name = json_string_value(json_object_get(tc, "name"));
        const char *schema = json_string_value(json_object_get(tc, "schema"));
        int want_ok = strcmp(json_string_value(json_object_get(tc, "status")), "SUCCESS") == 0;
        char *gbnf = NULL;
        llm_status st = llm_json_schema_to_gbnf_alloc(schema, strlen(schema), NULL, &gbnf, NULL);
        if (!want_ok) {
            if (st < 0) {
                n_refused++;
            } else {
                n_bad++;
                cr_log_error("case '%s': llama.cpp refuses it, we converted it:\n%s", name, gbnf);
            }
        } else if (st != LLM_OK) {
            n_bad++;
            cr_log_error("case '%s': %s: %s", name, llm_status_str(st), llm_grammar_last_error());
        } else {
            char *want = trim(json_string_value(json_object_get(tc, "grammar")));
            char *got = trim(gbnf);
            if (strcmp(want, got) == 0) {
                n_exact++;
            } else {
                n_bad++;
                cr_log_error("case '%s':\n# EXPECTED:\n%s\n# ACTUAL:\n%s", name, want, got);
            }
            free(want);
            free(got);
        }
        llm_json_schema_free(gbnf);
    }
    cr_log_info("llama.cpp schema cases: %zu converted to the exact grammar, %zu refused as llama.cpp does, "
                "%zu disagree",
                n_exact, n_refused, n_bad);
    cr_expect_eq(n_exact + n_refused, json_array_size(cases));
    cr_expect_eq(n_bad, 0);
    json_decref(doc);
}
