/*
 * ops_moe.c -- the public mixture-of-experts ops (moe_topk, matmul_id,
 * moe_sum): validated once for every backend, timed, and dispatched through
 * the backend's optional extension table (backend.h). A backend without one
 * of them returns LLM_ERR_UNSUPPORTED naming the op and the backend.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "backend.h"

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int64_t nrows(const llm_tensor *t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

/* In a buffer of be, no empty dimension, the byte extent inside the buffer. */
static llm_status check_any(llm_backend *be, const llm_tensor *t, const char *op, const char *what) {
    if (!t || !t->buffer) return llm__err(LLM_ERR_INVALID_ARG, "%s: %s is NULL or an invalid view", op, what);
    if (t->buffer->be != be) return llm__err(LLM_ERR_INVALID_ARG, "%s: %s lives in another backend's buffer", op, what);
    if (!llm_dtype_is_known((int)t->dtype)) return llm__err(LLM_ERR_INVALID_ARG, "%s: %s has an unknown type", op, what);
    for (int i = 0; i < 4; i++)
        if (t->ne[i] <= 0) return llm__err(LLM_ERR_INVALID_ARG, "%s: %s has empty dimension %d", op, what, i);
    const int64_t bs = (int64_t)llm_dtype_block_size(t->dtype);
    if (t->ne[0] % bs != 0) return llm__err(LLM_ERR_INVALID_ARG, "%s: %s row is not whole blocks", op, what);
    size_t extent = (size_t)(t->ne[0] / bs) * t->nb[0];
    for (int i = 1; i < 4; i++) extent += (size_t)(t->ne[i] - 1) * t->nb[i];
    if (t->offset > t->buffer->size || extent > t->buffer->size - t->offset)
        return llm__err(LLM_ERR_INVALID_ARG, "%s: %s extends past its buffer", op, what);
    return LLM_OK;
}

/* Contiguous F32. */
static llm_status check_f32(llm_backend *be, const llm_tensor *t, const char *op, const char *what) {
    llm_status st = check_any(be, t, op, what);
    if (st) return st;
    if (t->dtype != LLM_DTYPE_F32 || t->nb[0] != 4 || t->nb[1] != 4 * (size_t)t->ne[0] ||
        t->nb[2] != t->nb[1] * (size_t)t->ne[1] || t->nb[3] != t->nb[2] * (size_t)t->ne[2])
        return llm__err(LLM_ERR_INVALID_ARG, "%s: %s must be contiguous f32", op, what);
    return LLM_OK;
}

static void account(llm_backend *be, llm_op op, const llm_tensor *out, uint64_t t0, uint64_t bytes) {
    const uint64_t dt = now_ns() - t0;
    be->stats[op].calls++;
    be->stats[op].ns += dt;
    be->stats[op].bytes += bytes;
    if (be->params.hook) be->params.hook(be->params.hook_user, op, out, dt, bytes);
}

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        llm_status st_ = (expr);                                                                   \
        if (st_ != LLM_OK) return st_;                                                             \
    } while (0)

static llm_status unsupported(llm_backend *be, llm_op op) {
    return llm__err(LLM_ERR_UNSUPPORTED, "%s: not implemented by the %s backend", llm_op_name(op), be->iface->name);
}

llm_status llm_op_moe_topk(llm_backend *be, const llm_tensor *weights, int32_t *ids, const llm_tensor *probs,
                           int32_t n_used, int norm) {
    if (!be) return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");
    CHECK(check_f32(be, weights, "moe_topk", "weights"));
    CHECK(check_f32(be, probs, "moe_topk", "probs"));
    if (!ids || n_used < 1 || n_used > probs->ne[0] || weights->ne[0] != n_used || nrows(weights) != nrows(probs))
        return llm__err(LLM_ERR_INVALID_ARG, "moe_topk: %d of %lld experts into weights [%lld][%lld] (ids %s)",
                        (int)n_used, (long long)probs->ne[0], (long long)nrows(weights), (long long)weights->ne[0],
                        ids ? "set" : "NULL");
    if (!be->ext.moe_topk) return unsupported(be, LLM_OP_MOE_TOPK);
    const uint64_t t0 = now_ns();
    llm_status st = be->ext.moe_topk(be, weights, ids, probs, n_used, norm);
    account(be, LLM_OP_MOE_TOPK, weights, t0, llm_tensor_nbytes(probs) + llm_tensor_nbytes(weights));
    return st;
}

llm_status llm_op_matmul_id(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *w,
                            const int32_t *ids) {
    if (!be) return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");
    CHECK(check_f32(be, out, "matmul_id", "out"));
    CHECK(check_f32(be, x, "matmul_id", "x"));
    CHECK(check_any(be, w, "matmul_id", "w"));
    const int64_t n = out->ne[2] * out->ne[3], n_used = out->ne[1], n_exp = w->ne[2];
    if (!ids || x->ne[0] != w->ne[0] || out->ne[0] != w->ne[1] || w->ne[3] != 1 || x->ne[2] * x->ne[3] != n ||
        (x->ne[1] != 1 && x->ne[1] != n_used) || w->nb[0] != llm_dtype_block_bytes(w->dtype) ||
        w->nb[2] < w->nb[1] * (size_t)w->ne[1])
        return llm__err(LLM_ERR_INVALID_ARG,
                        "matmul_id: x [%lld][%lld][%lld] . w [%lld][%lld][%lld]^T does not give out [%lld][%lld][%lld]",
                        (long long)(x->ne[2] * x->ne[3]), (long long)x->ne[1], (long long)x->ne[0], (long long)n_exp,
                        (long long)w->ne[1], (long long)w->ne[0], (long long)n, (long long)n_used,
                        (long long)out->ne[0]);
    for (int64_t i = 0; i < n * n_used; i++)
        if (ids[i] < 0 || ids[i] >= n_exp)
            return llm__err(LLM_ERR_INVALID_ARG, "matmul_id: expert %d out of range [0, %lld)", (int)ids[i],
                            (long long)n_exp);
    if (!be->ext.matmul_id) return unsupported(be, LLM_OP_MATMUL_ID);
    const uint64_t t0 = now_ns();
    llm_status st = be->ext.matmul_id(be, out, x, w, ids);
    /* Weight bytes: at most min(n * n_used, n_expert) experts are read. */
    const uint64_t n_read = (uint64_t)(n * n_used < n_exp ? n * n_used : n_exp);
    account(be, LLM_OP_MATMUL_ID, out, t0,
            n_read * (uint64_t)w->ne[1] * w->nb[1] + llm_tensor_nbytes(x) + llm_tensor_nbytes(out));
    return st;
}

llm_status llm_op_moe_sum(llm_backend *be, const llm_tensor *out, const llm_tensor *e, const llm_tensor *w) {
    if (!be) return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");
    CHECK(check_f32(be, out, "moe_sum", "out"));
    CHECK(check_f32(be, e, "moe_sum", "e"));
    CHECK(check_f32(be, w, "moe_sum", "w"));
    const int64_t n = nrows(out), n_used = e->ne[1];
    if (e->ne[0] != out->ne[0] || e->ne[2] * e->ne[3] != n || w->ne[0] != n_used || nrows(w) != n)
        return llm__err(LLM_ERR_INVALID_ARG, "moe_sum: e [%lld][%lld][%lld], w [%lld][%lld], out [%lld][%lld]",
                        (long long)(e->ne[2] * e->ne[3]), (long long)n_used, (long long)e->ne[0],
                        (long long)nrows(w), (long long)w->ne[0], (long long)n, (long long)out->ne[0]);
    if (!be->ext.moe_sum) return unsupported(be, LLM_OP_MOE_SUM);
    const uint64_t t0 = now_ns();
    llm_status st = be->ext.moe_sum(be, out, e, w);
    account(be, LLM_OP_MOE_SUM, out, t0, llm_tensor_nbytes(e) + llm_tensor_nbytes(out));
    return st;
}
