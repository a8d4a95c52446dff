/* llama.cpp's tokenizer conformance files: every vocab-only GGUF in
 * $LLM_TESTDATA_DIR/llama-cpp-vocab must give exactly the ids of its .out
 * file for each string of its .inp file (add_special = parse_special = false;
 * ids made by HF transformers). The test is driven by the directory: a new
 * pair runs without editing this file. The only exceptions are the
 * vocabularies listed in k_unsupported below, each with its reason: the test
 * fails if one of them starts loading (remove it from the list) or if an
 * unlisted one is refused. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdbool.h>

#include "tok_test_util.h"

#define SEP "\n__ggml_vocab_test__\n"

/* Parse one .out line of ids. Returns the count, ids in *out (caller frees). */
static int parse_ids(const char *line, size_t len, llm_token **out) {
    llm_token *v = malloc((len / 2 + 1) * sizeof *v);
    int n = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && (line[i] == ' ' || line[i] == '\r')) i++;
        if (i >= len) break;
        long x = 0;
        while (i < len && line[i] >= '0' && line[i] <= '9') x = x * 10 + (line[i++] - '0');
        v[n++] = (llm_token)x;
        while (i < len && line[i] != ' ') i++;
    }
    *out = v;
    return n;
}

/* Vocabularies we knowingly refuse today (expected failures), with why. */
static const struct {
    const char *name, *reason;
} k_unsupported[] = {
    {"nomic-bert-moe", "tokenizer.ggml.model = t5 (Unigram with a Precompiled charsmap) is not implemented yet"},
};

static const char *unsupported_reason(const char *name) {
    for (size_t i = 0; i < sizeof k_unsupported / sizeof k_unsupported[0]; i++)
        if (strcmp(k_unsupported[i].name, name) == 0) return k_unsupported[i].reason;
    return NULL;
}

/* Load NAME's GGUF. A listed vocabulary must be refused with
 * LLM_ERR_UNSUPPORTED (returns NULL, *expected = true); an unlisted one must
 * load. */
static llm_tokenizer *load_vocab(const char *path, const char *name, bool *expected) {
    llm_status st;
    llm_tokenizer *tok = tt_load_gguf(path, &st);
    const char *why = unsupported_reason(name);
    *expected = false;
    if (why) {
        cr_expect(tok == NULL, "%s is listed as unsupported (%s) but now loads: remove it from k_unsupported", name, why);
        cr_expect(tok != NULL || st == LLM_ERR_UNSUPPORTED, "%s: refused with %s, not LLM_ERR_UNSUPPORTED", name,
                  llm_status_str(st));
        if (!tok) {
            printf("conformance: expected failure %-16s %s\n", name, why);
            *expected = true;
        }
        return tok;
    }
    cr_expect(tok != NULL, "%s: cannot build the tokenizer (%s: %s)", name, llm_status_str(st),
              st == LLM_ERR_UNSUPPORTED ? llm__tokenizer_gguf_last_error() : "");
    return tok;
}

typedef struct run_stats {
    int vocabs_run[5]; /* per llm_tokenizer_type */
    int failures;
    int expected_failures;
} run_stats;

static void run_vocab(const char *dir, const char *name, run_stats *rs) {
    char path[1100], inp_path[1200], out_path[1200];
    snprintf(path, sizeof path, "%s/ggml-vocab-%s.gguf", dir, name);
    snprintf(inp_path, sizeof inp_path, "%s.inp", path);
    snprintf(out_path, sizeof out_path, "%s.out", path);
    size_t inp_len = 0, out_len = 0;
    bool expected;
    llm_tokenizer *tok = load_vocab(path, name, &expected);
    if (!tok) {
        if (expected) rs->expected_failures++;
        else rs->failures++;
        return;
    }
    char *inp = tt_read_file(inp_path, &inp_len), *outf = tt_read_file(out_path, &out_len);
    cr_assert(inp && outf, "%s: cannot read .inp/.out", name);
    const char *ip = inp, *op = outf, *iend = inp + inp_len, *oend = outf + out_len;
    int cases = 0, bad = 0;
    while (ip < iend) {
        const char *sep = strstr(ip, SEP);
        const char *s_end = sep ? sep : iend; /* gemma-4 style: no separator after the last */
        const char *nl = memchr(op, '\n', (size_t)(oend - op));
        const char *l_end = nl ? nl : oend;
        cr_assert(op < oend || s_end == ip, "%s: .out has fewer lines than .inp has strings", name);
        llm_token *want = NULL, *got = NULL;
        int n_want = parse_ids(op, (size_t)(l_end - op), &want);
        int32_t n_got = 0;
        llm_status est = tt_encode(tok, ip, (size_t)(s_end - ip), 0, &got, &n_got);
        int same = est == LLM_OK && n_got == n_want && (n_want == 0 || memcmp(got, want, (size_t)n_want * sizeof *got) == 0);
        if (!same) {
            bad++;
            printf("conformance: %s case %d MISMATCH for \"%.*s\"\n  want:", name, cases, (int)(s_end - ip), ip);
            for (int k = 0; k < n_want; k++) printf(" %d", (int)want[k]);
            printf("\n  got: ");
            for (int32_t k = 0; k < n_got; k++) printf(" %d", (int)got[k]);
            printf("  (%s)\n", llm_status_str(est));
        }
        free(want);
        free(got);
        cases++;
        ip = sep ? sep + strlen(SEP) : iend;
        op = nl ? nl + 1 : oend;
    }
    printf("conformance: %-16s %-4s %d/%d cases pass\n", name,
           llm_tokenizer_get_type(tok) == LLM_TOKENIZER_BPE   ? "BPE"
           : llm_tokenizer_get_type(tok) == LLM_TOKENIZER_SPM ? "SPM"
           : llm_tokenizer_get_type(tok) == LLM_TOKENIZER_WPM ? "WPM"
                                                              : "SBPE",
           cases - bad, cases);
    cr_expect(bad == 0, "%s: %d of %d cases differ", name, bad, cases);
    cr_expect(cases >= 46, "%s: only %d cases", name, cases);
    rs->failures += bad;
    rs->vocabs_run[llm_tokenizer_get_type(tok)]++;
    free(inp);
    free(outf);
    llm_tokenizer_free(tok);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

Test(tokenizer_conformance, llama_cpp_vocab_files) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/llama-cpp-vocab", tt_env("LLM_TESTDATA_DIR", "../shared/testdata"));
    DIR *d = opendir(dir);
    cr_assert(d, "cannot open %s", dir);
    char *names[64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64) {
        size_t l = strlen(e->d_name);
        /* One entry per test pair: ggml-vocab-NAME.gguf.inp */
        if (l > 20 && strncmp(e->d_name, "ggml-vocab-", 11) == 0 && strcmp(e->d_name + l - 9, ".gguf.inp") == 0) {
            names[n] = malloc(l);
            memcpy(names[n], e->d_name + 11, l - 20);
            names[n][l - 20] = '\0';
            n++;
        }
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    run_stats rs = {{0}, 0, 0};
    for (int i = 0; i < n; i++) {
        run_vocab(dir, names[i], &rs);
        free(names[i]);
    }
    cr_assert(n >= 15, "only %d .inp files found in %s", n, dir);
    cr_expect(rs.vocabs_run[LLM_TOKENIZER_BPE] >= 7, "BPE vocabs run: %d", rs.vocabs_run[LLM_TOKENIZER_BPE]);
    cr_expect(rs.vocabs_run[LLM_TOKENIZER_SPM] >= 2, "SPM vocabs run: %d", rs.vocabs_run[LLM_TOKENIZER_SPM]);
    cr_expect(rs.vocabs_run[LLM_TOKENIZER_WPM] >= 1, "WPM vocabs run: %d", rs.vocabs_run[LLM_TOKENIZER_WPM]);
    cr_expect(rs.vocabs_run[LLM_TOKENIZER_HF_BPE] >= 1, "SPM-style BPE (gemma4) vocabs run: %d", rs.vocabs_run[LLM_TOKENIZER_HF_BPE]);
    cr_assert(rs.failures == 0, "%d conformance cases differ", rs.failures);
}

/* The vocabularies without test strings (every ggml-vocab-*.gguf without an
 * .inp) must at least load and round-trip plain text; their ids are compared
 * with llama.cpp's on the mixed corpus elsewhere. */
Test(tokenizer_conformance, vocabs_without_tests_load) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/llama-cpp-vocab", tt_env("LLM_TESTDATA_DIR", "../shared/testdata"));
    DIR *d = opendir(dir);
    cr_assert(d, "cannot open %s", dir);
    int n = 0, loaded = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l <= 16 || strncmp(e->d_name, "ggml-vocab-", 11) != 0 || strcmp(e->d_name + l - 5, ".gguf") != 0) continue;
        char path[1100], inp[1200], name[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(inp, sizeof inp, "%s.inp", path);
        FILE *probe = fopen(inp, "rb");
        if (probe) {
            fclose(probe);
            continue;
        }
        snprintf(name, sizeof name, "%.*s", (int)(l - 16), e->d_name + 11);
        n++;
        bool expected;
        llm_tokenizer *tok = load_vocab(path, name, &expected);
        if (!tok) continue;
        loaded++;
        const char *text = "Hello world, this is a test.";
        llm_token *ids;
        int32_t nt;
        cr_assert_eq(tt_encode(tok, text, strlen(text), 0, &ids, &nt), LLM_OK);
        char buf[256];
        size_t len;
        cr_assert_eq(llm_tokenizer_decode(tok, ids, nt, 0, buf, sizeof buf, &len), LLM_OK);
        cr_expect_str_eq(buf, text, "%s", name);
        printf("conformance: %-16s loads, round-trips (no .inp/.out)\n", name);
        free(ids);
        llm_tokenizer_free(tok);
    }
    closedir(d);
    cr_expect(n >= 4, "only %d vocabularies without tests found in %s", n, dir);
    cr_expect(loaded >= 3, "only %d of them load", loaded);
}
