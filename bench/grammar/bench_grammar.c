/*
 * bench_grammar.c -- microseconds per token of llm_grammar_matcher_fill_mask()
 * for a JSON grammar, walking a fixed JSON text (tokenized by the model's
 * own tokenizer) token by token: fill the mask, check the next token is
 * allowed, accept it. Three passes over the text:
 *   cold  : a new matcher (per-position token classes computed on first use)
 *   warm  : a clone of the initial matcher made before the cold pass (shares
 *           the classes, none of the cold pass's cached masks)
 *   again : the cold matcher rolled back to the start (every mask cached)
 * Prints median and p99 for each.
 *
 * Usage: bench_grammar VOCAB.gguf [VOCAB2.gguf ...]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama/grammar.h"
#include "llama/tokenizer.h"

static const char *JSON_GBNF =
    "root   ::= object\n"
    "value  ::= object | array | string | number | (\"true\" | \"false\" | \"null\") ws\n"
    "object ::= \"{\" ws ( string \":\" ws value (\",\" ws string \":\" ws value)* )? \"}\" ws\n"
    "array  ::= \"[\" ws ( value (\",\" ws value)* )? \"]\" ws\n"
    "string ::= \"\\\"\" ( [^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4}) )* \"\\\"\" ws\n"
    "number ::= (\"-\"? ([0-9] | [1-9] [0-9]{0,15})) (\".\" [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws\n"
    "ws ::= | \" \" | \"\\n\" [ \\t]{0,20}\n";

static const char *JSON_TEXT =
    "{\n  \"id\": 48213,\n  \"name\": \"Café Zoë — 東京 branch\",\n  \"open\": true,\n"
    "  \"rating\": 4.75,\n  \"tags\": [\"coffee\", \"pastry\", \"wifi\", \"quiet \\\"corner\\\"\"],\n"
    "  \"address\": {\"street\": \"12 Rue de la Paix\", \"zip\": \"75002\", \"geo\": [48.8686, 2.3311]},\n"
    "  \"hours\": [{\"day\": \"mon\", \"from\": \"07:30\", \"to\": \"19:00\"}, {\"day\": \"sun\", \"closed\": null}],\n"
    "  \"notes\": \"Line one\\nLine two\\t(tabbed) \\u00e9 😀\",\n  \"reviews\": 1284\n}";

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The one place that reads a tokenizer: token bytes, EOG and control flags. */
static llm_grammar_vocab *load_vocab(const llm_tokenizer *tok) {
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
    return v;
}

/* One pass over ids[0..n): per-token mask times into us[0..n]. */
static int pass(llm_grammar_matcher *m, const int32_t *ids, int32_t n, uint32_t *mask, size_t nw, double *us) {
    for (int32_t i = 0; i <= n; i++) {
        double t0 = now_us();
        if (llm_grammar_matcher_fill_mask(m, mask, nw) != LLM_OK) return -1;
        us[i] = now_us() - t0;
        if (i == n) break;
        if (!((mask[ids[i] >> 5] >> (ids[i] & 31)) & 1)) {
            fprintf(stderr, "token %d (#%d) not allowed by the mask\n", ids[i], i);
            return -1;
        }
        if (llm_grammar_matcher_accept_token(m, ids[i]) != LLM_OK) return -1;
    }
    return 0;
}

static void report(const char *what, double *us, int32_t n) {
    qsort(us, (size_t)n, sizeof *us, cmp_d);
    printf("  %-6s median %8.1f us   p99 %8.1f us   max %9.1f us\n", what, us[n / 2], us[(n * 99) / 100],
           us[n - 1]);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s VOCAB.gguf [...]\n", argv[0]);
        return 2;
    }
    for (int a = 1; a < argc; a++) {
        llm_tokenizer *tok = NULL;
        if (llm_tokenizer_load(argv[a], &tok) != LLM_OK) {
            fprintf(stderr, "%s: cannot load the tokenizer\n", argv[a]);
            return 1;
        }
        double t0 = now_us();
        llm_grammar_vocab *v = load_vocab(tok);
        double t_vocab = now_us() - t0;
        int32_t n_ids = 0, cap = 4096;
        int32_t *ids = malloc((size_t)cap * sizeof *ids);
        if (!v || llm_tokenizer_encode(tok, JSON_TEXT, strlen(JSON_TEXT), 0, ids, cap, &n_ids) != LLM_OK) {
            fprintf(stderr, "%s: setup failed\n", argv[a]);
            return 1;
        }
        llm_grammar *g = NULL;
        llm_grammar_matcher *m = NULL, *w = NULL;
        if (llm_grammar_parse(JSON_GBNF, strlen(JSON_GBNF), v, &g) != LLM_OK ||
            llm_grammar_matcher_create(g, v, NULL, &m) != LLM_OK) {
            fprintf(stderr, "%s\n", llm_grammar_last_error());
            return 1;
        }
        size_t nw = LLM_GRAMMAR_MASK_WORDS(llm_grammar_vocab_n_tokens(v));
        uint32_t *mask = malloc(nw * sizeof *mask);
        double *us = malloc(((size_t)n_ids + 1) * sizeof *us);
        printf("%s: %d tokens, vocabulary built in %.1f ms; JSON text of %d tokens\n", argv[a],
               llm_grammar_vocab_n_tokens(v), t_vocab / 1e3, n_ids);
        /* the clone shares the (still empty) class table with m */
        if (llm_grammar_matcher_clone(m, &w) != LLM_OK) return 1;
        if (pass(m, ids, n_ids, mask, nw, us) != 0) return 1;
        report("cold", us, n_ids + 1);
        if (pass(w, ids, n_ids, mask, nw, us) != 0) return 1;
        report("warm", us, n_ids + 1);
        llm_grammar_matcher_rollback(m, llm_grammar_matcher_n_steps(m));
        if (pass(m, ids, n_ids, mask, nw, us) != 0) return 1;
        report("again", us, n_ids + 1);
        free(mask), free(us), free(ids);
        llm_grammar_matcher_free(w);
        llm_grammar_matcher_free(m);
        llm_grammar_free(g);
        llm_grammar_vocab_free(v);
        llm_tokenizer_free(tok);
    }
    return 0;
}
