/*
 * ops_moe.c -- the public mixture-of-experts ops (moe_topk, matmul_id,
 * moe_sum): validated once for every backend, timed, and dispatched through
 * the backend's optional extension table (backend.h). A backend without one
 * of them returns LLM_ERR_UNSUPPORTED naming the op and the backend.
 */
#define _POSIX_C_SOURCE 200809L

#include "ops_internal.h"

static int64_t nrows(const llm_tensor *t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        llm_status st_ = (expr);                                                                   \
        if (st_ != LLM_OK) return st_;                                                             \
    } while (0)

llm_status llm_op_moe_topk(llm_backend *be, const llm_tensor *weights, int32_t *ids, const llm_tensor *probs,
                           int32_t n_used, int norm) {
    if (!be) return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");
    CHECK(llm__op_check_f32(be, weights, "moe_topk", "weights"));
    CHECK(llm__op_check_f32(be, probs, "moe_topk", "probs"));
    if (!ids || n_used < 1 || n_used > probs->ne[0] || weights->ne[0] != n_used || nrows(weights) != nrows(probs))
        return llm__err(LLM_ERR_INVALID_ARG, "moe_topk: %d of %lld experts into weights [%lld][%lld] (ids %s)",
                        (int)n_used, (long long)probs->ne[0], (long long)nrows(weights), (long long)weights->ne[0],
                        ids ? "set" : "NULL");
    if (!be->ext.moe_topk) return llm__op_unsupported(be, LLM_OP_MOE_TOPK);
    const uint64_t t0 = llm__op_now_ns();
    llm_status st = be->ext.moe_topk(be, weights, ids, probs, n_used, norm);
    llm__op_account(be, LLM_OP_MOE_TOPK, weights, t0, llm_tensor_nbytes(probs) + llm_tensor_nbytes(weights));
    return st;
}

llm_status llm_op_matmul_id(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *w,
                            const int32_t *ids) {
    if (!be) return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");
    CHECK(llm__op_check_f32(be, out, "matmul_id", "out"));
    CHECK(llm__op_check_f32(be, x, "matmul_id", "x"));
    CHECK(llm__op_check_tensor(be, w, "matmul_id", "w"));
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
    if (!be->ext.matmul_id) return llm__op_unsupported(be, LLM_OP_MATMUL_ID);
    const uint64_t t0 = llm__op_now_ns();
    llm_status st = be->ext.matmul_id(be, out, x, w, ids);
    /* Weight bytes: at most min(n * n_used, n_expert) experts are read. */
    const uint64_t n_read = (uint64_t)(n * n_used < n_exp ? n * n_used : n_exp);
    llm__op_account(be, LLM_OP_MATMUL_ID, out, t0,
            n_read * (uint64_t)w->ne[1] * w->nb[1] + llm_tensor_nbytes(x) + llm_tensor_nbytes(out));
    return st;
}

llm_status llm_op_moe_sum(llm_backend *be, const llm_tensor *out, const llm_tensor *e, const llm_tensor *w) {
    if (!be) return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");
    CHECK(llm__op_check_f32(be, out, "moe_sum", "out"));
    CHECK(llm__op_check_f32(be, e, "moe_sum", "e"));
    CHECK(llm__op_check_f32(be, w, "moe_sum", "w"));
    const int64_t n = nrows(out), n_used = e->ne[1];
    if (e->ne[0] != out->ne[0] || e->ne[2] * e->ne[3] != n || w->ne[0] != n_used || nrows(w) != n)
        return llm__err(LLM_ERR_INVALID_ARG, "moe_sum: e [%lld][%lld][%lld], w [%lld][%lld], out [%lld][%lld]",
                        (long long)(e->ne[2] * e->ne[3]), (long long)n_used, (long long)e->ne[0],
                        (long long)nrows(w), (long long)w->ne[0], (long long)n, (long long)out->ne[0]);
    if (!be->ext.moe_sum) return llm__op_unsupported(be, LLM_OP_MOE_SUM);
    const uint64_t t0 = llm__op_now_ns();
    llm_status st = be->ext.moe_sum(be, out, e, w);
    llm__op_account(be, LLM_OP_MOE_SUM, out, t0, llm_tensor_nbytes(e) + llm_tensor_nbytes(out));
    return st;
}
