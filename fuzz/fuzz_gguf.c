/* fuzz_gguf.c -- libFuzzer harness for the GGUF reader. */
#include "fuzz_entries.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return llm_fuzz_gguf_one(data, size);
}
