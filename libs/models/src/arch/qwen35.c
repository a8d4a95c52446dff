/*
 * arch/qwen35.c -- Qwen3.5 (dense): a hybrid decoder whose layers are Gated
 * DeltaNet linear-attention layers ("recurrent") with a gated full-attention
 * layer every full_attention_interval-th (3 + 1 in the released models),
 * written only against runtime ops in llama.cpp's order
 * (src/models/qwen35.cpp, delta-net-base.cpp, with the fused
 * ggml_gated_delta_net that its CPU build uses for prefill and decode alike).
 *
 * For the batch's tokens x [n][E] = token_embd[tokens], per layer l:
 *     xn  = rms_norm(x) * attn_norm
 *     x  += recurrent(l) ? delta_net(xn) : gated_attention(xn)
 *     xn  = rms_norm(x) * post_attention_norm
 *     x  += (silu(xn . Wg^T) * (xn . Wu^T)) . Wd^T
 * then logits = rms_norm(x) * output_norm . Wout^T (token_embd when tied).
 *
 * gated_attention: Wq gives per head a query and an output gate [H][2][hd];
 *     q = rope(rms_norm(q) * q_norm), k = rope(rms_norm(xn . Wk^T) * k_norm),
 *     v = xn . Wv^T, att = attention(q, cache) * sigmoid(gate), out = att . Wo^T.
 *     RoPE is NEOX over the first n_rot dims: llama.cpp's interleaved M-RoPE
 *     (IMROPE) gives every section the same position for text tokens, and
 *     its angles are then those of NEOX RoPE with theta_scale base^(-2/n_rot).
 * delta_net (per sequence of the batch, with its state slot):
 *     mix = xn . Wqkv^T [n][CH]; z = xn . Wgate^T [n][VI]
 *     beta = sigmoid(xn . Wbeta^T) [n][VH]
 *     g    = softplus(xn . Walpha^T + dt_bias) * ssm_a   (ssm_a = -exp(A_log))
 *     c    = silu(causal_conv(mix, conv state, conv1d))   (kernel d_conv)
 *     q, k, v = the [n_k][hd], [n_k][hd], [VH][hd] parts of c's rows
 *     q, k = l2_norm(q), l2_norm(k)      (rms_norm with eps / hd, times 1/sqrt(hd))
 *     o    = gated_delta(q, k, v, g, beta, delta state)   (llm_op_gated_delta)
 *     out  = (rms_norm(o) * ssm_norm * silu(z)) . Wout^T   (per value head)
 * The recurrent states live in the storage's state slots (llm_net_kv_state_*):
 * the sequence's slot is read and written in place.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "arch/decoder.h"
#include "formats/formats_internal.h"

/* ------------------------------------------------------------ hparams -- */

static llm_status qwen35_hparams_gguf(llm_model_hparams *hp, const llm_model_desc *d, const llm_gguf *g) {
    const char *path = llm_model_desc_path(d);
    llm_status st = llm__decoder_hparams_gguf("qwen35", hp, d, g);
    if (st) return st;
    hp->rope_type = LLM_ROPE_MODE_NEOX; /* IMROPE on text positions: see the opening comment */
    uint32_t interval = 4;
    if (!st) st = llm__gguf_req_u32(d, g, "qwen35.ssm.conv_kernel", &hp->ssm_d_conv);
    if (!st) st = llm__gguf_req_u32(d, g, "qwen35.ssm.inner_size", &hp->ssm_d_inner);
    if (!st) st = llm__gguf_req_u32(d, g, "qwen35.ssm.state_size", &hp->ssm_d_state);
    if (!st) st = llm__gguf_req_u32(d, g, "qwen35.ssm.time_step_rank", &hp->ssm_n_v_heads);
    if (!st) st = llm__gguf_req_u32(d, g, "qwen35.ssm.group_count", &hp->ssm_n_k_heads);
    if (!st) st = llm__gguf_opt_u32(g, "qwen35.full_attention_interval", &interval);
    if (st) return st;
    if (hp->n_layer > 128)
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: qwen35: %u layers (at most 128 supported)", path,
                                 hp->n_layer);
    if (hp->ssm_d_conv < 2 || hp->ssm_d_conv > 64 || hp->ssm_d_state == 0 || hp->ssm_d_state > 1024 ||
        hp->ssm_n_v_heads == 0 || hp->ssm_n_k_heads == 0 || hp->ssm_n_v_heads % hp->ssm_n_k_heads != 0 ||
        hp->ssm_n_v_heads > 4096 || (uint64_t)hp->ssm_d_state * hp->ssm_n_v_heads != hp->ssm_d_inner)
        return llm__models_error(LLM_ERR_BAD_FORMAT,
                                 "model: %s: qwen35: inconsistent recurrent layout (conv kernel %u, state %u, "
                                 "value heads %u, key heads %u, inner %u)",
                                 path, hp->ssm_d_conv, hp->ssm_d_state, hp->ssm_n_v_heads, hp->ssm_n_k_heads,
                                 hp->ssm_d_inner);
    /* Which layers are recurrent: attention.recurrent_layers (bools) when the
     * converter wrote it (from config.json layer_types), else every layer but
     * each interval-th. */
    hp->ssm_layers[0] = hp->ssm_layers[1] = 0;
    llm_gguf_value arr;
    st = llm_gguf_get_array(g, "qwen35.attention.recurrent_layers", &arr);
    if (st == LLM_OK) {
        if (arr.count < hp->n_layer)
            return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: qwen35: recurrent_layers has %llu entries for %u layers",
                                     path, (unsigned long long)arr.count, hp->n_layer);
        for (uint32_t l = 0; l < hp->n_layer; l++) {
            llm_gguf_value e;
            int b = 0;
            st = llm_gguf_array_get(&arr, l, &e);
            if (!st) st = llm_gguf_value_bool(&e, &b);
            if (st)
                return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: qwen35: recurrent_layers is not a bool array",
                                         path);
            if (b) hp->ssm_layers[l / 64] |= 1ull << (l % 64);
        }
    } else if (st == LLM_ERR_NOT_FOUND) {
        if (interval == 0)
            return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: qwen35: full_attention_interval 0", path);
        for (uint32_t l = 0; l < hp->n_layer; l++)
            if ((l + 1) % interval != 0) hp->ssm_layers[l / 64] |= 1ull << (l % 64);
    } else {
        return st;
    }
    hp->ssm_n_layer = 0;
    for (uint32_t l = 0; l < hp->n_layer; l++) hp->ssm_n_layer += (uint32_t)llm__layer_is_recurrent(hp, l);
    if (hp->ssm_n_layer == 0)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: qwen35: no recurrent layer", path);
    return LLM_OK;
}

/* -------------------------------------------------------- tensor table -- */

/* Full-attention and recurrent layers have different tensors: the table
 * lists both kinds as optional and qwen35_load checks each layer has exactly
 * its kind's set. */
static const llm__tensor_spec k_qwen35_tensors[] = {
    GLOBAL("token_embd.weight", "model.embed_tokens.weight", REQ, ROWS, EMBD, VOCAB, tok_embd),
    GLOBAL("output_norm.weight", "model.norm.weight", REQ, F32, EMBD, 1, out_norm),
    GLOBAL("output.weight", "lm_head.weight", OPT, MATMUL, EMBD, VOCAB, output), /* absent: tied */
    LAYER("attn_norm.weight", NULL, REQ, F32, EMBD, 1, attn_norm),
    LAYER("post_attention_norm.weight", NULL, REQ, F32, EMBD, 1, ffn_norm),
    LAYER("ffn_gate.weight", NULL, REQ, MATMUL, EMBD, FF, wg),
    LAYER("ffn_up.weight", NULL, REQ, MATMUL, EMBD, FF, wu),
    LAYER("ffn_down.weight", NULL, REQ, MATMUL, FF, EMBD, wd),
    /* full attention */
    LAYER("attn_q.weight", NULL, OPT, MATMUL, EMBD, Q2, wq),
    LAYER("attn_k.weight", NULL, OPT, MATMUL, EMBD, KV, wk),
    LAYER("attn_v.weight", NULL, OPT, MATMUL, EMBD, KV, wv),
    LAYER("attn_output.weight", NULL, OPT, MATMUL, Q, EMBD, wo),
    LAYER("attn_q_norm.weight", NULL, OPT, F32, HEAD, 1, q_norm),
    LAYER("attn_k_norm.weight", NULL, OPT, F32, HEAD, 1, k_norm),
    /* Gated DeltaNet */
    LAYER("attn_qkv.weight", NULL, OPT, MATMUL, EMBD, CONV_CH, wqkv),
    LAYER("attn_gate.weight", NULL, OPT, MATMUL, EMBD, SSM_V, ssm_gate),
    LAYER("ssm_conv1d.weight", NULL, OPT, F32, CONV_K, CONV_CH, ssm_conv1d),
    LAYER("ssm_dt.bias", NULL, OPT, F32, SSM_VH, 1, ssm_dt),
    LAYER("ssm_a", NULL, OPT, F32, SSM_VH, 1, ssm_a),
    LAYER("ssm_beta.weight", NULL, OPT, MATMUL, EMBD, SSM_VH, ssm_beta),
    LAYER("ssm_alpha.weight", NULL, OPT, MATMUL, EMBD, SSM_VH, ssm_alpha),
    LAYER("ssm_norm.weight", NULL, OPT, F32, SSM_STATE, 1, ssm_norm),
    LAYER("ssm_out.weight", NULL, OPT, MATMUL, SSM_V, EMBD, ssm_out),
};
static const llm__tensor_table k_qwen35_table = LLM__TABLE(k_qwen35_tensors, NULL);

/* ------------------------------------------------------------- loading -- */

static llm_status qwen35_load(llm_net *net) {
    const llm_model_hparams *hp = &net->hp;
    TRY(llm__decoder_load(net)); /* head checks, tied output, RoPE (NEOX, n_rot dims) */
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        const llm__layer_w *w = &net->layers[l];
        const llm_tensor *full[] = {&w->wq, &w->wk, &w->wv, &w->wo, &w->q_norm, &w->k_norm};
        const llm_tensor *rec[] = {&w->wqkv,     &w->ssm_gate,  &w->ssm_conv1d, &w->ssm_dt, &w->ssm_a,
                                   &w->ssm_beta, &w->ssm_alpha, &w->ssm_norm,   &w->ssm_out};
        const int r = llm__layer_is_recurrent(hp, l);
        for (size_t i = 0; i < sizeof full / sizeof full[0]; i++)
            if (llm__has(full[i]) == r)
                return llm__net_err(LLM_ERR_BAD_FORMAT,
                                    "qwen35: layer %u is %s but %s full-attention tensors (attn_q/k/v/output, "
                                    "q/k norms)", l, r ? "recurrent" : "full attention", r ? "has" : "lacks");
        for (size_t i = 0; i < sizeof rec / sizeof rec[0]; i++)
            if (llm__has(rec[i]) != r)
                return llm__net_err(LLM_ERR_BAD_FORMAT,
                                    "qwen35: layer %u is %s but %s Gated DeltaNet tensors (attn_qkv, attn_gate, "
                                    "ssm_*)", l, r ? "recurrent" : "full attention", r ? "lacks" : "has");
    }
    const llm_op ops[] = {LLM_OP_UNARY, LLM_OP_SSM_CONV, LLM_OP_GATED_DELTA};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!llm_backend_supports(net->be, ops[i], LLM_DTYPE_F32))
            return llm__net_err(LLM_ERR_UNSUPPORTED, "qwen35: backend %s has no %s op", llm_backend_name(net->be),
                                llm_op_name(ops[i]));
    const size_t per = hp->n_head > hp->ssm_n_v_heads ? hp->n_head : hp->ssm_n_v_heads;
    net->row_ids = calloc((size_t)net->p.max_batch * per, sizeof(int32_t));
    if (!net->row_ids) return llm__net_err(LLM_ERR_NO_MEMORY, "qwen35: out of memory");
    return LLM_OK;
}

/* ------------------------------------------------------------- forward -- */

/* dst [n][heads][hd] = rows first + i * stride + h of src, a view of rows of hd. */
static llm_status split_rows(llm_net *net, const llm_net_batch *b, const llm_tensor *dst, size_t src_off,
                             int64_t src_rows, int64_t hd, int64_t n, int64_t heads, int64_t stride, int64_t first) {
    llm_backend *be = net->be;
    for (int64_t t = 0; t < n; t++)
        for (int64_t h = 0; h < heads; h++) net->row_ids[t * heads + h] = (int32_t)(t * stride + first + h);
    llm_tensor src = act(net, src_off, hd, src_rows, 1);
    llm_tensor out = act(net, dst->offset, hd, n * heads, 1);
    OP(llm_op_get_rows(be, &out, &src, net->row_ids, n * heads));
    return LLM_OK;
}

/* Byte offset of slot s's state of the r-th recurrent layer (conv, then delta). */
static size_t state_off(const llm_net_kv *kv, int32_t slot, uint32_t r) {
    const llm_model_hparams *hp = &kv->net->hp;
    return (size_t)slot * kv->state_slot_bytes + (size_t)r * (llm__ssm_conv_bytes(hp) + llm__ssm_delta_bytes(hp));
}

static llm_status delta_net(llm_net *net, llm_net_kv *kv, const llm_net_batch *b, uint32_t l, uint32_t r,
                            const llm_tensor *xn, const llm_tensor *out) {
    const llm_model_hparams *hp = &net->hp;
    const llm__layer_w *w = &net->layers[l];
    llm_backend *be = net->be;
    const int64_t n = b->n_tokens, D = hp->ssm_d_state, VH = hp->ssm_n_v_heads, KH = hp->ssm_n_k_heads;
    const int64_t VI = hp->ssm_d_inner, CH = 2 * KH * D + VI, K = hp->ssm_d_conv;
    const float eps = hp->norm_eps;
    llm_tensor mix = act(net, net->a.off_mix, CH, n, 1), conv = act(net, net->a.off_conv, CH, n, 1);
    llm_tensor z = act(net, net->a.off_z, VI, n, 1);
    llm_tensor beta = act(net, net->a.off_sbeta, VH, n, 1), g = act(net, net->a.off_sg, VH, n, 1);
    llm_tensor q = act(net, net->a.off_sq, D, KH, n), k = act(net, net->a.off_sk, D, KH, n);
    llm_tensor v = act(net, net->a.off_sv, D, VH, n), o = act(net, net->a.off_so, D, VH, n);
    llm_tensor o2 = act(net, net->a.off_so, VI, n, 1), z3 = act(net, net->a.off_z, D, VH, n);

    OP(llm_op_matmul(be, &mix, xn, &w->wqkv));
    TAP("linear_attn_qkv_mixed", l, mix);
    OP(llm_op_matmul(be, &z, xn, &w->ssm_gate));
    TAP("z", l, z);
    OP(llm_op_matmul(be, &beta, xn, &w->ssm_beta));
    OP(llm_op_unary(be, &beta, &beta, LLM_UNARY_SIGMOID));
    TAP("beta_sigmoid", l, beta);
    OP(llm_op_matmul(be, &g, xn, &w->ssm_alpha));
    TAP("alpha", l, g);
    OP(llm_op_add(be, &g, &g, &w->ssm_dt));
    OP(llm_op_unary(be, &g, &g, LLM_UNARY_SOFTPLUS));
    TAP("a_softplus", l, g);
    OP(llm_op_mul(be, &g, &g, &w->ssm_a));
    TAP("gate", l, g);
    /* The causal convolution, per sequence with its own state. */
    int64_t t0 = 0;
    for (int32_t s = 0; s < b->n_seqs; s++) {
        const int64_t ns = b->seqs[s].n_tokens;
        llm_tensor xs = act(net, net->a.off_mix + (size_t)(t0 * CH) * sizeof(float), CH, ns, 1);
        llm_tensor os = act(net, net->a.off_conv + (size_t)(t0 * CH) * sizeof(float), CH, ns, 1);
        llm_tensor cs = llm_tensor_4d(kv->state, state_off(kv, b->state_slots[s], r), LLM_DTYPE_F32, CH, K - 1,
                                      1, 1);
        OP(llm_op_ssm_conv(be, &os, &xs, &cs, &w->ssm_conv1d));
        t0 += ns;
    }
    TAP("conv_output_raw", l, conv);
    OP(llm_op_unary(be, &conv, &conv, LLM_UNARY_SILU));
    TAP("conv_output_silu", l, conv);
    const int64_t rows = n * (CH / D); /* conv rows viewed as rows of D */
    TRY(split_rows(net, b, &q, net->a.off_conv, rows, D, n, KH, CH / D, 0));
    TRY(split_rows(net, b, &k, net->a.off_conv, rows, D, n, KH, CH / D, KH));
    TRY(split_rows(net, b, &v, net->a.off_conv, rows, D, n, VH, CH / D, 2 * KH));
    /* L2 norm as llama.cpp builds it: rms_norm with eps / D, then times 1/sqrt(D). */
    const float l2_eps = eps / (float)D, l2_scale = 1.0f / sqrtf((float)D);
    OP(llm_op_rms_norm(be, &q, &q, NULL, l2_eps));
    OP(llm_op_scale(be, &q, &q, l2_scale));
    OP(llm_op_rms_norm(be, &k, &k, NULL, l2_eps));
    OP(llm_op_scale(be, &k, &k, l2_scale));
    TAP("q_conv_predelta", l, q);
    TAP("k_conv_predelta", l, k);
    TAP("v_conv_predelta", l, v);
    t0 = 0;
    for (int32_t s = 0; s < b->n_seqs; s++) {
        const int64_t ns = b->seqs[s].n_tokens;
        const size_t fk = sizeof(float) * (size_t)(t0 * KH * D), fv = sizeof(float) * (size_t)(t0 * VH * D);
        const size_t fh = sizeof(float) * (size_t)(t0 * VH);
        llm_tensor qs = act(net, net->a.off_sq + fk, D, KH, ns), ks = act(net, net->a.off_sk + fk, D, KH, ns);
        llm_tensor vs = act(net, net->a.off_sv + fv, D, VH, ns), os = act(net, net->a.off_so + fv, D, VH, ns);
        llm_tensor gs = act(net, net->a.off_sg + fh, VH, ns, 1), bs = act(net, net->a.off_sbeta + fh, VH, ns, 1);
        llm_tensor ss = llm_tensor_4d(kv->state, state_off(kv, b->state_slots[s], r) + llm__ssm_conv_bytes(hp),
                                      LLM_DTYPE_F32, D, D, VH, 1);
        OP(llm_op_gated_delta(be, &os, &qs, &ks, &vs, &gs, &bs, &ss));
        t0 += ns;
    }
    TAP("attn_output", l, o);
    /* Gated RMSNorm per value head, then the output projection. */
    OP(llm_op_rms_norm(be, &o, &o, &w->ssm_norm, eps));
    OP(llm_op_unary(be, &z3, &z3, LLM_UNARY_SILU));
    OP(llm_op_mul(be, &o, &o, &z3));
    TAP("final_output", l, o2);
    OP(llm_op_matmul(be, out, &o2, &w->ssm_out));
    TAP("linear_attn_out", l, *out);
    return LLM_OK;
}

static llm_status gated_attention(llm_net *net, llm_net_kv *kv, const llm_net_batch *b, uint32_t l,
                                  const llm__acts *a, const llm_tensor *out) {
    const llm_model_hparams *hp = &net->hp;
    const llm__layer_w *w = &net->layers[l];
    llm_backend *be = net->be;
    const int64_t n = b->n_tokens, hd = hp->head_dim, H = hp->n_head;
    const float eps = hp->norm_eps;
    llm_tensor qg = act(net, net->a.off_qg, 2 * hd * H, n, 1), gate = act(net, net->a.off_agate, hd * H, n, 1);
    llm_tensor q = a->q, k = a->k, v = a->v, att2 = a->att2;

    OP(llm_op_matmul(be, &qg, &a->xn, &w->wq));
    OP(llm_op_matmul(be, &a->k2, &a->xn, &w->wk));
    OP(llm_op_matmul(be, &a->v2, &a->xn, &w->wv));
    /* Per token and head, qg holds the query then the gate: rows 2i and 2i + 1 of hd. */
    {
        llm_tensor src = act(net, net->a.off_qg, hd, 2 * H * n, 1);
        llm_tensor dq = act(net, q.offset, hd, H * n, 1), dg = act(net, net->a.off_agate, hd, H * n, 1);
        for (int64_t i = 0; i < n * H; i++) net->row_ids[i] = (int32_t)(2 * i);
        OP(llm_op_get_rows(be, &dq, &src, net->row_ids, n * H));
        for (int64_t i = 0; i < n * H; i++) net->row_ids[i] = (int32_t)(2 * i + 1);
        OP(llm_op_get_rows(be, &dg, &src, net->row_ids, n * H));
    }
    OP(llm_op_rms_norm(be, &q, &q, &w->q_norm, eps));
    TAP("Qcur_normed", l, q);
    OP(llm_op_rms_norm(be, &k, &k, &w->k_norm, eps));
    TAP("Kcur_normed", l, k);
    OP(llm_op_rope(be, &q, b->positions, &net->rope));
    OP(llm_op_rope(be, &k, b->positions, &net->rope));
    TAP("Qcur", l, q);
    TAP("Kcur", l, k);
    TAP("Vcur", l, v);
    llm_attn_params ap = llm_attn_default_params();
    ap.scale = 1.0f / sqrtf((float)hd);
    TRY(llm__attend(net, kv, b, l, &ap));
    TAP("attn_pregate", l, att2);
    OP(llm_op_unary(be, &gate, &gate, LLM_UNARY_SIGMOID));
    OP(llm_op_mul(be, &att2, &att2, &gate));
    TAP("attn_gated", l, att2);
    OP(llm_op_matmul(be, out, &att2, &w->wo));
    TAP("attn_output", l, *out);
    return LLM_OK;
}

static llm_status qwen35_forward(llm_net *net, llm_net_kv *kv, const llm_net_batch *b) {
    const llm_model_hparams *hp = &net->hp;
    llm_backend *be = net->be;
    const int64_t n = b->n_tokens;
    const float eps = hp->norm_eps;
    if (!kv->state) return llm__net_err(LLM_ERR_INVALID_ARG, "qwen35: the storage has no recurrent state slots");

    const llm__acts a = llm__decoder_acts(net, n);
    llm_tensor x = a.x, xn = a.xn, tmp = a.tmp;

    OP(llm_op_get_rows(be, &x, &net->tok_embd, b->tokens, n));
    uint32_t r = 0; /* index of the recurrent layer */
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        const llm__layer_w *w = &net->layers[l];
        OP(llm_op_rms_norm(be, &xn, &x, &w->attn_norm, eps));
        TAP("attn_norm", l, xn);
        if (llm__layer_is_recurrent(hp, l)) {
            TRY(delta_net(net, kv, b, l, r++, &xn, &tmp));
        } else {
            TRY(gated_attention(net, kv, b, l, &a, &tmp));
        }
        OP(llm_op_add(be, &x, &tmp, &x));
        TAP("attn_residual", l, x);
        OP(llm_op_rms_norm(be, &xn, &x, &w->ffn_norm, eps));
        TAP("attn_post_norm", l, xn);
        TRY(llm__ffn_glu(net, b, l, 0)); /* in runs of rows */
        TAP("ffn_out", l, tmp);
        OP(llm_op_add(be, &x, &tmp, &x));
        TAP("l_out", l, x);
    }
    return llm__decoder_output(net, b, &x, &xn, eps);
}

/* ---------------------------------------------------------- the entry -- */

const llm__arch llm__arch_qwen35 = {
    .tag = "qwen35",
    .tensors = &k_qwen35_table,
    .hparams_gguf = qwen35_hparams_gguf,
    .load = qwen35_load,
    .forward = qwen35_forward,
    .ffn_chunked = 1,
};
