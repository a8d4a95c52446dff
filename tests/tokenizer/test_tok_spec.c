/* The three algorithms on small hand-built vocabularies, special tokens,
 * and the error contracts (bad UTF-8 offset, buffer sizes, bad arguments). */
#include <criterion/criterion.h>

#define TT_NO_GGUF
#include "tok_test_util.h"
#include "tok_test_vocab.h"

static void expect_ids(const llm_tokenizer *t, const char *text, unsigned flags, const llm_token *want, int n_want) {
    llm_token *got;
    int32_t n;
    cr_assert_eq(tt_encode(t, text, strlen(text), flags, &got, &n), LLM_OK, "\"%s\": %s", text, llm_tokenizer_last_error());
    int same = n == n_want && (n == 0 || memcmp(got, want, (size_t)n * sizeof *got) == 0);
    if (!same) {
        printf("\"%s\": got", text);
        for (int i = 0; i < n; i++) printf(" %d", (int)got[i]);
        printf("\n");
    }
    cr_expect(same, "\"%s\": ids differ (got %d tokens, want %d)", text, (int)n, n_want);
    free(got);
}

Test(tokenizer_spec, bpe_merge_order) {
    tv_vocab v;
    llm_tokenizer *t = tv_bpe(&v);
    cr_assert(t);
    /* (b,c) has the best rank, then (a,bc): "abc" is one token. */
    expect_ids(t, "abc", 0, (llm_token[]){259}, 1);
    /* Equal ranks: the leftmost pair merges first. */
    expect_ids(t, "aaa", 0, (llm_token[]){258, 'a'}, 2);
    /* " abc": the space stays its own symbol (no merge with U+0120). */
    expect_ids(t, "ab abc", 0, (llm_token[]){257, 32, 259}, 3);
    expect_ids(t, "", 0, NULL, 0);
    /* ADD_SPECIAL adds the EOS this vocabulary asks for, and no BOS. */
    expect_ids(t, "ab", LLM_TOKENIZE_ADD_SPECIAL, (llm_token[]){257, 260}, 2);
    llm_tokenizer_free(t);
    tv_free(&v);
}

Test(tokenizer_spec, special_tokens) {
    tv_vocab v;
    llm_tokenizer *t = tv_bpe(&v);
    cr_assert(t);
    /* Control text is plain text unless parse_special: "<|end|>" is 7 byte tokens. */
    llm_token *ids;
    int32_t n;
    cr_assert_eq(tt_encode(t, "<|end|>", 7, 0, &ids, &n), LLM_OK);
    cr_expect_eq(n, 7);
    free(ids);
    expect_ids(t, "a<|end|>b", LLM_TOKENIZE_PARSE_SPECIAL, (llm_token[]){'a', 260, 'b'}, 3);
    /* User-defined added tokens are always whole. */
    expect_ids(t, "a<x>", 0, (llm_token[]){'a', 261}, 2);
    /* Longest match first: "<x><y>" (control) beats "<x>" when parsing specials. */
    expect_ids(t, "<x><y>", LLM_TOKENIZE_PARSE_SPECIAL, (llm_token[]){262}, 1);
    expect_ids(t, "<x><y>", 0, (llm_token[]){261, '<', 'y', '>'}, 4);
    llm_tokenizer_free(t);
    tv_free(&v);
}

Test(tokenizer_spec, spm_scores_and_byte_fallback) {
    tv_vocab v;
    /* "▁a" scores higher than "ab": "ab" -> ▁a b. */
    llm_tokenizer *t = tv_spm(&v, -4, -5);
    cr_assert(t);
    expect_ids(t, "ab", 0, (llm_token[]){TV_SPM_MS_A, TV_SPM_B}, 2);
    /* BOS by default for SPM. */
    expect_ids(t, "ab", LLM_TOKENIZE_ADD_SPECIAL, (llm_token[]){1, TV_SPM_MS_A, TV_SPM_B}, 3);
    /* Unknown characters fall back to bytes: é = C3 A9. */
    expect_ids(t, "\xC3\xA9", 0, (llm_token[]){TV_SPM_MS, 3 + 0xC3, 3 + 0xA9}, 3);
    expect_ids(t, "hello world", 0, (llm_token[]){TV_SPM_MS_HELLO, TV_SPM_MS_WORLD}, 2);
    llm_tokenizer_free(t);
    tv_free(&v);
    /* "ab" scores higher: ▁ ab. */
    t = tv_spm(&v, -5, -4);
    cr_assert(t);
    expect_ids(t, "ab", 0, (llm_token[]){TV_SPM_MS, TV_SPM_AB}, 2);
    /* Decoding drops the dummy-prefix space. */
    char out[64];
    size_t len;
    llm_token ids[] = {1, TV_SPM_MS_HELLO, TV_SPM_MS_WORLD, 3 + 0xC3, 3 + 0xA9};
    cr_assert_eq(llm_tokenizer_decode(t, ids, 5, LLM_DETOKENIZE_SKIP_SPECIAL, out, sizeof out, &len), LLM_OK);
    cr_expect_str_eq(out, "hello world\xC3\xA9");
    cr_assert_eq(llm_tokenizer_decode(t, ids, 5, 0, out, sizeof out, &len), LLM_OK);
    cr_expect_str_eq(out, "<s> hello world\xC3\xA9"); /* as HF: the strip applies to the first token only */
    llm_tokenizer_free(t);
    tv_free(&v);
}

Test(tokenizer_spec, wordpiece) {
    tv_vocab v;
    llm_tokenizer *t = tv_wpm(&v);
    cr_assert(t);
    expect_ids(t, "Unaffable HELLO, worlds!\xE4\xB8\xAD", 0, (llm_token[]){5, 6, 7, 8, 1, 9, 12, 10, 11}, 9);
    expect_ids(t, "H\xC3\xA9llo", 0, (llm_token[]){8}, 1);          /* accents stripped */
    expect_ids(t, "hello", LLM_TOKENIZE_ADD_SPECIAL, (llm_token[]){2, 8, 3}, 3); /* [CLS] ... [SEP] */
    char w100[102], w101[103];
    memset(w100, 'x', 100), w100[100] = 0;
    memset(w101, 'x', 101), w101[101] = 0;
    llm_token *ids;
    int32_t n;
    cr_assert_eq(tt_encode(t, w100, 100, 0, &ids, &n), LLM_OK);
    cr_expect_eq(n, 100); /* x ##x ##x ... */
    free(ids);
    expect_ids(t, w101, 0, (llm_token[]){1}, 1); /* more than 100 characters: [UNK] */
    expect_ids(t, "xyz", 0, (llm_token[]){1}, 1); /* cannot be spelled: [UNK] for the whole word */
    llm_tokenizer_free(t);
    tv_free(&v);
}

Test(tokenizer_spec, errors) {
    tv_vocab v;
    llm_tokenizer *t = tv_bpe(&v);
    cr_assert(t);
    llm_token ids[8];
    int32_t n = -1;
    cr_expect_eq(llm_tokenizer_encode(t, "ab\xC3(", 4, 0, ids, 8, &n), LLM_ERR_BAD_UTF8);
    cr_expect(strstr(llm_tokenizer_last_error(), "offset 2") != NULL, "message: %s", llm_tokenizer_last_error());
    cr_expect_eq(llm_tokenizer_encode(t, "\xED\xA0\x80", 3, 0, ids, 8, &n), LLM_ERR_BAD_UTF8); /* surrogate */
    cr_expect_eq(llm_tokenizer_encode(t, "\xC0\x80", 2, 0, ids, 8, &n), LLM_ERR_BAD_UTF8);     /* overlong */
    cr_expect_eq(llm_tokenizer_encode(t, "abc abc", 7, 0, ids, 1, &n), LLM_ERR_BUFFER_TOO_SMALL);
    cr_expect_eq(n, 3);
    cr_expect_eq(llm_tokenizer_encode(t, "abc", 3, 0, NULL, 0, &n), LLM_ERR_BUFFER_TOO_SMALL);
    cr_expect_eq(n, 1);
    cr_expect_eq(llm_tokenizer_encode(NULL, "a", 1, 0, ids, 8, &n), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_tokenizer_encode(t, NULL, 1, 0, ids, 8, &n), LLM_ERR_INVALID_ARG);
    char out[4];
    size_t len;
    llm_token abc[] = {259, 259};
    cr_expect_eq(llm_tokenizer_decode(t, abc, 2, 0, out, sizeof out, &len), LLM_ERR_BUFFER_TOO_SMALL);
    cr_expect_eq(len, 6);
    llm_token bad[] = {9999};
    cr_expect_eq(llm_tokenizer_decode(t, bad, 1, 0, out, sizeof out, &len), LLM_ERR_INVALID_ARG);
    cr_expect_null(llm_tokenizer_token_text(t, 9999));
    cr_expect_eq(llm_tokenizer_find(t, "abc", 3), 259);
    cr_expect_eq(llm_tokenizer_find(t, "zzz", 3), LLM_TOKEN_NULL);
    cr_expect_eq(llm_tokenizer_token_type(t, 260), LLM_TOKEN_TYPE_CONTROL);
    cr_expect(llm_tokenizer_is_eog(t, 260));
    llm_tokenizer_free(t);
    llm_tokenizer_free(NULL);

    /* Spec errors. */
    llm_vocab_spec spec;
    llm_vocab_spec_init(&spec);
    llm_tokenizer *t2 = NULL;
    cr_expect_eq(llm_tokenizer_create(&spec, &t2), LLM_ERR_INVALID_ARG);
    spec.type = LLM_TOKENIZER_BPE;
    spec.n_tokens = v.n;
    spec.tokens = (const char *const *)v.tok;
    spec.pre = "no-such-pre";
    cr_expect_eq(llm_tokenizer_create(&spec, &t2), LLM_ERR_UNSUPPORTED);
    cr_expect(strstr(llm_tokenizer_last_error(), "no-such-pre") != NULL);
    spec.pre = "gpt-2";
    static const char *const bad_merge[] = {"ab"};
    spec.merges = bad_merge;
    spec.n_merges = 1;
    cr_expect_eq(llm_tokenizer_create(&spec, &t2), LLM_ERR_BAD_FORMAT);
    spec.n_merges = 0;
    spec.bos = v.n;
    cr_expect_eq(llm_tokenizer_create(&spec, &t2), LLM_ERR_INVALID_ARG);
    cr_expect_null(t2);
    tv_free(&v);
}

/* Random bytes through every family: a status, never a crash (run under
 * ASan/UBSan). Invalid UTF-8 must be reported as such. */
Test(tokenizer_spec, random_bytes_never_crash) {
    tv_vocab v1, v2, v3;
    llm_tokenizer *toks[3] = {tv_bpe(&v1), tv_spm(&v2, -4, -5), tv_wpm(&v3)};
    uint64_t s = 12345;
    char buf[64];
    for (int it = 0; it < 6000; it++) {
        size_t len = 0, n = (size_t)(it % 40);
        for (size_t k = 0; k < n; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            unsigned r = (unsigned)(s >> 33);
            /* Mostly ASCII and well-formed multi-byte lead/continuation mixes. */
            buf[len++] = (char)(r % 3 == 0 ? 0x80 + r % 0x80 : r % 3 == 1 ? 0xC2 + r % 0x30 : 0x20 + r % 0x60);
        }
        for (int f = 0; f < 3; f++) {
            llm_token *ids;
            int32_t cnt;
            llm_status st = tt_encode(toks[f], buf, len, (unsigned)(it & 3), &ids, &cnt);
            cr_assert(st == LLM_OK || st == LLM_ERR_BAD_UTF8, "status %s", llm_status_str(st));
            if (st == LLM_OK) {
                char out[1024];
                size_t ol;
                cr_assert_eq(llm_tokenizer_decode(toks[f], ids, cnt, (unsigned)(it & 1), out, sizeof out, &ol), LLM_OK);
            }
            free(ids);
        }
    }
    for (int f = 0; f < 3; f++) llm_tokenizer_free(toks[f]);
    tv_free(&v1);
    tv_free(&v2);
    tv_free(&v3);
}

/* A control token whose text is also a normal token's (lower id): the
 * special must still be found (the lookup table only holds the first id). */
Test(tokenizer_spec, shadowed_special_token) {
    tv_vocab v;
    v.n = 0;
    char u[4];
    for (int b = 0; b < 256; b++) {
        tv_byte_char(b, u);
        tv_add(&v, u, 0, LLM_TOKEN_TYPE_NORMAL);
    }
    tv_add(&v, "<e>", 0, LLM_TOKEN_TYPE_NORMAL);  /* 256 */
    tv_add(&v, "<e>", 0, LLM_TOKEN_TYPE_CONTROL); /* 257 */
    llm_vocab_spec spec;
    llm_vocab_spec_init(&spec);
    spec.type = LLM_TOKENIZER_BPE;
    spec.n_tokens = v.n;
    spec.tokens = (const char *const *)v.tok;
    spec.token_types = v.type;
    spec.pre = "gpt-2";
    llm_tokenizer *t = NULL;
    cr_assert_eq(llm_tokenizer_create(&spec, &t), LLM_OK);
    expect_ids(t, "a<e>", LLM_TOKENIZE_PARSE_SPECIAL, (llm_token[]){'a', 257}, 2);
    llm_tokenizer_free(t);
    tv_free(&v);
}
