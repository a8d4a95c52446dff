/*
 * arch/qwen2.c -- Qwen2 / Qwen2.5: the llama decoder (arch/llama.c) with
 * biases on the Q, K and V projections (required, as in llama.cpp's qwen2)
 * and NEOX RoPE (rotate_half: Qwen's converters do not permute q/k).
 * Output tied or untied. GGUF keys "qwen2.*"; HF model_type "qwen2".
 */
#include <stddef.h>

#include "arch/arch_internal.h"

static const llm__tensor_spec k_qwen2_tensors[] = {
    GLOBAL("token_embd.weight", "model.embed_tokens.weight", REQ, ROWS, EMBD, VOCAB, tok_embd),
    GLOBAL("output_norm.weight", "model.norm.weight", REQ, F32, EMBD, 1, out_norm),
    GLOBAL("output.weight", "lm_head.weight", OPT, MATMUL, EMBD, VOCAB, output), /* absent: tied */
    LAYER("attn_norm.weight", "input_layernorm.weight", REQ, F32, EMBD, 1, attn_norm),
    LAYER("attn_q.weight", "self_attn.q_proj.weight", REQ, MATMUL, EMBD, Q, wq),
    LAYER("attn_k.weight", "self_attn.k_proj.weight", REQ, MATMUL, EMBD, KV, wk),
    LAYER("attn_v.weight", "self_attn.v_proj.weight", REQ, MATMUL, EMBD, KV, wv),
    LAYER("attn_q.bias", "self_attn.q_proj.bias", REQ, F32, Q, 1, bq),
    LAYER("attn_k.bias", "self_attn.k_proj.bias", REQ, F32, KV, 1, bk),
    LAYER("attn_v.bias", "self_attn.v_proj.bias", REQ, F32, KV, 1, bv),
    LAYER("attn_output.weight", "self_attn.o_proj.weight", REQ, MATMUL, Q, EMBD, wo),
    LAYER("ffn_norm.weight", "post_attention_layernorm.weight", REQ, F32, EMBD, 1, ffn_norm),
    LAYER("ffn_gate.weight", "mlp.gate_proj.weight", REQ, MATMUL, EMBD, FF, wg),
    LAYER("ffn_up.weight", "mlp.up_proj.weight", REQ, MATMUL, EMBD, FF, wu),
    LAYER("ffn_down.weight", "mlp.down_proj.weight", REQ, MATMUL, FF, EMBD, wd),
};

static llm_status qwen2_hparams_gguf(llm_model_hparams *hp, const llm_model_desc *d, const llm_gguf *g) {
    llm_status st = llm__llama_hparams_gguf("qwen2", hp, d, g);
    hp->rope_type = LLM_ROPE_MODE_NEOX;
    return st;
}

static const char *const k_qwen2_hf_types[] = {"qwen2", NULL};
static const char *const k_qwen2_hf_ignore[] = {"rotary_emb.inv_freq", NULL};

const llm__arch llm__arch_qwen2 = {
    .tag = "qwen2",
    .hf_model_types = k_qwen2_hf_types,
    .hf_layer_prefix = "model.layers.",
    .hf_ignore = k_qwen2_hf_ignore,
    .tensors = k_qwen2_tensors,
    .n_tensors = sizeof k_qwen2_tensors / sizeof k_qwen2_tensors[0],
    .hparams_gguf = qwen2_hparams_gguf,
    .hparams_hf = llm__llama_hparams_hf, /* same config.json keys; NEOX rope */
    .load = llm__llama_load,
    .forward = llm__llama_forward,
    .ffn_chunked = 1,
};
