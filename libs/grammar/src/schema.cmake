# JSON Schema -> GBNF sources (paths relative to libs/grammar).
set(LLM_GRAMMAR_SCHEMA_SOURCES
  src/schema_api.c
  src/schema_build.c
  src/schema_convert.c
  src/schema_object.c
  src/schema_regex.c
  src/schema_rules.c
  src/schema_text.c)
