/*
 * fuzz_vocab_gguf_entry.c -- feeds one input to the GGUF reader and then the
 * tokenizer's tokenizer.ggml.* loader, through
 * llm_tokenizer_from_gguf_buffer (llama/tokenizer.h): wrong types,
 * mismatched array lengths, huge or negative ids, empty vocabularies, merges
 * naming unknown tokens. When a tokenizer is built, a few fixed texts go
 * through encode / decode / the streaming detokenizer.
 */
#include <string.h>

#include "fuzz_entries.h"
#include "fuzz_tok_common.h"
#include "llama/tokenizer.h"

static const char *const k_texts[] = {
    "Hello world! 123",
    " a  b\tc\n\nd",
    "<s>[INST]</s><|endoftext|><unk>",
    "h\xC3\xA9llo \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\xA6\x99",
    "bad \xC0\x80",
};

int llm_fuzz_vocab_gguf_one(const uint8_t *data, size_t size) {
    llm_tokenizer *tok = NULL;
    /* Nothing is borrowed from data: the tokenizer is used after the call. */
    llm_status st = llm_tokenizer_from_gguf_buffer(data, size, &tok);
    if (st != LLM_OK) {
        FZ_CHECK(tok == NULL);
        FZ_CHECK(llm_tokenizer_last_error()[0] != '\0');
        return 0;
    }
    FZ_CHECK(tok != NULL);
    const int32_t n = llm_tokenizer_n_tokens(tok);
    FZ_CHECK(n > 0);
    for (int s = LLM_SPECIAL_BOS; s <= LLM_SPECIAL_MASK; s++) {
        llm_token id = llm_tokenizer_special(tok, (llm_special)s);
        FZ_CHECK(id == LLM_TOKEN_NULL || (id >= 0 && id < n));
    }
    for (size_t i = 0; i < sizeof k_texts / sizeof k_texts[0]; i++)
        llm__fuzz_tok_exercise(tok, k_texts[i], strlen(k_texts[i]), 0);
    llm_tokenizer_free(tok);
    return 0;
}
