/* The model's tokenizer and chat template, from GGUF metadata
 * (tokenizer.ggml.*, tokenizer.chat_template) or from a Hugging Face folder
 * (tokenizer.json, tokenizer_config.json). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine_error.h"
#include "engine_tok.h"

static char *dup_n(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) {
        if (n) memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static char *path_join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p) snprintf(p, a + b + 2, "%s/%s", dir, name);
    return p;
}


llm_status llm__tokenizer_load(const llm_model_desc *d, llm_tokenizer **out, char *err, size_t cap) {
    *out = NULL;
    const llm_gguf *g = llm_model_desc_gguf(d);
    if (g) {
        llm_status st = llm_tokenizer_from_gguf(g, out);
        if (st != LLM_OK) snprintf(err, cap, "%s", llm_tokenizer_last_error());
        return st;
    }
    char *p = path_join(llm_model_desc_path(d), "tokenizer.json");
    if (!p) {
        snprintf(err, cap, "out of memory");
        return LLM_ERR_NO_MEMORY;
    }
    llm_status st = llm_tokenizer_from_hf_json_file(p, out);
    if (st != LLM_OK) snprintf(err, cap, "%s: %s", p, llm_tokenizer_last_error());
    free(p);
    return st;
}

char *llm__gguf_chat_template(const llm_gguf *g) {
    const char *s;
    size_t n;
    if (llm_gguf_get_str(g, "tokenizer.chat_template", &s, &n) == LLM_OK) return dup_n(s, n);
    return dup_n("", 0);
}

char *llm__chat_template_string(const llm_model_desc *d) {
    const llm_gguf *g = llm_model_desc_gguf(d);
    if (g) return llm__gguf_chat_template(g);
    return llm__hf_chat_template(llm_model_desc_path(d));
}

char *llm__hf_chat_template(const char *dir) {
    char *p = path_join(dir, "tokenizer_config.json");
    char *res = NULL;
    if (p) {
        json_error_t je;
        json_t *j = json_load_file(p, 0, &je);
        json_t *t = j ? json_object_get(j, "chat_template") : NULL;
        if (t && json_is_string(t)) res = dup_n(json_string_value(t), json_string_length(t));
        json_decref(j);
        free(p);
    }
    return res ? res : dup_n("", 0);
}
