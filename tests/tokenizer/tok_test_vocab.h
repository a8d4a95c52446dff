/* tok_test_vocab.h -- small hand-built vocabularies for unit tests (header-only). */
#ifndef TOK_TEST_VOCAB_H
#define TOK_TEST_VOCAB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/tokenizer.h"

/* GPT-2's bytes_to_unicode, written out independently of the library. */
static inline size_t tv_byte_char(int b, char *out) {
    int printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    unsigned cp = (unsigned)b;
    if (!printable) {
        int k = 0;
        for (int i = 0; i < b; i++)
            if (!((i >= 33 && i <= 126) || (i >= 161 && i <= 172) || (i >= 174 && i <= 255))) k++;
        cp = 256u + (unsigned)k;
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
        out[1] = 0;
        return 1;
    }
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    out[2] = 0;
    return 2;
}

typedef struct tv_vocab {
    char *tok[512];
    float score[512];
    int32_t type[512];
    int n;
} tv_vocab;

static inline int tv_add(tv_vocab *v, const char *s, float score, int32_t type) {
    size_t l = strlen(s);
    v->tok[v->n] = malloc(l + 1);
    memcpy(v->tok[v->n], s, l + 1);
    v->score[v->n] = score;
    v->type[v->n] = type;
    return v->n++;
}

static inline void tv_free(tv_vocab *v) {
    for (int i = 0; i < v->n; i++) free(v->tok[i]);
    v->n = 0;
}

/* Byte-level BPE: ids 0..255 are the bytes' chars, then "bc" "ab" "aa" "abc",
 * then control "<|end|>" (260) and user-defined "<x>" (261), "<x><y>" (262). */
static inline llm_tokenizer *tv_bpe(tv_vocab *v) {
    v->n = 0;
    char u[4];
    for (int b = 0; b < 256; b++) {
        tv_byte_char(b, u);
        tv_add(v, u, 0, LLM_TOKEN_TYPE_NORMAL);
    }
    tv_add(v, "bc", 0, 1);
    tv_add(v, "ab", 0, 1);
    tv_add(v, "aa", 0, 1);
    tv_add(v, "abc", 0, 1);
    tv_add(v, "<|end|>", 0, LLM_TOKEN_TYPE_CONTROL);
    tv_add(v, "<x>", 0, LLM_TOKEN_TYPE_USER_DEFINED);
    tv_add(v, "<x><y>", 0, LLM_TOKEN_TYPE_CONTROL);
    static const char *const merges[] = {"b c", "a b", "a a", "a bc"};
    llm_vocab_spec spec;
    llm_vocab_spec_init(&spec);
    spec.type = LLM_TOKENIZER_BPE;
    spec.n_tokens = v->n;
    spec.tokens = (const char *const *)v->tok;
    spec.token_types = v->type;
    spec.merges = merges;
    spec.n_merges = 4;
    spec.pre = "gpt-2";
    spec.eos = 260;
    spec.add_eos = 1;
    llm_tokenizer *t = NULL;
    if (llm_tokenizer_create(&spec, &t) != LLM_OK) fprintf(stderr, "tv_bpe: %s\n", llm_tokenizer_last_error());
    return t;
}

/* SentencePiece: <unk> <s> </s>, <0x00>..<0xFF> (3..258), then pieces. */
enum { TV_SPM_MS = 259, TV_SPM_A, TV_SPM_B, TV_SPM_MS_A, TV_SPM_AB, TV_SPM_HELLO, TV_SPM_WORLD, TV_SPM_MS_HELLO,
       TV_SPM_MS_WORLD };
static inline llm_tokenizer *tv_spm(tv_vocab *v, float score_ms_a, float score_ab) {
    v->n = 0;
    tv_add(v, "<unk>", 0, LLM_TOKEN_TYPE_UNKNOWN);
    tv_add(v, "<s>", 0, LLM_TOKEN_TYPE_CONTROL);
    tv_add(v, "</s>", 0, LLM_TOKEN_TYPE_CONTROL);
    char name[8];
    for (int b = 0; b < 256; b++) {
        snprintf(name, sizeof name, "<0x%02X>", b);
        tv_add(v, name, 0, LLM_TOKEN_TYPE_BYTE);
    }
    tv_add(v, "\xE2\x96\x81", -1, 1);
    tv_add(v, "a", -2, 1);
    tv_add(v, "b", -3, 1);
    tv_add(v, "\xE2\x96\x81" "a", score_ms_a, 1);
    tv_add(v, "ab", score_ab, 1);
    tv_add(v, "hello", -20, 1);
    tv_add(v, "world", -20, 1);
    tv_add(v, "\xE2\x96\x81hello", -10, 1);
    tv_add(v, "\xE2\x96\x81world", -10, 1);
    /* Intermediate pieces so that hello/world can be built by pair merges. */
    static const char *const parts[] = {"he", "hel", "hell", "wo", "wor", "worl", "\xE2\x96\x81h", "\xE2\x96\x81he",
                                        "\xE2\x96\x81hel", "\xE2\x96\x81hell", "\xE2\x96\x81w", "\xE2\x96\x81wo",
                                        "\xE2\x96\x81wor", "\xE2\x96\x81worl", "h", "e", "l", "o", "w", "r", "d"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) tv_add(v, parts[i], -30.0f - (float)i, 1);
    llm_vocab_spec spec;
    llm_vocab_spec_init(&spec);
    spec.type = LLM_TOKENIZER_SPM;
    spec.n_tokens = v->n;
    spec.tokens = (const char *const *)v->tok;
    spec.scores = v->score;
    spec.token_types = v->type;
    spec.unk = 0;
    spec.bos = 1;
    spec.eos = 2;
    llm_tokenizer *t = NULL;
    if (llm_tokenizer_create(&spec, &t) != LLM_OK) fprintf(stderr, "tv_spm: %s\n", llm_tokenizer_last_error());
    return t;
}

/* WordPiece in HF form. */
static inline llm_tokenizer *tv_wpm(tv_vocab *v) {
    v->n = 0;
    static const char *const toks[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able",
                                       "hello", "world", "!", "\xE4\xB8\xAD", "##s", "x", "##x"};
    for (int i = 0; i < 15; i++) tv_add(v, toks[i], 0, i < 5 ? LLM_TOKEN_TYPE_CONTROL : LLM_TOKEN_TYPE_NORMAL);
    llm_vocab_spec spec;
    llm_vocab_spec_init(&spec);
    spec.type = LLM_TOKENIZER_WPM;
    spec.n_tokens = v->n;
    spec.tokens = (const char *const *)v->tok;
    spec.token_types = v->type;
    spec.pad = 0, spec.unk = 1, spec.cls = 2, spec.sep = 3, spec.mask = 4;
    llm_tokenizer *t = NULL;
    if (llm_tokenizer_create(&spec, &t) != LLM_OK) fprintf(stderr, "tv_wpm: %s\n", llm_tokenizer_last_error());
    return t;
}

#endif
