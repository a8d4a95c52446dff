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

static size_t kv_elem(llm_dtype t) { return t == LLM_DTYPE_F32 ? 4 : 2; }

llm_status llm__fwd_sizes(const llm_model_desc *d, const llm__fwd_params *p, uint64_t *kv_bytes,
                          uint64_t *scratch_bytes) {
    const llm_model_hparams *hp = llm_model_desc_hparams(d);
    uint64_t per_tok = 2ull * hp->n_layer * hp->n_head_kv * hp->head_dim * kv_elem(p->kv_dtype);
    *kv_bytes = per_tok * (uint64_t)p->block_size * (uint64_t)p->n_blocks;
    /* The net's arena (libs/models/src/arch/net.c, make_arena), slot for
     * slot: per batch token the residual stream, a normed copy, a temporary,
     * q and the attention output, k and v, the two FFN halves; plus up to
     * 71 rows of logits (LOGITS_CHUNK + LOGITS_TAIL - 1), each slot aligned
     * to 64 bytes. Keep the two in step: the plan must be what is allocated. */
    uint64_t nb = (uint64_t)p->n_batch, f = 4, slots = 0;
    uint64_t QD = (uint64_t)hp->n_head * hp->head_dim, KD = (uint64_t)hp->n_head_kv * hp->head_dim;
    uint64_t sizes[] = {nb * hp->n_embd * f, nb * hp->n_embd * f, nb * hp->n_embd * f, nb * QD * f,
                        nb * QD * f, nb * KD * f, nb * KD * f, nb * hp->n_ff * f, nb * hp->n_ff * f,
                        (nb < 71 ? nb : 71) * hp->n_vocab * f};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) slots += (sizes[i] + 63) & ~63ull;
    *scratch_bytes = slots;
    return LLM_OK;
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
    np.kv_type = p->kv_dtype;
    llm_status st = llm_net_create(d, be, &np, &f->net);
    if (st == LLM_OK) st = llm_net_kv_create(f->net, p->n_blocks, p->block_size, &f->kv);
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
                        const int32_t *block_table, int32_t n_table, llm__fwd_out what, float *out,
                        const atomic_int *cancel, char *err, size_t cap) {
    llm_net_seq seq = {n, block_table, n_table};
    llm_net_batch b = llm_net_batch_default();
    b.tokens = tokens;
    b.positions = positions;
    b.n_tokens = n;
    b.seqs = &seq;
    b.n_seqs = 1;
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

llm_status llm__fwd_copy_block(llm__fwd *f, int32_t src, int32_t dst, int32_t n_tokens, char *err,
                               size_t cap) {
    void *tmp = NULL;
    size_t tmp_cap = 0;
    llm_status st = LLM_OK;
    for (int32_t l = 0; l < f->n_layer && st == LLM_OK; l++) {
        llm_tensor kv[2];
        st = llm_net_kv_layer(f->kv, l, &kv[0], &kv[1]);
        for (int w = 0; w < 2 && st == LLM_OK; w++) {
            /* ne = {head_dim, n_head_kv, block_size, n_blocks}: a block is nb[3]
             * bytes and its first n_tokens slots are n_tokens * nb[2] bytes. */
            size_t bytes = (size_t)n_tokens * kv[w].nb[2];
            if (bytes > tmp_cap) {
                void *t2 = realloc(tmp, bytes);
                if (!t2) {
                    st = LLM_ERR_NO_MEMORY;
                    break;
                }
                tmp = t2;
                tmp_cap = bytes;
            }
            st = llm_buffer_read(kv[w].buffer, kv[w].offset + (size_t)src * kv[w].nb[3], tmp, bytes);
            if (st == LLM_OK)
                st = llm_buffer_write(kv[w].buffer, kv[w].offset + (size_t)dst * kv[w].nb[3], tmp, bytes);
        }
    }
    free(tmp);
    if (st != LLM_OK) snprintf(err, cap, "KV block copy: %s", llm_status_str(st));
    return st;
}
