/*
 * test_fuzz_tok_corpus.c -- replays every file of the tokenizer-side fuzz
 * corpora (fuzz/corpus/{tok_json,tok_encode,vocab_gguf,chat_template}/:
 * seeds from fuzz/make_tok_corpus.py and regress_* fuzzer findings) through
 * the entry points the libFuzzer harnesses use, with a plain main, so the
 * normal build (gcc, and ASan/UBSan in CI) re-checks them. A broken
 * invariant aborts (the test fails); a memory error is a sanitizer report.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_entries.h"

static void src_path(char *buf, size_t cap, const char *rel) {
    const char *root = getenv("LLM_SOURCE_DIR");
    snprintf(buf, cap, "%s/%s", root && root[0] ? root : ".", rel);
}

/* The whole file in an exact-size malloc block, so ASan sees any read past
 * the input (NULL on error). */
static unsigned char *read_exact(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) {
            buf = malloc(n ? (size_t)n : 1);
            if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
                free(buf);
                buf = NULL;
            }
            *len = (size_t)n;
        }
    }
    fclose(f);
    return buf;
}

/* Replays fuzz/corpus/<name>/ through entry; returns the number of files
 * and (in *n_regress) how many were crash reproducers. */
static int replay_dir(const char *name, int (*entry)(const uint8_t *, size_t), int *n_regress) {
    char rel[256], dir[2048];
    snprintf(rel, sizeof rel, "fuzz/corpus/%s", name);
    src_path(dir, sizeof dir, rel);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    int n = 0;
    *n_regress = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len = 0;
        unsigned char *buf = read_exact(path, &len);
        cr_assert_not_null(buf, "cannot read %s", path);
        entry(buf, len);
        free(buf);
        n++;
        if (strncmp(e->d_name, "regress_", 8) == 0) (*n_regress)++;
    }
    closedir(d);
    return n;
}

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
