/* fuzz_safetensors.c -- libFuzzer harness for the SafeTensors reader. */
#include "fuzz_entries.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return llm_fuzz_safetensors_one(data, size);
}
