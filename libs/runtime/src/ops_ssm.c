/*
 * ops_ssm.c -- the public recurrent ops (unary, ssm_conv, gated_delta):
 * optional backend extensions, validated here once for every backend, timed,
 * then dispatched through backend.h's llm__backend_ext.
 */
#define _POSIX_C_SOURCE 200809L

#include "ops_internal.h"

static int64_t nrows(const llm_tensor *t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        llm_status st_ = (expr);                                                                   \
        if (st_ != LLM_OK) return st_;                                                             \
    } while (0)

llm_status llm_op_unary(llm_backend *be, const llm_tensor *out, const llm_tensor *x, llm_unary kind) {
    if (!be) return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");
    CHECK(llm__op_check_f32(be, out, "unary", "out"));
    CHECK(llm__op_check_f32(be, x, "unary", "x"));
    if (out->ne[0] != x->ne[0] || nrows(out) != nrows(x))
        return llm__err(LLM_ERR_INVALID_ARG, "unary: shapes differ");
    if (kind != LLM_UNARY_SILU && kind != LLM_UNARY_SIGMOID && kind != LLM_UNARY_SOFTPLUS)
        return llm__err(LLM_ERR_INVALID_ARG, "unary: unknown function %d", (int)kind);
    if (!be->ext.unary) return llm__op_unsupported(be, LLM_OP_UNARY);
    const uint64_t t0 = llm__op_now_ns();
    llm_status st = be->ext.unary(be, out, x, kind);
    llm__op_account(be, LLM_OP_UNARY, out, t0, 2 * llm_tensor_nbytes(out));
    return st;
}

llm_status llm_op_ssm_conv(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                           const llm_tensor *state, const llm_tensor *w) {
    if (!be) return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");
    CHECK(llm__op_check_f32(be, out, "ssm_conv", "out"));
    CHECK(llm__op_check_f32(be, x, "ssm_conv", "x"));
    CHECK(llm__op_check_f32(be, state, "ssm_conv", "state"));
    CHECK(llm__op_check_f32(be, w, "ssm_conv", "w"));
    const int64_t C = x->ne[0], K = w->ne[0];
    if (K < 2 || K > 64 || nrows(w) != C || state->ne[0] != C || nrows(state) != K - 1 || out->ne[0] != C ||
        nrows(out) != nrows(x))
        return llm__err(LLM_ERR_INVALID_ARG, "ssm_conv: shapes do not match (x [n][C], state [K-1][C], w [C][K])");
    if (out->buffer == x->buffer && out->offset == x->offset)
        return llm__err(LLM_ERR_INVALID_ARG, "ssm_conv: out must not alias x");
    if (!be->ext.ssm_conv) return llm__op_unsupported(be, LLM_OP_SSM_CONV);
    const uint64_t t0 = llm__op_now_ns();
    llm_status st = be->ext.ssm_conv(be, out, x, state, w);
    llm__op_account(be, LLM_OP_SSM_CONV, out, t0, 2 * llm_tensor_nbytes(out) + 2 * llm_tensor_nbytes(state));
    return st;
}

llm_status llm_op_gated_delta(llm_backend *be, const llm_tensor *out, const llm_tensor *q, const llm_tensor *k,
                              const llm_tensor *v, const llm_tensor *g, const llm_tensor *beta,
                              const llm_tensor *state) {
    if (!be) return llm__err(LLM_ERR_INVALID_ARG, "backend is NULL");
    const llm_tensor *ts[7] = {out, q, k, v, g, beta, state};
    const char *names[7] = {"out", "q", "k", "v", "g", "beta", "state"};
    for (int i = 0; i < 7; i++) CHECK(llm__op_check_f32(be, ts[i], "gated_delta", names[i]));
    const int64_t D = v->ne[0], Hv = v->ne[1], n = v->ne[2] * v->ne[3], Hk = q->ne[1];
    if (q->ne[0] != D || k->ne[0] != D || k->ne[1] != Hk || Hk < 1 || Hv % Hk != 0 ||
        q->ne[2] * q->ne[3] != n || k->ne[2] * k->ne[3] != n || out->ne[0] != D || out->ne[1] != Hv ||
        out->ne[2] * out->ne[3] != n || g->ne[0] != Hv || nrows(g) != n || beta->ne[0] != Hv ||
        nrows(beta) != n || state->ne[0] != D || state->ne[1] != D || state->ne[2] * state->ne[3] != Hv)
        return llm__err(LLM_ERR_INVALID_ARG,
                        "gated_delta: shapes do not match (q, k [n][H_k][D]; v, out [n][H_v][D]; g, beta "
                        "[n][H_v]; state [H_v][D][D])");
    if (!be->ext.gated_delta) return llm__op_unsupported(be, LLM_OP_GATED_DELTA);
    const uint64_t t0 = llm__op_now_ns();
    llm_status st = be->ext.gated_delta(be, out, q, k, v, g, beta, state);
    llm__op_account(be, LLM_OP_GATED_DELTA, out, t0, 2 * llm_tensor_nbytes(state) + 4 * llm_tensor_nbytes(out));
    return st;
}
