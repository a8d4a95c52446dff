/*
 * arch/registry.c -- the registry of architectures, built from the one list
 * in arch/archs.def: the llm__arch of each family by GGUF tag or Hugging
 * Face model_type, and the tags' list for messages and llm_model_arch_list.
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch_internal.h"

#define LLM_ARCH(tag, name) extern const llm__arch llm__arch_##name;
#include "arch/archs.def"
#undef LLM_ARCH

static const llm__arch *const k_archs[] = {
#define LLM_ARCH(tag, name) &llm__arch_##name,
#include "arch/archs.def"
#undef LLM_ARCH
};
static const char *const k_arch_names[] = {
#define LLM_ARCH(tag, name) tag,
#include "arch/archs.def"
#undef LLM_ARCH
    NULL};

const llm__arch *llm__arch_find(const char *tag) {
    for (size_t i = 0; tag && i < sizeof k_archs / sizeof k_archs[0]; i++)
        if (strcmp(k_archs[i]->tag, tag) == 0) return k_archs[i];
    return NULL;
}

const llm__arch *llm__arch_find_hf(const char *model_type) {
    for (size_t i = 0; model_type && i < sizeof k_archs / sizeof k_archs[0]; i++)
        for (const char *const *t = k_archs[i]->hf_model_types; t && *t; t++)
            if (strcmp(*t, model_type) == 0) return k_archs[i];
    return NULL;
}

const char *const *llm_model_arch_list(void) { return k_arch_names; }

void llm__arch_names_join(char *buf, size_t cap) {
    size_t used = 0;
    if (cap) buf[0] = '\0';
    for (size_t i = 0; k_arch_names[i] && used + 1 < cap; i++) {
        int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", k_arch_names[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
}

int llm_net_supports_arch(const char *arch) { return llm__arch_find(arch) != NULL; }

int llm_net_arch_is_encoder(const char *arch) {
    const llm__arch *a = llm__arch_find(arch);
    return a && a->encoder;
}
