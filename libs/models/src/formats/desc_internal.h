/*
 * desc_internal.h -- PRIVATE: the model descriptor's layout and the
 * architecture registry interface. One architecture = one arch_<tag>.c file
 * defining an llm__arch and one line in arch_registry.c.
 */
#ifndef LLM_MODELS_DESC_INTERNAL_H
#define LLM_MODELS_DESC_INTERNAL_H

#include <jansson.h>

#include "formats/formats_internal.h"

struct llm_model_desc {
    llm_model_source source;
    char *path;
    char arch[32];
    llm_model_hparams hp;
    llm_gguf *gguf;                 /* GGUF source: owned */
    uint32_t n_files;
    char **file_paths;              /* [n_files] */
    llm_safetensors **shards;       /* [n_files] SafeTensors source: owned */
    int64_t n_tensors, cap_tensors;
    llm_model_tensor *tensors;      /* [n_tensors]; names malloc'ed */
    llm__strmap names;
};

/* What an architecture contributes. */
typedef struct llm__arch {
    const char *tag;                /* "llama": general.architecture and key prefix */
    const char *const *hf_model_types; /* config.json "model_type" values, NULL-terminated */
    /* Hyper-parameters from GGUF metadata (<tag>.* keys). d->tensors is
     * already filled (n_vocab comes from token_embd). */
    llm_status (*hparams_from_gguf)(llm_model_desc *d, const llm_gguf *g);
    /* Hyper-parameters from a parsed config.json. */
    llm_status (*hparams_from_hf)(llm_model_desc *d, json_t *cfg);
    /* Maps a Hugging Face tensor name to the GGUF-style name in out[cap].
     * Returns 1 if mapped, 0 if the tensor is not used (skipped). */
    int (*map_hf_name)(const char *hf, char *out, size_t cap);
    /* Checks that every needed tensor exists with the right shape. */
    llm_status (*validate)(const llm_model_desc *d);
} llm__arch;

/* The registered architectures (arch_<tag>.c). */
extern const llm__arch llm__arch_llama;

/* The architecture with this tag, or NULL. */
const llm__arch *llm__arch_find(const char *tag);
/* The architecture whose hf_model_types contains model_type, or NULL. */
const llm__arch *llm__arch_find_hf(const char *model_type);

/* Descriptor building blocks (desc.c). */
llm_model_desc *llm__desc_new(llm_model_source src, const char *path);
/* Appends a tensor (copies name). Rejects duplicate names with
 * LLM_ERR_BAD_FORMAT and types llm cannot compute with (UNSUPPORTED, by
 * name). */
llm_status llm__desc_add_tensor(llm_model_desc *d, const char *name, int type, uint32_t n_dims,
                                const int64_t ne[4], const void *data, uint64_t size, uint32_t file_index,
                                uint64_t file_offset);
/* Builds the name index once all tensors are added. */
llm_status llm__desc_finish(llm_model_desc *d);

/* Validation helper: tensor `name` must exist (unless optional) with exactly
 * these dims (n_dims given; trailing dims 1). Returns LLM_OK,
 * LLM_ERR_NOT_FOUND or LLM_ERR_BAD_FORMAT with a message naming it. */
llm_status llm__desc_expect(const llm_model_desc *d, const char *name, int optional, uint32_t n_dims,
                            int64_t ne0, int64_t ne1);

#endif
