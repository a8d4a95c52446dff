/* tok_gguf.c -- GGUF tokenizer.ggml.* metadata -> llm_vocab_spec -> llm_tokenizer
 * (llm_tokenizer_from_gguf; the file and buffer forms are in tok_load.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/gguf.h"
#include "llama/tokenizer.h"
#include "tok_internal.h"


/* An optional token id key: absent leaves *id unchanged. */
static llm_status get_id(const llm_gguf *g, const char *key, llm_token *id) {
    uint32_t v;
    llm_status st = llm_gguf_get_u32(g, key, &v);
    if (st == LLM_ERR_NOT_FOUND) return LLM_OK;
    if (st != LLM_OK) return llm__tok_err(st, "%s: %s", key, llm_gguf_last_error());
    *id = v > (uint32_t)INT32_MAX ? LLM_TOKEN_NULL : (llm_token)v;
    return LLM_OK;
}

/* Copy of a string key into buf, lowercased if asked (empty when absent). */
static void key_copy(const llm_gguf *g, const char *key, int lower, char *buf, size_t cap) {
    const char *s;
    size_t len;
    buf[0] = '\0';
    if (llm_gguf_get_str(g, key, &s, &len) != LLM_OK) return;
    if (len >= cap) len = cap - 1;
    for (size_t i = 0; i < len; i++) buf[i] = (char)(lower && s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
    buf[len] = '\0';
}

/* llama.cpp's per-model token attributes (llama_vocab::load, chosen by name):
 *   - tokenizer.ggml.pre containing jina-v2-de/-es/-code, or
 *     general.architecture containing nomic-bert-moe or jina-bert-v3: LSTRIP
 *     on "<mask>";
 *   - else general.name containing "phi-3" or "phi3" (any case): RSTRIP on
 *     every special token (control, user-defined, unknown) and on "</s>",
 *     but not on "<unk>", "<s>", "<|endoftext|>": "<|user|>\nHi" tokenizes
 *     as "<|user|>", "▁Hi";
 *   - else general.name containing "modern-bert": LSTRIP on "[MASK]".
 * Returns a new [n] array for llm_vocab_spec.strip, or NULL (none, or out of
 * memory: *oom set). */
static unsigned char *llamacpp_strip(const llm_gguf *g, char *const *tokens, const int32_t *types, int32_t n,
                                     int *oom) {
    char name[256], pre[256], arch[256];
    *oom = 0;
    key_copy(g, "general.name", 1, name, sizeof name); /* llama.cpp lowercases only the name */
    key_copy(g, "tokenizer.ggml.pre", 0, pre, sizeof pre);
    key_copy(g, "general.architecture", 0, arch, sizeof arch);
    int mask = strstr(pre, "jina-v2-de") || strstr(pre, "jina-v2-es") || strstr(pre, "jina-v2-code") ||
               strstr(arch, "nomic-bert-moe") || strstr(arch, "jina-bert-v3");
    int phi3 = !mask && (strstr(name, "phi-3") || strstr(name, "phi3"));
    int mbert = !mask && !phi3 && strstr(name, "modern-bert");
    if (!mask && !phi3 && !mbert) return NULL;
    unsigned char *strip = calloc((size_t)n, 1);
    if (!strip) {
        *oom = 1;
        return NULL;
    }
    for (int32_t i = 0; i < n; i++) {
        if (mask && strcmp(tokens[i], "<mask>") == 0) strip[i] = LLM_TOKEN_LSTRIP;
        if (mbert && strcmp(tokens[i], "[MASK]") == 0) strip[i] = LLM_TOKEN_LSTRIP;
        if (!phi3) continue;
        const int32_t ty = types ? types[i] : LLM_TOKEN_TYPE_NORMAL;
        if (ty == LLM_TOKEN_TYPE_CONTROL || ty == LLM_TOKEN_TYPE_USER_DEFINED || ty == LLM_TOKEN_TYPE_UNKNOWN ||
            strcmp(tokens[i], "</s>") == 0)
            strip[i] = LLM_TOKEN_RSTRIP;
        if (!strcmp(tokens[i], "<unk>") || !strcmp(tokens[i], "<s>") || !strcmp(tokens[i], "<|endoftext|>"))
            strip[i] = 0;
    }
    return strip;
}

static llm_status get_flag(const llm_gguf *g, const char *key, int *flag) {
    int v;
    llm_status st = llm_gguf_get_bool(g, key, &v);
    if (st == LLM_ERR_NOT_FOUND) return LLM_OK;
    if (st != LLM_OK) return llm__tok_err(st, "%s: %s", key, llm_gguf_last_error());
    *flag = v ? 1 : 0;
    return LLM_OK;
}

/* Copies of a string array's elements, NUL-terminated; strings[i] point into one block. */
static llm_status copy_strings(const llm_gguf_value *arr, const char *key, char ***out_ptrs, char **out_blob) {
    size_t total = 0;
    uint64_t n = arr->count;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        if (llm_gguf_array_string(arr, i, &s, &len) != LLM_OK)
            return llm__tok_err(LLM_ERR_BAD_FORMAT, "%s: element %llu is not a string", key, (unsigned long long)i);
        total += len + 1;
    }
    char **ptrs = malloc((size_t)(n ? n : 1) * sizeof *ptrs);
    char *blob = malloc(total ? total : 1);
    if (!ptrs || !blob) {
        free(ptrs);
        free(blob);
        return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    }
    size_t off = 0;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        llm_gguf_array_string(arr, i, &s, &len);
        memcpy(blob + off, s, len);
        blob[off + len] = '\0';
        ptrs[i] = blob + off;
        off += len + 1;
    }
    *out_ptrs = ptrs;
    *out_blob = blob;
    return LLM_OK;
}

llm_status llm_tokenizer_from_gguf(const llm_gguf *g, llm_tokenizer **out) {
    if (!out) return llm__tok_err(LLM_ERR_INVALID_ARG, "out is NULL");
    *out = NULL;
    if (!g) return llm__tok_err(LLM_ERR_INVALID_ARG, "gguf handle is NULL");

    const char *model;
    size_t model_len;
    llm_status st = llm_gguf_get_str(g, "tokenizer.ggml.model", &model, &model_len);
    if (st == LLM_ERR_NOT_FOUND) return llm__tok_err(st, "GGUF has no tokenizer.ggml.model");
    if (st != LLM_OK) return llm__tok_err(st, "tokenizer.ggml.model: %s", llm_gguf_last_error());

    llm_vocab_spec spec;
    llm_vocab_spec_init(&spec);
    if (model_len == 4 && memcmp(model, "gpt2", 4) == 0) {
        spec.type = LLM_TOKENIZER_BPE;
    } else if (model_len == 5 && memcmp(model, "llama", 5) == 0) {
        spec.type = LLM_TOKENIZER_SPM;
    } else if (model_len == 4 && memcmp(model, "bert", 4) == 0) {
        spec.type = LLM_TOKENIZER_WPM;
        spec.wpm_phantom_space = 1;
    } else if (model_len == 6 && memcmp(model, "gemma4", 6) == 0) {
        spec.type = LLM_TOKENIZER_HF_BPE; /* SPM-style BPE; the tokenizer reads pre "gemma4" */
    } else if (model_len == 2 && memcmp(model, "t5", 2) == 0) {
        spec.type = LLM_TOKENIZER_UGM; /* SentencePiece Unigram (T5, XLM-RoBERTa) */
    } else {
        return llm__tok_err(LLM_ERR_UNSUPPORTED, "unsupported tokenizer model \"%.*s\"", (int)model_len, model);
    }

    llm_gguf_value toks, arr;
    st = llm_gguf_get_array(g, "tokenizer.ggml.tokens", &toks);
    if (st != LLM_OK) return llm__tok_err(st, "tokenizer.ggml.tokens: %s", llm_gguf_last_error());
    if (toks.count == 0 || toks.count > (uint64_t)INT32_MAX)
        return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.ggml.tokens: bad size %llu", (unsigned long long)toks.count);
    int32_t n = (int32_t)toks.count;

    char **tokens = NULL, *tok_blob = NULL, **merges = NULL, *merge_blob = NULL;
    float *scores = NULL;
    int32_t *types = NULL;
    unsigned char *strip = NULL;
    char pre[64] = "default";
    if ((st = copy_strings(&toks, "tokenizer.ggml.tokens", &tokens, &tok_blob)) != LLM_OK) goto done;
    spec.tokens = (const char *const *)tokens;
    spec.n_tokens = n;

    if (llm_gguf_get_array(g, "tokenizer.ggml.scores", &arr) == LLM_OK) {
        if (arr.count != (uint64_t)n) {
            st = llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.ggml.scores has %llu entries for %d tokens",
                      (unsigned long long)arr.count, (int)n);
            goto done;
        }
        scores = malloc((size_t)n * sizeof *scores);
        if (!scores) {
            st = llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
            goto done;
        }
        if ((st = llm_gguf_array_f32(&arr, 0, (uint64_t)n, scores)) != LLM_OK) {
            st = llm__tok_err(st, "tokenizer.ggml.scores: %s", llm_gguf_last_error());
            goto done;
        }
        spec.scores = scores;
    }
    if (llm_gguf_get_array(g, "tokenizer.ggml.token_type", &arr) == LLM_OK) {
        if (arr.count != (uint64_t)n) {
            st = llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.ggml.token_type has %llu entries for %d tokens",
                      (unsigned long long)arr.count, (int)n);
            goto done;
        }
        types = malloc((size_t)n * sizeof *types);
        if (!types) {
            st = llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
            goto done;
        }
        if ((st = llm_gguf_array_i32(&arr, 0, (uint64_t)n, types)) != LLM_OK) {
            st = llm__tok_err(st, "tokenizer.ggml.token_type: %s", llm_gguf_last_error());
            goto done;
        }
        spec.token_types = types;
    }
    if (llm_gguf_get_array(g, "tokenizer.ggml.merges", &arr) == LLM_OK) {
        if (arr.count > (uint64_t)INT32_MAX) {
            st = llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.ggml.merges: too many");
            goto done;
        }
        if ((st = copy_strings(&arr, "tokenizer.ggml.merges", &merges, &merge_blob)) != LLM_OK) goto done;
        spec.merges = (const char *const *)merges;
        spec.n_merges = (int32_t)arr.count;
    }
    const char *s;
    size_t len;
    if (llm_gguf_get_str(g, "tokenizer.ggml.pre", &s, &len) == LLM_OK) {
        if (len >= sizeof pre) len = sizeof pre - 1;
        memcpy(pre, s, len);
        pre[len] = '\0';
    }
    if (spec.type == LLM_TOKENIZER_HF_BPE) strcpy(pre, "gemma4"); /* as llama.cpp: a gemma4 model is pre "gemma4" */
    spec.pre = pre;

    if ((st = get_id(g, "tokenizer.ggml.bos_token_id", &spec.bos)) || (st = get_id(g, "tokenizer.ggml.eos_token_id", &spec.eos)) ||
        (st = get_id(g, "tokenizer.ggml.eot_token_id", &spec.eot)) || (st = get_id(g, "tokenizer.ggml.eom_token_id", &spec.eom)) ||
        (st = get_id(g, "tokenizer.ggml.unknown_token_id", &spec.unk)) ||
        (st = get_id(g, "tokenizer.ggml.padding_token_id", &spec.pad)) ||
        (st = get_id(g, "tokenizer.ggml.seperator_token_id", &spec.sep)) ||
        (st = get_id(g, "tokenizer.ggml.cls_token_id", &spec.cls)) ||
        (st = get_id(g, "tokenizer.ggml.mask_token_id", &spec.mask)))
        goto done;
    llm_token *ids[] = {&spec.bos, &spec.eos, &spec.eot, &spec.eom, &spec.unk, &spec.pad, &spec.sep, &spec.cls, &spec.mask};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (*ids[i] >= n) *ids[i] = LLM_TOKEN_NULL; /* llama.cpp ignores out-of-range ids too */
    if ((st = get_flag(g, "tokenizer.ggml.add_bos_token", &spec.add_bos)) ||
        (st = get_flag(g, "tokenizer.ggml.add_eos_token", &spec.add_eos)) ||
        (st = get_flag(g, "tokenizer.ggml.add_space_prefix", &spec.add_space_prefix)))
        goto done;
    if (spec.type == LLM_TOKENIZER_UGM) {
        if ((st = get_flag(g, "tokenizer.ggml.remove_extra_whitespaces", &spec.remove_extra_whitespaces))) goto done;
        if (llm_gguf_get_array(g, "tokenizer.ggml.precompiled_charsmap", &arr) == LLM_OK) {
            if (arr.elem_type != LLM_GGUF_UINT8 && arr.elem_type != LLM_GGUF_INT8) {
                st = llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.ggml.precompiled_charsmap: %s elements, not bytes",
                          llm_gguf_type_name(arr.elem_type));
                goto done;
            }
            spec.precompiled_charsmap = arr.data; /* copied by llm_tokenizer_create */
            spec.precompiled_charsmap_len = (size_t)arr.count;
        }
    }
    if (spec.type == LLM_TOKENIZER_WPM) {
        /* llama.cpp (0.3.36, llama-vocab.cpp, WPM): with special tokens it
         * always adds [CLS] (bos) first and [SEP] (sep) last, whatever
         * add_bos / add_eos / add_sep say; its own converter writes
         * add_sep_token false for BERT and the model still gets [SEP], as
         * sentence-transformers gives it. */
        spec.add_bos = 1;
        spec.add_eos = 1;
        if (spec.sep >= 0) spec.eos = spec.sep;
    }

    /* Older GGUFs lack eot_token_id: like llama.cpp, take the end-of-turn
     * token by its well-known text, among control tokens. */
    if (spec.eot < 0) {
        static const char *const k_eot[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
                                            "<EOT>", "<|END_OF_TURN_TOKEN|>", "<｜end▁of▁sentence｜>", NULL};
        for (int k = 0; k_eot[k] && spec.eot < 0; k++)
            for (int32_t i = 0; i < n; i++)
                if ((!types || types[i] == LLM_TOKEN_TYPE_CONTROL) && strcmp(tokens[i], k_eot[k]) == 0) {
                    spec.eot = i;
                    break;
                }
    }
    if (spec.eom < 0) {
        for (int32_t i = 0; i < n; i++)
            if ((!types || types[i] == LLM_TOKEN_TYPE_CONTROL) && strcmp(tokens[i], "<|eom_id|>") == 0) {
                spec.eom = i;
                break;
            }
    }

    int oom;
    strip = llamacpp_strip(g, tokens, types, n, &oom);
    if (oom) {
        st = llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    spec.strip = strip;
    st = llm_tokenizer_create(&spec, out); /* its message is already in our slot */
done:
    free(strip);
    free(tokens);
    free(tok_blob);
    free(merges);
    free(merge_blob);
    free(scores);
    free(types);
    return st;
}
