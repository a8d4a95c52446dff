/* Fork, copy-on-write, reference counts, truncate into a shared block. */
#include "kv_test_util.h"

Test(kv_fork, fork_shares_every_block) {
    llm_kv_pool *p = kt_pool(16, 4);
    llm_kv_seq_id a = kt_seq(p);
    kt_append_seq(p, a, 0, 10); /* blocks: [0..3] [4..7] [8,9] */
    llm_kv_seq_id b = -1;
    cr_assert_eq(llm_kv_seq_fork(p, a, &b), LLM_OK);
    cr_assert_neq(a, b);
    cr_assert_eq(llm_kv_seq_len(p, b), 10);
    cr_assert_eq(kt_ntable(p, b), 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(kt_blk(p, a, i), kt_blk(p, b, i));
        cr_assert_eq(kt_info(p, kt_blk(p, a, i)).ref, 2);
    }
    cr_assert_eq(kt_stats(p).n_used, 3); /* no block taken by fork */
    llm_kv_seq_id c = -1;
    cr_assert_eq(llm_kv_seq_fork(p, b, &c), LLM_OK);
    cr_assert_eq(kt_info(p, kt_blk(p, a, 0)).ref, 3);
    kt_check(p);
    cr_assert_eq(llm_kv_seq_free(p, a), LLM_OK);
    cr_assert_eq(kt_info(p, kt_blk(p, b, 0)).ref, 2);
    cr_assert_eq(llm_kv_seq_free(p, b), LLM_OK);
    cr_assert_eq(kt_info(p, kt_blk(p, c, 0)).ref, 1);
    cr_assert_eq(kt_stats(p).n_used, 3);
    cr_assert_eq(llm_kv_seq_free(p, c), LLM_OK);
    cr_assert_eq(kt_stats(p).n_free, 16);
    kt_check(p);
    llm_kv_seq_id x;
    cr_assert_eq(llm_kv_seq_fork(p, a, &x), LLM_ERR_INVALID_ARG); /* a is gone */
    cr_assert_eq(llm_kv_seq_fork(p, c, NULL), LLM_ERR_INVALID_ARG);
    llm_kv_pool_free(p);
}

Test(kv_fork, write_into_shared_partial_block_copies) {
    llm_kv_pool *p = kt_pool(16, 4);
    llm_kv_seq_id a = kt_seq(p);
    kt_append_seq(p, a, 0, 6); /* [0..3] [4,5] */
    llm_kv_seq_id b;
    cr_assert_eq(llm_kv_seq_fork(p, a, &b), LLM_OK);
    const int32_t shared = kt_blk(p, a, 1);
    cr_assert_eq(llm_kv_seq_blocks_needed(p, b, 1), 1); /* the copy */
    llm_kv_cow cow = kt_append_seq(p, b, 50, 1);
    cr_assert_eq(cow.src, shared);
    cr_assert_neq(cow.dst, shared);
    cr_assert(cow.dst >= 0);
    cr_assert_eq(cow.n_tokens, 2); /* slots 0 and 1 hold positions 4 and 5 */
    cr_assert_eq(kt_blk(p, b, 1), cow.dst);
    cr_assert_eq(kt_blk(p, a, 1), shared);
    cr_assert_eq(kt_blk(p, b, 0), kt_blk(p, a, 0)); /* full block still shared */
    cr_assert_eq(kt_info(p, shared).ref, 1);
    cr_assert_eq(kt_info(p, cow.dst).ref, 1);
    cr_assert_eq(kt_info(p, kt_blk(p, a, 0)).ref, 2);
    cr_assert_eq(kt_stats(p).cow_copies, 1);
    /* a now owns its partial block alone: it writes in place. */
    cow = kt_append_seq(p, a, 60, 2);
    cr_assert_eq(cow.src, -1);
    cr_assert_eq(kt_blk(p, a, 1), shared);
    /* b keeps writing in place into its copy, then takes a new block. */
    cow = kt_append_seq(p, b, 51, 3);
    cr_assert_eq(cow.src, -1);
    cr_assert_eq(kt_ntable(p, b), 3);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_fork, fork_at_block_boundary_needs_no_copy) {
    llm_kv_pool *p = kt_pool(16, 4);
    llm_kv_seq_id a = kt_seq(p);
    kt_append_seq(p, a, 0, 8);
    llm_kv_seq_id b;
    cr_assert_eq(llm_kv_seq_fork(p, a, &b), LLM_OK);
    llm_kv_cow cow = kt_append_seq(p, b, 100, 1);
    cr_assert_eq(cow.src, -1);
    cow = kt_append_seq(p, a, 200, 1);
    cr_assert_eq(cow.src, -1);
    cr_assert_neq(kt_blk(p, a, 2), kt_blk(p, b, 2));
    cr_assert_eq(kt_stats(p).cow_copies, 0);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_fork, copy_keeps_token_ids_for_commit) {
    /* After a copy, the new block must carry the ids of the copied slots, so
     * that committing it indexes the right content. */
    llm_kv_pool *p = kt_pool(16, 4);
    llm_kv_seq_id a = kt_seq(p);
    const int32_t t[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    kt_append(p, a, t, 6);
    llm_kv_seq_id b;
    cr_assert_eq(llm_kv_seq_fork(p, a, &b), LLM_OK);
    llm_kv_cow cow = kt_append(p, b, t + 6, 2);
    cr_assert(cow.src >= 0);
    cr_assert_eq(llm_kv_seq_commit(p, b, 8), LLM_OK);
    int32_t hit = -1;
    cr_assert_eq(llm_kv_prefix_lookup(p, t, 8, &hit), LLM_OK);
    cr_assert_eq(hit, 8);
    const int32_t wrong[8] = {1, 2, 3, 4, 0, 0, 7, 8};
    cr_assert_eq(llm_kv_prefix_lookup(p, wrong, 8, &hit), LLM_OK);
    cr_assert_eq(hit, 4);
    llm_kv_pool_free(p);
}

Test(kv_fork, truncate_into_shared_block) {
    llm_kv_pool *p = kt_pool(16, 4);
    llm_kv_seq_id a = kt_seq(p);
    kt_append_seq(p, a, 0, 10); /* [0..3] [4..7] [8,9] */
    llm_kv_seq_id b;
    cr_assert_eq(llm_kv_seq_fork(p, a, &b), LLM_OK);
    const int32_t b1 = kt_blk(p, a, 1), b2 = kt_blk(p, a, 2);
    cr_assert_eq(llm_kv_seq_truncate(p, b, 6), LLM_OK); /* keeps positions 4,5 of b1 */
    cr_assert_eq(llm_kv_seq_len(p, b), 6);
    cr_assert_eq(kt_ntable(p, b), 2);
    cr_assert_eq(kt_info(p, b2).ref, 1); /* released by b */
    cr_assert_eq(kt_info(p, b1).ref, 2); /* still shared */
    llm_kv_cow cow = kt_append_seq(p, b, 99, 1);
    cr_assert_eq(cow.src, b1);
    cr_assert_eq(cow.n_tokens, 2);
    cr_assert_neq(kt_blk(p, b, 1), b1);
    /* a is untouched: same blocks, same length. */
    cr_assert_eq(llm_kv_seq_len(p, a), 10);
    cr_assert_eq(kt_blk(p, a, 1), b1);
    cr_assert_eq(kt_blk(p, a, 2), b2);
    cr_assert_eq(kt_info(p, b1).ref, 1);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_fork, truncate_into_own_committed_block_copies) {
    /* Indexed blocks are immutable: regenerating from inside one keeps the
     * cached K/V intact and writes into a copy. */
    llm_kv_pool *p = kt_pool(16, 4);
    llm_kv_seq_id a = kt_seq(p);
    const int32_t t[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    kt_append(p, a, t, 8);
    cr_assert_eq(llm_kv_seq_commit(p, a, 8), LLM_OK);
    const int32_t b1 = kt_blk(p, a, 1);
    cr_assert(kt_info(p, b1).indexed);
    cr_assert_eq(llm_kv_seq_truncate(p, a, 6), LLM_OK);
    cr_assert_eq(kt_blk(p, a, 1), b1);
    const int32_t other[2] = {42, 43};
    llm_kv_cow cow = kt_append(p, a, other, 2);
    cr_assert_eq(cow.src, b1);
    cr_assert_eq(cow.n_tokens, 2);
    cr_assert_eq(kt_info(p, b1).state, LLM_KV_BLOCK_CACHED);
    int32_t hit;
    cr_assert_eq(llm_kv_prefix_lookup(p, t, 8, &hit), LLM_OK);
    cr_assert_eq(hit, 8); /* the old content is still found */
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_fork, exhausted_copy_changes_nothing) {
    llm_kv_pool *p = kt_pool(2, 4);
    llm_kv_seq_id a = kt_seq(p);
    kt_append_seq(p, a, 0, 6); /* both blocks used */
    llm_kv_seq_id b;
    cr_assert_eq(llm_kv_seq_fork(p, a, &b), LLM_OK);
    llm_kv_cow cow;
    cr_assert_eq(llm_kv_seq_append(p, b, NULL, 1, &cow), LLM_ERR_EXHAUSTED);
    cr_assert_eq(cow.src, -1);
    cr_assert_eq(llm_kv_seq_len(p, b), 6);
    cr_assert_eq(kt_blk(p, b, 1), kt_blk(p, a, 1));
    cr_assert_eq(kt_info(p, kt_blk(p, a, 1)).ref, 2);
    cr_assert_eq(kt_stats(p).exhausted, 1);
    kt_check(p);
    /* Once a lets go, b owns the block and writes in place. */
    cr_assert_eq(llm_kv_seq_free(p, a), LLM_OK);
    cow = kt_append_seq(p, b, 7, 2);
    cr_assert_eq(cow.src, -1);
    llm_kv_pool_free(p);
}
