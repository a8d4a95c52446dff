/*
 * arch/registry.c -- the architectures llm can describe and run, one line
 * each. Adding one (qwen2, qwen3, gemma3, phi3, bert) = one arch/<tag>.c
 * defining its llm__arch + one line here + one line in arch.cmake.
 */
#include <stdio.h>
#include <string.h>

#include "arch/arch_internal.h"

extern const llm__arch llm__arch_llama;
extern const llm__arch llm__arch_qwen2;
extern const llm__arch llm__arch_qwen3;
extern const llm__arch llm__arch_gemma3;
extern const llm__arch llm__arch_phi3;
extern const llm__arch llm__arch_bert;
extern const llm__arch llm__arch_nomic_bert;
extern const llm__arch llm__arch_qwen35;
extern const llm__arch llm__arch_qwen3moe;

static const llm__arch *const k_archs[] = {
    &llm__arch_llama,
    &llm__arch_qwen2,
    &llm__arch_qwen3,
    &llm__arch_gemma3,
    &llm__arch_phi3,
    &llm__arch_bert,
    &llm__arch_nomic_bert,
    &llm__arch_qwen35,
    &llm__arch_qwen3moe,
};
static const char *const k_arch_names[] = {"llama", "qwen2", "qwen3", "gemma3", "phi3", "bert", "nomic-bert", "qwen35", "qwen3moe", NULL}; /* the tags above, in order */
_Static_assert(sizeof k_arch_names / sizeof k_arch_names[0] == sizeof k_archs / sizeof k_archs[0] + 1,
               "k_arch_names must list every registered architecture");

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
