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
# The mask test again, over the GBNF sources built with shallow contexts and
# a small class table, so that classes derived from a shared prefix and the
# table-full path are checked against the brute-force reference too.
include(${PROJECT_SOURCE_DIR}/libs/grammar/src/gbnf.cmake)
list(TRANSFORM LLM_GRAMMAR_GBNF_SOURCES PREPEND ${PROJECT_SOURCE_DIR}/libs/grammar/ OUTPUT_VARIABLE gbnf_shallow_sources)
llm_add_test(test_grammar_gbnf_masks_shallow SOURCES test_gbnf_masks.c ${gbnf_shallow_sources}
  ${PROJECT_SOURCE_DIR}/libs/grammar/src/grammar_version.c
  LIBS llama::tokenizer llama::common Threads::Threads)
target_include_directories(test_grammar_gbnf_masks_shallow PRIVATE
  ${PROJECT_SOURCE_DIR}/libs/grammar/include ${PROJECT_SOURCE_DIR}/libs/grammar/src)
target_compile_definitions(test_grammar_gbnf_masks_shallow PRIVATE
  GMASK_CONTEXT_DEPTH=3 GMASK_SHARED_DEPTH=1 GMASK_MAX_CLASSES=24)
