/* Pre-tokenizer patterns of the families whose vocab GGUFs the conformance
 * snapshot lacks (llama-bpe, qwen2, qwen35): our PCRE2 splits must equal the
 * splits of HF `tokenizers` with each model's published Split regex
 * (tests/tokenizer/data/pretok_expected.txt, from
 * scripts/golden/tokenizer/make_pretok_golden.py). White-box: calls the
 * library's internal splitter. */
#include <criterion/criterion.h>

#define TT_NO_GGUF
#include "tok_internal.h"
#include "tok_test_util.h"
#include "tok_test_vocab.h"

#define DOC_SEP "\n\x1d=== llm golden document ===\x1d\n"

static llm_tokenizer *bytes_only(tv_vocab *v, const char *pre) {
    v->n = 0;
    char u[4];
    for (int b = 0; b < 256; b++) {
        tv_byte_char(b, u);
        tv_add(v, u, 0, LLM_TOKEN_TYPE_NORMAL);
    }
    llm_vocab_spec spec;
    llm_vocab_spec_init(&spec);
    spec.type = LLM_TOKENIZER_BPE;
    spec.n_tokens = v->n;
    spec.tokens = (const char *const *)v->tok;
    spec.pre = pre;
    llm_tokenizer *t = NULL;
    cr_assert_eq(llm_tokenizer_create(&spec, &t), LLM_OK, "%s: %s", pre, llm_tokenizer_last_error());
    return t;
}

Test(tokenizer_pretok, matches_hf_split_regexes) {
    char path[1024];
    const char *src = tt_env("LLM_SOURCE_DIR", ".");
    snprintf(path, sizeof path, "%s/scripts/golden/tokenizer/corpus.txt", src);
    size_t clen = 0, elen = 0;
    char *corpus = tt_read_file(path, &clen);
    snprintf(path, sizeof path, "%s/tests/tokenizer/data/pretok_expected.txt", src);
    char *exp = tt_read_file(path, &elen);
    cr_assert(corpus && exp, "cannot read the corpus or pretok_expected.txt");
    /* Index the documents. */
    const char *docs[1024];
    size_t lens[1024];
    int nd = 0;
    for (const char *p = corpus; nd < 1024;) {
        const char *e = strstr(p, DOC_SEP);
        docs[nd] = p;
        lens[nd++] = e ? (size_t)(e - p) : (size_t)(corpus + clen - p);
        if (!e) break;
        p = e + strlen(DOC_SEP);
    }
    tv_vocab v;
    llm_tokenizer *tok = NULL;
    char cur[32] = "";
    int lines = 0, bad = 0;
    for (char *line = strtok(exp, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        cr_assert(t2, "bad line");
        *t1 = '\0';
        if (strcmp(cur, line) != 0) {
            if (tok) {
                llm_tokenizer_free(tok);
                tv_free(&v);
            }
            tok = bytes_only(&v, line);
            snprintf(cur, sizeof cur, "%s", line);
        }
        int di = atoi(t1 + 1);
        cr_assert(di >= 0 && di < nd);
        tok_spans sp = {0};
        cr_assert_eq(llm__pretok_split(tok, docs[di], lens[di], &sp), LLM_OK);
        size_t k = 0;
        int same = 1;
        char *p = t2 + 1;
        while (*p) {
            size_t want = (size_t)strtoul(p, &p, 10);
            while (*p == ' ') p++;
            if (k >= sp.n || sp.v[2 * k + 1] != want) {
                if (same) {
                    size_t off = k < sp.n ? sp.v[2 * k] : lens[di];
                    printf("pretok %s doc %d: piece %zu differs (want %zu bytes) at \"%.20s\"\n", cur, di, k, want,
                           docs[di] + off);
                }
                same = 0;
            }
            k++;
        }
        if (k != sp.n) same = 0;
        bad += !same;
        lines++;
        llm__spans_free(&sp);
    }
    llm_tokenizer_free(tok);
    tv_free(&v);
    free(corpus);
    free(exp);
    cr_assert(lines >= 150, "only %d lines", lines);
    cr_assert_eq(bad, 0, "%d of %d documents split differently from HF", bad, lines);
}

/* One normalization rule for GGUF vocabularies: none beyond what the
 * tokenizer model defines (a GGUF does not record the HF normalizer), so
 * qwen2 keeps a decomposed letter decomposed like llama-bpe does (as
 * llama.cpp; Qwen2's own tokenizer.json would compose it to NFC). With a
 * bytes-only vocabulary the ids are the bytes. */
Test(tokenizer_pretok, gguf_vocabs_do_not_normalize) {
    const char *pres[] = {"qwen2", "qwen35", "llama-bpe", "deepseek-r1-qwen"};
    for (int i = 0; i < 4; i++) {
        tv_vocab v;
        llm_tokenizer *t = bytes_only(&v, pres[i]);
        llm_token *ids;
        int32_t n;
        cr_assert_eq(tt_encode(t, "e\xCC\x81", 3, 0, &ids, &n), LLM_OK);
        cr_expect_eq(n, 3, "%s: decomposed e + U+0301 should stay 3 bytes, got %d ids", pres[i], (int)n);
        if (n == 3) cr_expect(ids[0] == 'e' && ids[1] == 0xCC && ids[2] == 0x81, "%s", pres[i]);
        free(ids);
        llm_tokenizer_free(t);
        tv_free(&v);
    }
}
