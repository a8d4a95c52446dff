/* A KV sequence over the model's layer groups (engine_kv.h): the main pool
 * for the layers that attend to the whole sequence, and, for a model with
 * sliding-window layers, a window pool whose blocks are released once they
 * left every window. */
#include <stdio.h>

#include "engine_internal.h"

/* First position the window of a query at position p reads. */
static int32_t window_start(const llm_model *m, int32_t p) {
    const int32_t lo = p - m->n_swa + 1;
    return lo > 0 ? lo : 0;
}

/* Where the window group releases up to once the sequence holds n tokens:
 * the window of the next query, less one block of slack so that cutting
 * the last few tokens (a stop string's tail, regenerating a token) keeps
 * the sequence instead of recomputing it. */
static int32_t release_point(const llm_model *m, int32_t n) {
    const int32_t p = window_start(m, n) - m->block_size;
    return p > 0 ? p : 0;
}

/* A recurrent model's state slot for a new sequence (0 when none is free). */
static int32_t slot_take(llm_model *m) { return m->n_state_free > 0 ? m->state_free[--m->n_state_free] : 0; }

static void slot_give(llm_model *m, int32_t slot) {
    if (slot > 0 && m->n_state_free < m->n_state_slots) m->state_free[m->n_state_free++] = slot;
}

static llm_status slot_exhausted(const llm_model *m, char *err) {
    return llm__fail(err, LLM_ERR_EXHAUSTED,
                     "recurrent state slots exhausted: all %d are held by other sequences (raise state_seqs)",
                     m->n_state_slots);
}

llm_status llm__kvs_create(llm_model *m, llm__kvseq *s, char *err) {
    *s = LLM__KVSEQ_NONE;
    int32_t slot = 0;
    if (m->n_state_slots > 0 && (slot = slot_take(m)) == 0) return slot_exhausted(m, err);
    llm_status st = llm_kv_seq_create(m->pool, &s->id);
    if (st == LLM_OK && m->pool_swa) {
        st = llm_kv_seq_create(m->pool_swa, &s->swa);
        if (st != LLM_OK) llm_kv_seq_free(m->pool, s->id);
    }
    if (st != LLM_OK) {
        slot_give(m, slot);
        *s = LLM__KVSEQ_NONE;
        return llm__fail(err, st, "KV cache: %s", llm_kv_last_error());
    }
    s->slot = slot; /* empty: its first pass starts at position 0, which zeroes the state */
    return LLM_OK;
}

void llm__kvs_free(llm_model *m, llm__kvseq *s) {
    if (s->id >= 0) llm_kv_seq_free(m->pool, s->id);
    if (s->swa >= 0 && m->pool_swa) llm_kv_seq_free(m->pool_swa, s->swa);
    slot_give(m, s->slot);
    *s = LLM__KVSEQ_NONE;
}

llm_status llm__kvs_fork(llm_model *m, const llm__kvseq *src, llm__kvseq *out, char *err) {
    *out = LLM__KVSEQ_NONE;
    int32_t slot = 0;
    if (m->n_state_slots > 0 && (slot = slot_take(m)) == 0) return slot_exhausted(m, err);
    llm_status st = llm_kv_seq_fork(m->pool, src->id, &out->id);
    if (st == LLM_OK && m->pool_swa) {
        st = llm_kv_seq_fork(m->pool_swa, src->swa, &out->swa);
        if (st != LLM_OK) llm_kv_seq_free(m->pool, out->id);
    }
    if (st != LLM_OK) {
        slot_give(m, slot);
        *out = LLM__KVSEQ_NONE;
        return llm__fail(err, st, "KV cache: %s", llm_kv_last_error());
    }
    out->slot = slot;
    if (slot > 0) {
        char ferr[LLM__ERR_CAP];
        st = llm__fwd_state_copy(m->fwd, src->slot, slot, ferr, sizeof ferr);
        if (st != LLM_OK) {
            llm__kvs_free(m, out);
            return llm__fail(err, st, "%s", ferr);
        }
    }
    return LLM_OK;
}

int32_t llm__kvs_len(const llm_model *m, const llm__kvseq *s) {
    return s->id >= 0 ? llm_kv_seq_len(m->pool, s->id) : -1;
}

int32_t llm__kvs_keep(llm_model *m, llm__kvseq *s, int32_t n) {
    if (s->id < 0) return 0;
    if (n <= 0) {
        llm__kvs_free(m, s);
        return 0;
    }
    if (n >= llm_kv_seq_len(m->pool, s->id)) return llm_kv_seq_len(m->pool, s->id);
    /* A recurrent state holds every token up to the end: it cannot be cut. */
    if (s->slot > 0) {
        llm__kvs_free(m, s);
        return 0;
    }
    /* The next query, at position n, reads the window from window_start(n):
     * its blocks must still be held. */
    if (m->pool_swa && llm_kv_seq_first_pos(m->pool_swa, s->swa) > window_start(m, n)) {
        llm__kvs_free(m, s);
        return 0;
    }
    llm_kv_seq_truncate(m->pool, s->id, n);
    if (m->pool_swa) llm_kv_seq_truncate(m->pool_swa, s->swa, n);
    return n;
}

void llm__kvs_attach(llm_model *m, llm__kvseq *s, const int32_t *tokens, int32_t n, int32_t *n_cached) {
    int32_t got = 0;
    *n_cached = 0;
    /* Recurrent models reuse no prefix: the state after a cached block is not kept. */
    if (s->slot > 0) return;
    if (llm_kv_seq_attach_prefix(m->pool, s->id, tokens, n, &got) != LLM_OK) return;
    if (m->pool_swa) {
        int32_t got_swa = 0;
        if (got > 0 && llm_kv_seq_attach_prefix(m->pool_swa, s->swa, tokens, got, &got_swa) != LLM_OK) got_swa = 0;
        /* Reusable: what both groups hold. */
        if (got_swa < got) {
            llm_kv_seq_truncate(m->pool, s->id, got_swa);
            got = got_swa;
        }
        if (got > 0) llm_kv_seq_release_before(m->pool_swa, s->swa, release_point(m, got));
    }
    *n_cached = got;
}

static llm_status admit_one(const llm_kv_pool *pool, llm_kv_seq_id id, int32_t n, const char *what, char *err) {
    llm_kv_stats ks;
    llm_kv_pool_stats(pool, &ks);
    const int32_t need = llm_kv_seq_blocks_needed(pool, id, n);
    if (need > ks.n_free + ks.n_cached)
        return llm__fail(err, LLM_ERR_EXHAUSTED,
                         "KV cache pool%s exhausted: %d blocks needed, %d available (other sessions hold "
                         "the rest; raise kv_tokens)",
                         what, need, ks.n_free + ks.n_cached);
    return LLM_OK;
}

llm_status llm__kvs_admit(const llm_model *m, const llm__kvseq *s, int32_t n, char *err) {
    llm_status st = admit_one(m->pool, s->id, n, "", err);
    if (st == LLM_OK && m->pool_swa) {
        /* The window group releases as it goes: one pass at a time is what
         * it must hold at once. */
        const int32_t chunk = n < m->n_batch ? n : m->n_batch;
        st = admit_one(m->pool_swa, s->swa, chunk, " of the window layers", err);
    }
    return st;
}

llm_status llm__kvs_append(llm_model *m, const llm__kvseq *s, const int32_t *tokens, int32_t n, char *err) {
    const int32_t len = llm_kv_seq_len(m->pool, s->id);
    llm_kv_cow cow, cow_swa = {-1, -1, 0};
    llm_status st = llm_kv_seq_append(m->pool, s->id, tokens, n, &cow);
    if (st != LLM_OK) return llm__fail(err, st, "KV cache: %s", llm_kv_last_error());
    if (m->pool_swa) {
        st = llm_kv_seq_append(m->pool_swa, s->swa, tokens, n, &cow_swa);
        if (st != LLM_OK) {
            llm__fail(err, st, "KV cache (window layers): %s", llm_kv_last_error());
            llm_kv_seq_truncate(m->pool, s->id, len);
            return st;
        }
    }
    char ferr[LLM__ERR_CAP];
    if (cow.src >= 0) st = llm__fwd_copy_block(m->fwd, false, cow.src, cow.dst, cow.n_tokens, ferr, sizeof ferr);
    if (st == LLM_OK && cow_swa.src >= 0)
        st = llm__fwd_copy_block(m->fwd, true, cow_swa.src, cow_swa.dst, cow_swa.n_tokens, ferr, sizeof ferr);
    if (st != LLM_OK) {
        llm_kv_seq_truncate(m->pool, s->id, len);
        if (m->pool_swa) llm_kv_seq_truncate(m->pool_swa, s->swa, len);
        return llm__fail(err, st, "%s", ferr);
    }
    return LLM_OK;
}

void llm__kvs_tables(const llm_model *m, const llm__kvseq *s, llm__fwd_seq *fs) {
    llm_kv_seq_block_table(m->pool, s->id, &fs->block_table, &fs->n_table);
    fs->block_table_swa = NULL;
    fs->n_table_swa = 0;
    fs->state_slot = s->slot;
    if (m->pool_swa) llm_kv_seq_block_table(m->pool_swa, s->swa, &fs->block_table_swa, &fs->n_table_swa);
}

void llm__kvs_commit(llm_model *m, const llm__kvseq *s, int32_t n_written) {
    llm_kv_seq_commit(m->pool, s->id, n_written);
    if (m->pool_swa) {
        llm_kv_seq_commit(m->pool_swa, s->swa, n_written);
        llm_kv_seq_release_before(m->pool_swa, s->swa, release_point(m, n_written));
    }
}

void llm__kvs_usage_get(const llm_model *m, llm__kvs_usage *u) {
    llm_kv_stats ks;
    *u = (llm__kvs_usage){0};
    if (llm_kv_pool_stats(m->pool, &ks) == LLM_OK) {
        u->used = ks.n_used;
        u->cached = ks.n_cached;
        u->total = ks.n_blocks;
        u->lookups = ks.lookups;
        u->hit_blocks = ks.hit_blocks;
        u->miss_blocks = ks.miss_blocks;
    }
    if (m->pool_swa && llm_kv_pool_stats(m->pool_swa, &ks) == LLM_OK) {
        u->swa_used = ks.n_used;
        u->swa_cached = ks.n_cached;
        u->swa_total = ks.n_blocks;
    }
}
