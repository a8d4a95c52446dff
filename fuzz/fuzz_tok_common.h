/*
 * fuzz_tok_common.h -- the checks every tokenizer harness runs on a loaded
 * tokenizer (encode with each flag set, decode, stream-decode, round trip),
 * shared by fuzz_tokenizer_json, fuzz_tokenizer_encode and fuzz_vocab_gguf.
 * Harness code: a broken invariant aborts with a message on stderr.
 */
#ifndef LLM_FUZZ_TOK_COMMON_H
#define LLM_FUZZ_TOK_COMMON_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "llama/tokenizer.h"

#define FZ_CHECK(c)                                                                     \
    do {                                                                                \
        if (!(c)) {                                                                     \
            fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
            abort();                                                                    \
        }                                                                               \
    } while (0)

/* Whether s[0..n) is valid UTF-8 (no overlongs, surrogates or values past
 * U+10FFFF): written here independently of the tokenizer's own validator. */
int llm__fuzz_utf8_valid(const unsigned char *s, size_t n);

/* Run text[0..len) through tok: encode with flags 0, PARSE_SPECIAL and
 * ADD_SPECIAL|PARSE_SPECIAL (invalid UTF-8 must give LLM_ERR_BAD_UTF8 and
 * valid UTF-8 must encode; the measure/too-small/exact-capacity contract must
 * agree), every id in range, decode (with and without SKIP_SPECIAL, with the
 * too-small contract) and the streaming detokenizer (its concatenated output
 * equals decode's when decode's is valid UTF-8, and is always valid UTF-8).
 * When roundtrip is set (byte-level BPE) decode(encode(text)) == text for
 * plain encoding of valid UTF-8. */
void llm__fuzz_tok_exercise(const llm_tokenizer *tok, const char *text, size_t len, int roundtrip);

#endif
