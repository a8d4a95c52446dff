# GBNF sources (paths relative to libs/grammar).
set(LLM_GRAMMAR_GBNF_SOURCES)
