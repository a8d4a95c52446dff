/*
 * llama/gguf.h -- llama-gguf: a reader of GGUF files (versions 2 and 3),
 * the format llama.cpp writes models and vocabularies in. A leaf library:
 * it links only llama-common and the C library, so a program that needs
 * only a GGUF's metadata (a vocabulary, a chat template) or its tensor
 * table links this alone.
 *
 * Usage:
 *
 *     llm_gguf *g;
 *     if (llm_gguf_open("model.gguf", &g) != LLM_OK) {
 *         fprintf(stderr, "%s\n", llm_gguf_last_error());
 *         return 1;
 *     }
 *     uint32_t n_layer;
 *     llm_gguf_get_u32(g, "llama.block_count", &n_layer);
 *     llm_gguf_value toks;                                  // string array
 *     if (llm_gguf_get_array(g, "tokenizer.ggml.tokens", &toks) == LLM_OK) {
 *         const char *s; size_t len;
 *         llm_gguf_array_string(&toks, 42, &s, &len);       // O(1)
 *     }
 *     const llm_gguf_tensor *t = llm_gguf_find_tensor(g, "token_embd.weight");
 *     llm_gguf_close(g);
 *
 * The file is memory-mapped read-only and validated whole when it is
 * opened: every count, length, type, shape, offset and size is checked
 * against the file size (overflow-safe) before any of it is used, so a
 * malformed file is an error naming the problem and the byte offset, never
 * a crash or an out-of-bounds read.
 *
 * Errors: every function returning llm_status also leaves a message for the
 * calling thread, read with llm_gguf_last_error(). Pointers returned by a
 * handle (keys, strings, tensor names and data) stay valid until
 * llm_gguf_close(). A handle is immutable after open, so any number of
 * threads may read one at the same time.
 *
 * Byte order: GGUF is little-endian; llm supports little-endian hosts only.
 * Pointers into the mapping (array data, string bytes, tensor data) can be
 * UNALIGNED for their element type: read them with memcpy or the copy
 * helpers below.
 *
 * Link llama-gguf (pkg-config llama-gguf, CMake llama::gguf).
 */
#ifndef LLAMA_GGUF_H
#define LLAMA_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "llama/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The message of the last error raised by an llm_gguf_* function on the
 * calling thread ("" if none yet). It names the file, the problem and, for
 * format errors, the byte offset, e.g. "gguf: m.gguf: tensor
 * 'blk.0.attn_q.weight': data [64, +4160) extends past the end of the file
 * (4096 data bytes) at byte offset 1234". Valid until the next llm_gguf_*
 * call on the same thread. */
const char *llm_gguf_last_error(void);

typedef struct llm_gguf llm_gguf; /* an open, validated, read-only GGUF file */

/* GGUF metadata value types (GGUF's numbering). */
typedef enum llm_gguf_type {
    LLM_GGUF_UINT8 = 0,
    LLM_GGUF_INT8 = 1,
    LLM_GGUF_UINT16 = 2,
    LLM_GGUF_INT16 = 3,
    LLM_GGUF_UINT32 = 4,
    LLM_GGUF_INT32 = 5,
    LLM_GGUF_FLOAT32 = 6,
    LLM_GGUF_BOOL = 7,
    LLM_GGUF_STRING = 8,
    LLM_GGUF_ARRAY = 9,
    LLM_GGUF_UINT64 = 10,
    LLM_GGUF_INT64 = 11,
    LLM_GGUF_FLOAT64 = 12
} llm_gguf_type;

/* The name of a metadata value type ("uint32", "string", "array"), or
 * "invalid". */
const char *llm_gguf_type_name(llm_gguf_type t);

/* A view of one metadata value, inside the mapping. Filled by the getters
 * below; a plain struct the caller keeps on the stack. */
typedef struct llm_gguf_value {
    llm_gguf_type type;      /* the value's type */
    llm_gguf_type elem_type; /* ARRAY only: the type of its elements */
    uint64_t count;          /* ARRAY: number of elements; STRING: length in bytes; else 1 */
    const void *data;        /* scalar: its little-endian bytes; STRING: its bytes (NOT
                                NUL-terminated); ARRAY of fixed-size elements: the first
                                element, elements packed (maybe unaligned); other ARRAYs:
                                the first element's encoding */
    const void *priv_;       /* private: element index of string/array arrays */
} llm_gguf_value;

/* Opens, maps (read-only) and validates the GGUF file at path. On success
 * *out receives a handle to free with llm_gguf_close. Validation covers: magic,
 * version (2 or 3; 1 and big-endian files are rejected with a clear message),
 * every count and length against the bytes left in the file, metadata keys
 * (valid UTF-8, non-empty, unique), value types, array nesting (at most 8
 * deep), general.alignment (uint32, power of two), tensor infos (unique
 * valid-UTF-8 names, 1..4 dims, non-negative dims whose product fits, a known
 * ggml type (any of GGUF's 0..41, including ones llm cannot compute with),
 * first dim a multiple of the block size, data offset aligned and data inside
 * the file). String values are not UTF-8-checked (some vocabularies hold raw
 * bytes). Open is O(file metadata): it builds an index so that key lookup,
 * tensor lookup and string-array element access are O(1) (a string array's
 * index keeps every 16th element's position, so an access skips at most 15
 * string headers; 0.4 MiB for a 128k-token vocabulary with 280k merges).
 * Returns LLM_OK; LLM_ERR_INVALID_ARG (NULL args); LLM_ERR_IO (cannot open,
 * stat or map); LLM_ERR_BAD_FORMAT (malformed: see the message);
 * LLM_ERR_UNSUPPORTED (version 1, big-endian); LLM_ERR_NO_MEMORY.
 * On failure *out is set to NULL. */
llm_status llm_gguf_open(const char *path, llm_gguf **out);

/* As llm_gguf_open, over a caller-owned buffer of len bytes (no copy: the
 * buffer must outlive the handle). name is used in messages (may be NULL).
 * Used by tests and fuzzers. */
llm_status llm_gguf_open_memory(const void *buf, size_t len, const char *name, llm_gguf **out);

/* Unmaps and frees. NULL is harmless. */
void llm_gguf_close(llm_gguf *g);

/* The format version (2 or 3). */
uint32_t llm_gguf_version(const llm_gguf *g);

/* general.alignment, or 32 if the key is absent. */
uint32_t llm_gguf_alignment(const llm_gguf *g);

/* Byte offset of the tensor data section (aligned end of the tensor infos). */
uint64_t llm_gguf_data_offset(const llm_gguf *g);

/* Size of the file in bytes and the start of its mapping. */
uint64_t llm_gguf_file_size(const llm_gguf *g);
const void *llm_gguf_file_data(const llm_gguf *g);

/* Lets the system drop the resident pages wholly inside [p, p + n) of g's
 * mapping (for tensor data a program has copied elsewhere); a later read of
 * those bytes faults them back in from the file, so the data stays valid.
 * Nothing happens when g was opened over a caller's buffer
 * (llm_gguf_open_memory), whose memory is never touched, or when the range
 * is not inside the file. Advice only: it cannot fail. */
void llm_gguf_release_pages(const llm_gguf *g, const void *p, size_t n);

/* --- metadata --- */

/* Number of metadata key/value pairs. */
int64_t llm_gguf_kv_count(const llm_gguf *g);

/* Key of pair i (0 <= i < count), NUL-terminated, owned by g; NULL if i is
 * out of range. */
const char *llm_gguf_kv_key(const llm_gguf *g, int64_t i);

/* Value of pair i into *out. LLM_OK or LLM_ERR_INVALID_ARG (i out of range). */
llm_status llm_gguf_kv_value(const llm_gguf *g, int64_t i, llm_gguf_value *out);

/* Index of key, or -1 if absent. O(1). */
int64_t llm_gguf_find_key(const llm_gguf *g, const char *key);

/* Value of key into *out. LLM_OK or LLM_ERR_NOT_FOUND. */
llm_status llm_gguf_get(const llm_gguf *g, const char *key, llm_gguf_value *out);

/* Typed getters by key. The integer getters accept a value of ANY integer
 * type (uint8..int64) and BOOL that fits the requested type (converters
 * disagree on e.g. uint32 vs int32 for token ids); the float getters accept
 * FLOAT32 and FLOAT64; get_bool accepts BOOL only; get_str accepts STRING
 * only and returns a pointer into the mapping (NOT NUL-terminated) and its
 * length. Returns LLM_OK; LLM_ERR_NOT_FOUND (no such key);
 * LLM_ERR_BAD_FORMAT (wrong type, or out of range: message says which).
 * *out is untouched on error. */
llm_status llm_gguf_get_u8(const llm_gguf *g, const char *key, uint8_t *out);
llm_status llm_gguf_get_i8(const llm_gguf *g, const char *key, int8_t *out);
llm_status llm_gguf_get_u16(const llm_gguf *g, const char *key, uint16_t *out);
llm_status llm_gguf_get_i16(const llm_gguf *g, const char *key, int16_t *out);
llm_status llm_gguf_get_u32(const llm_gguf *g, const char *key, uint32_t *out);
llm_status llm_gguf_get_i32(const llm_gguf *g, const char *key, int32_t *out);
llm_status llm_gguf_get_u64(const llm_gguf *g, const char *key, uint64_t *out);
llm_status llm_gguf_get_i64(const llm_gguf *g, const char *key, int64_t *out);
llm_status llm_gguf_get_f32(const llm_gguf *g, const char *key, float *out);
llm_status llm_gguf_get_f64(const llm_gguf *g, const char *key, double *out);
llm_status llm_gguf_get_bool(const llm_gguf *g, const char *key, int *out);
llm_status llm_gguf_get_str(const llm_gguf *g, const char *key, const char **s, size_t *len);
/* ARRAY only. */
llm_status llm_gguf_get_array(const llm_gguf *g, const char *key, llm_gguf_value *out);

/* Typed reads of a value view (from kv_value, get, or array_get), with the
 * same type rules as the by-key getters. LLM_OK or LLM_ERR_BAD_FORMAT. */
llm_status llm_gguf_value_i64(const llm_gguf_value *v, int64_t *out);
llm_status llm_gguf_value_u64(const llm_gguf_value *v, uint64_t *out);
llm_status llm_gguf_value_f64(const llm_gguf_value *v, double *out);
llm_status llm_gguf_value_bool(const llm_gguf_value *v, int *out);
llm_status llm_gguf_value_str(const llm_gguf_value *v, const char **s, size_t *len);

/* Element i of an array value (0 <= i < arr->count) into *out. O(1) for
 * every element type, including strings and nested arrays. Returns LLM_OK;
 * LLM_ERR_INVALID_ARG (not an array, or i out of range). */
llm_status llm_gguf_array_get(const llm_gguf_value *arr, uint64_t i, llm_gguf_value *out);

/* Shortcut: string element i of a string array (pointer into the mapping,
 * not NUL-terminated, and its length). LLM_OK or LLM_ERR_INVALID_ARG (not a
 * string array, or i out of range). */
llm_status llm_gguf_array_string(const llm_gguf_value *arr, uint64_t i, const char **s, size_t *len);

/* Copies elements [first, first + n) of a numeric array, converting each to
 * the destination type: array_f32 accepts FLOAT32/FLOAT64 and integer arrays,
 * array_i32 accepts integer and BOOL arrays whose values fit int32.
 * Returns LLM_OK; LLM_ERR_INVALID_ARG (range outside the array, NULL dst);
 * LLM_ERR_BAD_FORMAT (element type not convertible or a value out of range). */
llm_status llm_gguf_array_f32(const llm_gguf_value *arr, uint64_t first, uint64_t n, float *dst);
llm_status llm_gguf_array_i32(const llm_gguf_value *arr, uint64_t first, uint64_t n, int32_t *dst);

/* --- tensors --- */

/* One tensor info. ne[0] is the innermost (contiguous) dimension, as in
 * GGUF; unused trailing dims are 1. */
typedef struct llm_gguf_tensor {
    const char *name;    /* NUL-terminated, owned by g */
    uint32_t type;       /* GGUF/ggml type id; llm_dtype_is_known(type) tells if llm computes with it */
    uint32_t n_dims;     /* 1..4 */
    int64_t ne[4];       /* [n_dims] dims, innermost first; rest 1 */
    uint64_t offset;     /* absolute byte offset of the data in the file */
    uint64_t size;       /* bytes of data */
    const void *data;    /* offset into the mapping (aligned to general.alignment
                            relative to the file start) */
} llm_gguf_tensor;

/* The name of a ggml tensor type id ("Q4_K", "IQ2_XXS"), or NULL if the id
 * is not a ggml type. */
const char *llm_gguf_tensor_type_name(uint32_t type);

/* Number of tensors. */
int64_t llm_gguf_tensor_count(const llm_gguf *g);

/* Tensor i (0 <= i < count) in file order, or NULL if out of range. */
const llm_gguf_tensor *llm_gguf_tensor_at(const llm_gguf *g, int64_t i);

/* Tensor by name, or NULL. O(1). */
const llm_gguf_tensor *llm_gguf_find_tensor(const llm_gguf *g, const char *name);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_GGUF_H */
