/*
 * fuzz_entries.h -- one entry point per parser, shared by the libFuzzer
 * harnesses (fuzz_*.c) and the plain corpus replay test
 * (tests/models/test_fuzz_corpus.c), so CI replays exactly what the fuzzer ran.
 * Each returns 0; a bug shows up as a sanitizer report or a failed check
 * (which aborts: harness code, not library code).
 */
#ifndef LLM_FUZZ_ENTRIES_H
#define LLM_FUZZ_ENTRIES_H

#include <stddef.h>
#include <stdint.h>

int llm_fuzz_gguf_one(const uint8_t *data, size_t size);
int llm_fuzz_safetensors_one(const uint8_t *data, size_t size);

#endif
