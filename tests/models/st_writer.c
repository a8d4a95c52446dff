/* st_writer.c -- see st_writer.h. */
#define _POSIX_C_SOURCE 200809L
#include "st_writer.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint8_t *st_build(const char *header, const void *data, size_t data_len, size_t *out_len) {
    const size_t h = strlen(header);
    uint8_t *b = malloc(8 + h + data_len + 1);
    if (!b) abort();
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)h >> (8 * i));
    memcpy(b + 8, header, h);
    if (data_len) memcpy(b + 8 + h, data, data_len);
    *out_len = 8 + h + data_len;
    return b;
}

int st_write_file(const char *dir, const char *name, const void *p, size_t n) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    const size_t w = fwrite(p, 1, n, f);
    return (fclose(f) == 0 && w == n) ? 0 : -1;
}

int st_write_text(const char *dir, const char *name, const char *text) {
    return st_write_file(dir, name, text, strlen(text));
}

char *st_tmpdir(void) {
    char tmpl[] = "/tmp/llm_test_st_XXXXXX";
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

void st_rm_rf(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}
