/*
 * test_fuzz_corpus.c -- replays every file of fuzz/corpus/<parser>/ through
 * the same entry points the libFuzzer harnesses use (fuzz/fuzz_*_entry.c),
 * with a plain main, so CI replays the corpus (seeds + crash reproducers)
 * under ASan/UBSan without needing clang or libFuzzer.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_entries.h"
#include "golden_io.h"

static int replay_dir(const char *rel, int (*entry)(const uint8_t *, size_t)) {
    char dir[1024];
    tm_source_path(dir, sizeof dir, rel);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len = 0;
        unsigned char *buf = tm_read_file(path, &len);
        cr_assert_not_null(buf, "%s", path);
        /* Exact-size copy so ASan sees any read past the input. */
        unsigned char *exact = malloc(len ? len : 1);
        memcpy(exact, buf, len);
        free(buf);
        entry(exact, len);
        free(exact);
        n++;
    }
    closedir(d);
    return n;
}

Test(fuzz_corpus, gguf) {
    cr_expect_geq(replay_dir("fuzz/corpus/gguf", llm_fuzz_gguf_one), 3);
}

Test(fuzz_corpus, safetensors) {
    cr_expect_geq(replay_dir("fuzz/corpus/safetensors", llm_fuzz_safetensors_one), 3);
}
