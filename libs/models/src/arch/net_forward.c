/*
 * arch/net_forward.c -- llm_net_forward: validates a batch against the net
 * and its K/V storage (token ids, sequences, block tables, positions, an
 * encoder's whole texts), wraps a recurrent net's pass in its state
 * bookkeeping (net_state.c), and runs the architecture's forward.
 */
#include <string.h>

#include "arch/arch_internal.h"

llm_net_batch llm_net_batch_default(void) {
    llm_net_batch b;
    memset(&b, 0, sizeof(b));
    b.logits_mode = LLM_LOGITS_LAST;
    return b;
}

/* An encoder's batch: no cache, so no block tables; every sequence holds
 * positions 0..n_tokens-1 of one text (each attends only to itself). */
static llm_status encoder_forward(llm_net *net, const llm_net_batch *b) {
    if (!b->tokens || !b->positions || b->n_tokens < 1 || b->n_tokens > net->p.max_batch || !b->seqs ||
        b->n_seqs < 1) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: need 1..%d tokens and >= 1 sequence",
                            net->p.max_batch);
    }
    if (b->logits_mode != LLM_LOGITS_NONE || !b->hidden) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: %s is an encoder: hidden states only",
                            net->arch->tag);
    }
    int64_t total = 0;
    for (int32_t s = 0; s < b->n_seqs; s++) {
        const int32_t ns = b->seqs[s].n_tokens;
        if (ns < 1 || ns > b->n_tokens - total) {
            return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequence %d is empty or too long", s);
        }
        for (int32_t i = 0; i < ns; i++) {
            if (b->positions[total + i] != i) {
                return llm__net_err(LLM_ERR_INVALID_ARG,
                                    "llm_net_forward: an encoder's sequence %d must hold positions 0..%d", s, ns - 1);
            }
        }
        total += ns;
    }
    if (total != b->n_tokens) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequences cover %lld of %d tokens",
                            (long long)total, b->n_tokens);
    }
    for (int32_t i = 0; i < b->n_tokens; i++) {
        if (b->tokens[i] < 0 || (uint32_t)b->tokens[i] >= net->hp.n_vocab) {
            return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: token %d out of range", b->tokens[i]);
        }
    }
    return net->arch->forward(net, NULL, b);
}

llm_status llm_net_forward(llm_net *net, llm_net_kv *kv, const llm_net_batch *b) {
    if (net && b && net->arch->encoder) {
        return encoder_forward(net, b);
    }
    if (!net || !kv || !b || kv->net != net) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: NULL or mismatched net/kv/batch");
    }
    if (!b->tokens || !b->positions || b->n_tokens < 1 || b->n_tokens > net->p.max_batch ||
        !b->seqs || b->n_seqs < 1) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: need 1..%d tokens and >= 1 sequence",
                            net->p.max_batch);
    }
    if (b->logits_mode != LLM_LOGITS_NONE && b->logits_mode != LLM_LOGITS_LAST &&
        b->logits_mode != LLM_LOGITS_ALL) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: bad logits_mode");
    }
    if (b->logits_mode != LLM_LOGITS_NONE && !b->logits) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: logits is NULL");
    }
    int64_t total = 0;
    for (int32_t s = 0; s < b->n_seqs; s++) {
        const llm_net_seq *sq = &b->seqs[s];
        if (sq->n_tokens < 1 || !sq->block_table || sq->n_table < 1) {
            return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequence %d is empty", s);
        }
        for (int32_t i = 0; i < sq->n_table; i++) {
            if (sq->block_table[i] < 0 || sq->block_table[i] >= kv->n_blocks) {
                return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: block %d out of range",
                                    sq->block_table[i]);
            }
        }
        for (int32_t i = 0; i < sq->n_tokens; i++) {
            int32_t p = b->positions[total + i];
            if (p < 0 || p / kv->block_size >= sq->n_table) {
                return llm__net_err(LLM_ERR_INVALID_ARG,
                                    "llm_net_forward: position %d outside sequence %d's blocks", p, s);
            }
        }
        if (kv->n_blocks_swa > 0) {
            /* The window group's table: released entries (-1) are allowed;
             * the attention op checks those its window reads. */
            if (!sq->block_table_swa || sq->n_table_swa < 1) {
                return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequence %d has no window table", s);
            }
            for (int32_t i = 0; i < sq->n_table_swa; i++) {
                if (sq->block_table_swa[i] < -1 || sq->block_table_swa[i] >= kv->n_blocks_swa) {
                    return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: window block %d out of range",
                                        sq->block_table_swa[i]);
                }
            }
            for (int32_t i = 0; i < sq->n_tokens; i++) {
                const int32_t p = b->positions[total + i];
                if (p / kv->block_size >= sq->n_table_swa || sq->block_table_swa[p / kv->block_size] < 0) {
                    return llm__net_err(LLM_ERR_INVALID_ARG,
                                        "llm_net_forward: position %d outside sequence %d's window blocks", p, s);
                }
            }
        }
        total += sq->n_tokens;
    }
    if (total != b->n_tokens) {
        return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: sequences cover %lld of %d tokens",
                            (long long)total, b->n_tokens);
    }
    for (int32_t i = 0; i < b->n_tokens; i++) {
        if (b->tokens[i] < 0 || (uint32_t)b->tokens[i] >= net->hp.n_vocab) {
            return llm__net_err(LLM_ERR_INVALID_ARG, "llm_net_forward: token %d out of range",
                                b->tokens[i]);
        }
    }
    if (!llm_net_is_recurrent(net)) {
        return net->arch->forward(net, kv, b);
    }
    llm_status st = llm__net_state_begin(kv, b);
    if (st == LLM_OK) {
        st = net->arch->forward(net, kv, b);
    }
    /* Only a whole pass leaves valid states (llm__net_state_begin invalidated them). */
    if (st == LLM_OK) llm__net_state_end(kv, b);
    return st;
}
