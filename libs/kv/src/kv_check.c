/* kv_check.c -- llm_kv_pool_check: verifies every invariant of the pool from
 * scratch (reference counts recounted from the tables, list and index walks).
 * Slow on purpose; for tests and debug builds. */
#include <string.h>

#include "kv_internal.h"

#define CHECK(cond, ...)                                          \
    do {                                                          \
        if (!(cond)) {                                            \
            st = llm__kv_fail(LLM_ERR_INTERNAL, "kv check: " __VA_ARGS__); \
            goto done;                                            \
        }                                                         \
    } while (0)

llm_status llm_kv_pool_check(const llm_kv_pool *pool) {
    if (!pool) return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: NULL pool");
    llm_kv_pool *mp = (llm_kv_pool *)pool; /* only for the allocator */
    const int32_t nb = pool->p.n_blocks;
    const int32_t bs = pool->p.block_size;
    llm_status st = LLM_OK;
    /* refs: recounted references; mark: 1 on free stack, 2 on LRU, 3 in index;
     * last: the last sequence seen holding the block (a block is held at most
     * once per sequence). */
    int32_t *refs = llm__kv_realloc(mp, NULL, (size_t)nb * sizeof *refs);
    int32_t *last = llm__kv_realloc(mp, NULL, (size_t)nb * sizeof *last);
    uint8_t *mark = llm__kv_realloc(mp, NULL, (size_t)nb);
    uint8_t *inidx = llm__kv_realloc(mp, NULL, (size_t)nb);
    if (!refs || !last || !mark || !inidx) {
        st = llm__kv_fail(LLM_ERR_NO_MEMORY, "kv check: out of memory");
        goto done;
    }
    memset(refs, 0, (size_t)nb * sizeof *refs);
    memset(mark, 0, (size_t)nb);
    memset(inidx, 0, (size_t)nb);
    for (int32_t i = 0; i < nb; i++) last[i] = -1;

    int32_t live = 0;
    for (int32_t q = 0; q < pool->n_seq_slots; q++) {
        const kv_seq *s = &pool->seqs[q];
        if (!s->live) continue;
        live++;
        const int32_t n = (int32_t)(((int64_t)s->len + bs - 1) / bs);
        CHECK(s->len >= 0 && n <= s->cap, "seq %d: len %d exceeds capacity %d", (int)q, (int)s->len,
              (int)s->cap);
        CHECK(s->first >= 0 && (int64_t)s->first * bs <= s->len, "seq %d: first %d beyond len %d",
              (int)q, (int)s->first, (int)s->len);
        CHECK(s->n_hashed >= 0 && s->n_hashed <= s->len / bs, "seq %d: %d committed blocks of %d full",
              (int)q, (int)s->n_hashed, (int)(s->len / bs));
        for (int32_t e = 0; e < n; e++) {
            const int32_t id = s->table[e];
            if (e < s->first) {
                CHECK(id == LLM_KV_NO_BLOCK, "seq %d: released entry %d holds block %d", (int)q, (int)e,
                      (int)id);
                continue;
            }
            CHECK(id >= 0 && id < nb, "seq %d: entry %d holds bad block id %d", (int)q, (int)e, (int)id);
            CHECK(last[id] != q, "seq %d holds block %d twice", (int)q, (int)id);
            last[id] = q;
            refs[id]++;
        }
    }
    CHECK(live == pool->n_live, "%d live sequences, counter says %d", (int)live, (int)pool->n_live);

    CHECK(pool->n_free >= 0 && pool->n_free <= nb, "n_free %d", (int)pool->n_free);
    for (int32_t i = 0; i < pool->n_free; i++) {
        const int32_t id = pool->free_stack[i];
        CHECK(id >= 0 && id < nb, "bad id %d on the free list", (int)id);
        CHECK(mark[id] == 0, "block %d twice on the free list", (int)id);
        mark[id] = 1;
    }
    int32_t n_lru = 0;
    int32_t prev = -1;
    for (int32_t id = pool->lru_head; id >= 0; id = pool->blocks[id].lru_next) {
        CHECK(id < nb && n_lru < nb, "LRU list corrupt at block %d", (int)id);
        CHECK(mark[id] == 0, "block %d on the LRU list and elsewhere (or twice)", (int)id);
        CHECK(pool->blocks[id].lru_prev == prev, "LRU back link of block %d", (int)id);
        mark[id] = 2;
        prev = id;
        n_lru++;
    }
    CHECK(prev == pool->lru_tail, "LRU tail is %d, walk ends at %d", (int)pool->lru_tail, (int)prev);
    CHECK(n_lru == pool->n_cached, "%d blocks on the LRU list, counter says %d", (int)n_lru,
          (int)pool->n_cached);

    int32_t n_idx = 0;
    for (uint64_t k = 0; k <= pool->bucket_mask; k++) {
        int32_t hp = -1;
        for (int32_t id = pool->buckets[k]; id >= 0; id = pool->blocks[id].h_next) {
            CHECK(id < nb && n_idx < nb, "index chain corrupt at block %d", (int)id);
            const kv_block *b = &pool->blocks[id];
            CHECK(!inidx[id], "block %d twice in the index", (int)id);
            CHECK(b->indexed && (b->hash & pool->bucket_mask) == k && b->h_prev == hp,
                  "index entry %d inconsistent", (int)id);
            CHECK(b->uid != 0 && b->uid < pool->next_uid && b->parent_uid < b->uid,
                  "index entry %d has uid %llu, parent %llu", (int)id, (unsigned long long)b->uid,
                  (unsigned long long)b->parent_uid);
            inidx[id] = 1;
            hp = id;
            n_idx++;
        }
    }
    CHECK(n_idx == pool->n_indexed, "%d index entries, counter says %d", (int)n_idx,
          (int)pool->n_indexed);

    int32_t n_used = 0;
    for (int32_t id = 0; id < nb; id++) {
        const kv_block *b = &pool->blocks[id];
        CHECK(b->ref == refs[id], "block %d: ref %d but held by %d table entries", (int)id, (int)b->ref,
              (int)refs[id]);
        CHECK(inidx[id] == b->indexed, "block %d: indexed flag %d, in index %d", (int)id,
              (int)b->indexed, (int)inidx[id]);
        if (b->ref > 0) {
            CHECK(mark[id] == 0, "block %d is used and on the %s list", (int)id,
                  mark[id] == 1 ? "free" : "LRU");
            n_used++;
        } else if (b->indexed) {
            CHECK(mark[id] == 2, "cached block %d is not on the LRU list", (int)id);
        } else {
            CHECK(mark[id] == 1, "free block %d is not on the free list", (int)id);
        }
    }
    CHECK(pool->n_free + pool->n_cached + n_used == nb, "free %d + cached %d + used %d != %d",
          (int)pool->n_free, (int)pool->n_cached, (int)n_used, (int)nb);
done:
    llm__kv_free(mp, refs);
    llm__kv_free(mp, last);
    llm__kv_free(mp, mark);
    llm__kv_free(mp, inidx);
    return st;
}
