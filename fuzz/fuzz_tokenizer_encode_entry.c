/*
 * fuzz_tokenizer_encode_entry.c -- real vocabularies (from the llama.cpp
 * conformance GGUFs under $LLM_TESTDATA_DIR/llama-cpp-vocab: byte-level BPE
 * gpt-2, SentencePiece llama-spm, WordPiece bert-bge) built once, then every
 * input is encoded as text by each: invalid UTF-8 must give LLM_ERR_BAD_UTF8,
 * valid UTF-8 must encode, decode and stream-decode, and for gpt-2 (whose
 * byte-level alphabet covers all 256 bytes) decode(encode(text)) == text.
 */
#include <string.h>

#include "fuzz_entries.h"
#include "fuzz_tok_common.h"
#include "llama/tokenizer.h"

static const struct {
    const char *file;
    int roundtrip;
} k_vocabs[] = {
    {"ggml-vocab-gpt-2.gguf", 1},
    {"ggml-vocab-llama-spm.gguf", 0},
    {"ggml-vocab-bert-bge.gguf", 0},
};
#define N_VOCABS (sizeof k_vocabs / sizeof k_vocabs[0])

static llm_tokenizer *g_tok[N_VOCABS];

int llm_fuzz_tokenizer_encode_init(const char *vocab_dir) {
    int loaded = 0;
    for (size_t i = 0; i < N_VOCABS; i++) {
        if (g_tok[i]) {
            loaded++;
            continue;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", vocab_dir, k_vocabs[i].file);
        FILE *probe = fopen(path, "rb");
        if (!probe) continue;
        fclose(probe);
        llm_status st = llm_tokenizer_load(path, &g_tok[i]);
        if (st != LLM_OK) {
            fprintf(stderr, "%s\n", llm_tokenizer_last_error());
            continue;
        }
        loaded++;
    }
    return loaded == (int)N_VOCABS ? loaded : 0;
}

void llm_fuzz_tokenizer_encode_fini(void) {
    for (size_t i = 0; i < N_VOCABS; i++) {
        llm_tokenizer_free(g_tok[i]);
        g_tok[i] = NULL;
    }
}

int llm_fuzz_tokenizer_encode_one(const uint8_t *data, size_t size) {
    for (size_t i = 0; i < N_VOCABS; i++) {
        FZ_CHECK(g_tok[i] != NULL); /* llm_fuzz_tokenizer_encode_init first */
        llm__fuzz_tok_exercise(g_tok[i], (const char *)data, size, k_vocabs[i].roundtrip);
    }
    return 0;
}
