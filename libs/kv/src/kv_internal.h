/* kv_internal.h -- private structures of libs/kv, shared by its sources. */
#ifndef LLM_KV_INTERNAL_H
#define LLM_KV_INTERNAL_H

#include <stdint.h>

#include "llama/error.h"
#include "llama/kv.h"

/* Per physical block metadata. A block is FREE (ref 0, !indexed, on the free
 * stack), USED (ref > 0) or CACHED (ref 0, indexed, on the LRU list). */
typedef struct kv_block {
    uint64_t hash;        /* chain hash h(i); valid when indexed */
    uint64_t uid;         /* unique identity of this index entry; valid when indexed */
    uint64_t parent_uid;  /* uid of the parent entry, 0 for a first block; valid when indexed */
    int32_t ref;          /* table entries holding this block */
    int32_t lru_prev;     /* LRU neighbours when CACHED, else -1 */
    int32_t lru_next;
    int32_t h_prev;       /* index bucket chain neighbours when indexed, else -1 */
    int32_t h_next;
    uint8_t indexed;
    uint8_t hashable;     /* every id written into the block is known */
} kv_block;

/* One sequence. Entries [0, n_entries) of table are in use, with
 * n_entries = ceil(len / block_size); entries [0, first) are LLM_KV_NO_BLOCK.
 * hash[i] and uid[i] hold the chain hash and the index entry identity of
 * logical block i for i < n_hashed (the committed prefix), even if the entry
 * is later released: commit continues the chain from them. */
typedef struct kv_seq {
    int32_t *table;      /* [cap] physical block id per logical block */
    uint64_t *hash;      /* [cap] chain hash per logical block, i < n_hashed */
    uint64_t *uid;       /* [cap] index identity per logical block, i < n_hashed */
    int32_t cap;
    int32_t len;         /* tokens */
    int32_t first;       /* first logical block not released by the window */
    int32_t n_hashed;    /* leading full blocks committed */
    uint8_t live;
} kv_seq;

struct llm_kv_pool {
    llm_kv_pool_params p;
    kv_block *blocks;    /* [n_blocks] */
    int32_t *tokens;     /* [n_blocks][block_size] ids written into each block */
    int32_t *free_stack; /* [n_blocks] ids of FREE blocks, top at n_free - 1 */
    int32_t n_free;
    int32_t lru_head;    /* least recently released CACHED block, evicted first; -1 if none */
    int32_t lru_tail;    /* most recently released */
    int32_t n_cached;
    int32_t n_indexed;
    int32_t *buckets;    /* [bucket_mask + 1] head of each hash chain, -1 if empty */
    uint64_t bucket_mask;
    uint64_t next_uid;   /* next index identity; 0 is reserved for "root" */
    kv_seq *seqs;        /* [n_seq_slots] */
    int32_t n_seq_slots;
    int32_t n_live;
    llm_kv_stats ctr;    /* counters part only (lookups..exhausted) */
};

/* Records the message in this thread's kv slot and returns st (kv_error.c). */
LLM__PRINTF(2, 3) llm_status llm__kv_fail(llm_status st, const char *fmt, ...);

/* The pool's allocator (kv_pool.c). */
void *llm__kv_realloc(llm_kv_pool *pool, void *ptr, size_t size);
void llm__kv_free(llm_kv_pool *pool, void *ptr);

/* Block life cycle (kv_pool.c). */
int32_t llm__kv_block_take(llm_kv_pool *pool); /* FREE or evicted block with ref 1; -1 if none */
void llm__kv_block_retain(llm_kv_pool *pool, int32_t b);
void llm__kv_block_release(llm_kv_pool *pool, int32_t b);

/* Prefix index (kv_index.c). */
uint64_t llm__kv_hash(const llm_kv_pool *pool, const int32_t *tokens, uint64_t seed);
int32_t llm__kv_index_find(const llm_kv_pool *pool, uint64_t hash, uint64_t parent_uid,
                           const int32_t *tokens);
void llm__kv_index_insert(llm_kv_pool *pool, int32_t b, uint64_t hash, uint64_t parent_uid);
void llm__kv_index_remove(llm_kv_pool *pool, int32_t b);
/* Walks the index along tokens ([n_tokens]) block by block and returns the
 * number of matching leading full blocks; if table is given (with hash and
 * uid, each long enough) the matches are written there. */
int32_t llm__kv_index_walk(const llm_kv_pool *pool, const int32_t *tokens, int32_t n_tokens,
                           int32_t *table, uint64_t *hash, uint64_t *uid);

static inline int32_t *llm__kv_block_tokens(const llm_kv_pool *pool, int32_t b) {
    return pool->tokens + (size_t)b * (size_t)pool->p.block_size;
}

#endif /* LLM_KV_INTERNAL_H */
