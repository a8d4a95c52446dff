# GBNF sources (paths relative to libs/grammar).
set(LLM_GRAMMAR_GBNF_SOURCES
  src/gbnf_parse.c
  src/gbnf_print.c
  src/gbnf_stacks.c
  src/gbnf_vocab.c
  src/gbnf_mask.c
  src/gbnf_matcher.c)
