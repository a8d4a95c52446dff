/* llm-chat private declarations: options and the line reader. */
#ifndef LLM_CHAT_H
#define LLM_CHAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llama/engine.h"

typedef struct chat_opts {
    const char *model;      /* -m; NULL = default model */
    const char *prompt;     /* -p; NULL = interactive (or stdin when not a tty) */
    const char *system;     /* -sys / --system */
    const char *backend;    /* --backend */
    int32_t n_predict;      /* -n; -1 = until end of turn or full context, else >= 1 */
    int32_t n_ctx;          /* -c; 0 = model default */
    int32_t n_threads;      /* -t; 0 = all cores */
    int32_t n_batch;        /* -b; 0 = engine default */
    llm_kv_type type_k;     /* -ctk / --cache-type-k (--kv-type sets both) */
    llm_kv_type type_v;     /* -ctv / --cache-type-v */
    llm_sampling_params sp;  /* --temp --top-k --top-p --min-p --repeat-penalty -s */
    bool raw;               /* --raw: no chat template */
    bool force;             /* --force: load even when the plan exceeds free memory */
    bool no_prefix_cache;
    bool verbose;           /* --verbose: print stats after each answer */
    bool interactive;       /* -i: force interactive even with -p */
    const char *grammar;    /* --grammar / --grammar-file: GBNF every answer follows, or NULL */
    const char *json_schema; /* -j / --json-schema / --json-schema-file, or NULL (not both) */
    char *files[2];         /* text read from --grammar-file, --json-schema-file (malloc'd) */
} chat_opts;

/* Frees what chat_parse_args allocated. */
void chat_opts_free(chat_opts *o);

/* Parses argv. Returns 0 to run, 1 to exit successfully (--help, --version),
 * -1 on a usage error (message already printed to stderr). */
int chat_parse_args(int argc, char **argv, chat_opts *o);

/* Resolves the default model path into buf ($LLM_MODEL, else
 * ${LLM_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/llm/models}/SmolLM2-...). */
void chat_default_model(char *buf, size_t cap);

/* Line reader: libedit with history on a terminal, fgets otherwise. */
void line_init(bool tty);
void line_shutdown(void);
/* Returns a malloc'd line without the newline, or NULL on EOF. Sets
 * *interrupted when Ctrl-C ended the read (then returns NULL). */
char *line_read(const char *prompt, bool *interrupted);
void line_add_history(const char *line);

/* Set by the SIGINT handler (main.c). */
extern volatile int g_sigint_count;

#endif
