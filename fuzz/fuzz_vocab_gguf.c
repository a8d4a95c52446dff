/* fuzz_vocab_gguf.c -- libFuzzer harness (the work is in fuzz_vocab_gguf_entry.c). */
#include "fuzz_entries.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return llm_fuzz_vocab_gguf_one(data, size);
}
