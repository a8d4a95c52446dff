/* Reading llm-grammar's inputs: files with a byte limit, the grammar from
 * one of its four sources, the vocabulary from a tokenizer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_common.h"
#include "grammar_tool.h"
#include "llama/json_schema.h"

char *gt_read_limited(const char *what, const char *path, size_t max, size_t *len) {
    int is_stdin = !strcmp(path, "-");
    if (!is_stdin && app_check_input_file(GT_PROG, path)) return NULL;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open %s %s: %s\n", GT_PROG, what, path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int err = 0;
    while (buf) {
        if (n + 1 == cap) {
            /* grow to at most max + 2 bytes: one byte past the limit tells
             * a file of exactly max bytes from a longer one */
            size_t ncap = cap > (max + 2) / 2 ? max + 2 : cap * 2;
            if (ncap <= cap) break;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb, cap = ncap;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (n > max) break;
        if (r == 0) {
            err = ferror(f) ? (errno ? errno : EIO) : 0;
            break;
        }
    }
    if (!is_stdin) fclose(f);
    if (!buf) {
        fprintf(stderr, "%s: out of memory reading %s %s\n", GT_PROG, what, path);
        return NULL;
    }
    if (err) {
        fprintf(stderr, "%s: cannot read %s %s: %s\n", GT_PROG, what, path, strerror(err));
        free(buf);
        return NULL;
    }
    if (n > max) {
        fprintf(stderr, "%s: %s %s is larger than %zu bytes (see --max-bytes)\n", GT_PROG, what,
                is_stdin ? "(stdin)" : path, max);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

int gt_source_gbnf(const gt_source *src, const char **name, char **out, size_t *len) {
    const char *file = src->grammar_file ? src->grammar_file : src->schema_file;
    const char *inline_text = src->grammar_text ? src->grammar_text : src->schema_text;
    int is_schema = src->schema_file || src->schema_text;
    char *text = NULL;
    size_t n = 0;
    *out = NULL;
    if (file) {
        *name = file;
        text = gt_read_limited(is_schema ? "the schema" : "the grammar", file, GT_MAX_GRAMMAR_BYTES, &n);
        if (!text) return APP_EXIT_FAIL;
    } else {
        *name = is_schema ? "--json-schema" : "--grammar";
        n = strlen(inline_text);
        text = malloc(n + 1);
        if (!text) {
            fprintf(stderr, "%s: out of memory\n", GT_PROG);
            return APP_EXIT_FAIL;
        }
        memcpy(text, inline_text, n + 1);
    }
    if (!is_schema) {
        *out = text, *len = n;
        return APP_EXIT_OK;
    }
    llm_status st = llm_json_schema_to_gbnf_alloc(text, n, NULL, out, len);
    free(text);
    if (st != LLM_OK) {
        fprintf(stderr, "%s: %s: %s: %s\n", GT_PROG, *name, llm_status_str(st), llm_grammar_last_error());
        return st == LLM_ERR_NO_MEMORY ? APP_EXIT_FAIL : APP_EXIT_USAGE;
    }
    return APP_EXIT_OK;
}

llm_grammar_vocab *gt_vocab_from_tokenizer(const llm_tokenizer *tok) {
    int32_t n = llm_tokenizer_n_tokens(tok);
    const char **bytes = malloc((size_t)n * sizeof *bytes);
    size_t *lens = malloc((size_t)n * sizeof *lens);
    uint8_t *flags = malloc((size_t)n);
    llm_grammar_vocab *v = NULL;
    if (n > 0 && bytes && lens && flags) {
        for (int32_t t = 0; t < n; t++) {
            bytes[t] = llm_tokenizer_token_bytes(tok, t, &lens[t]);
            llm_token_type ty = llm_tokenizer_token_type(tok, t);
            int special = ty == LLM_TOKEN_TYPE_CONTROL || ty == LLM_TOKEN_TYPE_UNUSED ||
                          ty == LLM_TOKEN_TYPE_UNKNOWN;
            flags[t] = (uint8_t)((llm_tokenizer_is_eog(tok, t) ? LLM_GRAMMAR_TOKEN_EOG : 0) |
                                 (special ? LLM_GRAMMAR_TOKEN_SPECIAL : 0));
        }
        if (llm_grammar_vocab_create(bytes, lens, n, flags, &v) != LLM_OK)
            fprintf(stderr, "%s: cannot build the vocabulary: %s\n", GT_PROG, llm_grammar_last_error());
    } else {
        fprintf(stderr, "%s: %s\n", GT_PROG, n > 0 ? "out of memory" : "the tokenizer has no tokens");
    }
    free(bytes), free(lens), free(flags);
    return v;
}

/* Length of the UTF-8 sequence at s[0..n) when it is valid (1..4), else 0. */
size_t gt_utf8_len(const unsigned char *s, size_t n) {
    size_t k = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3
             : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (k == 0 || k > n) return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    uint32_t cp = k == 1 ? s[0] : k == 2 ? (s[0] & 0x1Fu) : k == 3 ? (s[0] & 0x0Fu) : (s[0] & 0x07u);
    for (size_t i = 1; i < k; i++) cp = (cp << 6) | (s[i] & 0x3Fu);
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return k;
}

void gt_put_quoted(FILE *f, const char *buf, size_t n, size_t max) {
    fputc('"', f);
    for (size_t i = 0; i < n && i < max; i++) {
        unsigned char c = (unsigned char)buf[i];
        size_t k = c >= 0x80 ? gt_utf8_len((const unsigned char *)buf + i, n - i) : 1;
        if (k > 1) {
            fwrite(buf + i, 1, k, f); /* a whole character, however max falls */
            i += k - 1;
        } else if (c >= 0x80) fprintf(f, "\\x%02X", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c == '\\' || c == '"') fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7F) fprintf(f, "\\x%02X", c);
        else fputc(c, f);
    }
    fputc('"', f);
    if (n > max) fputs("...", f);
}
