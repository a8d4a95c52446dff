/*
 * desc.c -- the model descriptor: construction helpers, the tensor map and
 * the public accessors. It calls nothing above it: the format-specific
 * builders (desc_gguf.c, desc_hf.c) use it, per-architecture knowledge is in
 * arch/<tag>.c, and desc_load.c chooses a builder for a path.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/desc_internal.h"

static const char *desc_name(const void *ctx, int64_t id) {
    return ((const llm_model_desc *)ctx)->tensors[id].name;
}

llm_model_desc *llm__desc_new(llm_model_source src, const char *path) {
    llm_model_desc *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->source = src;
    d->path = llm__strndup(path, strlen(path));
    if (!d->path) {
        free(d);
        return NULL;
    }
    llm_model_hparams *hp = &d->hp;
    hp->bos_id = hp->eos_id = hp->pad_id = hp->unk_id = -1;
    hp->rope_scaling_factor = 1.0f;
    hp->rope_attn_factor = 1.0f;
    hp->rope_freq_base = 10000.0f;
    hp->pooling_type = -1;
    return d;
}

llm_status llm__desc_add_tensor(llm_model_desc *d, const char *name, int type, uint32_t n_dims,
                                const int64_t ne[4], const void *data, uint64_t size, uint32_t file_index,
                                uint64_t file_offset) {
    if (!llm_dtype_is_known(type) || type == LLM_DTYPE_Q8_1 || type == LLM_DTYPE_Q8_K) {
        const char *tn = llm_gguf_tensor_type_name((uint32_t)type);
        return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: tensor '%.64s' has weight type %s, which llm does not support",
                                 d->path, name, tn ? tn : "(unknown)");
    }
    if (d->n_tensors == d->cap_tensors) {
        const int64_t cap = d->cap_tensors ? d->cap_tensors * 2 : 64;
        llm_model_tensor *t = realloc(d->tensors, (size_t)cap * sizeof *t);
        if (!t) return llm__models_error(LLM_ERR_NO_MEMORY, "model: out of memory");
        d->tensors = t;
        d->cap_tensors = cap;
    }
    llm_model_tensor *t = &d->tensors[d->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = llm__strndup(name, strlen(name));
    if (!t->name) return llm__models_error(LLM_ERR_NO_MEMORY, "model: out of memory");
    d->n_tensors++;
    t->type = (llm_dtype)type;
    t->n_dims = n_dims;
    memcpy(t->ne, ne, sizeof t->ne);
    t->data = data;
    t->size = size;
    t->file_index = file_index;
    t->file_offset = file_offset;
    return LLM_OK;
}

llm_status llm__desc_finish(llm_model_desc *d) {
    llm_status st = llm__strmap_init(&d->names, (uint64_t)d->n_tensors, desc_name, d);
    if (st) return llm__models_error(st, "model: out of memory");
    for (int64_t i = 0; i < d->n_tensors; i++) {
        const int64_t prev = llm__strmap_insert(&d->names, i);
        if (prev >= 0)
            return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: tensor name '%.64s' appears twice", d->path,
                                     d->tensors[i].name);
    }
    return LLM_OK;
}

void llm_model_desc_free(llm_model_desc *d) {
    if (!d) return;
    for (int64_t i = 0; i < d->n_tensors; i++) free((char *)d->tensors[i].name);
    free(d->tensors);
    llm__strmap_free(&d->names);
    llm_gguf_close(d->gguf);
    for (uint32_t i = 0; i < d->n_files; i++) {
        if (d->shards) llm_safetensors_close(d->shards[i]);
        if (d->file_paths) free(d->file_paths[i]);
    }
    free(d->shards);
    free(d->file_paths);
    free(d->path);
    free(d);
}

llm_model_source llm_model_desc_source(const llm_model_desc *d) { return d->source; }
const char *llm_model_desc_arch(const llm_model_desc *d) { return d ? d->arch : NULL; }
const llm_model_hparams *llm_model_desc_hparams(const llm_model_desc *d) { return d ? &d->hp : NULL; }
const llm_gguf *llm_model_desc_gguf(const llm_model_desc *d) { return d ? d->gguf : NULL; }
const char *llm_model_desc_path(const llm_model_desc *d) { return d ? d->path : NULL; }
uint32_t llm_model_desc_file_count(const llm_model_desc *d) { return d ? d->n_files : 0; }
int64_t llm_model_desc_tensor_count(const llm_model_desc *d) { return d ? d->n_tensors : 0; }

const char *llm_model_desc_file_path(const llm_model_desc *d, uint32_t i) {
    return d && i < d->n_files ? d->file_paths[i] : NULL;
}

const llm_model_tensor *llm_model_desc_tensor_at(const llm_model_desc *d, int64_t i) {
    return d && i >= 0 && i < d->n_tensors ? &d->tensors[i] : NULL;
}

const llm_model_tensor *llm_model_desc_find_tensor(const llm_model_desc *d, const char *name) {
    if (!d || !name) return NULL;
    const int64_t i = llm__strmap_find(&d->names, name);
    return i >= 0 ? &d->tensors[i] : NULL;
}

const llm_model_tensor *llm_model_desc_find_tensorf(const llm_model_desc *d, const char *fmt, ...) {
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof name) return NULL;
    return llm_model_desc_find_tensor(d, name);
}

void llm__desc_release_tensor(const llm_model_desc *d, const llm_model_tensor *t) {
    if (!d || !t) return;
    if (d->gguf) {
        llm_gguf_release_pages(d->gguf, t->data, (size_t)t->size);
        return;
    }
    const llm__mapped *m = d->shards && t->file_index < d->n_files ? llm__st_mapping(d->shards[t->file_index]) : NULL;
    if (m) llm__mapped_release(m, t->data, (size_t)t->size);
}
