/*
 * gguf_internal.h -- PRIVATE to llama-gguf: the in-memory form of an open
 * GGUF file, shared by gguf.c (parsing and validation) and gguf_values.c
 * (getters), and its error text (gguf_util.c).
 */
#ifndef LLM_GGUF_INTERNAL_H
#define LLM_GGUF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "llama/fileutil.h"
#include "llama/gguf.h"

/* Sets the calling thread's llm_gguf_last_error() (printf-style) and
 * returns st. */
llm_status llm__gguf_error(llm_status st, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Empties the calling thread's llm_gguf_last_error(). */
void llm__gguf_clear_error(void);

/* The file mapping, name index, UTF-8 check and strndup the reader uses are
 * llama-common's llama/fileutil.h, shared with llama-models. */

static inline uint16_t llm__rd16(const uint8_t *p) {
    return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t llm__rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t llm__rd64(const uint8_t *p) {
    return (uint64_t)llm__rd32(p) | (uint64_t)llm__rd32(p + 4) << 32;
}

/* Element index entry of an array whose elements have variable size
 * (strings, arrays): where an element's encoding starts, and for an array
 * element whose own elements are variable-size, the distance (in entries)
 * from this entry to the first entry of its own index (0: none). Relative
 * distances keep the pool valid across reallocations while parsing.
 *
 * An array of arrays has one entry per element. An array of strings has one
 * entry per LLM__GGUF_STR_STRIDE elements (entry k: element k * stride);
 * element i is reached from entry i / stride by skipping i % stride string
 * headers (u64 length + bytes, validated at open). A full index of a Llama 3
 * vocabulary (128k tokens + 280k merges) took 16 bytes per string, 6.2 MiB
 * resident for the life of the model; this one takes 0.4 MiB. */
#define LLM__GGUF_STR_STRIDE 16
typedef struct llm__gguf_elem {
    const uint8_t *p;
    int64_t child_rel;
} llm__gguf_elem;

typedef struct llm__gguf_kv {
    char *key;             /* NUL-terminated copy */
    uint64_t key_offset;   /* byte offset of the key in the file (for messages) */
    llm_gguf_value v;
    int64_t index_start;   /* first entry in the pool for string/array arrays, -1 if none */
} llm__gguf_kv;

struct llm_gguf {
    llm__mapped map;
    char *name;            /* file name for messages */
    uint32_t version;
    uint32_t alignment;
    uint64_t data_offset;
    int64_t n_kv;
    llm__gguf_kv *kv;      /* [n_kv] */
    int64_t n_tensors;
    llm_gguf_tensor *tensors; /* [n_tensors]; names malloc'ed */
    llm__gguf_elem *pool;  /* element index of all variable-size arrays */
    int64_t pool_len, pool_cap;
    llm__strmap kv_map;
    llm__strmap tensor_map;
};

/* Size in bytes of a fixed-size value type, 0 for STRING/ARRAY/invalid. */
size_t llm__gguf_scalar_size(uint32_t t);

#endif
