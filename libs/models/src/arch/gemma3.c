/*
 * arch/gemma3.c -- Gemma 3 (text): hyper-parameters, tensor table and
 * forward, written only against runtime ops, in llama.cpp's order.
 *
 * For the batch's tokens, x = token_embd[tokens] * sqrt(n_embd), then per
 * layer l (a window layer when l % swa_pattern < swa_pattern - 1: five local
 * layers, then a global one):
 *     xn   = rms_norm(x) * attn_norm
 *     q,k,v = xn . Wq^T, xn . Wk^T, xn . Wv^T
 *     q    = rope(rms_norm(q) * q_norm) * attn_scale    per head; window layers
 *     k    = rope(rms_norm(k) * k_norm)                 use theta rope_freq_base_swa
 *     att  = attention(q, cache), scale 1; window layers see the last n_swa keys
 *     x   += rms_norm(att . Wo^T) * attn_post_norm
 *     x   += rms_norm(geglu(xn' . Wg^T, xn' . Wu^T) . Wd^T) * ffn_post_norm,
 *            xn' = rms_norm(x) * ffn_norm
 * then logits = rms_norm(x) * output_norm . token_embd^T (tied unless
 * output.weight). GGUF norm weights already hold Gemma's (1 + w): llama.cpp's
 * converter adds the 1, so the norms are plain RMSNorm * w here. attn_scale
 * is 1/sqrt(head_dim) (llama.cpp: 1/sqrt(n_embd / n_head) for the 62-layer
 * 27B model); q is scaled before attention, as llama.cpp does, so that its
 * F16 rounding in the attention sees the same values.
 *
 * Hugging Face folders (model_type "gemma3_text", Gemma3ForCausalLM) load
 * too: their norm weights hold w where the GGUF holds 1 + w, so the loader
 * adds the 1 (hf_norm_shift) in the checkpoint's own type, as llama.cpp's
 * converter does; the window pattern comes from sliding_window_pattern or
 * layer_types.
 *
 * Not here yet: the final logit soft-capping of Gemma 2-style files (refused
 * by name), the multimodal Gemma3ForConditionalGeneration folders (model_type
 * "gemma3"). The window layers' K/V can live in a group of their own
 * (llm_net_kv_create_swa), whose blocks the engine releases once they left
 * every window.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "arch/decoder.h"
#include "formats/formats_internal.h"

static llm_status gemma3_hparams_gguf(llm_model_hparams *hp, const llm_model_desc *d, const llm_gguf *g) {
    llm_status st = llm__decoder_hparams_gguf("gemma3", hp, d, g);
    if (st) return st;
    hp->rope_type = LLM_ROPE_MODE_NEOX;
    hp->norm_eps = 1e-6f;
    st = llm__gguf_opt_f32(g, "gemma3.attention.layer_norm_rms_epsilon", &hp->norm_eps);
    if (!st) st = llm__gguf_opt_u32(g, "gemma3.attention.sliding_window", &hp->n_swa);
    hp->swa_pattern = 6;
    if (!st) st = llm__gguf_opt_u32(g, "gemma3.attention.sliding_window_pattern", &hp->swa_pattern);
    hp->rope_freq_base_swa = 10000.0f; /* llama.cpp's default for the local layers */
    if (!st) st = llm__gguf_opt_f32(g, "gemma3.rope.freq_base_swa", &hp->rope_freq_base_swa);
    if (st) return st;
    float softcap = 0.0f;
    st = llm__gguf_opt_f32(g, "gemma3.final_logit_softcapping", &softcap);
    if (st) return st;
    if (softcap != 0.0f)
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: gemma3: final logit soft-capping is not implemented",
                                 llm_model_desc_path(d));
    if (hp->n_swa && hp->swa_pattern == 0)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: gemma3: sliding_window_pattern 0",
                                 llm_model_desc_path(d));
    return LLM_OK;
}

/* Hugging Face config.json of Gemma3ForCausalLM: the decoder's keys, then the
 * window (sliding_window; the pattern from sliding_window_pattern or from
 * layer_types, whose every sliding_window_pattern-th entry is
 * "full_attention"), the window layers' theta (rope_local_base_freq) and the
 * soft-capping check. */
static llm_status gemma3_hparams_hf(llm_model_hparams *hp, const llm_model_desc *d, json_t *cfg) {
    const char *path = llm_model_desc_path(d);
    llm_status st = llm__decoder_hparams_hf(hp, d, cfg); /* NEOX rope: Gemma's q/k are never permuted */
    if (st) return st;
    hp->rope_freq_base_swa = 10000.0f;
    hp->swa_pattern = 6;
    st = llm__cfg_u32(d, cfg, "sliding_window", 0, &hp->n_swa);
    if (!st) st = llm__cfg_f32(d, cfg, "rope_local_base_freq", &hp->rope_freq_base_swa);
    if (!st && json_is_integer(json_object_get(cfg, "sliding_window_pattern")))
        st = llm__cfg_u32(d, cfg, "sliding_window_pattern", 0, &hp->swa_pattern);
    if (st) return st;
    json_t *lt = json_object_get(cfg, "layer_types");
    if (json_is_array(lt)) {
        const size_t n = json_array_size(lt);
        uint32_t pat = 0;
        for (size_t i = 0; i < n && !pat; i++)
            if (json_is_string(json_array_get(lt, i)) &&
                !strcmp(json_string_value(json_array_get(lt, i)), "full_attention"))
                pat = (uint32_t)i + 1;
        for (size_t i = 0; i < n; i++) {
            const char *t = json_string_value(json_array_get(lt, i));
            const int full = t && !strcmp(t, "full_attention"), win = t && !strcmp(t, "sliding_attention");
            if (n != hp->n_layer || !pat || (!full && !win) || full != ((i + 1) % pat == 0))
                return llm__models_error(LLM_ERR_UNSUPPORTED,
                                         "model: %s: gemma3: layer_types is not a repeating window pattern", path);
        }
        hp->swa_pattern = pat;
    }
    const char *caps[] = {"final_logit_softcapping", "attn_logit_softcapping"};
    for (int i = 0; i < 2; i++) {
        json_t *c = json_object_get(cfg, caps[i]);
        if (c && !json_is_null(c) && !(json_is_number(c) && json_number_value(c) == 0.0))
            return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: gemma3: %s is not implemented", path, caps[i]);
    }
    if (hp->n_swa && hp->swa_pattern == 0)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: gemma3: sliding_window_pattern 0", path);
    return LLM_OK;
}

/* The shared decoder's attention tensors (decoder.h), then Gemma's norms and
 * feed-forward (its ffn_norm is HF's pre_feedforward_layernorm). */
static const llm__tensor_spec k_gemma3_tensors[] = {
    LAYER("attn_q_norm.weight", "self_attn.q_norm.weight", REQ, F32, HEAD, 1, q_norm),
    LAYER("attn_k_norm.weight", "self_attn.k_norm.weight", REQ, F32, HEAD, 1, k_norm),
    LAYER("post_attention_norm.weight", "post_attention_layernorm.weight", REQ, F32, EMBD, 1, attn_post_norm),
    LAYER("ffn_norm.weight", "pre_feedforward_layernorm.weight", REQ, F32, EMBD, 1, ffn_norm),
    LAYER("ffn_gate.weight", "mlp.gate_proj.weight", REQ, MATMUL, EMBD, FF, wg),
    LAYER("ffn_up.weight", "mlp.up_proj.weight", REQ, MATMUL, EMBD, FF, wu),
    LAYER("ffn_down.weight", "mlp.down_proj.weight", REQ, MATMUL, FF, EMBD, wd),
    LAYER("post_ffw_norm.weight", "post_feedforward_layernorm.weight", REQ, F32, EMBD, 1, ffn_post_norm),
};
static const llm__tensor_table k_gemma3_table = LLM__TABLE(k_gemma3_tensors, &llm__decoder_attn_tensors);

/* After the table: the decoder's checks, tied output and RoPE, then the window
 * layers' RoPE (another theta) and the backend's GEGLU. */
static llm_status gemma3_load(llm_net *net) {
    TRY(llm__decoder_load(net));
    net->rope_swa = net->rope;
    net->rope_swa.freq_base = net->hp.rope_freq_base_swa;
    if (!llm_backend_supports(net->be, LLM_OP_GEGLU, LLM_DTYPE_F32))
        return llm__net_err(LLM_ERR_UNSUPPORTED, "gemma3: backend %s has no GEGLU", llm_backend_name(net->be));
    return LLM_OK;
}

static llm_status gemma3_forward(llm_net *net, llm_net_kv *kv, const llm_net_batch *b) {
    const llm_model_hparams *hp = &net->hp;
    llm_backend *be = net->be;
    const int64_t n = b->n_tokens, E = hp->n_embd, hd = hp->head_dim;
    const float eps = hp->norm_eps;
    const float attn_scale = hp->n_layer == 62 ? 1.0f / sqrtf((float)(hp->n_embd / hp->n_head))
                                               : 1.0f / sqrtf((float)hd);

    const llm__acts a = llm__decoder_acts(net, n);
    llm_tensor x = a.x, xn = a.xn, tmp = a.tmp, q = a.q, k = a.k, v = a.v;
    llm_tensor q2 = a.q2, k2 = a.k2, v2 = a.v2, att2 = a.att2;

    OP(llm_op_get_rows(be, &x, &net->tok_embd, b->tokens, n));
    OP(llm_op_scale(be, &x, &x, sqrtf((float)E)));
    TAP("inp_scaled", -1, x);
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        const llm__layer_w *w = &net->layers[l];
        const int window = llm__layer_is_swa(hp, l);
        const llm_rope_params *rope = window ? &net->rope_swa : &net->rope;
        llm_attn_params ap = llm_attn_default_params();
        ap.scale = 1.0f;
        ap.n_swa = window ? (int32_t)hp->n_swa : 0;

        OP(llm_op_rms_norm(be, &xn, &x, &w->attn_norm, eps));
        TAP("attn_norm", l, xn);
        OP(llm_op_matmul(be, &q2, &xn, &w->wq));
        OP(llm_op_matmul(be, &k2, &xn, &w->wk));
        OP(llm_op_matmul(be, &v2, &xn, &w->wv));
        OP(llm_op_rms_norm(be, &q, &q, &w->q_norm, eps));
        TAP("Qcur_normed", l, q);
        OP(llm_op_rope(be, &q, b->positions, rope));
        OP(llm_op_rms_norm(be, &k, &k, &w->k_norm, eps));
        TAP("Kcur_normed", l, k);
        OP(llm_op_rope(be, &k, b->positions, rope));
        TAP("Qcur", l, q);
        TAP("Kcur", l, k);
        TAP("Vcur", l, v);
        OP(llm_op_scale(be, &q, &q, attn_scale));
        TRY(llm__attend(net, kv, b, l, &ap));
        TAP("kqv_out", l, att2);
        OP(llm_op_matmul(be, &tmp, &att2, &w->wo));
        TAP("attn_out", l, tmp);
        OP(llm_op_rms_norm(be, &tmp, &tmp, &w->attn_post_norm, eps));
        TAP("attn_post_norm", l, tmp);
        OP(llm_op_add(be, &x, &tmp, &x));
        TAP("sa_out", l, x);
        OP(llm_op_rms_norm(be, &xn, &x, &w->ffn_norm, eps));
        TAP("ffn_norm", l, xn);
        TRY(llm__ffn_glu(net, b, l, 1)); /* in runs of rows */
        TAP("ffn_out", l, tmp);
        OP(llm_op_rms_norm(be, &tmp, &tmp, &w->ffn_post_norm, eps));
        TAP("ffn_post_norm", l, tmp);
        OP(llm_op_add(be, &x, &tmp, &x));
        TAP("l_out", l, x);
    }
    return llm__decoder_output(net, b, &x, &xn, eps);
}

static const char *const k_gemma3_hf_types[] = {"gemma3_text", NULL};
static const char *const k_gemma3_hf_ignore[] = {"rotary_emb.inv_freq", "rotary_emb_local.inv_freq", NULL};

const llm__arch llm__arch_gemma3 = {
    .tag = "gemma3",
    .hf_model_types = k_gemma3_hf_types,
    .hf_layer_prefix = "model.layers.",
    .hf_ignore = k_gemma3_hf_ignore,
    .hf_norm_shift = 1.0f, /* Gemma's RMSNorm multiplies by 1 + w; the GGUF stores 1 + w */
    .tensors = &k_gemma3_table,
    .hparams_gguf = gemma3_hparams_gguf,
    .hparams_hf = gemma3_hparams_hf,
    .load = gemma3_load,
    .forward = gemma3_forward,
    .ffn_chunked = 1,
};
