# JSON Schema -> GBNF tests (llama/json_schema.h).
# Against llama.cpp's own cases (golden/schema_cases.json, made by
# scripts/golden/grammar/schema_extract_llamacpp_cases.py).
llm_add_test(test_grammar_schema_golden SOURCES schema_golden_test.c LIBS llama::grammar PkgConfig::JANSSON)
# Refusals, hostile inputs and the buffer contract.
llm_add_test(test_grammar_schema_errors SOURCES schema_errors_test.c LIBS llama::grammar)
# llama/json_schema.h compiles alone as C11 and inside C++.
llm_add_test(test_grammar_schema_header SOURCES schema_header_test.cpp schema_header_c11.c LIBS llama::grammar)
