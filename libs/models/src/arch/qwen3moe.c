/*
 * arch/qwen3moe.c -- Qwen3 mixture of experts (Qwen3-30B-A3B, 235B-A22B):
 * Qwen3's attention (per-head RMSNorm of q and k before NEOX RoPE, no
 * biases, head_dim from key_length) and, in place of the dense feed-forward,
 * n_expert SwiGLU experts of width n_ff_exp of which each token uses
 * n_expert_used, with no shared expert. GGUF keys "qwen3moe.*" (plus
 * expert_count, expert_used_count, expert_feed_forward_length); HF
 * model_type "qwen3_moe" is not read (GGUF only).
 *
 * Per layer, for the batch's tokens x [n][E] (X experts, U used, Fe wide):
 *     attention as Qwen3:  x += attn(rms_norm(x) * attn_norm)
 *     xn     = rms_norm(x) * ffn_norm
 *     probs  = softmax(xn . Wr^T)                        [n][X]   (F32 router)
 *     ids, w = the U largest probs of each row, w /= sum(w)   [n][U] (norm_topk_prob)
 *     h[t][j] = silu(xn[t] . Wg[ids]^T) * (xn[t] . Wu[ids]^T)   [n][U][Fe]
 *     x     += sum_j w[t][j] * (h[t][j] . Wd[ids]^T)     in j order
 * then logits as the llama decoder. This is llama.cpp's build_moe_ffn with
 * softmax gating and weight normalisation, op for op: the expert products
 * are its mul_mat_id (llm_op_matmul_id), and the weighted sum its ggml_mul
 * then a chain of adds over the U slots (llm_op_moe_sum).
 *
 * Two shape effects of llama.cpp are kept, since they change bits:
 *   - the router is F32, and llama.cpp's CPU multiplies F32 by F32 with
 *     tinyBLAS (8 lanes, an order fixed by K) when a call has 2 or more rows,
 *     K % 8 == 0 and X % 4 == 0, else with its vec_dot: we take
 *     llm_op_matmul_invariant (that order) or llm_op_matmul (vec_dot) alike;
 *   - in the last layer llama.cpp keeps only the rows it outputs before the
 *     feed-forward (inp_out_ids), so the router sees that many rows: with
 *     logits of the last row of each sequence only, we gather those rows
 *     first as well.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "arch/decoder.h"
#include "formats/formats_internal.h"

/* The largest expert counts we accept (llama.cpp: LLAMA_MAX_EXPERTS 1024). */
#define MAX_EXPERTS 1024

/* The shared decoder's attention tensors (decoder.h; their HF names unused:
 * GGUF only), then Qwen3's per-head norms and the experts. */
static const llm__tensor_spec k_qwen3moe_tensors[] = {
    LAYER("attn_q_norm.weight", NULL, REQ, F32, HEAD, 1, q_norm),
    LAYER("attn_k_norm.weight", NULL, REQ, F32, HEAD, 1, k_norm),
    LAYER("ffn_norm.weight", NULL, REQ, F32, EMBD, 1, ffn_norm),
    LAYER("ffn_gate_inp.weight", NULL, REQ, F32, EMBD, EXPERT, ffn_gate_inp),
    LAYER("ffn_gate_exps.weight", NULL, REQ, MATMUL, EMBD, FF_EXP_X, ffn_gate_exps),
    LAYER("ffn_up_exps.weight", NULL, REQ, MATMUL, EMBD, FF_EXP_X, ffn_up_exps),
    LAYER("ffn_down_exps.weight", NULL, REQ, MATMUL, FF_EXP, EMBD_X, ffn_down_exps),
};
static const llm__tensor_table k_qwen3moe_table = LLM__TABLE(k_qwen3moe_tensors, &llm__decoder_attn_tensors);

static llm_status qwen3moe_hparams_gguf(llm_model_hparams *hp, const llm_model_desc *d, const llm_gguf *g) {
    const char *path = llm_model_desc_path(d);
    llm_status st = LLM_OK;
    uint32_t groups = 0;
    if (!st) st = llm__gguf_req_u32(d, g, "qwen3moe.expert_count", &hp->n_expert);
    if (!st) st = llm__gguf_req_u32(d, g, "qwen3moe.expert_used_count", &hp->n_expert_used);
    if (!st) st = llm__gguf_opt_u32(g, "qwen3moe.expert_feed_forward_length", &hp->n_ff_exp);
    if (!st) st = llm__gguf_opt_u32(g, "qwen3moe.expert_group_count", &groups);
    if (st) return st;
    if (hp->n_expert == 0 || hp->n_expert > MAX_EXPERTS || hp->n_expert_used == 0 ||
        hp->n_expert_used > hp->n_expert)
        return llm__models_error(LLM_ERR_BAD_FORMAT,
                                 "model: %s: qwen3moe: %u experts with %u used per token (need 1 <= used <= "
                                 "experts <= %d)",
                                 path, hp->n_expert, hp->n_expert_used, MAX_EXPERTS);
    if (groups > 1)
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: qwen3moe: expert groups (%u) are not supported",
                                 path, groups);
    st = llm__decoder_hparams_gguf("qwen3moe", hp, d, g);
    if (st) return st;
    hp->rope_type = LLM_ROPE_MODE_NEOX;
    /* llama.cpp: an expert's width defaults to n_ff / n_expert_used. */
    if (!hp->n_ff_exp) hp->n_ff_exp = hp->n_ff / hp->n_expert_used;
    if (hp->n_ff_exp == 0)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: qwen3moe: expert feed-forward length is 0", path);
    return LLM_OK;
}

static llm_status qwen3moe_load(llm_net *net) {
    const llm_model_hparams *hp = &net->hp;
    if (hp->n_expert == 0 || hp->n_expert_used == 0 || hp->n_expert_used > hp->n_expert || hp->n_ff_exp == 0)
        return llm__net_err(LLM_ERR_BAD_FORMAT, "qwen3moe: inconsistent expert counts");
    if (hp->n_rot != hp->head_dim)
        return llm__net_err(LLM_ERR_BAD_FORMAT, "qwen3moe: rope dimension %u != head_dim %u", hp->n_rot,
                            hp->head_dim);
    /* The MoE ops are optional backend extensions: say which one is missing
     * (--backend auto then runs on the CPU). */
    const struct {
        llm_op op;
        llm_dtype t;
    } need[] = {{LLM_OP_MOE_TOPK, LLM_DTYPE_F32}, {LLM_OP_MOE_SUM, LLM_DTYPE_F32}};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!llm_backend_supports(net->be, need[i].op, need[i].t))
            return llm__net_err(LLM_ERR_UNSUPPORTED, "qwen3moe: backend %s has no %s", llm_backend_name(net->be),
                                llm_op_name(need[i].op));
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        const llm__layer_w *w = &net->layers[l];
        const llm_tensor *ex[3] = {&w->ffn_gate_exps, &w->ffn_up_exps, &w->ffn_down_exps};
        for (int i = 0; i < 3; i++)
            if (!llm_backend_supports(net->be, LLM_OP_MATMUL_ID, ex[i]->dtype))
                return llm__net_err(LLM_ERR_UNSUPPORTED, "qwen3moe: backend %s has no %s for %s expert weights",
                                    llm_backend_name(net->be), llm_op_name(LLM_OP_MATMUL_ID),
                                    llm_dtype_name(ex[i]->dtype));
    }
    if (!llm_backend_supports(net->be, LLM_OP_MATMUL_INVARIANT, LLM_DTYPE_F32))
        return llm__net_err(LLM_ERR_UNSUPPORTED, "qwen3moe: backend %s has no %s for the f32 router",
                            llm_backend_name(net->be), llm_op_name(LLM_OP_MATMUL_INVARIANT));
    return llm__decoder_load(net);
}

/* The mixture-of-experts feed-forward of layer l for n rows: xn [n][E]
 * (normed) in, out [n][E]. */
static llm_status moe_ffn(llm_net *net, const llm_net_batch *b, uint32_t l, int64_t n, const llm_tensor *xn,
                          const llm_tensor *out) {
    const llm_model_hparams *hp = &net->hp;
    llm_backend *be = net->be;
    const llm__layer_w *w = &net->layers[l];
    const int64_t E = hp->n_embd, X = hp->n_expert, U = hp->n_expert_used, Fe = hp->n_ff_exp;
    llm_tensor probs = act(net, net->a.off_moe_probs, X, n, 1);      /* [n][X] */
    llm_tensor wts = act(net, net->a.off_moe_w, U, n, 1);            /* [n][U] */
    llm_tensor xn3 = act(net, net->a.off_xn, E, 1, n);               /* [n][1][E] */
    llm_tensor gate = act(net, net->a.off_moe_gate, Fe, U, n);       /* [n][U][Fe] */
    llm_tensor up = act(net, net->a.off_moe_up, Fe, U, n);           /* [n][U][Fe] */
    llm_tensor eo = act(net, net->a.off_moe_out, E, U, n);           /* [n][U][E] */
    /* The router: llama.cpp's F32 order for this row count (see the top). */
    if (n >= 2 && E % 8 == 0 && X % 4 == 0) OP(llm_op_matmul_invariant(be, &probs, xn, &w->ffn_gate_inp));
    else OP(llm_op_matmul(be, &probs, xn, &w->ffn_gate_inp));
    TAP("ffn_moe_logits", l, probs);
    OP(llm_op_softmax(be, &probs, &probs));
    TAP("ffn_moe_probs", l, probs);
    OP(llm_op_moe_topk(be, &wts, net->moe_ids, &probs, (int32_t)U, 1));
    TAP("ffn_moe_weights_norm", l, wts);
    OP(llm_op_matmul_id(be, &up, &xn3, &w->ffn_up_exps, net->moe_ids));
    OP(llm_op_matmul_id(be, &gate, &xn3, &w->ffn_gate_exps, net->moe_ids));
    OP(llm_op_swiglu(be, &gate, &gate, &up));
    TAP("ffn_moe_swiglu", l, gate);
    OP(llm_op_matmul_id(be, &eo, &gate, &w->ffn_down_exps, net->moe_ids));
    TAP("ffn_moe_down", l, eo);
    OP(llm_op_moe_sum(be, out, &eo, &wts));
    return LLM_OK;
}

static llm_status qwen3moe_forward(llm_net *net, llm_net_kv *kv, const llm_net_batch *b) {
    const llm_model_hparams *hp = &net->hp;
    llm_backend *be = net->be;
    const int64_t n = b->n_tokens, E = hp->n_embd;
    const float eps = hp->norm_eps, kq_scale = 1.0f / sqrtf((float)hp->head_dim);

    const llm__acts a = llm__decoder_acts(net, n);
    llm_tensor x = a.x, xn = a.xn, tmp = a.tmp, q = a.q, k = a.k, v = a.v;
    llm_tensor q2 = a.q2, k2 = a.k2, v2 = a.v2, att2 = a.att2;
    /* Rows the last layer's feed-forward computes (llama.cpp's inp_out_ids):
     * all of them, or the last of each sequence, or none. */
    const int last_only = !b->hidden && b->logits_mode == LLM_LOGITS_LAST;
    const int none = !b->hidden && b->logits_mode == LLM_LOGITS_NONE;

    OP(llm_op_get_rows(be, &x, &net->tok_embd, b->tokens, n));
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        const llm__layer_w *w = &net->layers[l];
        OP(llm_op_rms_norm(be, &xn, &x, &w->attn_norm, eps));
        TAP("attn_norm", l, xn);
        OP(llm_op_matmul(be, &q2, &xn, &w->wq));
        OP(llm_op_matmul(be, &k2, &xn, &w->wk));
        OP(llm_op_matmul(be, &v2, &xn, &w->wv));
        OP(llm_op_rms_norm(be, &q, &q, &w->q_norm, eps));
        OP(llm_op_rms_norm(be, &k, &k, &w->k_norm, eps));
        OP(llm_op_rope(be, &q, b->positions, &net->rope));
        OP(llm_op_rope(be, &k, b->positions, &net->rope));
        TAP("Qcur", l, q);
        TAP("Kcur", l, k);
        TAP("Vcur", l, v);
        llm_attn_params ap = llm_attn_default_params();
        ap.scale = kq_scale;
        TRY(llm__attend(net, kv, b, l, &ap));
        TAP("kqv_out", l, att2);
        OP(llm_op_matmul(be, &tmp, &att2, &w->wo));
        TAP("attn_out", l, tmp);
        OP(llm_op_add(be, &x, &x, &tmp));
        TAP("ffn_inp", l, x);
        if (l + 1 == hp->n_layer && none) return LLM_OK; /* no output: the cache is written */
        int64_t nr = n; /* rows of this feed-forward */
        if (l + 1 == hp->n_layer && last_only) {
            /* Keep the last row of each sequence, at the front of x. */
            int64_t t0 = 0;
            for (int32_t s = 0; s < b->n_seqs; s++) {
                t0 += b->seqs[s].n_tokens;
                net->gather_ids[s] = (int32_t)(t0 - 1);
            }
            nr = b->n_seqs;
            llm_tensor g = act(net, net->a.off_tmp, E, nr, 1);
            OP(llm_op_get_rows(be, &g, &x, net->gather_ids, nr));
            OP(llm_buffer_copy(net->arena, net->a.off_x, net->arena, net->a.off_tmp, (size_t)(nr * E) * sizeof(float)));
            x = act(net, net->a.off_x, E, nr, 1);
            xn = act(net, net->a.off_xn, E, nr, 1);
            tmp = act(net, net->a.off_tmp, E, nr, 1);
        }
        OP(llm_op_rms_norm(be, &xn, &x, &w->ffn_norm, eps));
        TAP("ffn_norm", l, xn);
        TRY(moe_ffn(net, b, l, nr, &xn, &tmp));
        TAP("ffn_moe_out", l, tmp);
        OP(llm_op_add(be, &x, &x, &tmp));
        TAP("l_out", l, x);
        if (nr != n) {
            /* Only the sequences' last rows remain: their logits are "all rows" of nr. */
            llm_net_batch bb = *b;
            bb.n_tokens = (int32_t)nr;
            bb.logits_mode = LLM_LOGITS_ALL;
            return llm__decoder_output(net, &bb, &x, &xn, eps);
        }
    }
    return llm__decoder_output(net, b, &x, &xn, eps);
}

static const char *const k_qwen3moe_hf_types[] = {NULL};

const llm__arch llm__arch_qwen3moe = {
    .tag = "qwen3moe",
    .hf_model_types = k_qwen3moe_hf_types,
    .hf_layer_prefix = "model.layers.",
    .tensors = &k_qwen3moe_table,
    .hparams_gguf = qwen3moe_hparams_gguf,
    .load = qwen3moe_load,
    .forward = qwen3moe_forward,
};
