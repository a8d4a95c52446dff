/* Random strings (emoji, CJK, Hangul, combining marks, controls, NUL,
 * whitespace runs) through the SPM and WordPiece vocab GGUFs, against the
 * SentencePiece library (llama-spm, baichuan) and HF tokenizers (bert-bge):
 * tests/tokenizer/data/random_expected.txt, from
 * scripts/golden/tokenizer/make_random_golden.py.
 * The behaviour classes of issue 15 (WordPiece on many scripts against HF;
 * special-token look-alikes and decomposed letters against llama.cpp):
 * tests/tokenizer/data/classes_expected.txt, from make_class_golden.py;
 * tests/tokenizer/data/unigram_expected.txt, from make_unigram_golden.py. */
#include <criterion/criterion.h>

#include "tok_test_util.h"

static size_t unhex(const char *h, size_t n, char *out) {
    size_t k = 0;
    for (size_t i = 0; i + 1 < n; i += 2) {
        unsigned v;
        sscanf(h + i, "%2x", &v);
        out[k++] = (char)v;
    }
    return k;
}

/* Every VOCAB<TAB>hex(text)<TAB>ids line of FILE must encode to its ids
 * (VOCAB@special: with LLM_TOKENIZE_PARSE_SPECIAL). */
static void run_file(const char *file, int min_cases) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/tokenizer/data/%s", tt_env("LLM_SOURCE_DIR", "."), file);
    size_t len = 0;
    char *all = tt_read_file(path, &len);
    cr_assert(all, "cannot read %s", path);
    const char *dir = tt_env("LLM_TESTDATA_DIR", "../shared/testdata");
    llm_tokenizer *tok = NULL;
    char cur[64] = "";
    int cases = 0, bad = 0;
    for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        cr_assert(t2, "bad line");
        *t1 = '\0';
        unsigned flags = 0;
        char *at = strchr(line, '@');
        if (at && strcmp(at, "@special") == 0) {
            flags = LLM_TOKENIZE_PARSE_SPECIAL;
            *at = '\0';
        }
        if (strcmp(cur, line) != 0) {
            llm_tokenizer_free(tok);
            char gpath[1200];
            snprintf(gpath, sizeof gpath, "%s/llama-cpp-vocab/ggml-vocab-%s.gguf", dir, line);
            llm_status st;
            tok = tt_load_gguf(gpath, &st);
            cr_assert(tok, "%s: %s", gpath, llm_status_str(st));
            snprintf(cur, sizeof cur, "%s", line);
        }
        char text[1024];
        size_t tl = unhex(t1 + 1, (size_t)(t2 - t1 - 1), text);
        llm_token want[1024];
        int nw = 0;
        for (char *p = t2 + 1; *p && nw < 1024;) {
            want[nw++] = (llm_token)strtol(p, &p, 10);
            while (*p == ' ') p++;
        }
        llm_token *got;
        int32_t ng;
        cr_assert_eq(tt_encode(tok, text, tl, flags, &got, &ng), LLM_OK, "%s", llm_tokenizer_last_error());
        if (ng != nw || (nw && memcmp(got, want, (size_t)nw * sizeof *got) != 0)) {
            if (bad < 5) {
                printf("%s: %s%s \"%.*s\": want", file, cur, flags ? "@special" : "", (int)tl, text);
                for (int k = 0; k < nw; k++) printf(" %d", (int)want[k]);
                printf("\n   got");
                for (int k = 0; k < ng; k++) printf(" %d", (int)got[k]);
                printf("\n");
            }
            bad++;
        }
        free(got);
        cases++;
    }
    llm_tokenizer_free(tok);
    free(all);
    printf("%s: %d cases, %d differ\n", file, cases, bad);
    cr_assert(cases >= min_cases, "only %d cases", cases);
    cr_assert_eq(bad, 0, "%d of %d strings of %s differ from the references", bad, cases, file);
}

Test(tokenizer_random, spm_and_wpm_match_references) { run_file("random_expected.txt", 700); }

Test(tokenizer_random, issue15_classes_match_references) { run_file("classes_expected.txt", 240); }

/* The Unigram vocabulary (nomic-bert-moe, tokenizer.ggml.model = t5) against
 * llama.cpp on whitespace runs, NFKC-folded characters, uncovered
 * characters, many scripts, special-token look-alikes and decomposed letters
 * (make_unigram_golden.py; the texts where HF tokenizers differs are listed
 * in the file's comments: control-token text and HF's per-grapheme
 * Precompiled rule). */
Test(tokenizer_random, unigram_matches_llama_cpp) { run_file("unigram_expected.txt", 70); }

/* llama.cpp's special-token partition on eight vocab GGUFs, special parsing on
 * and off (make_special_golden.py): overlapping special-token texts (longest
 * token first over the whole text, not HF's leftmost match) and the
 * LSTRIP/RSTRIP attributes next to ASCII and non-ASCII whitespace (ASCII
 * only, as llama.cpp's isspace). */
Test(tokenizer_random, special_partition_matches_llama_cpp) { run_file("special_expected.txt", 400); }
