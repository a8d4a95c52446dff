/* llm-embed private declarations: input records, output writers, search. */
#ifndef LLM_EMBED_H
#define LLM_EMBED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "app_common.h"

/* ---- input -------------------------------------------------------------- */

/* One text to embed. `id_json` is the record's id as JSON text ("17",
 * "\"doc-3\""); both strings are malloc'd and owned by the record. */
typedef struct embed_rec {
    char *id_json;
    char *text;
    long line; /* 1-based line in its input, for messages */
} embed_rec;

typedef struct embed_input {
    FILE *f;
    const char *name; /* file name or "<stdin>" */
    bool jsonl;
    long line;
    uint64_t bytes_read;
    int64_t next_index; /* running id for plain lines, shared across files */
} embed_input;

/* Reads the next non-empty record. Returns 1 with *r filled, 0 at end of
 * input, -1 on a malformed record (message printed). */
int embed_input_next(embed_input *in, embed_rec *r);
void embed_rec_free(embed_rec *r);

/* ---- output ------------------------------------------------------------- */

typedef enum { OUT_JSONL, OUT_NPY } out_kind;

typedef struct embed_output {
    out_kind kind;
    app_file out;     /* the vectors: stdout, a .jsonl or the .npy */
    app_file ids;     /* NPY: X.ids.txt */
    FILE *f;          /* out.f while open */
    size_t dim;
    uint64_t rows;
} embed_output;

/* Opens the writer (path NULL or "-" = stdout, JSONL only); for NPY both
 * targets are checked before anything is created. 0 or -1 (message printed). */
int embed_output_open(embed_output *o, out_kind kind, const char *path, size_t dim);
/* Appends one vector. 0 or -1 (message printed). */
int embed_output_write(embed_output *o, const char *id_json, const float *v);
/* Finishes: fixes the NPY header, flushes, renames into place. 0 or -1. */
int embed_output_commit(embed_output *o);
/* Removes temporary files after a failure. */
void embed_output_abort(embed_output *o);

/* Derives "X.ids.txt" from "X.npy" (malloc'd). */
char *embed_ids_path(const char *npy_path);

/* Loads a float32 C-order 2-D .npy file. *data malloc'd [rows][cols]. 0 or -1. */
int embed_npy_load(const char *path, float **data, size_t *rows, size_t *cols);

/* ---- search ------------------------------------------------------------- */

int embed_search_main(int argc, char **argv);

/* ---- model loading (embed_model.c), used by main.c and embed_search.c ---- */

struct llm_model;
/* The default embedding model: a sentence-transformers folder in the models
 * directory (scripts/setup.sh fetches it next to the chat model). */
#define EMBED_DEFAULT_MODEL "all-MiniLM-L6-v2"
/* $LLM_EMBED_MODEL, else ${LLM_MODELS_DIR:-${XDG_CACHE_HOME:-~/.cache}/llm/models}/EMBED_DEFAULT_MODEL. */
void embed_default_model(char *buf, size_t cap);
/* Loads `path` (NULL = the default embedding model), printing a clear
 * message on failure. Returns 0 or -1. */
int embed_load_model(const char *path, const char *backend, int32_t n_threads,
                     struct llm_model **out);

#endif
