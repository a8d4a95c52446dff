/* gguf_writer.c -- see gguf_writer.h. Test code: aborts on out-of-memory. */
#include "gguf_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gw_init(gw *w) { memset(w, 0, sizeof *w); }

void gw_free(gw *w) {
    free(w->buf);
    memset(w, 0, sizeof *w);
}

void gw_bytes(gw *w, const void *p, size_t n) {
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n) cap *= 2;
        uint8_t *b = realloc(w->buf, cap);
        if (!b) abort();
        w->buf = b;
        w->cap = cap;
    }
    if (n) memcpy(w->buf + w->len, p, n);
    w->len += n;
}

void gw_u8(gw *w, uint8_t v) { gw_bytes(w, &v, 1); }

void gw_u16(gw *w, uint16_t v) {
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    gw_bytes(w, b, 2);
}

void gw_u32(gw *w, uint32_t v) {
    uint8_t b[4];
    for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i));
    gw_bytes(w, b, 4);
}

void gw_u64(gw *w, uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
    gw_bytes(w, b, 8);
}

void gw_f32(gw *w, float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    gw_u32(w, u);
}

void gw_strn(gw *w, const void *s, size_t n) {
    gw_u64(w, n);
    gw_bytes(w, s, n);
}

void gw_str(gw *w, const char *s) { gw_strn(w, s, strlen(s)); }

void gw_header(gw *w, uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    gw_bytes(w, "GGUF", 4);
    gw_u32(w, version);
    gw_u64(w, n_tensors);
    gw_u64(w, n_kv);
}

void gw_key(gw *w, const char *key, uint32_t type) {
    gw_str(w, key);
    gw_u32(w, type);
}

void gw_kv_u32(gw *w, const char *key, uint32_t v) {
    gw_key(w, key, 4);
    gw_u32(w, v);
}

void gw_kv_f32(gw *w, const char *key, float v) {
    gw_key(w, key, 6);
    gw_f32(w, v);
}

void gw_kv_bool(gw *w, const char *key, int v) {
    gw_key(w, key, 7);
    gw_u8(w, (uint8_t)(v != 0));
}

void gw_kv_str(gw *w, const char *key, const char *v) {
    gw_key(w, key, 8);
    gw_str(w, v);
}

void gw_kv_str_array(gw *w, const char *key, size_t n, const char *const *v) {
    gw_key(w, key, 9);
    gw_u32(w, 8);
    gw_u64(w, n);
    for (size_t i = 0; i < n; i++) gw_str(w, v[i]);
}

void gw_kv_f32_array(gw *w, const char *key, size_t n, const float *v) {
    gw_key(w, key, 9);
    gw_u32(w, 6);
    gw_u64(w, n);
    for (size_t i = 0; i < n; i++) gw_f32(w, v[i]);
}

void gw_kv_i32_array(gw *w, const char *key, size_t n, const int32_t *v) {
    gw_key(w, key, 9);
    gw_u32(w, 5);
    gw_u64(w, n);
    for (size_t i = 0; i < n; i++) gw_u32(w, (uint32_t)v[i]);
}

void gw_tensor(gw *w, const char *name, uint32_t n_dims, const int64_t *ne, uint32_t type, uint64_t offset) {
    gw_str(w, name);
    gw_u32(w, n_dims);
    for (uint32_t i = 0; i < n_dims; i++) gw_u64(w, (uint64_t)ne[i]);
    gw_u32(w, type);
    gw_u64(w, offset);
}

void gw_pad(gw *w, size_t align) {
    while (w->len % align) gw_u8(w, 0);
}

int gw_save(const gw *w, const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t n = fwrite(w->buf, 1, w->len, f);
    return (fclose(f) == 0 && n == w->len) ? 0 : -1;
}
