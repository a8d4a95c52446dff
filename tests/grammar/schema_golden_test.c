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
 *
 * golden/schema_oracle_cases.json (scripts/golden/grammar/
 * schema_oracle_cases.py) holds more schemas, hand-written edge cases and
 * seeded random ones, with the grammar llama.cpp's converter gives them;
 * there the texts must be equal byte for byte, except for the cases of
 * DEVIATIONS, where we differ on purpose.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/grammar.h"
#include "llama/json_schema.h"

#define GOLDEN "tests/grammar/golden/schema_cases.json"
#define ORACLE "tests/grammar/golden/schema_oracle_cases.json"

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

/* Where we differ from llama.cpp on purpose (see llama/json_schema.h). */
typedef enum { DEV_REFUSE, DEV_TEXT } dev_kind;
static const struct {
    const char *name;
    dev_kind kind;
    const char *why;
} DEVIATIONS[] = {
    {"pattern 27 ^é+$", DEV_TEXT, "a quantifier repeats the whole UTF-8 character, not its last byte"},
    {"random 065", DEV_TEXT, "a '-' in a property name is escaped in the additional-key class"},
    {"number minimum", DEV_REFUSE, "llama.cpp ignores minimum on numbers"},
    {"uniqueItems", DEV_REFUSE, "llama.cpp ignores unknown keywords"},
    {"required not in properties", DEV_REFUSE, "llama.cpp ignores the required name"},
    {"pattern + minLength", DEV_REFUSE, "llama.cpp ignores minLength beside pattern"},
};

static int deviation(const char *name, dev_kind *kind) {
    for (size_t i = 0; i < sizeof DEVIATIONS / sizeof DEVIATIONS[0]; i++)
        if (strcmp(DEVIATIONS[i].name, name) == 0) {
            *kind = DEVIATIONS[i].kind;
            return 1;
        }
    return 0;
}

Test(schema_golden, llama_cpp_converter_on_more_schemas) {
    json_error_t err;
    json_t *doc = json_load_file(ORACLE, 0, &err);
    cr_assert_not_null(doc, "%s: %s", ORACLE, err.text);
    json_t *cases = json_object_get(doc, "cases");
    size_t n_exact = 0, n_refused = 0, n_dev = 0, n_bad = 0;
    for (size_t i = 0; i < json_array_size(cases); i++) {
        json_t *tc = json_array_get(cases, i);
        const char *name = json_string_value(json_object_get(tc, "name"));
        const char *schema = json_string_value(json_object_get(tc, "schema"));
        const char *want = json_string_value(json_object_get(tc, "grammar")); /* NULL: not UTF-8 */
        int want_ok = strcmp(json_string_value(json_object_get(tc, "status")), "SUCCESS") == 0;
        char *gbnf = NULL;
        llm_status st = llm_json_schema_to_gbnf_alloc(schema, strlen(schema), NULL, &gbnf, NULL);
        dev_kind kind;
        int ok;
        if (deviation(name, &kind)) {
            ok = want_ok && (kind == DEV_REFUSE ? st < 0 : st == LLM_OK && (!want || strcmp(gbnf, want) != 0));
            n_dev += ok;
        } else if (!want_ok) {
            ok = st < 0;
            n_refused += ok;
        } else {
            ok = st == LLM_OK && want && strcmp(gbnf, want) == 0;
            n_exact += ok;
        }
        if (!ok) {
            n_bad++;
            cr_log_error("case '%s' %s\n# llama.cpp (%s):\n%s\n# ours (%s):\n%s", name, schema,
                         want_ok ? "ok" : "refused", want ? want : "(not UTF-8)", llm_status_str(st),
                         gbnf ? gbnf : llm_grammar_last_error());
        }
        llm_json_schema_free(gbnf);
    }
    cr_log_info("llama.cpp converter on %zu more schemas: %zu identical, %zu refused by both, %zu deliberate "
                "deviations, %zu disagree",
                json_array_size(cases), n_exact, n_refused, n_dev, n_bad);
    cr_expect_eq(n_bad, 0);
    json_decref(doc);
}
