/*
 * arch/net_internal.h -- PRIVATE: the runnable network shared by the
 * architecture files (one file per architecture) and net.c (creation, KV
 * storage, batch validation).
 */
#ifndef LLM_ARCH_NET_INTERNAL_H
#define LLM_ARCH_NET_INTERNAL_H

#include "llama/arch.h"

typedef struct llm__layer_w {
    llm_tensor attn_norm;           /* f32 [E] */
    llm_tensor wq, wk, wv, wo;      /* [n_head*hd][E], [n_kv*hd][E] x2, [E][n_head*hd] */
    llm_tensor ffn_norm;            /* f32 [E] */
    llm_tensor wg, wu, wd;          /* [F][E], [F][E], [E][F] */
} llm__layer_w;

struct llm_net {
    const llm_model_desc *desc;
    llm_backend *be;
    llm_model_hparams hp;
    llm_net_params p;
    llm_buffer **wbufs;   /* [n_wbufs] one wrapped buffer per source file */
    uint32_t n_wbufs;
    llm_tensor tok_embd;  /* [V][E] */
    llm_tensor out_norm;  /* f32 [E] */
    llm_tensor output;    /* [V][E] (token_embd when tied) */
    llm__layer_w *layers; /* [n_layer] */
    llm_rope_params rope;
    /* Activation arena, carved once for max_batch tokens (byte offsets). */
    llm_buffer *arena;
    size_t off_x, off_xn, off_tmp, off_q, off_k, off_v, off_att, off_gate, off_up, off_logits;
    int32_t *gather_ids; /* host [max_batch] */
};

struct llm_net_kv {
    llm_net *net;
    int32_t n_blocks, block_size;
    llm_buffer **k, **v; /* [n_layer] each */
    llm_tensor *kt, *vt; /* [n_layer] cache tensors */
};

/* Sets the thread-local message; returns st. */
llm_status llm__net_err(llm_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Passes a runtime status through, copying the runtime's message on error. */
llm_status llm__net_op(llm_status st);
/* A weight tensor of the descriptor as a runtime tensor in the wrapped buffers. */
llm_status llm__net_wrap_tensor(llm_net *net, const llm_model_tensor *t, llm_tensor *out);

/* Architecture hooks. */
llm_status llm__llama_load(llm_net *net);
llm_status llm__llama_forward(llm_net *net, llm_net_kv *kv, const llm_net_batch *b);

#endif
