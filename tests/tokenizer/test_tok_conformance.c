/* llama.cpp's tokenizer conformance files: every vocab-only GGUF in
 * $LLM_TESTDATA_DIR/llama-cpp-vocab whose tokenizer we support must give
 * exactly the ids of its .out file for each string of its .inp file
 * (add_special = parse_special = false; ids made by HF transformers). */
#include <criterion/criterion.h>
#include <dirent.h>

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

typedef struct run_stats {
    int vocabs_run[5]; /* per llm_tokenizer_type */
    int failures;
} run_stats;

static void run_vocab(const char *dir, const char *name, run_stats *rs) {
    char path[1100], inp_path[1200], out_path[1200];
    snprintf(path, sizeof path, "%s/ggml-vocab-%s.gguf", dir, name);
    snprintf(inp_path, sizeof inp_path, "%s.inp", path);
    snprintf(out_path, sizeof out_path, "%s.out", path);
    size_t inp_len = 0, out_len = 0;
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        printf("conformance: skip %-16s vocab GGUF not in the snapshot\n", name);
        return;
    }
    fclose(probe);
    llm_status st;
    llm_tokenizer *tok = tt_load_gguf(path, &st);
    if (!tok) {
        if (st == LLM_ERR_UNSUPPORTED) {
            printf("conformance: skip %-16s %s\n", name, llm_last_error());
            return;
        }
        cr_expect(0, "%s: cannot build the tokenizer (%s)", name, llm_status_str(st));
        rs->failures++;
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
           llm_tokenizer_get_type(tok) == LLM_TOKENIZER_BPE ? "BPE" : llm_tokenizer_get_type(tok) == LLM_TOKENIZER_SPM ? "SPM" : "WPM",
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
    run_stats rs = {{0}, 0};
    for (int i = 0; i < n; i++) {
        run_vocab(dir, names[i], &rs);
        free(names[i]);
    }
    cr_assert(n >= 10, "only %d .inp files found in %s", n, dir);
    cr_expect(rs.vocabs_run[LLM_TOKENIZER_BPE] >= 7, "BPE vocabs run: %d", rs.vocabs_run[LLM_TOKENIZER_BPE]);
    cr_expect(rs.vocabs_run[LLM_TOKENIZER_SPM] >= 2, "SPM vocabs run: %d", rs.vocabs_run[LLM_TOKENIZER_SPM]);
    cr_expect(rs.vocabs_run[LLM_TOKENIZER_WPM] >= 1, "WPM vocabs run: %d", rs.vocabs_run[LLM_TOKENIZER_WPM]);
    cr_assert(rs.failures == 0, "%d conformance cases differ", rs.failures);
}

/* The two vocabularies without test strings must at least load and
 * round-trip plain text (no reference ids exist for them). */
Test(tokenizer_conformance, vocabs_without_tests_load) {
    const char *names[] = {"baichuan", "gpt-neox"};
    for (int i = 0; i < 2; i++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/llama-cpp-vocab/ggml-vocab-%s.gguf", tt_env("LLM_TESTDATA_DIR", "../shared/testdata"),
                 names[i]);
        llm_status st;
        llm_tokenizer *tok = tt_load_gguf(path, &st);
        cr_assert(tok, "%s: %s", names[i], llm_status_str(st));
        const char *text = "Hello world, this is a test.";
        llm_token *ids;
        int32_t n;
        cr_assert_eq(tt_encode(tok, text, strlen(text), 0, &ids, &n), LLM_OK);
        char buf[256];
        size_t len;
        cr_assert_eq(llm_tokenizer_decode(tok, ids, n, 0, buf, sizeof buf, &len), LLM_OK);
        cr_expect_str_eq(buf, text, "%s", names[i]);
        free(ids);
        llm_tokenizer_free(tok);
    }
}
