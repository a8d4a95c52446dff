/*
 * gguf.c -- GGUF reader: maps the file and validates everything before any
 * of it is used. Layout (little-endian), for versions 2 and 3:
 *
 *   magic "GGUF" | u32 version | u64 n_tensors | u64 n_kv
 *   n_kv x      { string key | u32 type | value }
 *   n_tensors x { string name | u32 n_dims | u64 ne[n_dims] | u32 type | u64 offset }
 *   padding to general.alignment (default 32)
 *   tensor data: each tensor at data_offset + offset (offset aligned)
 *
 *   string = u64 len | len bytes;  array = u32 elem_type | u64 count | elements
 *
 * Every read goes through need(), which checks the bytes left first; every
 * size computation is overflow-checked. Errors name the problem and the byte
 * offset where it was found.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_internal.h"

#define GGUF_MAX_DEPTH 8      /* nested arrays deeper than this are rejected */
#define GGUF_DEFAULT_ALIGN 32

typedef struct cursor {
    llm_gguf *g;
    const uint8_t *base;
    uint64_t size;
    uint64_t pos;
} cursor;

static llm_status fail(const cursor *c, llm_status st, uint64_t at, const char *what) {
    return llm__gguf_error(st, "gguf: %s: %s at byte offset %" PRIu64, c->g->name, what, at);
}

/* Checks that n bytes are left at the cursor. */
static llm_status need(const cursor *c, uint64_t n, const char *what) {
    if (n > c->size - c->pos) {
        return llm__gguf_error(LLM_ERR_BAD_FORMAT,
                                 "gguf: %s: truncated: %s needs %" PRIu64 " bytes but only %" PRIu64
                                 " remain at byte offset %" PRIu64,
                                 c->g->name, what, n, c->size - c->pos, c->pos);
    }
    return LLM_OK;
}

static llm_status rd_u32(cursor *c, uint32_t *v, const char *what) {
    llm_status st = need(c, 4, what);
    if (st) return st;
    *v = llm__rd32(c->base + c->pos);
    c->pos += 4;
    return LLM_OK;
}

static llm_status rd_u64(cursor *c, uint64_t *v, const char *what) {
    llm_status st = need(c, 8, what);
    if (st) return st;
    *v = llm__rd64(c->base + c->pos);
    c->pos += 8;
    return LLM_OK;
}

/* Reads a string header and skips its bytes; *s points at them. */
static llm_status rd_str(cursor *c, const uint8_t **s, uint64_t *len, const char *what) {
    llm_status st = rd_u64(c, len, what);
    if (st) return st;
    if ((st = need(c, *len, what))) return st;
    *s = c->base + c->pos;
    c->pos += *len;
    return LLM_OK;
}

size_t llm__gguf_scalar_size(uint32_t t) {
    switch (t) {
    case LLM_GGUF_UINT8: case LLM_GGUF_INT8: case LLM_GGUF_BOOL: return 1;
    case LLM_GGUF_UINT16: case LLM_GGUF_INT16: return 2;
    case LLM_GGUF_UINT32: case LLM_GGUF_INT32: case LLM_GGUF_FLOAT32: return 4;
    case LLM_GGUF_UINT64: case LLM_GGUF_INT64: case LLM_GGUF_FLOAT64: return 8;
    default: return 0;
    }
}

const char *llm_gguf_type_name(llm_gguf_type t) {
    static const char *const names[] = {"uint8", "int8", "uint16", "int16", "uint32",
                                        "int32", "float32", "bool", "string", "array",
                                        "uint64", "int64", "float64"};
    return (unsigned)t <= LLM_GGUF_FLOAT64 ? names[t] : "invalid";
}

/* Every ggml tensor type GGUF can name (0 name = removed id), with block
 * size and bytes, so that files holding types llm does not compute with can
 * still be read and inspected. */
typedef struct ggml_type_info {
    const char *name;
    uint32_t blck, bytes;
} ggml_type_info;

static const ggml_type_info k_ggml_types[] = {
    [0] = {"F32", 1, 4},        [1] = {"F16", 1, 2},        [2] = {"Q4_0", 32, 18},
    [3] = {"Q4_1", 32, 20},     [6] = {"Q5_0", 32, 22},     [7] = {"Q5_1", 32, 24},
    [8] = {"Q8_0", 32, 34},     [9] = {"Q8_1", 32, 36},     [10] = {"Q2_K", 256, 84},
    [11] = {"Q3_K", 256, 110},  [12] = {"Q4_K", 256, 144},  [13] = {"Q5_K", 256, 176},
    [14] = {"Q6_K", 256, 210},  [15] = {"Q8_K", 256, 292},  [16] = {"IQ2_XXS", 256, 66},
    [17] = {"IQ2_XS", 256, 74}, [18] = {"IQ3_XXS", 256, 98}, [19] = {"IQ1_S", 256, 50},
    [20] = {"IQ4_NL", 32, 18},  [21] = {"IQ3_S", 256, 110}, [22] = {"IQ2_S", 256, 82},
    [23] = {"IQ4_XS", 256, 136}, [24] = {"I8", 1, 1},       [25] = {"I16", 1, 2},
    [26] = {"I32", 1, 4},       [27] = {"I64", 1, 8},       [28] = {"F64", 1, 8},
    [29] = {"IQ1_M", 256, 56},  [30] = {"BF16", 1, 2},      [34] = {"TQ1_0", 256, 54},
    [35] = {"TQ2_0", 256, 66},  [39] = {"MXFP4", 32, 17},   [40] = {"NVFP4", 64, 36},
    [41] = {"Q1_0", 128, 18},
};
#define N_GGML_TYPES (sizeof k_ggml_types / sizeof k_ggml_types[0])

const char *llm_gguf_tensor_type_name(uint32_t type) {
    return type < N_GGML_TYPES ? k_ggml_types[type].name : NULL;
}

/* Reserves n entries in the element pool; returns their first index. The
 * caller has already checked n against the bytes left in the file, so the
 * pool never exceeds file_size / 8 entries. */
static llm_status pool_reserve(llm_gguf *g, uint64_t n, int64_t *start) {
    if ((uint64_t)(g->pool_cap - g->pool_len) < n) {
        uint64_t cap = (uint64_t)g->pool_cap ? (uint64_t)g->pool_cap : 64;
        while (cap - (uint64_t)g->pool_len < n) cap *= 2;
        if (cap > SIZE_MAX / sizeof(llm__gguf_elem)) return LLM_ERR_NO_MEMORY;
        llm__gguf_elem *p = realloc(g->pool, (size_t)cap * sizeof *p);
        if (!p) return LLM_ERR_NO_MEMORY;
        g->pool = p;
        g->pool_cap = (int64_t)cap;
    }
    *start = g->pool_len;
    g->pool_len += (int64_t)n;
    return LLM_OK;
}

static llm_status parse_array(cursor *c, int depth, llm_gguf_value *v, int64_t *index_start);

/* Parses a value of type t at the cursor into *v. For arrays of variable-size
 * elements *index_start receives the first pool entry, else -1. */
static llm_status parse_value(cursor *c, uint32_t t, int depth, llm_gguf_value *v,
                              int64_t *index_start) {
    memset(v, 0, sizeof *v);
    *index_start = -1;
    v->type = (llm_gguf_type)t;
    v->count = 1;
    if (t == LLM_GGUF_STRING) {
        const uint8_t *s;
        llm_status st = rd_str(c, &s, &v->count, "string value");
        v->data = s;
        return st;
    }
    if (t == LLM_GGUF_ARRAY) return parse_array(c, depth, v, index_start);
    const size_t sz = llm__gguf_scalar_size(t);
    llm_status st = need(c, sz, "scalar value");
    if (st) return st;
    v->data = c->base + c->pos;
    if (t == LLM_GGUF_BOOL && c->base[c->pos] > 1)
        return fail(c, LLM_ERR_BAD_FORMAT, c->pos, "bool value is neither 0 nor 1");
    c->pos += sz;
    return LLM_OK;
}

static llm_status parse_array(cursor *c, int depth, llm_gguf_value *v, int64_t *index_start) {
    *index_start = -1; /* set below only for arrays of variable-size elements */
    if (depth >= GGUF_MAX_DEPTH)
        return fail(c, LLM_ERR_BAD_FORMAT, c->pos, "arrays nested too deeply (limit 8)");
    const uint64_t at = c->pos;
    uint32_t et;
    uint64_t n;
    llm_status st = rd_u32(c, &et, "array element type");
    if (!st) st = rd_u64(c, &n, "array element count");
    if (st) return st;
    if (et > LLM_GGUF_FLOAT64) {
        char msg[96];
        snprintf(msg, sizeof msg, "unknown array element type %" PRIu32, et);
        return fail(c, LLM_ERR_BAD_FORMAT, at, msg);
    }
    v->type = LLM_GGUF_ARRAY;
    v->elem_type = (llm_gguf_type)et;
    v->count = n;
    v->data = c->base + c->pos;
    const uint64_t left = c->size - c->pos;
    const size_t esz = llm__gguf_scalar_size(et);
    if (esz) {
        if (n > left / esz) {
            char msg[160];
            snprintf(msg, sizeof msg, "array of %" PRIu64 " %s elements does not fit in the %" PRIu64
                     " bytes left", n, llm_gguf_type_name((llm_gguf_type)et), left);
            return fail(c, LLM_ERR_BAD_FORMAT, at, msg);
        }
        if (et == LLM_GGUF_BOOL) {
            for (uint64_t i = 0; i < n; i++)
                if (c->base[c->pos + i] > 1)
                    return fail(c, LLM_ERR_BAD_FORMAT, c->pos + i, "bool array element is neither 0 nor 1");
        }
        c->pos += n * esz;
        return LLM_OK;
    }
    /* Strings take >= 8 bytes each, arrays >= 12: bound n before allocating. */
    const uint64_t min_sz = et == LLM_GGUF_STRING ? 8 : 12;
    if (n > left / min_sz) {
        char msg[160];
        snprintf(msg, sizeof msg, "array of %" PRIu64 " %s elements cannot fit in the %" PRIu64
                 " bytes left", n, llm_gguf_type_name((llm_gguf_type)et), left);
        return fail(c, LLM_ERR_BAD_FORMAT, at, msg);
    }
    if (n == 0) return LLM_OK; /* no index: priv_ stays NULL */
    /* Strings: an entry every LLM__GGUF_STR_STRIDE elements (gguf_internal.h). */
    const uint64_t n_entries = et == LLM_GGUF_STRING ? (n - 1) / LLM__GGUF_STR_STRIDE + 1 : n;
    int64_t start;
    if ((st = pool_reserve(c->g, n_entries, &start)))
        return llm__gguf_error(st, "gguf: %s: out of memory indexing an array", c->g->name);
    *index_start = start;
    for (uint64_t i = 0; i < n; i++) {
        if (et == LLM_GGUF_STRING) {
            if (i % LLM__GGUF_STR_STRIDE == 0) {
                const int64_t e = start + (int64_t)(i / LLM__GGUF_STR_STRIDE);
                c->g->pool[e].p = c->base + c->pos;
                c->g->pool[e].child_rel = 0;
            }
            const uint8_t *s;
            uint64_t len;
            if ((st = rd_str(c, &s, &len, "string array element"))) return st;
        } else {
            const int64_t e = start + (int64_t)i;
            c->g->pool[e].p = c->base + c->pos;
            c->g->pool[e].child_rel = 0;
            llm_gguf_value sub;
            int64_t sub_start;
            if ((st = parse_array(c, depth + 1, &sub, &sub_start))) return st;
            if (sub_start >= 0) c->g->pool[e].child_rel = sub_start - e;
        }
    }
    return LLM_OK;
}

/* Recomputes priv_ pointers once the pool has its final address. */
static void fix_index_pointers(llm_gguf *g) {
    for (int64_t i = 0; i < g->n_kv; i++)
        g->kv[i].v.priv_ = g->kv[i].index_start >= 0 ? g->pool + g->kv[i].index_start : NULL;
}

static const char *kv_name(const void *ctx, int64_t id) {
    return ((const llm_gguf *)ctx)->kv[id].key;
}

static const char *tensor_name(const void *ctx, int64_t id) {
    return ((const llm_gguf *)ctx)->tensors[id].name;
}

/* A key or tensor name: non-empty, valid UTF-8, no NUL, copied. */
static llm_status rd_name(cursor *c, const char *what, char **out) {
    const uint64_t at = c->pos;
    const uint8_t *s;
    uint64_t len;
    llm_status st = rd_str(c, &s, &len, what);
    if (st) return st;
    char msg[128];
    if (len == 0) {
        snprintf(msg, sizeof msg, "empty %s", what);
        return fail(c, LLM_ERR_BAD_FORMAT, at, msg);
    }
    if (len > 65535) {
        snprintf(msg, sizeof msg, "%s is %" PRIu64 " bytes long (limit 65535)", what, len);
        return fail(c, LLM_ERR_BAD_FORMAT, at, msg);
    }
    if (memchr(s, 0, (size_t)len) || !llm__utf8_valid(s, (size_t)len)) {
        snprintf(msg, sizeof msg, "%s is not valid UTF-8 text", what);
        return fail(c, LLM_ERR_BAD_FORMAT, at, msg);
    }
    *out = llm__strndup((const char *)s, (size_t)len);
    if (!*out) return llm__gguf_error(LLM_ERR_NO_MEMORY, "gguf: %s: out of memory", c->g->name);
    return LLM_OK;
}

static llm_status parse_header(cursor *c, uint64_t *n_tensors, uint64_t *n_kv) {
    if (c->size < 4 || memcmp(c->base, "GGUF", 4) != 0) {
        if (c->size < 4) return fail(c, LLM_ERR_BAD_FORMAT, 0, "file too small for the GGUF magic");
        return fail(c, LLM_ERR_BAD_FORMAT, 0, "not a GGUF file (bad magic)");
    }
    c->pos = 4;
    uint32_t ver;
    llm_status st = rd_u32(c, &ver, "version");
    if (st) return st;
    if (ver == 1)
        return fail(c, LLM_ERR_UNSUPPORTED, 4,
                    "GGUF version 1 is not supported (obsolete 32-bit-count format; re-convert the model)");
    if (ver != 2 && ver != 3) {
        if ((ver & 0xFFFFu) == 0 && (ver >> 16) != 0)
            return fail(c, LLM_ERR_UNSUPPORTED, 4, "big-endian GGUF files are not supported");
        char msg[64];
        snprintf(msg, sizeof msg, "unknown GGUF version %" PRIu32, ver);
        return fail(c, LLM_ERR_UNSUPPORTED, 4, msg);
    }
    c->g->version = ver;
    if ((st = rd_u64(c, n_tensors, "tensor count"))) return st;
    if ((st = rd_u64(c, n_kv, "metadata count"))) return st;
    /* Cheapest possible entries: a kv is 8 (key len) + 1 + 4 (type) + 1 (u8);
     * a tensor info is 8 + 1 + 4 + 8 + 4 + 8 bytes. */
    const uint64_t left = c->size - c->pos;
    char msg[160];
    if (*n_kv > left / 14) {
        snprintf(msg, sizeof msg, "metadata count %" PRIu64 " is impossible for the %" PRIu64 " bytes left",
                 *n_kv, left);
        return fail(c, LLM_ERR_BAD_FORMAT, 16, msg);
    }
    if (*n_tensors > left / 33) {
        snprintf(msg, sizeof msg, "tensor count %" PRIu64 " is impossible for the %" PRIu64 " bytes left",
                 *n_tensors, left);
        return fail(c, LLM_ERR_BAD_FORMAT, 8, msg);
    }
    return LLM_OK;
}

static llm_status parse_kvs(cursor *c, uint64_t n_kv) {
    llm_gguf *g = c->g;
    g->kv = calloc(n_kv ? n_kv : 1, sizeof *g->kv);
    if (!g->kv) return llm__gguf_error(LLM_ERR_NO_MEMORY, "gguf: %s: out of memory", g->name);
    llm_status st = llm__strmap_init(&g->kv_map, n_kv, kv_name, g);
    if (st) return llm__gguf_error(st, "gguf: %s: out of memory", g->name);
    for (uint64_t i = 0; i < n_kv; i++) {
        llm__gguf_kv *kv = &g->kv[i];
        kv->key_offset = c->pos;
        kv->index_start = -1;
        if ((st = rd_name(c, "metadata key", &kv->key))) return st;
        g->n_kv = (int64_t)i + 1; /* owns kv->key from here */
        const uint64_t type_at = c->pos;
        uint32_t t;
        if ((st = rd_u32(c, &t, "metadata value type"))) return st;
        if (t > LLM_GGUF_FLOAT64) {
            char msg[192];
            snprintf(msg, sizeof msg, "metadata '%.64s' has unknown value type %" PRIu32, kv->key, t);
            return fail(c, LLM_ERR_BAD_FORMAT, type_at, msg);
        }
        if ((st = parse_value(c, t, 0, &kv->v, &kv->index_start))) return st;
        if (llm__strmap_insert(&g->kv_map, (int64_t)i) >= 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "duplicate metadata key '%.64s'", kv->key);
            return fail(c, LLM_ERR_BAD_FORMAT, kv->key_offset, msg);
        }
    }
    return LLM_OK;
}

static llm_status read_alignment(cursor *c) {
    llm_gguf *g = c->g;
    g->alignment = GGUF_DEFAULT_ALIGN;
    const int64_t i = llm__strmap_find(&g->kv_map, "general.alignment");
    if (i < 0) return LLM_OK;
    const llm__gguf_kv *kv = &g->kv[i];
    if (kv->v.type != LLM_GGUF_UINT32)
        return fail(c, LLM_ERR_BAD_FORMAT, kv->key_offset, "general.alignment is not a uint32");
    const uint32_t a = llm__rd32(kv->v.data);
    if (a == 0 || (a & (a - 1)) != 0) {
        char msg[96];
        snprintf(msg, sizeof msg, "general.alignment %" PRIu32 " is not a power of two", a);
        return fail(c, LLM_ERR_BAD_FORMAT, kv->key_offset, msg);
    }
    g->alignment = a;
    return LLM_OK;
}

static llm_status parse_tensor_info(cursor *c, llm_gguf_tensor *t) {
    char msg[256];
    const uint64_t at = c->pos;
    char *name = NULL;
    llm_status st = rd_name(c, "tensor name", &name);
    if (st) return st;
    t->name = name;
    uint32_t nd;
    if ((st = rd_u32(c, &nd, "tensor dimension count"))) return st;
    if (nd < 1 || nd > 4) {
        snprintf(msg, sizeof msg, "tensor '%.64s' has %" PRIu32 " dimensions (1..4 allowed)", name, nd);
        return fail(c, LLM_ERR_BAD_FORMAT, c->pos - 4, msg);
    }
    t->n_dims = nd;
    uint64_t nel = 1;
    for (uint32_t d = 0; d < 4; d++) t->ne[d] = 1;
    for (uint32_t d = 0; d < nd; d++) {
        uint64_t ne;
        if ((st = rd_u64(c, &ne, "tensor dimension"))) return st;
        if (ne > (uint64_t)INT64_MAX) {
            snprintf(msg, sizeof msg, "tensor '%.64s' dimension %" PRIu32 " is negative", name, d);
            return fail(c, LLM_ERR_BAD_FORMAT, c->pos - 8, msg);
        }
        if (ne != 0 && nel > (uint64_t)INT64_MAX / ne) {
            snprintf(msg, sizeof msg, "tensor '%.64s' element count overflows", name);
            return fail(c, LLM_ERR_BAD_FORMAT, c->pos - 8, msg);
        }
        nel *= ne;
        t->ne[d] = (int64_t)ne;
    }
    uint32_t type;
    if ((st = rd_u32(c, &type, "tensor type"))) return st;
    if (type >= N_GGML_TYPES || !k_ggml_types[type].name) {
        snprintf(msg, sizeof msg, "tensor '%.64s' has unknown type %" PRIu32, name, type);
        return fail(c, LLM_ERR_BAD_FORMAT, c->pos - 4, msg);
    }
    t->type = type;
    const ggml_type_info *ti = &k_ggml_types[type];
    if ((uint64_t)t->ne[0] % ti->blck != 0) {
        snprintf(msg, sizeof msg, "tensor '%.64s': first dimension %" PRId64 " is not a multiple of the %s block size %" PRIu32,
                 name, t->ne[0], ti->name, ti->blck);
        return fail(c, LLM_ERR_BAD_FORMAT, at, msg);
    }
    const uint64_t nblocks = nel / ti->blck;
    if (nblocks > UINT64_MAX / ti->bytes) {
        snprintf(msg, sizeof msg, "tensor '%.64s' byte size overflows", name);
        return fail(c, LLM_ERR_BAD_FORMAT, at, msg);
    }
    t->size = nblocks * ti->bytes;
    if ((st = rd_u64(c, &t->offset, "tensor data offset"))) return st; /* relative for now */
    return LLM_OK;
}

static llm_status parse_tensors(cursor *c, uint64_t n) {
    llm_gguf *g = c->g;
    g->tensors = calloc(n ? n : 1, sizeof *g->tensors);
    if (!g->tensors) return llm__gguf_error(LLM_ERR_NO_MEMORY, "gguf: %s: out of memory", g->name);
    llm_status st = llm__strmap_init(&g->tensor_map, n, tensor_name, g);
    if (st) return llm__gguf_error(st, "gguf: %s: out of memory", g->name);
    uint64_t *info_at = malloc((n ? n : 1) * sizeof *info_at);
    if (!info_at) return llm__gguf_error(LLM_ERR_NO_MEMORY, "gguf: %s: out of memory", g->name);
    for (uint64_t i = 0; i < n && !st; i++) {
        info_at[i] = c->pos;
        st = parse_tensor_info(c, &g->tensors[i]);
        if (g->tensors[i].name) g->n_tensors = (int64_t)i + 1;
        if (!st && llm__strmap_insert(&g->tensor_map, (int64_t)i) >= 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "duplicate tensor name '%.64s'", g->tensors[i].name);
            st = fail(c, LLM_ERR_BAD_FORMAT, info_at[i], msg);
        }
    }
    if (st) {
        free(info_at);
        return st;
    }
    /* The data section starts at the next multiple of the alignment. */
    const uint64_t a = g->alignment, end = c->pos;
    if (end > UINT64_MAX - (a - 1)) {
        free(info_at);
        return fail(c, LLM_ERR_BAD_FORMAT, end, "data section offset overflows");
    }
    g->data_offset = (end + a - 1) / a * a;
    if (n > 0 && g->data_offset > c->size) {
        free(info_at);
        return fail(c, LLM_ERR_BAD_FORMAT, end, "file ends before the tensor data section");
    }
    const uint64_t data_len = n > 0 ? c->size - g->data_offset : 0;
    for (uint64_t i = 0; i < n; i++) {
        llm_gguf_tensor *t = &g->tensors[i];
        char msg[256];
        if (t->offset % a != 0) {
            snprintf(msg, sizeof msg, "tensor '%.64s': data offset %" PRIu64 " is not a multiple of the alignment %" PRIu64,
                     t->name, t->offset, a);
            st = fail(c, LLM_ERR_BAD_FORMAT, info_at[i], msg);
            break;
        }
        if (t->offset > data_len || t->size > data_len - t->offset) {
            snprintf(msg, sizeof msg, "tensor '%.64s': data [%" PRIu64 ", +%" PRIu64 ") extends past the end of the file (%" PRIu64 " data bytes)",
                     t->name, t->offset, t->size, data_len);
            st = fail(c, LLM_ERR_BAD_FORMAT, info_at[i], msg);
            break;
        }
        t->offset += g->data_offset;
        t->data = c->base + t->offset;
    }
    free(info_at);
    return st;
}

static llm_status gguf_parse(llm_gguf *g) {
    cursor c = {g, g->map.data, g->map.size, 0};
    uint64_t n_tensors, n_kv;
    llm_status st = parse_header(&c, &n_tensors, &n_kv);
    if (!st) st = parse_kvs(&c, n_kv);
    if (!st) fix_index_pointers(g);
    if (!st) st = read_alignment(&c);
    if (!st) st = parse_tensors(&c, n_tensors);
    return st;
}

static llm_status gguf_open_mapped(llm__mapped *m, const char *name, llm_gguf **out) {
    llm_gguf *g = calloc(1, sizeof *g);
    if (!g) {
        llm__unmap(m);
        return llm__gguf_error(LLM_ERR_NO_MEMORY, "gguf: out of memory");
    }
    g->map = *m;
    g->name = llm__strndup(name, strlen(name));
    if (!g->name) {
        llm_gguf_close(g);
        return llm__gguf_error(LLM_ERR_NO_MEMORY, "gguf: out of memory");
    }
    llm_status st = gguf_parse(g);
    if (st) {
        llm_gguf_close(g);
        return st;
    }
    llm__gguf_clear_error();
    *out = g;
    return LLM_OK;
}

llm_status llm_gguf_open(const char *path, llm_gguf **out) {
    if (out) *out = NULL;
    if (!path || !out) return llm__gguf_error(LLM_ERR_INVALID_ARG, "gguf: NULL argument");
    llm__mapped m;
    llm_status st = llm__map_file(path, LLM__ERR_GGUF, "gguf", &m);
    if (st) return st;
    return gguf_open_mapped(&m, path, out);
}

llm_status llm_gguf_open_memory(const void *buf, size_t len, const char *name, llm_gguf **out) {
    if (out) *out = NULL;
    if ((!buf && len) || !out) return llm__gguf_error(LLM_ERR_INVALID_ARG, "gguf: NULL argument");
    llm__mapped m = {(const uint8_t *)buf, len, 0};
    return gguf_open_mapped(&m, name ? name : "<memory>", out);
}


void llm_gguf_close(llm_gguf *g) {
    if (!g) return;
    for (int64_t i = 0; i < g->n_kv; i++) free(g->kv[i].key);
    for (int64_t i = 0; i < g->n_tensors; i++) free((char *)g->tensors[i].name);
    free(g->kv);
    free(g->tensors);
    free(g->pool);
    llm__strmap_free(&g->kv_map);
    llm__strmap_free(&g->tensor_map);
    llm__unmap(&g->map);
    free(g->name);
    free(g);
}
