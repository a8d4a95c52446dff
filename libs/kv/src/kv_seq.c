/* kv_seq.c -- sequences: block tables, append with copy-on-write, fork,
 * truncate, sliding-window release, free, and attaching / committing a
 * sequence's prefix through the index. Calls go one way: kv_seq.c uses
 * kv_pool.c (blocks) and kv_index.c (the index); kv_pool.c uses kv_index.c;
 * every file records its errors through the leaf kv_error.c. */
#include <string.h>

#include "kv_internal.h"

static int32_t ceil_div(int32_t a, int32_t b) { return (int32_t)(((int64_t)a + b - 1) / b); }

static kv_seq *seq_get(const llm_kv_pool *pool, llm_kv_seq_id id) {
    if (!pool) {
        llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: NULL pool");
        return NULL;
    }
    if (id < 0 || id >= pool->n_seq_slots || !pool->seqs[id].live) {
        llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: %d is not a live sequence", (int)id);
        return NULL;
    }
    return &pool->seqs[id];
}

static llm_status seq_grow(llm_kv_pool *pool, kv_seq *s, int32_t n_entries) {
    if (n_entries <= s->cap) return LLM_OK;
    int64_t cap = s->cap < 16 ? 16 : (int64_t)s->cap * 2;
    if (cap < n_entries) cap = n_entries;
    if (cap > INT32_MAX) cap = INT32_MAX;
    /* Each array is stored back as soon as it moved, so a later failure
     * leaves valid (larger) arrays and the old capacity: nothing is lost. */
    int32_t *t = llm__kv_realloc(pool, s->table, (size_t)cap * sizeof *t);
    if (!t) goto oom;
    s->table = t;
    uint64_t *h = llm__kv_realloc(pool, s->hash, (size_t)cap * sizeof *h);
    if (!h) goto oom;
    s->hash = h;
    uint64_t *u = llm__kv_realloc(pool, s->uid, (size_t)cap * sizeof *u);
    if (!u) goto oom;
    s->uid = u;
    s->cap = (int32_t)cap;
    return LLM_OK;
oom:
    return llm__kv_fail(LLM_ERR_NO_MEMORY, "kv: out of memory growing a block table to %d entries",
                        (int)n_entries);
}

/* Finds or makes a free sequence slot; returns its index or -1 (no memory).
 * May move pool->seqs: callers re-fetch sequence pointers afterwards. */
static int32_t slot_new(llm_kv_pool *pool) {
    for (int32_t i = 0; i < pool->n_seq_slots; i++)
        if (!pool->seqs[i].live) return i;
    if (pool->n_seq_slots == INT32_MAX) return -1;
    int64_t n = pool->n_seq_slots < 8 ? 8 : (int64_t)pool->n_seq_slots * 2;
    if (n > INT32_MAX) n = INT32_MAX;
    kv_seq *seqs = llm__kv_realloc(pool, pool->seqs, (size_t)n * sizeof *seqs);
    if (!seqs) return -1;
    memset(seqs + pool->n_seq_slots, 0, (size_t)(n - pool->n_seq_slots) * sizeof *seqs);
    pool->seqs = seqs;
    int32_t slot = pool->n_seq_slots;
    pool->n_seq_slots = (int32_t)n;
    return slot;
}

static void slot_open(llm_kv_pool *pool, int32_t slot) {
    kv_seq *s = &pool->seqs[slot];
    /* The arrays (and capacity) of a previous occupant are reused. */
    s->len = 0;
    s->first = 0;
    s->n_hashed = 0;
    s->live = 1;
    pool->n_live++;
}

llm_status llm_kv_seq_create(llm_kv_pool *pool, llm_kv_seq_id *out) {
    if (!pool || !out) return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: NULL pool or out");
    int32_t slot = slot_new(pool);
    if (slot < 0) return llm__kv_fail(LLM_ERR_NO_MEMORY, "kv: out of memory creating a sequence");
    slot_open(pool, slot);
    *out = slot;
    return LLM_OK;
}

/* Releases table entries [from, to) last first, so that the head of a
 * prefix is released last and therefore evicted last. */
static void release_range(llm_kv_pool *pool, kv_seq *s, int32_t from, int32_t to) {
    for (int32_t e = to - 1; e >= from; e--) {
        llm__kv_block_release(pool, s->table[e]);
        s->table[e] = LLM_KV_NO_BLOCK;
    }
}

llm_status llm_kv_seq_free(llm_kv_pool *pool, llm_kv_seq_id seq) {
    kv_seq *s = seq_get(pool, seq);
    if (!s) return LLM_ERR_INVALID_ARG;
    release_range(pool, s, s->first, ceil_div(s->len, pool->p.block_size));
    s->len = 0;
    s->first = 0;
    s->n_hashed = 0;
    s->live = 0;
    pool->n_live--;
    return LLM_OK;
}

llm_status llm_kv_seq_fork(llm_kv_pool *pool, llm_kv_seq_id parent, llm_kv_seq_id *child) {
    if (!child) return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: fork: NULL child");
    if (!seq_get(pool, parent)) return LLM_ERR_INVALID_ARG;
    int32_t slot = slot_new(pool);
    if (slot < 0) return llm__kv_fail(LLM_ERR_NO_MEMORY, "kv: out of memory forking a sequence");
    const kv_seq *p = &pool->seqs[parent]; /* re-fetched: slot_new may move seqs */
    kv_seq *c = &pool->seqs[slot];
    const int32_t n = ceil_div(p->len, pool->p.block_size);
    llm_status st = seq_grow(pool, c, n);
    if (st != LLM_OK) return st; /* the slot stays unused: nothing changed */
    slot_open(pool, slot);
    if (n > 0) memcpy(c->table, p->table, (size_t)n * sizeof *c->table);
    if (p->n_hashed > 0) {
        memcpy(c->hash, p->hash, (size_t)p->n_hashed * sizeof *c->hash);
        memcpy(c->uid, p->uid, (size_t)p->n_hashed * sizeof *c->uid);
    }
    for (int32_t e = p->first; e < n; e++) llm__kv_block_retain(pool, c->table[e]);
    c->len = p->len;
    c->first = p->first;
    c->n_hashed = p->n_hashed;
    *child = slot;
    return LLM_OK;
}

/* Whether appending to s must first copy its last, partially filled block:
 * writes go in place only into a block that is private and not indexed. */
static bool needs_cow(const llm_kv_pool *pool, const kv_seq *s) {
    const int32_t bs = pool->p.block_size;
    if (s->len % bs == 0) return false;
    const kv_block *b = &pool->blocks[s->table[s->len / bs]];
    return b->ref > 1 || b->indexed;
}

int32_t llm_kv_seq_blocks_needed(const llm_kv_pool *pool, llm_kv_seq_id seq, int32_t n_tokens) {
    const kv_seq *s = seq_get(pool, seq);
    if (!s || n_tokens < 0 || (int64_t)s->len + n_tokens > INT32_MAX) return -1;
    if (n_tokens == 0) return 0;
    const int32_t bs = pool->p.block_size;
    return ceil_div(s->len + n_tokens, bs) - ceil_div(s->len, bs) + (needs_cow(pool, s) ? 1 : 0);
}

llm_status llm_kv_seq_append(llm_kv_pool *pool, llm_kv_seq_id seq, const int32_t *tokens,
                             int32_t n_tokens, llm_kv_cow *cow) {
    if (cow) cow->src = cow->dst = -1, cow->n_tokens = 0;
    if (!cow) return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: append: NULL cow");
    kv_seq *s = seq_get(pool, seq);
    if (!s) return LLM_ERR_INVALID_ARG;
    if (n_tokens < 0 || (int64_t)s->len + n_tokens > INT32_MAX)
        return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: append: bad n_tokens %d", (int)n_tokens);
    if (n_tokens == 0) return LLM_OK;

    const int32_t bs = pool->p.block_size;
    const int32_t len0 = s->len;
    const int32_t old_n = ceil_div(len0, bs);
    const int32_t new_n = ceil_div(len0 + n_tokens, bs);
    const bool cow_needed = needs_cow(pool, s);
    const int32_t needed = new_n - old_n + (cow_needed ? 1 : 0);
    const int32_t available = pool->n_free + pool->n_cached;
    if (needed > available) {
        pool->ctr.exhausted++;
        return llm__kv_fail(LLM_ERR_EXHAUSTED,
                            "kv: pool exhausted: sequence %d needs %d more blocks for %d tokens, "
                            "%d free + %d evictable of %d",
                            (int)seq, (int)needed, (int)n_tokens, (int)pool->n_free,
                            (int)pool->n_cached, (int)pool->p.n_blocks);
    }
    llm_status st = seq_grow(pool, s, new_n);
    if (st != LLM_OK) return st;
    /* From here on nothing can fail. */

    int32_t cow_src = -1;
    if (cow_needed) {
        const int32_t last = len0 / bs;
        cow_src = s->table[last];
        const int32_t dst = llm__kv_block_take(pool);
        const int32_t fill = len0 % bs;
        memcpy(llm__kv_block_tokens(pool, dst), llm__kv_block_tokens(pool, cow_src),
               (size_t)fill * sizeof(int32_t));
        pool->blocks[dst].hashable = pool->blocks[cow_src].hashable;
        s->table[last] = dst;
        cow->src = cow_src;
        cow->dst = dst;
        cow->n_tokens = fill;
        pool->ctr.cow_copies++;
    }
    for (int32_t e = old_n; e < new_n; e++) s->table[e] = llm__kv_block_take(pool);

    /* Record the ids block by block. */
    int32_t pos = len0;
    int32_t done = 0;
    while (done < n_tokens) {
        const int32_t id = s->table[pos / bs];
        const int32_t off = pos % bs;
        int32_t n = bs - off;
        if (n > n_tokens - done) n = n_tokens - done;
        if (tokens) {
            memcpy(llm__kv_block_tokens(pool, id) + off, tokens + done, (size_t)n * sizeof(int32_t));
        } else {
            pool->blocks[id].hashable = 0;
        }
        pos += n;
        done += n;
    }
    s->len = len0 + n_tokens;
    /* Released last: within this call the source cannot be evicted and reused. */
    if (cow_src >= 0) llm__kv_block_release(pool, cow_src);
    return LLM_OK;
}

llm_status llm_kv_seq_truncate(llm_kv_pool *pool, llm_kv_seq_id seq, int32_t n_tokens) {
    kv_seq *s = seq_get(pool, seq);
    if (!s) return LLM_ERR_INVALID_ARG;
    const int32_t bs = pool->p.block_size;
    if (n_tokens < 0 || n_tokens > s->len)
        return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: truncate: %d outside [0, %d]", (int)n_tokens,
                            (int)s->len);
    if (n_tokens < s->first * bs)
        return llm__kv_fail(LLM_ERR_STATE,
                            "kv: truncate: positions before %d were released by the window",
                            (int)(s->first * bs));
    release_range(pool, s, ceil_div(n_tokens, bs), ceil_div(s->len, bs));
    s->len = n_tokens;
    if (s->n_hashed > n_tokens / bs) s->n_hashed = n_tokens / bs;
    return LLM_OK;
}

llm_status llm_kv_seq_release_before(llm_kv_pool *pool, llm_kv_seq_id seq, int32_t pos) {
    kv_seq *s = seq_get(pool, seq);
    if (!s) return LLM_ERR_INVALID_ARG;
    if (pos < 0 || pos > s->len)
        return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: release_before: %d outside [0, %d]", (int)pos,
                            (int)s->len);
    const int32_t new_first = pos / pool->p.block_size;
    if (new_first > s->first) {
        release_range(pool, s, s->first, new_first);
        s->first = new_first;
    }
    return LLM_OK;
}

llm_status llm_kv_seq_block_table(const llm_kv_pool *pool, llm_kv_seq_id seq, const int32_t **ids,
                                  int32_t *n_ids) {
    if (ids) *ids = NULL;
    if (n_ids) *n_ids = 0;
    if (!ids || !n_ids) return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: block_table: NULL output");
    const kv_seq *s = seq_get(pool, seq);
    if (!s) return LLM_ERR_INVALID_ARG;
    *ids = s->table;
    *n_ids = ceil_div(s->len, pool->p.block_size);
    return LLM_OK;
}

int32_t llm_kv_seq_len(const llm_kv_pool *pool, llm_kv_seq_id seq) {
    const kv_seq *s = seq_get(pool, seq);
    return s ? s->len : -1;
}

int32_t llm_kv_seq_first_pos(const llm_kv_pool *pool, llm_kv_seq_id seq) {
    const kv_seq *s = seq_get(pool, seq);
    return s ? s->first * pool->p.block_size : -1;
}

llm_status llm_kv_seq_reserve(llm_kv_pool *pool, llm_kv_seq_id seq, int32_t n_tokens) {
    kv_seq *s = seq_get(pool, seq);
    if (!s) return LLM_ERR_INVALID_ARG;
    if (n_tokens < 0) return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: reserve: n_tokens %d", (int)n_tokens);
    return seq_grow(pool, s, ceil_div(n_tokens, pool->p.block_size));
}

int32_t llm_kv_seq_slot(const llm_kv_pool *pool, llm_kv_seq_id seq, int32_t pos) {
    const kv_seq *s = seq_get(pool, seq);
    if (!s || pos < 0 || pos >= s->len) return -1;
    const int32_t bs = pool->p.block_size;
    const int32_t b = s->table[pos / bs];
    return b < 0 ? -1 : b * bs + pos % bs;
}

/* ------------------------------------------------ prefix cache of a sequence -- */

llm_status llm_kv_seq_attach_prefix(llm_kv_pool *pool, llm_kv_seq_id seq, const int32_t *tokens,
                                    int32_t n_tokens, int32_t *n_cached) {
    if (n_cached) *n_cached = 0;
    if (!pool || !n_cached || n_tokens < 0 || (n_tokens > 0 && !tokens))
        return llm__kv_fail(LLM_ERR_INVALID_ARG, "kv: attach_prefix: bad argument");
    kv_seq *s = seq_get(pool, seq);
    if (!s) return LLM_ERR_INVALID_ARG;
    if (s->len != 0)
        return llm__kv_fail(LLM_ERR_STATE, "kv: attach_prefix: sequence %d is not empty (%d tokens)",
                            (int)seq, (int)s->len);
    if (!pool->p.enable_prefix_cache) return LLM_OK;
    const int32_t bs = pool->p.block_size;
    const int32_t n_full = n_tokens / bs;
    /* Grow first so that a failure leaves everything as it was. */
    llm_status st = seq_grow(pool, s, n_full);
    if (st != LLM_OK) return st;
    const int32_t hits = llm__kv_index_walk(pool, tokens, n_tokens, s->table, s->hash, s->uid);
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
    kv_seq *s = seq_get(pool, seq);
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
