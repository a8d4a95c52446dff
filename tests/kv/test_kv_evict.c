/* LRU eviction order and pool exhaustion (clear error, others unharmed). */
#include "kv_test_util.h"

/* Appends and commits n tokens base, base+1, ... to a fresh sequence. */
static llm_kv_seq_id committed_seq(llm_kv_pool *p, int32_t base, int32_t n) {
    llm_kv_seq_id s = kt_seq(p);
    kt_append_seq(p, s, base, n);
    cr_assert_eq(llm_kv_seq_commit(p, s, n), LLM_OK);
    return s;
}

static int32_t lookup(const llm_kv_pool *p, int32_t base, int32_t n) {
    int32_t t[64];
    for (int32_t i = 0; i < n; i++) t[i] = base + i;
    int32_t hit = -1;
    cr_assert_eq(llm_kv_prefix_lookup(p, t, n, &hit), LLM_OK);
    return hit;
}

Test(kv_evict, least_recently_released_first_tail_before_head) {
    llm_kv_pool *p = kt_pool(8, 2);
    llm_kv_seq_id a = committed_seq(p, 100, 4), b = committed_seq(p, 200, 4);
    const int32_t a0 = kt_blk(p, a, 0), a1 = kt_blk(p, a, 1);
    const int32_t b0 = kt_blk(p, b, 0), b1 = kt_blk(p, b, 1);
    cr_assert_eq(llm_kv_seq_free(p, a), LLM_OK);
    cr_assert_eq(llm_kv_seq_free(p, b), LLM_OK);
    llm_kv_stats st = kt_stats(p);
    cr_assert_eq(st.n_cached, 4);
    cr_assert_eq(st.n_free, 4);
    /* Free blocks are used before anything is evicted. */
    llm_kv_seq_id c = kt_seq(p);
    kt_append_seq(p, c, 0, 8);
    cr_assert_eq(kt_stats(p).evictions, 0);
    cr_assert_eq(lookup(p, 100, 4), 4);
    cr_assert_eq(lookup(p, 200, 4), 4);
    /* Then: a's tail, a's head, b's tail, b's head. */
    const int32_t order[4] = {a1, a0, b1, b0};
    const int32_t left_a[4] = {2, 0, 0, 0}, left_b[4] = {4, 4, 2, 0};
    for (int k = 0; k < 4; k++) {
        kt_append_seq(p, c, 8 + 2 * k, 2);
        cr_assert_eq(kt_blk(p, c, 4 + k), order[k], "eviction %d took block %d, want %d", k,
                     kt_blk(p, c, 4 + k), order[k]);
        cr_assert_eq(kt_stats(p).evictions, (uint64_t)k + 1);
        cr_assert_eq(lookup(p, 100, 4), left_a[k]);
        cr_assert_eq(lookup(p, 200, 4), left_b[k]);
    }
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_evict, a_hit_refreshes_recency) {
    llm_kv_pool *p = kt_pool(4, 2);
    llm_kv_seq_id a = committed_seq(p, 100, 4), b = committed_seq(p, 200, 4);
    cr_assert_eq(llm_kv_seq_free(p, a), LLM_OK);
    cr_assert_eq(llm_kv_seq_free(p, b), LLM_OK);
    /* Reuse a's prefix, then release it again: now b is the older one. */
    int32_t t[5] = {100, 101, 102, 103, 104}, n;
    llm_kv_seq_id s = kt_seq(p);
    cr_assert_eq(llm_kv_seq_attach_prefix(p, s, t, 4, &n), LLM_OK);
    cr_assert_eq(n, 4);
    cr_assert_eq(llm_kv_seq_free(p, s), LLM_OK);
    llm_kv_seq_id c = kt_seq(p);
    kt_append_seq(p, c, 0, 4);
    cr_assert_eq(kt_stats(p).evictions, 2);
    cr_assert_eq(lookup(p, 200, 4), 0);
    cr_assert_eq(lookup(p, 100, 4), 4);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_evict, explicit_evict_respects_order_and_limit) {
    llm_kv_pool *p = kt_pool(8, 2);
    llm_kv_seq_id a = committed_seq(p, 100, 4), b = committed_seq(p, 200, 4);
    cr_assert_eq(llm_kv_seq_free(p, a), LLM_OK);
    cr_assert_eq(llm_kv_seq_free(p, b), LLM_OK);
    int32_t n = -1;
    cr_assert_eq(llm_kv_pool_evict(p, 2, &n), LLM_OK);
    cr_assert_eq(n, 2);
    cr_assert_eq(lookup(p, 100, 4), 0);
    cr_assert_eq(lookup(p, 200, 4), 4);
    cr_assert_eq(kt_stats(p).n_free, 6);
    cr_assert_eq(llm_kv_pool_evict(p, 0, &n), LLM_OK);
    cr_assert_eq(n, 0);
    cr_assert_eq(llm_kv_pool_evict(p, -1, NULL), LLM_OK);
    cr_assert_eq(kt_stats(p).n_free, 8);
    cr_assert_eq(llm_kv_pool_evict(NULL, -1, &n), LLM_ERR_INVALID_ARG);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_evict, used_blocks_are_never_evicted) {
    llm_kv_pool *p = kt_pool(4, 2);
    llm_kv_seq_id a = committed_seq(p, 100, 4); /* indexed and in use */
    llm_kv_seq_id b = kt_seq(p);
    kt_append_seq(p, b, 0, 4);
    llm_kv_cow cow;
    cr_assert_eq(llm_kv_seq_append(p, b, NULL, 1, &cow), LLM_ERR_EXHAUSTED);
    cr_assert_eq(kt_stats(p).evictions, 0);
    cr_assert_eq(lookup(p, 100, 4), 4);
    cr_assert_eq(llm_kv_seq_len(p, a), 4);
    kt_check(p);
    llm_kv_pool_free(p);
}

Test(kv_evict, exhaustion_fails_one_request_only) {
    llm_kv_pool *p = kt_pool(10, 4);
    llm_kv_seq_id a = kt_seq(p), b = kt_seq(p);
    kt_append_seq(p, a, 0, 13);  /* 4 blocks */
    kt_append_seq(p, b, 50, 16); /* 4 blocks */
    llm_kv_seq_id f = committed_seq(p, 900, 4);
    cr_assert_eq(llm_kv_seq_free(p, f), LLM_OK); /* 1 cached, 1 free */
    int32_t ta[4], tb[4];
    for (int i = 0; i < 4; i++) ta[i] = kt_blk(p, a, i), tb[i] = kt_blk(p, b, i);

    /* A new request needing 3 blocks cannot be served: 1 free + 1 evictable. */
    llm_kv_seq_id c = kt_seq(p);
    llm_kv_cow cow;
    int32_t big[12] = {0};
    cr_assert_eq(llm_kv_seq_append(p, c, big, 12, &cow), LLM_ERR_EXHAUSTED);
    cr_assert(strstr(llm_kv_last_error(), "exhausted") != NULL, "%s", llm_kv_last_error());
    cr_assert_eq(cow.src, -1);
    cr_assert_eq(llm_kv_seq_len(p, c), 0);
    /* Nothing changed: the cached block was not sacrificed in vain. */
    llm_kv_stats st = kt_stats(p);
    cr_assert_eq(st.evictions, 0);
    cr_assert_eq(st.n_cached, 1);
    cr_assert_eq(st.n_free, 1);
    cr_assert_eq(st.exhausted, 1);
    cr_assert_eq(lookup(p, 900, 4), 4);
    /* The other sequences are unharmed and keep going. */
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(kt_blk(p, a, i), ta[i]);
        cr_assert_eq(kt_blk(p, b, i), tb[i]);
    }
    cr_assert_eq(llm_kv_seq_len(p, a), 13);
    cr_assert_eq(llm_kv_seq_len(p, b), 16);
    kt_append_seq(p, a, 13, 3);  /* fits in a's last block */
    kt_append_seq(p, b, 66, 1);  /* takes the free block */
    kt_append_seq(p, b, 67, 4);  /* evicts the cached one */
    cr_assert_eq(kt_stats(p).evictions, 1);
    cr_assert_eq(llm_kv_seq_append(p, a, NULL, 1, &cow), LLM_ERR_EXHAUSTED);
    /* The rejected request is dropped; freeing a makes room again. */
    cr_assert_eq(llm_kv_seq_free(p, c), LLM_OK);
    cr_assert_eq(llm_kv_seq_free(p, a), LLM_OK);
    c = kt_seq(p);
    kt_append(p, c, big, 12);
    cr_assert_eq(llm_kv_seq_len(p, b), 21);
    kt_check(p);
    llm_kv_pool_free(p);
}
