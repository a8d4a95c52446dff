/*
 * arch/net_state.c -- the recurrent state of hybrid nets (qwen35's Gated
 * DeltaNet layers): a pool of slots in the K/V handle, each holding every
 * recurrent layer's convolution and delta-rule state and the position it
 * reached, and the bookkeeping around a forward (llm__net_state_begin /
 * llm__net_state_end) that keeps a slot valid only after a whole pass.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>

#include "arch/arch_internal.h"

int llm_net_is_recurrent(const llm_net *net) { return net && !net->arch->encoder && net->hp.ssm_n_layer > 0; }

size_t llm_net_state_bytes(const llm_net *net) {
    if (!llm_net_is_recurrent(net)) return 0;
    return (llm__ssm_conv_bytes(&net->hp) + llm__ssm_delta_bytes(&net->hp)) * net->hp.ssm_n_layer;
}

llm_status llm_net_kv_state_alloc(llm_net_kv *kv, int32_t n_slots) {
    if (!kv || !llm_net_is_recurrent(kv->net) || n_slots < 1 || kv->state) {
        return llm__net_err(LLM_ERR_INVALID_ARG,
                            "llm_net_kv_state_alloc: needs a recurrent net, n_slots >= 1, and no slots yet");
    }
    const size_t bytes = llm_net_state_bytes(kv->net);
    if ((size_t)n_slots + 1 > SIZE_MAX / bytes) return llm__net_err(LLM_ERR_NO_MEMORY, "recurrent state too large");
    kv->state_pos = malloc(((size_t)n_slots + 1) * sizeof(int32_t));
    if (!kv->state_pos) return llm__net_err(LLM_ERR_NO_MEMORY, "out of memory");
    for (int32_t i = 0; i <= n_slots; i++) kv->state_pos[i] = -1;
    /* Region 0 stays zero: a sequence starting at position 0 copies it over its slot. */
    llm_status st = llm__net_op(llm_buffer_alloc(kv->net->be, bytes * ((size_t)n_slots + 1), &kv->state));
    if (st != LLM_OK) {
        free(kv->state_pos);
        kv->state_pos = NULL;
        kv->state = NULL;
        return st;
    }
    kv->n_state_slots = n_slots;
    kv->state_slot_bytes = bytes;
    return LLM_OK;
}

int32_t llm_net_kv_state_slots(const llm_net_kv *kv) { return kv ? kv->n_state_slots : 0; }

llm_status llm_net_kv_state_copy(llm_net_kv *kv, int32_t src, int32_t dst) {
    if (!kv || src < 1 || src > kv->n_state_slots || dst < 1 || dst > kv->n_state_slots) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_kv_state_copy: slot out of range");
    }
    if (src == dst) return LLM_OK;
    kv->state_pos[dst] = -1;
    if (kv->state_pos[src] < 0) return LLM_OK; /* nothing valid to copy */
    llm_status st = llm_buffer_copy(kv->state, (size_t)dst * kv->state_slot_bytes, kv->state,
                                    (size_t)src * kv->state_slot_bytes, kv->state_slot_bytes);
    if (st != LLM_OK) return llm__net_op(st);
    kv->state_pos[dst] = kv->state_pos[src];
    return LLM_OK;
}

int32_t llm_net_kv_state_pos(const llm_net_kv *kv, int32_t slot) {
    return kv && slot >= 1 && slot <= kv->n_state_slots ? kv->state_pos[slot] : -1;
}

/* A recurrent net's sequences: each has its own state slot, consecutive
 * positions, and starts at 0 (the slot is zeroed) or where its slot stopped.
 * Every slot of the batch is then marked invalid until the pass completes. */
llm_status llm__net_state_begin(llm_net_kv *kv, const llm_net_batch *b) {
    int64_t t0 = 0;
    for (int32_t s = 0; s < b->n_seqs; s++) {
        const llm_net_seq *sq = &b->seqs[s];
        const int32_t slot = b->state_slots ? b->state_slots[s] : 0, p0 = b->positions[t0];
        if (slot < 1 || slot > kv->n_state_slots) {
            return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequence %d has no recurrent state slot "
                                "(%d of %d)", s, slot, kv->n_state_slots);
        }
        for (int32_t o = 0; o < s; o++) {
            if (b->state_slots[o] == slot) {
                return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequences %d and %d share state slot %d",
                                    o, s, slot);
            }
        }
        for (int32_t i = 1; i < sq->n_tokens; i++) {
            if (b->positions[t0 + i] != p0 + i) {
                return llm__net_err(LLM_ERR_INVALID_ARG,
                                    "llm_net_forward: a recurrent net needs consecutive positions (sequence %d)", s);
            }
        }
        if (p0 != 0 && kv->state_pos[slot] != p0) {
            return llm__net_err(LLM_ERR_INVALID_ARG,
                                "llm_net_forward: sequence %d starts at %d but its recurrent state is at %d "
                                "(recompute it from position 0)", s, p0, kv->state_pos[slot]);
        }
        t0 += sq->n_tokens;
    }
    t0 = 0;
    for (int32_t s = 0; s < b->n_seqs; s++) {
        const int32_t slot = b->state_slots[s];
        kv->state_pos[slot] = -1;
        if (b->positions[t0] == 0) {
            llm_status st = llm_buffer_copy(kv->state, (size_t)slot * kv->state_slot_bytes, kv->state, 0,
                                            kv->state_slot_bytes);
            if (st != LLM_OK) return llm__net_op(st);
        }
        t0 += b->seqs[s].n_tokens;
    }
    return LLM_OK;
}

void llm__net_state_end(llm_net_kv *kv, const llm_net_batch *b) {
    int64_t t0 = 0;
    for (int32_t s = 0; s < b->n_seqs; s++) {
        t0 += b->seqs[s].n_tokens;
        kv->state_pos[b->state_slots[s]] = b->positions[t0 - 1] + 1;
    }
}
