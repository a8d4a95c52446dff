/*
 * desc_load.c -- llm_model_desc_load: a folder is a Hugging Face checkpoint
 * (desc_hf.c), anything else a GGUF file (desc_gguf.c). Kept apart so that
 * desc.c, which both builders use, calls neither of them.
 */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>

#include "formats/desc_internal.h"

llm_status llm_model_desc_load(const char *path, llm_model_desc **out) {
    if (out) *out = NULL;
    if (!path || !out) return llm__models_error(LLM_ERR_INVALID_ARG, "model: NULL argument");
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) return llm_model_desc_from_dir(path, out);
    return llm_model_desc_from_gguf(path, out);
}

