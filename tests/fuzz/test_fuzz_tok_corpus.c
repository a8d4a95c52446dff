/*
 * test_fuzz_tok_corpus.c -- replays every file of the tokenizer-side fuzz
 * corpora (fuzz/corpus/{tok_json,tok_encode,vocab_gguf,chat_template}/:
 * seeds from fuzz/make_tok_corpus.py and regress_* fuzzer findings) through
 * the entry points the libFuzzer harnesses use, with a plain main, so the
 * normal build (gcc, and ASan/UBSan in CI) re-checks them. A broken
 * invariant aborts (the test fails); a memory error is a sanitizer report.
 */
#define _POSIX_C_SOURCE 200809L
#include "corpus_replay.h"

#include "fuzz_entries.h"

Test(fuzz_tok_corpus, tokenizer_json) {
    int reg;
    cr_expect_geq(replay_dir("tok_json", llm_fuzz_tokenizer_json_one, &reg), 5);
}

Test(fuzz_tok_corpus, vocab_gguf) {
    int reg;
    cr_expect_geq(replay_dir("vocab_gguf", llm_fuzz_vocab_gguf_one, &reg), 20);
}

Test(fuzz_tok_corpus, chat_template) {
    int reg;
    cr_expect_geq(replay_dir("chat_template", llm_fuzz_chat_template_one, &reg), 70);
}

Test(fuzz_tok_corpus, tokenizer_encode) {
    const char *root = getenv("LLM_TESTDATA_DIR");
    char dir[2048];
    snprintf(dir, sizeof dir, "%s/llama-cpp-vocab", root && root[0] ? root : "/nonexistent");
    if (!llm_fuzz_tokenizer_encode_init(dir)) {
        llm_fuzz_tokenizer_encode_fini();
        cr_skip_test("vocab GGUFs missing under %s (shared testdata not installed)", dir);
    }
    int reg;
    cr_expect_geq(replay_dir("tok_encode", llm_fuzz_tokenizer_encode_one, &reg), 40);
    llm_fuzz_tokenizer_encode_fini();
}
