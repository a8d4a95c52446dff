/* The default model's tokenizer (SmolLM2: byte-level BPE, pre "smollm")
 * against Hugging Face `tokenizers` on a committed 210 KB corpus
 * (scripts/golden/tokenizer/make_golden.py made corpus.txt and
 * golden_ids.bin from the model GGUF). Each document is checked with special
 * tokens parsed (HF's default) and split as text (encode_special_tokens). */
#include <criterion/criterion.h>
#include <stdint.h>

#include "tok_test_util.h"

#define DOC_SEP "\n\x1d=== llm golden document ===\x1d\n"

static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Read n u16 ids at *p into a fresh array. */
static llm_token *rd_ids(const unsigned char **p, const unsigned char *end, uint32_t n) {
    cr_assert((size_t)(end - *p) >= (size_t)n * 2, "golden_ids.bin truncated");
    llm_token *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (uint32_t i = 0; i < n; i++) v[i] = (llm_token)((*p)[2 * i] | (*p)[2 * i + 1] << 8);
    *p += (size_t)n * 2;
    return v;
}

static int check(const llm_tokenizer *tok, const char *doc, size_t len, unsigned flags, const llm_token *want,
                 uint32_t n_want, int idx, const char *mode) {
    llm_token *got;
    int32_t n_got;
    llm_status st = tt_encode(tok, doc, len, flags, &got, &n_got);
    int ok = st == LLM_OK && (uint32_t)n_got == n_want && memcmp(got, want, n_want * sizeof *got) == 0;
    if (!ok) {
        uint32_t k = 0;
        while (k < n_want && (int32_t)k < n_got && got[k] == want[k]) k++;
        printf("golden: doc %d (%s) differs at token %u of %u (got %d tokens, %s)\n", idx, mode, k, n_want, (int)n_got,
               llm_status_str(st));
        size_t pl = 0;
        for (uint32_t j = k > 3 ? k - 3 : 0; j < k + 4 && j < n_want; j++) {
            const char *p = llm_tokenizer_token_bytes(tok, want[j], &pl);
            printf("  want[%u] = %d \"%.*s\"", j, (int)want[j], (int)pl, p);
            if ((int32_t)j < n_got) {
                p = llm_tokenizer_token_bytes(tok, got[j], &pl);
                printf("   got %d \"%.*s\"", (int)got[j], (int)pl, p);
            }
            printf("\n");
        }
    }
    free(got);
    return ok;
}

Test(tokenizer_golden, smollm2_matches_hf_tokenizers) {
    const char *model = tt_env("LLM_DEFAULT_MODEL", "");
    char cpath[1024], ipath[1024];
    const char *src = tt_env("LLM_SOURCE_DIR", ".");
    snprintf(cpath, sizeof cpath, "%s/scripts/golden/tokenizer/corpus.txt", src);
    snprintf(ipath, sizeof ipath, "%s/scripts/golden/tokenizer/golden_ids.bin", src);
    size_t clen = 0, ilen = 0;
    char *corpus = tt_read_file(cpath, &clen);
    unsigned char *ids = (unsigned char *)tt_read_file(ipath, &ilen);
    cr_assert(corpus && ids, "cannot read %s / %s", cpath, ipath);
    cr_assert(clen >= 200 * 1024, "corpus is only %zu bytes", clen);
    llm_status st;
    llm_tokenizer *tok = tt_load_gguf(model, &st);
    cr_assert(tok, "cannot load the default model's tokenizer from \"%s\" (%s)", model, llm_status_str(st));
    cr_assert_str_eq(llm_tokenizer_pre_name(tok), "smollm");
    /* GGUF metadata: bos 1, eos 2, unk 0, no BOS added; EOT found by text (<|im_end|>). */
    cr_expect_eq(llm_tokenizer_special(tok, LLM_SPECIAL_BOS), 1);
    cr_expect_eq(llm_tokenizer_special(tok, LLM_SPECIAL_EOS), 2);
    cr_expect_eq(llm_tokenizer_special(tok, LLM_SPECIAL_EOT), 2);
    cr_expect_eq(llm_tokenizer_adds_bos(tok), 0);
    cr_expect(llm_tokenizer_is_eog(tok, 2) && !llm_tokenizer_is_eog(tok, 1));
    cr_expect_eq(llm_tokenizer_n_tokens(tok), 49152);

    cr_assert(ilen >= 12 && memcmp(ids, "LTKG", 4) == 0 && rd32(ids + 4) == 1, "bad golden_ids.bin header");
    uint32_t n_docs = rd32(ids + 8);
    const unsigned char *p = ids + 12, *end = ids + ilen;
    const char *doc = corpus, *cend = corpus + clen;
    int bad = 0;
    uint64_t n_tokens = 0;
    for (uint32_t d = 0; d < n_docs; d++) {
        const char *sep = d + 1 < n_docs ? strstr(doc, DOC_SEP) : cend;
        cr_assert(sep, "corpus has fewer documents than golden_ids.bin (%u)", n_docs);
        size_t len = (size_t)(sep - doc);
        cr_assert(end - p >= 4);
        uint32_t n = rd32(p);
        p += 4;
        llm_token *a = rd_ids(&p, end, n);
        cr_assert(end - p >= 4);
        uint32_t m = rd32(p);
        p += 4;
        llm_token *b = m == 0xFFFFFFFFu ? NULL : rd_ids(&p, end, m);
        bad += !check(tok, doc, len, LLM_TOKENIZE_PARSE_SPECIAL, a, n, (int)d, "special tokens parsed");
        bad += !check(tok, doc, len, 0, b ? b : a, b ? m : n, (int)d, "special tokens as text");
        /* Byte-level BPE is lossless: decoding HF's ids gives the document back. */
        char *out = malloc(len + 1);
        size_t olen = 0;
        cr_expect_eq(llm_tokenizer_decode(tok, a, (int32_t)n, 0, out, len + 1, &olen), LLM_OK, "doc %u decode", d);
        if (olen != len || memcmp(out, doc, len) != 0) {
            printf("golden: doc %u does not decode back\n", d);
            bad++;
        }
        free(out);
        n_tokens += n;
        free(a);
        free(b);
        doc = sep + strlen(DOC_SEP);
    }
    cr_assert(p == end, "golden_ids.bin has trailing bytes");
    printf("golden: %u documents, %zu bytes, %llu tokens, %d mismatches\n", n_docs, clen, (unsigned long long)n_tokens, bad);
    cr_assert(bad == 0, "%d documents differ from HF tokenizers", bad);
    llm_tokenizer_free(tok);
    free(corpus);
    free(ids);
}
