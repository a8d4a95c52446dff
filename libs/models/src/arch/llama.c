/*
 * arch/llama.c -- the llama architecture (Llama 2/3, SmolLM2, Mistral-style
 * GQA, tied embeddings): its tensor table, which extends the shared
 * decoder's (decoder.h) with optional biases and Llama 3.1's rope
 * frequencies, and its forward, written only against runtime ops. Qwen2 and
 * Qwen3 run this forward with tables of their own. GGUF keys "llama.*"; HF
 * model_type "llama".
 *
 * Per layer, for the batch's tokens x [n][n_embd]:
 *     xn   = rms_norm(x) * attn_norm
 *     q,k,v = xn . Wq^T (+ bq), xn . Wk^T (+ bk), xn . Wv^T (+ bv)
 *     q,k  = rms_norm(q) * q_norm, rms_norm(k) * k_norm    per head, when present (Qwen3)
 *     q,k  = rope(q), rope(k)
 *     per sequence: write k,v to the paged cache; att = attention(q, cache), scale 1/sqrt(head_dim)
 *     x   += att . Wo^T (+ bo)
 *     xn   = rms_norm(x) * ffn_norm
 *     x   += (silu(xn . Wg^T + bg) * (xn . Wu^T + bu)) . Wd^T (+ bd)
 * then logits = rms_norm(x) * output_norm . Wout^T (Wout = token_embd when tied).
 * The biases are optional (llama.cpp loads them too): each is one F32 add of
 * a row after its projection, as ggml_add does, so logits stay bit-identical.
 */
#include <math.h>
#include <stddef.h>

#include "arch/decoder.h"

/* The shared decoder's tensors, then llama's optional ones. */
static const llm__tensor_spec k_llama_tensors[] = {
    /* Llama 3.1 per-frequency rope divisors, read on the host by llm__decoder_load. */
    {"rope_freqs.weight", NULL, 0, OPT, LLM__W_HOST, LLM__D_ROT_HALF, LLM__D_1, LLM__NO_FIELD},
    LAYER("attn_q.bias", "self_attn.q_proj.bias", OPT, F32, Q, 1, bq),
    LAYER("attn_k.bias", "self_attn.k_proj.bias", OPT, F32, KV, 1, bk),
    LAYER("attn_v.bias", "self_attn.v_proj.bias", OPT, F32, KV, 1, bv),
    LAYER("attn_output.bias", "self_attn.o_proj.bias", OPT, F32, EMBD, 1, bo),
    LAYER("ffn_gate.bias", "mlp.gate_proj.bias", OPT, F32, FF, 1, bg),
    LAYER("ffn_up.bias", "mlp.up_proj.bias", OPT, F32, FF, 1, bu),
    LAYER("ffn_down.bias", "mlp.down_proj.bias", OPT, F32, EMBD, 1, bd),
};
static const llm__tensor_table k_llama_table = LLM__TABLE(k_llama_tensors, &llm__decoder_tensors);

static llm_status llama_hparams_gguf(llm_model_hparams *hp, const llm_model_desc *d, const llm_gguf *g) {
    return llm__decoder_hparams_gguf("llama", hp, d, g);
}

llm_status llm__llama_forward(llm_net *net, llm_net_kv *kv, const llm_net_batch *b) {
    const llm_model_hparams *hp = &net->hp;
    llm_backend *be = net->be;
    const int64_t n = b->n_tokens;
    const float eps = hp->norm_eps, kq_scale = 1.0f / sqrtf((float)hp->head_dim);

    const llm__acts a = llm__decoder_acts(net, n);
    llm_tensor x = a.x, xn = a.xn, tmp = a.tmp;       /* [n][E] */
    llm_tensor q = a.q, k = a.k, v = a.v;             /* [n][n_head][hd], [n][n_head_kv][hd] x2 */
    llm_tensor q2 = a.q2, k2 = a.k2, v2 = a.v2;       /* the same as [n][heads * hd] */
    llm_tensor att2 = a.att2;                         /* [n][n_head * hd] */

    OP(llm_op_get_rows(be, &x, &net->tok_embd, b->tokens, n));
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        const llm__layer_w *w = &net->layers[l];
        OP(llm_op_rms_norm(be, &xn, &x, &w->attn_norm, eps));
        TAP("attn_norm", l, xn);
        OP(llm_op_matmul(be, &q2, &xn, &w->wq));
        BIAS(q2, w->bq);
        OP(llm_op_matmul(be, &k2, &xn, &w->wk));
        BIAS(k2, w->bk);
        OP(llm_op_matmul(be, &v2, &xn, &w->wv));
        BIAS(v2, w->bv);
        if (llm__has(&w->q_norm)) { /* per-head RMSNorm before RoPE (Qwen3), as llama.cpp does */
            OP(llm_op_rms_norm(be, &q, &q, &w->q_norm, eps));
            OP(llm_op_rms_norm(be, &k, &k, &w->k_norm, eps));
        }
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
        BIAS(tmp, w->bo);
        TAP("attn_out", l, tmp);
        OP(llm_op_add(be, &x, &x, &tmp));
        TAP("ffn_inp", l, x);
        OP(llm_op_rms_norm(be, &xn, &x, &w->ffn_norm, eps));
        TAP("ffn_norm", l, xn);
        TRY(llm__ffn_glu(net, b, l, 0)); /* in runs of rows (ffn_chunked) */
        TAP("ffn_out", l, tmp);
        OP(llm_op_add(be, &x, &x, &tmp));
        TAP("l_out", l, x);
    }
    return llm__decoder_output(net, b, &x, &xn, eps);
}

static const char *const k_llama_hf_types[] = {"llama", NULL};
/* HF tensors that are known and not needed: recomputed from hparams. */
static const char *const k_llama_hf_ignore[] = {"rotary_emb.inv_freq", NULL};

const llm__arch llm__arch_llama = {
    .tag = "llama",
    .hf_model_types = k_llama_hf_types,
    .hf_layer_prefix = "model.layers.",
    .hf_ignore = k_llama_hf_ignore,
    .tensors = &k_llama_table,
    .hparams_gguf = llama_hparams_gguf,
    .hparams_hf = llm__decoder_hparams_hf,
    .load = llm__decoder_load,
    .forward = llm__llama_forward,
    .ffn_chunked = 1,
};
