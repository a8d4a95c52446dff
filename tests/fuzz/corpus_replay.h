/*
 * corpus_replay.h -- replaying a fuzz corpus folder (fuzz/corpus/NAME/) through
 * a harness's entry point with a plain main, shared by the corpus-replay
 * tests (test_fuzz_tok_corpus.c, test_fuzz_app_corpus.c).
 */
#ifndef LLM_TEST_CORPUS_REPLAY_H
#define LLM_TEST_CORPUS_REPLAY_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#endif
