// test_gbnf_header.cpp -- llama/grammar.h compiles inside C++17 and its
// declarations link from C++ (extern "C").
#include "llama/grammar.h"

#include <criterion/criterion.h>

#include <cstring>

extern "C" const char *grammar_header_c11_probe(void);

Test(gbnf_header, compiles_and_links_from_cxx) {
    const char *text = "root ::= \"ok\"";
    llm_grammar *g = nullptr;
    cr_assert_eq(llm_grammar_parse(text, std::strlen(text), nullptr, &g), LLM_OK);
    llm_grammar_matcher_params p = llm_grammar_matcher_default_params();
    llm_grammar_matcher *m = nullptr;
    cr_assert_eq(llm_grammar_matcher_create(g, nullptr, &p, &m), LLM_OK);
    cr_assert_eq(llm_grammar_matcher_accept_bytes(m, "ok", 2), LLM_OK);
    cr_expect(llm_grammar_matcher_can_end(m));
    llm_grammar_matcher_free(m);
    llm_grammar_free(g);
    cr_expect_str_eq(grammar_header_c11_probe(), llm_grammar_version());
}
