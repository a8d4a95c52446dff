/*
 * llm-inspect -- print a model's metadata and tensor table.
 *
 *   llm-inspect [--no-tensors] [--max-array N] FILE_OR_DIR
 *
 * FILE_OR_DIR is a GGUF file, a .safetensors file, or a Hugging Face folder
 * (config.json + model.safetensors or a sharded index). For a model whose
 * architecture llm supports, the model descriptor (hyper-parameters) is
 * printed too. Exit status: 0 ok, 1 the input is unreadable or malformed
 * (the reason is printed on stderr), 2 bad usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <errno.h>

#include "app_common.h"
#include "inspect.h"

static void usage(FILE *f) {
    fputs("usage: llm-inspect [--no-tensors] [--max-array N] FILE_OR_DIR\n"
          "\n"
          "Prints the metadata and tensor table of a model: a GGUF file, a .safetensors\n"
          "file, or a Hugging Face folder (config.json + model.safetensors or\n"
          "model.safetensors.index.json). Long arrays are abbreviated.\n"
          "\n"
          "  --no-tensors    omit the tensor table\n"
          "  --max-array N   array elements shown before '...' (default 8)\n"
          "  -h, --help      this help\n",
          f);
}

static int is_gguf(const char *path) {
    FILE *f = fopen(path, "rb");
    char m[4] = {0};
    const int ok = f && fread(m, 1, 4, f) == 4 && memcmp(m, "GGUF", 4) == 0;
    if (f) fclose(f);
    return ok;
}

int main(int argc, char **argv) {
    inspect_opts o = {8, 1};
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return app_finish_stdout("llm-inspect");
        } else if (!strcmp(argv[i], "--no-tensors")) {
            o.show_tensors = 0;
        } else if (!strcmp(argv[i], "--max-array")) {
            int32_t n;
            const char *v = i + 1 < argc ? argv[++i] : NULL;
            if (app_need_value("llm-inspect", "--max-array", v) ||
                app_parse_i32("llm-inspect", "--max-array", v, 0, 1000000, &n))
                return 2;
            o.max_array = (unsigned)n;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "llm-inspect: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (!path) {
            path = argv[i];
        } else {
            fprintf(stderr, "llm-inspect: more than one input given\n");
            return 2;
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    struct stat sb;
    if (stat(path, &sb) != 0 || access(path, R_OK) != 0) {
        fprintf(stderr, "llm-inspect: %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (S_ISDIR(sb.st_mode)) {
        llm_model_desc *d = NULL;
        if (llm_model_desc_from_dir(path, &d) != LLM_OK) {
            fprintf(stderr, "llm-inspect: %s\n", llm_models_last_error());
            return 1;
        }
        inspect_print_desc(stdout, d, &o);
        llm_model_desc_free(d);
        return app_finish_stdout("llm-inspect");
    }
    if (is_gguf(path)) {
        llm_gguf *g = NULL;
        if (llm_gguf_open(path, &g) != LLM_OK) {
            fprintf(stderr, "llm-inspect: %s\n", llm_gguf_last_error());
            return 1;
        }
        inspect_print_gguf(stdout, g, &o);
        llm_gguf_close(g);
        /* The descriptor too, when the architecture is one llm supports. */
        llm_model_desc *d = NULL;
        if (llm_model_desc_from_gguf(path, &d) == LLM_OK) {
            inspect_print_desc(stdout, d, &o);
            llm_model_desc_free(d);
        } else {
            printf("* Model: not loadable by llm: %s\n", llm_models_last_error());
        }
        return app_finish_stdout("llm-inspect");
    }
    llm_safetensors *st = NULL;
    if (llm_safetensors_open(path, &st) != LLM_OK) {
        fprintf(stderr, "llm-inspect: %s: not a GGUF file; as SafeTensors: %s\n", path, llm_models_last_error());
        return 1;
    }
    inspect_print_safetensors(stdout, st, &o);
    llm_safetensors_close(st);
    return app_finish_stdout("llm-inspect");
}
