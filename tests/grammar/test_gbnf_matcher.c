/*
 * test_gbnf_matcher.c -- the matcher's contract on small hand-made
 * vocabularies: UTF-8 split across tokens, token references, EOG, rollback,
 * clone, lazy triggers (words and tokens), the stack bound, and masks
 * against a brute-force reference.
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "llama/grammar.h"

static llm_grammar *parse(const char *s, const llm_grammar_vocab *v) {
    llm_grammar *g = NULL;
    cr_assert_eq(llm_grammar_parse(s, strlen(s), v, &g), LLM_OK, "%s", llm_grammar_last_error());
    return g;
}

/* Tokens: NULL-terminated list of byte strings; "\x01EOG" marks EOG, "\x01SP:" a special token. */
static llm_grammar_vocab *vocab(const char *const *toks) {
    const char *b[64];
    size_t l[64];
    uint8_t f[64];
    int32_t n = 0;
    for (; toks[n]; n++) {
        f[n] = 0;
        b[n] = toks[n];
        if (strcmp(toks[n], "\x01" "EOG") == 0) {
            f[n] = LLM_GRAMMAR_TOKEN_EOG;
            b[n] = "</s>";
        } else if (strncmp(toks[n], "\x01SP:", 4) == 0) {
            f[n] = LLM_GRAMMAR_TOKEN_SPECIAL;
            b[n] = toks[n] + 4;
        }
        l[n] = strlen(b[n]);
    }
    llm_grammar_vocab *v = NULL;
    cr_assert_eq(llm_grammar_vocab_create(b, l, n, f, &v), LLM_OK);
    return v;
}

static int bit(const uint32_t *m, int32_t t) { return (m[t >> 5] >> (t & 31)) & 1; }

/* Mask of m equals, token by token, what accept_token on a clone says. */
static void check_mask(const llm_grammar_matcher *m, const llm_grammar_vocab *v) {
    uint32_t mask[4];
    int32_t n = llm_grammar_vocab_n_tokens(v);
    llm_grammar_matcher *c = NULL;
    cr_assert_eq(llm_grammar_matcher_clone(m, &c), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_fill_mask(c, mask, 4), LLM_OK);
    for (int32_t t = 0; t < n; t++) {
        int ok = llm_grammar_matcher_accept_token(c, t) == LLM_OK;
        if (ok) llm_grammar_matcher_rollback(c, 1);
        cr_expect_eq(ok, bit(mask, t), "token %d: accept %d mask %d", t, ok, bit(mask, t));
    }
    llm_grammar_matcher_free(c);
}

static const char *const TOKS[] = {
    "\x01" "EOG", "a", "b", "ab", "\xC3", "\xA9", "\xC3\xA9", "\xE2\x82", "\xAC", "\"", "{", "}",
    "\x01SP:<think>", "\x01SP:</think>", "x", " ", "\xFF", "", NULL};
enum { T_EOG, T_A, T_B, T_AB, T_C3, T_A9, T_E_ACUTE, T_E2_82, T_AC, T_QUOTE, T_LB, T_RB, T_THINK, T_ENDTHINK,
       T_X, T_SPACE, T_FF, T_EMPTY };

Test(gbnf_matcher, utf8_split_across_tokens) {
    llm_grammar_vocab *v = vocab(TOKS);
    llm_grammar *g = parse("root ::= [a-b\\u00e9\\u20ac]+", v);
    llm_grammar_matcher *m = NULL;
    cr_assert_eq(llm_grammar_matcher_create(g, v, NULL, &m), LLM_OK);
    check_mask(m, v);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_C3), LLM_OK); /* half of é */
    cr_expect_not(llm_grammar_matcher_can_end(m));
    check_mask(m, v);
    cr_expect_lt(llm_grammar_matcher_accept_token(m, T_A), 0); /* 'a' cannot continue a sequence */
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_A9), LLM_OK);
    cr_expect(llm_grammar_matcher_can_end(m));
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_E2_82), LLM_OK); /* two thirds of € */
    check_mask(m, v);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_AC), LLM_OK);
    cr_expect_lt(llm_grammar_matcher_accept_token(m, T_FF), 0); /* never valid UTF-8 */
    cr_expect_lt(llm_grammar_matcher_accept_token(m, T_EMPTY), 0);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_EOG), LLM_OK);
    cr_expect_lt(llm_grammar_matcher_accept_token(m, T_A), 0, "nothing after EOG");
    llm_grammar_matcher_free(m);
    llm_grammar_free(g);
    llm_grammar_vocab_free(v);
}

Test(gbnf_matcher, token_references_and_special_tokens) {
    llm_grammar_vocab *v = vocab(TOKS);
    llm_grammar *g = parse("root ::= <think> (!<[13]>)* </think> \"x\"", v);
    llm_grammar_matcher *m = NULL;
    cr_assert_eq(llm_grammar_matcher_create(g, v, NULL, &m), LLM_OK);
    /* the text "<think>" is no special token's way in: only the token */
    check_mask(m, v);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_THINK), LLM_OK);
    check_mask(m, v);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_AB), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_THINK), LLM_OK);
    cr_expect_lt(llm_grammar_matcher_accept_token(m, T_EOG), 0);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_ENDTHINK), LLM_OK);
    check_mask(m, v);
    cr_assert_eq(llm_grammar_matcher_accept_bytes(m, "x", 1), LLM_OK);
    cr_expect(llm_grammar_matcher_can_end(m));
    check_mask(m, v);
    llm_grammar_matcher_free(m);
    llm_grammar_free(g);
    /* a name that is no token is refused; so is an id beyond the vocabulary */
    llm_grammar *bad = NULL;
    cr_expect_eq(llm_grammar_parse("root ::= <nope>", 15, v, &bad), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(llm_grammar_parse("root ::= <[99]>", 15, v, &bad), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(llm_grammar_parse("root ::= <think>", 16, NULL, &bad), LLM_ERR_BAD_FORMAT);
    llm_grammar_vocab_free(v);
}

Test(gbnf_matcher, rollback_and_clone) {
    llm_grammar_vocab *v = vocab(TOKS);
    llm_grammar *g = parse("root ::= \"{\" ( \"a\" | \"b\" )* \"}\"", v);
    llm_grammar_matcher *m = NULL;
    cr_assert_eq(llm_grammar_matcher_create(g, v, NULL, &m), LLM_OK);
    uint32_t m0[1], m1[1];
    cr_assert_eq(llm_grammar_matcher_fill_mask(m, m0, 1), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_LB), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_AB), LLM_OK);
    llm_grammar_matcher *c = NULL;
    cr_assert_eq(llm_grammar_matcher_clone(m, &c), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_RB), LLM_OK);
    cr_expect(llm_grammar_matcher_can_end(m));
    cr_expect_not(llm_grammar_matcher_can_end(c), "the clone is independent");
    cr_expect_eq(llm_grammar_matcher_n_steps(m), 3);
    cr_expect_eq(llm_grammar_matcher_rollback(m, 4), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_grammar_matcher_n_steps(m), 3);
    cr_assert_eq(llm_grammar_matcher_rollback(m, 3), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_fill_mask(m, m1, 1), LLM_OK);
    cr_expect_eq(m0[0], m1[0]);
    cr_expect_lt(llm_grammar_matcher_accept_token(m, T_A), 0, "back at the start: '{' first");
    /* a refused step changes nothing */
    cr_expect_eq(llm_grammar_matcher_n_steps(m), 0);
    cr_assert_eq(llm_grammar_matcher_accept_token(c, T_B), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_accept_token(c, T_RB), LLM_OK);
    cr_expect(llm_grammar_matcher_can_end(c));
    llm_grammar_matcher_free(c);
    llm_grammar_matcher_free(m);
    llm_grammar_free(g);
    llm_grammar_vocab_free(v);
}

Test(gbnf_matcher, lazy_trigger_word) {
    llm_grammar_vocab *v = vocab(TOKS);
    llm_grammar *g = parse("root ::= \"{\" [ab]* \"}\"", v);
    llm_grammar_matcher_params p = llm_grammar_matcher_default_params();
    const char *words[] = {"x{"};
    p.lazy = 1;
    p.trigger_words = words;
    p.n_trigger_words = 1;
    llm_grammar_matcher *m = NULL;
    cr_assert_eq(llm_grammar_matcher_create(g, v, &p, &m), LLM_OK);
    uint32_t mask[1];
    cr_assert_eq(llm_grammar_matcher_fill_mask(m, mask, 1), LLM_OK);
    cr_expect_eq(mask[0], (1u << 18) - 1, "unconstrained before the trigger");
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_B), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_B), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_X), LLM_OK);
    /* "{" completes the trigger "x{": the grammar gets "x{" and refuses the 'x' */
    cr_expect_lt(llm_grammar_matcher_accept_token(m, T_LB), 0);
    llm_grammar_matcher_free(m);
    /* a trigger whose text the grammar takes from the trigger on */
    const char *w2[] = {"{"};
    p.trigger_words = w2;
    cr_assert_eq(llm_grammar_matcher_create(g, v, &p, &m), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_X), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_LB), LLM_OK);
    cr_expect_not(llm_grammar_matcher_can_end(m));
    check_mask(m, v);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_AB), LLM_OK);
    cr_expect_lt(llm_grammar_matcher_accept_token(m, T_X), 0, "constrained now");
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_RB), LLM_OK);
    cr_expect(llm_grammar_matcher_can_end(m));
    cr_assert_eq(llm_grammar_matcher_rollback(m, 3), LLM_OK); /* back before the trigger */
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_X), LLM_OK, "unconstrained again");
    llm_grammar_matcher_free(m);
    llm_grammar_free(g);
    llm_grammar_vocab_free(v);
}

Test(gbnf_matcher, lazy_trigger_word_inside_a_token) {
    static const char *const toks[] = {"\x01" "EOG", "ab", "c{a", "}", "a", NULL};
    llm_grammar_vocab *v = vocab(toks);
    llm_grammar *g = parse("root ::= \"c{\" \"a\"+ \"}\"", v);
    llm_grammar_matcher_params p = llm_grammar_matcher_default_params();
    const char *words[] = {"c{"};
    p.lazy = 1;
    p.trigger_words = words;
    p.n_trigger_words = 1;
    llm_grammar_matcher *m = NULL;
    cr_assert_eq(llm_grammar_matcher_create(g, v, &p, &m), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, 1), LLM_OK); /* "ab" */
    cr_assert_eq(llm_grammar_matcher_accept_token(m, 2), LLM_OK); /* "c{a": the grammar gets "c{a" */
    check_mask(m, v);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, 3), LLM_OK);
    cr_expect(llm_grammar_matcher_can_end(m));
    llm_grammar_matcher_free(m);
    llm_grammar_free(g);
    llm_grammar_vocab_free(v);
}

Test(gbnf_matcher, lazy_trigger_token) {
    llm_grammar_vocab *v = vocab(TOKS);
    llm_grammar *g = parse("root ::= <think> [ab]+", v);
    llm_grammar_matcher_params p = llm_grammar_matcher_default_params();
    int32_t tt[] = {T_THINK};
    p.lazy = 1;
    p.trigger_tokens = tt;
    p.n_trigger_tokens = 1;
    llm_grammar_matcher *m = NULL;
    cr_assert_eq(llm_grammar_matcher_create(g, v, &p, &m), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_X), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_THINK), LLM_OK);
    cr_expect_lt(llm_grammar_matcher_accept_token(m, T_X), 0);
    cr_assert_eq(llm_grammar_matcher_accept_token(m, T_A), LLM_OK);
    check_mask(m, v);
    llm_grammar_matcher_free(m);
    p.lazy = 1;
    p.n_trigger_tokens = 0;
    cr_expect_eq(llm_grammar_matcher_create(g, v, &p, &m), LLM_ERR_INVALID_ARG, "lazy needs a trigger");
    llm_grammar_free(g);
    llm_grammar_vocab_free(v);
}

Test(gbnf_matcher, ambiguous_grammar_hits_the_stack_bound) {
    /* every 'a' doubles the ways to split the text: a clean error, not a hang */
    llm_grammar *g = parse("root ::= x*\nx ::= \"a\" | \"a\" \"a\" | \"a\" \"a\" \"a\" | y\ny ::= [a]", NULL);
    llm_grammar_matcher_params p = llm_grammar_matcher_default_params();
    p.max_stacks = 8;
    llm_grammar_matcher *m = NULL;
    cr_assert_eq(llm_grammar_matcher_create(g, NULL, &p, &m), LLM_OK);
    llm_status st = LLM_OK;
    for (int i = 0; i < 64 && st == LLM_OK; i++) st = llm_grammar_matcher_accept_bytes(m, "a", 1);
    cr_expect(st == LLM_OK || st == LLM_ERR_EXHAUSTED, "%s", llm_status_str(st));
    llm_grammar_matcher_free(m);
    llm_grammar_free(g);
    /* each 'a' may or may not owe a 'b': 2^n distinct stacks after n */
    g = parse("root ::= x\nx ::= \"a\" x \"b\" | \"a\" x | \"\"", NULL);
    cr_assert_eq(llm_grammar_matcher_create(g, NULL, &p, &m), LLM_OK);
    st = LLM_OK;
    for (int i = 0; i < 64 && st == LLM_OK; i++) st = llm_grammar_matcher_accept_bytes(m, "a", 1);
    cr_expect_eq(st, LLM_ERR_EXHAUSTED);
    cr_expect_neq(llm_grammar_last_error()[0], 0);
    llm_grammar_matcher_free(m);
    llm_grammar_free(g);
}

Test(gbnf_matcher, arguments_are_checked) {
    llm_grammar *g = parse("root ::= \"a\"", NULL);
    llm_grammar_matcher *m = NULL;
    cr_expect_eq(llm_grammar_matcher_create(NULL, NULL, NULL, &m), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_grammar_matcher_create(g, NULL, NULL, &m), LLM_OK);
    uint32_t mask[1];
    cr_expect_eq(llm_grammar_matcher_fill_mask(m, mask, 1), LLM_ERR_INVALID_ARG, "no vocabulary");
    cr_expect_eq(llm_grammar_matcher_accept_token(m, 0), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_grammar_matcher_accept_bytes(m, NULL, 1), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_grammar_matcher_accept_bytes(m, "", 0), LLM_OK);
    cr_expect_eq(llm_grammar_matcher_rollback(m, -1), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_grammar_matcher_accept_bytes(m, "b", 1), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(llm_grammar_matcher_accept_bytes(m, "a", 1), LLM_OK);
    llm_grammar_matcher_free(m);
    llm_grammar_matcher_free(NULL);
    llm_grammar_free(NULL);
    llm_grammar_vocab_free(NULL);
    llm_grammar_vocab *v = vocab(TOKS);
    cr_assert_eq(llm_grammar_matcher_create(g, v, NULL, &m), LLM_OK);
    cr_expect_eq(llm_grammar_matcher_fill_mask(m, mask, 0), LLM_ERR_BUFFER_TOO_SMALL);
    cr_expect_eq(llm_grammar_matcher_accept_token(m, 99), LLM_ERR_INVALID_ARG);
    llm_grammar_matcher_free(m);
    llm_grammar_vocab_free(v);
    llm_grammar_free(g);
    char buf[8];
    size_t need;
    g = parse("root ::= \"abcdefghij\"", NULL);
    cr_expect_eq(llm_grammar_print(g, buf, sizeof buf, &need), LLM_ERR_BUFFER_TOO_SMALL);
    cr_expect_gt(need, sizeof buf);
    llm_grammar_free(g);
}

/* Clones of one prototype fill masks in parallel threads, computing and
 * sharing token classes: every mask equals the one of an unshared matcher. */
#include <pthread.h>

#define PAR_THREADS 4
#define PAR_STEPS 40

typedef struct par_job {
    const llm_grammar_matcher *proto;
    const llm_grammar_vocab *v;
    const int32_t *toks; /* [n_steps] */
    int n_steps;
    uint32_t masks[PAR_STEPS][8];
    int ok;
} par_job;

static void *par_run(void *arg) {
    par_job *j = arg;
    llm_grammar_matcher *m = NULL;
    j->ok = llm_grammar_matcher_clone(j->proto, &m) == LLM_OK;
    for (int s = 0; s < j->n_steps && j->ok; s++) {
        j->ok = llm_grammar_matcher_fill_mask(m, j->masks[s], 8) == LLM_OK &&
                llm_grammar_matcher_accept_token(m, j->toks[s]) == LLM_OK;
    }
    llm_grammar_matcher_free(m);
    return NULL;
}

Test(gbnf_matcher, clones_share_classes_across_threads) {
    /* tokens: every string of one or two characters over a small alphabet */
    static const char alpha[] = "{}[]\":, ab01";
    static char store[200][3];
    const char *b[200];
    size_t l[200];
    int32_t n = 0;
    for (size_t i = 0; i < sizeof alpha - 1; i++) {
        store[n][0] = alpha[i];
        b[n] = store[n], l[n] = 1, n++;
        for (size_t k = 0; k < sizeof alpha - 1; k++) {
            store[n][0] = alpha[i], store[n][1] = alpha[k];
            b[n] = store[n], l[n] = 2, n++;
        }
    }
    llm_grammar_vocab *v = NULL;
    cr_assert_eq(llm_grammar_vocab_create(b, l, n, NULL, &v), LLM_OK);
    cr_assert_leq(n, 256);
    llm_grammar *g = parse("root ::= value\nvalue ::= \"{\" (str \":\" value (\",\" str \":\" value)*)? \"}\""
                           " | \"[\" (value (\",\" value)*)? \"]\" | str | [01]+\nstr ::= \"\\\"\" [ab ]* \"\\\"\"",
                           v);
    const char *text = "{\"ab\":[1,0,{\"b\":\"a a\"}],\"\":{\"a\":[[],{}]},\"bb\":\"\"}";
    int32_t toks[PAR_STEPS];
    size_t at = 0;
    int n_steps = 0;
    for (int s = 0; s < PAR_STEPS && text[at]; s++, n_steps++) { /* two characters a token, one at the end */
        size_t len = text[at] && text[at + 1] ? 2 : 1;
        toks[s] = -1;
        for (int32_t t = 0; t < n; t++)
            if (l[t] == len && memcmp(b[t], text + at, len) == 0) toks[s] = t;
        cr_assert_geq(toks[s], 0);
        at += len;
    }
    cr_assert_eq(at, strlen(text));
    /* reference: one matcher, its own classes */
    uint32_t ref[PAR_STEPS][8] = {{0}};
    llm_grammar_matcher *m = NULL;
    cr_assert_eq(llm_grammar_matcher_create(g, v, NULL, &m), LLM_OK);
    for (int s = 0; s < n_steps; s++) {
        cr_assert_eq(llm_grammar_matcher_fill_mask(m, ref[s], 8), LLM_OK);
        cr_assert_eq(llm_grammar_matcher_accept_token(m, toks[s]), LLM_OK, "step %d", s);
    }
    cr_expect(llm_grammar_matcher_can_end(m));
    llm_grammar_matcher_free(m);
    llm_grammar_matcher *proto = NULL;
    cr_assert_eq(llm_grammar_matcher_create(g, v, NULL, &proto), LLM_OK);
    static par_job jobs[PAR_THREADS];
    pthread_t th[PAR_THREADS];
    for (int i = 0; i < PAR_THREADS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].proto = proto, jobs[i].v = v, jobs[i].toks = toks, jobs[i].n_steps = n_steps;
        cr_assert_eq(pthread_create(&th[i], NULL, par_run, &jobs[i]), 0);
    }
    for (int i = 0; i < PAR_THREADS; i++) {
        pthread_join(th[i], NULL);
        cr_expect(jobs[i].ok, "thread %d failed", i);
        cr_expect_eq(memcmp(jobs[i].masks, ref, sizeof ref), 0, "thread %d: masks differ", i);
    }
    llm_grammar_matcher_free(proto);
    llm_grammar_free(g);
    llm_grammar_vocab_free(v);
}
