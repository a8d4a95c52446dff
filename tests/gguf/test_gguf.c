/*
 * test_gguf.c -- the GGUF reader on synthetic files built with gguf_writer:
 * every value type and accessor on a valid file, then malformed files (each
 * must be a clear error naming the problem and the byte offset, never a
 * crash: this suite runs under ASan/UBSan in CI).
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf_writer.h"
#include "llama/dtype.h" /* one tensor is dequantized to check the data pointer */
#include "llama/gguf.h"

/* A valid v3 file: metadata of every type, and two tensors. Records byte
 * offsets of the interesting places for the malformed variants. */
typedef struct sample {
    gw w;
    size_t off_nkv_field;     /* header n_kv */
    size_t off_first_key;     /* first kv */
    size_t off_tensor_infos;  /* first tensor info */
    size_t off_t1_type;       /* type field of tensor 1 */
    size_t off_t1_offset;     /* offset field of tensor 1 */
    size_t off_data;          /* data section */
} sample;

static const char *const k_toks[] = {"<s>", "hello", "", "w\xc3\xb6rld"};

static void build_sample(sample *s, uint32_t version) {
    gw *w = &s->w;
    gw_init(w);
    gw_header(w, version, 2, 17);
    s->off_nkv_field = 16;
    s->off_first_key = w->len;
    gw_kv_str(w, "general.architecture", "llama");
    gw_key(w, "t.u8", 0); gw_u8(w, 200);
    gw_key(w, "t.i8", 1); gw_u8(w, 0x80);               /* -128 */
    gw_key(w, "t.u16", 2); gw_u16(w, 65535);
    gw_key(w, "t.i16", 3); gw_u16(w, 0x8000);            /* -32768 */
    gw_kv_u32(w, "t.u32", 4000000000u);
    gw_key(w, "t.i32", 5); gw_u32(w, (uint32_t)-7);
    gw_kv_f32(w, "t.f32", 0.1f);
    gw_kv_bool(w, "t.bool", 1);
    gw_key(w, "t.u64", 10); gw_u64(w, UINT64_MAX);
    gw_key(w, "t.i64", 11); gw_u64(w, (uint64_t)INT64_MIN);
    gw_key(w, "t.f64", 12); {
        double d = 2.5e300;
        uint64_t u;
        memcpy(&u, &d, 8);
        gw_u64(w, u);
    }
    gw_kv_str_array(w, "t.strs", 4, k_toks);
    const float fv[3] = {1.5f, -2.0f, 3.25f};
    gw_kv_f32_array(w, "t.f32s", 3, fv);
    /* nested: [[1, 2], [], [3]] of int32, then [["a"], ["b", "cd"]] */
    gw_key(w, "t.nested", 9);
    gw_u32(w, 9); gw_u64(w, 3);
    gw_u32(w, 5); gw_u64(w, 2); gw_u32(w, 1); gw_u32(w, 2);
    gw_u32(w, 5); gw_u64(w, 0);
    gw_u32(w, 5); gw_u64(w, 1); gw_u32(w, 3);
    gw_key(w, "t.nested_str", 9);
    gw_u32(w, 9); gw_u64(w, 2);
    gw_u32(w, 8); gw_u64(w, 1); gw_str(w, "a");
    gw_u32(w, 8); gw_u64(w, 2); gw_str(w, "b"); gw_str(w, "cd");
    gw_kv_u32(w, "general.alignment", 64);
    s->off_tensor_infos = w->len;
    const int64_t ne0[2] = {4, 2};
    gw_tensor(w, "a.weight", 2, ne0, 0 /* F32 */, 0);
    const int64_t ne1[1] = {32};
    gw_str(w, "b.weight");
    gw_u32(w, 1);
    gw_u64(w, 32);
    s->off_t1_type = w->len;
    gw_u32(w, 8 /* Q8_0 */);
    s->off_t1_offset = w->len;
    gw_u64(w, 64);
    (void)ne1;
    gw_pad(w, 64);
    s->off_data = w->len;
    for (int i = 0; i < 8; i++) gw_f32(w, (float)i);
    gw_pad(w, 64);
    gw_u16(w, 0x3C00); /* d = 1.0 */
    for (int i = 0; i < 32; i++) gw_u8(w, (uint8_t)(i - 16));
}

static llm_gguf *open_ok(const gw *w) {
    llm_gguf *g = NULL;
    llm_status st = llm_gguf_open_memory(w->buf, w->len, "sample", &g);
    cr_assert_eq(st, LLM_OK, "open failed: %s", llm_gguf_last_error());
    return g;
}

Test(gguf, valid_file_all_types) {
    sample s;
    build_sample(&s, 3);
    llm_gguf *g = open_ok(&s.w);
    cr_expect_eq(llm_gguf_version(g), 3u);
    cr_expect_eq(llm_gguf_alignment(g), 64u);
    cr_expect_eq(llm_gguf_data_offset(g), s.off_data);
    cr_expect_eq(llm_gguf_kv_count(g), 17);
    cr_expect_str_eq(llm_gguf_kv_key(g, 0), "general.architecture");
    cr_expect_null(llm_gguf_kv_key(g, 17));
    cr_expect_eq(llm_gguf_find_key(g, "t.f32"), 7);
    cr_expect_eq(llm_gguf_find_key(g, "nope"), -1);

    uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32;
    uint64_t u64; int64_t i64; float f; double d; int b;
    cr_expect_eq(llm_gguf_get_u8(g, "t.u8", &u8), LLM_OK); cr_expect_eq(u8, 200);
    cr_expect_eq(llm_gguf_get_i8(g, "t.i8", &i8), LLM_OK); cr_expect_eq(i8, -128);
    cr_expect_eq(llm_gguf_get_u16(g, "t.u16", &u16), LLM_OK); cr_expect_eq(u16, 65535);
    cr_expect_eq(llm_gguf_get_i16(g, "t.i16", &i16), LLM_OK); cr_expect_eq(i16, -32768);
    cr_expect_eq(llm_gguf_get_u32(g, "t.u32", &u32), LLM_OK); cr_expect_eq(u32, 4000000000u);
    cr_expect_eq(llm_gguf_get_i32(g, "t.i32", &i32), LLM_OK); cr_expect_eq(i32, -7);
    cr_expect_eq(llm_gguf_get_u64(g, "t.u64", &u64), LLM_OK); cr_expect_eq(u64, UINT64_MAX);
    cr_expect_eq(llm_gguf_get_i64(g, "t.i64", &i64), LLM_OK); cr_expect_eq(i64, INT64_MIN);
    cr_expect_eq(llm_gguf_get_f32(g, "t.f32", &f), LLM_OK); cr_expect_eq(f, 0.1f);
    cr_expect_eq(llm_gguf_get_f64(g, "t.f64", &d), LLM_OK); cr_expect_eq(d, 2.5e300);
    cr_expect_eq(llm_gguf_get_bool(g, "t.bool", &b), LLM_OK); cr_expect_eq(b, 1);
    /* Lenient integer rule: a u8 value read as i32; range failures. */
    cr_expect_eq(llm_gguf_get_i32(g, "t.u8", &i32), LLM_OK); cr_expect_eq(i32, 200);
    i32 = 99;
    cr_expect_eq(llm_gguf_get_i32(g, "t.u32", &i32), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(i32, 99, "untouched on error");
    cr_expect(strstr(llm_gguf_last_error(), "t.u32") != NULL, "%s", llm_gguf_last_error());
    cr_expect_eq(llm_gguf_get_u32(g, "t.i32", &u32), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(llm_gguf_get_i64(g, "t.u64", &i64), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(llm_gguf_get_u32(g, "t.f32", &u32), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(llm_gguf_get_f32(g, "t.u32", &f), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(llm_gguf_get_u32(g, "missing", &u32), LLM_ERR_NOT_FOUND);

    const char *str; size_t len;
    cr_expect_eq(llm_gguf_get_str(g, "general.architecture", &str, &len), LLM_OK);
    cr_expect_eq(len, 5u);
    cr_expect_eq(memcmp(str, "llama", 5), 0);

    llm_gguf_value a, e;
    cr_assert_eq(llm_gguf_get_array(g, "t.strs", &a), LLM_OK);
    cr_expect_eq(a.elem_type, LLM_GGUF_STRING);
    cr_expect_eq(a.count, 4u);
    for (uint64_t i = 0; i < 4; i++) {
        cr_assert_eq(llm_gguf_array_string(&a, i, &str, &len), LLM_OK);
        cr_expect_eq(len, strlen(k_toks[i]));
        cr_expect_eq(memcmp(str, k_toks[i], len), 0);
    }
    cr_expect_eq(llm_gguf_array_string(&a, 4, &str, &len), LLM_ERR_INVALID_ARG);

    float fv[3];
    cr_assert_eq(llm_gguf_get_array(g, "t.f32s", &a), LLM_OK);
    cr_expect_eq(llm_gguf_array_f32(&a, 0, 3, fv), LLM_OK);
    cr_expect(fv[0] == 1.5f && fv[1] == -2.0f && fv[2] == 3.25f);
    cr_expect_eq(llm_gguf_array_f32(&a, 2, 2, fv), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_gguf_array_get(&a, 1, &e), LLM_OK);
    cr_expect_eq(llm_gguf_value_f64(&e, &d), LLM_OK);
    cr_expect_eq(d, -2.0);

    /* Nested arrays: [[1, 2], [], [3]]. */
    cr_assert_eq(llm_gguf_get_array(g, "t.nested", &a), LLM_OK);
    cr_expect_eq(a.elem_type, LLM_GGUF_ARRAY);
    cr_expect_eq(a.count, 3u);
    int32_t iv[2];
    cr_assert_eq(llm_gguf_array_get(&a, 0, &e), LLM_OK);
    cr_expect_eq(e.elem_type, LLM_GGUF_INT32);
    cr_expect_eq(e.count, 2u);
    cr_expect_eq(llm_gguf_array_i32(&e, 0, 2, iv), LLM_OK);
    cr_expect(iv[0] == 1 && iv[1] == 2);
    cr_assert_eq(llm_gguf_array_get(&a, 1, &e), LLM_OK);
    cr_expect_eq(e.count, 0u);
    cr_assert_eq(llm_gguf_array_get(&a, 2, &e), LLM_OK);
    cr_expect_eq(llm_gguf_array_i32(&e, 0, 1, iv), LLM_OK);
    cr_expect_eq(iv[0], 3);
    cr_assert_eq(llm_gguf_get_array(g, "t.nested_str", &a), LLM_OK);
    cr_assert_eq(llm_gguf_array_get(&a, 1, &e), LLM_OK);
    cr_expect_eq(e.elem_type, LLM_GGUF_STRING);
    cr_assert_eq(llm_gguf_array_string(&e, 1, &str, &len), LLM_OK);
    cr_expect(len == 2 && memcmp(str, "cd", 2) == 0);

    cr_assert_eq(llm_gguf_tensor_count(g), 2);
    const llm_gguf_tensor *t = llm_gguf_find_tensor(g, "b.weight");
    cr_assert_not_null(t);
    cr_expect_eq(t, llm_gguf_tensor_at(g, 1));
    cr_expect_eq(t->type, 8u);
    cr_expect_eq(t->n_dims, 1u);
    cr_expect(t->ne[0] == 32 && t->ne[1] == 1 && t->ne[3] == 1);
    cr_expect_eq(t->size, 34u);
    cr_expect_eq(t->offset, s.off_data + 64);
    cr_expect_eq((const uint8_t *)t->data, s.w.buf + s.off_data + 64);
    float deq[32];
    cr_expect_eq(llm_dtype_dequantize_row(LLM_DTYPE_Q8_0, t->data, deq, 32), LLM_OK);
    cr_expect_eq(deq[0], -16.0f);
    cr_expect_eq(deq[31], 15.0f);
    t = llm_gguf_find_tensor(g, "a.weight");
    cr_assert_not_null(t);
    cr_expect(t->ne[0] == 4 && t->ne[1] == 2 && t->size == 32);
    cr_expect_null(llm_gguf_find_tensor(g, "c.weight"));
    cr_expect_str_eq(llm_gguf_tensor_type_name(8), "Q8_0");
    cr_expect_str_eq(llm_gguf_tensor_type_name(16), "IQ2_XXS");
    cr_expect_null(llm_gguf_tensor_type_name(4));
    llm_gguf_close(g);
    llm_gguf_close(NULL);
    gw_free(&s.w);
}

Test(gguf, version2_and_file_path) {
    sample s;
    build_sample(&s, 2);
    char path[] = "/tmp/llm_test_gguf_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(gw_save(&s.w, path), 0);
    llm_gguf *g = NULL;
    cr_assert_eq(llm_gguf_open(path, &g), LLM_OK, "%s", llm_gguf_last_error());
    cr_expect_eq(llm_gguf_version(g), 2u);
    cr_expect_eq(llm_gguf_file_size(g), s.w.len);
    cr_expect_eq(llm_gguf_tensor_count(g), 2);
    llm_gguf_close(g);
    unlink(path);
    cr_expect_eq(llm_gguf_open(path, &g), LLM_ERR_IO);
    cr_expect_null(g);
    cr_expect(strstr(llm_gguf_last_error(), path) != NULL);
    cr_expect_eq(llm_gguf_open("/", &g), LLM_ERR_IO);
    cr_expect_eq(llm_gguf_open(NULL, &g), LLM_ERR_INVALID_ARG);
    gw_free(&s.w);
}

/* String arrays longer than the index stride (an entry every 16 elements,
 * the rest reached by skipping strings): every element of arrays of 1..50
 * strings of varied lengths (0 to 40 bytes), read in reverse order, through
 * array_string and array_get; and the same inside a nested array of 20
 * string arrays (the index of each child array is sparse too). */
static void str_at(char *buf, size_t n, int a, int i) {
    size_t len = (size_t)((a * 7 + i * 13) % 41);
    if (len >= n) len = n - 1;
    for (size_t k = 0; k < len; k++) buf[k] = (char)('a' + (a + i + (int)k) % 26);
    buf[len] = '\0';
}

static void expect_str_array(const llm_gguf_value *arr, int a, uint64_t n) {
    cr_assert_eq(arr->type, LLM_GGUF_ARRAY);
    cr_assert_eq(arr->elem_type, LLM_GGUF_STRING);
    cr_assert_eq(arr->count, n);
    for (uint64_t i = n; i-- > 0;) {
        char want[64];
        str_at(want, sizeof want, a, (int)i);
        const char *str;
        size_t len;
        cr_assert_eq(llm_gguf_array_string(arr, i, &str, &len), LLM_OK);
        cr_assert(len == strlen(want) && memcmp(str, want, len) == 0, "array %d element %d", a, (int)i);
        llm_gguf_value e;
        cr_assert_eq(llm_gguf_array_get(arr, i, &e), LLM_OK);
        cr_assert(e.type == LLM_GGUF_STRING && e.count == len && e.data == (const void *)str);
    }
    const char *str;
    size_t len;
    cr_expect_eq(llm_gguf_array_string(arr, n, &str, &len), LLM_ERR_INVALID_ARG);
}

Test(gguf, long_string_arrays) {
    enum { N_FLAT = 50, N_NESTED = 20 };
    gw w;
    gw_init(&w);
    gw_header(&w, 3, 0, N_FLAT + 1);
    char key[32], buf[64];
    for (int a = 1; a <= N_FLAT; a++) {
        snprintf(key, sizeof key, "s.%d", a);
        gw_key(&w, key, 9);
        gw_u32(&w, 8);
        gw_u64(&w, (uint64_t)a);
        for (int i = 0; i < a; i++) {
            str_at(buf, sizeof buf, a, i);
            gw_str(&w, buf);
        }
    }
    gw_key(&w, "nested", 9);
    gw_u32(&w, 9);
    gw_u64(&w, N_NESTED);
    for (int a = 0; a < N_NESTED; a++) {
        gw_u32(&w, 8);
        gw_u64(&w, (uint64_t)(a * 3));
        for (int i = 0; i < a * 3; i++) {
            str_at(buf, sizeof buf, 100 + a, i);
            gw_str(&w, buf);
        }
    }
    llm_gguf *g = open_ok(&w);
    llm_gguf_value arr, sub;
    for (int a = N_FLAT; a >= 1; a--) {
        snprintf(key, sizeof key, "s.%d", a);
        cr_assert_eq(llm_gguf_get_array(g, key, &arr), LLM_OK);
        expect_str_array(&arr, a, (uint64_t)a);
    }
    cr_assert_eq(llm_gguf_get_array(g, "nested", &arr), LLM_OK);
    cr_assert_eq(arr.count, (uint64_t)N_NESTED);
    for (int a = N_NESTED - 1; a >= 0; a--) {
        cr_assert_eq(llm_gguf_array_get(&arr, (uint64_t)a, &sub), LLM_OK);
        expect_str_array(&sub, 100 + a, (uint64_t)(a * 3));
    }
    llm_gguf_close(g);
    gw_free(&w);
}

/* Expect open to fail with st and a message containing needle (and always
 * "byte offset" for format errors). */
static void expect_bad(const uint8_t *buf, size_t len, llm_status want, const char *needle) {
    llm_gguf *g = (llm_gguf *)(uintptr_t)1;
    llm_status st = llm_gguf_open_memory(buf, len, "bad", &g);
    cr_expect_eq(st, want, "want %d got %d: %s", (int)want, (int)st, llm_gguf_last_error());
    cr_expect_null(g);
    if (needle)
        cr_expect(strstr(llm_gguf_last_error(), needle) != NULL, "message '%s' lacks '%s'",
                  llm_gguf_last_error(), needle);
    if (want == LLM_ERR_BAD_FORMAT)
        cr_expect(strstr(llm_gguf_last_error(), "byte offset") != NULL, "no offset in '%s'",
                  llm_gguf_last_error());
    llm_gguf_close(st == LLM_OK ? g : NULL);
}

/* Truncation at every byte: each prefix of the valid file must fail cleanly
 * (the last tensor ends at the end of the file). Copies each prefix into an
 * exact-size heap buffer so ASan catches any read past it. */
Test(gguf, truncated_everywhere) {
    sample s;
    build_sample(&s, 3);
    for (size_t n = 0; n < s.w.len; n++) {
        uint8_t *p = malloc(n ? n : 1);
        memcpy(p, s.w.buf, n);
        llm_gguf *g = NULL;
        llm_status st = llm_gguf_open_memory(n ? p : NULL, n, "trunc", &g);
        cr_assert_neq(st, LLM_OK, "prefix of %zu bytes accepted", n);
        cr_assert_null(g);
        cr_assert(strstr(llm_gguf_last_error(), "byte offset") != NULL, "n=%zu: %s", n, llm_gguf_last_error());
        free(p);
    }
    gw_free(&s.w);
}

static void patch32(gw *w, size_t at, uint32_t v) {
    for (int i = 0; i < 4; i++) w->buf[at + i] = (uint8_t)(v >> (8 * i));
}
static void patch64(gw *w, size_t at, uint64_t v) {
    for (int i = 0; i < 8; i++) w->buf[at + i] = (uint8_t)(v >> (8 * i));
}

Test(gguf, header_errors) {
    sample s;
    build_sample(&s, 3);
    gw *w = &s.w;
    w->buf[0] = 'X';
    expect_bad(w->buf, w->len, LLM_ERR_BAD_FORMAT, "bad magic");
    w->buf[0] = 'G';
    patch32(w, 4, 1);
    expect_bad(w->buf, w->len, LLM_ERR_UNSUPPORTED, "version 1");
    patch32(w, 4, 0x03000000u);
    expect_bad(w->buf, w->len, LLM_ERR_UNSUPPORTED, "big-endian");
    patch32(w, 4, 7);
    expect_bad(w->buf, w->len, LLM_ERR_UNSUPPORTED, "version 7");
    patch32(w, 4, 3);
    patch64(w, 8, UINT64_MAX); /* n_tensors */
    expect_bad(w->buf, w->len, LLM_ERR_BAD_FORMAT, "tensor count");
    patch64(w, 8, 2);
    patch64(w, 16, (uint64_t)1 << 62); /* n_kv */
    expect_bad(w->buf, w->len, LLM_ERR_BAD_FORMAT, "metadata count");
    patch64(w, 16, 17);
    expect_bad(w->buf, 3, LLM_ERR_BAD_FORMAT, "too small");
    gw_free(w);
}

/* Small one-off files. */
Test(gguf, metadata_errors) {
    gw w;
    /* string length past the end */
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_key(&w, "k", 8); gw_u64(&w, 1000); gw_bytes(&w, "abc", 3);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "truncated"); gw_free(&w);
    /* huge key length */
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_u64(&w, UINT64_MAX); gw_u32(&w, 4); gw_u32(&w, 0);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "metadata key"); gw_free(&w);
    /* unknown value type */
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_key(&w, "k", 13); gw_u32(&w, 0);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "unknown value type"); gw_free(&w);
    /* invalid UTF-8 key (overlong '/'), and an empty key */
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_strn(&w, "a\xc0\xaf", 3); gw_u32(&w, 4); gw_u32(&w, 1);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "UTF-8"); gw_free(&w);
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_strn(&w, "", 0); gw_u32(&w, 4); gw_u32(&w, 1);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "empty"); gw_free(&w);
    /* key with an embedded NUL */
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_strn(&w, "a\0b", 3); gw_u32(&w, 4); gw_u32(&w, 1);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "UTF-8"); gw_free(&w);
    /* duplicate key */
    gw_init(&w); gw_header(&w, 3, 0, 2); gw_kv_u32(&w, "k", 1); gw_kv_u32(&w, "k", 2);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "duplicate metadata key 'k'"); gw_free(&w);
    /* absurd array count of fixed-size and of string elements */
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_key(&w, "k", 9); gw_u32(&w, 10); gw_u64(&w, (uint64_t)1 << 61);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "does not fit"); gw_free(&w);
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_key(&w, "k", 9); gw_u32(&w, 8); gw_u64(&w, UINT64_MAX);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "cannot fit"); gw_free(&w);
    /* unknown array element type */
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_key(&w, "k", 9); gw_u32(&w, 99); gw_u64(&w, 0);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "element type 99"); gw_free(&w);
    /* arrays nested 9 deep */
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_key(&w, "k", 9);
    for (int i = 0; i < 9; i++) { gw_u32(&w, 9); gw_u64(&w, 1); }
    gw_u32(&w, 4); gw_u64(&w, 0);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "nested too deeply"); gw_free(&w);
    /* bool that is 2 */
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_key(&w, "k", 7); gw_u8(&w, 2);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "bool"); gw_free(&w);
    /* alignment: wrong type, zero, not a power of two */
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_kv_f32(&w, "general.alignment", 32.0f);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "not a uint32"); gw_free(&w);
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_kv_u32(&w, "general.alignment", 0);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "power of two"); gw_free(&w);
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_kv_u32(&w, "general.alignment", 48);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "power of two"); gw_free(&w);
    /* a file with no tensors and no padding is fine */
    gw_init(&w); gw_header(&w, 3, 0, 1); gw_kv_u32(&w, "x", 1);
    llm_gguf *g = NULL;
    cr_expect_eq(llm_gguf_open_memory(w.buf, w.len, "ok", &g), LLM_OK, "%s", llm_gguf_last_error());
    llm_gguf_close(g);
    gw_free(&w);
}

/* One tensor info then data. */
static void one_tensor(gw *w, const char *name, uint32_t nd, const int64_t *ne, uint32_t type, uint64_t off,
                       size_t data_bytes) {
    gw_init(w);
    gw_header(w, 3, 1, 0);
    gw_tensor(w, name, nd, ne, type, off);
    gw_pad(w, 32);
    for (size_t i = 0; i < data_bytes; i++) gw_u8(w, 0);
}

Test(gguf, tensor_errors) {
    gw w;
    const int64_t ne[4] = {32, 2, 1, 1};
    one_tensor(&w, "t", 2, ne, 0, 0, 256);
    llm_gguf *g = NULL;
    cr_expect_eq(llm_gguf_open_memory(w.buf, w.len, "ok", &g), LLM_OK, "%s", llm_gguf_last_error());
    llm_gguf_close(g);
    gw_free(&w);
    one_tensor(&w, "t", 2, ne, 0, 0, 255);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "past the end"); gw_free(&w);
    one_tensor(&w, "t", 2, ne, 0, UINT64_MAX - 31, 256);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "past the end"); gw_free(&w);
    one_tensor(&w, "t", 2, ne, 0, 16, 512);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "alignment"); gw_free(&w);
    one_tensor(&w, "t", 2, ne, 4 /* removed Q4_2 */, 0, 256);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "unknown type 4"); gw_free(&w);
    one_tensor(&w, "t", 2, ne, 1000, 0, 256);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "unknown type"); gw_free(&w);
    const int64_t ne5[5] = {32, 2, 1, 1, 1};
    one_tensor(&w, "t", 5, ne5, 0, 0, 256);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "dimensions"); gw_free(&w);
    one_tensor(&w, "t", 0, ne, 0, 0, 256);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "dimensions"); gw_free(&w);
    const int64_t neg[2] = {-1, 2};
    one_tensor(&w, "t", 2, neg, 0, 0, 256);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "negative"); gw_free(&w);
    const int64_t big[3] = {(int64_t)1 << 40, (int64_t)1 << 30, 1 << 2};
    one_tensor(&w, "t", 3, big, 0, 0, 256);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "overflows"); gw_free(&w);
    const int64_t huge[2] = {(int64_t)1 << 61, 2};
    one_tensor(&w, "t", 2, huge, 0, 0, 256);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, NULL); gw_free(&w);
    const int64_t odd[1] = {33};
    one_tensor(&w, "t", 1, odd, 8 /* Q8_0 */, 0, 256);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "block size"); gw_free(&w);
    one_tensor(&w, "\xff\xfe", 2, ne, 0, 0, 256);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "UTF-8"); gw_free(&w);
    /* duplicate tensor names */
    gw_init(&w);
    gw_header(&w, 3, 2, 0);
    gw_tensor(&w, "dup", 1, ne, 0, 0);
    gw_tensor(&w, "dup", 1, ne, 0, 128);
    gw_pad(&w, 32);
    for (int i = 0; i < 256; i++) gw_u8(&w, 0);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, "duplicate tensor name 'dup'");
    gw_free(&w);
    /* tensor infos present but the file ends before the data section */
    gw_init(&w);
    gw_header(&w, 3, 1, 0);
    gw_tensor(&w, "t", 1, ne, 0, 0);
    expect_bad(w.buf, w.len, LLM_ERR_BAD_FORMAT, NULL);
    gw_free(&w);
}

/* Byte-flip robustness: flipping any single byte of the valid sample either
 * still opens or fails cleanly (ASan checks the "cleanly"). */
Test(gguf, single_byte_corruption) {
    sample s;
    build_sample(&s, 3);
    const size_t hdr_end = s.off_data; /* corrupt the metadata/infos only */
    for (size_t i = 0; i < hdr_end; i++) {
        for (int k = 0; k < 3; k++) {
            static const uint8_t vals[3] = {0x00, 0xFF, 0x80};
            uint8_t *p = malloc(s.w.len);
            memcpy(p, s.w.buf, s.w.len);
            p[i] = (uint8_t)(p[i] == vals[k] ? vals[k] ^ 1 : vals[k]);
            llm_gguf *g = NULL;
            if (llm_gguf_open_memory(p, s.w.len, "flip", &g) == LLM_OK) {
                /* Walk everything: getters must stay in bounds. */
                for (int64_t j = 0; j < llm_gguf_kv_count(g); j++) {
                    llm_gguf_value v, e;
                    llm_gguf_kv_value(g, j, &v);
                    if (v.type == LLM_GGUF_ARRAY)
                        for (uint64_t m = 0; m < v.count && m < 8; m++) llm_gguf_array_get(&v, m, &e);
                }
                llm_gguf_close(g);
            } else {
                cr_assert_null(g);
                cr_assert(llm_gguf_last_error()[0] != '\0');
            }
            free(p);
        }
    }
    gw_free(&s.w);
}
