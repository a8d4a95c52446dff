/*
 * test_safetensors.c -- the SafeTensors reader: a file written by the
 * reference `safetensors` Python package (fuzz/corpus/safetensors/two_tensors,
 * made by scripts/golden/models/make_fuzz_corpus.py with known contents), then
 * headers that lie (sizes, offsets, overlaps, gaps, types, JSON), each a
 * clear error and never a crash (ASan in CI).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "golden_io.h"
#include "llama/models.h"
#include "st_writer.h"

Test(safetensors, reference_file) {
    char path[1024];
    size_t len = 0;
    uint8_t *buf = tm_read_file(tm_source_path(path, sizeof path, "fuzz/corpus/safetensors/two_tensors"), &len);
    cr_assert_not_null(buf, "%s", path);
    llm_safetensors *st = NULL;
    cr_assert_eq(llm_safetensors_open_memory(buf, len, "two_tensors", &st), LLM_OK, "%s", llm_models_last_error());
    cr_assert_eq(llm_safetensors_tensor_count(st), 2);
    const llm_st_tensor *e = llm_safetensors_find_tensor(st, "model.embed_tokens.weight");
    cr_assert_not_null(e);
    cr_expect_str_eq(e->dtype, "F16");
    cr_expect_eq(e->type, LLM_DTYPE_F16);
    cr_expect_eq(e->n_dims, 2u);
    cr_expect(e->shape[0] == 4 && e->shape[1] == 8);
    cr_expect(e->ne[0] == 8 && e->ne[1] == 4 && e->ne[2] == 1);
    cr_expect_eq(e->size, 64u);
    float row[32];
    cr_assert_eq(llm_dtype_dequantize_row(LLM_DTYPE_F16, e->data, row, 32), LLM_OK);
    for (int i = 0; i < 32; i++) cr_expect_eq(row[i], (float)i);
    const llm_st_tensor *n = llm_safetensors_find_tensor(st, "model.norm.weight");
    cr_assert_not_null(n);
    cr_expect_eq(n->type, LLM_DTYPE_F32);
    float f;
    memcpy(&f, (const uint8_t *)n->data + 28, 4);
    cr_expect_eq(f, 0.5f);
    cr_expect_eq(llm_safetensors_meta_count(st), 1);
    cr_expect_str_eq(llm_safetensors_meta_key(st, 0), "format");
    cr_expect_str_eq(llm_safetensors_meta_value(st, 0), "pt");
    cr_expect_null(llm_safetensors_find_tensor(st, "nope"));
    llm_safetensors_close(st);
    llm_safetensors_close(NULL);
    free(buf);
}

static void expect_st(const char *header, size_t data_len, llm_status want, const char *needle) {
    uint8_t *data = calloc(1, data_len + 1);
    size_t len;
    uint8_t *buf = st_build(header, data, data_len, &len);
    llm_safetensors *st = (llm_safetensors *)(uintptr_t)1;
    llm_status got = llm_safetensors_open_memory(buf, len, "t", &st);
    cr_expect_eq(got, want, "header %s: want %d got %d (%s)", header, (int)want, (int)got, llm_models_last_error());
    if (want != LLM_OK) {
        cr_expect_null(st);
        cr_expect(strstr(llm_models_last_error(), "byte offset") != NULL, "%s", llm_models_last_error());
        if (needle)
            cr_expect(strstr(llm_models_last_error(), needle) != NULL, "'%s' lacks '%s'", llm_models_last_error(), needle);
    } else {
        llm_safetensors_close(st);
    }
    free(buf);
    free(data);
}

Test(safetensors, lying_headers) {
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", 16, LLM_OK, NULL);
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", 15, LLM_ERR_BAD_FORMAT, "past the end");
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", 20, LLM_ERR_BAD_FORMAT, "after the last tensor");
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,16]}}", 16, LLM_ERR_BAD_FORMAT, "needs 24");
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
              "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[2,6]}}", 6, LLM_ERR_BAD_FORMAT, "overlaps");
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
              "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12, LLM_ERR_BAD_FORMAT, "gap");
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4, LLM_ERR_BAD_FORMAT, "begin <= end");
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 4, LLM_ERR_BAD_FORMAT, NULL);
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],\"data_offsets\":[0,0]}}", 0, LLM_ERR_BAD_FORMAT, "overflow");
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,0]}}", 0, LLM_ERR_BAD_FORMAT, "shape");
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,0]}}", 0, LLM_ERR_BAD_FORMAT, "shape");
    expect_st("{\"a\":{\"dtype\":\"Q4\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, LLM_ERR_BAD_FORMAT, "unknown dtype");
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, LLM_ERR_UNSUPPORTED, "5 dimensions");
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, LLM_ERR_BAD_FORMAT, "data_offsets");
    expect_st("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, LLM_ERR_BAD_FORMAT, "dtype");
    expect_st("{\"a\":7}", 0, LLM_ERR_BAD_FORMAT, "not an object");
    expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{}}", 4, LLM_ERR_BAD_FORMAT, "JSON");
    expect_st("{\"a\":", 0, LLM_ERR_BAD_FORMAT, "invalid JSON");
    expect_st("[1,2]", 0, LLM_ERR_BAD_FORMAT, "not a JSON object");
    expect_st("{\"\xff\":1}", 0, LLM_ERR_BAD_FORMAT, "invalid JSON");
    expect_st("{\"__metadata__\":{\"k\":1}}", 0, LLM_ERR_BAD_FORMAT, "__metadata__");
    expect_st("{}", 0, LLM_OK, NULL);
    expect_st("{\"s\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[0,8]}}", 8, LLM_OK, NULL);
    /* header length that lies */
    uint8_t b[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}'};
    llm_safetensors *st = NULL;
    cr_expect_eq(llm_safetensors_open_memory(b, sizeof b, "t", &st), LLM_ERR_BAD_FORMAT);
    cr_expect(strstr(llm_models_last_error(), "header length") != NULL, "%s", llm_models_last_error());
    cr_expect_eq(llm_safetensors_open_memory(b, 5, "t", &st), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(llm_safetensors_open("/nonexistent/x.safetensors", &st), LLM_ERR_IO);
}

/* Truncation at every byte of the reference file fails cleanly. */
Test(safetensors, truncated_everywhere) {
    char path[1024];
    size_t len = 0;
    uint8_t *buf = tm_read_file(tm_source_path(path, sizeof path, "fuzz/corpus/safetensors/two_tensors"), &len);
    cr_assert_not_null(buf);
    for (size_t n = 0; n < len; n++) {
        uint8_t *p = malloc(n ? n : 1);
        memcpy(p, buf, n);
        llm_safetensors *st = NULL;
        cr_assert_neq(llm_safetensors_open_memory(n ? p : NULL, n, "trunc", &st), LLM_OK, "n=%zu", n);
        cr_assert_null(st);
        free(p);
    }
    free(buf);
}
