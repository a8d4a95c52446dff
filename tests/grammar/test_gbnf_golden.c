/*
 * test_gbnf_golden.c -- the GBNF parser and matcher against llama.cpp's own
 * test cases (golden/integration_cases.json, golden/parser_cases.json, made
 * by scripts/golden/grammar/extract_llamacpp_cases.py from llama-cpp-python
 * 0.3.36): every pass/fail string agrees with llama.cpp, every grammar it
 * refuses is refused, every parse gives llama.cpp's rules element for
 * element, every example grammar (grammars/NAME.gbnf) parses, and printing a grammar gives text
 * that parses to a grammar accepting the same strings.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "gbnf_internal.h"

static json_t *load(const char *name) {
    char path[512];
    const char *src = getenv("LLM_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/grammar/golden/%s", src ? src : ".", name);
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    cr_assert_not_null(j, "%s: %s", path, err.text);
    return j;
}

static llm_grammar *parse_str(const char *s) {
    llm_grammar *g = NULL;
    llm_status st = llm_grammar_parse(s, strlen(s), NULL, &g);
    cr_assert_eq(st, LLM_OK, "parse failed (%s): %s\n%s", llm_status_str(st), llm_grammar_last_error(), s);
    return g;
}

/* llama.cpp's test feeds text one code point at a time, each as a token
 * (id 0) with that piece, so a token reference like !<[11]> matches a text
 * character too. The same here: ids below 64 are the cases' token ids (they
 * match only as references); every code point of the cases is a text token
 * of its own above them. */
#define N_REF 64
typedef struct cvocab {
    llm_grammar_vocab *v;
    char (*cp)[16];
    int32_t n;
} cvocab;

static int32_t cp_token(const cvocab *cv, const char *s, size_t n) {
    for (int32_t i = N_REF; i < cv->n; i++)
        if (strlen(cv->cp[i]) == n && memcmp(cv->cp[i], s, n) == 0) return i;
    return -1;
}

static void add_cps(cvocab *cv, json_t *segs) {
    size_t i;
    json_t *s;
    json_array_foreach(segs, i, s) {
        if (!json_is_string(s)) continue;
        const char *t = json_string_value(s);
        size_t len = json_string_length(s);
        for (size_t k = 0; k < len;) {
            size_t n = 1;
            while (k + n < len && ((unsigned char)t[k + n] & 0xC0) == 0x80) n++;
            if (cp_token(cv, t + k, n) < 0) {
                cv->cp = realloc(cv->cp, (size_t)(cv->n + 1) * sizeof *cv->cp);
                memcpy(cv->cp[cv->n], t + k, n);
                cv->cp[cv->n][n] = 0;
                cv->n++;
            }
            k += n;
        }
    }
}

static cvocab case_vocab(json_t *cases) {
    cvocab cv = {NULL, calloc(N_REF, sizeof *cv.cp), N_REF};
    size_t i;
    json_t *c, *s;
    json_array_foreach(cases, i, c) {
        size_t k;
        json_array_foreach(json_object_get(c, "pass"), k, s) add_cps(&cv, s);
        json_array_foreach(json_object_get(c, "fail"), k, s) add_cps(&cv, s);
    }
    const char **bytes = malloc((size_t)cv.n * sizeof *bytes);
    size_t *lens = malloc((size_t)cv.n * sizeof *lens);
    uint8_t *flags = malloc((size_t)cv.n);
    for (int32_t t = 0; t < cv.n; t++) {
        if (t < N_REF) snprintf(cv.cp[t], sizeof cv.cp[t], "#%d", (int)t);
        bytes[t] = cv.cp[t];
        lens[t] = strlen(cv.cp[t]);
        flags[t] = t < N_REF ? LLM_GRAMMAR_TOKEN_SPECIAL : 0;
    }
    cr_assert_eq(llm_grammar_vocab_create(bytes, lens, cv.n, flags, &cv.v), LLM_OK);
    free(bytes), free(lens), free(flags);
    return cv;
}

static void cvocab_free(cvocab *cv) {
    llm_grammar_vocab_free(cv->v);
    free(cv->cp);
}

/* Feeds the segments and says whether the grammar matched all of it. */
static int matches(const llm_grammar *g, const cvocab *cv, json_t *segs) {
    llm_grammar_matcher *m = NULL;
    cr_assert_eq(llm_grammar_matcher_create(g, cv->v, NULL, &m), LLM_OK);
    int ok = 1;
    size_t i;
    json_t *s;
    json_array_foreach(segs, i, s) {
        if (!ok) break;
        if (json_is_integer(s)) {
            ok = llm_grammar_matcher_accept_token(m, (int32_t)json_integer_value(s)) == LLM_OK;
            continue;
        }
        const char *t = json_string_value(s);
        size_t len = json_string_length(s);
        for (size_t k = 0; k < len && ok;) {
            size_t n = 1;
            while (k + n < len && ((unsigned char)t[k + n] & 0xC0) == 0x80) n++;
            ok = llm_grammar_matcher_accept_token(m, cp_token(cv, t + k, n)) == LLM_OK;
            k += n;
        }
    }
    ok = ok && llm_grammar_matcher_can_end(m);
    llm_grammar_matcher_free(m);
    return ok;
}

static void check_case(const llm_grammar *g, const cvocab *v, json_t *c, const char *what) {
    const char *desc = json_string_value(json_object_get(c, "desc"));
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(c, "pass"), i, s)
        cr_expect(matches(g, v, s), "%s: '%s' pass string %zu refused", what, desc, i);
    json_array_foreach(json_object_get(c, "fail"), i, s)
        cr_expect(!matches(g, v, s), "%s: '%s' fail string %zu accepted", what, desc, i);
}

Test(gbnf_golden, integration_strings_agree_with_llamacpp) {
    json_t *doc = load("integration_cases.json");
    cvocab cvv = case_vocab(json_object_get(doc, "cases")), *v = &cvv;
    size_t i, n_strings = 0;
    json_t *c;
    json_array_foreach(json_object_get(doc, "cases"), i, c) {
        llm_grammar *g = parse_str(json_string_value(json_object_get(c, "grammar")));
        check_case(g, v, c, "parsed");
        n_strings += json_array_size(json_object_get(c, "pass")) + json_array_size(json_object_get(c, "fail"));
        llm_grammar_free(g);
    }
    cr_expect_gt(n_strings, 100);
    cvocab_free(v);
    json_decref(doc);
}

Test(gbnf_golden, printed_grammar_accepts_the_same_strings) {
    json_t *doc = load("integration_cases.json");
    cvocab cvv = case_vocab(json_object_get(doc, "cases")), *v = &cvv;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(doc, "cases"), i, c) {
        llm_grammar *g = parse_str(json_string_value(json_object_get(c, "grammar")));
        size_t need = 0;
        cr_assert_eq(llm_grammar_print(g, NULL, 0, &need), LLM_ERR_BUFFER_TOO_SMALL);
        char *text = malloc(need + 1);
        size_t got = 0;
        cr_assert_eq(llm_grammar_print(g, text, need + 1, &got), LLM_OK);
        cr_assert_eq(got, need);
        llm_grammar *g2 = parse_str(text);
        cr_expect_eq(llm_grammar_n_rules(g2), llm_grammar_n_rules(g), "%s", text);
        check_case(g2, v, c, "printed");
        llm_grammar_free(g2);
        llm_grammar_free(g);
        free(text);
    }
    cvocab_free(v);
    json_decref(doc);
}

static void expect_refused(json_t *list) {
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c) {
        const char *s = json_string_value(json_object_get(c, "grammar"));
        llm_grammar *g = NULL;
        llm_status st = llm_grammar_parse(s, strlen(s), NULL, &g);
        cr_expect_lt(st, 0, "accepted a grammar llama.cpp refuses:\n%s", s);
        cr_expect_null(g);
        cr_expect_neq(llm_grammar_last_error()[0], 0);
        llm_grammar_free(g);
    }
}

Test(gbnf_golden, refusals_agree_with_llamacpp) {
    json_t *doc = load("integration_cases.json");
    expect_refused(json_object_get(doc, "refuse"));
    cr_expect_eq(json_array_size(json_object_get(doc, "refuse")), 7);
    json_decref(doc);
    doc = load("parser_cases.json");
    expect_refused(json_object_get(doc, "refuse"));
    json_decref(doc);
}

static uint32_t type_of(const char *name) {
    static const char *names[] = {"END", "ALT", "RULE_REF", "CHAR", "CHAR_NOT",
                                  "CHAR_RNG_UPPER", "CHAR_ALT", "CHAR_ANY", "TOKEN", "TOKEN_NOT"};
    for (uint32_t t = 0; t < 10; t++)
        if (strcmp(names[t], name) == 0) return t;
    cr_assert_fail("unknown element type %s", name);
    return 0;
}

Test(gbnf_golden, parses_to_llamacpp_rules) {
    json_t *doc = load("parser_cases.json");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(doc, "parse"), i, c) {
        const char *text = json_string_value(json_object_get(c, "grammar"));
        llm_grammar *g = parse_str(text);
        json_t *syms = json_object_get(c, "symbols"), *els = json_object_get(c, "elements");
        cr_expect_eq(g->n_rules, json_object_size(syms), "%s", text);
        const char *name;
        json_t *id;
        json_object_foreach(syms, name, id) {
            json_int_t r = json_integer_value(id);
            cr_assert_lt((uint32_t)r, g->n_rules, "%s", text);
            cr_expect_str_eq(g->rule_names[r], name, "%s", text);
        }
        cr_assert_eq(g->n_elems, json_array_size(els), "%s", text);
        size_t k;
        json_t *e;
        json_array_foreach(els, k, e) {
            cr_expect_eq(g->elems[k].type, type_of(json_string_value(json_array_get(e, 0))), "%s elem %zu", text, k);
            cr_expect_eq(g->elems[k].value, (uint32_t)json_integer_value(json_array_get(e, 1)), "%s elem %zu", text, k);
        }
        llm_grammar_free(g);
    }
    json_decref(doc);
}

Test(gbnf_golden, llamacpp_example_grammars_parse) {
    json_t *doc = load("parser_cases.json");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(doc, "grammar_files"), i, c) {
        const char *text = json_string_value(json_object_get(c, "grammar"));
        llm_grammar *g = NULL;
        llm_status st = llm_grammar_parse(text, strlen(text), NULL, &g);
        cr_expect_eq(st, LLM_OK, "%s: %s", json_string_value(json_object_get(c, "name")), llm_grammar_last_error());
        if (g) {
            llm_grammar_matcher *m = NULL;
            cr_expect_eq(llm_grammar_matcher_create(g, NULL, NULL, &m), LLM_OK);
            llm_grammar_matcher_free(m);
        }
        llm_grammar_free(g);
    }
    cr_expect_eq(json_array_size(json_object_get(doc, "grammar_files")), 8);
    json_decref(doc);
}

/* Our own printer's text (not llama.cpp's: its print writes no valid GBNF
 * for generated rules): escapes, classes, groups and repetitions. */
Test(gbnf_golden, print_writes_gbnf) {
    const char *text = "root ::= \"a\\n\\\"\" [^\"\\\\x-z\\]^] . x? <[5]> !<[6]> ( \"b\" | ) {2}\n"
                       "x ::= \"\xc3\xa9\\x01\" | [\\u4e00-\\u9fff]+\n";
    const char *want = "root ::= \"a\\n\\\"\" [^\\\"\\\\x-z\\]\\x5E] . root-2 <[5]> !<[6]> root-3 root-3\n"
                       "x ::= \"\xc3\xa9\\x01\" | [\xe4\xb8\x80-\xe9\xbf\xbf] x-4\n"
                       "root-2 ::= x | \"\"\n"
                       "root-3 ::= \"b\" | \"\"\n"
                       "x-4 ::= [\xe4\xb8\x80-\xe9\xbf\xbf] x-4 | \"\"\n";
    llm_grammar *g = parse_str(text);
    char buf[1024];
    size_t n = 0;
    cr_assert_eq(llm_grammar_print(g, buf, sizeof buf, &n), LLM_OK);
    cr_expect_str_eq(buf, want);
    cr_expect_eq(n, strlen(want));
    llm_grammar_free(g);
}
