/*
 * gguf_values.c -- read access to an open GGUF: accessors, metadata getters
 * with type conversion rules, O(1) array element access (a string array's
 * element: at most LLM__GGUF_STR_STRIDE - 1 strings skipped), tensor lookup.
 * Everything here reads data that gguf.c has already validated.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gguf_internal.h"

uint32_t llm_gguf_version(const llm_gguf *g) { return g ? g->version : 0; }
uint32_t llm_gguf_alignment(const llm_gguf *g) { return g ? g->alignment : 0; }
uint64_t llm_gguf_data_offset(const llm_gguf *g) { return g ? g->data_offset : 0; }
uint64_t llm_gguf_file_size(const llm_gguf *g) { return g ? g->map.size : 0; }
const void *llm_gguf_file_data(const llm_gguf *g) { return g ? g->map.data : NULL; }
int64_t llm_gguf_kv_count(const llm_gguf *g) { return g ? g->n_kv : 0; }
int64_t llm_gguf_tensor_count(const llm_gguf *g) { return g ? g->n_tensors : 0; }

const char *llm_gguf_kv_key(const llm_gguf *g, int64_t i) {
    return g && i >= 0 && i < g->n_kv ? g->kv[i].key : NULL;
}

llm_status llm_gguf_kv_value(const llm_gguf *g, int64_t i, llm_gguf_value *out) {
    if (!g || !out || i < 0 || i >= g->n_kv)
        return llm__gguf_error(LLM_ERR_INVALID_ARG, "gguf: metadata index out of range");
    *out = g->kv[i].v;
    return LLM_OK;
}

int64_t llm_gguf_find_key(const llm_gguf *g, const char *key) {
    return g && key ? llm__strmap_find(&g->kv_map, key) : -1;
}

llm_status llm_gguf_get(const llm_gguf *g, const char *key, llm_gguf_value *out) {
    if (!g || !key || !out) return llm__gguf_error(LLM_ERR_INVALID_ARG, "gguf: NULL argument");
    const int64_t i = llm__strmap_find(&g->kv_map, key);
    if (i < 0) return llm__gguf_error(LLM_ERR_NOT_FOUND, "gguf: %s: no metadata key '%.128s'", g->name, key);
    *out = g->kv[i].v;
    return LLM_OK;
}

static int is_int_type(llm_gguf_type t) {
    switch (t) {
    case LLM_GGUF_UINT8: case LLM_GGUF_INT8: case LLM_GGUF_UINT16: case LLM_GGUF_INT16:
    case LLM_GGUF_UINT32: case LLM_GGUF_INT32: case LLM_GGUF_UINT64: case LLM_GGUF_INT64:
    case LLM_GGUF_BOOL:
        return 1;
    default:
        return 0;
    }
}

/* Reads an integer-typed scalar at p as a signed value (*neg set when it is
 * negative) and its magnitude as uint64. */
static void read_int(llm_gguf_type t, const uint8_t *p, int *neg, uint64_t *mag) {
    int64_t s = 0;
    uint64_t u = 0;
    int is_signed = 1;
    switch (t) {
    case LLM_GGUF_UINT8: case LLM_GGUF_BOOL: u = p[0]; is_signed = 0; break;
    case LLM_GGUF_INT8: s = (int8_t)p[0]; break;
    case LLM_GGUF_UINT16: u = llm__rd16(p); is_signed = 0; break;
    case LLM_GGUF_INT16: s = (int16_t)llm__rd16(p); break;
    case LLM_GGUF_UINT32: u = llm__rd32(p); is_signed = 0; break;
    case LLM_GGUF_INT32: s = (int32_t)llm__rd32(p); break;
    case LLM_GGUF_UINT64: u = llm__rd64(p); is_signed = 0; break;
    case LLM_GGUF_INT64: s = (int64_t)llm__rd64(p); break;
    default: break;
    }
    if (is_signed) {
        *neg = s < 0;
        *mag = s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
    } else {
        *neg = 0;
        *mag = u;
    }
}

static llm_status type_error(const llm_gguf_value *v, const char *want) {
    return llm__gguf_error(LLM_ERR_BAD_FORMAT, "gguf: value of type %s where %s was expected",
                             llm_gguf_type_name(v->type), want);
}

llm_status llm_gguf_value_i64(const llm_gguf_value *v, int64_t *out) {
    if (!v || !out) return LLM_ERR_INVALID_ARG;
    if (!is_int_type(v->type)) return type_error(v, "an integer");
    int neg = 0;
    uint64_t mag = 0;
    read_int(v->type, v->data, &neg, &mag);
    if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX)
        return llm__gguf_error(LLM_ERR_BAD_FORMAT, "gguf: integer %s%" PRIu64 " out of int64 range",
                                 neg ? "-" : "", mag);
    *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return LLM_OK;
}

llm_status llm_gguf_value_u64(const llm_gguf_value *v, uint64_t *out) {
    if (!v || !out) return LLM_ERR_INVALID_ARG;
    if (!is_int_type(v->type)) return type_error(v, "an integer");
    int neg = 0;
    uint64_t mag = 0;
    read_int(v->type, v->data, &neg, &mag);
    if (neg && mag) return llm__gguf_error(LLM_ERR_BAD_FORMAT, "gguf: negative integer -%" PRIu64 " where unsigned expected", mag);
    *out = mag;
    return LLM_OK;
}

llm_status llm_gguf_value_f64(const llm_gguf_value *v, double *out) {
    if (!v || !out) return LLM_ERR_INVALID_ARG;
    if (v->type == LLM_GGUF_FLOAT32) {
        uint32_t b = llm__rd32(v->data);
        float f;
        memcpy(&f, &b, 4);
        *out = f;
    } else if (v->type == LLM_GGUF_FLOAT64) {
        uint64_t b = llm__rd64(v->data);
        memcpy(out, &b, 8);
    } else {
        return type_error(v, "a float");
    }
    return LLM_OK;
}

llm_status llm_gguf_value_bool(const llm_gguf_value *v, int *out) {
    if (!v || !out) return LLM_ERR_INVALID_ARG;
    if (v->type != LLM_GGUF_BOOL) return type_error(v, "a bool");
    *out = ((const uint8_t *)v->data)[0] != 0;
    return LLM_OK;
}

llm_status llm_gguf_value_str(const llm_gguf_value *v, const char **s, size_t *len) {
    if (!v || !s || !len) return LLM_ERR_INVALID_ARG;
    if (v->type != LLM_GGUF_STRING) return type_error(v, "a string");
    *s = (const char *)v->data;
    *len = (size_t)v->count;
    return LLM_OK;
}

/* By-key getters: look up, convert, range-check, name the key on error. */
static llm_status get_int(const llm_gguf *g, const char *key, int64_t lo, uint64_t hi, int64_t *sv,
                          uint64_t *uv) {
    llm_gguf_value v = {0};
    llm_status st = llm_gguf_get(g, key, &v);
    if (st) return st;
    if (!is_int_type(v.type))
        return llm__gguf_error(LLM_ERR_BAD_FORMAT, "gguf: %s: '%.128s' is a %s, not an integer", g->name,
                                 key, llm_gguf_type_name(v.type));
    int neg = 0;
    uint64_t mag = 0;
    read_int(v.type, v.data, &neg, &mag);
    const int ok = neg ? (lo < 0 && mag <= (uint64_t)0 - (uint64_t)lo) : mag <= hi;
    if (!ok)
        return llm__gguf_error(LLM_ERR_BAD_FORMAT, "gguf: %s: '%.128s' = %s%" PRIu64 " is out of range",
                                 g->name, key, neg ? "-" : "", mag);
    *uv = mag;
    *sv = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return LLM_OK;
}

#define DEF_GET_INT(fn, T, LO, HI, FIELD)                                   \
    llm_status fn(const llm_gguf *g, const char *key, T *out) {            \
        int64_t s = 0;                                                        \
        uint64_t u = 0;                                                        \
        if (!out) return LLM_ERR_INVALID_ARG;                              \
        llm_status st = get_int(g, key, LO, HI, &s, &u);                    \
        if (st) return st;                                                  \
        *out = (T)FIELD;                                                    \
        return LLM_OK;                                                      \
    }

DEF_GET_INT(llm_gguf_get_u8, uint8_t, 0, UINT8_MAX, u)
DEF_GET_INT(llm_gguf_get_i8, int8_t, INT8_MIN, INT8_MAX, s)
DEF_GET_INT(llm_gguf_get_u16, uint16_t, 0, UINT16_MAX, u)
DEF_GET_INT(llm_gguf_get_i16, int16_t, INT16_MIN, INT16_MAX, s)
DEF_GET_INT(llm_gguf_get_u32, uint32_t, 0, UINT32_MAX, u)
DEF_GET_INT(llm_gguf_get_i32, int32_t, INT32_MIN, INT32_MAX, s)
DEF_GET_INT(llm_gguf_get_u64, uint64_t, 0, UINT64_MAX, u)
DEF_GET_INT(llm_gguf_get_i64, int64_t, INT64_MIN, INT64_MAX, s)

llm_status llm_gguf_get_f64(const llm_gguf *g, const char *key, double *out) {
    llm_gguf_value v = {0};
    if (!out) return LLM_ERR_INVALID_ARG;
    llm_status st = llm_gguf_get(g, key, &v);
    if (st) return st;
    if (v.type != LLM_GGUF_FLOAT32 && v.type != LLM_GGUF_FLOAT64)
        return llm__gguf_error(LLM_ERR_BAD_FORMAT, "gguf: %s: '%.128s' is a %s, not a float", g->name, key,
                                 llm_gguf_type_name(v.type));
    return llm_gguf_value_f64(&v, out);
}

llm_status llm_gguf_get_f32(const llm_gguf *g, const char *key, float *out) {
    double d;
    if (!out) return LLM_ERR_INVALID_ARG;
    llm_status st = llm_gguf_get_f64(g, key, &d);
    if (st) return st;
    *out = (float)d;
    return LLM_OK;
}

llm_status llm_gguf_get_bool(const llm_gguf *g, const char *key, int *out) {
    llm_gguf_value v = {0};
    if (!out) return LLM_ERR_INVALID_ARG;
    llm_status st = llm_gguf_get(g, key, &v);
    if (st) return st;
    if (v.type != LLM_GGUF_BOOL)
        return llm__gguf_error(LLM_ERR_BAD_FORMAT, "gguf: %s: '%.128s' is a %s, not a bool", g->name, key,
                                 llm_gguf_type_name(v.type));
    return llm_gguf_value_bool(&v, out);
}

llm_status llm_gguf_get_str(const llm_gguf *g, const char *key, const char **s, size_t *len) {
    llm_gguf_value v = {0};
    if (!s || !len) return LLM_ERR_INVALID_ARG;
    llm_status st = llm_gguf_get(g, key, &v);
    if (st) return st;
    if (v.type != LLM_GGUF_STRING)
        return llm__gguf_error(LLM_ERR_BAD_FORMAT, "gguf: %s: '%.128s' is a %s, not a string", g->name, key,
                                 llm_gguf_type_name(v.type));
    return llm_gguf_value_str(&v, s, len);
}

llm_status llm_gguf_get_array(const llm_gguf *g, const char *key, llm_gguf_value *out) {
    llm_gguf_value v = {0};
    if (!out) return LLM_ERR_INVALID_ARG;
    llm_status st = llm_gguf_get(g, key, &v);
    if (st) return st;
    if (v.type != LLM_GGUF_ARRAY)
        return llm__gguf_error(LLM_ERR_BAD_FORMAT, "gguf: %s: '%.128s' is a %s, not an array", g->name, key,
                                 llm_gguf_type_name(v.type));
    *out = v;
    return LLM_OK;
}

/* The encoding (u64 length, bytes) of string element i of a non-empty
 * string array: from the index entry at or before it, skip the strings in
 * between (fewer than LLM__GGUF_STR_STRIDE, all validated at open). */
static const uint8_t *string_elem(const llm_gguf_value *arr, uint64_t i) {
    const llm__gguf_elem *e = (const llm__gguf_elem *)arr->priv_ + i / LLM__GGUF_STR_STRIDE;
    const uint8_t *p = e->p;
    for (uint64_t k = i % LLM__GGUF_STR_STRIDE; k > 0; k--) p += 8 + llm__rd64(p);
    return p;
}

llm_status llm_gguf_array_get(const llm_gguf_value *arr, uint64_t i, llm_gguf_value *out) {
    if (!arr || !out || arr->type != LLM_GGUF_ARRAY || i >= arr->count)
        return llm__gguf_error(LLM_ERR_INVALID_ARG, "gguf: array element index out of range");
    memset(out, 0, sizeof *out);
    out->type = arr->elem_type;
    out->count = 1;
    const size_t esz = llm__gguf_scalar_size(arr->elem_type);
    if (esz) {
        out->data = (const uint8_t *)arr->data + i * esz;
        return LLM_OK;
    }
    if (arr->elem_type == LLM_GGUF_STRING) {
        const uint8_t *p = string_elem(arr, i);
        out->count = llm__rd64(p);
        out->data = p + 8;
        return LLM_OK;
    }
    const llm__gguf_elem *e = (const llm__gguf_elem *)arr->priv_ + i; /* nested array */
    out->elem_type = (llm_gguf_type)llm__rd32(e->p);
    out->count = llm__rd64(e->p + 4);
    out->data = e->p + 12;
    out->priv_ = e->child_rel ? e + e->child_rel : NULL;
    return LLM_OK;
}

llm_status llm_gguf_array_string(const llm_gguf_value *arr, uint64_t i, const char **s, size_t *len) {
    if (!arr || !s || !len || arr->type != LLM_GGUF_ARRAY || arr->elem_type != LLM_GGUF_STRING ||
        i >= arr->count)
        return llm__gguf_error(LLM_ERR_INVALID_ARG, "gguf: not a string array, or index out of range");
    const uint8_t *p = string_elem(arr, i);
    *len = (size_t)llm__rd64(p);
    *s = (const char *)p + 8;
    return LLM_OK;
}

static llm_status check_range(const llm_gguf_value *arr, uint64_t first, uint64_t n, const void *dst) {
    if (!arr || arr->type != LLM_GGUF_ARRAY || (!dst && n) || first > arr->count || n > arr->count - first)
        return llm__gguf_error(LLM_ERR_INVALID_ARG, "gguf: array range out of bounds");
    return LLM_OK;
}

llm_status llm_gguf_array_f32(const llm_gguf_value *arr, uint64_t first, uint64_t n, float *dst) {
    llm_status st = check_range(arr, first, n, dst);
    if (st) return st;
    const llm_gguf_type et = arr->elem_type;
    if (et != LLM_GGUF_FLOAT32 && et != LLM_GGUF_FLOAT64 && !is_int_type(et))
        return llm__gguf_error(LLM_ERR_BAD_FORMAT, "gguf: array of %s is not numeric", llm_gguf_type_name(et));
    const size_t esz = llm__gguf_scalar_size(et);
    const uint8_t *p = (const uint8_t *)arr->data + first * esz;
    for (uint64_t i = 0; i < n; i++, p += esz) {
        if (et == LLM_GGUF_FLOAT32) {
            memcpy(&dst[i], p, 4);
        } else if (et == LLM_GGUF_FLOAT64) {
            double d;
            memcpy(&d, p, 8);
            dst[i] = (float)d;
        } else {
            int neg = 0;
            uint64_t mag = 0;
            read_int(et, p, &neg, &mag);
            dst[i] = neg ? -(float)mag : (float)mag;
        }
    }
    return LLM_OK;
}

llm_status llm_gguf_array_i32(const llm_gguf_value *arr, uint64_t first, uint64_t n, int32_t *dst) {
    llm_status st = check_range(arr, first, n, dst);
    if (st) return st;
    const llm_gguf_type et = arr->elem_type;
    if (!is_int_type(et))
        return llm__gguf_error(LLM_ERR_BAD_FORMAT, "gguf: array of %s is not an integer array",
                                 llm_gguf_type_name(et));
    const size_t esz = llm__gguf_scalar_size(et);
    const uint8_t *p = (const uint8_t *)arr->data + first * esz;
    for (uint64_t i = 0; i < n; i++, p += esz) {
        int neg = 0;
        uint64_t mag = 0;
        read_int(et, p, &neg, &mag);
        if (neg ? mag > (uint64_t)INT32_MAX + 1 : mag > (uint64_t)INT32_MAX)
            return llm__gguf_error(LLM_ERR_BAD_FORMAT, "gguf: array element %" PRIu64 " out of int32 range",
                                     first + i);
        dst[i] = neg ? (int32_t)(0 - (int64_t)mag) : (int32_t)mag;
    }
    return LLM_OK;
}

const llm_gguf_tensor *llm_gguf_tensor_at(const llm_gguf *g, int64_t i) {
    return g && i >= 0 && i < g->n_tensors ? &g->tensors[i] : NULL;
}

const llm_gguf_tensor *llm_gguf_find_tensor(const llm_gguf *g, const char *name) {
    if (!g || !name) return NULL;
    const int64_t i = llm__strmap_find(&g->tensor_map, name);
    return i >= 0 ? &g->tensors[i] : NULL;
}
