/*
 * fuzz_tokenizer_json_entry.c -- feeds one input to the tokenizer.json
 * loader (llm_tokenizer_from_hf_json, buffer variant) and, when it loads,
 * queries the vocabulary and runs a few fixed texts plus a slice of the input
 * itself through encode / decode / the streaming detokenizer
 * (llm__fuzz_tok_exercise).
 */
#include <string.h>

#include "fuzz_entries.h"
#include "fuzz_tok_common.h"

/* Texts that reach the pre-tokenizers' branches, specials and bad UTF-8. */
static const char *const k_texts[] = {
    "Hello world",
    "  leading spaces,\ttabs\nand newlines\r\n  ",
    "<s>[INST] hi [/INST]</s><|im_start|>user<|im_end|>[CLS][SEP]<unk>",
    "h\xC3\xA9llo w\xC3\xB6rld \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\xA6\x99 1234567 it's don't",
    "",
    "ok \xFF bad",
};

static void check_vocab(const llm_tokenizer *tok) {
    const int32_t n = llm_tokenizer_n_tokens(tok);
    FZ_CHECK(n > 0);
    const int32_t lim = n < 64 ? n : 64;
    for (int32_t i = 0; i < lim; i++) {
        const int32_t id = i < 32 ? i : n - 1 - (i - 32);
        const char *t = llm_tokenizer_token_text(tok, id);
        FZ_CHECK(t != NULL);
        llm_token f = llm_tokenizer_find(tok, t, strlen(t));
        /* Another id may carry the same text, but never an unknown one. */
        FZ_CHECK(f >= 0 && f < n && strcmp(llm_tokenizer_token_text(tok, f), t) == 0);
        (void)llm_tokenizer_token_score(tok, id);
    }
    FZ_CHECK(llm_tokenizer_token_text(tok, n) == NULL && llm_tokenizer_token_text(tok, -1) == NULL);
    for (int s = LLM_SPECIAL_BOS; s <= LLM_SPECIAL_MASK; s++) {
        llm_token id = llm_tokenizer_special(tok, (llm_special)s);
        FZ_CHECK(id == LLM_TOKEN_NULL || (id >= 0 && id < n));
    }
    FZ_CHECK(llm_tokenizer_pre_name(tok) != NULL);
}

int llm_fuzz_tokenizer_json_one(const uint8_t *data, size_t size) {
    llm_tokenizer *tok = NULL;
    llm_status st = llm_tokenizer_from_hf_json((const char *)data, size, &tok);
    if (st != LLM_OK) {
        FZ_CHECK(tok == NULL);
        FZ_CHECK(llm_tokenizer_last_error()[0] != '\0');
        return 0;
    }
    FZ_CHECK(tok != NULL);
    check_vocab(tok);
    for (size_t i = 0; i < sizeof k_texts / sizeof k_texts[0]; i++)
        llm__fuzz_tok_exercise(tok, k_texts[i], strlen(k_texts[i]), 0);
    /* A slice of the input as text (the tail: the head is JSON syntax). */
    const size_t slice = size < 256 ? size : 256;
    llm__fuzz_tok_exercise(tok, (const char *)data + size - slice, slice, 0);
    llm_tokenizer_free(tok);
    return 0;
}
