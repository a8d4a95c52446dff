# Tokenizer sources (paths relative to libs/tokenizer).
set(LLM_TOKENIZER_SOURCES
  src/tok_util.c
  src/tok_vocab.c
  src/tok_pretok.c
  src/tok_bpe.c
  src/tok_spm.c
  src/tok_wpm.c
  src/tok_ugm.c
  src/tok_encode.c
  src/tok_decode.c
  src/tok_json.c      # strict read-only JSON reader (no JSON library)
  src/tok_hf_json.c   # tokenizer.json -> llm_tokenizer
  src/tok_gguf.c      # GGUF tokenizer.ggml.* -> llm_vocab_spec
  src/tok_load.c      # a tokenizer from a GGUF, tokenizer.json or HF folder path
)
