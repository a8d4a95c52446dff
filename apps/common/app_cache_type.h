/* --cache-type-k / --cache-type-v (-ctk / -ctv), llama.cpp's spellings, for
 * the programs that load a model for generation (llm-chat, llm-perplexity,
 * llm-bench, llm-server). Header-only: app_common links only libc, these
 * programs link the engine. */
#ifndef LLM_APP_CACHE_TYPE_H
#define LLM_APP_CACHE_TYPE_H

#include <stdio.h>
#include <string.h>

#include "llama/engine.h"

#define APP_CACHE_TYPE_HELP                                                                        \
    "  -ctk, --cache-type-k T  K cache type: f16 (default), f32, bf16, q8_0, q4_0, q4_1,\n"        \
    "                          q5_0, q5_1 (llama.cpp's; quantized: head_dim a multiple of 32)\n"    \
    "  -ctv, --cache-type-v T  V cache type, the same choices\n"

/* 1 if opt is one of the cache-type options, with *is_v set for V. */
static inline int app_is_cache_type_opt(const char *opt, int *is_v) {
    if (!strcmp(opt, "-ctk") || !strcmp(opt, "--cache-type-k")) {
        *is_v = 0;
        return 1;
    }
    if (!strcmp(opt, "-ctv") || !strcmp(opt, "--cache-type-v")) {
        *is_v = 1;
        return 1;
    }
    return 0;
}

/* Parses a cache type name into *out. 0, or -1 after printing
 * "PROG: OPT expects ..., got 'S'". */
static inline int app_parse_cache_type(const char *prog, const char *opt, const char *s, llm_kv_type *out) {
    if (s && llm_kv_type_from_name(s, out) == LLM_OK) return 0;
    fprintf(stderr, "%s: %s expects f16, f32, bf16, q8_0, q4_0, q4_1, q5_0 or q5_1, got '%s'\n", prog, opt,
            s ? s : "");
    return -1;
}

#endif
