/* fuzz_chat_template.c -- libFuzzer harness (the work is in fuzz_chat_template_entry.c). */
#include "fuzz_entries.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return llm_fuzz_chat_template_one(data, size);
}
