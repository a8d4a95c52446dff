/*
 * arch/decoder.c -- the blocks every decoder family shares (decoder.h):
 * hyper-parameters of the common GGUF keys and config.json fields, the
 * tensor tables a family extends, the load-time checks, tied LM head and
 * RoPE, attention over the paged cache, the gated feed-forward, and the
 * final norm plus LM head. The families (llama.c, qwen2.c, gemma3.c, ...)
 * call these; nothing here knows a family.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "arch/decoder.h"
#include "formats/formats_internal.h"

/* ------------------------------------------------------------ hparams -- */

/* The GGUF key "<arch>.<name>" in a buffer of the caller. */
#define KEY(name) (snprintf(key, sizeof key, "%s." name, arch), key)

llm_status llm__decoder_hparams_gguf(const char *arch, llm_model_hparams *hp, const llm_model_desc *d,
                                     const llm_gguf *g) {
    const char *path = llm_model_desc_path(d);
    llm_status st = LLM_OK;
    uint32_t key_len = 0, val_len = 0;
    char key[96];
    if (!st) st = llm__gguf_req_u32(d, g, KEY("embedding_length"), &hp->n_embd);
    if (!st) st = llm__gguf_req_u32(d, g, KEY("block_count"), &hp->n_layer);
    if (!st) st = llm__gguf_req_u32(d, g, KEY("attention.head_count"), &hp->n_head);
    if (!st) st = llm__gguf_req_u32(d, g, KEY("feed_forward_length"), &hp->n_ff);
    if (!st) st = llm__gguf_opt_u32(g, KEY("attention.head_count_kv"), &hp->n_head_kv);
    if (!st) st = llm__gguf_opt_u32(g, KEY("attention.key_length"), &key_len);
    if (!st) st = llm__gguf_opt_u32(g, KEY("attention.value_length"), &val_len);
    if (!st) st = llm__gguf_opt_u32(g, KEY("context_length"), &hp->n_ctx_train);
    if (!st) st = llm__gguf_opt_u32(g, KEY("rope.dimension_count"), &hp->n_rot);
    if (!st) st = llm__gguf_opt_f32(g, KEY("rope.freq_base"), &hp->rope_freq_base);
    hp->norm_eps = 1e-5f;
    if (!st) st = llm__gguf_opt_f32(g, KEY("attention.layer_norm_rms_epsilon"), &hp->norm_eps);
    if (!st) st = llm__gguf_opt_i32(g, "tokenizer.ggml.bos_token_id", &hp->bos_id);
    if (!st) st = llm__gguf_opt_i32(g, "tokenizer.ggml.eos_token_id", &hp->eos_id);
    if (!st) st = llm__gguf_opt_i32(g, "tokenizer.ggml.padding_token_id", &hp->pad_id);
    if (!st) st = llm__gguf_opt_i32(g, "tokenizer.ggml.unknown_token_id", &hp->unk_id);
    if (st) return st;
    if (key_len && val_len && key_len != val_len)
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: key_length %u != value_length %u", path, key_len,
                                 val_len);
    hp->head_dim = key_len;
    hp->rope_type = LLM_ROPE_MODE_NORMAL; /* llama.cpp's converter permuted q/k for it */
    /* Rope scaling: "none", "linear", "yarn". Llama-3.1-style scaling is not a
     * key in GGUF: converters store per-dimension divisors in the tensor
     * rope_freqs.weight, which the forward applies; we flag it as LLAMA3. */
    const char *s;
    size_t len;
    st = llm_gguf_get_str(g, KEY("rope.scaling.type"), &s, &len);
    if (st == LLM_OK) {
        if (len == 6 && !memcmp(s, "linear", 6)) hp->rope_scaling = LLM_ROPE_SCALE_LINEAR;
        else if (len == 4 && !memcmp(s, "yarn", 4)) hp->rope_scaling = LLM_ROPE_SCALE_YARN;
        else if (len == 4 && !memcmp(s, "none", 4)) hp->rope_scaling = LLM_ROPE_SCALE_NONE;
        else
            return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: unsupported rope scaling type '%.*s'", path,
                                     (int)(len > 32 ? 32 : len), s);
    } else if (st != LLM_ERR_NOT_FOUND) {
        return st;
    }
    st = llm__gguf_opt_f32(g, KEY("rope.scaling.factor"), &hp->rope_scaling_factor);
    if (!st) st = llm__gguf_opt_u32(g, KEY("rope.scaling.original_context_length"), &hp->rope_orig_ctx);
    if (st) return st;
    if (hp->rope_scaling == LLM_ROPE_SCALE_NONE && llm_model_desc_find_tensor(d, "rope_freqs.weight"))
        hp->rope_scaling = LLM_ROPE_SCALE_LLAMA3;
    return llm__hparams_finish(hp, d);
}

llm_status llm__decoder_hparams_hf(llm_model_hparams *hp, const llm_model_desc *d, json_t *cfg) {
    llm_status st = LLM_OK;
    if (!st) st = llm__cfg_u32(d, cfg, "hidden_size", 1, &hp->n_embd);
    if (!st) st = llm__cfg_u32(d, cfg, "num_hidden_layers", 1, &hp->n_layer);
    if (!st) st = llm__cfg_u32(d, cfg, "num_attention_heads", 1, &hp->n_head);
    if (!st) st = llm__cfg_u32(d, cfg, "intermediate_size", 1, &hp->n_ff);
    if (!st) st = llm__cfg_u32(d, cfg, "num_key_value_heads", 0, &hp->n_head_kv);
    if (!st) st = llm__cfg_u32(d, cfg, "head_dim", 0, &hp->head_dim);
    if (!st) st = llm__cfg_u32(d, cfg, "max_position_embeddings", 0, &hp->n_ctx_train);
    if (!st) st = llm__cfg_f32(d, cfg, "rope_theta", &hp->rope_freq_base);
    hp->norm_eps = 1e-6f; /* transformers' LlamaConfig default */
    if (!st) st = llm__cfg_f32(d, cfg, "rms_norm_eps", &hp->norm_eps);
    if (st) return st;
    llm__cfg_id(cfg, "bos_token_id", &hp->bos_id);
    llm__cfg_id(cfg, "eos_token_id", &hp->eos_id);
    llm__cfg_id(cfg, "pad_token_id", &hp->pad_id);
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
            return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: unsupported rope_scaling type '%.32s'",
                                     llm_model_desc_path(d), t);
        if (!st) st = llm__cfg_f32(d, rs, "factor", &hp->rope_scaling_factor);
        if (!st) st = llm__cfg_f32(d, rs, "low_freq_factor", &hp->rope_low_freq_factor);
        if (!st) st = llm__cfg_f32(d, rs, "high_freq_factor", &hp->rope_high_freq_factor);
        if (!st) st = llm__cfg_u32(d, rs, "original_max_position_embeddings", 0, &hp->rope_orig_ctx);
        if (st) return st;
    }
    return llm__hparams_finish(hp, d);
}

/* -------------------------------------------------------- tensor table -- */

static const llm__tensor_spec k_attn_tensors[] = {
    GLOBAL("token_embd.weight", "model.embed_tokens.weight", REQ, ROWS, EMBD, VOCAB, tok_embd),
    GLOBAL("output_norm.weight", "model.norm.weight", REQ, F32, EMBD, 1, out_norm),
    GLOBAL("output.weight", "lm_head.weight", OPT, MATMUL, EMBD, VOCAB, output), /* absent: tied */
    LAYER("attn_norm.weight", "input_layernorm.weight", REQ, F32, EMBD, 1, attn_norm),
    LAYER("attn_q.weight", "self_attn.q_proj.weight", REQ, MATMUL, EMBD, Q, wq),
    LAYER("attn_k.weight", "self_attn.k_proj.weight", REQ, MATMUL, EMBD, KV, wk),
    LAYER("attn_v.weight", "self_attn.v_proj.weight", REQ, MATMUL, EMBD, KV, wv),
    LAYER("attn_output.weight", "self_attn.o_proj.weight", REQ, MATMUL, Q, EMBD, wo),
};
const llm__tensor_table llm__decoder_attn_tensors = LLM__TABLE(k_attn_tensors, NULL);

static const llm__tensor_spec k_ffn_tensors[] = {
    LAYER("ffn_norm.weight", "post_attention_layernorm.weight", REQ, F32, EMBD, 1, ffn_norm),
    LAYER("ffn_gate.weight", "mlp.gate_proj.weight", REQ, MATMUL, EMBD, FF, wg),
    LAYER("ffn_up.weight", "mlp.up_proj.weight", REQ, MATMUL, EMBD, FF, wu),
    LAYER("ffn_down.weight", "mlp.down_proj.weight", REQ, MATMUL, FF, EMBD, wd),
};
const llm__tensor_table llm__decoder_tensors = LLM__TABLE(k_ffn_tensors, &llm__decoder_attn_tensors);

/* ------------------------------------------------------------- loading -- */

/* After the table (decoder.h): checks, tied output and RoPE. */
llm_status llm__decoder_load(llm_net *net) {
    const llm_model_hparams *hp = &net->hp;
    if (hp->n_embd == 0 || hp->n_ff == 0 || hp->n_vocab == 0 || hp->n_layer == 0 || hp->n_head == 0 ||
        hp->n_head_kv == 0 || hp->head_dim == 0 || hp->n_head % hp->n_head_kv != 0 || hp->n_rot == 0 ||
        hp->n_rot > hp->head_dim || hp->n_rot % 2 != 0) {
        return llm__net_err(LLM_ERR_BAD_FORMAT, "llama: inconsistent hyper-parameters");
    }
    if (!llm__has(&net->output)) {
        net->output = net->tok_embd; /* tied embeddings */
        if (!llm_backend_supports(net->be, LLM_OP_MATMUL, net->output.dtype)) {
            return llm__net_err(LLM_ERR_UNSUPPORTED, "llama: backend %s cannot multiply %s weights (output)",
                                llm_backend_name(net->be), llm_dtype_name(net->output.dtype));
        }
    }
    /* RoPE: GGUF llama weights are permuted for adjacent-pair rotation. */
    llm_rope_params *r = &net->rope;
    memset(r, 0, sizeof(*r));
    r->n_dims = (int32_t)hp->n_rot;
    r->mode = hp->rope_type == LLM_ROPE_MODE_NEOX ? LLM_ROPE_MODE_NEOX : LLM_ROPE_MODE_NORMAL;
    r->freq_base = hp->rope_freq_base > 0.0f ? hp->rope_freq_base : 10000.0f;
    r->scaling = LLM_ROPE_SCALE_NONE;
    r->freq_scale = 1.0f;
    const llm_model_tensor *ff = llm_model_desc_find_tensor(net->desc, "rope_freqs.weight");
    if (ff) {
        r->freq_factors = ff->data; /* f32 [n_rot/2] (table-checked), host memory in the mapping */
    } else if (hp->rope_scaling == LLM_ROPE_SCALE_LLAMA3) {
        r->scaling = LLM_ROPE_SCALE_LLAMA3;
        r->llama3_factor = hp->rope_scaling_factor;
        r->llama3_low_freq_factor = hp->rope_low_freq_factor;
        r->llama3_high_freq_factor = hp->rope_high_freq_factor;
        r->llama3_orig_ctx = (int32_t)hp->rope_orig_ctx;
        if (!(r->llama3_factor > 0) || !(r->llama3_high_freq_factor > r->llama3_low_freq_factor) ||
            r->llama3_orig_ctx <= 0) {
            return llm__net_err(LLM_ERR_BAD_FORMAT, "llama: incomplete llama3 rope scaling");
        }
    }
    if (hp->rope_scaling == LLM_ROPE_SCALE_LINEAR && hp->rope_scaling_factor > 0.0f) {
        r->scaling = LLM_ROPE_SCALE_LINEAR;
        r->freq_scale = 1.0f / hp->rope_scaling_factor;
    } else if (hp->rope_scaling == LLM_ROPE_SCALE_YARN) {
        return llm__net_err(LLM_ERR_UNSUPPORTED, "llama: YaRN rope scaling is not implemented");
    }
    return LLM_OK;
}

/* ------------------------------------------------------------- forward -- */

/* The gated feed-forward of layer l (see decoder.h), in runs of rows
 * (llm__ffn_run): the n_ff-wide intermediates of a 512-token pass would take
 * 32 MiB for a 1B model's 8192. */
llm_status llm__ffn_glu(llm_net *net, const llm_net_batch *b, uint32_t l, int gelu) {
    const llm__layer_w *w = &net->layers[l];
    llm_backend *be = net->be;
    const int64_t n = b->n_tokens, E = net->hp.n_embd, F = net->hp.n_ff;
    for (int64_t r0 = 0, c; r0 < n; r0 += c) {
        c = llm__ffn_run(&net->p, n, r0);
        llm_tensor xr = act_rows(net, net->a.off_xn, E, r0, c), tr = act_rows(net, net->a.off_tmp, E, r0, c);
        llm_tensor gate = act(net, net->a.off_gate, F, c, 1), up = act(net, net->a.off_up, F, c, 1);
        OP(llm_op_matmul(be, &gate, &xr, &w->wg));
        BIAS(gate, w->bg);
        OP(llm_op_matmul(be, &up, &xr, &w->wu));
        BIAS(up, w->bu);
        if (llm__has(&w->bg)) TAP("ffn_gate_b", l, gate);
        if (llm__has(&w->bu)) TAP("ffn_up_b", l, up);
        if (gelu) {
            OP(llm_op_geglu(be, &gate, &gate, &up));
            TAP("ffn_geglu", l, gate);
        } else {
            OP(llm_op_swiglu(be, &gate, &gate, &up));
            TAP("ffn_swiglu", l, gate);
        }
        OP(llm_op_matmul(be, &tr, &gate, &w->wd));
        BIAS(tr, w->bd);
    }
    return LLM_OK;
}

/* Attention of layer l over the paged cache (see decoder.h). */
llm_status llm__attend(llm_net *net, llm_net_kv *kv, const llm_net_batch *b, uint32_t l, const llm_attn_params *ap) {
    const llm_model_hparams *hp = &net->hp;
    llm_backend *be = net->be;
    const int64_t hd = hp->head_dim, nh = hp->n_head, nkv = hp->n_head_kv;
    llm_tensor kc, vc;
    TRY(llm_net_kv_layer(kv, (int32_t)l, &kc, &vc));
    int64_t t0 = 0;
    for (int32_t s = 0; s < b->n_seqs; s++) {
        const llm_net_seq *sq = &b->seqs[s];
        const int64_t ns = sq->n_tokens;
        llm_tensor ks = act(net, net->a.off_k + (size_t)(t0 * nkv * hd) * 4, hd, nkv, ns);
        llm_tensor vs = act(net, net->a.off_v + (size_t)(t0 * nkv * hd) * 4, hd, nkv, ns);
        llm_tensor qs = act(net, net->a.off_q + (size_t)(t0 * nh * hd) * 4, hd, nh, ns);
        llm_tensor os = act(net, net->a.off_att + (size_t)(t0 * nh * hd) * 4, hd, nh, ns);
        /* A window layer of a split storage goes through the window group's table. */
        const int swa = llm__kv_in_swa_group(kv, l);
        const int32_t *tbl = swa ? sq->block_table_swa : sq->block_table;
        const int32_t n_tbl = swa ? sq->n_table_swa : sq->n_table;
        OP(llm_op_kv_write(be, &kc, &vc, &ks, &vs, b->positions + t0, tbl, n_tbl));
        OP(llm_op_attention_ex(be, &os, &qs, &kc, &vc, b->positions + t0, tbl, n_tbl, ap));
        t0 += ns;
    }
    return LLM_OK;
}

/* The end of a decoder's forward (see decoder.h). */
llm_status llm__decoder_output(llm_net *net, const llm_net_batch *b, const llm_tensor *xp, const llm_tensor *xnp,
                               float eps) {
    const llm_model_hparams *hp = &net->hp;
    llm_backend *be = net->be;
    const int64_t n = b->n_tokens, E = hp->n_embd, V = hp->n_vocab;
    llm_tensor x = *xp, xn = *xnp;
    /* Final norm: over every row when all rows are wanted, else only over the
     * last row of each sequence, gathered first into xn. */
    int64_t rows = n;
    if (b->hidden || b->logits_mode == LLM_LOGITS_ALL) {
        OP(llm_op_rms_norm(be, &xn, &x, &net->out_norm, eps));
        TAP("result_norm", -1, xn);
        if (b->hidden) {
            OP(llm_buffer_read(net->arena, net->a.off_xn, b->hidden,
                                            (size_t)(n * E) * sizeof(float)));
        }
    }
    if (b->logits_mode == LLM_LOGITS_NONE) {
        return LLM_OK;
    }
    size_t src_off = net->a.off_xn;
    if (b->logits_mode == LLM_LOGITS_LAST) {
        int64_t t0 = 0;
        for (int32_t s = 0; s < b->n_seqs; s++) {
            t0 += b->seqs[s].n_tokens;
            net->gather_ids[s] = (int32_t)(t0 - 1);
        }
        rows = b->n_seqs;
        /* The gathered rows go to tmp, since xn may hold the hidden states. */
        const llm_tensor *src = b->hidden ? &xn : &x;
        llm_tensor g = act(net, net->a.off_tmp, E, rows, 1);
        OP(llm_op_get_rows(be, &g, src, net->gather_ids, rows));
        if (!b->hidden) {
            OP(llm_op_rms_norm(be, &g, &g, &net->out_norm, eps));
            TAP("result_norm", -1, g);
        }
        src_off = net->a.off_tmp;
    }
    for (int64_t r0 = 0, c; r0 < rows; r0 += c) {
        c = rows - r0 < LLM__LOGITS_CHUNK ? rows - r0 : LLM__LOGITS_CHUNK;
        /* No last chunk of 1..7 rows: the CPU matmul, like llama.cpp, picks
         * some K-quant kernels by row count (8 and up: its tiled order), and
         * llama.cpp multiplies all rows at once. */
        if (rows - r0 - c > 0 && rows - r0 - c < LLM__LOGITS_TAIL) {
            c = rows - r0;
        }
        llm_tensor in = act(net, src_off + (size_t)(r0 * E) * sizeof(float), E, c, 1);
        llm_tensor lg = act(net, net->a.off_logits, V, c, 1);
        OP(llm_op_matmul(be, &lg, &in, &net->output));
        OP(llm_buffer_read(net->arena, net->a.off_logits, b->logits + r0 * V,
                                        (size_t)(c * V) * sizeof(float)));
    }
    return LLM_OK;
}
