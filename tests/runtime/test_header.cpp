// The runtime and arch headers compile inside C++17 and their C API links.
#include "llama/runtime.h"
#include "llama/arch.h"

#include <criterion/criterion.h>

Test(runtime_header, cxx) {
    llm_backend_params p = llm_backend_default_params();
    cr_assert_eq(p.n_threads, 0);
    cr_assert_str_eq(llm_op_name(LLM_OP_MATMUL), "matmul");
    llm_net_batch b{};
    b.logits_mode = LLM_LOGITS_ALL;
    cr_assert_eq(b.n_tokens, 0);
}
