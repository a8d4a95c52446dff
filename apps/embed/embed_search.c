/* llm-embed search: rank the rows of a saved .npy index by cosine similarity
 * to a query embedded with the same model. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "llama/engine.h"
#include "llama/engine_embed.h"

typedef struct hit {
    double score;
    size_t row;
} hit;

static int by_score_desc(const void *a, const void *b) {
    const hit *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? 1 : -1;
    return x->row < y->row ? -1 : (x->row > y->row);
}

/* Reads ids (one per line) into a malloc'd array of n strings. */
static char **load_ids(const char *path, size_t n) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "llm-embed: cannot open the ids file %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char **ids = calloc(n ? n : 1, sizeof *ids);
    char *line = NULL;
    size_t cap = 0, i = 0;
    ssize_t len;
    while (ids && i < n && (len = getline(&line, &cap, f)) >= 0) {
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        ids[i++] = strdup(line);
    }
    free(line);
    fclose(f);
    if (ids && i != n) {
        fprintf(stderr, "llm-embed: %s has %zu ids but the index has %zu rows\n", path, i, n);
        for (size_t k = 0; k < i; k++) free(ids[k]);
        free(ids);
        return NULL;
    }
    return ids;
}

int embed_search_main(int argc, char **argv) {
    const char *index = NULL, *query = NULL, *model_path = NULL, *backend = "auto";
    int32_t k = 5, threads = 0;
    llm_pooling pooling = LLM_POOLING_MODEL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("usage: llm-embed search --index X.npy --query TEXT [-k N] [-m MODEL]\n"
                   "       [--pooling model|mean|cls|last|max|mean_sqrt_len] [-t N] [--backend NAME]\n"
                   "Prints the k rows most similar to the query as 'score<TAB>id' lines,\n"
                   "best first (cosine similarity). See llm-embed --help.\n");
            return app_finish_stdout("llm-embed");
        }
        if (!v) {
            fprintf(stderr, "llm-embed search: option %s needs a value (or is unknown)\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--index")) index = v;
        else if (!strcmp(a, "--query")) query = v;
        else if (!strcmp(a, "-m") || !strcmp(a, "--model")) model_path = v;
        else if (!strcmp(a, "--backend")) backend = v;
        else if (!strcmp(a, "--pooling")) {
            if (llm_pooling_from_string(v, &pooling) != LLM_OK) {
                fprintf(stderr, "llm-embed: %s\n", llm_last_error());
                return 2;
            }
        } else if (!strcmp(a, "-k")) {
            if (app_parse_i32("llm-embed search", a, v, 0, 1000000, &k)) return 2;
        } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
            if (app_parse_threads("llm-embed search", a, v, &threads)) return 2;
        } else {
            fprintf(stderr, "llm-embed search: unknown option '%s' (try --help)\n", a);
            return 2;
        }
    }
    if (!index || !query) {
        fprintf(stderr, "llm-embed search: --index and --query are required (try --help)\n");
        return 2;
    }
    if (!*query) {
        fprintf(stderr, "llm-embed search: the query is empty\n");
        return 2;
    }
    float *mat = NULL;
    size_t rows, cols;
    if (embed_npy_load(index, &mat, &rows, &cols)) return 1;
    char *ids_path = embed_ids_path(index);
    char **ids = ids_path ? load_ids(ids_path, rows) : NULL;
    free(ids_path);
    if (!ids) {
        free(mat);
        return 1;
    }
    int rc = 1;
    llm_model *m = NULL;
    float *q = NULL;
    hit *hits = NULL;
    if (embed_load_model(model_path, backend, threads, &m)) goto out;
    llm_model_info info;
    llm_model_get_info(m, &info);
    if ((size_t)info.n_embd != cols) {
        fprintf(stderr, "llm-embed: the index has dim %zu but the model gives %d: wrong model?\n",
                cols, info.n_embd);
        goto out;
    }
    q = malloc(cols * sizeof *q);
    hits = malloc((rows ? rows : 1) * sizeof *hits);
    if (!q || !hits) goto out;
    const char *texts[1] = {query};
    if (llm_embed(m, texts, 1, pooling, true, q, cols) != LLM_OK) {
        fprintf(stderr, "llm-embed: cannot embed the query: %s\n", llm_last_error());
        goto out;
    }
    for (size_t r = 0; r < rows; r++) {
        const float *v = mat + r * cols;
        double dot = 0, nv = 0;
        for (size_t c = 0; c < cols; c++) {
            dot += (double)v[c] * (double)q[c];
            nv += (double)v[c] * (double)v[c];
        }
        hits[r].score = nv > 0 ? dot / sqrt(nv) : 0; /* q has unit norm */
        hits[r].row = r;
    }
    qsort(hits, rows, sizeof *hits, by_score_desc);
    for (size_t i = 0; i < rows && i < (size_t)k; i++)
        printf("%.6f\t%s\n", hits[i].score, ids[hits[i].row]);
    rc = app_finish_stdout("llm-embed");
out:
    for (size_t r = 0; r < rows; r++) free(ids[r]);
    free(ids);
    free(mat);
    free(q);
    free(hits);
    llm_model_free(m);
    return rc;
}
