/*
 * test_gbnf_fuzz.c -- malformed grammars give clean errors (a status, a
 * message with line and column, no crash, no hang): unterminated strings
 * and classes, bad escapes, huge repetition counts, deep nesting, invalid
 * UTF-8, long rule chains; then random mutations of valid grammars, each
 * parsed and, when it parses, matched against random bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "llama/grammar.h"

static llm_status try_parse(const char *s, size_t len) {
    llm_grammar *g = NULL;
    llm_status st = llm_grammar_parse(s, len, NULL, &g);
    if (st == LLM_OK) cr_assert_not_null(g);
    else cr_assert_null(g);
    llm_grammar_free(g);
    return st;
}

static void refused(const char *s, llm_status want, const char *where) {
    llm_status st = try_parse(s, strlen(s));
    cr_expect_eq(st, want, "%s: got %s (%s)", s, llm_status_str(st), llm_grammar_last_error());
    if (where) cr_expect(strstr(llm_grammar_last_error(), where) != NULL, "%s: message '%s' lacks '%s'", s,
                         llm_grammar_last_error(), where);
}

Test(gbnf_fuzz, malformed_grammars_give_clean_errors) {
    refused("root ::= \"abc", LLM_ERR_BAD_FORMAT, "line 1, column 10");
    refused("root ::= [abc", LLM_ERR_BAD_FORMAT, "column 10");
    refused("root ::= [a-", LLM_ERR_BAD_FORMAT, NULL);
    refused("root ::= \"\\q\"", LLM_ERR_BAD_FORMAT, "escape");
    refused("root ::= \"\\x4\"", LLM_ERR_BAD_FORMAT, "hex");
    refused("root ::= \"\\u12G4\"", LLM_ERR_BAD_FORMAT, "hex");
    refused("root ::= \"\\", LLM_ERR_BAD_FORMAT, NULL);
    refused("root ::= \"a\"{99999999999999999999999}", LLM_ERR_UNSUPPORTED, NULL);
    refused("root ::= \"a\"{3,2}", LLM_ERR_BAD_FORMAT, NULL);
    refused("root ::= \"a\"{", LLM_ERR_BAD_FORMAT, NULL);
    refused("root ::= \"a\"{1,x}", LLM_ERR_BAD_FORMAT, NULL);
    refused("root ::= *", LLM_ERR_BAD_FORMAT, NULL);
    refused("root ::= (\"a\"", LLM_ERR_BAD_FORMAT, "')'");
    refused("root ::= \"a\")", LLM_ERR_BAD_FORMAT, NULL);
    refused("root = \"a\"", LLM_ERR_BAD_FORMAT, "::=");
    refused("::= \"a\"", LLM_ERR_BAD_FORMAT, "name");
    refused("root ::= <[", LLM_ERR_BAD_FORMAT, NULL);
    refused("root ::= <[99999999999]>", LLM_ERR_BAD_FORMAT, NULL);
    refused("root ::= !x", LLM_ERR_BAD_FORMAT, NULL);
    refused("root ::= foo", LLM_ERR_BAD_FORMAT, "foo");
    refused("foo ::= \"a\"", LLM_ERR_BAD_FORMAT, "root");
    refused("", LLM_ERR_BAD_FORMAT, "root");
    refused("root ::= \"a\"\n\nx ::= \"b\" ]", LLM_ERR_BAD_FORMAT, "line 3");
    refused("root ::= \"\xC3\"", LLM_ERR_BAD_UTF8, NULL);
    refused("root ::= \"\xFF\"", LLM_ERR_BAD_UTF8, NULL);
    refused("root ::= [\xE2\x82]", LLM_ERR_BAD_UTF8, NULL);
    refused("root ::= x\nx ::= x \"a\"", LLM_ERR_BAD_FORMAT, "left recursion");
    cr_expect_eq(try_parse("root ::= \"a\"\0x", 14), LLM_ERR_BAD_FORMAT, "embedded NUL");
    llm_grammar *g = NULL;
    cr_expect_eq(llm_grammar_parse(NULL, 1, NULL, &g), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_grammar_parse("root ::= \"a\"", 12, NULL, NULL), LLM_ERR_INVALID_ARG);
}

Test(gbnf_fuzz, deep_nesting_and_long_chains) {
    size_t n = 100000;
    char *s = malloc(3 * n + 64);
    /* parentheses nested 100k deep: refused, no stack overflow */
    strcpy(s, "root ::= ");
    size_t k = strlen(s);
    for (size_t i = 0; i < n; i++) s[k++] = '(';
    s[k++] = '"', s[k++] = 'a', s[k++] = '"';
    for (size_t i = 0; i < n; i++) s[k++] = ')';
    s[k] = 0;
    cr_expect_eq(try_parse(s, k), LLM_ERR_UNSUPPORTED);
    /* 512 deep is fine */
    k = strlen("root ::= ");
    for (size_t i = 0; i < 500; i++) s[k++] = '(';
    s[k++] = '"', s[k++] = 'a', s[k++] = '"';
    for (size_t i = 0; i < 500; i++) s[k++] = ')';
    s[k] = 0;
    cr_expect_eq(try_parse(s, k), LLM_OK, "%s", llm_grammar_last_error());
    free(s);
    /* 50k rules, each the first symbol of the one before: the left-recursion
     * check walks them without recursion */
    size_t cap = 50000 * 32;
    s = malloc(cap);
    k = (size_t)snprintf(s, cap, "root ::= r0\n");
    for (int i = 0; i < 50000; i++) k += (size_t)snprintf(s + k, cap - k, "r%d ::= r%d \"a\"\n", i, i + 1);
    k += (size_t)snprintf(s + k, cap - k, "r50000 ::= \"z\"\n");
    llm_grammar *g = NULL;
    cr_assert_eq(llm_grammar_parse(s, k, NULL, &g), LLM_OK, "%s", llm_grammar_last_error());
    llm_grammar_matcher *m = NULL;
    cr_assert_eq(llm_grammar_matcher_create(g, NULL, NULL, &m), LLM_OK);
    cr_expect_eq(llm_grammar_matcher_accept_bytes(m, "zaaa", 4), LLM_OK);
    llm_grammar_matcher_free(m);
    llm_grammar_free(g);
    /* and the same chain closed into a cycle is refused */
    k = (size_t)snprintf(s, cap, "root ::= r0\n");
    for (int i = 0; i < 50000; i++) k += (size_t)snprintf(s + k, cap - k, "r%d ::= r%d \"a\"\n", i, i + 1);
    k += (size_t)snprintf(s + k, cap - k, "r50000 ::= r0 | \"z\"\n");
    cr_expect_eq(try_parse(s, k), LLM_ERR_BAD_FORMAT);
    free(s);
    /* repetitions of repetitions beyond llama.cpp's 2000 rules */
    cr_expect_eq(try_parse("root ::= ((\"a\"{0,100}){0,100})", 30), LLM_ERR_UNSUPPORTED);
    const char *big = "root ::= \"a\"{2000}";
    cr_expect_eq(try_parse(big, strlen(big)), LLM_OK);
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

Test(gbnf_fuzz, random_mutations, .timeout = 300) {
    static const char *seeds[] = {
        "root ::= object\nobject ::= \"{\" ws (string \":\" ws value (\",\" ws string \":\" ws value)*)? \"}\"\n"
        "value ::= object | string | [0-9]+ | \"true\"\nstring ::= \"\\\"\" [^\"\\\\]* \"\\\"\"\nws ::= [ \\t\\n]*\n",
        "root ::= (expr \"=\" term \"\\n\")+\nexpr ::= term ([-+*/] term)*\nterm ::= [0-9]+ | \"(\" expr \")\"\n",
        "root ::= [^\\x00-\\x1F]{2,5} .? \"\\u00e9\\U0001F600\" ( \"a\" | \"b\" ){0,3} # comment\n",
        "root ::= <[1]> (!<[2]>)* <[2]> [a-z\\-\\]]+\n",
    };
    const char alphabet[] = "()[]{}\"\\|*+?.^-<>!:=# \n\tab0129,xuU\xC3\xA9\xFF";
    char buf[512];
    for (int it = 0; it < 20000; it++) {
        const char *seed = seeds[rnd() % 4];
        size_t len = strlen(seed);
        memcpy(buf, seed, len);
        int n_mut = 1 + (int)(rnd() % 4);
        for (int k = 0; k < n_mut; k++) {
            size_t at = rnd() % len;
            switch (rnd() % 3) {
            case 0: buf[at] = alphabet[rnd() % (sizeof alphabet - 1)]; break;
            case 1: /* delete */
                memmove(buf + at, buf + at + 1, len - at - 1);
                len--;
                break;
            default: /* insert */
                if (len + 1 < sizeof buf) {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = alphabet[rnd() % (sizeof alphabet - 1)];
                    len++;
                }
            }
        }
        llm_grammar *g = NULL;
        llm_status st = llm_grammar_parse(buf, len, NULL, &g);
        if (st != LLM_OK) {
            cr_assert_null(g);
            cr_assert_neq(llm_grammar_last_error()[0], 0);
            continue;
        }
        llm_grammar_matcher *m = NULL;
        st = llm_grammar_matcher_create(g, NULL, NULL, &m);
        if (st == LLM_OK) {
            for (int k = 0; k < 16; k++) {
                char b = alphabet[rnd() % (sizeof alphabet - 1)];
                llm_grammar_matcher_accept_bytes(m, &b, 1);
            }
            llm_grammar_matcher_rollback(m, llm_grammar_matcher_n_steps(m) / 2);
            llm_grammar_matcher_can_end(m);
        }
        llm_grammar_matcher_free(m);
        size_t need = 0;
        cr_assert_eq(llm_grammar_print(g, NULL, 0, &need), LLM_ERR_BUFFER_TOO_SMALL);
        char *text = malloc(need + 1);
        cr_assert_eq(llm_grammar_print(g, text, need + 1, NULL), LLM_OK);
        llm_grammar *g2 = NULL;
        cr_expect_eq(llm_grammar_parse(text, need, NULL, &g2), LLM_OK, "printed text does not parse: %s\n%s\n(from %.*s)",
                     llm_grammar_last_error(), text, (int)len, buf);
        llm_grammar_free(g2);
        free(text);
        llm_grammar_free(g);
    }
}

/* Found by fuzz_grammar: nullable rules repeated 12+ times, 1-6 times over,
 * give tens of thousands of duplicate stacks per character before dedup
 * (once an insertion sort: 20 s). */
Test(gbnf_fuzz, ambiguous_repetition_stays_fast, .timeout = 10) {
    const char *g_text = "root ::=[b-z] *(\"x\" | y){12,}{1,6}\ny ::= [^q]*";
    llm_grammar *g = NULL;
    cr_assert_eq(llm_grammar_parse(g_text, strlen(g_text), NULL, &g), LLM_OK, "%s", llm_grammar_last_error());
    llm_grammar_matcher_params p = llm_grammar_matcher_default_params();
    p.max_stacks = 256;
    llm_grammar_matcher *m = NULL;
    cr_assert_eq(llm_grammar_matcher_create(g, NULL, &p, &m), LLM_OK);
    const char text[] = "*\0z](=f1,6}\nx ::= [^q]\n\0z]*\0(=fb-b-\0\0\x10x";
    for (int rep = 0; rep < 20; rep++)
        for (size_t i = 0; i + 1 < sizeof text; i++) {
            llm_status st = llm_grammar_matcher_accept_bytes(m, text + i, 1);
            cr_assert(st == LLM_OK || st == LLM_ERR_BAD_FORMAT || st == LLM_ERR_EXHAUSTED, "%s", llm_status_str(st));
        }
    llm_grammar_matcher_free(m);
    llm_grammar_free(g);
}
