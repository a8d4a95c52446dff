/*
 * fuzz_gguf_entry.c -- feeds one input to the GGUF reader and, when it is
 * accepted, walks everything it exposes (every key, every array element down
 * the nesting, every tensor, then the model descriptor built from it) so the sanitizers see
 * any out-of-bounds access. Invariants the reader promises are checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats_internal.h" /* llm__desc_from_gguf_handle */
#include "fuzz_entries.h"
#include "llama/models.h"

#define CHECK(c)                                                          \
    do {                                                                  \
        if (!(c)) {                                                       \
            fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
            abort();                                                      \
        }                                                                 \
    } while (0)

static const uint8_t *g_lo, *g_hi; /* the input's bounds */

static void in_bounds(const void *p, uint64_t n) {
    const uint8_t *b = (const uint8_t *)p;
    CHECK(n == 0 || (b >= g_lo && b <= g_hi && n <= (uint64_t)(g_hi - b)));
}

static unsigned walk_value(const llm_gguf_value *v, int depth) {
    unsigned h = 0;
    CHECK(depth <= 9);
    if (v->type == LLM_GGUF_STRING) {
        in_bounds(v->data, v->count);
        const char *s;
        size_t len;
        CHECK(llm_gguf_value_str(v, &s, &len) == LLM_OK);
        if (len) h += (unsigned char)s[len - 1];
        return h;
    }
    if (v->type != LLM_GGUF_ARRAY) {
        int64_t i;
        double d;
        if (llm_gguf_value_i64(v, &i) == LLM_OK) h += (unsigned)i;
        if (llm_gguf_value_f64(v, &d) == LLM_OK) h += (unsigned)(d == d);
        return h;
    }
    const uint64_t n = v->count < 64 ? v->count : 64; /* bounded work per input */
    for (uint64_t k = 0; k < n; k++) {
        llm_gguf_value e;
        CHECK(llm_gguf_array_get(v, k, &e) == LLM_OK);
        h += walk_value(&e, depth + 1);
    }
    if (v->count) {
        llm_gguf_value e;
        CHECK(llm_gguf_array_get(v, v->count - 1, &e) == LLM_OK);
        h += walk_value(&e, depth + 1);
        float f;
        int32_t i;
        (void)llm_gguf_array_f32(v, v->count - 1, 1, &f);
        (void)llm_gguf_array_i32(v, v->count - 1, 1, &i);
    }
    CHECK(llm_gguf_array_get(v, v->count, &(llm_gguf_value){0}) != LLM_OK);
    return h;
}

int llm_fuzz_gguf_one(const uint8_t *data, size_t size) {
    g_lo = data;
    g_hi = data + size;
    llm_gguf *g = NULL;
    llm_status st = llm_gguf_open_memory(data, size, "fuzz", &g);
    if (st != LLM_OK) {
        CHECK(g == NULL);
        CHECK(llm_gguf_last_error()[0] != '\0');
        return 0;
    }
    unsigned h = 0;
    for (int64_t i = 0; i < llm_gguf_kv_count(g); i++) {
        const char *key = llm_gguf_kv_key(g, i);
        CHECK(key && key[0]);
        CHECK(llm_gguf_find_key(g, key) == i);
        llm_gguf_value v;
        CHECK(llm_gguf_kv_value(g, i, &v) == LLM_OK);
        h += walk_value(&v, 0);
        uint32_t u;
        (void)llm_gguf_get_u32(g, key, &u);
    }
    for (int64_t i = 0; i < llm_gguf_tensor_count(g); i++) {
        const llm_gguf_tensor *t = llm_gguf_tensor_at(g, i);
        CHECK(t && llm_gguf_find_tensor(g, t->name) == t);
        CHECK(t->n_dims >= 1 && t->n_dims <= 4);
        in_bounds(t->data, t->size);
        CHECK(t->offset % llm_gguf_alignment(g) == 0);
        if (t->size) h += ((const uint8_t *)t->data)[t->size - 1];
        /* Dequantize the first block of types llm computes with. */
        if (llm_dtype_is_known((int)t->type) && t->size >= llm_dtype_block_bytes((llm_dtype)t->type)) {
            float out[256];
            CHECK(llm_dtype_dequantize_row((llm_dtype)t->type, t->data, out,
                                           llm_dtype_block_size((llm_dtype)t->type)) == LLM_OK);
        }
    }
    /* The descriptor on top (takes ownership of g in every case). */
    llm_model_desc *d = NULL;
    if (llm__desc_from_gguf_handle(g, "fuzz", &d) == LLM_OK) {
        const llm_model_hparams *hp = llm_model_desc_hparams(d);
        CHECK(hp->n_layer > 0 && hp->head_dim > 0);
        for (int64_t i = 0; i < llm_model_desc_tensor_count(d); i++) {
            const llm_model_tensor *t = llm_model_desc_tensor_at(d, i);
            in_bounds(t->data, t->size);
        }
        llm_model_desc_free(d);
    } else {
        CHECK(d == NULL);
    }
    (void)h;
    return 0;
}
