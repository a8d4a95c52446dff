/*
 * formats_internal.h -- PRIVATE to llama-models: helpers shared by the file
 * readers and the model descriptor (error text, file mapping, string hash
 * index, UTF-8 check, little-endian reads).
 */
#ifndef LLM_MODELS_FORMATS_INTERNAL_H
#define LLM_MODELS_FORMATS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "llama/models.h"

/* Sets the calling thread's last error (printf-style) and returns st. */
llm_status llm__models_error(llm_status st, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Clears the last error (sets it to ""). */
void llm__models_clear_error(void);

/* Copies the calling thread's llm_gguf_last_error() into this library's
 * message and returns st: for a failed llm_gguf_* call whose status a
 * models function returns as its own. */
llm_status llm__models_gguf_error(llm_status st);

/* A read-only view of a whole file: either mmapped (owned) or a caller's
 * buffer (not owned). */
typedef struct llm__mapped {
    const uint8_t *data; /* [size] */
    uint64_t size;
    int owned;           /* 1: munmap on release */
} llm__mapped;

/* Maps path read-only. LLM_ERR_IO with a message on failure. Empty files map
 * to data = NULL, size = 0 (callers reject them as too small). */
llm_status llm__map_file(const char *path, const char *what, llm__mapped *m);
void llm__unmap(llm__mapped *m);
/* Lets the system drop the resident pages of [p, p + n) in m (the pages
 * wholly inside; a read faults them back in from the file). Nothing when m
 * is a caller's buffer (not owned), whose memory must not be touched. */
void llm__mapped_release(const llm__mapped *m, const void *p, size_t n);
/* The mapping behind a SafeTensors reader (a GGUF's pages are released by
 * llama-gguf itself, llm_gguf_release_pages). */
const llm__mapped *llm__st_mapping(const struct llm_safetensors *st);

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

static inline uint16_t llm__rd16(const uint8_t *p) {
    return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t llm__rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t llm__rd64(const uint8_t *p) {
    return (uint64_t)llm__rd32(p) | (uint64_t)llm__rd32(p + 4) << 32;
}

/* malloc'ed NUL-terminated copy of s[0..len), or NULL. */
char *llm__strndup(const char *s, size_t len);

/* Builds a descriptor from an already open GGUF (takes ownership of g, also
 * on failure). Defined in desc_gguf.c. */
llm_status llm__desc_from_gguf_handle(llm_gguf *g, const char *path, llm_model_desc **out);

#endif
