/* llm-embed: loading the model, shared by the embedding run (main.c) and
 * search mode (embed_search.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "embed.h"
#include "llama/engine.h"

void embed_default_model(char *buf, size_t cap) {
    const char *m = getenv("LLM_EMBED_MODEL"), *dir = getenv("LLM_MODELS_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (m && *m) snprintf(buf, cap, "%s", m);
    else if (dir && *dir) snprintf(buf, cap, "%s/%s", dir, EMBED_DEFAULT_MODEL);
    else if (xdg && *xdg) snprintf(buf, cap, "%s/llm/models/%s", xdg, EMBED_DEFAULT_MODEL);
    else snprintf(buf, cap, "%s/.cache/llm/models/%s", home ? home : ".", EMBED_DEFAULT_MODEL);
}

int embed_load_model(const char *path, const char *backend, int32_t n_threads, llm_model **out) {
    char def[4096];
    bool is_default = path == NULL;
    if (!path) {
        embed_default_model(def, sizeof def);
        path = def;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        if (is_default)
            fprintf(stderr,
                    "llm-embed: the default embedding model is missing: %s\n"
                    "  Get it with:   scripts/setup.sh   (or scripts/fetch-model.sh all-minilm-l6-v2),\n"
                    "  or point -m / $LLM_EMBED_MODEL at a model.\n", path);
        else
            fprintf(stderr, "llm-embed: model not found: %s\n", path);
        return -1;
    }
    llm_model_params mp = llm_model_default_params();
    mp.backend = backend;
    mp.n_threads = n_threads;
    if (llm_load_model(path, &mp, out) != LLM_OK) {
        fprintf(stderr, "llm-embed: cannot load %s: %s\n", path, llm_last_error());
        return -1;
    }
    llm_model_info info;
    llm_model_get_info(*out, &info);
    fprintf(stderr, "model: %s (%s, %s), dim %d, backend %s, %d threads\n", info.name,
            info.architecture, info.weight_type, info.n_embd, info.backend, info.n_threads);
    return 0;
}
