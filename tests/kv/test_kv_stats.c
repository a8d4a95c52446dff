/* Stats counters, byte totals, injected allocation failures. */
#include <stdlib.h>

#include "kv_test_util.h"

Test(kv_stats, counts_and_counters) {
    llm_kv_pool_params pp = llm_kv_pool_default_params();
    pp.n_blocks = 10;
    pp.block_size = 4;
    pp.bytes_per_token = 100;
    llm_kv_pool *p;
    cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_OK);
    llm_kv_stats st = kt_stats(p);
    cr_assert_eq(st.bytes_total, 4000u);
    cr_assert_eq(st.bytes_used, 0u);
    int32_t t[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    llm_kv_seq_id a = kt_seq(p);
    kt_append(p, a, t, 9);
    cr_assert_eq(llm_kv_seq_commit(p, a, 9), LLM_OK);
    llm_kv_seq_id b;
    cr_assert_eq(llm_kv_seq_fork(p, a, &b), LLM_OK);
    kt_append(p, b, t, 1); /* copy of the shared partial block */
    st = kt_stats(p);
    cr_assert_eq(st.n_seqs, 2);
    cr_assert_eq(st.n_used, 4);
    cr_assert_eq(st.n_free, 6);
    cr_assert_eq(st.n_cached, 0);
    cr_assert_eq(st.n_indexed, 2);
    cr_assert_eq(st.cow_copies, 1);
    cr_assert_eq(st.bytes_used, 1600u);
    cr_assert_eq(llm_kv_seq_free(p, a), LLM_OK);
    cr_assert_eq(llm_kv_seq_free(p, b), LLM_OK);
    st = kt_stats(p);
    cr_assert_eq(st.n_cached, 2);
    cr_assert_eq(st.n_free, 8);
    cr_assert_eq(st.n_free + st.n_used + st.n_cached, st.n_blocks);
    llm_kv_seq_id c = kt_seq(p);
    int32_t n;
    cr_assert_eq(llm_kv_seq_attach_prefix(p, c, t, 9, &n), LLM_OK);
    cr_assert_eq(n, 8);
    llm_kv_seq_id d = kt_seq(p);
    const int32_t other[9] = {9, 9, 9, 9, 9, 9, 9, 9, 9};
    cr_assert_eq(llm_kv_seq_attach_prefix(p, d, other, 9, &n), LLM_OK);
    cr_assert_eq(n, 0);
    st = kt_stats(p);
    cr_assert_eq(st.lookups, 2);
    cr_assert_eq(st.hit_blocks, 2);
    cr_assert_eq(st.miss_blocks, 2);
    kt_append(p, d, other, 9);
    kt_append(p, d, other, 9);
    kt_append(p, d, other, 9); /* 27 tokens: 7 blocks; 1 block left */
    llm_kv_cow cow;
    cr_assert_eq(llm_kv_seq_append(p, d, other, 9, &cow), LLM_ERR_EXHAUSTED);
    st = kt_stats(p);
    cr_assert_eq(st.exhausted, 1);
    llm_kv_pool_reset_stats(p);
    st = kt_stats(p);
    cr_assert_eq(st.lookups + st.hit_blocks + st.miss_blocks + st.evictions + st.cow_copies + st.exhausted,
                 0u);
    cr_assert_eq(st.n_used, 9); /* counts are not counters: untouched */
    cr_assert_eq(llm_kv_pool_stats(NULL, &st), LLM_ERR_INVALID_ARG);
    llm_kv_pool_free(p);
}

/* An allocator that fails after `budget` successful allocations and counts
 * live blocks, so leaks are visible without a sanitizer. */
typedef struct {
    int budget;
    int live;
} fail_alloc;

static void *fa_realloc(void *ud, void *ptr, size_t size) {
    fail_alloc *fa = ud;
    if (fa->budget <= 0) return NULL;
    fa->budget--;
    void *r = realloc(ptr, size);
    if (r && !ptr) fa->live++;
    return r;
}

static void fa_free(void *ud, void *ptr) {
    fail_alloc *fa = ud;
    if (ptr) fa->live--;
    free(ptr);
}

static llm_kv_pool_params fa_params(fail_alloc *fa) {
    llm_kv_pool_params pp = llm_kv_pool_default_params();
    pp.n_blocks = 64;
    pp.block_size = 4;
    pp.allocator.realloc_fn = fa_realloc;
    pp.allocator.free_fn = fa_free;
    pp.allocator.user_data = fa;
    return pp;
}

Test(kv_stats, create_fails_cleanly_at_every_allocation) {
    for (int k = 0; k < 5; k++) {
        fail_alloc fa = {k, 0};
        llm_kv_pool_params pp = fa_params(&fa);
        llm_kv_pool *p = (llm_kv_pool *)1;
        cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_ERR_NO_MEMORY, "budget %d", k);
        cr_assert_null(p);
        cr_assert_eq(fa.live, 0, "leak with budget %d", k);
    }
    fail_alloc fa = {5, 0};
    llm_kv_pool_params pp = fa_params(&fa);
    llm_kv_pool *p;
    cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_OK);
    llm_kv_pool_free(p);
    cr_assert_eq(fa.live, 0);
    pp.allocator.free_fn = NULL;
    cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_ERR_INVALID_ARG);
}

Test(kv_stats, out_of_memory_changes_nothing) {
    fail_alloc fa = {5, 0};
    llm_kv_pool_params pp = fa_params(&fa);
    llm_kv_pool *p;
    cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_OK);
    llm_kv_seq_id s;
    cr_assert_eq(llm_kv_seq_create(p, &s), LLM_ERR_NO_MEMORY); /* slot array */
    fa.budget = 1;
    cr_assert_eq(llm_kv_seq_create(p, &s), LLM_OK);
    llm_kv_cow cow;
    int32_t t[80] = {0};
    for (int k = 0; k < 3; k++) { /* table, hash, uid arrays in turn */
        fa.budget = k;
        cr_assert_eq(llm_kv_seq_append(p, s, t, 8, &cow), LLM_ERR_NO_MEMORY);
        cr_assert_eq(llm_kv_seq_len(p, s), 0);
        cr_assert_eq(kt_stats(p).n_used, 0);
        fa.budget = 100;
        kt_check(p);
    }
    fa.budget = 3;
    kt_append(p, s, t, 64); /* 16 entries: the first capacity */
    fa.budget = 0;
    cr_assert_eq(llm_kv_seq_append(p, s, t, 1, &cow), LLM_ERR_NO_MEMORY); /* growth */
    cr_assert_eq(llm_kv_seq_len(p, s), 64);
    cr_assert_eq(kt_stats(p).n_used, 16);
    llm_kv_seq_id f;
    cr_assert_eq(llm_kv_seq_fork(p, s, &f), LLM_ERR_NO_MEMORY);
    fa.budget = 100;
    cr_assert_eq(kt_stats(p).n_seqs, 1);
    kt_check(p);
    cr_assert_eq(llm_kv_seq_fork(p, s, &f), LLM_OK);
    kt_check(p);
    llm_kv_pool_free(p);
    cr_assert_eq(fa.live, 0);
}
