/* --check: is each file's whole text in the grammar's language? The text is
 * fed in chunks (one matcher step each, so the matcher's history stays
 * small for big files); a refused chunk, which leaves the matcher
 * unchanged, is fed again one character at a time to find the offset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_common.h"
#include "grammar_tool.h"

#define CHUNK 4096

/* Line and column (1-based; the column counts characters) of byte off. */
static void line_col(const char *t, size_t off, size_t *line, size_t *col) {
    size_t l = 1, c = 1;
    for (size_t i = 0; i < off; i++) {
        unsigned char b = (unsigned char)t[i];
        if (b == '\n') l++, c = 1;
        else if ((b & 0xC0) != 0x80) c++;
    }
    *line = l, *col = c;
}

/* Feeds t[0..n) to m. Returns LLM_OK, or the failing status with *off the
 * byte offset of the refused character (*bad_utf8 set when the bytes
 * there are not UTF-8). */
static llm_status feed(llm_grammar_matcher *m, const char *t, size_t n, size_t *off, int *bad_utf8) {
    size_t i = 0;
    while (i < n) {
        size_t end = i + CHUNK < n ? i + CHUNK : n;
        while (end < n && end > i && ((unsigned char)t[end] & 0xC0) == 0x80) end--; /* whole characters */
        if (end == i) end = i + CHUNK < n ? i + CHUNK : n;
        llm_status st = llm_grammar_matcher_accept_bytes(m, t + i, end - i);
        if (st == LLM_OK) {
            i = end;
            continue;
        }
        if (st != LLM_ERR_BAD_FORMAT && st != LLM_ERR_BAD_UTF8 && st != LLM_ERR_EXHAUSTED) {
            *off = i;
            return st;
        }
        /* the chunk changed nothing: find the character it stops at */
        while (i < end) {
            size_t k = gt_utf8_len((const unsigned char *)t + i, n - i);
            if (k == 0) {
                *off = i, *bad_utf8 = 1;
                return LLM_ERR_BAD_UTF8;
            }
            st = llm_grammar_matcher_accept_bytes(m, t + i, k);
            if (st != LLM_OK) {
                *off = i;
                return st;
            }
            i += k;
        }
        /* every character passed one by one: only possible for EXHAUSTED,
         * which depends on the stack set seen per step */
    }
    return LLM_OK;
}

static int check_one(const llm_grammar *g, const llm_grammar_vocab *v, const char *path, size_t max_bytes,
                     int quiet) {
    size_t n = 0;
    char *t = gt_read_limited("the text", path, max_bytes, &n);
    if (!t) return APP_EXIT_FAIL;
    const char *name = strcmp(path, "-") ? path : "(stdin)";
    llm_grammar_matcher *m = NULL;
    llm_status st = llm_grammar_matcher_create(g, v, NULL, &m);
    if (st != LLM_OK) {
        fprintf(stderr, "%s: %s: %s\n", GT_PROG, llm_status_str(st), llm_grammar_last_error());
        free(t);
        return APP_EXIT_FAIL;
    }
    size_t off = 0, line, col;
    int bad_utf8 = 0, rc = APP_EXIT_FAIL;
    st = feed(m, t, n, &off, &bad_utf8);
    if (st == LLM_OK && llm_grammar_matcher_can_end(m)) {
        if (!quiet) printf("%s: ok (%zu bytes)\n", name, n);
        rc = APP_EXIT_OK;
    } else if (st == LLM_OK) {
        line_col(t, n, &line, &col);
        fprintf(stderr, "%s: %s: incomplete: the text is a valid prefix but the grammar cannot end at byte %zu "
                "(line %zu, column %zu, end of file)\n", GT_PROG, name, n, line, col);
    } else {
        line_col(t, off, &line, &col);
        fprintf(stderr, "%s: %s: rejected at byte %zu (line %zu, column %zu): ", GT_PROG, name, off, line, col);
        size_t k = bad_utf8 ? 1 : gt_utf8_len((const unsigned char *)t + off, n - off);
        if (bad_utf8) fprintf(stderr, "invalid UTF-8 byte 0x%02X\n", (unsigned char)t[off]);
        else if (st == LLM_ERR_EXHAUSTED)
            fprintf(stderr, "the grammar is too ambiguous here (more than 2048 parse stacks)\n");
        else if (st == LLM_ERR_BAD_FORMAT) {
            fputs("unexpected ", stderr);
            gt_put_quoted(stderr, t + off, k ? k : 1, 8);
            fputs(", next ", stderr);
            gt_put_quoted(stderr, t + off, n - off, 24);
            fputc('\n', stderr);
        } else {
            fprintf(stderr, "%s: %s\n", llm_status_str(st), llm_grammar_last_error());
        }
    }
    llm_grammar_matcher_free(m);
    free(t);
    return rc;
}

int gt_check_files(const llm_grammar *g, const llm_grammar_vocab *v, char **files, int n_files,
                   size_t max_bytes, int quiet) {
    for (int i = 0; i < n_files; i++) {
        int rc = check_one(g, v, files[i], max_bytes, quiet);
        if (rc != APP_EXIT_OK) return rc;
    }
    return APP_EXIT_OK;
}
