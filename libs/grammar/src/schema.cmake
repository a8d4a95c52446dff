# JSON Schema -> GBNF sources (paths relative to libs/grammar).
set(LLM_GRAMMAR_SCHEMA_SOURCES)
