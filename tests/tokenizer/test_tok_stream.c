/* Round trip and the streaming detokenizer.
 * - Byte-level BPE (default model): decode(encode(x)) == x for 3000 random
 *   valid UTF-8 strings (fixed seed), and streaming the ids one by one gives
 *   the same text, never a partial character.
 * - Multi-byte characters split across byte-level tokens, SPM byte fallback
 *   split across tokens, the SPM leading space, skipping special tokens,
 *   invalid byte sequences and flush. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "tok_test_util.h"
#include "tok_test_vocab.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}

static size_t put_cp(uint32_t cp, char *o) {
    if (cp < 0x80) return (size_t)(o[0] = (char)cp, 1);
    if (cp < 0x800) return o[0] = (char)(0xC0 | (cp >> 6)), o[1] = (char)(0x80 | (cp & 0x3F)), 2;
    if (cp < 0x10000)
        return o[0] = (char)(0xE0 | (cp >> 12)), o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[2] = (char)(0x80 | (cp & 0x3F)), 3;
    o[0] = (char)(0xF0 | (cp >> 18)), o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static uint32_t random_cp(void) {
    static const uint32_t ws[] = {' ', '\t', '\n', '\r', 0xA0, 0x3000, 0x2028, 0x200B};
    switch (rnd() % 10) {
    case 0: case 1: case 2: return 'a' + rnd() % 26;
    case 3: return 32 + rnd() % 95;
    case 4: return ws[rnd() % 8];
    case 5: return '0' + rnd() % 10;
    case 6: return 0x4E00 + rnd() % 0x5000;            /* CJK */
    case 7: return 0x1F300 + rnd() % 0x300;            /* emoji */
    case 8: return 0x300 + rnd() % 0x70;               /* combining marks */
    default: {
        /* Any scalar value of planes 0-3 and 12-16 except the controls 04 06
         * 13 14 16 1D: SmolLM2's vocabulary has no token for those bytes nor
         * for the lead bytes F1/F2 (planes 4-11), so text holding them cannot
         * round-trip (HF drops them too; see missing_bytes_are_dropped). */
        uint32_t c;
        do {
            c = rnd() % 0x110000;
            if (c >= 0x40000 && c < 0xC0000) c %= 0x40000;
        } while ((c >= 0xD800 && c <= 0xDFFF) || c == 4 || c == 6 || c == 0x13 || c == 0x14 || c == 0x16 || c == 0x1D);
        return c;
    }
    }
}

static llm_tokenizer *default_tok(void) {
    llm_status st;
    llm_tokenizer *t = tt_load_gguf(tt_env("LLM_DEFAULT_MODEL", ""), &st);
    cr_assert(t, "default model tokenizer: %s", llm_status_str(st));
    return t;
}

/* Stream ids through a detokenizer; every chunk must be valid UTF-8. */
static size_t stream_all(const llm_tokenizer *t, const llm_token *ids, int32_t n, unsigned flags, char *out) {
    llm_detokenizer *d;
    cr_assert_eq(llm_detokenizer_create(t, flags, &d), LLM_OK);
    size_t total = 0;
    const char *s;
    size_t l;
    for (int32_t i = 0; i < n; i++) {
        cr_assert_eq(llm_detokenizer_push(d, ids[i], &s, &l), LLM_OK);
        cr_assert_eq(l, strlen(s));
        /* Only complete UTF-8 goes out. */
        size_t k = 0;
        while (k < l) {
            size_t cl = ((unsigned char)s[k] < 0x80) ? 1 : ((unsigned char)s[k] >= 0xF0) ? 4 : ((unsigned char)s[k] >= 0xE0) ? 3 : 2;
            cr_assert(k + cl <= l, "partial character emitted");
            k += cl;
        }
        memcpy(out + total, s, l);
        total += l;
    }
    cr_assert_eq(llm_detokenizer_flush(d, &s, &l), LLM_OK);
    memcpy(out + total, s, l);
    total += l;
    llm_detokenizer_free(d);
    return total;
}

Test(tokenizer_roundtrip, byte_level_random_utf8) {
    llm_tokenizer *t = default_tok();
    char text[1024], dec[2048];
    int bad = 0;
    for (int iter = 0; iter < 3000; iter++) {
        size_t len = 0;
        int ncp = (int)(rnd() % 80);
        for (int k = 0; k < ncp; k++) len += put_cp(random_cp(), text + len);
        unsigned flags = iter % 2 ? LLM_TOKENIZE_PARSE_SPECIAL : 0;
        llm_token *ids;
        int32_t n;
        cr_assert_eq(tt_encode(t, text, len, flags, &ids, &n), LLM_OK, "%s", llm_tokenizer_last_error());
        size_t dl;
        cr_assert_eq(llm_tokenizer_decode(t, ids, n, 0, dec, sizeof dec, &dl), LLM_OK);
        if (dl != len || memcmp(dec, text, len) != 0) bad++;
        size_t sl = stream_all(t, ids, n, 0, dec);
        if (sl != len || memcmp(dec, text, len) != 0) bad++;
        free(ids);
    }
    cr_assert_eq(bad, 0, "%d round trips failed", bad);
    llm_tokenizer_free(t);
}

/* HF tokenizers (from the same GGUF, hf_from_gguf.py) encodes "a\U00080000b"
 * to [81, 218, 218, 218, 82]: the F2 lead byte has no token and is dropped. */
Test(tokenizer_roundtrip, missing_bytes_are_dropped) {
    llm_tokenizer *t = default_tok();
    llm_token *ids;
    int32_t n;
    cr_assert_eq(tt_encode(t, "a\xF2\x80\x80\x80" "b", 6, 0, &ids, &n), LLM_OK);
    llm_token want[] = {81, 218, 218, 218, 82};
    cr_assert_eq(n, 5);
    cr_expect_arr_eq(ids, want, sizeof want);
    free(ids);
    llm_tokenizer_free(t);
}

Test(tokenizer_stream, multibyte_split_across_byte_level_tokens) {
    llm_tokenizer *t = default_tok();
    const char *llama = "\xF0\x9F\xA6\x99"; /* U+1F999 is not one token in SmolLM2's vocab */
    llm_token *ids;
    int32_t n;
    cr_assert_eq(tt_encode(t, llama, 4, 0, &ids, &n), LLM_OK);
    cr_assert(n >= 2, "expected the emoji to span tokens, got %d", (int)n);
    llm_detokenizer *d;
    cr_assert_eq(llm_detokenizer_create(t, 0, &d), LLM_OK);
    const char *s;
    size_t l;
    for (int32_t i = 0; i + 1 < n; i++) {
        cr_assert_eq(llm_detokenizer_push(d, ids[i], &s, &l), LLM_OK);
        cr_expect_eq(l, 0, "token %d emitted %zu bytes before the character was complete", (int)i, l);
    }
    cr_assert_eq(llm_detokenizer_push(d, ids[n - 1], &s, &l), LLM_OK);
    cr_expect_str_eq(s, llama);
    /* Special tokens: text by default, nothing with SKIP_SPECIAL. */
    llm_token im_end = llm_tokenizer_find(t, "<|im_end|>", 10);
    cr_assert(im_end >= 0);
    cr_assert_eq(llm_detokenizer_push(d, im_end, &s, &l), LLM_OK);
    cr_expect_str_eq(s, "<|im_end|>");
    llm_detokenizer_free(d);
    cr_assert_eq(llm_detokenizer_create(t, LLM_DETOKENIZE_SKIP_SPECIAL, &d), LLM_OK);
    cr_assert_eq(llm_detokenizer_push(d, im_end, &s, &l), LLM_OK);
    cr_expect_eq(l, 0);
    llm_detokenizer_free(d);
    free(ids);
    llm_tokenizer_free(t);
}

Test(tokenizer_stream, spm_byte_fallback_and_leading_space) {
    tv_vocab v;
    llm_tokenizer *t = tv_spm(&v, -4, -5);
    cr_assert(t);
    const char *text = "hello \xE2\x82\xAC world"; /* the euro sign is not in the vocabulary */
    llm_token *ids;
    int32_t n;
    cr_assert_eq(tt_encode(t, text, strlen(text), LLM_TOKENIZE_ADD_SPECIAL, &ids, &n), LLM_OK);
    /* <s> ▁hello ▁ <0xE2> <0x82> <0xAC> ▁world */
    llm_token want[] = {1, TV_SPM_MS_HELLO, TV_SPM_MS, 3 + 0xE2, 3 + 0x82, 3 + 0xAC, TV_SPM_MS_WORLD};
    cr_assert_eq(n, 7);
    cr_assert_arr_eq(ids, want, sizeof want);
    llm_detokenizer *d;
    cr_assert_eq(llm_detokenizer_create(t, LLM_DETOKENIZE_SKIP_SPECIAL, &d), LLM_OK);
    const char *expect[] = {"", "hello", " ", "", "", "\xE2\x82\xAC", " world"};
    const char *s;
    size_t l;
    for (int i = 0; i < 7; i++) {
        cr_assert_eq(llm_detokenizer_push(d, ids[i], &s, &l), LLM_OK);
        cr_expect_str_eq(s, expect[i], "push %d", i);
    }
    /* After reset the next word loses its dummy-prefix space again. */
    llm_detokenizer_reset(d);
    cr_assert_eq(llm_detokenizer_push(d, TV_SPM_MS_WORLD, &s, &l), LLM_OK);
    cr_expect_str_eq(s, "world");
    llm_detokenizer_free(d);
    /* KEEP_LEADING_SPACE keeps it. */
    cr_assert_eq(llm_detokenizer_create(t, LLM_DETOKENIZE_KEEP_LEADING_SPACE, &d), LLM_OK);
    cr_assert_eq(llm_detokenizer_push(d, TV_SPM_MS_HELLO, &s, &l), LLM_OK);
    cr_expect_str_eq(s, " hello");
    llm_detokenizer_free(d);
    /* Whole decode agrees with the stream. */
    char out[64];
    size_t ol;
    cr_assert_eq(llm_tokenizer_decode(t, ids, n, LLM_DETOKENIZE_SKIP_SPECIAL, out, sizeof out, &ol), LLM_OK);
    cr_expect_str_eq(out, text);
    char out2[64];
    size_t sl = stream_all(t, ids, n, LLM_DETOKENIZE_SKIP_SPECIAL, out2);
    cr_expect(sl == strlen(text) && memcmp(out2, text, sl) == 0);
    free(ids);
    llm_tokenizer_free(t);
    tv_free(&v);
}

Test(tokenizer_stream, invalid_bytes_become_replacement_chars) {
    tv_vocab v;
    llm_tokenizer *t = tv_spm(&v, -4, -5);
    cr_assert(t);
    llm_detokenizer *d;
    cr_assert_eq(llm_detokenizer_create(t, 0, &d), LLM_OK);
    const char *s;
    size_t l;
    /* A lone continuation byte can never start a character. */
    cr_assert_eq(llm_detokenizer_push(d, 3 + 0x80, &s, &l), LLM_OK);
    cr_expect_str_eq(s, "\xEF\xBF\xBD");
    /* A lead byte followed by ASCII: the lead is invalid, the ASCII survives. */
    cr_assert_eq(llm_detokenizer_push(d, 3 + 0xE2, &s, &l), LLM_OK);
    cr_expect_eq(l, 0);
    cr_assert_eq(llm_detokenizer_push(d, TV_SPM_A, &s, &l), LLM_OK);
    cr_expect_str_eq(s, "\xEF\xBF\xBD" "a");
    /* An incomplete character at the end is flushed as U+FFFD. */
    cr_assert_eq(llm_detokenizer_push(d, 3 + 0xF0, &s, &l), LLM_OK);
    cr_assert_eq(llm_detokenizer_push(d, 3 + 0x9F, &s, &l), LLM_OK);
    cr_expect_eq(l, 0);
    cr_assert_eq(llm_detokenizer_flush(d, &s, &l), LLM_OK);
    cr_expect_str_eq(s, "\xEF\xBF\xBD");
    cr_expect_eq(llm_detokenizer_push(d, 99999, &s, &l), LLM_ERR_INVALID_ARG);
    llm_detokenizer_free(d);
    llm_detokenizer_free(NULL);
    llm_tokenizer_free(t);
    tv_free(&v);
}

/* Long runs make "\s+(?!\S)" backtrack deeply: the pre-tokenizer must
 * switch to a large JIT stack rather than fail. */
Test(tokenizer_roundtrip, long_whitespace_runs) {
    llm_tokenizer *t = default_tok();
    size_t len = 300000;
    char *text = malloc(len + 1);
    for (size_t i = 0; i < len; i++) text[i] = i < len / 2 ? ' ' : (i % 3 ? '\n' : '\t');
    text[len - 1] = 'a';
    llm_token *ids;
    int32_t n;
    cr_assert_eq(tt_encode(t, text, len, 0, &ids, &n), LLM_OK, "%s", llm_tokenizer_last_error());
    char *dec = malloc(len + 1);
    size_t dl;
    cr_assert_eq(llm_tokenizer_decode(t, ids, n, 0, dec, len + 1, &dl), LLM_OK);
    cr_expect(dl == len && memcmp(dec, text, len) == 0);
    free(ids);
    free(dec);
    free(text);
    llm_tokenizer_free(t);
}
