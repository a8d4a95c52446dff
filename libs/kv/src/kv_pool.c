/* kv_pool.c -- pool life cycle, block states (free stack, LRU), stats. */
#include <stdlib.h>
#include <string.h>

#include "kv_internal.h"

void *llm__kv_realloc(llm_kv_pool *pool, void *ptr, size_t size) {
    const llm_kv_allocator *a = &pool->p.allocator;
    if (a->realloc_fn) return a->realloc_fn(a->user_data, ptr, size);
    return realloc(ptr, size);
}

void llm__kv_free(llm_kv_pool *pool, void *ptr) {
    const llm_kv_allocator *a = &pool->p.allocator;
    if (a->free_fn) {
        a->free_fn(a->user_data, ptr);
    } else {
        free(ptr);
    }
}

llm_kv_pool_params llm_kv_pool_default_params(void) {
    llm_kv_pool_params p;
    memset(&p, 0, sizeof p);
    p.n_blocks = 1024;
    p.block_size = 16;
    p.enable_prefix_cache = true;
    return p;
}

/* Allocates n * size bytes through the pool allocator, NULL on overflow. */
static void *kv_alloc_array(llm_kv_pool *pool, size_t n, size_t size) {
    if (n != 0 && size > SIZE_MAX / n) return NULL;
    return llm__kv_realloc(pool, NULL, n * size);
}

llm_status llm_kv_pool_create(const llm_kv_pool_params *params, llm_kv_pool **out) {
    if (out) *out = NULL;
    if (!params || !out) return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: NULL params or out");
    if (params->n_blocks < 1 || params->block_size < 1)
        return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: n_blocks (%d) and block_size (%d) must be >= 1",
                            (int)params->n_blocks, (int)params->block_size);
    /* Positions are int32: the whole pool must be addressable in tokens. */
    if ((int64_t)params->n_blocks * params->block_size > INT32_MAX)
        return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: n_blocks * block_size exceeds INT32_MAX tokens");
    if ((params->allocator.realloc_fn == NULL) != (params->allocator.free_fn == NULL))
        return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: allocator needs both realloc_fn and free_fn");

    llm_kv_pool tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.p = *params;
    llm_kv_pool *pool = llm__kv_realloc(&tmp, NULL, sizeof *pool);
    if (!pool) return llm__kv_fail(LLM_ERR_NO_MEMORY, "kv: out of memory creating the pool");
    *pool = tmp;

    const size_t nb = (size_t)params->n_blocks;
    uint64_t nbuckets = 16;
    while (nbuckets < nb) nbuckets <<= 1;
    pool->bucket_mask = nbuckets - 1;
    pool->blocks = kv_alloc_array(pool, nb, sizeof *pool->blocks);
    pool->tokens = kv_alloc_array(pool, nb * (size_t)params->block_size, sizeof *pool->tokens);
    pool->free_stack = kv_alloc_array(pool, nb, sizeof *pool->free_stack);
    pool->buckets = kv_alloc_array(pool, (size_t)nbuckets, sizeof *pool->buckets);
    if (!pool->blocks || !pool->tokens || !pool->free_stack || !pool->buckets) {
        llm_kv_pool_free(pool);
        return llm__kv_fail(LLM_ERR_NO_MEMORY, "kv: out of memory for %d blocks of %d tokens",
                            (int)params->n_blocks, (int)params->block_size);
    }
    memset(pool->tokens, 0, nb * (size_t)params->block_size * sizeof *pool->tokens);
    for (size_t i = 0; i < nb; i++) {
        kv_block *b = &pool->blocks[i];
        memset(b, 0, sizeof *b);
        b->lru_prev = b->lru_next = b->h_prev = b->h_next = -1;
        /* Stack order makes block 0 the first one taken: tables read naturally. */
        pool->free_stack[i] = (int32_t)(nb - 1 - i);
    }
    for (uint64_t i = 0; i < nbuckets; i++) pool->buckets[i] = -1;
    pool->n_free = params->n_blocks;
    pool->lru_head = pool->lru_tail = -1;
    pool->next_uid = 1;
    *out = pool;
    return LLM_OK;
}

void llm_kv_pool_free(llm_kv_pool *pool) {
    if (!pool) return;
    for (int32_t i = 0; i < pool->n_seq_slots; i++) {
        llm__kv_free(pool, pool->seqs[i].table);
        llm__kv_free(pool, pool->seqs[i].hash);
        llm__kv_free(pool, pool->seqs[i].uid);
    }
    llm__kv_free(pool, pool->seqs);
    llm__kv_free(pool, pool->blocks);
    llm__kv_free(pool, pool->tokens);
    llm__kv_free(pool, pool->free_stack);
    llm__kv_free(pool, pool->buckets);
    llm__kv_free(pool, pool);
}

int32_t llm_kv_pool_block_size(const llm_kv_pool *pool) { return pool ? pool->p.block_size : 0; }

/* ---- LRU list of CACHED blocks ------------------------------------------ */

static void lru_unlink(llm_kv_pool *pool, int32_t id) {
    kv_block *b = &pool->blocks[id];
    if (b->lru_prev >= 0) {
        pool->blocks[b->lru_prev].lru_next = b->lru_next;
    } else {
        pool->lru_head = b->lru_next;
    }
    if (b->lru_next >= 0) {
        pool->blocks[b->lru_next].lru_prev = b->lru_prev;
    } else {
        pool->lru_tail = b->lru_prev;
    }
    b->lru_prev = b->lru_next = -1;
    pool->n_cached--;
}

static void lru_push_tail(llm_kv_pool *pool, int32_t id) {
    kv_block *b = &pool->blocks[id];
    b->lru_prev = pool->lru_tail;
    b->lru_next = -1;
    if (pool->lru_tail >= 0) {
        pool->blocks[pool->lru_tail].lru_next = id;
    } else {
        pool->lru_head = id;
    }
    pool->lru_tail = id;
    pool->n_cached++;
}

/* ---- Block life cycle --------------------------------------------------- */

int32_t llm__kv_block_take(llm_kv_pool *pool) {
    int32_t id;
    if (pool->n_free > 0) {
        id = pool->free_stack[--pool->n_free];
    } else if (pool->lru_head >= 0) {
        /* Reclaim the least recently released cached block: its K/V is lost. */
        id = pool->lru_head;
        lru_unlink(pool, id);
        llm__kv_index_remove(pool, id);
        pool->ctr.evictions++;
    } else {
        return -1;
    }
    kv_block *b = &pool->blocks[id];
    b->ref = 1;
    b->hashable = 1;
    return id;
}

void llm__kv_block_retain(llm_kv_pool *pool, int32_t id) {
    kv_block *b = &pool->blocks[id];
    if (b->ref == 0) lru_unlink(pool, id); /* only CACHED blocks can be found with ref 0 */
    b->ref++;
}

void llm__kv_block_release(llm_kv_pool *pool, int32_t id) {
    kv_block *b = &pool->blocks[id];
    if (--b->ref > 0) return;
    if (b->indexed) {
        lru_push_tail(pool, id);
    } else {
        pool->free_stack[pool->n_free++] = id;
    }
}

static void evict_one(llm_kv_pool *pool) {
    int32_t id = pool->lru_head;
    lru_unlink(pool, id);
    llm__kv_index_remove(pool, id);
    pool->free_stack[pool->n_free++] = id;
    pool->ctr.evictions++;
}

llm_status llm_kv_pool_evict(llm_kv_pool *pool, int32_t max_blocks, int32_t *n_evicted) {
    if (n_evicted) *n_evicted = 0;
    if (!pool) return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: NULL pool");
    int32_t n = 0;
    while (pool->lru_head >= 0 && (max_blocks < 0 || n < max_blocks)) {
        evict_one(pool);
        n++;
    }
    if (n_evicted) *n_evicted = n;
    return LLM_OK;
}

/* ---- Stats and introspection -------------------------------------------- */

llm_status llm_kv_pool_stats(const llm_kv_pool *pool, llm_kv_stats *out) {
    if (!pool || !out) return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: NULL pool or out");
    *out = pool->ctr;
    out->n_blocks = pool->p.n_blocks;
    out->block_size = pool->p.block_size;
    out->n_free = pool->n_free;
    out->n_cached = pool->n_cached;
    out->n_used = pool->p.n_blocks - pool->n_free - pool->n_cached;
    out->n_indexed = pool->n_indexed;
    out->n_seqs = pool->n_live;
    const uint64_t bpb = (uint64_t)pool->p.bytes_per_token * (uint64_t)pool->p.block_size;
    out->bytes_total = bpb * (uint64_t)pool->p.n_blocks;
    out->bytes_used = bpb * (uint64_t)out->n_used;
    return LLM_OK;
}

void llm_kv_pool_reset_stats(llm_kv_pool *pool) {
    if (pool) memset(&pool->ctr, 0, sizeof pool->ctr);
}

llm_status llm_kv_pool_block_info(const llm_kv_pool *pool, int32_t block, llm_kv_block_info *out) {
    if (!pool || !out) return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: NULL pool or out");
    if (block < 0 || block >= pool->p.n_blocks)
        return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: block %d out of range [0, %d)", (int)block,
                            (int)pool->p.n_blocks);
    const kv_block *b = &pool->blocks[block];
    out->ref = b->ref;
    out->indexed = b->indexed != 0;
    out->state = b->ref > 0 ? LLM_KV_BLOCK_USED : b->indexed ? LLM_KV_BLOCK_CACHED : LLM_KV_BLOCK_FREE;
    return LLM_OK;
}
