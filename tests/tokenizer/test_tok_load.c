/* test_tok_load.c -- building a tokenizer from a path with the tokenizer
 * library alone: llm_tokenizer_load (GGUF, tokenizer.json, HF folder),
 * llm_tokenizer_from_gguf_file / _buffer / llm_tokenizer_from_gguf, and
 * their errors. References: the ids llama.cpp gives for "Hello world" with
 * ggml-vocab-gpt-2.gguf (15496 995) and the ids Hugging Face tokenizers gives
 * for tests/tokenizer/out_of_tree/tokenizer.json (tiny_expected.txt). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llama/gguf.h"
#include "llama/tokenizer.h"
#include "tok_test_util.h"

static const char *env_or(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

static void gpt2_path(char *buf, size_t cap) {
    snprintf(buf, cap, "%s/llama-cpp-vocab/ggml-vocab-gpt-2.gguf", env_or("LLM_TESTDATA_DIR", "../shared/testdata"));
    if (access(buf, R_OK) != 0) cr_skip_test("%s not found", buf);
}

static void expect_ids(const llm_tokenizer *tok, const char *text, const llm_token *want, int32_t n_want) {
    llm_token ids[32];
    int32_t n = 0;
    cr_assert_eq(llm_tokenizer_encode(tok, text, strlen(text), 0, ids, 32, &n), LLM_OK, "%s",
                 llm_tokenizer_last_error());
    cr_assert_eq(n, n_want);
    for (int32_t i = 0; i < n; i++) cr_expect_eq(ids[i], want[i], "id %d", (int)i);
}

Test(tok_load, gguf_every_way) {
    char path[4096];
    gpt2_path(path, sizeof path);
    static const llm_token want[] = {15496, 995};
    llm_tokenizer *tok = NULL;
    cr_assert_eq(llm_tokenizer_load(path, &tok), LLM_OK, "%s", llm_tokenizer_last_error());
    cr_expect_eq(llm_tokenizer_n_tokens(tok), 50257);
    expect_ids(tok, "Hello world", want, 2);
    llm_tokenizer_free(tok);

    cr_assert_eq(llm_tokenizer_from_gguf_file(path, &tok), LLM_OK, "%s", llm_tokenizer_last_error());
    expect_ids(tok, "Hello world", want, 2);
    llm_tokenizer_free(tok);

    llm_gguf *g = NULL;
    cr_assert_eq(llm_gguf_open(path, &g), LLM_OK, "%s", llm_gguf_last_error());
    cr_assert_eq(llm_tokenizer_from_gguf(g, &tok), LLM_OK, "%s", llm_tokenizer_last_error());
    llm_gguf_close(g); /* nothing borrowed */
    expect_ids(tok, "Hello world", want, 2);
    llm_tokenizer_free(tok);

    size_t len = 0;
    char *buf = tt_read_file(path, &len);
    cr_assert_not_null(buf);
    cr_assert_eq(llm_tokenizer_from_gguf_buffer(buf, len, &tok), LLM_OK, "%s", llm_tokenizer_last_error());
    free(buf); /* nothing borrowed */
    expect_ids(tok, "Hello world", want, 2);
    llm_tokenizer_free(tok);
}

Test(tok_load, json_file_and_folder) {
    char dir[4096], file[4200];
    snprintf(dir, sizeof dir, "%s/tests/tokenizer/out_of_tree", env_or("LLM_SOURCE_DIR", "."));
    snprintf(file, sizeof file, "%s/tokenizer.json", dir);
    static const llm_token want[] = {42, 71, 299, 81, 306, 270, 626};
    llm_tokenizer *tok = NULL;
    cr_assert_eq(llm_tokenizer_load(file, &tok), LLM_OK, "%s", llm_tokenizer_last_error());
    expect_ids(tok, "Hello world", want, 7);
    llm_tokenizer_free(tok);
    cr_assert_eq(llm_tokenizer_load(dir, &tok), LLM_OK, "%s", llm_tokenizer_last_error());
    expect_ids(tok, "Hello world", want, 7);
    llm_tokenizer_free(tok);
}

Test(tok_load, errors) {
    llm_tokenizer *tok = (llm_tokenizer *)1;
    cr_expect_eq(llm_tokenizer_load("/nonexistent/model.gguf", &tok), LLM_ERR_IO);
    cr_expect_null(tok);
    cr_expect(strstr(llm_tokenizer_last_error(), "/nonexistent/model.gguf") != NULL, "%s",
              llm_tokenizer_last_error());
    cr_expect_eq(llm_tokenizer_load(NULL, &tok), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_tokenizer_load("x", NULL), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_tokenizer_from_gguf(NULL, &tok), LLM_ERR_INVALID_ARG);
    cr_expect_null(tok);
    /* Not a GGUF: llama-gguf's message, copied. */
    static const char junk[] = "GGUX not a gguf file at all";
    cr_expect_eq(llm_tokenizer_from_gguf_buffer(junk, sizeof junk, &tok), LLM_ERR_BAD_FORMAT);
    cr_expect_null(tok);
    cr_expect(strstr(llm_tokenizer_last_error(), "bad magic") != NULL, "%s", llm_tokenizer_last_error());
    /* A folder without tokenizer.json. */
    cr_expect_eq(llm_tokenizer_load("/", &tok), LLM_ERR_IO);
    cr_expect(strstr(llm_tokenizer_last_error(), "//tokenizer.json") != NULL, "%s", llm_tokenizer_last_error());
}
