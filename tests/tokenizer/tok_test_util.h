/* tok_test_util.h -- helpers shared by the tokenizer tests (header-only). */
#ifndef TOK_TEST_UTIL_H
#define TOK_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/tokenizer.h"
#ifndef TT_NO_GGUF
#endif

/* Read a whole file; NULL when it cannot be read. The buffer has a NUL after *len bytes. */
static inline char *tt_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    long sz = ftell(f);
    if (sz < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    char *p = malloc((size_t)sz + 1);
    if (p && fread(p, 1, (size_t)sz, f) != (size_t)sz) {
        free(p);
        p = NULL;
    }
    fclose(f);
    if (p) {
        p[sz] = '\0';
        *len = (size_t)sz;
    }
    return p;
}

#ifndef TT_NO_GGUF
/* Tokenizer from a GGUF file (llm_tokenizer_load); NULL with a message on
 * stderr (and in llm_tokenizer_last_error()). */
static inline llm_tokenizer *tt_load_gguf(const char *path, llm_status *st_out) {
    llm_tokenizer *tok = NULL;
    llm_status st = llm_tokenizer_load(path, &tok);
    if (st != LLM_OK) fprintf(stderr, "%s\n", llm_tokenizer_last_error());
    if (st_out) *st_out = st;
    return tok;
}

#endif

/* Encode into a fresh array (caller frees); returns the status, *n the count. */
static inline llm_status tt_encode(const llm_tokenizer *tok, const char *s, size_t len, unsigned flags,
                                   llm_token **ids, int32_t *n) {
    *ids = NULL;
    llm_status st = llm_tokenizer_encode(tok, s, len, flags, NULL, 0, n);
    if (st != LLM_OK && st != LLM_ERR_BUFFER_TOO_SMALL) return st;
    *ids = malloc((size_t)(*n > 0 ? *n : 1) * sizeof **ids);
    if (!*ids) return LLM_ERR_NO_MEMORY;
    return llm_tokenizer_encode(tok, s, len, flags, *ids, *n, n);
}

static inline const char *tt_env(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

#endif
