/* fuzz_tok_common.c -- see fuzz_tok_common.h. */
#include "fuzz_tok_common.h"

#include <stdint.h>
#include <string.h>

int llm__fuzz_utf8_valid(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        uint32_t cp, lo;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            k = 1, cp = c & 0x1F, lo = 0x80;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2, cp = c & 0x0F, lo = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3, cp = c & 0x07, lo = 0x10000;
        } else {
            return 0;
        }
        if (n - i <= k) return 0;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + j] & 0x3Fu);
        }
        if (cp < lo || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += k + 1;
    }
    return 1;
}

/* decode(ids) into a malloc'd, NUL-terminated string, checking the
 * measure / too-small / exact contract. */
static char *decode_checked(const llm_tokenizer *tok, const llm_token *ids, int32_t n, unsigned flags,
                            size_t *out_len) {
    size_t need = 0;
    char probe[1];
    llm_status st = llm_tokenizer_decode(tok, ids, n, flags, probe, 1, &need);
    FZ_CHECK(st == LLM_OK || st == LLM_ERR_BUFFER_TOO_SMALL);
    FZ_CHECK((st == LLM_OK) == (need == 0));
    if (st == LLM_OK) FZ_CHECK(probe[0] == '\0');
    char *buf = malloc(need + 1);
    FZ_CHECK(buf);
    if (need) {
        size_t again = 0;
        /* Room for the text but not the NUL is still too small. */
        FZ_CHECK(llm_tokenizer_decode(tok, ids, n, flags, buf, need, &again) == LLM_ERR_BUFFER_TOO_SMALL);
        FZ_CHECK(again == need);
    }
    size_t got = 0;
    FZ_CHECK(llm_tokenizer_decode(tok, ids, n, flags, buf, need + 1, &got) == LLM_OK);
    FZ_CHECK(got == need && buf[got] == '\0');
    *out_len = got;
    return buf;
}

/* The streaming detokenizer over ids; its concatenated output. */
static char *stream_checked(const llm_tokenizer *tok, const llm_token *ids, int32_t n, unsigned flags,
                            size_t *out_len) {
    llm_detokenizer *d = NULL;
    FZ_CHECK(llm_detokenizer_create(tok, flags, &d) == LLM_OK && d);
    size_t cap = 64, len = 0;
    char *acc = malloc(cap);
    FZ_CHECK(acc);
    for (int32_t i = 0; i <= n; i++) {
        const char *piece = NULL;
        size_t plen = 0;
        llm_status st = i < n ? llm_detokenizer_push(d, ids[i], &piece, &plen)
                              : llm_detokenizer_flush(d, &piece, &plen);
        FZ_CHECK(st == LLM_OK && piece && piece[plen] == '\0');
        if (len + plen + 1 > cap) {
            while (len + plen + 1 > cap) cap *= 2;
            acc = realloc(acc, cap);
            FZ_CHECK(acc);
        }
        memcpy(acc + len, piece, plen);
        len += plen;
    }
    acc[len] = '\0';
    /* An out-of-range id is refused, and the stream survives it. */
    const char *piece;
    size_t plen;
    FZ_CHECK(llm_detokenizer_push(d, llm_tokenizer_n_tokens(tok), &piece, &plen) == LLM_ERR_INVALID_ARG);
    FZ_CHECK(llm_detokenizer_push(d, -1, &piece, &plen) == LLM_ERR_INVALID_ARG);
    llm_detokenizer_free(d);
    *out_len = len;
    return acc;
}

void llm__fuzz_tok_exercise(const llm_tokenizer *tok, const char *text, size_t len, int roundtrip) {
    static const unsigned flag_sets[3] = {0, LLM_TOKENIZE_PARSE_SPECIAL,
                                          LLM_TOKENIZE_ADD_SPECIAL | LLM_TOKENIZE_PARSE_SPECIAL};
    const int valid = llm__fuzz_utf8_valid((const unsigned char *)text, len);
    const int32_t n_vocab = llm_tokenizer_n_tokens(tok);
    FZ_CHECK(n_vocab > 0);
    for (int f = 0; f < 3; f++) {
        int32_t n = -1;
        llm_status st = llm_tokenizer_encode(tok, text, len, flag_sets[f], NULL, 0, &n);
        if (!valid) {
            FZ_CHECK(st == LLM_ERR_BAD_UTF8);
            FZ_CHECK(llm_tokenizer_last_error()[0] != '\0');
            return;
        }
        FZ_CHECK(st == LLM_OK || st == LLM_ERR_BUFFER_TOO_SMALL);
        FZ_CHECK((st == LLM_OK) == (n == 0));
        FZ_CHECK(n >= 0);
        llm_token *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
        FZ_CHECK(ids);
        if (n > 1) {
            int32_t again = -1;
            FZ_CHECK(llm_tokenizer_encode(tok, text, len, flag_sets[f], ids, 1, &again) ==
                     LLM_ERR_BUFFER_TOO_SMALL);
            FZ_CHECK(again == n);
        }
        int32_t got = -1;
        FZ_CHECK(llm_tokenizer_encode(tok, text, len, flag_sets[f], ids, n, &got) == LLM_OK);
        FZ_CHECK(got == n);
        for (int32_t i = 0; i < n; i++) {
            FZ_CHECK(ids[i] >= 0 && ids[i] < n_vocab);
            size_t blen = 0;
            FZ_CHECK(llm_tokenizer_token_bytes(tok, ids[i], &blen) != NULL);
            (void)llm_tokenizer_token_type(tok, ids[i]);
        }
        for (unsigned df = 0; df < 2; df++) {
            const unsigned dflags = df ? LLM_DETOKENIZE_SKIP_SPECIAL : 0;
            size_t dlen = 0, slen = 0;
            char *dec = decode_checked(tok, ids, n, dflags, &dlen);
            char *str = stream_checked(tok, ids, n, dflags, &slen);
            FZ_CHECK(llm__fuzz_utf8_valid((const unsigned char *)str, slen));
            if (llm__fuzz_utf8_valid((const unsigned char *)dec, dlen))
                FZ_CHECK(slen == dlen && memcmp(str, dec, dlen) == 0);
            if (roundtrip && f == 0 && df == 0) {
                if (dlen != len || memcmp(dec, text, len) != 0) {
                    fprintf(stderr, "round trip: %zu bytes in, %zu out: '%.*s' vs '%.*s'\n", len, dlen,
                            (int)(len < 200 ? len : 200), text, (int)(dlen < 200 ? dlen : 200), dec);
                    FZ_CHECK(!"decode(encode(text)) == text");
                }
            }
            free(dec);
            free(str);
        }
        free(ids);
    }
}
