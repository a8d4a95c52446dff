/* Block allocation, block tables, sequence ids, argument checking. */
#include <stdlib.h>

#include "kv_test_util.h"

Test(kv_alloc, create_rejects_bad_params) {
    llm_kv_pool *p = (llm_kv_pool *)1;
    cr_assert_eq(llm_kv_pool_create(NULL, &p), LLM_ERR_INVALID_ARG);
    cr_assert_null(p);
    llm_kv_pool_params pp = llm_kv_pool_default_params();
    pp.block_size = 0;
    cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_ERR_INVALID_ARG);
    cr_assert(strstr(llm_kv_last_error(), "block_size") != NULL, "%s", llm_kv_last_error());
    pp = llm_kv_pool_default_params();
    pp.n_blocks = 0;
    cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_ERR_INVALID_ARG);
    pp = llm_kv_pool_default_params();
    pp.n_blocks = INT32_MAX;
    pp.block_size = 2;
    cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_ERR_INVALID_ARG);
    llm_kv_pool_free(NULL); /* harmless */
}

Test(kv_alloc, defaults) {
    llm_kv_pool_params pp = llm_kv_pool_default_params();
    cr_assert_eq(pp.n_blocks, 1024);
    cr_assert_eq(pp.block_size, 16);
    cr_assert(pp.enable_prefix_cache);
    cr_assert_null(pp.hash_fn);
    llm_kv_pool *p = kt_pool(8, 16);
    cr_assert_eq(llm_kv_pool_block_size(p), 16);
    llm_kv_stats st = kt_stats(p);
    cr_assert_eq(st.n_blocks, 8);
    cr_assert_eq(st.n_free, 8);
    cr_assert_eq(st.n_used + st.n_cached + st.n_seqs, 0);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_alloc, blocks_are_taken_as_tokens_arrive) {
    llm_kv_pool *p = kt_pool(8, 4);
    llm_kv_seq_id s = kt_seq(p);
    cr_assert_eq(llm_kv_seq_len(p, s), 0);
    cr_assert_eq(kt_ntable(p, s), 0);
    llm_kv_cow cow = kt_append_seq(p, s, 100, 1);
    cr_assert_eq(cow.src, -1);
    cr_assert_eq(cow.dst, -1);
    cr_assert_eq(kt_ntable(p, s), 1);
    cr_assert_eq(kt_stats(p).n_used, 1);
    kt_append_seq(p, s, 101, 3); /* fills block 0 exactly */
    cr_assert_eq(kt_ntable(p, s), 1);
    cr_assert_eq(kt_stats(p).n_used, 1);
    kt_append_seq(p, s, 104, 1);
    cr_assert_eq(kt_ntable(p, s), 2);
    kt_append_seq(p, s, 105, 10); /* 15 tokens -> 4 blocks */
    cr_assert_eq(llm_kv_seq_len(p, s), 15);
    cr_assert_eq(kt_ntable(p, s), 4);
    /* Distinct physical blocks, each held once. */
    for (int i = 0; i < 4; i++) {
        int32_t b = kt_blk(p, s, i);
        cr_assert(b >= 0 && b < 8);
        cr_assert_eq(kt_info(p, b).ref, 1);
        cr_assert_eq(kt_info(p, b).state, LLM_KV_BLOCK_USED);
        for (int j = 0; j < i; j++) cr_assert_neq(kt_blk(p, s, j), b);
    }
    llm_kv_stats st = kt_stats(p);
    cr_assert_eq(st.n_used, 4);
    cr_assert_eq(st.n_free, 4);
    kt_check(p);
    /* Uncommitted blocks go straight back to the free list. */
    cr_assert_eq(llm_kv_seq_free(p, s), LLM_OK);
    st = kt_stats(p);
    cr_assert_eq(st.n_free, 8);
    cr_assert_eq(st.n_cached, 0);
    cr_assert_eq(st.n_seqs, 0);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_alloc, blocks_needed_matches_append) {
    llm_kv_pool *p = kt_pool(64, 16);
    llm_kv_seq_id s = kt_seq(p);
    cr_assert_eq(llm_kv_seq_blocks_needed(p, s, 0), 0);
    cr_assert_eq(llm_kv_seq_blocks_needed(p, s, 1), 1);
    cr_assert_eq(llm_kv_seq_blocks_needed(p, s, 16), 1);
    cr_assert_eq(llm_kv_seq_blocks_needed(p, s, 17), 2);
    cr_assert_eq(llm_kv_seq_blocks_needed(p, s, -1), -1);
    cr_assert_eq(llm_kv_seq_blocks_needed(p, 99, 1), -1);
    kt_append_seq(p, s, 0, 10);
    cr_assert_eq(llm_kv_seq_blocks_needed(p, s, 6), 0);
    cr_assert_eq(llm_kv_seq_blocks_needed(p, s, 7), 1);
    int before = kt_stats(p).n_used;
    kt_append_seq(p, s, 10, 7);
    cr_assert_eq(kt_stats(p).n_used, before + 1);
    llm_kv_pool_free(p);
}

Test(kv_alloc, sequence_ids) {
    llm_kv_pool *p = kt_pool(16, 4);
    llm_kv_seq_id a = kt_seq(p), b = kt_seq(p), c = kt_seq(p);
    cr_assert(a != b && b != c && a != c);
    cr_assert(a >= 0 && b >= 0 && c >= 0);
    cr_assert_eq(kt_stats(p).n_seqs, 3);
    cr_assert_eq(llm_kv_seq_free(p, b), LLM_OK);
    /* A freed id is no longer valid... */
    llm_kv_cow cow;
    cr_assert_eq(llm_kv_seq_append(p, b, NULL, 1, &cow), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_kv_seq_free(p, b), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_kv_seq_len(p, b), -1);
    cr_assert_eq(llm_kv_seq_len(p, -1), -1);
    cr_assert_eq(llm_kv_seq_len(p, 12345), -1);
    cr_assert_eq(llm_kv_seq_len(NULL, a), -1);
    /* ...and may be reused by the next create. */
    llm_kv_seq_id d = kt_seq(p);
    cr_assert_eq(d, b);
    cr_assert_eq(llm_kv_seq_len(p, d), 0);
    /* Many sequences: slot array growth. */
    llm_kv_seq_id ids[100];
    for (int i = 0; i < 100; i++) ids[i] = kt_seq(p);
    cr_assert_eq(kt_stats(p).n_seqs, 103);
    for (int i = 0; i < 100; i++) cr_assert_eq(llm_kv_seq_free(p, ids[i]), LLM_OK);
    kt_check(p);
    llm_kv_pool_free(p); /* frees the remaining live sequences too */
}

Test(kv_alloc, argument_errors_change_nothing) {
    llm_kv_pool *p = kt_pool(4, 4);
    llm_kv_seq_id s = kt_seq(p);
    kt_append_seq(p, s, 0, 5);
    llm_kv_cow cow;
    int32_t t[2] = {1, 2};
    cr_assert_eq(llm_kv_seq_append(p, s, t, 2, NULL), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_kv_seq_append(p, s, t, -1, &cow), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_kv_seq_append(NULL, s, t, 1, &cow), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_kv_seq_append(p, s, t, 0, &cow), LLM_OK);
    cr_assert_eq(cow.src, -1);
    cr_assert_eq(llm_kv_seq_truncate(p, s, 6), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_kv_seq_truncate(p, s, -1), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_kv_seq_release_before(p, s, 6), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_kv_seq_commit(p, s, 6), LLM_ERR_INVALID_ARG);
    const int32_t *ids;
    int32_t n;
    cr_assert_eq(llm_kv_seq_block_table(p, s, NULL, &n), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_kv_seq_block_table(p, 7, &ids, &n), LLM_ERR_INVALID_ARG);
    cr_assert_null(ids);
    cr_assert_eq(n, 0);
    llm_kv_block_info bi;
    cr_assert_eq(llm_kv_pool_block_info(p, 4, &bi), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_kv_pool_block_info(p, -1, &bi), LLM_ERR_INVALID_ARG);
    cr_assert_eq(llm_kv_seq_len(p, s), 5);
    cr_assert_eq(kt_stats(p).n_used, 2);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_alloc, every_block_usable_then_exhausted) {
    llm_kv_pool *p = kt_pool(5, 3);
    llm_kv_seq_id s = kt_seq(p);
    kt_append_seq(p, s, 0, 15); /* exactly 5 blocks */
    cr_assert_eq(kt_stats(p).n_free, 0);
    const int32_t *ids;
    int32_t n;
    cr_assert_eq(llm_kv_seq_block_table(p, s, &ids, &n), LLM_OK);
    cr_assert_eq(n, 5);
    int seen[5] = {0};
    for (int i = 0; i < n; i++) seen[ids[i]]++;
    for (int i = 0; i < 5; i++) cr_assert_eq(seen[i], 1);
    llm_kv_cow cow;
    cr_assert_eq(llm_kv_seq_append(p, s, NULL, 1, &cow), LLM_ERR_EXHAUSTED);
    cr_assert_eq(llm_kv_seq_len(p, s), 15);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_alloc, version) { cr_assert_str_eq(llm_kv_version(), "0.1.0"); }

Test(kv_alloc, slots_follow_the_table) {
    llm_kv_pool *p = kt_pool(8, 4);
    llm_kv_seq_id s = kt_seq(p);
    kt_append_seq(p, s, 0, 10);
    for (int32_t pos = 0; pos < 10; pos++)
        cr_assert_eq(llm_kv_seq_slot(p, s, pos), kt_blk(p, s, pos / 4) * 4 + pos % 4);
    cr_assert_eq(llm_kv_seq_slot(p, s, 10), -1);
    cr_assert_eq(llm_kv_seq_slot(p, s, -1), -1);
    cr_assert_eq(llm_kv_seq_slot(p, 5, 0), -1);
    cr_assert_eq(llm_kv_seq_release_before(p, s, 4), LLM_OK);
    cr_assert_eq(llm_kv_seq_slot(p, s, 3), -1);
    cr_assert_eq(llm_kv_seq_slot(p, s, 4), kt_blk(p, s, 1) * 4);
    llm_kv_pool_free(p);
}

/* Counts allocations, to show that a reserved table never grows. */
static int g_allocs;
static void *count_realloc(void *ud, void *ptr, size_t size) {
    (void)ud;
    g_allocs++;
    return realloc(ptr, size);
}
static void count_free(void *ud, void *ptr) {
    (void)ud;
    free(ptr);
}

Test(kv_alloc, reserve_then_decode_without_allocating) {
    llm_kv_pool_params pp = llm_kv_pool_default_params();
    pp.n_blocks = 256;
    pp.block_size = 4;
    pp.allocator.realloc_fn = count_realloc;
    pp.allocator.free_fn = count_free;
    llm_kv_pool *p;
    cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_OK);
    llm_kv_seq_id s = kt_seq(p), other = kt_seq(p);
    cr_assert_eq(llm_kv_seq_reserve(p, s, 1000), LLM_OK);
    cr_assert_eq(llm_kv_seq_reserve(p, s, -1), LLM_ERR_INVALID_ARG);
    kt_append_seq(p, s, 0, 1);
    const int32_t *before;
    int32_t n;
    cr_assert_eq(llm_kv_seq_block_table(p, s, &before, &n), LLM_OK);
    const int allocs = g_allocs;
    for (int i = 1; i < 1000; i++) {
        int32_t t = i;
        llm_kv_cow cow;
        cr_assert_eq(llm_kv_seq_append(p, s, &t, 1, &cow), LLM_OK);
        cr_assert_eq(llm_kv_seq_commit(p, s, i + 1), LLM_OK);
    }
    cr_assert_eq(g_allocs, allocs, "decode allocated %d times", g_allocs - allocs);
    /* Other sequences' growth and new sequences do not move this table. */
    kt_append_seq(p, other, 0, 20);
    for (int i = 0; i < 20; i++) kt_seq(p);
    const int32_t *after;
    cr_assert_eq(llm_kv_seq_block_table(p, s, &after, &n), LLM_OK);
    cr_assert_eq(after, before);
    cr_assert_eq(n, 250);
    kt_check(p);
    llm_kv_pool_free(p);
}
