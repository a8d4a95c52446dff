/*
 * fuzz_entries.h -- one entry point per parser, shared by the libFuzzer
 * harnesses (fuzz_*.c) and the plain corpus replay test
 * (tests/models/test_fuzz_corpus.c, tests/fuzz/test_fuzz_tok_corpus.c), so CI replays exactly what the fuzzer ran.
 * Each returns 0; a bug shows up as a sanitizer report or a failed check
 * (which aborts: harness code, not library code).
 */
#ifndef LLM_FUZZ_ENTRIES_H
#define LLM_FUZZ_ENTRIES_H

#include <stddef.h>
#include <stdint.h>

int llm_fuzz_gguf_one(const uint8_t *data, size_t size);
int llm_fuzz_safetensors_one(const uint8_t *data, size_t size);

/* Tokenizer side (fuzz_tokenizer_*_entry.c, fuzz_vocab_gguf_entry.c,
 * fuzz_chat_template_entry.c; replayed by tests/fuzz/test_fuzz_tok_corpus.c). */
int llm_fuzz_tokenizer_json_one(const uint8_t *data, size_t size);
int llm_fuzz_vocab_gguf_one(const uint8_t *data, size_t size);
int llm_fuzz_chat_template_one(const uint8_t *data, size_t size);
/* Builds the gpt-2, llama-spm and bert-bge tokenizers from the GGUFs in
 * vocab_dir once; returns how many were built (all of them) or 0 when any is
 * missing. llm_fuzz_tokenizer_encode_one needs it first; _fini frees them. */
int llm_fuzz_tokenizer_encode_init(const char *vocab_dir);
int llm_fuzz_tokenizer_encode_one(const uint8_t *data, size_t size);
void llm_fuzz_tokenizer_encode_fini(void);

#endif
