/*
 * test_gguf_model.c -- the default model (LLM_DEFAULT_MODEL) read by our GGUF
 * reader equals what the `gguf` Python package reads: every metadata key with
 * its type and value (arrays: type, length, first and last element), the
 * full tensor table, and sampled dequantized blocks of every tensor type
 * present. Golden: tests/models/golden/smollm2_dump.json, made by
 * scripts/golden/models/dump_gguf.py.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "llama/models.h"

static json_t *load_dump(void) {
    const char *root = getenv("LLM_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s%stests/models/golden/smollm2_dump.json", root ? root : "", root ? "/" : "");
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    cr_assert_not_null(doc, "%s: %s", path, err.text);
    return doc;
}

static llm_gguf *open_default(void) {
    const char *model = getenv("LLM_DEFAULT_MODEL");
    cr_assert_not_null(model, "LLM_DEFAULT_MODEL is not set (run via ctest; scripts/setup fetches the model)");
    llm_gguf *g = NULL;
    cr_assert_eq(llm_gguf_open(model, &g), LLM_OK, "%s", llm_gguf_last_error());
    return g;
}

/* Compares one value (scalar or array element) with its JSON form. */
static void check_value(const llm_gguf_value *v, const json_t *j, const char *key) {
    switch (v->type) {
    case LLM_GGUF_STRING: {
        const char *s;
        size_t len;
        cr_assert_eq(llm_gguf_value_str(v, &s, &len), LLM_OK);
        cr_assert(json_is_string(j), "%s: golden is not a string", key);
        cr_expect_eq(len, json_string_length(j), "%s: string length", key);
        cr_expect(len == json_string_length(j) && memcmp(s, json_string_value(j), len) == 0,
                  "%s: string differs", key);
        break;
    }
    case LLM_GGUF_BOOL: {
        int b;
        cr_assert_eq(llm_gguf_value_bool(v, &b), LLM_OK);
        cr_expect_eq(b, json_is_true(j), "%s", key);
        break;
    }
    case LLM_GGUF_FLOAT32: case LLM_GGUF_FLOAT64: {
        double d;
        cr_assert_eq(llm_gguf_value_f64(v, &d), LLM_OK);
        cr_expect_eq(d, json_number_value(j), "%s: %.17g vs %.17g", key, d, json_number_value(j));
        break;
    }
    case LLM_GGUF_UINT64: {
        uint64_t u;
        cr_assert_eq(llm_gguf_value_u64(v, &u), LLM_OK);
        cr_expect_eq((json_int_t)u, json_integer_value(j), "%s", key);
        break;
    }
    default: {
        int64_t i;
        cr_assert_eq(llm_gguf_value_i64(v, &i), LLM_OK, "%s", key);
        cr_expect_eq(i, (int64_t)json_integer_value(j), "%s", key);
        break;
    }
    }
}

Test(gguf_model, metadata_matches_gguf_py) {
    json_t *doc = load_dump();
    llm_gguf *g = open_default();
    cr_expect_eq(llm_gguf_version(g), json_integer_value(json_object_get(doc, "version")));
    cr_expect_eq(llm_gguf_alignment(g), json_integer_value(json_object_get(doc, "alignment")));
    cr_expect_eq((json_int_t)llm_gguf_data_offset(g), json_integer_value(json_object_get(doc, "data_offset")));
    cr_expect_eq((json_int_t)llm_gguf_file_size(g), json_integer_value(json_object_get(doc, "file_size")));
    json_t *kvs = json_object_get(doc, "kv");
    cr_assert_eq((size_t)llm_gguf_kv_count(g), json_array_size(kvs));
    for (size_t i = 0; i < json_array_size(kvs); i++) {
        json_t *e = json_array_get(kvs, i);
        const char *key = json_string_value(json_object_get(e, "key"));
        /* Same order as the file. */
        cr_expect_str_eq(llm_gguf_kv_key(g, (int64_t)i), key);
        llm_gguf_value v;
        cr_assert_eq(llm_gguf_get(g, key, &v), LLM_OK, "%s", key);
        cr_expect_str_eq(llm_gguf_type_name(v.type), json_string_value(json_object_get(e, "type")), "%s", key);
        if (v.type != LLM_GGUF_ARRAY) {
            check_value(&v, json_object_get(e, "value"), key);
            continue;
        }
        cr_expect_str_eq(llm_gguf_type_name(v.elem_type), json_string_value(json_object_get(e, "elem_type")),
                         "%s", key);
        cr_assert_eq((json_int_t)v.count, json_integer_value(json_object_get(e, "count")), "%s", key);
        if (v.count == 0) continue;
        llm_gguf_value el;
        cr_assert_eq(llm_gguf_array_get(&v, 0, &el), LLM_OK);
        check_value(&el, json_object_get(e, "first"), key);
        cr_assert_eq(llm_gguf_array_get(&v, v.count - 1, &el), LLM_OK);
        check_value(&el, json_object_get(e, "last"), key);
    }
    llm_gguf_close(g);
    json_decref(doc);
}

Test(gguf_model, tensor_table_matches_gguf_py) {
    json_t *doc = load_dump();
    llm_gguf *g = open_default();
    json_t *ts = json_object_get(doc, "tensors");
    cr_assert_eq((size_t)llm_gguf_tensor_count(g), json_array_size(ts));
    for (size_t i = 0; i < json_array_size(ts); i++) {
        json_t *e = json_array_get(ts, i);
        const char *name = json_string_value(json_object_get(e, "name"));
        const llm_gguf_tensor *t = llm_gguf_tensor_at(g, (int64_t)i);
        cr_assert_not_null(t);
        cr_expect_str_eq(t->name, name);
        cr_expect_eq(llm_gguf_find_tensor(g, name), t);
        cr_expect_str_eq(llm_gguf_tensor_type_name(t->type), json_string_value(json_object_get(e, "type")), "%s", name);
        json_t *ne = json_object_get(e, "ne");
        cr_expect_eq(t->n_dims, json_array_size(ne), "%s", name);
        for (size_t d = 0; d < 4; d++) {
            const json_int_t want = d < json_array_size(ne) ? json_integer_value(json_array_get(ne, d)) : 1;
            cr_expect_eq(t->ne[d], want, "%s ne[%zu]", name, d);
        }
        cr_expect_eq((json_int_t)t->offset, json_integer_value(json_object_get(e, "offset")), "%s", name);
        cr_expect_eq((json_int_t)t->size, json_integer_value(json_object_get(e, "size")), "%s", name);
        cr_expect_eq((const uint8_t *)t->data, (const uint8_t *)llm_gguf_file_data(g) + t->offset);
    }
    llm_gguf_close(g);
    json_decref(doc);
}

Test(gguf_model, sampled_blocks_match_gguf_dequantize) {
    json_t *doc = load_dump();
    llm_gguf *g = open_default();
    json_t *ss = json_object_get(doc, "samples");
    cr_assert_gt(json_array_size(ss), 0u);
    int seen_types[64] = {0};
    for (size_t i = 0; i < json_array_size(ss); i++) {
        json_t *e = json_array_get(ss, i);
        const char *name = json_string_value(json_object_get(e, "tensor"));
        const llm_gguf_tensor *t = llm_gguf_find_tensor(g, name);
        cr_assert_not_null(t, "%s", name);
        cr_assert(llm_dtype_is_known((int)t->type), "%s", name);
        const llm_dtype dt = (llm_dtype)t->type;
        seen_types[t->type] = 1;
        const size_t bs = llm_dtype_block_size(dt);
        const uint64_t elem = (uint64_t)json_integer_value(json_object_get(e, "element"));
        json_t *bits = json_object_get(e, "bits");
        cr_assert_eq(json_array_size(bits), bs);
        const uint8_t *src = (const uint8_t *)t->data + elem / bs * llm_dtype_block_bytes(dt);
        float out[256];
        cr_assert_eq(llm_dtype_dequantize_row(dt, src, out, bs), LLM_OK);
        for (size_t k = 0; k < bs; k++) {
            uint32_t got;
            memcpy(&got, &out[k], 4);
            cr_expect_eq(got, (uint32_t)json_integer_value(json_array_get(bits, k)), "%s elem %llu+%zu",
                         name, (unsigned long long)elem, k);
        }
    }
    /* Every type present in the file was sampled. */
    for (int64_t i = 0; i < llm_gguf_tensor_count(g); i++)
        cr_expect(seen_types[llm_gguf_tensor_at(g, i)->type], "type %u not sampled", llm_gguf_tensor_at(g, i)->type);
    llm_gguf_close(g);
    json_decref(doc);
}
