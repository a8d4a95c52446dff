/* kv_test_util.h -- small helpers shared by the kv test files. */
#ifndef KV_TEST_UTIL_H
#define KV_TEST_UTIL_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "llama/kv.h"

static inline llm_kv_pool *kt_pool(int32_t n_blocks, int32_t block_size) {
    llm_kv_pool_params pp = llm_kv_pool_default_params();
    pp.n_blocks = n_blocks;
    pp.block_size = block_size;
    llm_kv_pool *p = NULL;
    cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_OK, "%s", llm_kv_last_error());
    return p;
}

static inline void kt_check(const llm_kv_pool *p) {
    cr_assert_eq(llm_kv_pool_check(p), LLM_OK, "%s", llm_kv_last_error());
}

static inline llm_kv_seq_id kt_seq(llm_kv_pool *p) {
    llm_kv_seq_id s = -1;
    cr_assert_eq(llm_kv_seq_create(p, &s), LLM_OK, "%s", llm_kv_last_error());
    return s;
}

/* Appends n tokens and asserts success; returns the copy to perform. */
static inline llm_kv_cow kt_append(llm_kv_pool *p, llm_kv_seq_id s, const int32_t *t, int32_t n) {
    llm_kv_cow cow;
    cr_assert_eq(llm_kv_seq_append(p, s, t, n, &cow), LLM_OK, "%s", llm_kv_last_error());
    return cow;
}

/* Appends tokens base, base+1, ... (n of them). */
static inline llm_kv_cow kt_append_seq(llm_kv_pool *p, llm_kv_seq_id s, int32_t base, int32_t n) {
    int32_t t[512];
    cr_assert(n <= 512);
    for (int32_t i = 0; i < n; i++) t[i] = base + i;
    return kt_append(p, s, t, n);
}

/* Physical block of logical block i of s. */
static inline int32_t kt_blk(const llm_kv_pool *p, llm_kv_seq_id s, int32_t i) {
    const int32_t *ids;
    int32_t n;
    cr_assert_eq(llm_kv_seq_block_table(p, s, &ids, &n), LLM_OK);
    cr_assert(i >= 0 && i < n, "entry %d of %d", i, n);
    return ids[i];
}

static inline int32_t kt_ntable(const llm_kv_pool *p, llm_kv_seq_id s) {
    const int32_t *ids;
    int32_t n;
    cr_assert_eq(llm_kv_seq_block_table(p, s, &ids, &n), LLM_OK);
    return n;
}

static inline llm_kv_block_info kt_info(const llm_kv_pool *p, int32_t b) {
    llm_kv_block_info bi;
    cr_assert_eq(llm_kv_pool_block_info(p, b, &bi), LLM_OK);
    return bi;
}

static inline llm_kv_stats kt_stats(const llm_kv_pool *p) {
    llm_kv_stats st;
    cr_assert_eq(llm_kv_pool_stats(p, &st), LLM_OK);
    return st;
}

#endif
