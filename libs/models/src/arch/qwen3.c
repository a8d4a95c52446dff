/*
 * arch/qwen3.c -- Qwen3 (dense): the llama decoder (arch/llama.c) with a
 * per-head RMSNorm of q and k before RoPE (attn_q_norm / attn_k_norm,
 * [head_dim] each), no biases, NEOX RoPE, head_dim independent of n_embd
 * (GGUF key_length). GGUF keys "qwen3.*"; HF model_type "qwen3".
 */
#include <stddef.h>

#include "arch/arch_internal.h"

static const llm__tensor_spec k_qwen3_tensors[] = {
    GLOBAL("token_embd.weight", "model.embed_tokens.weight", REQ, ROWS, EMBD, VOCAB, tok_embd),
    GLOBAL("output_norm.weight", "model.norm.weight", REQ, F32, EMBD, 1, out_norm),
    GLOBAL("output.weight", "lm_head.weight", OPT, MATMUL, EMBD, VOCAB, output), /* absent: tied */
    LAYER("attn_norm.weight", "input_layernorm.weight", REQ, F32, EMBD, 1, attn_norm),
    LAYER("attn_q.weight", "self_attn.q_proj.weight", REQ, MATMUL, EMBD, Q, wq),
    LAYER("attn_k.weight", "self_attn.k_proj.weight", REQ, MATMUL, EMBD, KV, wk),
    LAYER("attn_v.weight", "self_attn.v_proj.weight", REQ, MATMUL, EMBD, KV, wv),
    LAYER("attn_q_norm.weight", "self_attn.q_norm.weight", REQ, F32, HEAD, 1, q_norm),
    LAYER("attn_k_norm.weight", "self_attn.k_norm.weight", REQ, F32, HEAD, 1, k_norm),
    LAYER("attn_output.weight", "self_attn.o_proj.weight", REQ, MATMUL, Q, EMBD, wo),
    LAYER("ffn_norm.weight", "post_attention_layernorm.weight", REQ, F32, EMBD, 1, ffn_norm),
    LAYER("ffn_gate.weight", "mlp.gate_proj.weight", REQ, MATMUL, EMBD, FF, wg),
    LAYER("ffn_up.weight", "mlp.up_proj.weight", REQ, MATMUL, EMBD, FF, wu),
    LAYER("ffn_down.weight", "mlp.down_proj.weight", REQ, MATMUL, FF, EMBD, wd),
};

static llm_status qwen3_hparams_gguf(llm_model_hparams *hp, const llm_model_desc *d, const llm_gguf *g) {
    llm_status st = llm__llama_hparams_gguf("qwen3", hp, d, g);
    hp->rope_type = LLM_ROPE_MODE_NEOX;
    return st;
}

static const char *const k_qwen3_hf_types[] = {"qwen3", NULL};
static const char *const k_qwen3_hf_ignore[] = {"rotary_emb.inv_freq", NULL};

const llm__arch llm__arch_qwen3 = {
    .tag = "qwen3",
    .hf_model_types = k_qwen3_hf_types,
    .hf_layer_prefix = "model.layers.",
    .hf_ignore = k_qwen3_hf_ignore,
    .tensors = k_qwen3_tensors,
    .n_tensors = sizeof k_qwen3_tensors / sizeof k_qwen3_tensors[0],
    .hparams_gguf = qwen3_hparams_gguf,
    .hparams_hf = llm__llama_hparams_hf,
    .load = llm__llama_load,
    .forward = llm__llama_forward,
    .ffn_chunked = 1,
};
