/* tokenizer.json loading: three small files trained with HF `tokenizers`
 * (byte-level BPE, Llama-style BPE with byte fallback, BERT WordPiece) must
 * give HF's ids (tiny_expected.txt, from scripts/golden/tokenizer/
 * make_tiny_json.py); unsupported components are errors that name them. */
#include <criterion/criterion.h>

#define TT_NO_GGUF /* this test links only llama-tokenizer */
#include "tok_test_util.h"

static const char *src_dir(void) { return tt_env("LLM_SOURCE_DIR", "."); }

static llm_tokenizer *load_named(const char *file) {
    char path[1024];
    if (strcmp(file, "tokenizer.json") == 0)
        snprintf(path, sizeof path, "%s/tests/tokenizer/out_of_tree/tokenizer.json", src_dir());
    else
        snprintf(path, sizeof path, "%s/tests/tokenizer/data/%s", src_dir(), file);
    llm_tokenizer *tok = NULL;
    llm_status st = llm_tokenizer_from_hf_json_file(path, &tok);
    cr_assert_eq(st, LLM_OK, "%s: %s", path, llm_tokenizer_last_error());
    return tok;
}

static size_t unhex(const char *h, size_t n, char *out) {
    size_t k = 0;
    for (size_t i = 0; i + 1 < n; i += 2) {
        unsigned v;
        sscanf(h + i, "%2x", &v);
        out[k++] = (char)v;
    }
    return k;
}

Test(tokenizer_json, tiny_files_match_hf) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/tokenizer/data/tiny_expected.txt", src_dir());
    size_t len = 0;
    char *all = tt_read_file(path, &len);
    cr_assert(all, "cannot read %s", path);
    llm_tokenizer *tok = NULL;
    char cur[128] = "";
    int cases = 0, bad = 0;
    for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char *f1 = strchr(line, '\t'), *f2 = f1 ? strchr(f1 + 1, '\t') : NULL, *f3 = f2 ? strchr(f2 + 1, '\t') : NULL;
        char *f4 = f3 ? strchr(f3 + 1, '\t') : NULL;
        cr_assert(f4, "bad line in tiny_expected.txt");
        *f1 = '\0';
        *f4 = '\0';
        if (strcmp(cur, line) != 0) {
            llm_tokenizer_free(tok);
            tok = load_named(line);
            snprintf(cur, sizeof cur, "%s", line);
        }
        unsigned flags = LLM_TOKENIZE_PARSE_SPECIAL | (f1[1] == '1' ? LLM_TOKENIZE_ADD_SPECIAL : 0);
        char text[512];
        size_t tl = unhex(f2 + 1, (size_t)(f3 - f2 - 1), text);
        llm_token want[512];
        int nw = 0;
        for (char *p = f3 + 1; *p;) {
            want[nw++] = (llm_token)strtol(p, &p, 10);
            while (*p == ' ') p++;
        }
        llm_token *got;
        int32_t ng;
        cr_assert_eq(tt_encode(tok, text, tl, flags, &got, &ng), LLM_OK, "%s", llm_tokenizer_last_error());
        if (ng != nw || memcmp(got, want, (size_t)nw * sizeof *got) != 0) {
            bad++;
            printf("json: %s add_special=%c \"%.*s\": want", cur, f1[1], (int)tl, text);
            for (int k = 0; k < nw; k++) printf(" %d", (int)want[k]);
            printf("\n   got");
            for (int k = 0; k < ng; k++) printf(" %d", (int)got[k]);
            printf("\n");
        }
        /* Decoding gives HF's text (WordPiece excepted: HF re-joins punctuation). */
        if (llm_tokenizer_get_type(tok) != LLM_TOKENIZER_WPM) {
            char out[1024], hf[1024];
            size_t ol, hl = unhex(f4 + 1, strlen(f4 + 1), hf);
            cr_assert_eq(llm_tokenizer_decode(tok, got, ng, 0, out, sizeof out, &ol), LLM_OK);
            if (ol != hl || memcmp(out, hf, hl) != 0) {
                bad++;
                printf("json: %s \"%.*s\" decodes to \"%s\", HF gives \"%.*s\"\n", cur, (int)tl, text, out, (int)hl, hf);
            }
        }
        free(got);
        cases++;
    }
    llm_tokenizer_free(tok);
    free(all);
    cr_assert(cases >= 210, "only %d cases", cases);
    cr_assert(bad == 0, "%d of %d cases differ from HF", bad, cases);
}

static void expect_unsupported(const char *json, const char *name) {
    llm_tokenizer *tok = NULL;
    llm_status st = llm_tokenizer_from_hf_json(json, strlen(json), &tok);
    cr_expect_eq(st, LLM_ERR_UNSUPPORTED, "%s: got %s", name, llm_status_str(st));
    cr_expect(strstr(llm_tokenizer_last_error(), name) != NULL, "message \"%s\" does not name %s",
              llm_tokenizer_last_error(), name);
    cr_expect_null(tok);
}

Test(tokenizer_json, unsupported_components_are_named) {
    expect_unsupported("{\"model\":{\"type\":\"WordLevel\",\"vocab\":{\"a\":0}}}", "WordLevel");
    /* A Unigram model needs its Metaspace pre-tokenizer. */
    expect_unsupported("{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",0.0]]}}", "Unigram");
    expect_unsupported("{\"normalizer\":{\"type\":\"NFKC\"},\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]}}",
                       "NFKC");
    expect_unsupported("{\"pre_tokenizer\":{\"type\":\"Whitespace\"},\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},"
                       "\"merges\":[]}}",
                       "Whitespace");
    expect_unsupported("{\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\"a\"},\"behavior\":\"Removed\"},"
                       "\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]}}",
                       "Removed");
}

Test(tokenizer_json, malformed_input) {
    llm_tokenizer *tok = NULL;
    cr_expect_eq(llm_tokenizer_from_hf_json("{", 1, &tok), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(llm_tokenizer_from_hf_json("[]", 2, &tok), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(llm_tokenizer_from_hf_json("{\"model\":{}}", 12, &tok), LLM_ERR_BAD_FORMAT);
    const char *neg = "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":-3},\"merges\":[]}}";
    cr_expect_eq(llm_tokenizer_from_hf_json(neg, strlen(neg), &tok), LLM_ERR_BAD_FORMAT);
    const char *huge = "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":2000000000},\"merges\":[]}}";
    cr_expect_eq(llm_tokenizer_from_hf_json(huge, strlen(huge), &tok), LLM_ERR_BAD_FORMAT);
    const char *badmerge = "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[3]}}";
    cr_expect_eq(llm_tokenizer_from_hf_json(badmerge, strlen(badmerge), &tok), LLM_ERR_BAD_FORMAT);
    cr_expect_eq(llm_tokenizer_from_hf_json_file("/nonexistent/tokenizer.json", &tok), LLM_ERR_IO);
    cr_expect_null(tok);
}

/* Merges in array form may hold pieces with spaces ("a " + "b" -> "a b"),
 * which the "a b" string form cannot express. */
Test(tokenizer_json, merges_with_spaces) {
    const char *j = "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\" \":1,\"b\":2,\"a \":3,\"a b\":4},"
                    "\"merges\":[[\"a\",\" \"],[\"a \",\"b\"]]}}";
    llm_tokenizer *tok = NULL;
    cr_assert_eq(llm_tokenizer_from_hf_json(j, strlen(j), &tok), LLM_OK, "%s", llm_tokenizer_last_error());
    llm_token ids[8];
    int32_t n;
    cr_assert_eq(llm_tokenizer_encode(tok, "a bb", 4, 0, ids, 8, &n), LLM_OK);
    cr_expect_eq(n, 2);
    cr_expect(ids[0] == 4 && ids[1] == 2);
    llm_tokenizer_free(tok);
    const char *s = "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},\"merges\":[\"a b\"]}}";
    cr_assert_eq(llm_tokenizer_from_hf_json(s, strlen(s), &tok), LLM_OK, "%s", llm_tokenizer_last_error());
    cr_assert_eq(llm_tokenizer_encode(tok, "abab", 4, 0, ids, 8, &n), LLM_OK);
    cr_expect(n == 2 && ids[0] == 2 && ids[1] == 2);
    llm_tokenizer_free(tok);
}
