/* golden_io.h -- test helper: read a whole file (golden data) into memory. */
#ifndef LLM_TESTS_MODELS_GOLDEN_IO_H
#define LLM_TESTS_MODELS_GOLDEN_IO_H

#include <stdio.h>
#include <stdlib.h>

/* Path of a file under the source tree: $LLM_SOURCE_DIR/rel, or rel (tests
 * run from the source root). Writes into buf[cap]. */
static inline const char *tm_source_path(char *buf, size_t cap, const char *rel) {
    const char *root = getenv("LLM_SOURCE_DIR");
    snprintf(buf, cap, "%s%s%s", root ? root : "", root ? "/" : "", rel);
    return buf;
}

/* Reads the whole file; returns a malloc'ed buffer (caller frees) and its
 * size in *len, or NULL. */
static inline unsigned char *tm_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0) { fclose(f); return NULL; }
    long sz = ftell(f);
    if (sz < 0 || fseek(f, 0, SEEK_SET) != 0) { fclose(f); return NULL; }
    unsigned char *buf = (unsigned char *)malloc((size_t)sz + 1);
    if (buf && fread(buf, 1, (size_t)sz, f) != (size_t)sz) { free(buf); buf = NULL; }
    fclose(f);
    if (buf) *len = (size_t)sz;
    return buf;
}

#endif
