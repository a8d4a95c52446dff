/* kv_index.c -- the prefix index: chained block hashes, lookup, attach, commit.
 *
 * The index is a hash table of blocks keyed by the chain hash h(i) (see
 * llama/kv.h), chained through kv_block.h_prev/h_next so that it needs no
 * memory beyond one bucket array sized at pool creation. An entry matches a
 * query only if hash, parent identity and token ids are all equal: the parent
 * identity (uid) pins the whole prefix, the token compare pins the block, so
 * colliding hashes degrade speed, never correctness.
 */
#include <string.h>

#include <xxhash.h>

#include "kv_internal.h"

uint64_t llm__kv_hash(const llm_kv_pool *pool, const int32_t *tokens, uint64_t seed) {
    const int32_t bs = pool->p.block_size;
    if (pool->p.hash_fn) return pool->p.hash_fn(tokens, bs, seed, pool->p.hash_user_data);
    return XXH3_64bits_withSeed(tokens, (size_t)bs * sizeof *tokens, seed);
}

int32_t llm__kv_index_find(const llm_kv_pool *pool, uint64_t hash, uint64_t parent_uid,
                           const int32_t *tokens) {
    const size_t nbytes = (size_t)pool->p.block_size * sizeof *tokens;
    for (int32_t id = pool->buckets[hash & pool->bucket_mask]; id >= 0; id = pool->blocks[id].h_next) {
        const kv_block *b = &pool->blocks[id];
        if (b->hash == hash && b->parent_uid == parent_uid &&
            memcmp(llm__kv_block_tokens(pool, id), tokens, nbytes) == 0)
            return id;
    }
    return -1;
}

void llm__kv_index_insert(llm_kv_pool *pool, int32_t id, uint64_t hash, uint64_t parent_uid) {
    kv_block *b = &pool->blocks[id];
    int32_t *head = &pool->buckets[hash & pool->bucket_mask];
    b->hash = hash;
    b->uid = pool->next_uid++;
    b->parent_uid = parent_uid;
    b->indexed = 1;
    b->h_prev = -1;
    b->h_next = *head;
    if (*head >= 0) pool->blocks[*head].h_prev = id;
    *head = id;
    pool->n_indexed++;
}

void llm__kv_index_remove(llm_kv_pool *pool, int32_t id) {
    kv_block *b = &pool->blocks[id];
    if (!b->indexed) return;
    if (b->h_prev >= 0) {
        pool->blocks[b->h_prev].h_next = b->h_next;
    } else {
        pool->buckets[b->hash & pool->bucket_mask] = b->h_next;
    }
    if (b->h_next >= 0) pool->blocks[b->h_next].h_prev = b->h_prev;
    b->h_prev = b->h_next = -1;
    b->indexed = 0;
    b->uid = 0;
    pool->n_indexed--;
}

/* Walks the index along tokens ([n_tokens]) block by block and returns the
 * number of matching leading full blocks. If s is given (its table already
 * large enough), the matches are written into its table, hash and uid. */
static int32_t walk_prefix(const llm_kv_pool *pool, const int32_t *tokens, int32_t n_tokens,
                           kv_seq *s) {
    const int32_t bs = pool->p.block_size;
    const int32_t n_full = n_tokens / bs;
    uint64_t seed = pool->p.hash_seed;
    uint64_t parent = 0;
    int32_t i = 0;
    for (; i < n_full; i++) {
        const int32_t *t = tokens + (size_t)i * (size_t)bs;
        const uint64_t h = llm__kv_hash(pool, t, seed);
        const int32_t id = llm__kv_index_find(pool, h, parent, t);
        if (id < 0) break;
        if (s) {
            s->table[i] = id;
            s->hash[i] = h;
            s->uid[i] = pool->blocks[id].uid;
        }
        seed = h;
        parent = pool->blocks[id].uid;
    }
    return i;
}

llm_status llm_kv_prefix_lookup(const llm_kv_pool *pool, const int32_t *tokens, int32_t n_tokens,
                                int32_t *n_cached) {
    if (n_cached) *n_cached = 0;
    if (!pool || !n_cached || n_tokens < 0 || (n_tokens > 0 && !tokens))
        return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: prefix_lookup: bad argument");
    if (!pool->p.enable_prefix_cache) return LLM_OK;
    *n_cached = walk_prefix(pool, tokens, n_tokens, NULL) * pool->p.block_size;
    return LLM_OK;
}

llm_status llm_kv_seq_attach_prefix(llm_kv_pool *pool, llm_kv_seq_id seq, const int32_t *tokens,
                                    int32_t n_tokens, int32_t *n_cached) {
    if (n_cached) *n_cached = 0;
    if (!pool || !n_cached || n_tokens < 0 || (n_tokens > 0 && !tokens))
        return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: attach_prefix: bad argument");
    kv_seq *s = llm__kv_seq_get(pool, seq);
    if (!s) return LLM_ERR_INVALID_ARG;
    if (s->len != 0)
        return llm__kv_fail(LLM_ERR_STATE, "kv: attach_prefix: sequence %d is not empty (%d tokens)",
                            (int)seq, (int)s->len);
    if (!pool->p.enable_prefix_cache) return LLM_OK;
    const int32_t bs = pool->p.block_size;
    const int32_t n_full = n_tokens / bs;
    /* Grow first so that a failure leaves everything as it was. */
    llm_status st = llm__kv_seq_grow(pool, s, n_full);
    if (st != LLM_OK) return st;
    const int32_t hits = walk_prefix(pool, tokens, n_tokens, s);
    for (int32_t i = 0; i < hits; i++) llm__kv_block_retain(pool, s->table[i]);
    s->first = 0;
    s->len = hits * bs;
    s->n_hashed = hits;
    pool->ctr.lookups++;
    pool->ctr.hit_blocks += (uint64_t)hits;
    pool->ctr.miss_blocks += (uint64_t)(n_full - hits);
    *n_cached = s->len;
    return LLM_OK;
}

llm_status llm_kv_seq_commit(llm_kv_pool *pool, llm_kv_seq_id seq, int32_t n_written) {
    if (!pool) return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: NULL pool");
    kv_seq *s = llm__kv_seq_get(pool, seq);
    if (!s) return LLM_ERR_INVALID_ARG;
    if (n_written < 0 || n_written > s->len)
        return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: commit: n_written %d outside [0, %d]",
                            (int)n_written, (int)s->len);
    if (!pool->p.enable_prefix_cache) return LLM_OK;
    const int32_t n_full = n_written / pool->p.block_size;
    for (int32_t i = s->n_hashed; i < n_full; i++) {
        if (i < s->first) break; /* released by the window before commit: chain ends */
        const int32_t id = s->table[i];
        kv_block *b = &pool->blocks[id];
        if (!b->hashable) break;
        const int32_t *t = llm__kv_block_tokens(pool, id);
        const uint64_t seed = i > 0 ? s->hash[i - 1] : pool->p.hash_seed;
        const uint64_t parent = i > 0 ? s->uid[i - 1] : 0;
        const uint64_t h = llm__kv_hash(pool, t, seed);
        uint64_t uid;
        if (b->indexed) {
            /* Shared with a sequence that committed it first (fork): same
             * content, same prefix, so its entry stands for this block too. */
            uid = b->uid;
        } else {
            const int32_t e = llm__kv_index_find(pool, h, parent, t);
            if (e >= 0) {
                /* Same prefix computed twice: keep the older entry, this block
                 * stays private and returns to the free list when released. */
                uid = pool->blocks[e].uid;
            } else {
                llm__kv_index_insert(pool, id, h, parent);
                uid = b->uid;
            }
        }
        s->hash[i] = h;
        s->uid[i] = uid;
        s->n_hashed = i + 1;
    }
    return LLM_OK;
}
