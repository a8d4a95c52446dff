/* tok_load.c -- a tokenizer from a file: a GGUF's tokenizer.ggml.* metadata
 * (tok_gguf.c), a Hugging Face tokenizer.json (tok_hf_json.c), or a Hugging
 * Face folder holding tokenizer.json; llm_tokenizer_load tells them apart. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "llama/gguf.h"
#include "tok_internal.h"

llm_status llm_tokenizer_from_gguf_file(const char *path, llm_tokenizer **out) {
    if (out) *out = NULL;
    if (!path || !out) return llm__tok_err(LLM_ERR_INVALID_ARG, "llm_tokenizer_from_gguf_file: NULL argument");
    llm_gguf *g = NULL;
    llm_status st = llm_gguf_open(path, &g);
    if (st != LLM_OK) return llm__tok_err(st, "%s", llm_gguf_last_error());
    st = llm_tokenizer_from_gguf(g, out);
    if (st != LLM_OK) llm__tok_err(st, "%s: %s", path, llm_tokenizer_last_error());
    llm_gguf_close(g);
    return st;
}

llm_status llm_tokenizer_from_gguf_buffer(const void *data, size_t size, llm_tokenizer **out) {
    if (out) *out = NULL;
    if ((!data && size) || !out)
        return llm__tok_err(LLM_ERR_INVALID_ARG, "llm_tokenizer_from_gguf_buffer: NULL argument");
    llm_gguf *g = NULL;
    llm_status st = llm_gguf_open_memory(data, size, "buffer", &g);
    if (st != LLM_OK) return llm__tok_err(st, "%s", llm_gguf_last_error());
    st = llm_tokenizer_from_gguf(g, out);
    if (st != LLM_OK) llm__tok_err(st, "buffer: %s", llm_tokenizer_last_error());
    llm_gguf_close(g);
    return st;
}

/* A JSON file starts with '{' after optional white space. */
static int is_json_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int c;
    while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\r' || c == '\t') {
    }
    fclose(f);
    return c == '{';
}

static int is_dir(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static llm_status from_json(const char *path, llm_tokenizer **out) {
    llm_status st = llm_tokenizer_from_hf_json_file(path, out);
    if (st != LLM_OK) return llm__tok_err(st, "%s: %s", path, llm_tokenizer_last_error());
    return LLM_OK;
}

llm_status llm_tokenizer_load(const char *path, llm_tokenizer **out) {
    if (out) *out = NULL;
    if (!path || !out) return llm__tok_err(LLM_ERR_INVALID_ARG, "llm_tokenizer_load: NULL argument");
    if (is_dir(path)) {
        size_t a = strlen(path);
        char *p = malloc(a + sizeof "/tokenizer.json");
        if (!p) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
        snprintf(p, a + sizeof "/tokenizer.json", "%s/tokenizer.json", path);
        llm_status st = from_json(p, out);
        free(p);
        return st;
    }
    if (is_json_file(path)) return from_json(path, out);
    return llm_tokenizer_from_gguf_file(path, out);
}
