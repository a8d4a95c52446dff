/*
 * arch/phi3.c -- Phi-3 / Phi-3.5 / Phi-4-mini (dense): hyper-parameters,
 * tensor table and forward, written only against runtime ops, in llama.cpp's
 * order (src/models/phi3.cpp of llama.cpp 0.3.36).
 *
 * For the batch's tokens x [n][n_embd], per layer:
 *     xn    = rms_norm(x) * attn_norm
 *     q,k,v = xn . Wqkv^T split by rows (Q, then K, then V), or separate Wq/Wk/Wv
 *     q,k   = rope(q), rope(k)  NEOX, theta_i /= factor_i (long or short, below),
 *             cos and sin times attn_factor
 *     q    *= 1/sqrt(head_dim); att = attention(q, cache) with scale 1
 *     x    += att . Wo^T
 *     xn    = rms_norm(x) * ffn_norm
 *     x    += (silu(xn . Wg^T) * (xn . Wu^T)) . Wd^T, [Wg; Wu] = ffn_up ([2F][E], gate rows first)
 * then logits = rms_norm(x) * output_norm . Wout^T (token_embd when tied).
 *
 * The fused projections are multiplied as row views of the fused weight
 * (a quantized row is whole blocks, so a range of rows is a weight of its
 * own): every output element is the same dot product of one weight row with
 * the input as in llama.cpp's single fused matmul, so the bits agree.
 *
 * LongRoPE (Phi-3 128k): the file holds rope_factors_long and
 * rope_factors_short ([n_rot/2] divisors of the angles) and
 * rope.scaling.attn_factor (sqrt(1 + ln(s)/ln(orig)), s = context /
 * original context), which multiplies cos and sin. Which factors a run uses
 * depends on the context it runs with, as in llama.cpp's get_rope_factors:
 * long when the per-sequence context exceeds
 * rope.scaling.original_context_length (else context_length), short
 * otherwise. The net learns the context from llm_net_params.n_ctx_seq (the
 * engine passes its per-session n_ctx), rounded up to 256 as llama.cpp rounds
 * n_ctx; 0 (unknown) takes the short factors.
 *
 * A file's attention.sliding_window is read and ignored: llama.cpp 0.3.36
 * disables Phi's sliding window (its converters do not fill the pattern), so
 * every layer attends to the whole context here too. The MoE variant
 * (phimoe) is another architecture and is not here.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "arch/decoder.h"
#include "formats/formats_internal.h"

static llm_status phi3_hparams_gguf(llm_model_hparams *hp, const llm_model_desc *d, const llm_gguf *g) {
    llm_status st = llm__decoder_hparams_gguf("phi3", hp, d, g);
    if (st) return st;
    hp->rope_type = LLM_ROPE_MODE_NEOX;
    st = llm__gguf_opt_f32(g, "phi3.rope.scaling.attn_factor", &hp->rope_attn_factor);
    uint32_t swa = 0; /* read for its type only: llama.cpp disables Phi's window */
    if (!st) st = llm__gguf_opt_u32(g, "phi3.attention.sliding_window", &swa);
    if (st) return st;
    if (!(hp->rope_attn_factor > 0.0f && hp->rope_attn_factor <= 1e3f))
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: phi3: bad rope.scaling.attn_factor %g",
                                 llm_model_desc_path(d), (double)hp->rope_attn_factor);
    hp->n_swa = 0;
    return LLM_OK;
}

static const llm__tensor_spec k_phi3_tensors[] = {
    GLOBAL("token_embd.weight", NULL, REQ, ROWS, EMBD, VOCAB, tok_embd),
    GLOBAL("output_norm.weight", NULL, REQ, F32, EMBD, 1, out_norm),
    GLOBAL("output.weight", NULL, OPT, MATMUL, EMBD, VOCAB, output), /* absent: tied */
    /* LongRoPE angle divisors, one pair for every layer, read on the host by phi3_load. */
    {"rope_factors_long.weight", NULL, 0, OPT, LLM__W_HOST, LLM__D_ROT_HALF, LLM__D_1, LLM__NO_FIELD},
    {"rope_factors_short.weight", NULL, 0, OPT, LLM__W_HOST, LLM__D_ROT_HALF, LLM__D_1, LLM__NO_FIELD},
    LAYER("attn_norm.weight", NULL, REQ, F32, EMBD, 1, attn_norm),
    /* Either the fused attn_qkv (what llama.cpp's converter writes) or separate q/k/v. */
    LAYER("attn_qkv.weight", NULL, OPT, MATMUL, EMBD, QKV, wqkv),
    LAYER("attn_q.weight", NULL, OPT, MATMUL, EMBD, Q, wq),
    LAYER("attn_k.weight", NULL, OPT, MATMUL, EMBD, KV, wk),
    LAYER("attn_v.weight", NULL, OPT, MATMUL, EMBD, KV, wv),
    LAYER("attn_output.weight", NULL, REQ, MATMUL, Q, EMBD, wo),
    LAYER("ffn_norm.weight", NULL, REQ, F32, EMBD, 1, ffn_norm),
    LAYER("ffn_up.weight", NULL, REQ, MATMUL, EMBD, FF2, wu), /* gate and up, sliced by phi3_load */
    LAYER("ffn_down.weight", NULL, REQ, MATMUL, FF, EMBD, wd),
};
static const llm__tensor_table k_phi3_table = LLM__TABLE(k_phi3_tensors, NULL);

/* Rows [r0, r0 + rows) of a 2-D weight [ne1][ne0] as a weight of its own. */
/* The rope factors of this run (see the opening comment). */
static const float *pick_rope_factors(const llm_net *net) {
    const llm_model_hparams *hp = &net->hp;
    const llm_model_tensor *lo = llm_model_desc_find_tensor(net->desc, "rope_factors_long.weight");
    const llm_model_tensor *sh = llm_model_desc_find_tensor(net->desc, "rope_factors_short.weight");
    const uint32_t orig = hp->rope_orig_ctx ? hp->rope_orig_ctx : hp->n_ctx_train;
    const int64_t ctx = ((int64_t)net->p.n_ctx_seq + 255) / 256 * 256; /* llama.cpp's GGML_PAD(n_ctx, 256) */
    const llm_model_tensor *t = ctx > (int64_t)orig ? lo : sh;
    return t ? (const float *)t->data : NULL; /* f32 [n_rot/2] (table-checked), host memory in the mapping */
}

/* After the table: the Q/K/V and gate/up row views, the decoder's checks, tied
 * output and RoPE, then LongRoPE's factors and magnitude. */
static llm_status phi3_load(llm_net *net) {
    const llm_model_hparams *hp = &net->hp;
    const int64_t Q = (int64_t)hp->n_head * hp->head_dim, KV = (int64_t)hp->n_head_kv * hp->head_dim;
    const int64_t F = hp->n_ff;
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        llm__layer_w *w = &net->layers[l];
        const int fused = llm__has(&w->wqkv), sep = llm__has(&w->wq) + llm__has(&w->wk) + llm__has(&w->wv);
        if (fused ? sep != 0 : sep != 3)
            return llm__net_err(LLM_ERR_BAD_FORMAT,
                                "phi3: layer %u needs attn_qkv.weight or all of attn_q/k/v.weight, not both", l);
        if (fused) {
            w->wq = llm_tensor_rows(&w->wqkv, 0, Q);
            w->wk = llm_tensor_rows(&w->wqkv, Q, KV);
            w->wv = llm_tensor_rows(&w->wqkv, Q + KV, KV);
        }
        const llm_tensor up = w->wu; /* [2F][E] */
        w->wg = llm_tensor_rows(&up, 0, F);
        w->wu = llm_tensor_rows(&up, F, F);
    }
    TRY(llm__decoder_load(net));
    if (hp->n_ctx_train == 0 && hp->rope_orig_ctx == 0 &&
        llm_model_desc_find_tensor(net->desc, "rope_factors_long.weight"))
        return llm__net_err(LLM_ERR_BAD_FORMAT, "phi3: rope factors without a context length");
    net->rope.freq_factors = pick_rope_factors(net);
    net->rope.attn_factor = hp->rope_attn_factor;
    return LLM_OK;
}

static llm_status phi3_forward(llm_net *net, llm_net_kv *kv, const llm_net_batch *b) {
    const llm_model_hparams *hp = &net->hp;
    llm_backend *be = net->be;
    const int64_t n = b->n_tokens;
    const float eps = hp->norm_eps, q_scale = 1.0f / sqrtf((float)hp->head_dim);

    const llm__acts a = llm__decoder_acts(net, n);
    llm_tensor x = a.x, xn = a.xn, tmp = a.tmp, q = a.q, k = a.k, v = a.v;
    llm_tensor q2 = a.q2, k2 = a.k2, v2 = a.v2, att2 = a.att2;
    llm_attn_params ap = llm_attn_default_params();
    ap.scale = 1.0f; /* q is scaled before: llama.cpp's attention then rounds the same values */

    OP(llm_op_get_rows(be, &x, &net->tok_embd, b->tokens, n));
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        const llm__layer_w *w = &net->layers[l];
        OP(llm_op_rms_norm(be, &xn, &x, &w->attn_norm, eps));
        TAP("attn_norm", l, xn);
        OP(llm_op_matmul(be, &q2, &xn, &w->wq));
        OP(llm_op_matmul(be, &k2, &xn, &w->wk));
        OP(llm_op_matmul(be, &v2, &xn, &w->wv));
        OP(llm_op_rope(be, &q, b->positions, &net->rope));
        OP(llm_op_rope(be, &k, b->positions, &net->rope));
        TAP("Qcur", l, q);
        TAP("Kcur", l, k);
        TAP("Vcur", l, v);
        OP(llm_op_scale(be, &q, &q, q_scale));
        TRY(llm__attend(net, kv, b, l, &ap));
        TAP("kqv_out", l, att2);
        OP(llm_op_matmul(be, &tmp, &att2, &w->wo));
        TAP("attn_out", l, tmp);
        OP(llm_op_add(be, &x, &tmp, &x));
        TAP("ffn_inp", l, x);
        OP(llm_op_rms_norm(be, &xn, &x, &w->ffn_norm, eps));
        TAP("ffn_norm", l, xn);
        TRY(llm__ffn_glu(net, b, l, 0)); /* in runs of rows, through the gate / up row views */
        TAP("ffn_out", l, tmp);
        OP(llm_op_add(be, &x, &x, &tmp));
        TAP("l_out", l, x);
    }
    return llm__decoder_output(net, b, &x, &xn, eps);
}

const llm__arch llm__arch_phi3 = {
    .tag = "phi3",
    .hf_model_types = NULL, /* HF folders: LongRoPE factors live in config.json (not yet) */
    .hf_layer_prefix = NULL,
    .hf_ignore = NULL,
    .tensors = &k_phi3_table,
    .hparams_gguf = phi3_hparams_gguf,
    .hparams_hf = NULL,
    .load = phi3_load,
    .forward = phi3_forward,
    .ffn_chunked = 1,
};
