/*
 * arch/llama.c -- the Llama forward pass (Llama 2/3, SmolLM2, Mistral-style
 * GQA, tied embeddings), written only against runtime ops.
 *
 * Per layer, for the batch's tokens x [n][n_embd]:
 *     xn   = rms_norm(x) * attn_norm
 *     q,k,v = xn . Wq^T, xn . Wk^T, xn . Wv^T       rope(q), rope(k)
 *     per sequence: write k,v to the paged cache; att = attention(q, cache)
 *     x   += att . Wo^T
 *     xn   = rms_norm(x) * ffn_norm
 *     x   += (silu(xn . Wg^T) * (xn . Wu^T)) . Wd^T
 * then logits = rms_norm(x) * output_norm . Wout^T (Wout = token_embd when tied).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/net_internal.h"

#define LOGITS_CHUNK 64 /* LM-head rows per matmul: bounds the logits arena */
#define LOGITS_TAIL 8   /* a last chunk shorter than this joins the one before */

static llm_status get_weight(llm_net *net, llm_tensor *out, int64_t ne0, int64_t ne1,
                             int optional, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

static llm_status get_weight(llm_net *net, llm_tensor *out, int64_t ne0, int64_t ne1,
                             int optional, const char *fmt, ...) {
    char name[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof(name), fmt, ap);
    va_end(ap);
    const llm_model_tensor *t = llm_model_desc_find_tensor(net->desc, name);
    memset(out, 0, sizeof(*out));
    if (!t) {
        return optional ? LLM_ERR_NOT_FOUND
                        : llm__net_err(LLM_ERR_BAD_FORMAT, "llama: tensor '%s' is missing", name);
    }
    if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != 1 || t->ne[3] != 1) {
        return llm__net_err(LLM_ERR_BAD_FORMAT,
                            "llama: tensor '%s' is [%lld][%lld], expected [%lld][%lld]", name,
                            (long long)t->ne[1], (long long)t->ne[0], (long long)ne1, (long long)ne0);
    }
    return llm__net_wrap_tensor(net, t, out);
}

static llm_status check_mm(llm_net *net, const llm_tensor *w, const char *what) {
    if (!llm_backend_supports(net->be, LLM_OP_MATMUL, w->dtype)) {
        return llm__net_err(LLM_ERR_UNSUPPORTED, "llama: backend %s cannot multiply %s weights (%s)",
                            llm_backend_name(net->be), llm_dtype_name(w->dtype), what);
    }
    return LLM_OK;
}

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        llm_status st_ = (expr);                                                                   \
        if (st_ != LLM_OK) return st_;                                                             \
    } while (0)

/* One op of the forward: the cancel callback is polled before every op, so a
 * cancelled forward stops within one op's time. */
#define OP(expr)                                                                                   \
    do {                                                                                           \
        if (b->cancel && b->cancel(b->cancel_user)) return LLM_CANCELLED;                         \
        TRY(llm__net_op(expr));                                                                    \
    } while (0)

llm_status llm__llama_load(llm_net *net) {
    const llm_model_hparams *hp = &net->hp;
    const int64_t E = hp->n_embd, F = hp->n_ff, V = hp->n_vocab;
    const int64_t QD = (int64_t)hp->n_head * hp->head_dim, KD = (int64_t)hp->n_head_kv * hp->head_dim;
    if (E <= 0 || F <= 0 || V <= 0 || hp->n_layer == 0 || hp->n_head == 0 || hp->n_head_kv == 0 ||
        hp->head_dim == 0 || hp->n_head % hp->n_head_kv != 0 || hp->n_rot == 0 ||
        hp->n_rot > hp->head_dim || hp->n_rot % 2 != 0) {
        return llm__net_err(LLM_ERR_BAD_FORMAT, "llama: inconsistent hyper-parameters");
    }
    TRY(get_weight(net, &net->tok_embd, E, V, 0, "token_embd.weight"));
    TRY(get_weight(net, &net->out_norm, E, 1, 0, "output_norm.weight"));
    llm_status st = get_weight(net, &net->output, E, V, 1, "output.weight");
    if (st == LLM_ERR_NOT_FOUND) {
        net->output = net->tok_embd; /* tied embeddings */
    } else if (st != LLM_OK) {
        return st;
    }
    TRY(check_mm(net, &net->output, "output"));
    net->layers = calloc(hp->n_layer, sizeof(*net->layers));
    if (!net->layers) {
        return llm__net_err(LLM_ERR_NO_MEMORY, "llama: out of memory");
    }
    for (uint32_t l = 0; l < hp->n_layer; l++) {
        llm__layer_w *w = &net->layers[l];
        TRY(get_weight(net, &w->attn_norm, E, 1, 0, "blk.%u.attn_norm.weight", l));
        TRY(get_weight(net, &w->wq, E, QD, 0, "blk.%u.attn_q.weight", l));
        TRY(get_weight(net, &w->wk, E, KD, 0, "blk.%u.attn_k.weight", l));
        TRY(get_weight(net, &w->wv, E, KD, 0, "blk.%u.attn_v.weight", l));
        TRY(get_weight(net, &w->wo, QD, E, 0, "blk.%u.attn_output.weight", l));
        TRY(get_weight(net, &w->ffn_norm, E, 1, 0, "blk.%u.ffn_norm.weight", l));
        TRY(get_weight(net, &w->wg, E, F, 0, "blk.%u.ffn_gate.weight", l));
        TRY(get_weight(net, &w->wu, E, F, 0, "blk.%u.ffn_up.weight", l));
        TRY(get_weight(net, &w->wd, F, E, 0, "blk.%u.ffn_down.weight", l));
        const llm_tensor *mm[] = {&w->wq, &w->wk, &w->wv, &w->wo, &w->wg, &w->wu, &w->wd};
        for (size_t i = 0; i < sizeof(mm) / sizeof(mm[0]); i++) {
            TRY(check_mm(net, mm[i], "layer weight"));
        }
        const llm_tensor *norms[] = {&w->attn_norm, &w->ffn_norm};
        for (size_t i = 0; i < 2; i++) {
            if (norms[i]->dtype != LLM_DTYPE_F32) {
                return llm__net_err(LLM_ERR_UNSUPPORTED, "llama: norm weights must be f32");
            }
        }
    }
    if (net->out_norm.dtype != LLM_DTYPE_F32) {
        return llm__net_err(LLM_ERR_UNSUPPORTED, "llama: norm weights must be f32");
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
        if (ff->type != LLM_DTYPE_F32 || ff->ne[0] != hp->n_rot / 2) {
            return llm__net_err(LLM_ERR_BAD_FORMAT, "llama: rope_freqs.weight must be f32 [n_rot/2]");
        }
        r->freq_factors = ff->data; /* host memory in the mapping: ops read it as a host array */
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

/* The debug tap (llama/arch.h): one branch per stage when unset. */
#define TAP(name, layer, t)                                                                        \
    do {                                                                                           \
        if (b->tap) b->tap(b->tap_user, (name), (int32_t)(layer), &(t));                           \
    } while (0)

/* Contiguous F32 [n][ne1][ne0] view at an arena slot. */
static llm_tensor act(const llm_net *net, size_t off, int64_t ne0, int64_t ne1, int64_t n) {
    return llm_tensor_4d(net->arena, off, LLM_DTYPE_F32, ne0, ne1, n, 1);
}

llm_status llm__llama_forward(llm_net *net, llm_net_kv *kv, const llm_net_batch *b) {
    const llm_model_hparams *hp = &net->hp;
    llm_backend *be = net->be;
    const int64_t n = b->n_tokens, E = hp->n_embd, F = hp->n_ff, V = hp->n_vocab;
    const int64_t hd = hp->head_dim, nh = hp->n_head, nkv = hp->n_head_kv;
    const float eps = hp->norm_eps, kq_scale = 1.0f / sqrtf((float)hd);

    llm_tensor x = act(net, net->off_x, E, n, 1);      /* [n][E] residual stream */
    llm_tensor xn = act(net, net->off_xn, E, n, 1);    /* [n][E] normed */
    llm_tensor tmp = act(net, net->off_tmp, E, n, 1);  /* [n][E] block output */
    llm_tensor q = act(net, net->off_q, hd, nh, n);    /* [n][n_head][hd] */
    llm_tensor k = act(net, net->off_k, hd, nkv, n);   /* [n][n_head_kv][hd] */
    llm_tensor v = act(net, net->off_v, hd, nkv, n);   /* [n][n_head_kv][hd] */
    llm_tensor gate = act(net, net->off_gate, F, n, 1); /* [n][F] */
    llm_tensor up = act(net, net->off_up, F, n, 1);     /* [n][F] */
    /* 2-D views of the per-head tensors for the projections. */
    llm_tensor q2 = act(net, net->off_q, hd * nh, n, 1), att2 = act(net, net->off_att, hd * nh, n, 1);
    llm_tensor k2 = act(net, net->off_k, hd * nkv, n, 1), v2 = act(net, net->off_v, hd * nkv, n, 1);

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
        llm_tensor kc, vc;
        TRY(llm_net_kv_layer(kv, (int32_t)l, &kc, &vc));
        int64_t t0 = 0;
        for (int32_t s = 0; s < b->n_seqs; s++) {
            const llm_net_seq *sq = &b->seqs[s];
            const int64_t ns = sq->n_tokens;
            llm_tensor ks = act(net, net->off_k + (size_t)(t0 * nkv * hd) * 4, hd, nkv, ns);
            llm_tensor vs = act(net, net->off_v + (size_t)(t0 * nkv * hd) * 4, hd, nkv, ns);
            llm_tensor qs = act(net, net->off_q + (size_t)(t0 * nh * hd) * 4, hd, nh, ns);
            llm_tensor os = act(net, net->off_att + (size_t)(t0 * nh * hd) * 4, hd, nh, ns);
            OP(llm_op_kv_write(be, &kc, &vc, &ks, &vs, b->positions + t0,
                                            sq->block_table, sq->n_table));
            OP(llm_op_attention(be, &os, &qs, &kc, &vc, b->positions + t0,
                                             sq->block_table, sq->n_table, kq_scale));
            t0 += ns;
        }
        TAP("kqv_out", l, att2);
        OP(llm_op_matmul(be, &tmp, &att2, &w->wo));
        TAP("attn_out", l, tmp);
        OP(llm_op_add(be, &x, &x, &tmp));
        TAP("ffn_inp", l, x);
        OP(llm_op_rms_norm(be, &xn, &x, &w->ffn_norm, eps));
        TAP("ffn_norm", l, xn);
        OP(llm_op_matmul(be, &gate, &xn, &w->wg));
        OP(llm_op_matmul(be, &up, &xn, &w->wu));
        OP(llm_op_swiglu(be, &gate, &gate, &up));
        TAP("ffn_swiglu", l, gate);
        OP(llm_op_matmul(be, &tmp, &gate, &w->wd));
        TAP("ffn_out", l, tmp);
        OP(llm_op_add(be, &x, &x, &tmp));
        TAP("l_out", l, x);
    }
    /* Final norm: over every row when all rows are wanted, else only over the
     * last row of each sequence, gathered first into xn. */
    int64_t rows = n;
    if (b->hidden || b->logits_mode == LLM_LOGITS_ALL) {
        OP(llm_op_rms_norm(be, &xn, &x, &net->out_norm, eps));
        TAP("result_norm", -1, xn);
        if (b->hidden) {
            OP(llm_buffer_read(net->arena, net->off_xn, b->hidden,
                                            (size_t)(n * E) * sizeof(float)));
        }
    }
    if (b->logits_mode == LLM_LOGITS_NONE) {
        return LLM_OK;
    }
    size_t src_off = net->off_xn;
    if (b->logits_mode == LLM_LOGITS_LAST) {
        int64_t t0 = 0;
        for (int32_t s = 0; s < b->n_seqs; s++) {
            t0 += b->seqs[s].n_tokens;
            net->gather_ids[s] = (int32_t)(t0 - 1);
        }
        rows = b->n_seqs;
        /* The gathered rows go to tmp, since xn may hold the hidden states. */
        const llm_tensor *src = b->hidden ? &xn : &x;
        llm_tensor g = act(net, net->off_tmp, E, rows, 1);
        OP(llm_op_get_rows(be, &g, src, net->gather_ids, rows));
        if (!b->hidden) {
            OP(llm_op_rms_norm(be, &g, &g, &net->out_norm, eps));
            TAP("result_norm", -1, g);
        }
        src_off = net->off_tmp;
    }
    for (int64_t r0 = 0, c; r0 < rows; r0 += c) {
        c = rows - r0 < LOGITS_CHUNK ? rows - r0 : LOGITS_CHUNK;
        /* No last chunk of 1..7 rows: the CPU matmul, like llama.cpp, picks
         * some K-quant kernels by row count (8 and up: its tiled order), and
         * llama.cpp multiplies all rows at once. */
        if (rows - r0 - c > 0 && rows - r0 - c < LOGITS_TAIL) {
            c = rows - r0;
        }
        llm_tensor in = act(net, src_off + (size_t)(r0 * E) * sizeof(float), E, c, 1);
        llm_tensor lg = act(net, net->off_logits, V, c, 1);
        OP(llm_op_matmul(be, &lg, &in, &net->output));
        OP(llm_buffer_read(net->arena, net->off_logits, b->logits + r0 * V,
                                        (size_t)(c * V) * sizeof(float)));
    }
    return LLM_OK;
}
