/*
 * test_fuzz_app_corpus.c -- replays fuzz/corpus/chat_args/ and
 * fuzz/corpus/embed_input/ (seeds and regress_* fuzzer findings) through the
 * entry points of the programs' fuzz harnesses (fuzz/fuzz_app_entry.c: llm-chat's
 * command line, llm-embed's input records), with a plain main, so the normal
 * build (gcc, and ASan/UBSan in CI) re-checks them. A broken invariant aborts.
 */
#define _POSIX_C_SOURCE 200809L
#include "corpus_replay.h"

#include "fuzz_app_entries.h"

Test(fuzz_app_corpus, chat_args) {
    int nr;
    cr_expect_geq(replay_dir("chat_args", llm_fuzz_chat_args_one, &nr), 4);
}

Test(fuzz_app_corpus, embed_input) {
    int nr;
    cr_expect_geq(replay_dir("embed_input", llm_fuzz_embed_input_one, &nr), 4);
}
