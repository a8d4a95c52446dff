/*
 * desc_gguf.c -- model descriptor from a GGUF file: architecture lookup,
 * tensor map straight from the tensor infos (zero-copy), then the
 * architecture's hyper-parameters and its tensor table's validation (every
 * tensor of the file must be one the architecture uses).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch_internal.h"
#include "formats/desc_internal.h"

llm_status llm__desc_from_gguf_handle(llm_gguf *g, const char *path, llm_model_desc **out) {
    *out = NULL;
    const char *s;
    size_t len;
    llm_status st = llm_gguf_get_str(g, "general.architecture", &s, &len);
    if (st) {
        llm_gguf_close(g);
        return llm__models_error(st == LLM_ERR_NOT_FOUND ? LLM_ERR_NOT_FOUND : LLM_ERR_BAD_FORMAT,
                                 "model: %s: no string general.architecture", path);
    }
    char tag[32];
    if (len == 0 || len >= sizeof tag || memchr(s, 0, len)) {
        llm_gguf_close(g);
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: unsupported architecture '%.*s'", path,
                                 (int)(len > 64 ? 64 : len), s);
    }
    memcpy(tag, s, len);
    tag[len] = '\0';
    const llm__arch *arch = llm__arch_find(tag);
    if (!arch) {
        llm_gguf_close(g);
        char names[256];
        llm__arch_names_join(names, sizeof names);
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: unsupported architecture '%s' (supported: %s)",
                                 path, tag, names);
    }
    llm_model_desc *d = llm__desc_new(LLM_MODEL_SOURCE_GGUF, path);
    if (!d) {
        llm_gguf_close(g);
        return llm__models_error(LLM_ERR_NO_MEMORY, "model: out of memory");
    }
    d->gguf = g;
    snprintf(d->arch, sizeof d->arch, "%s", tag);
    d->n_files = 1;
    d->file_paths = calloc(1, sizeof *d->file_paths);
    if (!d->file_paths || !(d->file_paths[0] = llm__strndup(path, strlen(path)))) {
        llm_model_desc_free(d);
        return llm__models_error(LLM_ERR_NO_MEMORY, "model: out of memory");
    }
    for (int64_t i = 0; i < llm_gguf_tensor_count(g) && !st; i++) {
        const llm_gguf_tensor *t = llm_gguf_tensor_at(g, i);
        st = llm__desc_add_tensor(d, t->name, (int)t->type, t->n_dims, t->ne, t->data, t->size, 0, t->offset);
    }
    if (!st) st = llm__desc_finish(d);
    if (!st) st = arch->hparams_gguf(&d->hp, d, g);
    if (!st) st = llm__table_validate(d, arch);
    if (st) {
        llm_model_desc_free(d);
        return st;
    }
    llm__models_clear_error();
    *out = d;
    return LLM_OK;
}

llm_status llm_model_desc_from_gguf(const char *path, llm_model_desc **out) {
    if (out) *out = NULL;
    if (!path || !out) return llm__models_error(LLM_ERR_INVALID_ARG, "model: NULL argument");
    llm_gguf *g;
    llm_status st = llm_gguf_open(path, &g);
    if (st) return llm__models_gguf_error(st);
    return llm__desc_from_gguf_handle(g, path, out);
}
