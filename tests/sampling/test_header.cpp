// test_header.cpp -- llama/sampling.h compiles inside C++17 and its
// declarations link from C++ (extern "C").
#include "llama/sampling.h"

#include <criterion/criterion.h>

Test(header, compiles_and_links_from_cxx) {
    llm_sampler_chain_params cp = llm_sampler_chain_default_params();
    cp.n_vocab_max = 4;
    llm_sampler_chain *ch = nullptr;
    cr_assert_eq(llm_sampler_chain_create(&cp, &ch), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_greedy(ch), LLM_OK);
    const float x[4] = {0.f, 2.f, 1.f, 0.f};
    int32_t tok = -1;
    cr_assert_eq(llm_sampler_chain_sample(ch, x, 4, &tok), LLM_OK);
    cr_expect_eq(tok, 1);
    llm_sampler_chain_free(ch);
}
