/*
 * arch/net.c -- a runnable network from a model descriptor: llm_net_create
 * wraps the weights (net_weights.c), loads them through the architecture's
 * tensor table (tensor_table.c) and load hook, offers them to the backend,
 * and carves the activation arena (net_plan.c). The rest of the net lives
 * beside it: K/V storage in net_kv.c, recurrent state in net_state.c, batch
 * validation and the forward's dispatch in net_forward.c, the forward
 * passes in one file per architecture.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "arch/arch_internal.h"

static llm_status make_arena(llm_net *net) {
    llm__net_arena_layout(net->arch, &net->hp, &net->p, &net->a);
    net->gather_ids = calloc((size_t)net->p.max_batch, sizeof(int32_t));
    if (net->hp.n_expert) net->moe_ids = calloc((size_t)net->p.max_batch * net->hp.n_expert_used, sizeof(int32_t));
    if (!net->gather_ids || (net->hp.n_expert && !net->moe_ids)) {
        return llm__net_err(LLM_ERR_NO_MEMORY, "out of memory");
    }
    return llm__net_op(llm_buffer_alloc(net->be, net->a.bytes, &net->arena));
}

/* Weights offered to the backend once loaded (llm__net_prepare), the LM
 * head first: the architecture's load may have tied it to the token
 * embedding (no MATMUL entry then), and it is the largest, so its file pages
 * and its copy are resident together only while nothing else is copied yet
 * (peak RSS the file's, not the file's plus the head's). */
static llm_status prepare_weights(llm_net *net) {
    llm_status st = net->output.buffer ? llm__net_prepare(net, &net->output) : LLM_OK;
    return st == LLM_OK ? llm__table_prepare(net) : st;
}

llm_status llm_net_create(const llm_model_desc *desc, llm_backend *be,
                          const llm_net_params *params, llm_net **out) {
    if (!out) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_create: out is NULL");
    }
    *out = NULL;
    if (!desc || !be) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_create: NULL descriptor or backend");
    }
    llm_net_params p = params ? *params : llm_net_default_params();
    llm_status pst = llm__net_check_params(&p, "llm_net_create");
    if (pst != LLM_OK) {
        return pst;
    }
    const llm__arch *a = llm__arch_find(llm_model_desc_arch(desc));
    if (!a) {
        return llm__net_err(LLM_ERR_UNSUPPORTED, "architecture '%s' has no forward",
                            llm_model_desc_arch(desc) ? llm_model_desc_arch(desc) : "?");
    }
    llm_net *net = calloc(1, sizeof(*net));
    if (!net) {
        return llm__net_err(LLM_ERR_NO_MEMORY, "out of memory");
    }
    net->desc = desc;
    net->arch = a;
    net->be = be;
    net->hp = *llm_model_desc_hparams(desc);
    net->p = p;
    llm_status st = llm__net_check_kv_blocks(&net->hp, &p, a->encoder, "llm_net_create");
    if (st == LLM_OK) {
        st = llm__net_wrap_files(net);
    }
    if (st == LLM_OK) {
        st = llm__table_load(net);
    }
    if (st == LLM_OK) {
        st = a->load(net);
    }
    if (st == LLM_OK) {
        st = prepare_weights(net);
    }
    if (st == LLM_OK) {
        st = make_arena(net);
    }
    if (st != LLM_OK) {
        llm_net_free(net);
        return st;
    }
    *out = net;
    return LLM_OK;
}

void llm_net_free(llm_net *net) {
    if (!net) {
        return;
    }
    llm_buffer_free(net->arena);
    for (uint32_t i = 0; i < net->n_wbufs; i++) {
        llm_buffer_free(net->wbufs[i]);
    }
    free(net->wbufs);
    for (uint32_t i = 0; i < net->n_vecs; i++) {
        llm_buffer_free(net->vecs[i]);
    }
    free(net->vecs);
    free(net->layers);
    free(net->gather_ids);
    free(net->row_ids);
    free(net->moe_ids);
    free(net);
}

const llm_model_hparams *llm_net_hparams(const llm_net *net) { return &net->hp; }
int32_t llm_net_max_batch(const llm_net *net) { return net->p.max_batch; }
int llm_net_is_encoder(const llm_net *net) { return net && net->arch->encoder; }
