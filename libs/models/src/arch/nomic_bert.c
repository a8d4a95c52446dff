/*
 * arch/nomic_bert.c -- the nomic-bert architecture (nomic-embed-text v1 and
 * v1.5): a BERT-family encoder (bert.c's forward) with rotary positions
 * (NEOX RoPE on q and k, no position embeddings), a fused Q/K/V projection
 * without biases and a SwiGLU feed-forward (silu(x Wg^T) * x Wu^T, then
 * Wd), post-norm LayerNorms with biases, as llama.cpp's bert graph runs it.
 * GGUF only (llama.cpp's converter layout); a Hugging Face folder of it is
 * not read yet.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <string.h>

#include "arch/arch_internal.h"
#include "formats/formats_internal.h"

static llm_status nomic_hparams_gguf(llm_model_hparams *hp, const llm_model_desc *d, const llm_gguf *g) {
    const char *path = llm_model_desc_path(d);
    llm_status st = LLM_OK;
    if (!st) st = llm__gguf_req_u32(d, g, "nomic-bert.embedding_length", &hp->n_embd);
    if (!st) st = llm__gguf_req_u32(d, g, "nomic-bert.block_count", &hp->n_layer);
    if (!st) st = llm__gguf_req_u32(d, g, "nomic-bert.attention.head_count", &hp->n_head);
    if (!st) st = llm__gguf_req_u32(d, g, "nomic-bert.feed_forward_length", &hp->n_ff);
    if (!st) st = llm__gguf_req_u32(d, g, "nomic-bert.context_length", &hp->n_ctx_train);
    hp->norm_eps = 1e-12f;
    if (!st) st = llm__gguf_opt_f32(g, "nomic-bert.attention.layer_norm_epsilon", &hp->norm_eps);
    if (!st) st = llm__gguf_opt_f32(g, "nomic-bert.rope.freq_base", &hp->rope_freq_base);
    if (!st) st = llm__gguf_opt_u32(g, "tokenizer.ggml.token_type_count", &hp->n_token_types);
    if (!st) st = llm__gguf_opt_i32(g, "nomic-bert.pooling_type", &hp->pooling_type);
    if (!st) st = llm__gguf_opt_i32(g, "tokenizer.ggml.bos_token_id", &hp->bos_id);
    if (!st) st = llm__gguf_opt_i32(g, "tokenizer.ggml.eos_token_id", &hp->eos_id);
    if (!st) st = llm__gguf_opt_i32(g, "tokenizer.ggml.padding_token_id", &hp->pad_id);
    if (!st) st = llm__gguf_opt_i32(g, "tokenizer.ggml.unknown_token_id", &hp->unk_id);
    if (st) return st;
    int causal = 0;
    st = llm_gguf_get_bool(g, "nomic-bert.attention.causal", &causal);
    if (st == LLM_OK && causal)
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: nomic-bert: causal attention is not supported", path);
    if (st != LLM_OK && st != LLM_ERR_NOT_FOUND) return llm__models_gguf_error(st);
    hp->rope_type = LLM_ROPE_MODE_NEOX;
    st = llm__hparams_finish(hp, d);
    if (st) return st;
    if (hp->n_ctx_train == 0 || hp->n_ctx_train > (1u << 20) || hp->n_token_types > 1024 ||
        hp->n_head_kv != hp->n_head || hp->head_dim * hp->n_head != hp->n_embd || !(hp->norm_eps >= 0.0f) ||
        hp->pooling_type < -1 || hp->pooling_type > 4)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: nomic-bert: inconsistent hyper-parameters", path);
    return LLM_OK;
}

static const llm__tensor_spec k_nomic_tensors[] = {
    GLOBAL("token_embd.weight", NULL, REQ, ROWS, EMBD, VOCAB, tok_embd),
    GLOBAL("token_types.weight", NULL, OPT, F32, EMBD, TYPES, type_embd),
    GLOBAL("token_embd_norm.weight", NULL, REQ, F32, EMBD, 1, tok_norm),
    GLOBAL("token_embd_norm.bias", NULL, REQ, F32, EMBD, 1, tok_norm_b),
    LAYER("attn_qkv.weight", NULL, REQ, MATMUL, EMBD, QKV, wqkv),
    LAYER("attn_output.weight", NULL, REQ, MATMUL, Q, EMBD, wo),
    LAYER("attn_output.bias", NULL, OPT, F32, EMBD, 1, bo),
    LAYER("attn_output_norm.weight", NULL, REQ, F32, EMBD, 1, attn_out_norm),
    LAYER("attn_output_norm.bias", NULL, REQ, F32, EMBD, 1, attn_out_norm_b),
    LAYER("ffn_up.weight", NULL, REQ, MATMUL, EMBD, FF, wu),
    LAYER("ffn_up.bias", NULL, OPT, F32, FF, 1, bu),
    LAYER("ffn_gate.weight", NULL, REQ, MATMUL, EMBD, FF, wg),
    LAYER("ffn_down.weight", NULL, REQ, MATMUL, FF, EMBD, wd),
    LAYER("ffn_down.bias", NULL, OPT, F32, EMBD, 1, bd),
    LAYER("layer_output_norm.weight", NULL, REQ, F32, EMBD, 1, layer_out_norm),
    LAYER("layer_output_norm.bias", NULL, REQ, F32, EMBD, 1, layer_out_norm_b),
};
static const llm__tensor_table k_nomic_table = LLM__TABLE(k_nomic_tensors, NULL);

/* The encoder ops, then RoPE over whole heads (NEOX, no scaling). */
static llm_status nomic_load(llm_net *net) {
    TRY(llm__bert_load(net));
    llm_rope_params *r = &net->rope;
    memset(r, 0, sizeof *r);
    r->n_dims = (int32_t)net->hp.n_rot;
    r->mode = LLM_ROPE_MODE_NEOX;
    r->freq_base = net->hp.rope_freq_base > 0.0f ? net->hp.rope_freq_base : 10000.0f;
    r->scaling = LLM_ROPE_SCALE_NONE;
    r->freq_scale = 1.0f;
    return LLM_OK;
}

const llm__arch llm__arch_nomic_bert = {
    .tag = "nomic-bert",
    .hf_model_types = NULL,
    .hf_layer_prefix = NULL,
    .hf_ignore = NULL,
    .tensors = &k_nomic_table,
    .hparams_gguf = nomic_hparams_gguf,
    .hparams_hf = NULL,
    .load = nomic_load,
    .forward = llm__bert_forward,
    .encoder = 1,
};
