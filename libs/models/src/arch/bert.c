/*
 * arch/bert.c -- the bert architecture (BERT encoders: all-MiniLM, bge,
 * e5...): hyper-parameters (GGUF `bert.*` keys or a Hugging Face
 * config.json), the tensor table, and the forward pass, in llama.cpp's
 * order (src/models/bert.cpp), written only against runtime ops.
 *
 * An encoder has no KV cache and no LM head: for the batch's tokens, each
 * sequence of the batch attending to itself only (bidirectional),
 *     x    = token_embd[tok] + token_types[0] + position_embd[pos]
 *     x    = layer_norm(x) * tok_norm + tok_norm_b
 * then per layer (post-norm):
 *     q,k,v = x . Wq^T + bq, x . Wk^T + bk, x . Wv^T + bv
 *     att  = per sequence: softmax(q k^T / sqrt(head_dim)) v      (no mask)
 *     xa   = layer_norm(att . Wo^T + bo + x) * attn_out_norm + b
 *     x    = layer_norm(gelu(xa . Wu^T + bu) . Wd^T + bd + xa) * layer_out_norm + b
 * and the hidden states x [n][n_embd] are the output (llm_net_batch.hidden);
 * pooling (mean, CLS, ...) and normalisation are the engine's. Token types
 * are all 0 ("sentence A"), as llama.cpp and sentence-transformers use them
 * for single texts. GELU is the exact erf form of HF's "gelu" (llama.cpp
 * uses a tanh-approximation table; the difference is within the tolerance
 * stated with the goldens).
 *
 * Every matrix product is llm_op_matmul_invariant: texts are packed into one
 * batch (engine_embed.c), and a text's vector must not depend on what it was
 * packed with. For F32 / F16 weights its order is llama.cpp's for batches of
 * 2 or more rows (tinyBLAS), and no decoder order is pinned here.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch_internal.h"
#include "formats/formats_internal.h"

/* ------------------------------------------------------------ hparams -- */

static llm_status bert_finish(llm_model_hparams *hp, const llm_model_desc *d) {
    llm_status st = llm__hparams_finish(hp, d);
    if (st) return st;
    const char *path = llm_model_desc_path(d);
    if (hp->n_ctx_train == 0 || hp->n_ctx_train > (1u << 20))
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: bert: context length %u outside [1, 2^20]", path,
                                 hp->n_ctx_train);
    if (hp->n_token_types > 1024)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: bert: %u token types", path, hp->n_token_types);
    if (hp->n_head_kv != hp->n_head || hp->head_dim * hp->n_head != hp->n_embd)
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: bert: heads must split n_embd evenly", path);
    if (!(hp->norm_eps >= 0.0f) || !isfinite(hp->norm_eps))
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: bert: bad layer_norm epsilon", path);
    if (hp->pooling_type < -1 || hp->pooling_type > 4)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: bert: unknown pooling_type %d", path,
                                 hp->pooling_type);
    return LLM_OK;
}

static llm_status bert_hparams_gguf(llm_model_hparams *hp, const llm_model_desc *d, const llm_gguf *g) {
    llm_status st = LLM_OK;
    if (!st) st = llm__gguf_req_u32(d, g, "bert.embedding_length", &hp->n_embd);
    if (!st) st = llm__gguf_req_u32(d, g, "bert.block_count", &hp->n_layer);
    if (!st) st = llm__gguf_req_u32(d, g, "bert.attention.head_count", &hp->n_head);
    if (!st) st = llm__gguf_req_u32(d, g, "bert.feed_forward_length", &hp->n_ff);
    if (!st) st = llm__gguf_req_u32(d, g, "bert.context_length", &hp->n_ctx_train);
    if (!st) st = llm__gguf_opt_u32(g, "bert.attention.head_count_kv", &hp->n_head_kv);
    hp->norm_eps = 1e-12f;
    if (!st) st = llm__gguf_opt_f32(g, "bert.attention.layer_norm_epsilon", &hp->norm_eps);
    if (!st) st = llm__gguf_opt_u32(g, "tokenizer.ggml.token_type_count", &hp->n_token_types);
    if (!st) st = llm__gguf_opt_i32(g, "bert.pooling_type", &hp->pooling_type);
    if (!st) st = llm__gguf_opt_i32(g, "tokenizer.ggml.bos_token_id", &hp->bos_id);
    if (!st) st = llm__gguf_opt_i32(g, "tokenizer.ggml.eos_token_id", &hp->eos_id);
    if (!st) st = llm__gguf_opt_i32(g, "tokenizer.ggml.padding_token_id", &hp->pad_id);
    if (!st) st = llm__gguf_opt_i32(g, "tokenizer.ggml.unknown_token_id", &hp->unk_id);
    if (st) return st;
    int causal = 0;
    st = llm_gguf_get_bool(g, "bert.attention.causal", &causal);
    if (st == LLM_OK && causal)
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: bert: causal attention is not supported",
                                 llm_model_desc_path(d));
    if (st != LLM_OK && st != LLM_ERR_NOT_FOUND) return llm__models_gguf_error(st);
    /* Files without the key: as many types as the tensor has rows. */
    const llm_model_tensor *tt = llm_model_desc_find_tensor(d, "token_types.weight");
    if (tt && hp->n_token_types == 0 && tt->ne[1] > 0 && tt->ne[1] <= 1024) hp->n_token_types = (uint32_t)tt->ne[1];
    return bert_finish(hp, d);
}

static llm_status bert_hparams_hf(llm_model_hparams *hp, const llm_model_desc *d, json_t *cfg) {
    const char *path = llm_model_desc_path(d);
    llm_status st = LLM_OK;
    if (!st) st = llm__cfg_u32(d, cfg, "hidden_size", 1, &hp->n_embd);
    if (!st) st = llm__cfg_u32(d, cfg, "num_hidden_layers", 1, &hp->n_layer);
    if (!st) st = llm__cfg_u32(d, cfg, "num_attention_heads", 1, &hp->n_head);
    if (!st) st = llm__cfg_u32(d, cfg, "intermediate_size", 1, &hp->n_ff);
    if (!st) st = llm__cfg_u32(d, cfg, "max_position_embeddings", 1, &hp->n_ctx_train);
    if (!st) st = llm__cfg_u32(d, cfg, "type_vocab_size", 0, &hp->n_token_types);
    hp->norm_eps = 1e-12f; /* transformers' BertConfig default */
    if (!st) st = llm__cfg_f32(d, cfg, "layer_norm_eps", &hp->norm_eps);
    if (st) return st;
    llm__cfg_id(cfg, "pad_token_id", &hp->pad_id);
    json_t *act = json_object_get(cfg, "hidden_act");
    if (act && !(json_is_string(act) && !strcmp(json_string_value(act), "gelu")))
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: bert: hidden_act '%.32s' (only \"gelu\")", path,
                                 json_is_string(act) ? json_string_value(act) : "?");
    json_t *pe = json_object_get(cfg, "position_embedding_type");
    if (pe && !(json_is_string(pe) && !strcmp(json_string_value(pe), "absolute")))
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: bert: position_embedding_type '%.32s' (only "
                                 "\"absolute\")", path, json_is_string(pe) ? json_string_value(pe) : "?");
    json_t *dec = json_object_get(cfg, "is_decoder");
    if (json_is_true(dec))
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: bert: is_decoder is not supported", path);
    return bert_finish(hp, d);
}

/* -------------------------------------------------------- tensor table -- */

static const llm__tensor_spec k_bert_tensors[] = {
    GLOBAL("token_embd.weight", "embeddings.word_embeddings.weight", REQ, ROWS, EMBD, VOCAB, tok_embd),
    GLOBAL("position_embd.weight", "embeddings.position_embeddings.weight", REQ, ROWS, EMBD, CTX, pos_embd),
    GLOBAL("token_types.weight", "embeddings.token_type_embeddings.weight", OPT, F32, EMBD, TYPES, type_embd),
    GLOBAL("token_embd_norm.weight", "embeddings.LayerNorm.weight", REQ, F32, EMBD, 1, tok_norm),
    GLOBAL("token_embd_norm.bias", "embeddings.LayerNorm.bias", REQ, F32, EMBD, 1, tok_norm_b),
    LAYER("attn_q.weight", "attention.self.query.weight", REQ, MATMUL, EMBD, Q, wq),
    LAYER("attn_q.bias", "attention.self.query.bias", OPT, F32, Q, 1, bq),
    LAYER("attn_k.weight", "attention.self.key.weight", REQ, MATMUL, EMBD, KV, wk),
    LAYER("attn_k.bias", "attention.self.key.bias", OPT, F32, KV, 1, bk),
    LAYER("attn_v.weight", "attention.self.value.weight", REQ, MATMUL, EMBD, KV, wv),
    LAYER("attn_v.bias", "attention.self.value.bias", OPT, F32, KV, 1, bv),
    LAYER("attn_output.weight", "attention.output.dense.weight", REQ, MATMUL, Q, EMBD, wo),
    LAYER("attn_output.bias", "attention.output.dense.bias", OPT, F32, EMBD, 1, bo),
    LAYER("attn_output_norm.weight", "attention.output.LayerNorm.weight", REQ, F32, EMBD, 1, attn_out_norm),
    LAYER("attn_output_norm.bias", "attention.output.LayerNorm.bias", REQ, F32, EMBD, 1, attn_out_norm_b),
    LAYER("ffn_up.weight", "intermediate.dense.weight", REQ, MATMUL, EMBD, FF, wu),
    LAYER("ffn_up.bias", "intermediate.dense.bias", OPT, F32, FF, 1, bu),
    LAYER("ffn_down.weight", "output.dense.weight", REQ, MATMUL, FF, EMBD, wd),
    LAYER("ffn_down.bias", "output.dense.bias", OPT, F32, EMBD, 1, bd),
    LAYER("layer_output_norm.weight", "output.LayerNorm.weight", REQ, F32, EMBD, 1, layer_out_norm),
    LAYER("layer_output_norm.bias", "output.LayerNorm.bias", REQ, F32, EMBD, 1, layer_out_norm_b),
};
static const llm__tensor_table k_bert_table = LLM__TABLE(k_bert_tensors, NULL);

/* ------------------------------------------------------------- loading -- */

llm_status llm__bert_load(llm_net *net) {
    static const llm_op ops[] = {LLM_OP_LAYER_NORM, LLM_OP_GELU, LLM_OP_ATTENTION_FULL};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!llm_backend_supports(net->be, ops[i], LLM_DTYPE_F32))
            return llm__net_err(LLM_ERR_UNSUPPORTED, "bert: backend %s has no %s op (encoders run on the cpu backend)",
                                llm_backend_name(net->be), llm_op_name(ops[i]));
    /* every weight type the table accepts for a matrix, in the batch-invariant product */
    for (uint32_t l = 0; l < net->hp.n_layer; l++) {
        const llm__layer_w *w = &net->layers[l];
        const llm_tensor *ws[] = {&w->wq, &w->wk, &w->wv, &w->wqkv, &w->wo, &w->wu, &w->wg, &w->wd};
        for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++)
            if (llm__has(ws[i]) && !llm_backend_supports(net->be, LLM_OP_MATMUL_INVARIANT, ws[i]->dtype))
                return llm__net_err(LLM_ERR_UNSUPPORTED, "bert: backend %s has no %s op for %s weights",
                                    llm_backend_name(net->be), llm_op_name(LLM_OP_MATMUL_INVARIANT),
                                    llm_dtype_name(ws[i]->dtype));
    }
    return LLM_OK;
}

/* ------------------------------------------------------------- forward -- */

#define BIAS(y, bias)                                                                              \
    do {                                                                                           \
        if (llm__has(&(bias))) OP(llm_op_add(be, &(y), &(y), &(bias)));                            \
    } while (0)

llm_status llm__bert_forward(llm_net *net, llm_net_kv *kv, const llm_net_batch *b) {
    (void)kv;
    const llm_model_hparams *hp = &net->hp;
    llm_backend *be = net->be;
    const int64_t n = b->n_tokens, E = hp->n_embd, hd = hp->head_dim, nh = hp->n_head;
    const float eps = hp->norm_eps, kq_scale = 1.0f / sqrtf((float)hd);
    if (b->logits_mode != LLM_LOGITS_NONE || !b->hidden)
        return llm__net_err(LLM_ERR_INVALID_ARG, "bert: an encoder computes hidden states only (no logits)");
    for (int64_t i = 0; i < n; i++)
        if ((uint32_t)b->positions[i] >= hp->n_ctx_train)
            return llm__net_err(LLM_ERR_INVALID_ARG, "bert: position %d past the %u position embeddings",
                                b->positions[i], hp->n_ctx_train);

    const llm__acts a = llm__decoder_acts(net, n);
    llm_tensor att = act(net, net->a.off_att, hd, nh, n);
    int32_t *seq_lens = net->gather_ids; /* host [max_batch] >= n_seqs */
    for (int32_t s = 0; s < b->n_seqs; s++) seq_lens[s] = b->seqs[s].n_tokens;
    llm_tensor x = a.x, xn = a.xn, tmp = a.tmp, up = a.up, gate = a.gate, q = a.q, k = a.k;
    llm_tensor q2 = a.q2, k2 = a.k2, v2 = a.v2, att2 = a.att2;

    OP(llm_op_get_rows(be, &x, &net->tok_embd, b->tokens, n));
    if (llm__has(&net->type_embd)) {
        llm_tensor type0 = llm_tensor_rows(&net->type_embd, 0, 1); /* [1][E]: type 0 for every token */
        OP(llm_op_add(be, &x, &x, &type0));
    }
    if (llm__has(&net->pos_embd)) { /* absolute positions (bert; nomic-bert rotates q, k instead) */
        OP(llm_op_get_rows(be, &tmp, &net->pos_embd, b->positions, n));
        OP(llm_op_add(be, &x, &tmp, &x));
    }
    TAP("inp_embd", -1, x);
    OP(llm_op_layer_norm(be, &x, &x, &net->tok_norm, &net->tok_norm_b, eps));
    TAP("inp_norm", -1, x);
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        const llm__layer_w *w = &net->layers[l];
        llm_tensor wq = w->wq, wk = w->wk, wv = w->wv;
        if (llm__has(&w->wqkv)) { /* fused: row blocks of one matrix */
            const int64_t Q = nh * hd, KV = (int64_t)hp->n_head_kv * hd;
            wq = llm_tensor_rows(&w->wqkv, 0, Q);
            wk = llm_tensor_rows(&w->wqkv, Q, KV);
            wv = llm_tensor_rows(&w->wqkv, Q + KV, KV);
        }
        OP(llm_op_matmul_invariant(be, &q2, &x, &wq));
        BIAS(q2, w->bq);
        OP(llm_op_matmul_invariant(be, &k2, &x, &wk));
        BIAS(k2, w->bk);
        OP(llm_op_matmul_invariant(be, &v2, &x, &wv));
        BIAS(v2, w->bv);
        if (net->rope.n_dims > 0) {
            OP(llm_op_rope(be, &q, b->positions, &net->rope));
            OP(llm_op_rope(be, &k, b->positions, &net->rope));
        }
        TAP("Qcur", l, q2);
        TAP("Kcur", l, k2);
        TAP("Vcur", l, v2);
        /* each sequence attends to itself only, all in one op */
        OP(llm_op_attention_full(be, &att, &a.q, &a.k, &a.v, seq_lens, b->n_seqs, kq_scale));
        TAP("kqv_out", l, att2);
        OP(llm_op_matmul_invariant(be, &tmp, &att2, &w->wo));
        BIAS(tmp, w->bo);
        OP(llm_op_add(be, &tmp, &tmp, &x));
        OP(llm_op_layer_norm(be, &xn, &tmp, &w->attn_out_norm, &w->attn_out_norm_b, eps));
        TAP("ffn_inp", l, xn);
        OP(llm_op_matmul_invariant(be, &up, &xn, &w->wu));
        BIAS(up, w->bu);
        if (llm__has(&w->wg)) { /* nomic-bert: silu(gate) * up */
            OP(llm_op_matmul_invariant(be, &gate, &xn, &w->wg));
            OP(llm_op_swiglu(be, &up, &gate, &up));
        } else {
            OP(llm_op_gelu(be, &up, &up));
        }
        OP(llm_op_matmul_invariant(be, &tmp, &up, &w->wd));
        BIAS(tmp, w->bd);
        TAP("ffn_out", l, tmp);
        OP(llm_op_add(be, &tmp, &tmp, &xn));
        OP(llm_op_layer_norm(be, &x, &tmp, &w->layer_out_norm, &w->layer_out_norm_b, eps));
        TAP("l_out", l, x);
    }
    TAP("result_embd", -1, x);
    OP(llm_buffer_read(net->arena, net->a.off_x, b->hidden, (size_t)(n * E) * sizeof(float)));
    return LLM_OK;
}

/* ---------------------------------------------------------- the entry -- */

static const char *const k_bert_hf_types[] = {"bert", NULL};
/* Known and not used: the position-id buffer, and the pooler (a tanh dense
 * layer over [CLS] for next-sentence prediction; sentence embeddings pool
 * the hidden states instead, as llama.cpp's converter drops it too). */
static const char *const k_bert_hf_ignore[] = {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias",
                                               NULL};

const llm__arch llm__arch_bert = {
    .tag = "bert",
    .hf_model_types = k_bert_hf_types,
    .hf_layer_prefix = "encoder.layer.",
    .hf_ignore = k_bert_hf_ignore,
    .tensors = &k_bert_table,
    .hparams_gguf = bert_hparams_gguf,
    .hparams_hf = bert_hparams_hf,
    .load = llm__bert_load,
    .forward = llm__bert_forward,
    .encoder = 1,
};
