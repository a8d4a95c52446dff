/*
 * desc_hf.c -- model descriptor from a Hugging Face folder: config.json plus
 * model.safetensors, or model.safetensors.index.json and its shards.
 * Tensors stay zero-copy in the shard mappings; names are mapped to the
 * GGUF-style names through the architecture's tensor table; a tensor the
 * table does not know is an error unless the arch lists it as harmless.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arch/arch_internal.h"
#include "formats/desc_internal.h"

static char *join(const char *dir, const char *name) {
    const size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

static int is_file(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Adds shard `name` (a bare file name inside dir) unless present; returns
 * its index in *idx. */
static llm_status add_shard(llm_model_desc *d, const char *dir, const char *name, uint32_t *idx) {
    if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: shard name '%.64s' is not a plain file name", d->path, name);
    char *path = join(dir, name);
    if (!path) return llm__models_error(LLM_ERR_NO_MEMORY, "model: out of memory");
    for (uint32_t i = 0; i < d->n_files; i++) {
        if (!strcmp(d->file_paths[i], path)) {
            free(path);
            *idx = i;
            return LLM_OK;
        }
    }
    char **fp = realloc(d->file_paths, (d->n_files + 1) * sizeof *fp);
    if (fp) d->file_paths = fp;
    llm_safetensors **sh = fp ? realloc(d->shards, (d->n_files + 1) * sizeof *sh) : NULL;
    if (sh) d->shards = sh;
    if (!fp || !sh) {
        free(path);
        return llm__models_error(LLM_ERR_NO_MEMORY, "model: out of memory");
    }
    llm_safetensors *st = NULL;
    llm_status rc = llm_safetensors_open(path, &st);
    if (rc) {
        free(path);
        return rc;
    }
    d->file_paths[d->n_files] = path;
    d->shards[d->n_files] = st;
    *idx = d->n_files++;
    return LLM_OK;
}

static llm_status map_shard_tensors(llm_model_desc *d, const llm__arch *arch, uint32_t fi) {
    const llm_safetensors *st = d->shards[fi];
    for (int64_t i = 0; i < llm_safetensors_tensor_count(st); i++) {
        const llm_st_tensor *t = llm_safetensors_tensor_at(st, i);
        char name[128];
        const int m = llm__table_map_hf(arch, t->name, name, sizeof name);
        if (m == 0) continue; /* known and not needed (the arch's hf_ignore list) */
        if (m < 0)
            return llm__models_error(LLM_ERR_UNSUPPORTED,
                                     "model: %s: tensor '%.96s' is not used by architecture %s (unknown variant?)",
                                     d->file_paths[fi], t->name, arch->tag);
        if (t->type < 0)
            return llm__models_error(LLM_ERR_UNSUPPORTED, "model: %s: tensor '%.64s' has dtype %s (F32, F16, BF16 supported)",
                                     d->file_paths[fi], t->name, t->dtype);
        if (t->n_dims < 1)
            return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: tensor '%.64s' is a scalar", d->file_paths[fi], t->name);
        llm_status rc = llm__desc_add_tensor(d, name, t->type, t->n_dims, t->ne, t->data, t->size, fi, t->offset);
        if (rc) return rc;
    }
    return LLM_OK;
}

/* Sharded checkpoint: every weight_map entry must name a tensor that is in
 * the shard it points to. */
static llm_status load_index(llm_model_desc *d, const llm__arch *arch, const char *dir, const char *index_path) {
    json_error_t err;
    json_t *idx = json_load_file(index_path, JSON_REJECT_DUPLICATES, &err);
    if (!idx)
        return llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: invalid JSON at byte offset %d: %.120s", index_path,
                                 err.position, err.text);
    llm_status rc = LLM_OK;
    json_t *wm = json_object_get(idx, "weight_map");
    if (!json_is_object(wm)) {
        rc = llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: no \"weight_map\" object", index_path);
        goto done;
    }
    const char *key;
    json_t *v;
    json_object_foreach(wm, key, v) {
        if (!json_is_string(v)) {
            rc = llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: weight_map['%.64s'] is not a string", index_path, key);
            goto done;
        }
        uint32_t fi;
        if ((rc = add_shard(d, dir, json_string_value(v), &fi))) goto done;
        if (!llm_safetensors_find_tensor(d->shards[fi], key)) {
            rc = llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: index puts '%.64s' in %s, which does not hold it",
                                   index_path, key, d->file_paths[fi]);
            goto done;
        }
    }
    for (uint32_t fi = 0; fi < d->n_files && !rc; fi++) rc = map_shard_tensors(d, arch, fi);
done:
    json_decref(idx);
    return rc;
}

llm_status llm_model_desc_from_dir(const char *dir, llm_model_desc **out) {
    if (out) *out = NULL;
    if (!dir || !out) return llm__models_error(LLM_ERR_INVALID_ARG, "model: NULL argument");
    char *cfg_path = join(dir, "config.json");
    if (!cfg_path) return llm__models_error(LLM_ERR_NO_MEMORY, "model: out of memory");
    json_error_t err;
    json_t *cfg = NULL;
    llm_model_desc *d = NULL;
    llm_status rc = LLM_OK;
    if (!is_file(cfg_path)) {
        rc = llm__models_error(LLM_ERR_IO, "model: %s: no config.json in the folder", dir);
        goto done;
    }
    cfg = json_load_file(cfg_path, JSON_REJECT_DUPLICATES, &err);
    if (!cfg || !json_is_object(cfg)) {
        rc = llm__models_error(LLM_ERR_BAD_FORMAT, "model: %s: invalid JSON at byte offset %d: %.120s", cfg_path,
                               cfg ? 0 : err.position, cfg ? "not an object" : err.text);
        goto done;
    }
    json_t *mt = json_object_get(cfg, "model_type");
    const char *model_type = json_is_string(mt) ? json_string_value(mt) : NULL;
    const llm__arch *arch = llm__arch_find_hf(model_type);
    if (!arch) {
        char names[256];
        llm__arch_names_join(names, sizeof names);
        rc = llm__models_error(LLM_ERR_UNSUPPORTED,
                               "model: %s: unsupported architecture (model_type '%.64s'; supported: %s)", cfg_path,
                               model_type ? model_type : "(missing)", names);
        goto done;
    }
    d = llm__desc_new(LLM_MODEL_SOURCE_SAFETENSORS, dir);
    if (!d) {
        rc = llm__models_error(LLM_ERR_NO_MEMORY, "model: out of memory");
        goto done;
    }
    snprintf(d->arch, sizeof d->arch, "%s", arch->tag);
    char *index_path = join(dir, "model.safetensors.index.json");
    if (!index_path) {
        rc = llm__models_error(LLM_ERR_NO_MEMORY, "model: out of memory");
        goto done;
    }
    if (is_file(index_path)) {
        rc = load_index(d, arch, dir, index_path);
    } else {
        uint32_t fi;
        rc = add_shard(d, dir, "model.safetensors", &fi);
        if (!rc) rc = map_shard_tensors(d, arch, fi);
    }
    free(index_path);
    if (!rc) rc = llm__desc_finish(d);
    if (!rc) rc = arch->hparams_hf(&d->hp, d, cfg);
    if (!rc) rc = llm__table_validate(d, arch);
done:
    json_decref(cfg);
    free(cfg_path);
    if (rc) {
        llm_model_desc_free(d);
        return rc;
    }
    llm__models_clear_error();
    *out = d;
    return LLM_OK;
}
