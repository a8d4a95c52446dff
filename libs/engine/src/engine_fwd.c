/* Forward adapter over libs/models' runnable network (llama/arch.h):
 * one llm_net with its activation arena, and one paged K/V storage shared by
 * every session of the model (block ids come from libs/kv). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/arch.h"

#include "engine_fwd.h"

struct llm__fwd {
    llm_net *net;
    llm_net_kv *kv;
    llm__fwd_params p;
    int32_t n_layer, n_vocab;
};

llm_status llm__fwd_sizes(const llm_model_desc *d, const llm__fwd_params *p, uint64_t *kv_bytes,
                          uint64_t *scratch_bytes) {
    /* The net reports what it allocates (llm_net_plan): the same code carves
     * the arena and sizes the K/V storage. */
    llm_net_params np = llm_net_default_params();
    np.max_batch = p->n_batch;
    np.type_k = p->type_k;
    np.type_v = p->type_v;
    llm_net_memory m;
    llm_status st = llm_net_plan(d, &np, &m);
    if (st != LLM_OK) return st;
    const uint64_t swa = p->n_blocks_swa > 0 ? m.kv_bytes_per_token_swa : 0;
    *kv_bytes = (uint64_t)(m.kv_bytes_per_token - swa) * (uint64_t)p->block_size * (uint64_t)p->n_blocks +
                swa * (uint64_t)p->block_size * (uint64_t)p->n_blocks_swa;
    *kv_bytes += (uint64_t)m.state_bytes * (uint64_t)(p->n_state_slots + 1); /* + the zero region */
    *scratch_bytes = (uint64_t)m.arena_bytes + (uint64_t)m.host_bytes;
    return LLM_OK;
}

void llm__fwd_token_bytes(const llm_model_desc *d, const llm__fwd_params *p, size_t *main_bytes,
                          size_t *swa_bytes) {
    llm_net_params np = llm_net_default_params();
    np.max_batch = p->n_batch;
    np.type_k = p->type_k;
    np.type_v = p->type_v;
    llm_net_memory m;
    *main_bytes = *swa_bytes = 0;
    if (llm_net_plan(d, &np, &m) != LLM_OK) return;
    *swa_bytes = p->n_blocks_swa > 0 ? m.kv_bytes_per_token_swa : 0;
    *main_bytes = m.kv_bytes_per_token - *swa_bytes;
}

int32_t llm__fwd_window(const llm_model_desc *d) {
    llm_net_memory m;
    if (llm_net_plan(d, NULL, &m) != LLM_OK) return 0;
    return m.n_layer_swa > 0 ? m.n_swa : 0;
}

static int poll_cancel(void *user) { return atomic_load((const atomic_int *)user) != 0; }

llm_status llm__fwd_create(const llm_model_desc *d, llm_backend *be, const llm__fwd_params *p,
                           llm__fwd **out, char *err, size_t cap) {
    *out = NULL;
    if (!llm_net_supports_arch(llm_model_desc_arch(d))) {
        snprintf(err, cap, "architecture '%s' has no forward pass yet", llm_model_desc_arch(d));
        return LLM_ERR_UNSUPPORTED;
    }
    llm__fwd *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, cap, "out of memory");
        return LLM_ERR_NO_MEMORY;
    }
    f->p = *p;
    llm_net_params np = llm_net_default_params();
    np.max_batch = p->n_batch;
    np.type_k = p->type_k;
    np.type_v = p->type_v;
    np.n_ctx_seq = p->n_ctx; /* phi3 longrope picks its RoPE factors by it */
    llm_status st = llm_net_create(d, be, &np, &f->net);
    /* An encoder has no KV cache (its batches go through llm__fwd_encode). */
    if (st == LLM_OK && !llm_net_is_encoder(f->net))
        st = llm_net_kv_create_swa(f->net, p->n_blocks, p->n_blocks_swa, p->block_size, &f->kv);
    /* A recurrent model's per-sequence states (engine_kv.c hands the slots out). */
    if (st == LLM_OK && llm_net_is_recurrent(f->net)) st = llm_net_kv_state_alloc(f->kv, p->n_state_slots);
    if (st != LLM_OK) {
        snprintf(err, cap, "%s", llm_net_last_error());
        llm__fwd_free(f);
        return st;
    }
    f->n_layer = (int32_t)llm_net_hparams(f->net)->n_layer;
    f->n_vocab = (int32_t)llm_net_hparams(f->net)->n_vocab;
    *out = f;
    return LLM_OK;
}

void llm__fwd_free(llm__fwd *f) {
    if (!f) return;
    llm_net_kv_free(f->kv);
    llm_net_free(f->net);
    free(f);
}

llm_status llm__fwd_run(llm__fwd *f, const int32_t *tokens, const int32_t *positions, int32_t n,
                        const llm__fwd_seq *fs, llm__fwd_out what, float *out,
                        const atomic_int *cancel, char *err, size_t cap) {
    llm_net_seq seq = {n, fs->block_table, fs->n_table, fs->block_table_swa, fs->n_table_swa};
    llm_net_batch b = llm_net_batch_default();
    b.tokens = tokens;
    b.positions = positions;
    b.n_tokens = n;
    b.seqs = &seq;
    b.n_seqs = 1;
    b.state_slots = &fs->state_slot;
    if (what == LLM__FWD_LOGITS_LAST) {
        b.logits_mode = LLM_LOGITS_LAST;
        b.logits = out;
    } else if (what == LLM__FWD_LOGITS_ALL) {
        b.logits_mode = LLM_LOGITS_ALL;
        b.logits = out;
    } else {
        b.logits_mode = LLM_LOGITS_NONE;
        b.hidden = out;
    }
    if (cancel) {
        b.cancel = poll_cancel;
        b.cancel_user = (void *)(uintptr_t)cancel;
    }
    llm_status st = llm_net_forward(f->net, f->kv, &b);
    if (st != LLM_OK) snprintf(err, cap, "%s", st == LLM_CANCELLED ? "cancelled" : llm_net_last_error());
    return st;
}

bool llm__fwd_is_encoder(const llm__fwd *f) { return llm_net_is_encoder(f->net) != 0; }

llm_status llm__fwd_encode(llm__fwd *f, const int32_t *tokens, const int32_t *positions, int32_t n,
                           const int32_t *seq_lens, int32_t n_seqs, float *hidden, const atomic_int *cancel,
                           char *err, size_t cap) {
    llm_net_seq stack[64];
    llm_net_seq *seqs = n_seqs <= 64 ? stack : malloc((size_t)n_seqs * sizeof *seqs);
    if (!seqs) {
        snprintf(err, cap, "out of memory");
        return LLM_ERR_NO_MEMORY;
    }
    for (int32_t s = 0; s < n_seqs; s++) seqs[s] = (llm_net_seq){seq_lens[s], NULL, 0, NULL, 0};
    llm_net_batch b = llm_net_batch_default();
    b.tokens = tokens;
    b.positions = positions;
    b.n_tokens = n;
    b.seqs = seqs;
    b.n_seqs = n_seqs;
    b.logits_mode = LLM_LOGITS_NONE;
    b.hidden = hidden;
    if (cancel) {
        b.cancel = poll_cancel;
        b.cancel_user = (void *)(uintptr_t)cancel;
    }
    llm_status st = llm_net_forward(f->net, NULL, &b);
    if (st != LLM_OK) snprintf(err, cap, "%s", st == LLM_CANCELLED ? "cancelled" : llm_net_last_error());
    if (seqs != stack) free(seqs);
    return st;
}

llm_status llm__fwd_run_seqs(llm__fwd *f, const int32_t *tokens, const int32_t *positions, int32_t n,
                             const llm__fwd_seq *seqs, int32_t n_seqs, float *logits, char *err, size_t cap) {
    llm_net_seq *ns = malloc((size_t)n_seqs * sizeof *ns);
    int32_t *slots = malloc((size_t)n_seqs * sizeof *slots); /* each sequence's own state slot */
    if (!ns || !slots) {
        free(ns);
        free(slots);
        snprintf(err, cap, "out of memory");
        return LLM_ERR_NO_MEMORY;
    }
    for (int32_t i = 0; i < n_seqs; i++) {
        ns[i] = (llm_net_seq){seqs[i].n, seqs[i].block_table, seqs[i].n_table, seqs[i].block_table_swa,
                              seqs[i].n_table_swa};
        slots[i] = seqs[i].state_slot;
    }
    llm_net_batch b = llm_net_batch_default();
    b.tokens = tokens;
    b.positions = positions;
    b.n_tokens = n;
    b.seqs = ns;
    b.n_seqs = n_seqs;
    b.state_slots = slots;
    b.logits_mode = LLM_LOGITS_LAST;
    b.logits = logits;
    llm_status st = llm_net_forward(f->net, f->kv, &b);
    if (st != LLM_OK) snprintf(err, cap, "%s", llm_net_last_error());
    free(ns);
    free(slots);
    return st;
}

llm_status llm__fwd_copy_block(llm__fwd *f, bool swa, int32_t src, int32_t dst, int32_t n_tokens, char *err,
                               size_t cap) {
    llm_status st = swa ? llm_net_kv_copy_block_swa(f->kv, src, dst, n_tokens) /* on the backend */
                        : llm_net_kv_copy_block(f->kv, src, dst, n_tokens);
    if (st != LLM_OK) snprintf(err, cap, "KV block copy: %s", llm_net_last_error());
    return st;
}

llm_status llm__fwd_state_copy(llm__fwd *f, int32_t src, int32_t dst, char *err, size_t cap) {
    llm_status st = llm_net_kv_state_copy(f->kv, src, dst); /* on the backend */
    if (st != LLM_OK) snprintf(err, cap, "recurrent state copy: %s", llm_net_last_error());
    return st;
}
