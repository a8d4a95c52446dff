/* llm-grammar: a tool for debugging grammars. Prints a GBNF grammar (or the
 * grammar converted from a JSON Schema), checks whole texts against it
 * (exit 0 when every text is in the language, 1 otherwise with the byte
 * offset where it was rejected), and with a model times the token masks of
 * a text walked token by token. Bad usage and bad grammars exit 2. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_common.h"
#include "grammar_tool.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: llm-grammar GRAMMAR (--print | --check FILE... | -m MODEL --mask-bench FILE) [options]\n"
            "GRAMMAR, exactly one of:\n"
            "  --grammar-file F       a GBNF grammar file (llama.cpp's language, start rule root)\n"
            "  --grammar TEXT         a GBNF grammar given inline\n"
            "  --json-schema-file F   a JSON Schema file, converted to GBNF as llama.cpp does\n"
            "  --json-schema TEXT     a JSON Schema given inline\n"
            "what to do, exactly one of:\n"
            "  --print                print the grammar: a schema's converted GBNF as is, a GBNF\n"
            "                         grammar as parsed (generated rules such as root-1 shown)\n"
            "  --check FILE...        is each FILE's whole text in the language? ('-': stdin)\n"
            "                         exit 0 when all are; else exit 1 naming the first file that\n"
            "                         is not, with the byte offset (line:column, columns count\n"
            "                         characters) where it was rejected, or 'incomplete' when the\n"
            "                         text is a valid prefix but the grammar cannot end there\n"
            "  --mask-bench FILE      (needs -m) tokenize FILE's text, walk it token by token\n"
            "                         through the matcher and print the per-token mask time on\n"
            "                         one thread: the first (cold) mask apart, then median, p99\n"
            "                         and max, and their sum, for a cold pass (new matcher) and a\n"
            "                         warm pass (a clone sharing the token classes); exit 1 naming\n"
            "                         the token index and text when the text leaves the grammar\n"
            "options:\n"
            "  -m, --model MODEL      a model .gguf, a vocab-only .gguf, a tokenizer.json or an HF\n"
            "                         folder: token references (<[id]>, <text>) resolve against it\n"
            "  -v, --verbose          --mask-bench: one line per step (time, allowed tokens, next token)\n"
            "  -q, --quiet            --check: print nothing for texts that pass\n"
            "  --max-bytes N          largest text to read for --check/--mask-bench (default %zu MiB;\n"
            "                         grammars and schemas: %zu MiB)\n"
            "  -h, --help             this help\n"
            "exit: 0 ok; 1 a text is not in the language, or an error reading or tokenizing;\n"
            "      2 bad usage, or a grammar or schema that does not parse (the message gives\n"
            "      line and column)\n"
            "examples:\n"
            "  llm-grammar --json-schema '{\"type\": \"array\", \"items\": {\"type\": \"integer\"}}' --print\n"
            "  llm-grammar --grammar-file json.gbnf --check reply1.json reply2.json\n"
            "  printf yes | llm-grammar --grammar 'root ::= \"yes\" | \"no\"' --check -\n"
            "  llm-grammar --json-schema-file order.schema.json -m model.gguf --mask-bench order.json -v\n",
            GT_MAX_TEXT_BYTES >> 20, GT_MAX_GRAMMAR_BYTES >> 20);
}

/* Options that take a value: stores it in *slot, refusing a repeat. */
static int take(int argc, char **argv, int *i, const char **slot) {
    const char *opt = argv[*i];
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: option %s needs a value (see --help)\n", GT_PROG, opt);
        return -1;
    }
    if (*slot) {
        fprintf(stderr, "%s: option %s given twice\n", GT_PROG, opt);
        return -1;
    }
    *slot = argv[++*i];
    return 0;
}

static int parse_bytes(const char *s, size_t *out) {
    char *end = NULL;
    errno = 0;
    unsigned long long v = s[0] >= '0' && s[0] <= '9' ? strtoull(s, &end, 10) : 0;
    if (!end || *end != '\0' || errno || v == 0 || v > ((size_t)1 << 40)) {
        fprintf(stderr, "%s: --max-bytes expects a byte count from 1 to %zu, got '%s'\n", GT_PROG,
                (size_t)1 << 40, s);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

enum { MODE_NONE, MODE_PRINT, MODE_CHECK, MODE_BENCH };

static int set_mode(int *mode, int m, const char *opt) {
    if (*mode != MODE_NONE) {
        fprintf(stderr, "%s: %s: give only one of --print, --check, --mask-bench\n", GT_PROG, opt);
        return -1;
    }
    *mode = m;
    return 0;
}

static int print_grammar(const llm_grammar *g, const char *gbnf, size_t len, int is_schema) {
    if (is_schema) {
        fwrite(gbnf, 1, len, stdout);
        return app_finish_stdout(GT_PROG);
    }
    size_t need = 0;
    llm_grammar_print(g, NULL, 0, &need);
    char *out = malloc(need + 1);
    if (!out || llm_grammar_print(g, out, need + 1, &need) != LLM_OK) {
        fprintf(stderr, "%s: cannot print the grammar: %s\n", GT_PROG, out ? llm_grammar_last_error() : "out of memory");
        free(out);
        return APP_EXIT_FAIL;
    }
    fwrite(out, 1, need, stdout);
    free(out);
    return app_finish_stdout(GT_PROG);
}

int main(int argc, char **argv) {
    gt_source src = {0};
    const char *model = NULL, *bench_file = NULL, *max_arg = NULL;
    char **files = malloc((size_t)argc * sizeof *files);
    int n_files = 0, mode = MODE_NONE, verbose = 0, quiet = 0, rc = APP_EXIT_USAGE;
    size_t max_bytes = GT_MAX_TEXT_BYTES;
    if (!files) return APP_EXIT_FAIL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int bad = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            free(files);
            return app_finish_stdout(GT_PROG);
        } else if (!strcmp(a, "--grammar-file")) bad = take(argc, argv, &i, &src.grammar_file);
        else if (!strcmp(a, "--grammar")) bad = take(argc, argv, &i, &src.grammar_text);
        else if (!strcmp(a, "--json-schema-file")) bad = take(argc, argv, &i, &src.schema_file);
        else if (!strcmp(a, "--json-schema")) bad = take(argc, argv, &i, &src.schema_text);
        else if (!strcmp(a, "-m") || !strcmp(a, "--model")) bad = take(argc, argv, &i, &model);
        else if (!strcmp(a, "--max-bytes")) bad = take(argc, argv, &i, &max_arg) || parse_bytes(max_arg, &max_bytes);
        else if (!strcmp(a, "--print")) bad = set_mode(&mode, MODE_PRINT, a);
        else if (!strcmp(a, "--check")) bad = set_mode(&mode, MODE_CHECK, a);
        else if (!strcmp(a, "--mask-bench")) bad = set_mode(&mode, MODE_BENCH, a) || take(argc, argv, &i, &bench_file);
        else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) verbose = 1;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) quiet = 1;
        else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "%s: unknown option %s (see --help)\n", GT_PROG, a);
            bad = 1;
        } else if (mode == MODE_CHECK) files[n_files++] = argv[i];
        else {
            fprintf(stderr, "%s: unexpected argument '%s' (files to check follow --check)\n", GT_PROG, a);
            bad = 1;
        }
        if (bad) goto out;
    }
    int n_src = !!src.grammar_file + !!src.grammar_text + !!src.schema_file + !!src.schema_text;
    if (n_src != 1) {
        fprintf(stderr, "%s: give exactly one of --grammar-file, --grammar, --json-schema-file, --json-schema\n",
                GT_PROG);
        fprintf(stderr, "usage: llm-grammar GRAMMAR (--print | --check FILE... | -m MODEL --mask-bench FILE) "
                        "[options] (see --help)\n");
        goto out;
    }
    if (mode == MODE_NONE) {
        fprintf(stderr, "%s: give one of --print, --check FILE..., --mask-bench FILE (see --help)\n", GT_PROG);
        goto out;
    }
    if (mode == MODE_CHECK && n_files == 0) {
        fprintf(stderr, "%s: --check needs at least one file ('-' for stdin)\n", GT_PROG);
        goto out;
    }
    if (mode == MODE_BENCH && !model) {
        fprintf(stderr, "%s: --mask-bench needs a model's tokenizer: -m MODEL\n", GT_PROG);
        goto out;
    }

    const char *name = NULL;
    size_t len = 0;
    char *gbnf = NULL;
    llm_tokenizer *tok = NULL;
    llm_grammar_vocab *voc = NULL;
    llm_grammar *g = NULL;
    rc = gt_source_gbnf(&src, &name, &gbnf, &len);
    if (rc != APP_EXIT_OK) goto done;
    rc = APP_EXIT_FAIL;
    if (model) {
        if (llm_tokenizer_load(model, &tok) != LLM_OK) {
            fprintf(stderr, "%s: %s: %s\n", GT_PROG, model, llm_tokenizer_last_error());
            goto done;
        }
        if (!(voc = gt_vocab_from_tokenizer(tok))) goto done;
    }
    llm_status st = llm_grammar_parse(gbnf, len, voc, &g);
    if (st != LLM_OK) {
        int is_schema = src.schema_file || src.schema_text;
        fprintf(stderr, "%s: %s%s: %s\n", GT_PROG, name, is_schema ? " (converted grammar)" : "",
                llm_grammar_last_error());
        rc = st == LLM_ERR_NO_MEMORY ? APP_EXIT_FAIL : APP_EXIT_USAGE;
        goto done;
    }
    if (mode == MODE_PRINT) rc = print_grammar(g, gbnf, len, src.schema_file || src.schema_text);
    else if (mode == MODE_CHECK) {
        rc = gt_check_files(g, voc, files, n_files, max_bytes, quiet);
        int rc_out = app_finish_stdout(GT_PROG);
        if (rc == APP_EXIT_OK) rc = rc_out;
    } else {
        rc = gt_mask_bench(g, voc, tok, bench_file, max_bytes, verbose);
        int rc_out = app_finish_stdout(GT_PROG);
        if (rc == APP_EXIT_OK) rc = rc_out;
    }
done:
    llm_grammar_free(g);
    llm_grammar_vocab_free(voc);
    llm_tokenizer_free(tok);
    free(gbnf);
out:
    free(files);
    return rc;
}
