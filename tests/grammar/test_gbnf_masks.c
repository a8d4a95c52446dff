/*
 * test_gbnf_masks.c -- token masks equal a brute-force reference: at random
 * reachable matcher states (random allowed tokens accepted, with rollbacks
 * and clones on the way), every token's bytes are fed through a clone of
 * the matcher and accepted or not exactly as the mask says. Real
 * vocabularies: the default model's (SmolLM2, 49k) and Qwen2's (152k).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "llama/grammar.h"
#include "llama/tokenizer.h"

/* The one place that reads a tokenizer: token bytes, EOG and control flags. */
static llm_grammar_vocab *load_vocab(const char *path) {
    llm_tokenizer *tok = NULL;
    if (llm_tokenizer_load(path, &tok) != LLM_OK) return NULL;
    int32_t n = llm_tokenizer_n_tokens(tok);
    const char **bytes = malloc((size_t)n * sizeof *bytes);
    size_t *lens = malloc((size_t)n * sizeof *lens);
    uint8_t *flags = malloc((size_t)n);
    for (int32_t t = 0; t < n; t++) {
        bytes[t] = llm_tokenizer_token_bytes(tok, t, &lens[t]);
        llm_token_type ty = llm_tokenizer_token_type(tok, t);
        flags[t] = (uint8_t)((llm_tokenizer_is_eog(tok, t) ? LLM_GRAMMAR_TOKEN_EOG : 0) |
                             (ty == LLM_TOKEN_TYPE_CONTROL || ty == LLM_TOKEN_TYPE_UNUSED ||
                                      ty == LLM_TOKEN_TYPE_UNKNOWN
                                  ? LLM_GRAMMAR_TOKEN_SPECIAL
                                  : 0));
    }
    llm_grammar_vocab *v = NULL;
    llm_grammar_vocab_create(bytes, lens, n, flags, &v);
    free(bytes), free(lens), free(flags);
    llm_tokenizer_free(tok);
    return v;
}

static const char *JSON_GBNF =
    "root   ::= object\n"
    "value  ::= object | array | string | number | (\"true\" | \"false\" | \"null\") ws\n"
    "object ::= \"{\" ws ( string \":\" ws value (\",\" ws string \":\" ws value)* )? \"}\" ws\n"
    "array  ::= \"[\" ws ( value (\",\" ws value)* )? \"]\" ws\n"
    "string ::= \"\\\"\" ( [^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4}) )* \"\\\"\" ws\n"
    "number ::= (\"-\"? ([0-9] | [1-9] [0-9]{0,15})) (\".\" [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws\n"
    "ws ::= | \" \" | \"\\n\" [ \\t]{0,20}\n";

static const char *OTHER_GBNF[] = {
    /* code points beyond ASCII: partial UTF-8 across tokens */
    "root ::= \"<\" [a-zé€\\u4e00-\\u9fff\\U0001F600-\\U0001F64F]+ (\" \" [^<>]*)? \">\"\n",
    /* arithmetic, ambiguous spaces */
    "root ::= (expr \"=\" ws term \"\\n\")+\nexpr ::= term ([-+*/] term)*\n"
    "term ::= ident | num | \"(\" ws expr \")\" ws\nident ::= [a-z] [a-z0-9_]* ws\nnum ::= [0-9]+ ws\nws ::= [ \\t\\n]*\n",
    /* any text, then a fixed end: `.` and negation */
    "root ::= \"Answer: \" [^\\n.]* \".\" .{0,3}\n",
};

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static int bit(const uint32_t *m, int32_t t) { return (m[t >> 5] >> (t & 31)) & 1; }

static void check_brute_force(const llm_grammar_matcher *m, const uint32_t *mask, int32_t n, const char *what) {
    llm_grammar_matcher *c = NULL;
    cr_assert_eq(llm_grammar_matcher_clone(m, &c), LLM_OK);
    int bad = 0;
    for (int32_t t = 0; t < n; t++) {
        llm_status st = llm_grammar_matcher_accept_token(c, t);
        int ok = st == LLM_OK;
        if (ok) cr_assert_eq(llm_grammar_matcher_rollback(c, 1), LLM_OK);
        if (ok != bit(mask, t) && bad++ < 5)
            cr_expect_fail("%s: token %d: mask %d, accept %d (%s)", what, t, bit(mask, t), ok, llm_status_str(st));
    }
    cr_expect_eq(bad, 0, "%s: %d tokens disagree", what, bad);
    llm_grammar_matcher_free(c);
}

/* A text the JSON walk follows (nesting, escapes, multi-byte characters),
 * so that its states are deep ones and not only the first few. */
static const char *JSON_TEXT =
    "{\"name\": \"Zo\u00eb \U0001F600 \u65e5\u672c \\\"q\\\" \\n\", \"list\": [1, -2.5e3, true, null, "
    "{\"a\": [], \"b\": {}}], \"n\": 12345678}";

/* Walks n_steps random allowed tokens, checking the mask every check_every
 * steps; with guide, only tokens that continue the guide text when some do. */
static void walk(const char *gbnf, const llm_grammar_vocab *v, int n_steps, int check_every, const char *what,
                 const char *guide) {
    llm_grammar *g = NULL;
    cr_assert_eq(llm_grammar_parse(gbnf, strlen(gbnf), v, &g), LLM_OK, "%s", llm_grammar_last_error());
    llm_grammar_matcher *m = NULL;
    cr_assert_eq(llm_grammar_matcher_create(g, v, NULL, &m), LLM_OK);
    int32_t n = llm_grammar_vocab_n_tokens(v);
    size_t nw = LLM_GRAMMAR_MASK_WORDS(n);
    uint32_t *mask = malloc(nw * sizeof *mask), *mask2 = malloc(nw * sizeof *mask2);
    int32_t *allowed = malloc((size_t)n * sizeof *allowed);
    int32_t prev = -1;
    for (int step = 0; step < n_steps; step++) {
        cr_assert_eq(llm_grammar_matcher_fill_mask(m, mask, nw), LLM_OK, "%s", llm_grammar_last_error());
        char label[128];
        snprintf(label, sizeof label, "%s step %d", what, step);
        if (step % check_every == 0) check_brute_force(m, mask, n, label);
        if (step % 7 == 3) { /* a clone gives the same mask */
            llm_grammar_matcher *c = NULL;
            cr_assert_eq(llm_grammar_matcher_clone(m, &c), LLM_OK);
            cr_assert_eq(llm_grammar_matcher_fill_mask(c, mask2, nw), LLM_OK);
            cr_expect_eq(memcmp(mask, mask2, nw * sizeof *mask), 0, "%s: clone mask differs", label);
            llm_grammar_matcher_free(c);
        }
        int32_t k = 0; /* allowed tokens, EOG only when nothing else is */
        size_t rest = guide ? strlen(guide) : 0;
        for (int32_t t = 0; t < n && rest; t++) {
            size_t len;
            const char *b = llm_grammar_vocab_token_bytes(v, t, &len);
            if (bit(mask, t) && len && len <= rest && memcmp(b, guide, len) == 0) allowed[k++] = t;
        }
        for (int32_t t = 0; t < n && k == 0; t++)
            if (bit(mask, t) && !(llm_grammar_vocab_token_flags(v, t) & LLM_GRAMMAR_TOKEN_EOG)) allowed[k++] = t;
        if (k == 0) break;
        int32_t t = allowed[rnd() % (uint32_t)k];
        cr_assert_eq(llm_grammar_matcher_accept_token(m, t), LLM_OK);
        if (step % 5 == 3) prev = t;
        if (guide && rest) {
            size_t len;
            llm_grammar_vocab_token_bytes(v, t, &len);
            guide = len <= rest ? guide + len : guide + rest;
        }
        if (step % 5 == 4 && prev >= 0) {
            /* roll back two, and the mask is the one of two steps ago */
            cr_assert_eq(llm_grammar_matcher_rollback(m, 2), LLM_OK);
            cr_assert_eq(llm_grammar_matcher_fill_mask(m, mask2, nw), LLM_OK);
            llm_grammar_matcher *c = NULL;
            cr_assert_eq(llm_grammar_matcher_clone(m, &c), LLM_OK);
            check_brute_force(c, mask2, n, "after rollback");
            llm_grammar_matcher_free(c);
            /* and accepting the same two again gives the same state */
            cr_assert_eq(llm_grammar_matcher_accept_token(m, prev), LLM_OK);
            cr_assert_eq(llm_grammar_matcher_accept_token(m, t), LLM_OK);
        }
    }
    free(mask), free(mask2), free(allowed);
    llm_grammar_matcher_free(m);
    llm_grammar_free(g);
}

static llm_grammar_vocab *vocab_or_skip(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) cr_skip("missing %s", path);
    fclose(f);
    llm_grammar_vocab *v = load_vocab(path);
    cr_assert_not_null(v, "cannot load the vocabulary of %s", path);
    return v;
}

static void run_all(const char *path) {
    llm_grammar_vocab *v = vocab_or_skip(path);
    walk(JSON_GBNF, v, 60, 3, "json", JSON_TEXT);
    walk(JSON_GBNF, v, 12, 4, "json (free)", NULL);
    for (size_t i = 0; i < sizeof OTHER_GBNF / sizeof *OTHER_GBNF; i++) {
        char what[32];
        snprintf(what, sizeof what, "grammar %zu", i);
        walk(OTHER_GBNF[i], v, 12, 4, what, NULL);
    }
    llm_grammar_vocab_free(v);
}

Test(gbnf_masks, default_model_vocab, .timeout = 600) {
    const char *p = getenv("LLM_DEFAULT_MODEL");
    if (!p || !*p) cr_skip("LLM_DEFAULT_MODEL not set");
    run_all(p);
}

Test(gbnf_masks, qwen2_vocab, .timeout = 600) {
    char path[1024];
    const char *d = getenv("LLM_TESTDATA_DIR");
    snprintf(path, sizeof path, "%s/llama-cpp-vocab/ggml-vocab-qwen2.gguf", d ? d : "../shared/testdata");
    run_all(path);
}
