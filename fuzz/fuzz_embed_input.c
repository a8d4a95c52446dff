/* fuzz_embed_input.c -- libFuzzer harness (fuzz_app_entry.c). */
#include "fuzz_app_entries.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return llm_fuzz_embed_input_one(data, size);
}
