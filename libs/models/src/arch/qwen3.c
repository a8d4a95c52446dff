/*
 * arch/qwen3.c -- Qwen3 (dense): the llama forward (arch/llama.c) with a
 * per-head RMSNorm of q and k before RoPE (attn_q_norm / attn_k_norm,
 * [head_dim] each), no biases, NEOX RoPE, head_dim independent of n_embd
 * (GGUF key_length). GGUF keys "qwen3.*"; HF model_type "qwen3".
 */
#include <stddef.h>

#include "arch/decoder.h"

/* The shared decoder's tensors (decoder.h), then the per-head norms of q and k. */
static const llm__tensor_spec k_qwen3_tensors[] = {
    LAYER("attn_q_norm.weight", "self_attn.q_norm.weight", REQ, F32, HEAD, 1, q_norm),
    LAYER("attn_k_norm.weight", "self_attn.k_norm.weight", REQ, F32, HEAD, 1, k_norm),
};
static const llm__tensor_table k_qwen3_table = LLM__TABLE(k_qwen3_tensors, &llm__decoder_tensors);

static llm_status qwen3_hparams_gguf(llm_model_hparams *hp, const llm_model_desc *d, const llm_gguf *g) {
    llm_status st = llm__decoder_hparams_gguf("qwen3", hp, d, g);
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
    .tensors = &k_qwen3_table,
    .hparams_gguf = qwen3_hparams_gguf,
    .hparams_hf = llm__decoder_hparams_hf,
    .load = llm__decoder_load,
    .forward = llm__llama_forward,
    .ffn_chunked = 1,
};
