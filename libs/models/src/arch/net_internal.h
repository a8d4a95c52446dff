/*
 * arch/net_internal.h -- PRIVATE: the runnable network, shared by the
 * architecture files, the tensor table machinery (tensor_table.c) and the
 * net's own files, each named for what it holds:
 *     net.c          llm_net_create / free: weights loaded, arena carved
 *     net_error.c    llm__net_err, llm__net_op, llm_net_last_error (a leaf)
 *     net_weights.c  wrapped file buffers, weight views, F32 vectors, prepare
 *     net_plan.c     the arena's slots, K/V and state bytes, params checks
 *     net_kv.c       K/V storage (one or two layer groups), block copies
 *     net_state.c    recurrent state slots and their bookkeeping per pass
 *     net_forward.c  batch validation and llm_net_forward's dispatch
 * Calls go one way: net.c -> registry / tensor_table -> architectures ->
 * decoder -> net_kv -> net_error; nothing below calls back up.
 */
#ifndef LLM_ARCH_NET_INTERNAL_H
#define LLM_ARCH_NET_INTERNAL_H

#include "llama/arch.h"

/* One layer's weights: the union of what the architectures use. A tensor an
 * architecture's table does not fill, or an optional one the file lacks, has
 * buffer == NULL (test with llm__has). Shapes outermost first, with
 * E = n_embd, Q = n_head*head_dim, KV = n_head_kv*head_dim, F = n_ff. */
typedef struct llm__layer_w {
    llm_tensor attn_norm;           /* f32 [E] */
    llm_tensor wq, wk, wv;          /* [Q][E], [KV][E], [KV][E] (phi3: row views of wqkv) */
    llm_tensor wqkv;                /* [Q+2KV][E]: fused Q/K/V (phi3), sliced into wq, wk, wv */
    llm_tensor bq, bk, bv;          /* f32 [Q], [KV], [KV] (optional biases) */
    llm_tensor wo, bo;              /* [E][Q]; f32 [E] (optional bias) */
    llm_tensor q_norm, k_norm;      /* f32 [head_dim]: per-head RMSNorm of q and k (Qwen3, Gemma 3) */
    llm_tensor attn_post_norm;      /* f32 [E]: RMSNorm of the attention output (Gemma 3) */
    llm_tensor ffn_post_norm;       /* f32 [E]: RMSNorm of the FFN output (Gemma 3) */
    llm_tensor ffn_norm;            /* f32 [E] */
    llm_tensor wg, wu, wd;          /* [F][E], [F][E], [E][F] (phi3: wg, wu row views of the
                                       fused [2F][E] ffn_up, gate rows first) */
    llm_tensor bg, bu, bd;          /* f32 [F], [F], [E] (optional biases) */
    /* Encoders (BERT): post-norm LayerNorms with biases; fused Q/K/V (nomic-bert). */
    llm_tensor attn_out_norm, attn_out_norm_b;   /* f32 [E] each: after attention + residual */
    llm_tensor layer_out_norm, layer_out_norm_b; /* f32 [E] each: after FFN + residual */
    /* Gated DeltaNet layers (qwen35; wqkv above is their [CH][E] input projection,
     * CH = 2 * n_k_heads * d_state + d_inner, VI = d_inner, VH = n_v_heads). */
    llm_tensor ssm_gate;            /* [VI][E]: z, the output gate (attn_gate) */
    llm_tensor ssm_conv1d;          /* f32 [CH][d_conv] */
    llm_tensor ssm_dt, ssm_a;       /* f32 [VH] each: decay bias, -exp(A_log) */
    llm_tensor ssm_beta, ssm_alpha; /* [VH][E] each */
    llm_tensor ssm_norm;            /* f32 [d_state] */
    llm_tensor ssm_out;             /* [E][VI] */
    /* Mixture of experts (qwen3moe), X = n_expert, Fe = n_ff_exp. */
    llm_tensor ffn_gate_inp;                     /* f32 [X][E]: the router */
    llm_tensor ffn_gate_exps, ffn_up_exps;       /* [X][Fe][E] each */
    llm_tensor ffn_down_exps;                    /* [X][E][Fe] */
} llm__layer_w;

/* Arena slots, carved once for max_batch tokens (byte offsets into arena). */
typedef struct llm__arena_layout {
    size_t off_x, off_xn, off_tmp, off_q, off_k, off_v, off_att, off_gate, off_up, off_logits;
    size_t bytes; /* total */
    /* Hybrid recurrent nets only (0 bytes otherwise): the full-attention
     * layers' query+gate and gate; the recurrent layers' projections, conv
     * output, split q/k/v, decay, mixing weight and delta-rule output. */
    size_t off_qg, off_agate, off_mix, off_conv, off_z, off_sq, off_sk, off_sv, off_sg, off_sbeta, off_so;
    /* Mixture of experts (0 bytes each for a dense model), U = n_expert_used. */
    size_t off_moe_probs;      /* [B][n_expert] router logits, then probabilities */
    size_t off_moe_w;          /* [B][U] expert weights */
    size_t off_moe_gate, off_moe_up; /* [B][U][n_ff_exp] */
    size_t off_moe_out;        /* [B][U][E] expert outputs */
} llm__arena_layout;

/* LM-head rows per matmul (bounds the logits slot), and the shortest last
 * chunk: a shorter tail joins the chunk before (decoder.c, llm__decoder_output). */
#define LLM__LOGITS_CHUNK 64
#define LLM__LOGITS_TAIL 8

struct llm_net {
    const llm_model_desc *desc;
    const struct llm__arch *arch;
    llm_backend *be;
    llm_model_hparams hp;
    llm_net_params p;
    llm_buffer **wbufs;   /* [n_wbufs] one wrapped buffer per source file */
    uint32_t n_wbufs;
    llm_tensor tok_embd;  /* [V][E] */
    llm_tensor out_norm;  /* f32 [E] */
    llm_tensor output;    /* [V][E] (token_embd when tied) */
    llm__layer_w *layers; /* [n_layer] */
    /* Encoders (BERT): absolute positions, token types, embedding LayerNorm. */
    llm_tensor pos_embd;   /* [n_ctx_train][E] */
    llm_tensor type_embd;  /* f32 [n_token_types][E] (optional) */
    llm_tensor tok_norm, tok_norm_b; /* f32 [E] each */
    llm_rope_params rope;
    llm_rope_params rope_swa; /* the window layers' RoPE (Gemma 3: another theta) */
    llm_buffer *arena;    /* activation arena */
    llm__arena_layout a;
    int32_t *gather_ids;  /* host [max_batch] */
    llm_buffer **vecs;    /* [n_vecs] F32 copies of a HF checkpoint's F16/BF16 (or shifted)
                             norm and bias vectors (llm__net_f32_vector) */
    uint32_t n_vecs;
    int32_t *row_ids;     /* host [max_batch * n_row_ids]: the arch's get_rows index scratch
                             (qwen35: splitting interleaved heads), or NULL */
    int32_t *moe_ids;     /* host [max_batch][n_expert_used] routed experts (NULL: dense) */
};

struct llm_net_kv {
    llm_net *net;
    int32_t n_blocks, block_size;
    int32_t n_blocks_swa; /* > 0: the window layers' own storage (a second group) */
    llm_buffer **k, **v; /* [n_layer] each */
    llm_tensor *kt, *vt; /* [n_layer] cache tensors: [blocks][n_head_kv][block_size][hd],
                            blocks = n_blocks_swa for a window layer of a split storage */
    /* Recurrent state (llm_net_kv_state_alloc): slot s (1-based) at byte
     * (s - 1) * state_slot_bytes of `state`; inside it, the r-th recurrent
     * layer's conv state [d_conv-1][CH] then delta state [VH][hd][hd]. */
    int32_t n_state_slots;
    size_t state_slot_bytes;
    llm_buffer *state;
    int32_t *state_pos;   /* host [n_state_slots + 1]: position reached, -1 invalid */
};

/* Layer l attends through the sliding window hp->n_swa (Gemma 3: five of
 * every six layers). */
static inline int llm__layer_is_swa(const llm_model_hparams *hp, uint32_t l) {
    return hp->n_swa > 0 && hp->swa_pattern > 0 && l < hp->n_layer && l % hp->swa_pattern < hp->swa_pattern - 1;
}
/* The window layers' count. */
static inline uint32_t llm__n_layer_swa(const llm_model_hparams *hp) {
    uint32_t n = 0;
    for (uint32_t l = 0; l < hp->n_layer; l++) n += (uint32_t)llm__layer_is_swa(hp, l);
    return n;
}
/* Layer l's K/V lives in the window group of kv (a split storage). */
static inline int llm__kv_in_swa_group(const llm_net_kv *kv, uint32_t l) {
    return kv->n_blocks_swa > 0 && llm__layer_is_swa(&kv->net->hp, l);
}

static inline int llm__has(const llm_tensor *t) { return t->buffer != NULL; }

/* Bytes of one K or V row (one head of one token) of head_dim elements of t. */
static inline size_t llm__kv_row_bytes(const llm_model_hparams *hp, llm_dtype t) {
    return (size_t)hp->head_dim / llm_dtype_block_size(t) * llm_dtype_block_bytes(t);
}

/* Layer l is recurrent (a Gated DeltaNet layer of a hybrid net). */
static inline int llm__layer_is_recurrent(const llm_model_hparams *hp, uint32_t l) {
    return l < 128 && hp->ssm_d_conv > 0 && ((hp->ssm_layers[l / 64] >> (l % 64)) & 1u);
}
/* Bytes of one recurrent layer's state: conv [d_conv-1][CH] and delta [VH][hd][hd], F32. */
static inline size_t llm__ssm_conv_bytes(const llm_model_hparams *hp) {
    return (size_t)(hp->ssm_d_conv - 1) * (2u * hp->ssm_n_k_heads * hp->ssm_d_state + hp->ssm_d_inner) * 4u;
}
static inline size_t llm__ssm_delta_bytes(const llm_model_hparams *hp) {
    return (size_t)hp->ssm_n_v_heads * hp->ssm_d_state * hp->ssm_d_state * 4u;
}

/* ---- net_error.c ---- */

/* Sets the thread-local message; returns st. */
llm_status llm__net_err(llm_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Passes a runtime status through, copying the runtime's message on error. */
llm_status llm__net_op(llm_status st);

/* ---- net_weights.c ---- */

/* One wrapped buffer per source file of the descriptor (net->wbufs), from
 * the file's start to the end of its last tensor. */
llm_status llm__net_wrap_files(llm_net *net);
/* A weight tensor of the descriptor as a runtime tensor in the wrapped buffers. */
llm_status llm__net_wrap_tensor(llm_net *net, const llm_model_tensor *t, llm_tensor *out);
/* An F32 copy of an F32, F16 or BF16 vector tensor t in a buffer the net
 * owns, each element plus shift (0: none) computed as llama.cpp's converter
 * does it from a checkpoint: in float, rounded back to t's own type, then
 * widened (exact). Errors through llm__net_err. */
llm_status llm__net_f32_vector(llm_net *net, const llm_model_tensor *t, float shift, llm_tensor *out);
/* Offers w to the backend (llm_backend_prepare_weight: a layout of its own
 * for matmul, same bits) and, when it keeps a copy, lets the file's pages
 * of w go (the tensor of the same file and offset). */
llm_status llm__net_prepare(llm_net *net, const llm_tensor *w);

/* ---- net_plan.c ---- */

/* The arena's slots for p->max_batch tokens of a net of arch and hp. */
void llm__net_arena_layout(const struct llm__arch *arch, const llm_model_hparams *hp, const llm_net_params *p,
                           llm__arena_layout *a);
/* LLM_ERR_INVALID_ARG (message naming fn) for a bad max_batch, cache type,
 * n_ctx_seq or ffn_rows. */
llm_status llm__net_check_params(const llm_net_params *p, const char *fn);
/* LLM_ERR_UNSUPPORTED when a quantized cache type's block does not divide
 * head_dim (a cache row is whole blocks); LLM_OK for an encoder. */
llm_status llm__net_check_kv_blocks(const llm_model_hparams *hp, const llm_net_params *p, int encoder,
                                    const char *fn);

/* ---- net_state.c ---- */

/* Before a recurrent net's pass: checks each sequence's state slot (its
 * own, consecutive positions, starting at 0 or where the slot stopped),
 * zeroes the slots of sequences starting at 0, and marks every slot of the
 * batch invalid. LLM_ERR_INVALID_ARG or a backend error. */
llm_status llm__net_state_begin(llm_net_kv *kv, const llm_net_batch *b);
/* After a whole pass: each slot of the batch is at its sequence's end. */
void llm__net_state_end(llm_net_kv *kv, const llm_net_batch *b);

#endif
