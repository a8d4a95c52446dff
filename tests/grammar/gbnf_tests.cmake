# GBNF tests (grammar language, matcher, token masks).
# Against llama.cpp's cases (golden/*.json, made by scripts/golden/grammar/extract_llamacpp_cases.py).
llm_add_test(test_grammar_gbnf_golden SOURCES test_gbnf_golden.c LIBS llama::grammar)
target_include_directories(test_grammar_gbnf_golden PRIVATE ${PROJECT_SOURCE_DIR}/libs/grammar/src)
# Masks against a brute-force reference on the default model's and Qwen2's vocabularies
# (the test reads token bytes through the engine's tokenizer loader).
llm_add_test(test_grammar_gbnf_masks SOURCES test_gbnf_masks.c LIBS llama::grammar llama::tokenizer)
llm_add_test(test_grammar_gbnf_matcher SOURCES test_gbnf_matcher.c LIBS llama::grammar Threads::Threads)
llm_add_test(test_grammar_gbnf_fuzz SOURCES test_gbnf_fuzz.c LIBS llama::grammar)
llm_add_test(test_grammar_gbnf_header SOURCES test_gbnf_header.cpp gbnf_header_c11.c LIBS llama::grammar)
