/*
 * arch_registry.c -- the architectures llm can describe. Adding one (qwen2,
 * qwen3, gemma3, bert) = one arch_<tag>.c defining its llm__arch + one line
 * here + one line in formats.cmake.
 */
#include <string.h>

#include "formats/desc_internal.h"

static const llm__arch *const k_archs[] = {&llm__arch_llama};
static const char *const k_arch_names[] = {"llama", NULL};

const llm__arch *llm__arch_find(const char *tag) {
    for (size_t i = 0; i < sizeof k_archs / sizeof k_archs[0]; i++)
        if (tag && strcmp(k_archs[i]->tag, tag) == 0) return k_archs[i];
    return NULL;
}

const llm__arch *llm__arch_find_hf(const char *model_type) {
    for (size_t i = 0; i < sizeof k_archs / sizeof k_archs[0]; i++)
        for (const char *const *t = k_archs[i]->hf_model_types; t && *t; t++)
            if (model_type && strcmp(*t, model_type) == 0) return k_archs[i];
    return NULL;
}

const char *const *llm_model_arch_list(void) {
    return k_arch_names;
}
