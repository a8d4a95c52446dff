/* llm-tokenize MODEL [TEXT]: print the token ids of TEXT (or of -f FILE, or
 * of stdin) under the tokenizer of MODEL (model GGUF, vocab-only GGUF or HF
 * tokenizer.json). By default: ids on one line, no BOS/EOS, special-token
 * text treated as plain text (the llama.cpp conformance-file convention). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_common.h"
#include "llama/tokenizer.h" /* llm_tokenizer_load: GGUF, tokenizer.json or HF folder */

static void usage(FILE *f) {
    fprintf(f,
            "usage: llm-tokenize [options] MODEL [TEXT]\n"
            "  MODEL            a model .gguf, a vocab-only .gguf, or a tokenizer.json\n"
            "  TEXT             text to tokenize; else -f FILE; else stdin (byte for byte)\n"
            "options:\n"
            "  -f FILE          read the text from FILE\n"
            "  --add-special    add BOS/EOS as the model asks\n"
            "  --parse-special  match special-token text (\"<|im_end|>\") as special tokens\n"
            "  --show-pieces    print one \"id<TAB>piece\" line per token instead\n"
            "  -h, --help       this help\n");
}

static int load(const char *path, llm_tokenizer **tok) {
    if (llm_tokenizer_load(path, tok) != LLM_OK) {
        fprintf(stderr, "llm-tokenize: %s\n", llm_tokenizer_last_error());
        return -1;
    }
    return 0;
}

static void print_piece(const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\n') fputs("\\n", stdout);
        else if (c == '\t') fputs("\\t", stdout);
        else if (c == '\r') fputs("\\r", stdout);
        else if (c == '\\') fputs("\\\\", stdout);
        else if (c < 0x20 || c == 0x7F) printf("\\x%02X", c);
        else putchar(c);
    }
}

int main(int argc, char **argv) {
    const char *model = NULL, *text_arg = NULL, *file = NULL;
    unsigned flags = 0;
    int show = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return app_finish_stdout("llm-tokenize");
        } else if (!strcmp(a, "--add-special")) {
            flags |= LLM_TOKENIZE_ADD_SPECIAL;
        } else if (!strcmp(a, "--parse-special")) {
            flags |= LLM_TOKENIZE_PARSE_SPECIAL;
        } else if (!strcmp(a, "--show-pieces")) {
            show = 1;
        } else if (!strcmp(a, "-f")) {
            if (++i >= argc) {
                fprintf(stderr, "llm-tokenize: -f needs a file name\n");
                return 2;
            }
            file = argv[i];
        } else if (a[0] == '-' && a[1] == '-' && a[2] != '\0') {
            fprintf(stderr, "llm-tokenize: unknown option %s (see --help)\n", a);
            return 2;
        } else if (!model) {
            model = a;
        } else if (!text_arg) {
            text_arg = a;
        } else {
            fprintf(stderr, "llm-tokenize: too many arguments (see --help)\n");
            return 2;
        }
    }
    if (!model) {
        usage(stderr);
        return 2;
    }
    if (text_arg && file) {
        fprintf(stderr, "llm-tokenize: give TEXT or -f FILE, not both\n");
        return 2;
    }
    char *text = NULL;
    size_t len = 0;
    if (text_arg) {
        len = strlen(text_arg);
        text = malloc(len + 1);
        if (text) memcpy(text, text_arg, len + 1);
    } else {
        if (file && app_check_input_file("llm-tokenize", file)) return 1;
        FILE *f = file ? fopen(file, "rb") : stdin;
        if (!f) {
            fprintf(stderr, "llm-tokenize: cannot open %s\n", file);
            return 1;
        }
        text = app_read_stream(f, &len);
        if (file) fclose(f);
    }
    if (!text) {
        fprintf(stderr, "llm-tokenize: cannot read the text\n");
        return 1;
    }
    llm_tokenizer *tok = NULL;
    if (load(model, &tok)) {
        free(text);
        return 1;
    }
    int32_t n = 0;
    llm_status st = llm_tokenizer_encode(tok, text, len, flags, NULL, 0, &n);
    llm_token *ids = NULL;
    if (st == LLM_ERR_BUFFER_TOO_SMALL || st == LLM_OK) {
        ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
        st = ids ? llm_tokenizer_encode(tok, text, len, flags, ids, n, &n) : LLM_ERR_NO_MEMORY;
    }
    if (st != LLM_OK) {
        fprintf(stderr, "llm-tokenize: %s\n", llm_tokenizer_last_error());
        free(ids);
        free(text);
        llm_tokenizer_free(tok);
        return 1;
    }
    for (int32_t i = 0; i < n; i++) {
        if (show) {
            size_t pl = 0;
            const char *p = llm_tokenizer_token_bytes(tok, ids[i], &pl);
            printf("%d\t", (int)ids[i]);
            print_piece(p, pl);
            putchar('\n');
        } else {
            printf(i ? " %d" : "%d", (int)ids[i]);
        }
    }
    if (!show) putchar('\n');
    free(ids);
    free(text);
    llm_tokenizer_free(tok);
    return app_finish_stdout("llm-tokenize");
}
