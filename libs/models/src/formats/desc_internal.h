/*
 * desc_internal.h -- PRIVATE: the model descriptor's layout and its building
 * blocks (desc.c). The builders (desc_gguf.c, desc_hf.c) sit above desc.c and
 * the architecture registry (arch/arch_internal.h); desc_load.c picks one.
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

/* Descriptor building blocks (desc.c). */
llm_model_desc *llm__desc_new(llm_model_source src, const char *path);
/* Appends a tensor (copies name). Rejects duplicate names with
 * LLM_ERR_BAD_FORMAT and types llm cannot compute with (UNSUPPORTED, by
 * name). */
llm_status llm__desc_add_tensor(llm_model_desc *d, const char *name, int type, uint32_t n_dims,
                                const int64_t ne[4], const void *data, uint64_t size, uint32_t file_index,
                                uint64_t file_offset);
/* Lets the system drop the resident pages of t's bytes when its file is
 * mapped (llm__mapped_release): for weights the backend keeps a copy of. */
void llm__desc_release_tensor(const llm_model_desc *d, const llm_model_tensor *t);
/* Builds the name index once all tensors are added. */
llm_status llm__desc_finish(llm_model_desc *d);

#endif
