/*
 * ops.c -- the public llm_op_* entry points: validate arguments once for every
 * backend, then call through the backend table, time the call and count bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <time.h>

#include "ops_internal.h"

uint64_t llm__op_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int64_t nrows(const llm_tensor *t) { return t->ne[1] * t->ne[2] * t->ne[3]; }
static int64_t nelem(const llm_tensor *t) { return t->ne[0] * nrows(t); }

/* The tensor lives in a buffer of `be` and its byte extent fits the buffer. */
llm_status llm__op_check_tensor(llm_backend *be, const llm_tensor *t, const char *op, const char *what) {
    if (!t || !t->buffer) {
        return llm__err(LLM_ERR_INVALID_ARG, "%s: %s is NULL or an invalid view", op, what);
    }
    if (t->buffer->be != be) {
        return llm__err(LLM_ERR_INVALID_ARG, "%s: %s lives in another backend's buffer", op, what);
    }
    if (!llm_dtype_is_known((int)t->dtype)) {
        return llm__err(LLM_ERR_INVALID_ARG, "%s: %s has unknown type %d", op, what, (int)t->dtype);
    }
    size_t extent = 0;
    for (int i = 0; i < 4; i++) {
        if (t->ne[i] <= 0) {
            return llm__err(LLM_ERR_INVALID_ARG, "%s: %s has empty dimension %d", op, what, i);
        }
    }
    int64_t bs = (int64_t)llm_dtype_block_size(t->dtype);
    if (t->ne[0] % bs != 0) {
        return llm__err(LLM_ERR_INVALID_ARG, "%s: %s row of %lld is not whole blocks", op, what,
                        (long long)t->ne[0]);
    }
    extent = (size_t)(t->ne[0] / bs - 1) * t->nb[0] + t->nb[0];
    for (int i = 1; i < 4; i++) {
        extent += (size_t)(t->ne[i] - 1) * t->nb[i];
    }
    if (t->offset > t->buffer->size || extent > t->buffer->size - t->offset) {
        return llm__err(LLM_ERR_INVALID_ARG, "%s: %s extends past its buffer", op, what);
    }
    return LLM_OK;
}

/* Contiguous F32: rows of ne[0] floats back to back. */
llm_status llm__op_check_f32(llm_backend *be, const llm_tensor *t, const char *op, const char *what) {
    llm_status st = llm__op_check_tensor(be, t, op, what);
    if (st != LLM_OK) {
        return st;
    }
    if (t->dtype != LLM_DTYPE_F32 || t->nb[0] != 4 || t->nb[1] != 4 * (size_t)t->ne[0] ||
        t->nb[2] != t->nb[1] * (size_t)t->ne[1] || t->nb[3] != t->nb[2] * (size_t)t->ne[2]) {
        return llm__err(LLM_ERR_INVALID_ARG, "%s: %s must be contiguous f32", op, what);
    }
    return LLM_OK;
}

static int same_shape(const llm_tensor *a, const llm_tensor *b) {
    return a->ne[0] == b->ne[0] && nrows(a) == nrows(b);
}

void llm__op_account(llm_backend *be, llm_op op, const llm_tensor *out, uint64_t t0, uint64_t bytes) {
    uint64_t dt = llm__op_now_ns() - t0;
    be->stats[op].calls++;
    be->stats[op].ns += dt;
    be->stats[op].bytes += bytes;
    if (be->params.hook) {
        be->params.hook(be->params.hook_user, op, out, dt, bytes);
    }
}

llm_status llm__op_unsupported(llm_backend *be, llm_op op) {
    return llm__err(LLM_ERR_UNSUPPORTED, "%s: not implemented by the %s backend", llm_op_name(op), be->iface->name);
}

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        llm_status st_ = (expr);                                                                   \
        if (st_ != LLM_OK) return st_;                                                             \
    } while (0)

#define BE_CHECK(be)                                                                               \
    do {                                                                                           \
        if (!(be)) return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");                        \
    } while (0)

llm_status llm_op_get_rows(llm_backend *be, const llm_tensor *out, const llm_tensor *w,
                           const int32_t *ids, int64_t n) {
    BE_CHECK(be);
    CHECK(llm__op_check_f32(be, out, "get_rows", "out"));
    CHECK(llm__op_check_tensor(be, w, "get_rows", "w"));
    if (!ids || n <= 0 || nrows(out) != n || out->ne[0] != w->ne[0] || w->ne[2] * w->ne[3] != 1) {
        return llm__err(LLM_ERR_INVALID_ARG, "get_rows: shapes do not match");
    }
    for (int64_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= w->ne[1]) {
            return llm__err(LLM_ERR_INVALID_ARG, "get_rows: id %d out of range [0, %lld)", ids[i],
                            (long long)w->ne[1]);
        }
    }
    uint64_t t0 = llm__op_now_ns();
    llm_status st = be->iface->get_rows(be, out, w, ids, n);
    llm__op_account(be, LLM_OP_GET_ROWS, out, t0, (uint64_t)(n * (int64_t)w->nb[1]) + llm_tensor_nbytes(out));
    return st;
}

static llm_status check_matmul(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *w,
                               const char *op) {
    CHECK(llm__op_check_f32(be, out, op, "out"));
    CHECK(llm__op_check_f32(be, x, op, "x"));
    CHECK(llm__op_check_tensor(be, w, op, "w"));
    if (x->ne[0] != w->ne[0] || out->ne[0] != w->ne[1] || nrows(out) != nrows(x) ||
        w->ne[2] * w->ne[3] != 1) {
        return llm__err(LLM_ERR_INVALID_ARG,
                        "%s: x [%lld][%lld] . w [%lld][%lld]^T does not give out [%lld][%lld]", op,
                        (long long)nrows(x), (long long)x->ne[0], (long long)w->ne[1],
                        (long long)w->ne[0], (long long)nrows(out), (long long)out->ne[0]);
    }
    return LLM_OK;
}

llm_status llm_op_matmul(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                         const llm_tensor *w) {
    BE_CHECK(be);
    CHECK(check_matmul(be, out, x, w, "matmul"));
    uint64_t t0 = llm__op_now_ns();
    llm_status st = be->iface->matmul(be, out, x, w);
    llm__op_account(be, LLM_OP_MATMUL, out, t0,
            (uint64_t)w->ne[1] * w->nb[1] + llm_tensor_nbytes(x) + llm_tensor_nbytes(out));
    return st;
}

llm_status llm_op_matmul_invariant(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                                   const llm_tensor *w) {
    BE_CHECK(be);
    CHECK(check_matmul(be, out, x, w, "matmul_invariant"));
    if (!be->ext.matmul_invariant) {
        return llm__err(LLM_ERR_UNSUPPORTED, "matmul_invariant: not implemented by the %s backend",
                        be->iface->name);
    }
    uint64_t t0 = llm__op_now_ns();
    llm_status st = be->ext.matmul_invariant(be, out, x, w);
    llm__op_account(be, LLM_OP_MATMUL_INVARIANT, out, t0,
            (uint64_t)w->ne[1] * w->nb[1] + llm_tensor_nbytes(x) + llm_tensor_nbytes(out));
    return st;
}

llm_status llm_op_rms_norm(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                           const llm_tensor *weight, float eps) {
    BE_CHECK(be);
    CHECK(llm__op_check_f32(be, out, "rms_norm", "out"));
    CHECK(llm__op_check_f32(be, x, "rms_norm", "x"));
    if (weight) {
        CHECK(llm__op_check_f32(be, weight, "rms_norm", "weight"));
        if (nelem(weight) != x->ne[0]) {
            return llm__err(LLM_ERR_INVALID_ARG, "rms_norm: weight size != row size");
        }
    }
    if (!same_shape(out, x) || !(eps >= 0.0f)) {
        return llm__err(LLM_ERR_INVALID_ARG, "rms_norm: out/x shapes differ or eps < 0");
    }
    uint64_t t0 = llm__op_now_ns();
    llm_status st = be->iface->rms_norm(be, out, x, weight, eps);
    llm__op_account(be, LLM_OP_RMS_NORM, out, t0, 2 * llm_tensor_nbytes(x));
    return st;
}

llm_status llm_op_rope(llm_backend *be, const llm_tensor *x, const int32_t *positions,
                       const llm_rope_params *p) {
    BE_CHECK(be);
    CHECK(llm__op_check_f32(be, x, "rope", "x"));
    if (!positions || !p || p->n_dims <= 0 || p->n_dims % 2 != 0 || p->n_dims > x->ne[0] ||
        !(p->freq_base > 0.0f) || !(p->attn_factor >= 0.0f && p->attn_factor <= 1e6f) || x->ne[3] != 1) {
        return llm__err(LLM_ERR_INVALID_ARG, "rope: bad parameters (n_dims %d, head_dim %lld)",
                        p ? p->n_dims : -1, (long long)x->ne[0]);
    }
    if (p->mode != LLM_ROPE_MODE_NORMAL && p->mode != LLM_ROPE_MODE_NEOX) {
        return llm__err(LLM_ERR_INVALID_ARG, "rope: unknown mode %d", (int)p->mode);
    }
    if (p->scaling == LLM_ROPE_SCALE_YARN) {
        return llm__err(LLM_ERR_UNSUPPORTED, "rope: YaRN scaling is not implemented");
    }
    if (p->scaling != LLM_ROPE_SCALE_NONE && p->scaling != LLM_ROPE_SCALE_LINEAR &&
        p->scaling != LLM_ROPE_SCALE_LLAMA3) {
        return llm__err(LLM_ERR_INVALID_ARG, "rope: unknown scaling %d", (int)p->scaling);
    }
    uint64_t t0 = llm__op_now_ns();
    llm_status st = be->iface->rope(be, x, positions, p);
    llm__op_account(be, LLM_OP_ROPE, x, t0, 2 * llm_tensor_nbytes(x));
    return st;
}

static llm_status binary(llm_backend *be, llm_op op, const llm_tensor *out, const llm_tensor *a,
                         const llm_tensor *b) {
    const char *name = llm_op_name(op);
    BE_CHECK(be);
    CHECK(llm__op_check_f32(be, out, name, "out"));
    CHECK(llm__op_check_f32(be, a, name, "a"));
    CHECK(llm__op_check_f32(be, b, name, "b"));
    /* add and mul also broadcast a single row b [1][d] over every row of a (a bias, a scale). */
    const int row_b = (op == LLM_OP_ADD || op == LLM_OP_MUL) && nrows(b) == 1 && b->ne[0] == out->ne[0];
    if (!same_shape(out, a) || (!same_shape(out, b) && !row_b)) {
        return llm__err(LLM_ERR_INVALID_ARG, "%s: shapes differ", name);
    }
    if (op == LLM_OP_GEGLU && !be->iface->geglu) {
        return llm__err(LLM_ERR_UNSUPPORTED, "%s: not implemented by the %s backend", name,
                        be->iface->name);
    }
    uint64_t t0 = llm__op_now_ns();
    llm_status st = op == LLM_OP_ADD      ? be->iface->add(be, out, a, b)
                    : op == LLM_OP_MUL    ? be->iface->mul(be, out, a, b)
                    : op == LLM_OP_GEGLU  ? be->iface->geglu(be, out, a, b)
                                          : be->iface->swiglu(be, out, a, b);
    llm__op_account(be, op, out, t0, 3 * llm_tensor_nbytes(out));
    return st;
}

llm_status llm_op_swiglu(llm_backend *be, const llm_tensor *out, const llm_tensor *gate,
                         const llm_tensor *up) {
    return binary(be, LLM_OP_SWIGLU, out, gate, up);
}
llm_status llm_op_geglu(llm_backend *be, const llm_tensor *out, const llm_tensor *gate,
                        const llm_tensor *up) {
    return binary(be, LLM_OP_GEGLU, out, gate, up);
}
llm_status llm_op_add(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                      const llm_tensor *b) {
    return binary(be, LLM_OP_ADD, out, a, b);
}
llm_status llm_op_mul(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                      const llm_tensor *b) {
    return binary(be, LLM_OP_MUL, out, a, b);
}

llm_status llm_op_scale(llm_backend *be, const llm_tensor *out, const llm_tensor *x, float s) {
    BE_CHECK(be);
    CHECK(llm__op_check_f32(be, out, "scale", "out"));
    CHECK(llm__op_check_f32(be, x, "scale", "x"));
    if (!same_shape(out, x)) {
        return llm__err(LLM_ERR_INVALID_ARG, "scale: shapes differ");
    }
    uint64_t t0 = llm__op_now_ns();
    llm_status st = be->iface->scale(be, out, x, s);
    llm__op_account(be, LLM_OP_SCALE, out, t0, 2 * llm_tensor_nbytes(out));
    return st;
}

llm_status llm_op_softmax(llm_backend *be, const llm_tensor *out, const llm_tensor *x) {
    BE_CHECK(be);
    CHECK(llm__op_check_f32(be, out, "softmax", "out"));
    CHECK(llm__op_check_f32(be, x, "softmax", "x"));
    if (!same_shape(out, x)) {
        return llm__err(LLM_ERR_INVALID_ARG, "softmax: shapes differ");
    }
    uint64_t t0 = llm__op_now_ns();
    llm_status st = be->iface->softmax(be, out, x);
    llm__op_account(be, LLM_OP_SOFTMAX, out, t0, 2 * llm_tensor_nbytes(out));
    return st;
}

/* Checks a K or V cache tensor: a cache type (F16, F32, BF16, Q8_0, Q4_0,
 * Q4_1, Q5_0, Q5_1) the backend runs this op on, contiguous, head_dim x
 * n_head_kv (head_dim whole blocks of the type). */
static llm_status check_cache(llm_backend *be, const llm_tensor *c, llm_op op, const char *opname,
                              const char *what) {
    CHECK(llm__op_check_tensor(be, c, opname, what));
    switch (c->dtype) {
    case LLM_DTYPE_F16: case LLM_DTYPE_F32: case LLM_DTYPE_BF16: case LLM_DTYPE_Q8_0:
    case LLM_DTYPE_Q4_0: case LLM_DTYPE_Q4_1: case LLM_DTYPE_Q5_0: case LLM_DTYPE_Q5_1:
        break;
    default:
        return llm__err(LLM_ERR_UNSUPPORTED, "%s: %s cache type %s is not a KV cache type", opname, what,
                        llm_dtype_name(c->dtype) ? llm_dtype_name(c->dtype) : "?");
    }
    if (!be->iface->supports || !be->iface->supports(be, op, c->dtype)) {
        return llm__err(LLM_ERR_UNSUPPORTED, "%s: a %s %s cache is not supported on %s", opname,
                        llm_dtype_name(c->dtype), what, be->iface->name);
    }
    const size_t bs = llm_dtype_block_size(c->dtype), bb = llm_dtype_block_bytes(c->dtype);
    if (c->ne[0] % (int64_t)bs != 0 || c->nb[0] != bb || c->nb[1] != bb * (size_t)(c->ne[0] / (int64_t)bs) ||
        c->nb[2] != c->nb[1] * (size_t)c->ne[1] || c->nb[3] != c->nb[2] * (size_t)c->ne[2]) {
        return llm__err(LLM_ERR_INVALID_ARG, "%s: %s cache must be contiguous", opname, what);
    }
    return LLM_OK;
}

/* Every position maps into the table. first_block >= 0: every entry from
 * block first_block up to the block of the last position is a valid block id
 * (attention reads them all; the entries before first_block are not read: a
 * sliding window left them). first_block < 0: only the entries of the
 * positions themselves must be valid (kv_write reads no other). */
static llm_status check_table(const llm_tensor *kc, const int32_t *positions, int64_t n,
                              const int32_t *block_table, int32_t n_table, int64_t first_block,
                              const char *op) {
    if (!positions || !block_table || n_table <= 0) {
        return llm__err(LLM_ERR_INVALID_ARG, "%s: NULL positions or empty block table", op);
    }
    int64_t bs = kc->ne[1];
    for (int64_t i = 0; i < n; i++) {
        if (positions[i] < 0 || positions[i] / bs >= n_table) {
            return llm__err(LLM_ERR_INVALID_ARG, "%s: position %d outside the block table (%d x %lld)",
                            op, positions[i], n_table, (long long)bs);
        }
    }
    if (first_block < 0) {
        for (int64_t i = 0; i < n; i++) {
            const int32_t id = block_table[positions[i] / bs];
            if (id < 0 || id >= kc->ne[3]) {
                return llm__err(LLM_ERR_INVALID_ARG, "%s: block id %d of position %d out of range [0, %lld)",
                                op, id, positions[i], (long long)kc->ne[3]);
            }
        }
        return LLM_OK;
    }
    int64_t need = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t b = positions[i] / bs + 1;
        need = b > need ? b : need;
    }
    for (int64_t i = first_block; i < need; i++) {
        if (block_table[i] < 0 || block_table[i] >= kc->ne[3]) {
            return llm__err(LLM_ERR_INVALID_ARG, "%s: block id %d out of range [0, %lld)", op,
                            block_table[i], (long long)kc->ne[3]);
        }
    }
    return LLM_OK;
}

/* K and V of one layer: the same shape; their types may differ. */
static int same_cache_shape(const llm_tensor *a, const llm_tensor *b) {
    return a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] &&
           a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3];
}

llm_status llm_op_kv_write(llm_backend *be, const llm_tensor *k_cache, const llm_tensor *v_cache,
                           const llm_tensor *k, const llm_tensor *v, const int32_t *positions,
                           const int32_t *block_table, int32_t n_table) {
    BE_CHECK(be);
    CHECK(check_cache(be, k_cache, LLM_OP_KV_WRITE, "kv_write", "k"));
    CHECK(check_cache(be, v_cache, LLM_OP_KV_WRITE, "kv_write", "v"));
    CHECK(llm__op_check_f32(be, k, "kv_write", "k rows"));
    CHECK(llm__op_check_f32(be, v, "kv_write", "v rows"));
    int64_t n = k->ne[2] * k->ne[3];
    if (!same_cache_shape(k_cache, v_cache) || k->ne[0] != k_cache->ne[0] ||
        k->ne[1] != k_cache->ne[2] || !same_shape(k, v) || v->ne[1] != k->ne[1]) {
        return llm__err(LLM_ERR_INVALID_ARG, "kv_write: k/v [n][n_head_kv][head_dim] do not match the cache");
    }
    CHECK(check_table(k_cache, positions, n, block_table, n_table, -1, "kv_write"));
    uint64_t t0 = llm__op_now_ns();
    llm_status st = be->iface->kv_write(be, k_cache, v_cache, k, v, positions, block_table, n_table);
    llm__op_account(be, LLM_OP_KV_WRITE, NULL, t0, 2 * llm_tensor_nbytes(k) * 3 / 2);
    return st;
}

llm_attn_params llm_attn_default_params(void) {
    llm_attn_params p = {1.0f, 0};
    return p;
}

llm_status llm_op_attention_ex(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                               const llm_tensor *k_cache, const llm_tensor *v_cache,
                               const int32_t *positions, const int32_t *block_table,
                               int32_t n_table, const llm_attn_params *p) {
    BE_CHECK(be);
    CHECK(llm__op_check_f32(be, out, "attention", "out"));
    CHECK(llm__op_check_f32(be, q, "attention", "q"));
    CHECK(check_cache(be, k_cache, LLM_OP_ATTENTION, "attention", "k"));
    CHECK(check_cache(be, v_cache, LLM_OP_ATTENTION, "attention", "v"));
    if (!p || !isfinite(p->scale) || p->n_swa < 0) {
        return llm__err(LLM_ERR_INVALID_ARG, "attention: NULL params, non-finite scale or n_swa < 0");
    }
    int64_t n = q->ne[2] * q->ne[3];
    if (!same_cache_shape(k_cache, v_cache) || q->ne[0] != k_cache->ne[0] ||
        q->ne[1] % k_cache->ne[2] != 0 || !same_shape(out, q) || out->ne[1] != q->ne[1]) {
        return llm__err(LLM_ERR_INVALID_ARG,
                        "attention: q [n][n_head][head_dim] does not fit the cache (head_dim %lld, "
                        "n_head_kv %lld)",
                        (long long)k_cache->ne[0], (long long)k_cache->ne[2]);
    }
    /* Positions first (in order: a bad one ends the check before the next
     * is read), then every block from the earliest window start on: keys
     * before it are not read, nor their blocks. */
    CHECK(check_table(k_cache, positions, n, block_table, n_table, -1, "attention"));
    int64_t first = INT64_MAX;
    int64_t kv_len = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t lo = p->n_swa > 0 ? (int64_t)positions[i] + 1 - p->n_swa : 0;
        lo = lo > 0 ? lo : 0;
        first = lo < first ? lo : first;
        kv_len += (int64_t)positions[i] + 1 - lo;
    }
    CHECK(check_table(k_cache, positions, n, block_table, n_table, first / k_cache->ne[1],
                      "attention"));
    uint64_t t0 = llm__op_now_ns();
    llm_status st =
        be->iface->attention(be, out, q, k_cache, v_cache, positions, block_table, n_table, p);
    llm__op_account(be, LLM_OP_ATTENTION, out, t0,
            2 * llm_tensor_nbytes(q) + (uint64_t)kv_len * (uint64_t)k_cache->ne[2] * (k_cache->nb[1] + v_cache->nb[1]) / (uint64_t)n);
    return st;
}

llm_status llm_op_attention(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                            const llm_tensor *k_cache, const llm_tensor *v_cache,
                            const int32_t *positions, const int32_t *block_table, int32_t n_table,
                            float scale) {
    llm_attn_params p = llm_attn_default_params();
    p.scale = scale;
    return llm_op_attention_ex(be, out, q, k_cache, v_cache, positions, block_table, n_table, &p);
}

llm_status llm_op_argmax(llm_backend *be, const llm_tensor *x, int32_t *out_ids) {
    BE_CHECK(be);
    CHECK(llm__op_check_f32(be, x, "argmax", "x"));
    if (!out_ids) {
        return llm__err(LLM_ERR_INVALID_ARG, "argmax: out_ids is NULL");
    }
    uint64_t t0 = llm__op_now_ns();
    llm_status st = be->iface->argmax(be, x, out_ids);
    llm__op_account(be, LLM_OP_ARGMAX, NULL, t0, llm_tensor_nbytes(x));
    return st;
}
