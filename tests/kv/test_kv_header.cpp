// The public header must compile inside C++17 and link from C++.
#include "llama/kv.h"

#include <criterion/criterion.h>

Test(kv_header_cxx, usable_from_cxx) {
    llm_kv_pool_params pp = llm_kv_pool_default_params();
    pp.n_blocks = 4;
    pp.block_size = 2;
    llm_kv_pool *p = nullptr;
    cr_assert_eq(llm_kv_pool_create(&pp, &p), LLM_OK);
    llm_kv_seq_id s = -1;
    cr_assert_eq(llm_kv_seq_create(p, &s), LLM_OK);
    const int32_t t[3] = {1, 2, 3};
    llm_kv_cow cow;
    cr_assert_eq(llm_kv_seq_append(p, s, t, 3, &cow), LLM_OK);
    cr_assert_eq(llm_kv_seq_len(p, s), 3);
    llm_kv_pool_free(p);
}
