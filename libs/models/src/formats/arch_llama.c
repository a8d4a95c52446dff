/*
 * arch_llama.c -- the llama architecture (Llama 1/2/3, SmolLM, TinyLlama, ...):
 * hyper-parameters from GGUF `llama.*` keys or a Hugging Face config.json,
 * HF -> GGUF tensor names, and the tensor set with shapes.
 *
 * Shapes are GGUF order (ne[0] innermost): a [out, in] HF Linear weight is
 * ne = {in, out}.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/desc_internal.h"

/* Reads an optional uint32 key; missing keeps *v; wrong type is an error. */
static llm_status opt_u32(const llm_gguf *g, const char *key, uint32_t *v) {
    llm_status st = llm_gguf_get_u32(g, key, v);
    return st == LLM_ERR_NOT_FOUND ? LLM_OK : st;
}

static llm_status req_u32(const llm_model_desc *d, const llm_gguf *g, const char *key, uint32_t *v) {
    llm_status st = llm_gguf_get_u32(g, key, v);
    if (st == LLM_ERR_NOT_FOUND)
        return llm__models_error(st, "model: %s: required metadata '%s' is missing", d->path, key);
    return st;
}

static llm_status opt_f32(const llm_gguf *g, const char *key, float *v) {
    llm_status st = llm_gguf_get_f32(g, key, v);
    return st == LLM_ERR_NOT_FOUND ? LLM_OK : st;
}

static llm_status opt_id(const llm_gguf *g, const char *key, int32_t *v) {
    llm_status st = llm_gguf_get_i32(g, key, v);
    return st == LLM_ERR_NOT_FOUND ? LLM_OK : st;
}

/* Derived fields and sanity limits shared by both sources. */
static llm_status finish_hparams(llm_model_desc *d) {
    llm_model_hparams *hp = &d->hp;
    const llm_model_tensor *emb = llm_model_desc_find_tensor(d, "token_embd.weight");
    if (!emb) return llm__models_error(LLM_ERR_NOT_FOUND, "model: %s: llama: required tensor 'token_embd.weight' is missing", d->path);
    if (emb->ne[1] <= 0 || emb->ne[1] > INT32_MAX)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: token_embd.weight has %" PRId64 " rows", d->path, emb->ne[1]);
    hp->n_vocab = (uint32_t)emb->ne[1];
    if (!hp->n_head_kv) hp->n_head_kv = hp->n_head;
    if (hp->n_embd == 0 || hp->n_layer == 0 || hp->n_head == 0 || hp->n_ff == 0 || hp->n_layer > 100000 ||
        hp->n_head_kv == 0 || hp->n_head % hp->n_head_kv != 0)
        return llm__models_error(LLM_ERR_BAD_FORMAT,
                                 "model: %s: llama: implausible hyper-parameters (n_embd %u, n_layer %u, n_head %u, "
                                 "n_head_kv %u, n_ff %u)",
                                 d->path, hp->n_embd, hp->n_layer, hp->n_head, hp->n_head_kv, hp->n_ff);
    if (!hp->head_dim) {
        if (hp->n_embd % hp->n_head)
            return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: n_embd %u is not a multiple of n_head %u", d->path,
                                     hp->n_embd, hp->n_head);
        hp->head_dim = hp->n_embd / hp->n_head;
    }
    if (!hp->n_rot) hp->n_rot = hp->head_dim;
    if (hp->n_rot > hp->head_dim || hp->n_rot % 2)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: rope dimension %u invalid for head_dim %u", d->path,
                                 hp->n_rot, hp->head_dim);
    if ((uint64_t)hp->n_head * hp->head_dim > INT32_MAX)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: n_head x head_dim too large", d->path);
    hp->tied_embeddings = llm_model_desc_find_tensor(d, "output.weight") == NULL;
    int32_t *ids[4] = {&hp->bos_id, &hp->eos_id, &hp->pad_id, &hp->unk_id};
    for (int i = 0; i < 4; i++)
        if (*ids[i] < -1 || *ids[i] >= (int32_t)hp->n_vocab) *ids[i] = -1; /* out of vocab: absent */
    return LLM_OK;
}

static llm_status llama_from_gguf(llm_model_desc *d, const llm_gguf *g) {
    llm_model_hparams *hp = &d->hp;
    llm_status st = LLM_OK;
    uint32_t key_len = 0, val_len = 0;
    if (!st) st = req_u32(d, g, "llama.embedding_length", &hp->n_embd);
    if (!st) st = req_u32(d, g, "llama.block_count", &hp->n_layer);
    if (!st) st = req_u32(d, g, "llama.attention.head_count", &hp->n_head);
    if (!st) st = req_u32(d, g, "llama.feed_forward_length", &hp->n_ff);
    if (!st) st = opt_u32(g, "llama.attention.head_count_kv", &hp->n_head_kv);
    if (!st) st = opt_u32(g, "llama.attention.key_length", &key_len);
    if (!st) st = opt_u32(g, "llama.attention.value_length", &val_len);
    if (!st) st = opt_u32(g, "llama.context_length", &hp->n_ctx_train);
    if (!st) st = opt_u32(g, "llama.rope.dimension_count", &hp->n_rot);
    if (!st) st = opt_f32(g, "llama.rope.freq_base", &hp->rope_freq_base);
    hp->norm_eps = 1e-5f;
    if (!st) st = opt_f32(g, "llama.attention.layer_norm_rms_epsilon", &hp->norm_eps);
    if (!st) st = opt_id(g, "tokenizer.ggml.bos_token_id", &hp->bos_id);
    if (!st) st = opt_id(g, "tokenizer.ggml.eos_token_id", &hp->eos_id);
    if (!st) st = opt_id(g, "tokenizer.ggml.padding_token_id", &hp->pad_id);
    if (!st) st = opt_id(g, "tokenizer.ggml.unknown_token_id", &hp->unk_id);
    if (st) return st;
    if (key_len && val_len && key_len != val_len)
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: key_length %u != value_length %u", d->path, key_len, val_len);
    hp->head_dim = key_len;
    hp->rope_type = LLM_ROPE_MODE_NORMAL; /* llama.cpp's converter permuted q/k for it */
    /* Rope scaling: "none", "linear", "yarn". Llama-3.1-style scaling is not a
     * key in GGUF: converters store per-dimension divisors in the tensor
     * rope_freqs.weight, which the forward applies; we flag it as LLAMA3. */
    const char *s;
    size_t len;
    st = llm_gguf_get_str(g, "llama.rope.scaling.type", &s, &len);
    if (st == LLM_OK) {
        if (len == 6 && !memcmp(s, "linear", 6)) hp->rope_scaling = LLM_ROPE_SCALE_LINEAR;
        else if (len == 4 && !memcmp(s, "yarn", 4)) hp->rope_scaling = LLM_ROPE_SCALE_YARN;
        else if (len == 4 && !memcmp(s, "none", 4)) hp->rope_scaling = LLM_ROPE_SCALE_NONE;
        else
            return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: unsupported rope scaling type '%.*s'", d->path,
                                     (int)(len > 32 ? 32 : len), s);
    } else if (st != LLM_ERR_NOT_FOUND) {
        return st;
    }
    st = opt_f32(g, "llama.rope.scaling.factor", &hp->rope_scaling_factor);
    if (!st) st = opt_u32(g, "llama.rope.scaling.original_context_length", &hp->rope_orig_ctx);
    if (st) return st;
    if (hp->rope_scaling == LLM_ROPE_SCALE_NONE && llm_model_desc_find_tensor(d, "rope_freqs.weight"))
        hp->rope_scaling = LLM_ROPE_SCALE_LLAMA3;
    return finish_hparams(d);
}

/* config.json helpers: missing -> keep default; wrong JSON type -> error. */
static llm_status cfg_u32(const llm_model_desc *d, json_t *cfg, const char *key, int required, uint32_t *v) {
    json_t *x = json_object_get(cfg, key);
    if (!x || json_is_null(x)) {
        if (!required) return LLM_OK;
        return llm__models_error(LLM_ERR_NOT_FOUND, "model: %s: config.json lacks '%s'", d->path, key);
    }
    if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > UINT32_MAX)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: config.json '%s' is not a non-negative integer", d->path, key);
    *v = (uint32_t)json_integer_value(x);
    return LLM_OK;
}

static llm_status cfg_f32(const llm_model_desc *d, json_t *cfg, const char *key, float *v) {
    json_t *x = json_object_get(cfg, key);
    if (!x || json_is_null(x)) return LLM_OK;
    if (!json_is_number(x))
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: config.json '%s' is not a number", d->path, key);
    *v = (float)json_number_value(x);
    return LLM_OK;
}

/* Token ids may be an integer, null, or a list (first element is used). */
static void cfg_id(json_t *cfg, const char *key, int32_t *v) {
    json_t *x = json_object_get(cfg, key);
    if (json_is_array(x)) x = json_array_get(x, 0);
    if (json_is_integer(x) && json_integer_value(x) >= 0 && json_integer_value(x) <= INT32_MAX)
        *v = (int32_t)json_integer_value(x);
}

static llm_status llama_from_hf(llm_model_desc *d, json_t *cfg) {
    llm_model_hparams *hp = &d->hp;
    llm_status st = LLM_OK;
    if (!st) st = cfg_u32(d, cfg, "hidden_size", 1, &hp->n_embd);
    if (!st) st = cfg_u32(d, cfg, "num_hidden_layers", 1, &hp->n_layer);
    if (!st) st = cfg_u32(d, cfg, "num_attention_heads", 1, &hp->n_head);
    if (!st) st = cfg_u32(d, cfg, "intermediate_size", 1, &hp->n_ff);
    if (!st) st = cfg_u32(d, cfg, "num_key_value_heads", 0, &hp->n_head_kv);
    if (!st) st = cfg_u32(d, cfg, "head_dim", 0, &hp->head_dim);
    if (!st) st = cfg_u32(d, cfg, "max_position_embeddings", 0, &hp->n_ctx_train);
    if (!st) st = cfg_f32(d, cfg, "rope_theta", &hp->rope_freq_base);
    hp->norm_eps = 1e-6f; /* transformers' LlamaConfig default */
    if (!st) st = cfg_f32(d, cfg, "rms_norm_eps", &hp->norm_eps);
    if (st) return st;
    cfg_id(cfg, "bos_token_id", &hp->bos_id);
    cfg_id(cfg, "eos_token_id", &hp->eos_id);
    cfg_id(cfg, "pad_token_id", &hp->pad_id);
    /* Unpermuted HF q/k weights pair with rotate_half, i.e. NEOX rope (see
     * llm_model_desc_from_dir in models.h). */
    hp->rope_type = LLM_ROPE_MODE_NEOX;
    json_t *rs = json_object_get(cfg, "rope_scaling");
    if (json_is_object(rs)) {
        json_t *ty = json_object_get(rs, "rope_type");
        if (!json_is_string(ty)) ty = json_object_get(rs, "type");
        const char *t = json_is_string(ty) ? json_string_value(ty) : "";
        if (!strcmp(t, "linear")) hp->rope_scaling = LLM_ROPE_SCALE_LINEAR;
        else if (!strcmp(t, "yarn")) hp->rope_scaling = LLM_ROPE_SCALE_YARN;
        else if (!strcmp(t, "llama3")) hp->rope_scaling = LLM_ROPE_SCALE_LLAMA3;
        else if (!strcmp(t, "default")) hp->rope_scaling = LLM_ROPE_SCALE_NONE;
        else
            return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: unsupported rope_scaling type '%.32s'", d->path, t);
        if (!st) st = cfg_f32(d, rs, "factor", &hp->rope_scaling_factor);
        if (!st) st = cfg_f32(d, rs, "low_freq_factor", &hp->rope_low_freq_factor);
        if (!st) st = cfg_f32(d, rs, "high_freq_factor", &hp->rope_high_freq_factor);
        if (!st) st = cfg_u32(d, rs, "original_max_position_embeddings", 0, &hp->rope_orig_ctx);
        if (st) return st;
    }
    return finish_hparams(d);
}

static int llama_map_hf(const char *hf, char *out, size_t cap) {
    static const char *const top[][2] = {{"model.embed_tokens.weight", "token_embd.weight"},
                                         {"model.norm.weight", "output_norm.weight"},
                                         {"lm_head.weight", "output.weight"}};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
        if (!strcmp(hf, top[i][0])) return snprintf(out, cap, "%s", top[i][1]) < (int)cap;
    static const char *const layer[][2] = {
        {"input_layernorm.weight", "attn_norm.weight"},
        {"self_attn.q_proj.weight", "attn_q.weight"},   {"self_attn.q_proj.bias", "attn_q.bias"},
        {"self_attn.k_proj.weight", "attn_k.weight"},   {"self_attn.k_proj.bias", "attn_k.bias"},
        {"self_attn.v_proj.weight", "attn_v.weight"},   {"self_attn.v_proj.bias", "attn_v.bias"},
        {"self_attn.o_proj.weight", "attn_output.weight"}, {"self_attn.o_proj.bias", "attn_output.bias"},
        {"post_attention_layernorm.weight", "ffn_norm.weight"},
        {"mlp.gate_proj.weight", "ffn_gate.weight"},    {"mlp.up_proj.weight", "ffn_up.weight"},
        {"mlp.down_proj.weight", "ffn_down.weight"}};
    unsigned il;
    int pos = 0;
    if (sscanf(hf, "model.layers.%u.%n", &il, &pos) != 1 || pos == 0) return 0;
    const char *rest = hf + pos;
    for (size_t i = 0; i < sizeof layer / sizeof layer[0]; i++)
        if (!strcmp(rest, layer[i][0])) return snprintf(out, cap, "blk.%u.%s", il, layer[i][1]) < (int)cap;
    return 0; /* e.g. self_attn.rotary_emb.inv_freq: recomputed, not needed */
}

static llm_status llama_validate(const llm_model_desc *d) {
    const llm_model_hparams *hp = &d->hp;
    const int64_t E = hp->n_embd, V = hp->n_vocab, F = hp->n_ff;
    const int64_t Q = (int64_t)hp->n_head * hp->head_dim, KV = (int64_t)hp->n_head_kv * hp->head_dim;
    llm_status st = LLM_OK;
    if (!st) st = llm__desc_expect(d, "token_embd.weight", 0, 2, E, V);
    if (!st) st = llm__desc_expect(d, "output_norm.weight", 0, 1, E, 1);
    if (!st) st = llm__desc_expect(d, "output.weight", 1, 2, E, V);
    if (!st) st = llm__desc_expect(d, "rope_freqs.weight", 1, 1, hp->n_rot / 2, 1);
    for (uint32_t il = 0; il < hp->n_layer && !st; il++) {
        char n[96];
#define EXPECT(suffix, opt, nd, a, b) \
        if (!st) { snprintf(n, sizeof n, "blk.%u." suffix, il); st = llm__desc_expect(d, n, opt, nd, a, b); }
        EXPECT("attn_norm.weight", 0, 1, E, 1)
        EXPECT("attn_q.weight", 0, 2, E, Q)
        EXPECT("attn_k.weight", 0, 2, E, KV)
        EXPECT("attn_v.weight", 0, 2, E, KV)
        EXPECT("attn_output.weight", 0, 2, Q, E)
        EXPECT("attn_q.bias", 1, 1, Q, 1)
        EXPECT("attn_k.bias", 1, 1, KV, 1)
        EXPECT("attn_v.bias", 1, 1, KV, 1)
        EXPECT("attn_output.bias", 1, 1, E, 1)
        EXPECT("ffn_norm.weight", 0, 1, E, 1)
        EXPECT("ffn_gate.weight", 0, 2, E, F)
        EXPECT("ffn_up.weight", 0, 2, E, F)
        EXPECT("ffn_down.weight", 0, 2, F, E)
#undef EXPECT
    }
    return st;
}

static const char *const k_llama_hf_types[] = {"llama", NULL};

const llm__arch llm__arch_llama = {
    .tag = "llama",
    .hf_model_types = k_llama_hf_types,
    .hparams_from_gguf = llama_from_gguf,
    .hparams_from_hf = llama_from_hf,
    .map_hf_name = llama_map_hf,
    .validate = llama_validate,
};
