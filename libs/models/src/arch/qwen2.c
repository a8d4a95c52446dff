/*
 * arch/qwen2.c -- Qwen2 / Qwen2.5: the llama forward (arch/llama.c) with
 * biases on the Q, K and V projections (required, as in llama.cpp's qwen2)
 * and NEOX RoPE (rotate_half: Qwen's converters do not permute q/k).
 * Output tied or untied. GGUF keys "qwen2.*"; HF model_type "qwen2".
 */
#include <stddef.h>

#include "arch/decoder.h"

/* The shared decoder's tensors (decoder.h), then the biases of Q, K and V. */
static const llm__tensor_spec k_qwen2_tensors[] = {
    LAYER("attn_q.bias", "self_attn.q_proj.bias", REQ, F32, Q, 1, bq),
    LAYER("attn_k.bias", "self_attn.k_proj.bias", REQ, F32, KV, 1, bk),
    LAYER("attn_v.bias", "self_attn.v_proj.bias", REQ, F32, KV, 1, bv),
};
static const llm__tensor_table k_qwen2_table = LLM__TABLE(k_qwen2_tensors, &llm__decoder_tensors);

static llm_status qwen2_hparams_gguf(llm_model_hparams *hp, const llm_model_desc *d, const llm_gguf *g) {
    llm_status st = llm__decoder_hparams_gguf("qwen2", hp, d, g);
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
    .tensors = &k_qwen2_table,
    .hparams_gguf = qwen2_hparams_gguf,
    .hparams_hf = llm__decoder_hparams_hf, /* same config.json keys; NEOX rope */
    .load = llm__decoder_load,
    .forward = llm__llama_forward,
    .ffn_chunked = 1,
};
