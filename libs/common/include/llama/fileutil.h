/*
 * llama/fileutil.h -- small pieces shared by the file readers of several
 * libraries (llama-gguf, llama-models): a read-only whole-file mapping, an
 * open-addressing name index, a strict UTF-8 check.
 *
 * Internal to the llm libraries, as llama/error.h: llm__ names, no public
 * header includes it, not installed.
 */
#ifndef LLAMA_FILEUTIL_H
#define LLAMA_FILEUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "llama/error.h"
#include "llama/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A read-only view of a whole file: either mmapped (owned) or a caller's
 * buffer (not owned). */
typedef struct llm__mapped {
    const uint8_t *data; /* [size] */
    uint64_t size;
    int owned;           /* 1: munmap on release */
} llm__mapped;

/* Maps path read-only. LLM_ERR_IO on failure, with the message
 * "<what>: <path>: ..." in the caller's error slot. Empty files map to
 * data = NULL, size = 0 (callers reject them as too small). */
llm_status llm__map_file(const char *path, llm__err_slot slot, const char *what, llm__mapped *m);
void llm__unmap(llm__mapped *m);
/* Lets the system drop the resident pages of [p, p + n) in m (the pages
 * wholly inside; a read faults them back in from the file). Nothing when m
 * is a caller's buffer (not owned), whose memory must not be touched. */
void llm__mapped_release(const llm__mapped *m, const void *p, size_t n);

/* Open-addressing hash index from NUL-terminated names to int64 ids. The
 * names live elsewhere; get(ctx, id) returns the name of id. */
typedef const char *(*llm__name_fn)(const void *ctx, int64_t id);
typedef struct llm__strmap {
    int64_t *slots;      /* [mask + 1], -1 = empty */
    uint64_t mask;
    llm__name_fn get;
    const void *ctx;
} llm__strmap;

llm_status llm__strmap_init(llm__strmap *m, uint64_t n, llm__name_fn get, const void *ctx);
void llm__strmap_free(llm__strmap *m);
/* Inserts id under its name; returns -1 if inserted, or the id already
 * holding the same name (nothing inserted). */
int64_t llm__strmap_insert(llm__strmap *m, int64_t id);
/* The id holding name, or -1. */
int64_t llm__strmap_find(const llm__strmap *m, const char *name);

/* 1 if s[0..len) is valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
int llm__utf8_valid(const uint8_t *s, size_t len);

/* malloc'ed NUL-terminated copy of s[0..len), or NULL. */
char *llm__strndup(const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_FILEUTIL_H */
