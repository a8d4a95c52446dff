# Chat templates (owned by the chat-template part of the tokenizer library).
# Paths are relative to libs/tokenizer.
set(LLM_TOKENIZER_CHAT_SOURCES
  src/chat/chat_template.c
  src/chat/chat_render.c
  src/chat/chat_text.c
  src/chat/jinja_lex.c
  src/chat/jinja_parse.c
  src/chat/jinja_parse_expr.c
  src/chat/jinja_value.c
  src/chat/jinja_builtins.c
  src/chat/jinja_filters.c
  src/chat/jinja_ops.c
  src/chat/jinja_eval.c)
