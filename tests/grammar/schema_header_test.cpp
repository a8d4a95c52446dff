// schema_header_test.cpp -- llama/json_schema.h compiles inside C++17 and its
// declarations link from C++ (extern "C").
#include "llama/json_schema.h"

#include <criterion/criterion.h>
#include <cstring>

extern "C" size_t schema_header_c11_probe(void);

Test(schema_header, compiles_and_links_from_cxx) {
    const char *s = "{\"type\": \"null\"}";
    char *g = nullptr;
    size_t n = 0;
    cr_assert_eq(llm_json_schema_to_gbnf_alloc(s, std::strlen(s), nullptr, &g, &n), LLM_OK);
    cr_expect_str_eq(g, "root ::= \"null\"\nspace ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n");
    cr_expect_eq(n, std::strlen(g));
    llm_json_schema_free(g);
    cr_expect_gt(schema_header_c11_probe(), 0u);
}
