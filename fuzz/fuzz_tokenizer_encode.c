/* fuzz_tokenizer_encode.c -- libFuzzer harness (the work is in
 * fuzz_tokenizer_encode_entry.c). The vocabularies come from
 * $LLM_TESTDATA_DIR/llama-cpp-vocab (default: the path configured at build time). */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_entries.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    const char *root = getenv("LLM_TESTDATA_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/llama-cpp-vocab", root && root[0] ? root : LLM_FUZZ_TESTDATA_DIR);
    if (!llm_fuzz_tokenizer_encode_init(dir)) {
        fprintf(stderr, "fuzz_tokenizer_encode: cannot load the vocabularies from %s\n", dir);
        exit(1);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return llm_fuzz_tokenizer_encode_one(data, size);
}
