/*
 * gguf_writer.h -- test-only GGUF writer: builds well-formed and deliberately
 * malformed GGUF files byte by byte in a growable buffer. Every function
 * appends raw little-endian bytes; nothing is validated (that is the point).
 */
#ifndef LLM_TESTS_GGUF_WRITER_H
#define LLM_TESTS_GGUF_WRITER_H

#include <stddef.h>
#include <stdint.h>

typedef struct gw {
    uint8_t *buf; /* [len] */
    size_t len, cap;
} gw;

void gw_init(gw *w);
void gw_free(gw *w);
void gw_bytes(gw *w, const void *p, size_t n);
void gw_u8(gw *w, uint8_t v);
void gw_u16(gw *w, uint16_t v);
void gw_u32(gw *w, uint32_t v);
void gw_u64(gw *w, uint64_t v);
void gw_f32(gw *w, float v);
/* u64 length + bytes */
void gw_str(gw *w, const char *s);
void gw_strn(gw *w, const void *s, size_t n);
/* "GGUF", version, n_tensors, n_kv */
void gw_header(gw *w, uint32_t version, uint64_t n_tensors, uint64_t n_kv);
/* key + type (+ value for the scalar helpers) */
void gw_key(gw *w, const char *key, uint32_t type);
void gw_kv_u32(gw *w, const char *key, uint32_t v);
void gw_kv_f32(gw *w, const char *key, float v);
void gw_kv_bool(gw *w, const char *key, int v);
void gw_kv_str(gw *w, const char *key, const char *v);
void gw_kv_str_array(gw *w, const char *key, size_t n, const char *const *v);
void gw_kv_f32_array(gw *w, const char *key, size_t n, const float *v);
void gw_kv_i32_array(gw *w, const char *key, size_t n, const int32_t *v);
/* name, n_dims, ne[n_dims], type, offset */
void gw_tensor(gw *w, const char *name, uint32_t n_dims, const int64_t *ne, uint32_t type, uint64_t offset);
/* zero bytes up to a multiple of align */
void gw_pad(gw *w, size_t align);
/* Writes the buffer to path; 0 on success. */
int gw_save(const gw *w, const char *path);

#endif
