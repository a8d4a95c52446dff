/* kv_index.c -- the prefix index: chained block hashes, find/insert/remove,
 * the walk along a prompt, and llm_kv_prefix_lookup. It knows blocks, not
 * sequences: attach and commit (kv_seq.c) call it, never the other way.
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

int32_t llm__kv_index_walk(const llm_kv_pool *pool, const int32_t *tokens, int32_t n_tokens,
                           int32_t *table, uint64_t *hash, uint64_t *uid) {
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
        if (table) {
            table[i] = id;
            hash[i] = h;
            uid[i] = pool->blocks[id].uid;
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
    *n_cached = llm__kv_index_walk(pool, tokens, n_tokens, NULL, NULL, NULL) * pool->p.block_size;
    return LLM_OK;
}
