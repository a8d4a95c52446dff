/*
 * llama/kv.h -- device-free bookkeeping of a paged KV cache with prefix caching.
 *
 * The K/V tensors live in runtime buffers that libs/models allocates and sizes
 * (llm_net_plan in llama/arch.h reports the bytes per token). This
 * library only decides WHICH physical block holds which positions of which
 * sequence. Attention reads a sequence through its block table: an int32 array
 * mapping logical block i (positions [i*block_size, (i+1)*block_size)) to a
 * physical block id in [0, n_blocks), plus block_size and the sequence length.
 *
 * Usage (one prompt with prefix reuse, then decode; error handling elided):
 *
 *     llm_kv_pool_params pp = llm_kv_pool_default_params();
 *     pp.n_blocks = 4096; pp.block_size = 16;
 *     llm_kv_pool *pool; llm_kv_pool_create(&pp, &pool);
 *
 *     llm_kv_seq_id s; llm_kv_seq_create(pool, &s);
 *     int32_t done;                      // tokens whose K/V is already cached
 *     llm_kv_seq_attach_prefix(pool, s, prompt, n_prompt - 1, &done);
 *     llm_kv_cow cow;
 *     st = llm_kv_seq_append(pool, s, prompt + done, n_prompt - done, &cow);
 *     if (st == LLM_ERR_EXHAUSTED) { ... reject or defer this request ... }
 *     if (cow.src >= 0) device_copy_block(cow.src, cow.dst, cow.n_tokens);
 *     const int32_t *tbl; int32_t n_tbl;
 *     llm_kv_seq_block_table(pool, s, &tbl, &n_tbl);
 *     forward(positions done..n_prompt-1, tbl, pp.block_size);  // writes K/V
 *     llm_kv_seq_commit(pool, s, n_prompt);     // full blocks -> prefix index
 *     // decode: append the sampled token, copy if told, forward, commit.
 *     llm_kv_seq_free(pool, s);    // full committed blocks stay cached (LRU)
 *     llm_kv_pool_free(pool);
 *
 * Block states. Every physical block is in exactly one state:
 *   FREE   ref 0, not in the prefix index (on the free list);
 *   USED   ref > 0: held by that many block-table entries (of one or more
 *          sequences; a block appears at most once per sequence);
 *   CACHED ref 0, in the prefix index, on the LRU list: its K/V is kept for
 *          future prefix hits and it is evicted (least recently released
 *          first) when a new block is needed and the free list is empty.
 *
 * Prefix hash scheme (exact). For full logical block i of a sequence with
 * token ids t[0..], the chain hash is
 *     h(-1) = params.hash_seed                                (default 0)
 *     h(i)  = XXH3_64bits_withSeed(&t[i*B], B * sizeof(int32_t), h(i-1))
 * where B is block_size and the ids are hashed as int32 in host byte order.
 * The index is keyed by h(i), but an entry only matches when its stored token
 * ids equal the block's ids AND its parent entry is the entry matched for
 * block i-1 (each index entry has a unique 64-bit identity; an entry records
 * its parent's). So a hash collision, even a forced one (params.hash_fn), can
 * cost time but never returns wrong K/V. Partial blocks are never indexed.
 * A block in the index is immutable: writing into it (after a truncate into
 * it) copies it first, like writing into a shared block.
 *
 * Copy-on-write. fork() shares all blocks (ref counts up). A write into the
 * last, partially filled block when that block is shared (ref > 1) or indexed
 * makes append() take a fresh block and report {src, dst, n_tokens}: the
 * caller copies slots [0, n_tokens) of src to dst on the device before any
 * forward writes K/V again. With several appends per batch, perform all the
 * reported copies, in the order reported, before the batch's forward: src may
 * already have been handed to another sequence by a later append (the pool
 * itself never changes device memory, so the content is still there).
 *
 * Sliding window. llm_kv_seq_release_before() drops the blocks lying entirely
 * before a position; their table entries become LLM_KV_NO_BLOCK (-1) so that
 * logical indexing never shifts: position p is always in entry p / block_size.
 *
 * Sequences are small non-negative integer ids made by llm_kv_seq_create()
 * or llm_kv_seq_fork(); an id is valid until llm_kv_seq_free() and may be
 * reused afterwards. Memory: block tables grow by doubling, so append
 * allocates host memory only when a table outgrows its capacity; lookup,
 * attach, commit, truncate and free never allocate except for that growth.
 *
 * Errors: functions return llm_status; the text of the last error of the
 * calling thread is llm_kv_last_error(). A failed call changes nothing.
 * Thread safety: none. A pool and its sequences must be used by one thread at
 * a time (the engine serialises). Distinct pools are independent.
 */
#ifndef LLAMA_KV_H
#define LLAMA_KV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llama/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Table entry of a block released by the sliding window. */
#define LLM_KV_NO_BLOCK (-1)

typedef struct llm_kv_pool llm_kv_pool;
typedef int32_t llm_kv_seq_id;

/* Chain-hash function: the hash of n_tokens ids seeded by the parent's hash.
 * The default is XXH3_64bits_withSeed over the ids' bytes. Test hook: a
 * function returning a constant forces every block to collide. */
typedef uint64_t (*llm_kv_hash_fn)(const int32_t *tokens, int32_t n_tokens,
                                   uint64_t seed, void *user_data);

/* Replaceable host allocator (tests inject failures). realloc_fn(ud, NULL, n)
 * allocates; free_fn(ud, NULL) must be harmless. Both NULL: libc. */
typedef struct llm_kv_allocator {
    void *(*realloc_fn)(void *user_data, void *ptr, size_t size);
    void (*free_fn)(void *user_data, void *ptr);
    void *user_data;
} llm_kv_allocator;

typedef struct llm_kv_pool_params {
    int32_t n_blocks;          /* physical blocks in the pool, >= 1 (default 1024) */
    int32_t block_size;        /* tokens per block, >= 1 (default 16) */
    bool enable_prefix_cache;  /* false: commit is a no-op, attach finds nothing (default true) */
    uint64_t hash_seed;        /* h(-1) of the chain (default 0) */
    llm_kv_hash_fn hash_fn;    /* NULL: XXH3_64bits_withSeed (default) */
    void *hash_user_data;      /* passed to hash_fn */
    size_t bytes_per_token;    /* optional, only for llm_kv_stats bytes (default 0) */
    llm_kv_allocator allocator;
} llm_kv_pool_params;

/* A device block copy the caller must perform (see append). src < 0: none. */
typedef struct llm_kv_cow {
    int32_t src;      /* physical block to copy from, or -1 */
    int32_t dst;      /* physical block to copy to, or -1 */
    int32_t n_tokens; /* copy token slots [0, n_tokens) of every layer's K and V */
} llm_kv_cow;

typedef enum llm_kv_block_state {
    LLM_KV_BLOCK_FREE = 0,
    LLM_KV_BLOCK_USED = 1,
    LLM_KV_BLOCK_CACHED = 2
} llm_kv_block_state;

typedef struct llm_kv_block_info {
    llm_kv_block_state state;
    int32_t ref;  /* number of block-table entries holding the block */
    bool indexed; /* in the prefix index (USED or CACHED) */
} llm_kv_block_info;

typedef struct llm_kv_stats {
    int32_t n_blocks;     /* total; n_free + n_used + n_cached == n_blocks */
    int32_t block_size;
    int32_t n_free;
    int32_t n_used;
    int32_t n_cached;     /* unreferenced, indexed, evictable */
    int32_t n_indexed;    /* in the prefix index: cached + indexed used blocks */
    int32_t n_seqs;       /* live sequences */
    uint64_t lookups;     /* llm_kv_seq_attach_prefix calls */
    uint64_t hit_blocks;  /* full blocks found by attach */
    uint64_t miss_blocks; /* full blocks asked for by attach and not found */
    uint64_t evictions;   /* cached blocks reclaimed for new data */
    uint64_t cow_copies;  /* copies reported by append */
    uint64_t exhausted;   /* appends refused with LLM_ERR_EXHAUSTED */
    uint64_t bytes_total; /* n_blocks * block_size * bytes_per_token (0 if unset) */
    uint64_t bytes_used;  /* n_used blocks likewise */
} llm_kv_stats;

/* The library's version string, e.g. "0.1.0". */
const char *llm_kv_version(void);

/* Text of the last error on the calling thread ("" if none). Valid until the
 * next failing llm_kv call on this thread. Never NULL. */
const char *llm_kv_last_error(void);

/* ---- Pool --------------------------------------------------------------- */

/* Defaults: 1024 blocks of 16 tokens, prefix cache on, XXH3, seed 0, libc. */
llm_kv_pool_params llm_kv_pool_default_params(void);

/* Creates a pool; all blocks FREE. On success *out owns the pool (free it with
 * llm_kv_pool_free). Returns LLM_ERR_INVALID_ARG (NULL, n_blocks or
 * block_size < 1, or n_blocks * block_size too large), LLM_ERR_NO_MEMORY. */
llm_status llm_kv_pool_create(const llm_kv_pool_params *params, llm_kv_pool **out);

/* Frees the pool and all its sequences. NULL is harmless. */
void llm_kv_pool_free(llm_kv_pool *pool);

/* Fills *out with the current counts and counters. */
llm_status llm_kv_pool_stats(const llm_kv_pool *pool, llm_kv_stats *out);

/* Zeroes the counters (lookups, hits, misses, evictions, copies, exhausted). */
void llm_kv_pool_reset_stats(llm_kv_pool *pool);

/* Evicts up to max_blocks CACHED blocks (max_blocks < 0: all) in LRU order,
 * making them FREE; *n_evicted (may be NULL) gets the count. Blocks held by
 * sequences are untouched. Use it to drop the prefix cache. */
llm_status llm_kv_pool_evict(llm_kv_pool *pool, int32_t max_blocks, int32_t *n_evicted);

/* State and reference count of physical block `block` (for tests, debugging
 * and telemetry). LLM_ERR_INVALID_ARG if block is out of range. */
llm_status llm_kv_pool_block_info(const llm_kv_pool *pool, int32_t block, llm_kv_block_info *out);

/* Full consistency check: every reference count equals the number of table
 * entries holding the block, the free list, LRU list and index agree with the
 * block states, counts add up. O(n_blocks + table entries). LLM_OK or
 * LLM_ERR_INTERNAL with a description in llm_kv_last_error(). */
llm_status llm_kv_pool_check(const llm_kv_pool *pool);

/* ---- Sequences ---------------------------------------------------------- */

/* Creates an empty sequence (length 0, no blocks) and stores its id in *out.
 * LLM_ERR_INVALID_ARG, LLM_ERR_NO_MEMORY. */
llm_status llm_kv_seq_create(llm_kv_pool *pool, llm_kv_seq_id *out);

/* Releases every block of seq (last block first, so that on eviction a cached
 * prefix loses its tail before its head) and retires the id. Full committed
 * blocks become CACHED, others FREE unless still shared. LLM_ERR_INVALID_ARG
 * for an unknown id. */
llm_status llm_kv_seq_free(llm_kv_pool *pool, llm_kv_seq_id seq);

/* Creates a sequence sharing all of parent's blocks (ref counts up, no device
 * copy now; the first write into a shared partial block is copied, see
 * append). Same length, same window holes, same commit state. *child gets the
 * new id. LLM_ERR_INVALID_ARG, LLM_ERR_NO_MEMORY (nothing changed). */
llm_status llm_kv_seq_fork(llm_kv_pool *pool, llm_kv_seq_id parent, llm_kv_seq_id *child);

/* Reserves positions [len, len + n_tokens) of seq for new tokens, taking new
 * blocks as needed (from the free list, else by evicting the least recently
 * released CACHED block). tokens ([n_tokens] ids) are recorded for prefix
 * hashing; tokens == NULL records unknown ids and the blocks holding them are
 * never committed. *cow (required) receives the copy the caller must do
 * before writing K/V: if the last block was partially filled and shared or
 * indexed, its first n_tokens slots must be copied from cow->src to cow->dst
 * (which replaced src in seq's table); otherwise cow->src = cow->dst = -1.
 * At most one copy per call. n_tokens == 0 is a no-op.
 * Returns LLM_OK; LLM_ERR_EXHAUSTED if free + cached blocks cannot cover the
 * request (nothing changed: the caller may free something and retry, or fail
 * this request; other sequences are untouched); LLM_ERR_INVALID_ARG;
 * LLM_ERR_NO_MEMORY (table growth failed, nothing changed). */
llm_status llm_kv_seq_append(llm_kv_pool *pool, llm_kv_seq_id seq, const int32_t *tokens,
                             int32_t n_tokens, llm_kv_cow *cow);

/* Drops tokens from the end so that seq has n_tokens (e.g. to regenerate).
 * Blocks no longer needed are released (last first). A kept partial block
 * that is shared or indexed is copied on the next append. n_tokens must be in
 * [llm_kv_seq_first_pos, len]; cutting into released (window) blocks is
 * LLM_ERR_STATE. LLM_ERR_INVALID_ARG for a bad id or n_tokens. */
llm_status llm_kv_seq_truncate(llm_kv_pool *pool, llm_kv_seq_id seq, int32_t n_tokens);

/* Sliding window: releases every block of seq whose positions are all < pos
 * (pos in [0, len]); their table entries become LLM_KV_NO_BLOCK. The length
 * is unchanged and logical indexing does not shift. Commit full blocks before
 * releasing them, or their successors can no longer be committed.
 * LLM_ERR_INVALID_ARG for a bad id or pos. */
llm_status llm_kv_seq_release_before(llm_kv_pool *pool, llm_kv_seq_id seq, int32_t pos);

/* The block table of seq: *ids points to *n_ids = ceil(len / block_size)
 * physical block ids (LLM_KV_NO_BLOCK for released entries). The array is
 * owned by the pool and valid until the next append, reserve, truncate,
 * attach, release or free of this sequence (calls on other sequences,
 * including create and fork, do not move it).
 * LLM_ERR_INVALID_ARG for a bad id. */
llm_status llm_kv_seq_block_table(const llm_kv_pool *pool, llm_kv_seq_id seq,
                                  const int32_t **ids, int32_t *n_ids);

/* Number of tokens in seq, or -1 if seq is not a live sequence. */
int32_t llm_kv_seq_len(const llm_kv_pool *pool, llm_kv_seq_id seq);

/* First position whose block is still held (0 unless the window released
 * blocks; equals a multiple of block_size), or -1 for a bad id. */
int32_t llm_kv_seq_first_pos(const llm_kv_pool *pool, llm_kv_seq_id seq);

/* Blocks that appending n_tokens to seq would take from the pool (new blocks
 * plus a copy-on-write block), or -1 for a bad id or n_tokens < 0. Compare
 * with n_free + n_cached from llm_kv_pool_stats for admission control. */
int32_t llm_kv_seq_blocks_needed(const llm_kv_pool *pool, llm_kv_seq_id seq, int32_t n_tokens);

/* Makes seq's host-side table hold n_tokens tokens without growing, so that
 * appends up to that length never allocate (e.g. reserve the context length
 * when a session starts). Takes no blocks. LLM_ERR_INVALID_ARG,
 * LLM_ERR_NO_MEMORY (nothing changed). */
llm_status llm_kv_seq_reserve(llm_kv_pool *pool, llm_kv_seq_id seq, int32_t n_tokens);

/* The K/V slot of position pos of seq in the whole pool, i.e.
 * table[pos / block_size] * block_size + pos % block_size: the row the
 * forward writes position pos's K and V to in a [n_blocks * block_size]
 * slot layout. -1 if seq is not live, pos is outside [0, len) or its block
 * was released by the window. */
int32_t llm_kv_seq_slot(const llm_kv_pool *pool, llm_kv_seq_id seq, int32_t pos);

/* Block size of the pool in tokens (0 for NULL). */
int32_t llm_kv_pool_block_size(const llm_kv_pool *pool);

/* ---- Prefix cache ------------------------------------------------------- */

/* Read-only probe: *n_cached gets the number of leading tokens of tokens
 * ([n_tokens]) covered by the longest run of indexed full blocks (a multiple
 * of block_size, <= n_tokens). Changes nothing, counts nothing. */
llm_status llm_kv_prefix_lookup(const llm_kv_pool *pool, const int32_t *tokens,
                                int32_t n_tokens, int32_t *n_cached);

/* For an EMPTY seq: finds the longest run of indexed full blocks matching the
 * start of tokens ([n_tokens]), puts them in seq's table (ref counts up,
 * CACHED blocks become USED) and sets seq's length to *n_cached, the number of
 * tokens whose K/V is already there. The caller then appends and computes
 * only tokens[*n_cached..]. Pass n_tokens = prompt length - 1 when the logits
 * of the last prompt token are needed, so that at least one token is left to
 * compute. *n_cached = 0 when the cache is disabled. LLM_ERR_STATE if seq is
 * not empty; LLM_ERR_INVALID_ARG; LLM_ERR_NO_MEMORY (nothing changed). */
llm_status llm_kv_seq_attach_prefix(llm_kv_pool *pool, llm_kv_seq_id seq, const int32_t *tokens,
                                    int32_t n_tokens, int32_t *n_cached);

/* Tells the pool that the K/V of positions [0, n_written) of seq is now in
 * the device buffer. Each full block in that range that is not yet committed
 * gets its chain hash and enters the prefix index (if an equal entry already
 * exists, the existing one is kept and seq's block stays private). Stops
 * early, without error, at a block with unknown ids (append with NULL) or one
 * already released by the window. No-op if the cache is disabled.
 * LLM_ERR_INVALID_ARG for a bad id or n_written outside [0, len]. */
llm_status llm_kv_seq_commit(llm_kv_pool *pool, llm_kv_seq_id seq, int32_t n_written);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_KV_H */
