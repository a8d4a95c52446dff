/*
 * safetensors.c -- SafeTensors reader. Layout:
 *
 *   u64 N (little-endian) | N bytes of JSON header (UTF-8) | data buffer
 *
 * The header is an object: "__metadata__" -> {string: string}, and per
 * tensor name -> {"dtype": "F32", "shape": [d0, d1, ...] (outermost first),
 * "data_offsets": [begin, end] (relative to the data buffer)}. As the
 * reference implementation requires, the tensors' byte ranges must tile the
 * data buffer exactly (contiguous, no gaps, no overlap, ending at EOF), and
 * each range must be exactly shape-product x dtype-size bytes. Everything is
 * checked, with overflow-safe arithmetic, before a pointer is formed.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats_internal.h"

#define ST_MAX_HEADER (100u * 1024u * 1024u) /* the reference's limit */

typedef struct st_meta {
    char *key, *value;
} st_meta;

struct llm_safetensors {
    llm__mapped map;
    char *name;
    int64_t n_tensors;
    llm_st_tensor *tensors; /* [n_tensors], sorted by offset */
    int64_t n_meta;
    st_meta *meta;          /* [n_meta] */
    llm__strmap map_names;
};

typedef struct st_dtype {
    const char *name;
    uint32_t size;
    int llm_type; /* llm_dtype, or -1 */
} st_dtype;

static const st_dtype k_dtypes[] = {
    {"F64", 8, -1},  {"F32", 4, LLM_DTYPE_F32}, {"F16", 2, LLM_DTYPE_F16}, {"BF16", 2, LLM_DTYPE_BF16},
    {"I64", 8, -1},  {"I32", 4, -1}, {"I16", 2, -1}, {"I8", 1, -1}, {"U64", 8, -1}, {"U32", 4, -1},
    {"U16", 2, -1},  {"U8", 1, -1},  {"BOOL", 1, -1}, {"F8_E4M3", 1, -1}, {"F8_E5M2", 1, -1},
};

static llm_status st_fail(const llm_safetensors *st, llm_status code, uint64_t at, const char *what) {
    return llm__models_error(code, "safetensors: %s: %s at byte offset %" PRIu64, st->name, what, at);
}

static const char *tensor_name_of(const void *ctx, int64_t id) {
    return ((const llm_safetensors *)ctx)->tensors[id].name;
}

static int cmp_offset(const void *a, const void *b) {
    const llm_st_tensor *x = a, *y = b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return x->size < y->size ? -1 : x->size > y->size;
}

/* Parses one tensor entry. data_start is the absolute offset of the data
 * buffer, data_len its length. */
static llm_status parse_tensor(llm_safetensors *st, const char *name, json_t *e, uint64_t data_start,
                               uint64_t data_len, llm_st_tensor *t) {
    char msg[320];
    const uint64_t hdr_at = 8; /* jansson gives no node positions: point at the header */
#define BAD(...)                                      \
    do {                                              \
        snprintf(msg, sizeof msg, __VA_ARGS__);       \
        return st_fail(st, LLM_ERR_BAD_FORMAT, hdr_at, msg); \
    } while (0)
    if (!json_is_object(e)) BAD("header entry '%.64s' is not an object", name);
    json_t *jd = json_object_get(e, "dtype"), *js = json_object_get(e, "shape"),
           *jo = json_object_get(e, "data_offsets");
    if (!json_is_string(jd)) BAD("tensor '%.64s': missing or non-string \"dtype\"", name);
    if (!json_is_array(js)) BAD("tensor '%.64s': missing or non-array \"shape\"", name);
    if (!json_is_array(jo) || json_array_size(jo) != 2)
        BAD("tensor '%.64s': \"data_offsets\" is not a [begin, end] pair", name);
    const st_dtype *dt = NULL;
    for (size_t i = 0; i < sizeof k_dtypes / sizeof k_dtypes[0]; i++)
        if (strcmp(json_string_value(jd), k_dtypes[i].name) == 0) dt = &k_dtypes[i];
    if (!dt) BAD("tensor '%.64s': unknown dtype '%.32s'", name, json_string_value(jd));
    const size_t nd = json_array_size(js);
    if (nd > 4) {
        snprintf(msg, sizeof msg, "tensor '%.64s' has %zu dimensions (at most 4 supported)", name, nd);
        return st_fail(st, LLM_ERR_UNSUPPORTED, hdr_at, msg);
    }
    uint64_t nel = 1;
    t->n_dims = (uint32_t)nd;
    for (size_t d = 0; d < 4; d++) t->shape[d] = 1, t->ne[d] = 1;
    for (size_t d = 0; d < nd; d++) {
        json_t *x = json_array_get(js, d);
        if (!json_is_integer(x) || json_integer_value(x) < 0)
            BAD("tensor '%.64s': shape[%zu] is not a non-negative integer", name, d);
        const uint64_t v = (uint64_t)json_integer_value(x);
        if (v && nel > (uint64_t)INT64_MAX / v) BAD("tensor '%.64s': element count overflows", name);
        nel *= v;
        t->shape[d] = (int64_t)v;
        t->ne[nd - 1 - d] = (int64_t)v;
    }
    if (nel > UINT64_MAX / dt->size) BAD("tensor '%.64s': byte size overflows", name);
    json_t *jb = json_array_get(jo, 0), *je = json_array_get(jo, 1);
    if (!json_is_integer(jb) || !json_is_integer(je) || json_integer_value(jb) < 0 ||
        json_integer_value(je) < json_integer_value(jb))
        BAD("tensor '%.64s': data_offsets are not 0 <= begin <= end", name);
    const uint64_t b = (uint64_t)json_integer_value(jb), en = (uint64_t)json_integer_value(je);
    if (en > data_len)
        BAD("tensor '%.64s': data_offsets [%" PRIu64 ", %" PRIu64 ") extend past the end of the data (%" PRIu64 " bytes)",
            name, b, en, data_len);
    if (en - b != nel * dt->size)
        BAD("tensor '%.64s': data_offsets span %" PRIu64 " bytes but %s shape needs %" PRIu64, name, en - b,
            dt->name, nel * dt->size);
#undef BAD
    t->dtype = dt->name;
    t->type = dt->llm_type;
    t->offset = data_start + b;
    t->size = en - b;
    t->data = st->map.data + t->offset;
    return LLM_OK;
}

static llm_status parse_meta(llm_safetensors *st, json_t *m) {
    if (!json_is_object(m)) return st_fail(st, LLM_ERR_BAD_FORMAT, 8, "\"__metadata__\" is not an object");
    const size_t n = json_object_size(m);
    st->meta = calloc(n ? n : 1, sizeof *st->meta);
    if (!st->meta) return llm__models_error(LLM_ERR_NO_MEMORY, "safetensors: out of memory");
    const char *k;
    json_t *v;
    json_object_foreach(m, k, v) {
        if (!json_is_string(v)) {
            char msg[160];
            snprintf(msg, sizeof msg, "__metadata__ value of '%.64s' is not a string", k);
            return st_fail(st, LLM_ERR_BAD_FORMAT, 8, msg);
        }
        st_meta *e = &st->meta[st->n_meta];
        e->key = llm__strndup(k, strlen(k));
        e->value = llm__strndup(json_string_value(v), json_string_length(v));
        st->n_meta++;
        if (!e->key || !e->value) return llm__models_error(LLM_ERR_NO_MEMORY, "safetensors: out of memory");
    }
    return LLM_OK;
}

static llm_status st_parse(llm_safetensors *st) {
    const uint8_t *p = st->map.data;
    const uint64_t size = st->map.size;
    if (size < 8) return st_fail(st, LLM_ERR_BAD_FORMAT, 0, "file too small for the 8-byte header length");
    const uint64_t n = llm__rd64(p);
    char msg[256];
    if (n > size - 8) {
        snprintf(msg, sizeof msg, "header length %" PRIu64 " exceeds the %" PRIu64 " bytes after it", n, size - 8);
        return st_fail(st, LLM_ERR_BAD_FORMAT, 0, msg);
    }
    if (n > ST_MAX_HEADER) return st_fail(st, LLM_ERR_BAD_FORMAT, 0, "header longer than 100 MB");
    if (n < 2 || p[8] != '{') return st_fail(st, LLM_ERR_BAD_FORMAT, 8, "header is not a JSON object");
    json_error_t err;
    json_t *root = json_loadb((const char *)p + 8, (size_t)n, JSON_REJECT_DUPLICATES, &err);
    if (!root) {
        snprintf(msg, sizeof msg, "invalid JSON header: %.120s", err.text);
        return st_fail(st, LLM_ERR_BAD_FORMAT, 8 + (uint64_t)(err.position > 0 ? err.position : 0), msg);
    }
    llm_status rc = LLM_OK;
    if (!json_is_object(root)) {
        rc = st_fail(st, LLM_ERR_BAD_FORMAT, 8, "header is not a JSON object");
        goto done;
    }
    const size_t count = json_object_size(root);
    st->tensors = calloc(count ? count : 1, sizeof *st->tensors);
    if (!st->tensors) {
        rc = llm__models_error(LLM_ERR_NO_MEMORY, "safetensors: out of memory");
        goto done;
    }
    const uint64_t data_start = 8 + n, data_len = size - data_start;
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val) {
        if (strcmp(key, "__metadata__") == 0) {
            if ((rc = parse_meta(st, val))) goto done;
            continue;
        }
        if (key[0] == '\0') {
            rc = st_fail(st, LLM_ERR_BAD_FORMAT, 8, "empty tensor name");
            goto done;
        }
        llm_st_tensor *t = &st->tensors[st->n_tensors];
        t->name = llm__strndup(key, strlen(key));
        if (!t->name) {
            rc = llm__models_error(LLM_ERR_NO_MEMORY, "safetensors: out of memory");
            goto done;
        }
        st->n_tensors++;
        if ((rc = parse_tensor(st, key, val, data_start, data_len, t))) goto done;
    }
    qsort(st->tensors, (size_t)st->n_tensors, sizeof *st->tensors, cmp_offset);
    /* The byte ranges must tile the data buffer exactly. */
    uint64_t expect = data_start;
    for (int64_t i = 0; i < st->n_tensors; i++) {
        const llm_st_tensor *t = &st->tensors[i];
        if (t->offset != expect) {
            snprintf(msg, sizeof msg, "tensor '%.64s' data starts at %" PRIu64 ", expected %" PRIu64 " (%s)",
                     t->name, t->offset - data_start, expect - data_start,
                     t->offset < expect ? "overlaps the previous tensor" : "gap before it");
            rc = st_fail(st, LLM_ERR_BAD_FORMAT, t->offset, msg);
            goto done;
        }
        expect += t->size;
    }
    if (expect != size) {
        snprintf(msg, sizeof msg, "%" PRIu64 " bytes of data after the last tensor", size - expect);
        rc = st_fail(st, LLM_ERR_BAD_FORMAT, expect, msg);
        goto done;
    }
    if ((rc = llm__strmap_init(&st->map_names, (uint64_t)st->n_tensors, tensor_name_of, st))) {
        rc = llm__models_error(rc, "safetensors: out of memory");
        goto done;
    }
    for (int64_t i = 0; i < st->n_tensors; i++) llm__strmap_insert(&st->map_names, i); /* JSON keys are unique */
done:
    json_decref(root);
    return rc;
}

static llm_status st_open_mapped(llm__mapped *m, const char *name, llm_safetensors **out) {
    llm_safetensors *st = calloc(1, sizeof *st);
    if (!st) {
        llm__unmap(m);
        return llm__models_error(LLM_ERR_NO_MEMORY, "safetensors: out of memory");
    }
    st->map = *m;
    st->name = llm__strndup(name, strlen(name));
    llm_status rc = st->name ? st_parse(st) : llm__models_error(LLM_ERR_NO_MEMORY, "safetensors: out of memory");
    if (rc) {
        llm_safetensors_close(st);
        return rc;
    }
    llm__models_clear_error();
    *out = st;
    return LLM_OK;
}

llm_status llm_safetensors_open(const char *path, llm_safetensors **out) {
    if (out) *out = NULL;
    if (!path || !out) return llm__models_error(LLM_ERR_INVALID_ARG, "safetensors: NULL argument");
    llm__mapped m;
    llm_status rc = llm__map_file(path, LLM__ERR_MODELS, "safetensors", &m);
    if (rc) return rc;
    return st_open_mapped(&m, path, out);
}

llm_status llm_safetensors_open_memory(const void *buf, size_t len, const char *name, llm_safetensors **out) {
    if (out) *out = NULL;
    if ((!buf && len) || !out) return llm__models_error(LLM_ERR_INVALID_ARG, "safetensors: NULL argument");
    llm__mapped m = {(const uint8_t *)buf, len, 0};
    return st_open_mapped(&m, name ? name : "<memory>", out);
}

const llm__mapped *llm__st_mapping(const llm_safetensors *st) { return st ? &st->map : NULL; }

void llm_safetensors_close(llm_safetensors *st) {
    if (!st) return;
    for (int64_t i = 0; i < st->n_tensors; i++) free((char *)st->tensors[i].name);
    for (int64_t i = 0; i < st->n_meta; i++) {
        free(st->meta[i].key);
        free(st->meta[i].value);
    }
    free(st->tensors);
    free(st->meta);
    llm__strmap_free(&st->map_names);
    llm__unmap(&st->map);
    free(st->name);
    free(st);
}

int64_t llm_safetensors_tensor_count(const llm_safetensors *st) { return st ? st->n_tensors : 0; }

const llm_st_tensor *llm_safetensors_tensor_at(const llm_safetensors *st, int64_t i) {
    return st && i >= 0 && i < st->n_tensors ? &st->tensors[i] : NULL;
}

const llm_st_tensor *llm_safetensors_find_tensor(const llm_safetensors *st, const char *name) {
    if (!st || !name) return NULL;
    const int64_t i = llm__strmap_find(&st->map_names, name);
    return i >= 0 ? &st->tensors[i] : NULL;
}

int64_t llm_safetensors_meta_count(const llm_safetensors *st) { return st ? st->n_meta : 0; }

const char *llm_safetensors_meta_key(const llm_safetensors *st, int64_t i) {
    return st && i >= 0 && i < st->n_meta ? st->meta[i].key : NULL;
}

const char *llm_safetensors_meta_value(const llm_safetensors *st, int64_t i) {
    return st && i >= 0 && i < st->n_meta ? st->meta[i].value : NULL;
}
