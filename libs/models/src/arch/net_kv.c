/*
 * arch/net_kv.c -- a net's K/V storage: per attention layer one K and one V
 * backend buffer [n_blocks][n_head_kv][block_size][head_dim], the window
 * layers' in a group of their own when asked (llm_net_kv_create_swa), block
 * copies for copy-on-write, and the layer views the forward attends
 * through. The recurrent state that the same handle carries is net_state.c's.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "arch/arch_internal.h"

llm_status llm_net_kv_create(llm_net *net, int32_t n_blocks, int32_t block_size, llm_net_kv **out) {
    return llm_net_kv_create_swa(net, n_blocks, 0, block_size, out);
}

llm_status llm_net_kv_create_swa(llm_net *net, int32_t n_blocks, int32_t n_blocks_swa, int32_t block_size,
                                 llm_net_kv **out) {
    if (!out) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_create: out is NULL");
    }
    *out = NULL;
    if (!net || n_blocks < 1 || block_size < 1 || n_blocks_swa < 0) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_create: need n_blocks, block_size >= 1");
    }
    if (n_blocks_swa > 0 && (net->arch->encoder || llm__n_layer_swa(&net->hp) == 0)) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_create: %s has no sliding-window layers",
                            net->arch->tag);
    }
    if (net->arch->encoder) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_create: %s is an encoder: it has no KV cache",
                            net->arch->tag);
    }
    const uint32_t L = net->hp.n_layer;
    llm_net_kv *kv = calloc(1, sizeof(*kv));
    if (!kv) {
        return llm__net_err(LLM_ERR_NO_MEMORY, "out of memory");
    }
    kv->net = net;
    kv->n_blocks = n_blocks;
    kv->block_size = block_size;
    kv->n_blocks_swa = n_blocks_swa;
    kv->k = calloc(L, sizeof(*kv->k));
    kv->v = calloc(L, sizeof(*kv->v));
    kv->kt = calloc(L, sizeof(*kv->kt));
    kv->vt = calloc(L, sizeof(*kv->vt));
    llm_status st = (kv->k && kv->v && kv->kt && kv->vt) ? LLM_OK
                                                         : llm__net_err(LLM_ERR_NO_MEMORY, "out of memory");
    /* A backend that cannot write or read a cache type says so now. */
    const llm_dtype types[2] = {net->p.type_k, net->p.type_v};
    for (int w = 0; st == LLM_OK && w < 2; w++) {
        if (!llm_backend_supports(net->be, LLM_OP_KV_WRITE, types[w]) ||
            !llm_backend_supports(net->be, LLM_OP_ATTENTION, types[w])) {
            st = llm__net_err(LLM_ERR_UNSUPPORTED, "llm_net_kv_create: a %s %s cache is not supported on %s",
                              llm_dtype_name(types[w]), w ? "V" : "K", llm_backend_name(net->be));
        }
    }
    const size_t slot_k = (size_t)net->hp.n_head_kv * llm__kv_row_bytes(&net->hp, net->p.type_k);
    const size_t slot_v = (size_t)net->hp.n_head_kv * llm__kv_row_bytes(&net->hp, net->p.type_v);
    for (uint32_t l = 0; st == LLM_OK && l < L; l++) {
        if (llm__layer_is_recurrent(&net->hp, l)) {
            continue; /* no K/V: its state lives in the state slots (kt/vt stay empty) */
        }
        const int32_t nb = llm__kv_in_swa_group(kv, l) ? n_blocks_swa : n_blocks;
        st = llm__net_op(llm_buffer_alloc(net->be, slot_k * (size_t)block_size * (size_t)nb, &kv->k[l]));
        if (st == LLM_OK) {
            st = llm__net_op(llm_buffer_alloc(net->be, slot_v * (size_t)block_size * (size_t)nb, &kv->v[l]));
        }
        if (st == LLM_OK) {
            /* [n_blocks][n_head_kv][block_size][head_dim] (runtime.h) */
            kv->kt[l] = llm_tensor_4d(kv->k[l], 0, net->p.type_k, net->hp.head_dim, block_size,
                                      net->hp.n_head_kv, nb);
            kv->vt[l] = llm_tensor_4d(kv->v[l], 0, net->p.type_v, net->hp.head_dim, block_size,
                                      net->hp.n_head_kv, nb);
        }
    }
    if (st != LLM_OK) {
        llm_net_kv_free(kv);
        return st;
    }
    *out = kv;
    return LLM_OK;
}

void llm_net_kv_free(llm_net_kv *kv) {
    if (!kv) {
        return;
    }
    const uint32_t L = kv->net->hp.n_layer;
    for (uint32_t l = 0; l < L; l++) {
        llm_buffer_free(kv->k ? kv->k[l] : NULL);
        llm_buffer_free(kv->v ? kv->v[l] : NULL);
    }
    free(kv->k);
    free(kv->v);
    free(kv->kt);
    free(kv->vt);
    llm_buffer_free(kv->state);
    free(kv->state_pos);
    free(kv);
}

/* Copies slots [0, n_tokens) of block src to dst in the layers of one group
 * (swa: the window group of a split storage, else the main one). */
static llm_status copy_block_group(llm_net_kv *kv, int swa, int32_t src, int32_t dst, int32_t n_tokens) {
    const int32_t nb = swa ? kv->n_blocks_swa : kv->n_blocks;
    if (src < 0 || src >= nb || dst < 0 || dst >= nb || n_tokens < 0 || n_tokens > kv->block_size) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_copy_block: bad block or token count");
    }
    if (src == dst || n_tokens == 0) {
        return LLM_OK;
    }
    for (uint32_t l = 0; l < kv->net->hp.n_layer; l++) {
        if (llm__kv_in_swa_group(kv, l) != swa || !kv->k[l]) {
            continue; /* the other group, or a recurrent layer (no K/V) */
        }
        const llm_tensor *t[2] = {&kv->kt[l], &kv->vt[l]};
        for (int w = 0; w < 2; w++) {
            /* ne = {head_dim, block_size, n_head_kv, n_blocks}: a block is
             * nb[3] bytes, a head's rows in it nb[2], its first n_tokens
             * rows n_tokens * nb[1]. A whole block is one copy. */
            const int whole = n_tokens == kv->block_size;
            const int64_t runs = whole ? 1 : t[w]->ne[2];
            const size_t bytes = whole ? t[w]->nb[3] : (size_t)n_tokens * t[w]->nb[1];
            for (int64_t h = 0; h < runs; h++) {
                const size_t at = t[w]->offset + (size_t)h * t[w]->nb[2];
                llm_status st = llm_buffer_copy(t[w]->buffer, at + (size_t)dst * t[w]->nb[3], t[w]->buffer,
                                                at + (size_t)src * t[w]->nb[3], bytes);
                if (st != LLM_OK) {
                    return llm__net_op(st);
                }
            }
        }
    }
    return LLM_OK;
}

llm_status llm_net_kv_copy_block(llm_net_kv *kv, int32_t src, int32_t dst, int32_t n_tokens) {
    if (!kv) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_copy_block: NULL storage");
    }
    return copy_block_group(kv, 0, src, dst, n_tokens);
}

llm_status llm_net_kv_copy_block_swa(llm_net_kv *kv, int32_t src, int32_t dst, int32_t n_tokens) {
    if (!kv || kv->n_blocks_swa == 0) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_copy_block_swa: no separate window group");
    }
    return copy_block_group(kv, 1, src, dst, n_tokens);
}

llm_status llm_net_kv_layer(const llm_net_kv *kv, int32_t layer, llm_tensor *k, llm_tensor *v) {
    if (!kv || layer < 0 || (uint32_t)layer >= kv->net->hp.n_layer || !k || !v) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_layer: bad layer");
    }
    if (!kv->k[layer]) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_layer: layer %d is recurrent: it has no K/V", layer);
    }
    *k = kv->kt[layer];
    *v = kv->vt[layer];
    return LLM_OK;
}
