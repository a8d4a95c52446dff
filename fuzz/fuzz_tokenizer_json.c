/* fuzz_tokenizer_json.c -- libFuzzer harness (the work is in fuzz_tokenizer_json_entry.c). */
#include "fuzz_entries.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return llm_fuzz_tokenizer_json_one(data, size);
}
