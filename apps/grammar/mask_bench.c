/* --mask-bench: the token-level view of a grammar. The file's text is
 * tokenized by the model's tokenizer and walked token by token: fill the
 * mask (timed), check the next token is allowed, accept it, and once more
 * after the last token. Two passes, one thread:
 *   cold: a new matcher; each new stack context computes its token class
 *         by walking the vocabulary, so the first mask is reported apart;
 *   warm: a clone made before the cold pass, sharing its class table (the
 *         classes are known; per-step caches are not), which is what a new
 *         sequence cloned from a prototype matcher costs.
 * Figures and their commands: docs/PERFORMANCE.md "Grammar masks". */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app_common.h"
#include "grammar_tool.h"

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int popcount_mask(const uint32_t *mask, size_t nw) {
    int c = 0;
    for (size_t i = 0; i < nw; i++) c += __builtin_popcount(mask[i]);
    return c;
}

static void put_token(FILE *f, const llm_tokenizer *tok, int32_t id) {
    size_t len = 0;
    const char *p = llm_tokenizer_token_bytes(tok, id, &len);
    gt_put_quoted(f, p ? p : "", p ? len : 0, 40);
}

/* One pass over ids[0..n): mask times into us[0..n]; with verbose, one line
 * per step. Returns 0, or -1 after printing why. */
static int pass(llm_grammar_matcher *m, const llm_tokenizer *tok, const int32_t *ids, int32_t n,
                const char *name, uint32_t *mask, size_t nw, double *us, int verbose) {
    size_t off = 0; /* bytes of the tokens before ids[i] */
    for (int32_t i = 0; i <= n; i++) {
        double t0 = now_us();
        llm_status st = llm_grammar_matcher_fill_mask(m, mask, nw);
        us[i] = now_us() - t0;
        if (st != LLM_OK) {
            fprintf(stderr, "%s: mask at token #%d: %s: %s\n", GT_PROG, (int)i, llm_status_str(st),
                    llm_grammar_last_error());
            return -1;
        }
        if (verbose) {
            printf("  step %5d  %9.1f us  %7d allowed", (int)i, us[i], popcount_mask(mask, nw));
            if (i < n) {
                printf("  next #%d id %d ", (int)i, (int)ids[i]);
                put_token(stdout, tok, ids[i]);
            } else {
                printf("  end: %s", llm_grammar_matcher_can_end(m) ? "can end" : "cannot end");
            }
            putchar('\n');
        }
        if (i == n) break;
        int allowed = (mask[ids[i] >> 5] >> (ids[i] & 31)) & 1;
        st = allowed ? llm_grammar_matcher_accept_token(m, ids[i]) : LLM_ERR_BAD_FORMAT;
        if (st != LLM_OK) {
            fprintf(stderr, "%s: %s: token #%d (id %d, ", GT_PROG, name, (int)i, (int)ids[i]);
            put_token(stderr, tok, ids[i]);
            fprintf(stderr, ") at byte %zu leaves the grammar%s\n", off,
                    allowed ? " (allowed by the mask but refused by accept: a bug)" : "");
            return -1;
        }
        size_t tl = 0;
        llm_tokenizer_token_bytes(tok, ids[i], &tl);
        off += tl;
    }
    return 0;
}

/* Prints one row: the first mask apart, then median / p99 / max of the
 * rest, and the sum of all. */
static void report(const char *what, double *us, int32_t n_steps) {
    double first = us[0], total = 0;
    for (int32_t i = 0; i < n_steps; i++) total += us[i];
    int32_t k = n_steps - 1;
    double *rest = us + 1;
    if (k > 0) qsort(rest, (size_t)k, sizeof *rest, cmp_d);
    if (k > 0)
        printf("%-5s first %9.1f us   median %8.1f us   p99 %8.1f us   max %9.1f us   total %8.2f ms\n", what,
               first, rest[k / 2], rest[(k * 99) / 100], rest[k - 1], total / 1e3);
    else
        printf("%-5s first %9.1f us   total %8.2f ms\n", what, first, total / 1e3);
}

int gt_mask_bench(const llm_grammar *g, const llm_grammar_vocab *v, const llm_tokenizer *tok,
                  const char *file, size_t max_bytes, int verbose) {
    size_t len = 0;
    char *text = gt_read_limited("the text", file, max_bytes, &len);
    if (!text) return APP_EXIT_FAIL;
    const char *name = strcmp(file, "-") ? file : "(stdin)";
    int rc = APP_EXIT_FAIL;
    int32_t n = 0;
    int32_t *ids = NULL;
    double *us = NULL;
    uint32_t *mask = NULL;
    llm_grammar_matcher *cold = NULL, *warm = NULL;
    llm_status st = llm_tokenizer_encode(tok, text, len, 0, NULL, 0, &n);
    if (st == LLM_OK || st == LLM_ERR_BUFFER_TOO_SMALL) {
        ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
        st = ids ? llm_tokenizer_encode(tok, text, len, 0, ids, n, &n) : LLM_ERR_NO_MEMORY;
    }
    if (st != LLM_OK) {
        fprintf(stderr, "%s: %s: cannot tokenize: %s\n", GT_PROG, name, llm_tokenizer_last_error());
        goto done;
    }
    size_t nw = LLM_GRAMMAR_MASK_WORDS(llm_grammar_vocab_n_tokens(v));
    mask = malloc(nw * sizeof *mask);
    us = malloc(((size_t)n + 1) * sizeof *us);
    if (!mask || !us) {
        fprintf(stderr, "%s: out of memory\n", GT_PROG);
        goto done;
    }
    st = llm_grammar_matcher_create(g, v, NULL, &cold);
    if (st == LLM_OK) st = llm_grammar_matcher_clone(cold, &warm); /* shares the still empty class table */
    if (st != LLM_OK) {
        fprintf(stderr, "%s: %s: %s\n", GT_PROG, llm_status_str(st), llm_grammar_last_error());
        goto done;
    }
    printf("%s: %zu bytes, %d tokens; vocabulary of %d tokens; one thread\n", name, len, (int)n,
           (int)llm_grammar_vocab_n_tokens(v));
    if (verbose) printf("cold pass:\n");
    if (pass(cold, tok, ids, n, name, mask, nw, us, verbose)) goto done;
    int can_end = llm_grammar_matcher_can_end(cold);
    report("cold", us, n + 1);
    if (verbose) printf("warm pass:\n");
    if (pass(warm, tok, ids, n, name, mask, nw, us, verbose)) goto done;
    report("warm", us, n + 1);
    if (!can_end)
        printf("note: the text is a valid prefix, but the grammar cannot end after its last token\n");
    rc = APP_EXIT_OK;
done:
    llm_grammar_matcher_free(warm);
    llm_grammar_matcher_free(cold);
    free(mask), free(us), free(ids), free(text);
    return rc;
}
