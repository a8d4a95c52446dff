/* llm-chat command line: llama.cpp spellings where they exist. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_cache_type.h"
#include "app_common.h"
#include "chat.h"

#define DEFAULT_MODEL_FILE APP_DEFAULT_MODEL_FILE
#define P "llm-chat"

static void usage(FILE *f) {
    fprintf(f,
        "usage: llm-chat [options]\n"
        "\n"
        "Chat with a language model in the terminal. With -p, or when stdin is not a\n"
        "terminal, answers one prompt and exits: the answer alone goes to stdout,\n"
        "logs and statistics to stderr.\n"
        "\n"
        "model and runtime:\n"
        "  -m, --model PATH        GGUF file or Hugging Face folder (default: $LLM_MODEL, else\n"
        "                          ${LLM_MODELS_DIR:-${XDG_CACHE_HOME:-~/.cache}/llm/models}/\n"
        "                          " DEFAULT_MODEL_FILE ")\n"
        "  -c, --ctx-size N        context size in tokens (default: model's, at most 4096)\n"
        "  -t, --threads N         CPU threads, at most the number of cores (default: all cores)\n"
        "      --backend NAME      cpu, cuda or auto (default auto)\n"
        "  -b, --batch-size N      most prompt tokens per forward pass (default 256)\n"
        APP_CACHE_TYPE_HELP
        "      --kv-type T         both cache types at once (the same choices)\n"
        "      --force             load even when the memory plan exceeds the available memory\n"
        "      --no-prefix-cache   do not reuse KV blocks of identical prompt prefixes\n"
        "\n"
        "prompt:\n"
        "  -p, --prompt TEXT       answer TEXT once and exit (non-interactive)\n"
        "  -sys, --system TEXT     system prompt\n"
        "  -i, --interactive       stay interactive after answering -p\n"
        "      --raw               continue the text as given, without the chat template\n"
        "  -n, --n-predict N       most tokens per answer, >= 1 (default -1: until end of turn\n"
        "                          or full context)\n"
        "\n"
        "structured output (every answer follows it; one of these):\n"
        "      --grammar TEXT      a GBNF grammar (llama.cpp's; its rule `root` starts)\n"
        "      --grammar-file FILE the grammar from FILE\n"
        "  -j, --json-schema SCHEMA  a JSON Schema the answer is JSON of, e.g. {} for any value\n"
        "      --json-schema-file FILE  the schema from FILE\n"
        "\n"
        "sampling (llama.cpp names; --temp 0 is greedy and deterministic):\n"
        "  -s, --seed N            RNG seed (default 12648430)\n"
        "      --temp X            temperature (default 0.8)\n"
        "      --top-k N           (default 40, 0 = off)\n"
        "      --top-p X           (default 0.95, 1 = off)\n"
        "      --min-p X           (default 0.05, 0 = off)\n"
        "      --repeat-penalty X  (default 1.0 = off)\n"
        "      --repeat-last-n N   penalty window (default 64)\n"
        "\n"
        "other:\n"
        "  -v, --verbose           print statistics after every answer\n"
        "  -h, --help              this help\n"
        "      --version           print the version\n"
        "\n"
        "exit status: 0 done; 1 error; 2 bad usage; 130 the one-shot answer (-p or stdin)\n"
        "was cut by Ctrl-C (SIGINT), so what stdout holds is incomplete.\n"
        "\n"
        "interactive commands:\n"
        "  /help  /reset  /stats  /system TEXT  /quit\n"
        "  Ctrl-C stops the current answer; Ctrl-C twice at the prompt (or Ctrl-D) quits.\n"
        "  Input history: ${XDG_STATE_HOME:-~/.local/state}/llm/chat_history\n"
        "\n"
        "Get the default model with: scripts/setup.sh (or scripts/fetch-model.sh)\n");
}

void chat_default_model(char *buf, size_t cap) { app_default_model(buf, cap); }

void chat_opts_free(chat_opts *o) {
    free(o->files[0]);
    free(o->files[1]);
    o->files[0] = o->files[1] = NULL;
}

/* --grammar-file / --json-schema-file: the whole file as text. */
static int read_text(const char *opt, const char *path, char **slot, const char **out) {
    size_t len = 0;
    char *t = app_read_file(path, &len);
    if (!t) {
        fprintf(stderr, P ": %s: cannot read '%s'\n", opt, path);
        return -1;
    }
    if (strlen(t) != len) {
        fprintf(stderr, P ": %s: '%s' holds a NUL byte\n", opt, path);
        free(t);
        return -1;
    }
    free(*slot);
    *slot = t;
    *out = t;
    return 0;
}

int chat_parse_args(int argc, char **argv, chat_opts *o) {
    memset(o, 0, sizeof *o);
    o->n_predict = -1;
    o->backend = "auto";
    o->sp = llm_sampling_default_params();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        int is_v = 0;
#define NEEDV()                              \
    do {                                     \
        if (app_need_value(P, a, v)) return -1; \
        i++;                                 \
    } while (0)
#define IS(s1, s2) (strcmp(a, s1) == 0 || strcmp(a, s2) == 0)
        if (IS("-h", "--help")) {
            usage(stdout);
            return 1;
        } else if (IS("--version", "--version")) {
            printf("llm-chat %s\n", llm_engine_version());
            return 1;
        } else if (IS("-m", "--model")) {
            NEEDV();
            o->model = v;
        } else if (IS("-p", "--prompt")) {
            NEEDV();
            o->prompt = v;
        } else if (IS("-sys", "--system")) {
            NEEDV();
            o->system = v;
        } else if (IS("--backend", "--backend")) {
            NEEDV();
            o->backend = v;
        } else if (IS("-n", "--n-predict")) {
            NEEDV();
            if (app_parse_i32(P, a, v, -1, INT32_MAX, &o->n_predict)) return -1;
            if (o->n_predict == 0) {
                fprintf(stderr, P ": %s expects -1 (no limit) or a count >= 1, got '0'\n", a);
                return -1;
            }
        } else if (IS("-c", "--ctx-size")) {
            NEEDV();
            if (app_parse_i32(P, a, v, 0, 1 << 24, &o->n_ctx)) return -1;
        } else if (IS("-b", "--batch-size")) {
            NEEDV();
            if (app_parse_i32(P, a, v, 1, 1 << 16, &o->n_batch)) return -1;
        } else if (IS("--kv-type", "--kv-type")) {
            NEEDV();
            if (app_parse_cache_type(P, a, v, &o->type_k)) return -1;
            o->type_v = o->type_k;
        } else if (app_is_cache_type_opt(a, &is_v)) {
            NEEDV();
            if (app_parse_cache_type(P, a, v, is_v ? &o->type_v : &o->type_k)) return -1;
        } else if (IS("-t", "--threads")) {
            NEEDV();
            if (app_parse_threads(P, a, v, &o->n_threads)) return -1;
        } else if (IS("-s", "--seed")) {
            NEEDV();
            char *end;
            errno = 0;
            unsigned long long s = strtoull(v, &end, 10);
            if (errno || end == v || *end) {
                fprintf(stderr, "llm-chat: %s expects a non-negative integer, got '%s'\n", a, v);
                return -1;
            }
            o->sp.seed = (uint64_t)s;
        } else if (IS("--temp", "--temp")) {
            NEEDV();
            if (app_parse_f32(P, a, v, 0.0f, 100.0f, &o->sp.temperature)) return -1;
        } else if (IS("--top-k", "--top-k")) {
            NEEDV();
            if (app_parse_i32(P, a, v, 0, INT32_MAX, &o->sp.top_k)) return -1;
        } else if (IS("--top-p", "--top-p")) {
            NEEDV();
            if (app_parse_f32(P, a, v, 0.0f, 1.0f, &o->sp.top_p)) return -1;
        } else if (IS("--min-p", "--min-p")) {
            NEEDV();
            if (app_parse_f32(P, a, v, 0.0f, 1.0f, &o->sp.min_p)) return -1;
        } else if (IS("--repeat-penalty", "--repeat-penalty")) {
            NEEDV();
            if (app_parse_f32_above(P, a, v, 0.0f, 100.0f, &o->sp.repeat_penalty)) return -1;
        } else if (IS("--repeat-last-n", "--repeat-last-n")) {
            NEEDV();
            if (app_parse_i32(P, a, v, 0, INT32_MAX, &o->sp.repeat_last_n)) return -1;
        } else if (IS("--grammar", "--grammar")) {
            NEEDV();
            o->grammar = v;
        } else if (IS("--grammar-file", "--grammar-file")) {
            NEEDV();
            if (read_text(a, v, &o->files[0], &o->grammar)) return -1;
        } else if (IS("-j", "--json-schema")) {
            NEEDV();
            o->json_schema = v;
        } else if (IS("--json-schema-file", "--json-schema-file")) {
            NEEDV();
            if (read_text(a, v, &o->files[1], &o->json_schema)) return -1;
        } else if (IS("--raw", "--raw")) {
            o->raw = true;
        } else if (IS("--force", "--force")) {
            o->force = true;
        } else if (IS("--no-prefix-cache", "--no-prefix-cache")) {
            o->no_prefix_cache = true;
        } else if (IS("-v", "--verbose")) {
            o->verbose = true;
        } else if (IS("-i", "--interactive")) {
            o->interactive = true;
        } else {
            fprintf(stderr, "llm-chat: unknown option '%s' (try --help)\n", a);
            return -1;
        }
#undef IS
#undef NEEDV
    }
    if (o->prompt && !*o->prompt) {
        fprintf(stderr, "llm-chat: the prompt given with -p is empty\n");
        return -1;
    }
    if (o->grammar && o->json_schema) {
        fprintf(stderr, "llm-chat: give a grammar or a JSON schema, not both\n");
        return -1;
    }
    return 0;
}
