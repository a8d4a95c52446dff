/* Prefix index: chained hashes, lookup/attach, hits after free, misses after
 * eviction, forced collisions through the hash_fn test hook. */
#include <xxhash.h>

#include "kv_test_util.h"

/* Prompt of n tokens: a fixed pseudo-random pattern from seed. */
static void make_prompt(int32_t *t, int32_t n, uint32_t seed) {
    for (int32_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        t[i] = (int32_t)(seed >> 16);
    }
}

/* Runs one prompt through the engine's flow: attach, append rest, commit. */
static int32_t run_prompt(llm_kv_pool *p, llm_kv_seq_id s, const int32_t *t, int32_t n) {
    int32_t done = -1;
    cr_assert_eq(llm_kv_seq_attach_prefix(p, s, t, n - 1, &done), LLM_OK, "%s", llm_kv_last_error());
    kt_append(p, s, t + done, n - done);
    cr_assert_eq(llm_kv_seq_commit(p, s, n), LLM_OK);
    return done;
}

Test(kv_prefix, hit_after_free) {
    llm_kv_pool *p = kt_pool(32, 4);
    int32_t t[10];
    make_prompt(t, 10, 1);
    llm_kv_seq_id a = kt_seq(p);
    cr_assert_eq(run_prompt(p, a, t, 10), 0); /* cold */
    const int32_t a0 = kt_blk(p, a, 0), a1 = kt_blk(p, a, 1), a2 = kt_blk(p, a, 2);
    cr_assert(kt_info(p, a0).indexed && kt_info(p, a1).indexed);
    cr_assert(!kt_info(p, a2).indexed); /* partial blocks are never indexed */
    cr_assert_eq(llm_kv_seq_free(p, a), LLM_OK);
    llm_kv_stats st = kt_stats(p);
    cr_assert_eq(st.n_cached, 2);
    cr_assert_eq(st.n_indexed, 2);
    cr_assert_eq(st.n_free, 30);
    cr_assert_eq(kt_info(p, a0).state, LLM_KV_BLOCK_CACHED);
    cr_assert_eq(kt_info(p, a2).state, LLM_KV_BLOCK_FREE);

    llm_kv_pool_reset_stats(p);
    llm_kv_seq_id b = kt_seq(p);
    int32_t done = -1;
    cr_assert_eq(llm_kv_seq_attach_prefix(p, b, t, 9, &done), LLM_OK);
    cr_assert_eq(done, 8);
    cr_assert_eq(llm_kv_seq_len(p, b), 8);
    cr_assert_eq(kt_blk(p, b, 0), a0);
    cr_assert_eq(kt_blk(p, b, 1), a1);
    cr_assert_eq(kt_info(p, a0).state, LLM_KV_BLOCK_USED);
    st = kt_stats(p);
    cr_assert_eq(st.lookups, 1);
    cr_assert_eq(st.hit_blocks, 2);
    cr_assert_eq(st.miss_blocks, 0);
    cr_assert_eq(st.n_cached, 0);
    /* The rest is computed and appended; a full hit never covers the last
     * token when the caller passes n - 1. */
    kt_append(p, b, t + 8, 2);
    cr_assert_eq(llm_kv_seq_len(p, b), 10);
    kt_check(p);
    /* attach only into an empty sequence */
    cr_assert_eq(llm_kv_seq_attach_prefix(p, b, t, 9, &done), LLM_ERR_STATE);
    llm_kv_pool_free(p);
}

Test(kv_prefix, attach_is_limited_to_full_blocks_within_n) {
    llm_kv_pool *p = kt_pool(32, 4);
    int32_t t[12];
    make_prompt(t, 12, 2);
    llm_kv_seq_id a = kt_seq(p);
    run_prompt(p, a, t, 12); /* commits 3 blocks */
    int32_t n;
    for (int32_t k = 0; k <= 12; k++) {
        cr_assert_eq(llm_kv_prefix_lookup(p, t, k, &n), LLM_OK);
        cr_assert_eq(n, (k / 4) * 4, "k=%d n=%d", k, n);
    }
    /* Shared with a live sequence: ref counts go up. */
    llm_kv_seq_id b = kt_seq(p);
    cr_assert_eq(llm_kv_seq_attach_prefix(p, b, t, 11, &n), LLM_OK);
    cr_assert_eq(n, 8);
    cr_assert_eq(kt_info(p, kt_blk(p, a, 0)).ref, 2);
    cr_assert_eq(kt_info(p, kt_blk(p, a, 2)).ref, 1);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_prefix, miss_after_eviction) {
    llm_kv_pool *p = kt_pool(6, 4);
    int32_t t[8], u[24];
    make_prompt(t, 8, 3);
    make_prompt(u, 24, 4);
    llm_kv_seq_id a = kt_seq(p);
    run_prompt(p, a, t, 8);
    cr_assert_eq(llm_kv_seq_free(p, a), LLM_OK);
    cr_assert_eq(kt_stats(p).n_cached, 2);
    /* A long prompt needs every block: both cached blocks are evicted. */
    llm_kv_seq_id b = kt_seq(p);
    cr_assert_eq(run_prompt(p, b, u, 24), 0);
    llm_kv_stats st = kt_stats(p);
    cr_assert_eq(st.evictions, 2);
    cr_assert_eq(st.n_free + st.n_cached, 0);
    cr_assert_eq(llm_kv_seq_free(p, b), LLM_OK);
    int32_t n = -1;
    cr_assert_eq(llm_kv_prefix_lookup(p, t, 8, &n), LLM_OK);
    cr_assert_eq(n, 0);
    llm_kv_pool_reset_stats(p);
    llm_kv_seq_id c = kt_seq(p);
    cr_assert_eq(llm_kv_seq_attach_prefix(p, c, t, 8, &n), LLM_OK);
    cr_assert_eq(n, 0);
    st = kt_stats(p);
    cr_assert_eq(st.hit_blocks, 0);
    cr_assert_eq(st.miss_blocks, 2);
    /* u is still cached in full. */
    cr_assert_eq(llm_kv_prefix_lookup(p, u, 24, &n), LLM_OK);
    cr_assert_eq(n, 24);
    /* Explicit eviction drops everything unreferenced. */
    int32_t ev = -1;
    cr_assert_eq(llm_kv_pool_evict(p, -1, &ev), LLM_OK);
    cr_assert_eq(ev, 6);
    cr_assert_eq(llm_kv_prefix_lookup(p, u, 24, &n), LLM_OK);
    cr_assert_eq(n, 0);
    cr_assert_eq(kt_stats(p).n_indexed, 0);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_prefix, same_block_under_another_parent_does_not_match) {
    llm_kv_pool *p = kt_pool(32, 2);
    const int32_t ab[4] = {1, 2, 3, 4}, cb[4] = {9, 9, 3, 4};
    llm_kv_seq_id s = kt_seq(p);
    run_prompt(p, s, ab, 4);
    int32_t n;
    cr_assert_eq(llm_kv_prefix_lookup(p, ab, 4, &n), LLM_OK);
    cr_assert_eq(n, 4);
    cr_assert_eq(llm_kv_prefix_lookup(p, cb, 4, &n), LLM_OK);
    cr_assert_eq(n, 0);
    cr_assert_eq(llm_kv_prefix_lookup(p, cb + 2, 2, &n), LLM_OK); /* [3,4] as a first block */
    cr_assert_eq(n, 0);
    llm_kv_pool_free(p);
}

static uint64_t const_hash(const int32_t *t, int32_t n, uint64_t seed, void *ud) {
    (void)t, (void)n, (void)seed, (void)ud;
    return 42; /* every block collides with every other */
}

Test(kv_prefix, forced_collisions_never_return_wrong_blocks) {
    llm_kv_pool_params pp = llm_kv_pool_default_params();
    pp.n_blocks = 64;
    pp.block_size = 3;
    pp.hash_fn = const_hash;
    llm_kv_pool *p;
    cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_OK);
    /* Prompts sharing blocks in different places: [A B C], [A B D], [B A C], [A C]. */
    const int32_t A[3] = {1, 1, 1}, B[3] = {2, 2, 2}, C[3] = {3, 3, 3}, D[3] = {4, 4, 4};
    const int32_t *prompts[4][3] = {{A, B, C}, {A, B, D}, {B, A, C}, {A, C, NULL}};
    const int32_t lens[4] = {3, 3, 3, 2};
    int32_t tok[4][10];
    llm_kv_seq_id seqs[4];
    for (int k = 0; k < 4; k++) {
        for (int b = 0; b < lens[k]; b++) memcpy(tok[k] + 3 * b, prompts[k][b], sizeof A);
        tok[k][3 * lens[k]] = 77; /* one extra token so all blocks can be attached */
        seqs[k] = kt_seq(p);
        run_prompt(p, seqs[k], tok[k], 3 * lens[k] + 1);
    }
    /* Shared [A B] was found for prompt 1; prompt 2 and 3 are distinct chains. */
    cr_assert_eq(kt_blk(p, seqs[1], 0), kt_blk(p, seqs[0], 0));
    cr_assert_eq(kt_blk(p, seqs[1], 1), kt_blk(p, seqs[0], 1));
    cr_assert_neq(kt_blk(p, seqs[1], 2), kt_blk(p, seqs[0], 2));
    cr_assert_eq(kt_blk(p, seqs[3], 0), kt_blk(p, seqs[0], 0));
    cr_assert_neq(kt_blk(p, seqs[3], 1), kt_blk(p, seqs[0], 2)); /* C under A != C under B */
    int32_t n;
    const int32_t ac_b[9] = {1, 1, 1, 3, 3, 3, 2, 2, 2};
    cr_assert_eq(llm_kv_prefix_lookup(p, ac_b, 9, &n), LLM_OK);
    cr_assert_eq(n, 6);
    const int32_t ba_d[9] = {2, 2, 2, 1, 1, 1, 4, 4, 4};
    cr_assert_eq(llm_kv_prefix_lookup(p, ba_d, 9, &n), LLM_OK);
    cr_assert_eq(n, 6);
    const int32_t c_first[3] = {3, 3, 3};
    cr_assert_eq(llm_kv_prefix_lookup(p, c_first, 3, &n), LLM_OK);
    cr_assert_eq(n, 0);
    /* Each attach returns exactly the blocks holding the right ids: free all,
     * re-attach each prompt and compare with the original tables. */
    int32_t want[4][3];
    for (int k = 0; k < 4; k++)
        for (int b = 0; b < lens[k]; b++) want[k][b] = kt_blk(p, seqs[k], b);
    for (int k = 0; k < 4; k++) cr_assert_eq(llm_kv_seq_free(p, seqs[k]), LLM_OK);
    for (int k = 3; k >= 0; k--) {
        llm_kv_seq_id s = kt_seq(p);
        cr_assert_eq(llm_kv_seq_attach_prefix(p, s, tok[k], 3 * lens[k], &n), LLM_OK);
        cr_assert_eq(n, 3 * lens[k]);
        for (int b = 0; b < lens[k]; b++) cr_assert_eq(kt_blk(p, s, b), want[k][b], "prompt %d block %d", k, b);
    }
    kt_check(p);
    llm_kv_pool_free(p);
}

/* Records the seeds the pool hashes with and hashes exactly like the default. */
typedef struct {
    uint64_t seeds[16];
    uint64_t out[16];
    int n;
} hash_log;

static uint64_t logging_hash(const int32_t *t, int32_t n, uint64_t seed, void *ud) {
    hash_log *log = ud;
    uint64_t h = XXH3_64bits_withSeed(t, (size_t)n * sizeof *t, seed);
    if (log->n < 16) {
        log->seeds[log->n] = seed;
        log->out[log->n] = h;
        log->n++;
    }
    return h;
}

Test(kv_prefix, documented_hash_chain) {
    hash_log log = {{0}, {0}, 0};
    llm_kv_pool_params pp = llm_kv_pool_default_params();
    pp.n_blocks = 16;
    pp.block_size = 4;
    pp.hash_seed = 0x1234;
    pp.hash_fn = logging_hash;
    pp.hash_user_data = &log;
    llm_kv_pool *p;
    cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_OK);
    int32_t t[13];
    make_prompt(t, 13, 7);
    llm_kv_seq_id s = kt_seq(p);
    kt_append(p, s, t, 13);
    cr_assert_eq(llm_kv_seq_commit(p, s, 13), LLM_OK);
    cr_assert_eq(log.n, 3); /* three full blocks, each hashed once */
    /* Recomputed independently: h(-1) = seed, h(i) = XXH3(block i, h(i-1)). */
    uint64_t h = 0x1234;
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(log.seeds[i], h, "block %d seed", i);
        h = XXH3_64bits_withSeed(t + 4 * i, 4 * sizeof(int32_t), h);
        cr_assert_eq(log.out[i], h);
    }
    /* Commit again: nothing new to hash. */
    cr_assert_eq(llm_kv_seq_commit(p, s, 13), LLM_OK);
    cr_assert_eq(log.n, 3);
    llm_kv_pool_free(p);
}

Test(kv_prefix, commit_covers_only_written_full_blocks) {
    llm_kv_pool *p = kt_pool(16, 4);
    int32_t t[16];
    make_prompt(t, 16, 9);
    llm_kv_seq_id s = kt_seq(p);
    kt_append(p, s, t, 16);
    cr_assert_eq(llm_kv_seq_commit(p, s, 7), LLM_OK);
    int32_t n;
    cr_assert_eq(llm_kv_prefix_lookup(p, t, 16, &n), LLM_OK);
    cr_assert_eq(n, 4);
    cr_assert_eq(kt_stats(p).n_indexed, 1);
    cr_assert_eq(llm_kv_seq_commit(p, s, 16), LLM_OK);
    cr_assert_eq(llm_kv_prefix_lookup(p, t, 16, &n), LLM_OK);
    cr_assert_eq(n, 16);
    llm_kv_pool_free(p);
}

Test(kv_prefix, unknown_ids_are_never_committed) {
    llm_kv_pool *p = kt_pool(16, 4);
    int32_t t[8];
    make_prompt(t, 8, 11);
    llm_kv_seq_id s = kt_seq(p);
    kt_append(p, s, t, 4);
    llm_kv_cow cow;
    cr_assert_eq(llm_kv_seq_append(p, s, NULL, 4, &cow), LLM_OK);
    cr_assert_eq(llm_kv_seq_commit(p, s, 8), LLM_OK);
    cr_assert_eq(kt_stats(p).n_indexed, 1); /* only the first block */
    cr_assert(!kt_info(p, kt_blk(p, s, 1)).indexed);
    llm_kv_pool_free(p);
}

Test(kv_prefix, duplicate_computation_keeps_one_entry) {
    llm_kv_pool *p = kt_pool(16, 4);
    int32_t t[9];
    make_prompt(t, 9, 13);
    llm_kv_seq_id a = kt_seq(p), b = kt_seq(p);
    int32_t n;
    /* Both look up before either commits (same batch): both miss. */
    cr_assert_eq(llm_kv_seq_attach_prefix(p, a, t, 8, &n), LLM_OK);
    cr_assert_eq(n, 0);
    cr_assert_eq(llm_kv_seq_attach_prefix(p, b, t, 8, &n), LLM_OK);
    cr_assert_eq(n, 0);
    kt_append(p, a, t, 9);
    kt_append(p, b, t, 9);
    cr_assert_eq(llm_kv_seq_commit(p, a, 9), LLM_OK);
    cr_assert_eq(llm_kv_seq_commit(p, b, 9), LLM_OK);
    cr_assert_eq(kt_stats(p).n_indexed, 2);
    cr_assert(!kt_info(p, kt_blk(p, b, 0)).indexed);
    cr_assert_eq(llm_kv_seq_free(p, a), LLM_OK);
    cr_assert_eq(llm_kv_seq_free(p, b), LLM_OK);
    llm_kv_stats st = kt_stats(p);
    cr_assert_eq(st.n_cached, 2);
    cr_assert_eq(st.n_free, 14);
    /* A later prompt sharing b's chain continues on a's entries. */
    llm_kv_seq_id c = kt_seq(p);
    cr_assert_eq(llm_kv_seq_attach_prefix(p, c, t, 8, &n), LLM_OK);
    cr_assert_eq(n, 8);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_prefix, disabled_cache) {
    llm_kv_pool_params pp = llm_kv_pool_default_params();
    pp.n_blocks = 8;
    pp.block_size = 4;
    pp.enable_prefix_cache = false;
    llm_kv_pool *p;
    cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_OK);
    int32_t t[9];
    make_prompt(t, 9, 17);
    llm_kv_seq_id a = kt_seq(p);
    cr_assert_eq(run_prompt(p, a, t, 9), 0);
    cr_assert_eq(kt_stats(p).n_indexed, 0);
    cr_assert_eq(llm_kv_seq_free(p, a), LLM_OK);
    cr_assert_eq(kt_stats(p).n_free, 8);
    llm_kv_seq_id b = kt_seq(p);
    cr_assert_eq(run_prompt(p, b, t, 9), 0);
    int32_t n = -1;
    cr_assert_eq(llm_kv_prefix_lookup(p, t, 9, &n), LLM_OK);
    cr_assert_eq(n, 0);
    kt_check(p);
    llm_kv_pool_free(p);
}
