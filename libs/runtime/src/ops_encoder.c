/*
 * ops_encoder.c -- the public encoder ops (layer_norm, gelu, attention_full):
 * validated once for every backend, timed, and dispatched through the
 * backend's optional extension table (backend.h). A backend without one of
 * them returns LLM_ERR_UNSUPPORTED naming the op and the backend.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "ops_internal.h"

static int64_t nrows(const llm_tensor *t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        llm_status st_ = (expr);                                                                   \
        if (st_ != LLM_OK) return st_;                                                             \
    } while (0)

llm_status llm_op_layer_norm(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                             const llm_tensor *weight, const llm_tensor *bias, float eps) {
    if (!be) return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");
    CHECK(llm__op_check_f32(be, out, "layer_norm", "out"));
    CHECK(llm__op_check_f32(be, x, "layer_norm", "x"));
    const llm_tensor *wb[2] = {weight, bias};
    for (int i = 0; i < 2; i++) {
        if (!wb[i]) continue;
        CHECK(llm__op_check_f32(be, wb[i], "layer_norm", i ? "bias" : "weight"));
        if (wb[i]->ne[0] * nrows(wb[i]) != x->ne[0])
            return llm__err(LLM_ERR_INVALID_ARG, "layer_norm: %s size != row size", i ? "bias" : "weight");
    }
    if (out->ne[0] != x->ne[0] || nrows(out) != nrows(x) || !(eps >= 0.0f) || !isfinite(eps))
        return llm__err(LLM_ERR_INVALID_ARG, "layer_norm: out/x shapes differ or eps is not finite >= 0");
    if (!be->ext.layer_norm) return llm__op_unsupported(be, LLM_OP_LAYER_NORM);
    const uint64_t t0 = llm__op_now_ns();
    llm_status st = be->ext.layer_norm(be, out, x, weight, bias, eps);
    llm__op_account(be, LLM_OP_LAYER_NORM, out, t0, 2 * llm_tensor_nbytes(x));
    return st;
}

llm_status llm_op_gelu(llm_backend *be, const llm_tensor *out, const llm_tensor *x) {
    if (!be) return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");
    CHECK(llm__op_check_f32(be, out, "gelu", "out"));
    CHECK(llm__op_check_f32(be, x, "gelu", "x"));
    if (out->ne[0] != x->ne[0] || nrows(out) != nrows(x))
        return llm__err(LLM_ERR_INVALID_ARG, "gelu: shapes differ");
    if (!be->ext.gelu) return llm__op_unsupported(be, LLM_OP_GELU);
    const uint64_t t0 = llm__op_now_ns();
    llm_status st = be->ext.gelu(be, out, x);
    llm__op_account(be, LLM_OP_GELU, out, t0, 2 * llm_tensor_nbytes(x));
    return st;
}

llm_status llm_op_attention_full(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                                 const llm_tensor *k, const llm_tensor *v, const int32_t *seq_lens,
                                 int32_t n_seqs, float scale) {
    if (!be) return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");
    CHECK(llm__op_check_f32(be, out, "attention_full", "out"));
    CHECK(llm__op_check_f32(be, q, "attention_full", "q"));
    CHECK(llm__op_check_f32(be, k, "attention_full", "k"));
    CHECK(llm__op_check_f32(be, v, "attention_full", "v"));
    const int64_t n = q->ne[2] * q->ne[3];
    if (q->ne[0] != k->ne[0] || v->ne[0] != k->ne[0] || v->ne[1] != k->ne[1] || q->ne[1] % k->ne[1] != 0 ||
        k->ne[2] * k->ne[3] != n || v->ne[2] * v->ne[3] != n || out->ne[0] != q->ne[0] || out->ne[1] != q->ne[1] ||
        out->ne[2] * out->ne[3] != n || !isfinite(scale))
        return llm__err(LLM_ERR_INVALID_ARG,
                        "attention_full: q [n][n_head][hd], k, v [n][n_head_kv][hd] and out do not fit, or scale "
                        "is not finite");
    if (!seq_lens || n_seqs < 1 || n_seqs > n)
        return llm__err(LLM_ERR_INVALID_ARG, "attention_full: need 1..%lld sequence lengths", (long long)n);
    int64_t total = 0;
    for (int32_t s = 0; s < n_seqs; s++) {
        if (seq_lens[s] < 1 || seq_lens[s] > n - total)
            return llm__err(LLM_ERR_INVALID_ARG, "attention_full: sequence %d has length %d (tokens left: %lld)", s,
                            seq_lens[s], (long long)(n - total));
        total += seq_lens[s];
    }
    if (total != n)
        return llm__err(LLM_ERR_INVALID_ARG, "attention_full: sequences cover %lld of %lld tokens", (long long)total,
                        (long long)n);
    if (!be->ext.attention_full) return llm__op_unsupported(be, LLM_OP_ATTENTION_FULL);
    const uint64_t t0 = llm__op_now_ns();
    llm_status st = be->ext.attention_full(be, out, q, k, v, seq_lens, n_seqs, scale);
    llm__op_account(be, LLM_OP_ATTENTION_FULL, out, t0,
            2 * llm_tensor_nbytes(q) + (uint64_t)q->ne[1] / (uint64_t)k->ne[1] * 2 * llm_tensor_nbytes(k));
    return st;
}
