/* Vocab-only loading (llm_model_params.vocab_only), and the same tokenizer
 * from the tokenizer library alone (llm_tokenizer_load). References: the token ids
 * llama.cpp gives for "Hello world" with ggml-vocab-gpt-2.gguf (its
 * conformance data under $LLM_TESTDATA_DIR/llama-cpp-vocab), the ids Hugging
 * Face tokenizers gives for tests/tokenizer/out_of_tree/tokenizer.json
 * (tests/tokenizer/data/tiny_expected.txt), and, on the default model, the
 * same calls on a full load. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llama/engine.h"
#include "llama/engine_embed.h"
#include "llama/tokenizer.h"

static const char *env_or(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

static void gpt2_path(char *buf, size_t cap) {
    snprintf(buf, cap, "%s/llama-cpp-vocab/ggml-vocab-gpt-2.gguf",
             env_or("LLM_TESTDATA_DIR", "../shared/testdata"));
    if (access(buf, R_OK) != 0) cr_skip_test("%s not found", buf);
}

static llm_model *load_vocab(const char *path) {
    llm_model_params mp = llm_model_default_params();
    mp.vocab_only = true;
    llm_model *m = NULL;
    llm_status st = llm_load_model(path, &mp, &m);
    cr_assert_eq(st, LLM_OK, "vocab-only load of %s: %s", path, llm_last_error());
    return m;
}

Test(vocab_only, gguf_vocab_file_tokenizes_like_llama_cpp) {
    char path[4096];
    gpt2_path(path, sizeof path);
    llm_model *m = load_vocab(path);
    llm_model_info info;
    cr_assert_eq(llm_model_get_info(m, &info), LLM_OK);
    cr_expect(info.vocab_only);
    cr_expect_eq(info.n_vocab, 50257);
    cr_expect_str_eq(info.backend, "");
    cr_expect_eq(info.n_embd, 0);
    llm_token ids[16];
    int32_t n = 0;
    cr_assert_eq(llm_tokenize(m, "Hello world", 11, 0, ids, 16, &n), LLM_OK, "%s", llm_last_error());
    cr_assert_eq(n, 2);
    cr_expect_eq(ids[0], 15496);
    cr_expect_eq(ids[1], 995);
    char text[64];
    int32_t nt = 0;
    cr_assert_eq(llm_detokenize(m, ids, n, false, text, sizeof text, &nt), LLM_OK);
    cr_expect_eq(nt, 11);
    cr_expect(memcmp(text, "Hello world", 11) == 0);
    llm_model_free(m);
}

Test(vocab_only, generation_and_embedding_are_refused) {
    char path[4096];
    gpt2_path(path, sizeof path);
    llm_model *m = load_vocab(path);
    llm_session *s = (llm_session *)1;
    cr_expect_eq(llm_session_new(m, NULL, &s), LLM_ERR_STATE);
    cr_expect_null(s);
    cr_expect(strstr(llm_last_error(), "vocab_only") != NULL, "message: %s", llm_last_error());
    const char *texts[] = {"x"};
    float out[1];
    cr_expect_eq(llm_embed(m, texts, 1, LLM_POOLING_MEAN, false, out, 0), LLM_ERR_STATE);
    llm_model_free(m);
}

Test(vocab_only, tokenizer_json_and_missing_file) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/tokenizer/out_of_tree/tokenizer.json", env_or("LLM_SOURCE_DIR", "."));
    llm_model *m = load_vocab(path);
    const llm_token expected[] = {42, 71, 299, 81, 306, 270, 626};
    llm_token ids[16];
    int32_t n = 0;
    cr_assert_eq(llm_tokenize(m, "Hello world", 11, 0, ids, 16, &n), LLM_OK, "%s", llm_last_error());
    cr_assert_eq(n, 7);
    for (int i = 0; i < 7; i++) cr_expect_eq(ids[i], expected[i], "id %d", i);
    llm_model_free(m);

    llm_model_params mp = llm_model_default_params();
    mp.vocab_only = true;
    llm_model *bad = (llm_model *)1;
    cr_expect_eq(llm_load_model("/nonexistent/model.gguf", &mp, &bad), LLM_ERR_IO);
    cr_expect_null(bad);
    cr_expect_neq(llm_last_error()[0], '\0');
}

Test(vocab_only, tokenizer_library_builds_the_same_tokenizer) {
    char path[4096];
    gpt2_path(path, sizeof path);
    llm_tokenizer *tok = NULL;
    cr_assert_eq(llm_tokenizer_load(path, &tok), LLM_OK, "%s", llm_tokenizer_last_error());
    llm_model *m = load_vocab(path);
    llm_model_info info;
    cr_assert_eq(llm_model_get_info(m, &info), LLM_OK);
    cr_expect_eq(llm_tokenizer_n_tokens(tok), info.n_vocab);
    llm_token ids[16], mids[16];
    int32_t n = 0, mn = 0;
    cr_assert_eq(llm_tokenizer_encode(tok, "Hello world", 11, 0, ids, 16, &n), LLM_OK);
    cr_expect_eq(n, 2);
    cr_expect_eq(ids[0], 15496);
    cr_assert_eq(llm_tokenize(m, "Hello world", 11, 0, mids, 16, &mn), LLM_OK, "%s", llm_last_error());
    cr_assert_eq(mn, n);
    for (int32_t i = 0; i < n; i++) cr_expect_eq(mids[i], ids[i]);
    llm_tokenizer_free(tok);
    llm_model_free(m);

    /* The same bytes from memory. */
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)sz);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)sz, f), (size_t)sz);
    fclose(f);
    cr_assert_eq(llm_tokenizer_from_gguf_buffer(buf, (size_t)sz, &tok), LLM_OK, "%s", llm_tokenizer_last_error());
    cr_expect_eq(llm_tokenizer_n_tokens(tok), 50257);
    llm_tokenizer_free(tok);
    /* Truncated: a clear error, no tokenizer. */
    tok = (llm_tokenizer *)1;
    cr_expect_lt(llm_tokenizer_from_gguf_buffer(buf, 100, &tok), 0);
    cr_expect_null(tok);
    cr_expect_neq(llm_tokenizer_last_error()[0], '\0');
    free(buf);
}

/* On the real model, vocab-only and full loads tokenize and render chats
 * identically; a failing const call leaves the model's message alone and
 * reports on the thread (the model is shared between threads). */
Test(vocab_only, default_model_matches_full_load) {
    const char *p = getenv("LLM_DEFAULT_MODEL");
    if (!p || access(p, R_OK) != 0) cr_skip_test("default model not found");
    llm_model *v = load_vocab(p);
    llm_model_params mp = llm_model_default_params();
    mp.backend = "cpu";
    mp.n_threads = 1;
    mp.n_ctx = 256;
    llm_model *full = NULL;
    cr_assert_eq(llm_load_model(p, &mp, &full), LLM_OK, "%s", llm_last_error());
    llm_model_info iv, ifu;
    llm_model_get_info(v, &iv);
    llm_model_get_info(full, &ifu);
    cr_expect_eq(iv.n_vocab, ifu.n_vocab);
    cr_expect_eq(iv.bos, ifu.bos);
    cr_expect_eq(iv.eos, ifu.eos);
    cr_expect_str_eq(iv.architecture, ifu.architecture);
    cr_expect_str_eq(iv.name, ifu.name);
    cr_expect_str_eq(iv.chat_template, ifu.chat_template);
    const char *texts[] = {"Hello world", " <|im_start|>user\nHi<|im_end|>", "naïve café 日本語 🙂"};
    for (size_t t = 0; t < 3; t++) {
        llm_token a[64], b[64];
        int32_t na = 0, nb = 0;
        unsigned fl = LLM_ENCODE_ADD_SPECIAL | LLM_ENCODE_PARSE_SPECIAL;
        cr_assert_eq(llm_tokenize(v, texts[t], strlen(texts[t]), fl, a, 64, &na), LLM_OK);
        cr_assert_eq(llm_tokenize(full, texts[t], strlen(texts[t]), fl, b, 64, &nb), LLM_OK);
        cr_assert_eq(na, nb, "text %zu", t);
        cr_expect(memcmp(a, b, (size_t)na * sizeof a[0]) == 0, "text %zu", t);
    }
    const llm_chat_message msgs[] = {{"system", "Be brief."}, {"user", "Hello!"}};
    char ca[1024], cb[1024];
    int32_t la = 0, lb = 0;
    cr_assert_eq(llm_chat_apply(v, msgs, 2, true, ca, sizeof ca, &la), LLM_OK, "%s", llm_last_error());
    cr_assert_eq(llm_chat_apply(full, msgs, 2, true, cb, sizeof cb, &lb), LLM_OK);
    cr_expect_eq(la, lb);
    cr_expect(memcmp(ca, cb, (size_t)la) == 0);

    /* Invalid UTF-8 into a const call: the thread's message says so, the
     * shared model's own message is not written. */
    llm_token ids[8];
    int32_t n = 0;
    cr_expect_eq(llm_tokenize(full, "a\xC0\x80", 3, 0, ids, 8, &n), LLM_ERR_BAD_UTF8);
    cr_expect(strstr(llm_last_error(), "UTF-8") != NULL, "%s", llm_last_error());
    cr_expect_str_eq(llm_model_last_error(full), "");
    llm_model_free(v);
    llm_model_free(full);
}
