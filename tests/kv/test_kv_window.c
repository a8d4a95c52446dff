/* Sliding-window release and truncate, and how they meet commit and fork. */
#include "kv_test_util.h"

Test(kv_window, release_leaves_holes_and_keeps_indexing) {
    llm_kv_pool *p = kt_pool(16, 4);
    llm_kv_seq_id s = kt_seq(p);
    kt_append_seq(p, s, 0, 20); /* 5 blocks */
    const int32_t b2 = kt_blk(p, s, 2);
    cr_assert_eq(llm_kv_seq_release_before(p, s, 9), LLM_OK); /* positions 0..7 go */
    cr_assert_eq(llm_kv_seq_len(p, s), 20);
    cr_assert_eq(llm_kv_seq_first_pos(p, s), 8);
    cr_assert_eq(kt_ntable(p, s), 5);
    cr_assert_eq(kt_blk(p, s, 0), LLM_KV_NO_BLOCK);
    cr_assert_eq(kt_blk(p, s, 1), LLM_KV_NO_BLOCK);
    cr_assert_eq(kt_blk(p, s, 2), b2);
    llm_kv_stats st = kt_stats(p);
    cr_assert_eq(st.n_used, 3);
    cr_assert_eq(st.n_free, 13); /* uncommitted: straight to the free list */
    /* Moving the window back is a no-op; forward again releases more. */
    cr_assert_eq(llm_kv_seq_release_before(p, s, 3), LLM_OK);
    cr_assert_eq(llm_kv_seq_first_pos(p, s), 8);
    cr_assert_eq(llm_kv_seq_release_before(p, s, 21), LLM_ERR_INVALID_ARG);
    /* Appending continues at logical block len / 4. */
    kt_append_seq(p, s, 20, 1);
    cr_assert_eq(kt_ntable(p, s), 6);
    cr_assert_eq(kt_blk(p, s, 2), b2);
    kt_check(p);
    /* Release everything that is complete; the partial block stays. */
    cr_assert_eq(llm_kv_seq_release_before(p, s, 21), LLM_OK);
    cr_assert_eq(llm_kv_seq_first_pos(p, s), 20);
    cr_assert_eq(kt_stats(p).n_used, 1);
    kt_check(p);
    cr_assert_eq(llm_kv_seq_free(p, s), LLM_OK);
    cr_assert_eq(kt_stats(p).n_free, 16);
    llm_kv_pool_free(p);
}

Test(kv_window, release_whole_table_at_block_boundary) {
    llm_kv_pool *p = kt_pool(8, 4);
    llm_kv_seq_id s = kt_seq(p);
    kt_append_seq(p, s, 0, 8);
    cr_assert_eq(llm_kv_seq_release_before(p, s, 8), LLM_OK);
    cr_assert_eq(kt_stats(p).n_used, 0);
    cr_assert_eq(llm_kv_seq_blocks_needed(p, s, 1), 1);
    kt_append_seq(p, s, 8, 2);
    cr_assert_eq(kt_ntable(p, s), 3);
    cr_assert_neq(kt_blk(p, s, 2), LLM_KV_NO_BLOCK);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_window, truncate_cannot_reach_into_released_blocks) {
    llm_kv_pool *p = kt_pool(16, 4);
    llm_kv_seq_id s = kt_seq(p);
    kt_append_seq(p, s, 0, 14);
    cr_assert_eq(llm_kv_seq_release_before(p, s, 8), LLM_OK);
    cr_assert_eq(llm_kv_seq_truncate(p, s, 7), LLM_ERR_STATE);
    cr_assert_eq(llm_kv_seq_len(p, s), 14);
    cr_assert_eq(llm_kv_seq_truncate(p, s, 10), LLM_OK);
    cr_assert_eq(kt_ntable(p, s), 3);
    cr_assert_eq(llm_kv_seq_truncate(p, s, 8), LLM_OK); /* exactly at the window */
    cr_assert_eq(kt_ntable(p, s), 2);
    cr_assert_eq(kt_stats(p).n_used, 0);
    kt_append_seq(p, s, 8, 1);
    cr_assert_eq(kt_ntable(p, s), 3);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_window, truncate_releases_tail_blocks) {
    llm_kv_pool *p = kt_pool(16, 4);
    llm_kv_seq_id s = kt_seq(p);
    kt_append_seq(p, s, 0, 17); /* 5 blocks */
    cr_assert_eq(llm_kv_seq_truncate(p, s, 17), LLM_OK); /* no-op */
    cr_assert_eq(kt_stats(p).n_used, 5);
    cr_assert_eq(llm_kv_seq_truncate(p, s, 9), LLM_OK);
    cr_assert_eq(kt_stats(p).n_used, 3);
    cr_assert_eq(llm_kv_seq_truncate(p, s, 0), LLM_OK);
    cr_assert_eq(kt_stats(p).n_used, 0);
    cr_assert_eq(kt_ntable(p, s), 0);
    /* Private, unindexed partial block: truncate then append writes in place. */
    kt_append_seq(p, s, 0, 3);
    const int32_t b0 = kt_blk(p, s, 0);
    cr_assert_eq(llm_kv_seq_truncate(p, s, 1), LLM_OK);
    llm_kv_cow cow = kt_append_seq(p, s, 50, 2);
    cr_assert_eq(cow.src, -1);
    cr_assert_eq(kt_blk(p, s, 0), b0);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_window, commit_then_release_keeps_the_chain) {
    llm_kv_pool *p = kt_pool(32, 4);
    int32_t t[24];
    for (int i = 0; i < 24; i++) t[i] = 1000 + i * 7;
    llm_kv_seq_id s = kt_seq(p);
    kt_append(p, s, t, 12);
    cr_assert_eq(llm_kv_seq_commit(p, s, 12), LLM_OK);
    cr_assert_eq(llm_kv_seq_release_before(p, s, 8), LLM_OK);
    /* Released committed blocks stay in the index as CACHED. */
    llm_kv_stats st = kt_stats(p);
    cr_assert_eq(st.n_cached, 2);
    cr_assert_eq(st.n_indexed, 3);
    kt_append(p, s, t + 12, 12);
    cr_assert_eq(llm_kv_seq_commit(p, s, 24), LLM_OK);
    int32_t n;
    cr_assert_eq(llm_kv_prefix_lookup(p, t, 24, &n), LLM_OK);
    cr_assert_eq(n, 24); /* the chain continued past the released blocks */
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_window, release_before_commit_ends_the_chain) {
    llm_kv_pool *p = kt_pool(32, 4);
    int32_t t[16];
    for (int i = 0; i < 16; i++) t[i] = 500 + i;
    llm_kv_seq_id s = kt_seq(p);
    kt_append(p, s, t, 16);
    cr_assert_eq(llm_kv_seq_release_before(p, s, 4), LLM_OK);
    cr_assert_eq(llm_kv_seq_commit(p, s, 16), LLM_OK); /* not an error */
    cr_assert_eq(kt_stats(p).n_indexed, 0);
    int32_t n;
    cr_assert_eq(llm_kv_prefix_lookup(p, t, 16, &n), LLM_OK);
    cr_assert_eq(n, 0);
    llm_kv_pool_free(p);
}

Test(kv_window, fork_copies_holes) {
    llm_kv_pool *p = kt_pool(16, 4);
    llm_kv_seq_id a = kt_seq(p);
    kt_append_seq(p, a, 0, 10);
    cr_assert_eq(llm_kv_seq_release_before(p, a, 4), LLM_OK);
    llm_kv_seq_id b;
    cr_assert_eq(llm_kv_seq_fork(p, a, &b), LLM_OK);
    cr_assert_eq(llm_kv_seq_first_pos(p, b), 4);
    cr_assert_eq(kt_blk(p, b, 0), LLM_KV_NO_BLOCK);
    cr_assert_eq(kt_info(p, kt_blk(p, a, 1)).ref, 2);
    cr_assert_eq(kt_stats(p).n_used, 2);
    kt_check(p);
    cr_assert_eq(llm_kv_seq_free(p, a), LLM_OK);
    cr_assert_eq(llm_kv_seq_free(p, b), LLM_OK);
    cr_assert_eq(kt_stats(p).n_free, 16);
    llm_kv_pool_free(p);
}
