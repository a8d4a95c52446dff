# JSON Schema -> GBNF tests (llama/json_schema.h).
# Against llama.cpp's own cases (golden/schema_cases.json, made by
# scripts/golden/grammar/schema_extract_llamacpp_cases.py).
llm_add_test(test_grammar_schema_golden SOURCES schema_golden_test.c LIBS llama::grammar PkgConfig::JANSSON)
