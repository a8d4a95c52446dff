/*
 * llama/engine_embed.h -- sentence embeddings from a model loaded with
 * llama/engine.h: one vector per text, pooled and optionally normalized as
 * the model's own pipeline states (sentence-transformers files, or a GGUF's
 * pooling type), for retrieval and similarity search.
 *
 * Encoders (BERT family) and decoders (any causal model) both work; a
 * decoder averages its last hidden states unless told otherwise. Embedding
 * needs no session: llm_embed runs on the model, serialized with its other
 * forward passes, and leaves no KV blocks behind.
 *
 * Usage (error checks shortened):
 *
 *     llm_model_params mp = llm_model_default_params();
 *     llm_model *model;
 *     llm_load_model("all-MiniLM-L6-v2", &mp, &model);   // a folder or a .gguf
 *     llm_model_info info;
 *     llm_model_get_info(model, &info);
 *
 *     const char *texts[] = {"a cat sat", "a dog ran"};
 *     float *v = malloc(2 * (size_t)info.n_embd * sizeof *v);   // [2][n_embd]
 *     if (llm_embed(model, texts, 2, LLM_POOLING_MODEL, true, v, (size_t)info.n_embd) != LLM_OK)
 *         fprintf(stderr, "%s\n", llm_last_error());
 *     float cos = 0;                                      // rows have unit norm
 *     for (int32_t k = 0; k < info.n_embd; k++) cos += v[k] * v[info.n_embd + k];
 *
 *     free(v);
 *     llm_model_free(model);
 *
 * Errors, threads and ownership follow llama/engine.h (messages in
 * llm_last_error()).
 */
#ifndef LLAMA_ENGINE_EMBED_H
#define LLAMA_ENGINE_EMBED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llama/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How token vectors (last hidden states, after the final norm) become one
 * vector per text. */
typedef enum llm_pooling {
    LLM_POOLING_MEAN = 0, /* average over tokens: the choice for decoder models */
    LLM_POOLING_CLS = 1,  /* first token */
    LLM_POOLING_LAST = 2, /* last token */
    LLM_POOLING_MODEL = 3, /* the model's own pooling (llm_embed_info.pooling) */
    LLM_POOLING_MAX = 4,  /* per dimension, the largest value over the tokens
                             (sentence-transformers pooling_mode_max_tokens) */
    LLM_POOLING_MEAN_SQRT_LEN = 5 /* the sum over tokens divided by sqrt(tokens)
                             (sentence-transformers pooling_mode_mean_sqrt_len_tokens) */
} llm_pooling;

/* Parses "mean", "cls", "last", "max", "mean_sqrt_len" or "model". Returns
 * LLM_OK or LLM_ERR_INVALID_ARG. */
llm_status llm_pooling_from_string(const char *s, llm_pooling *out);

/* The model's own embedding pipeline, as its files state it. For a Hugging
 * Face sentence-transformers folder: modules.json (a Normalize module means
 * normalize), the Pooling module's config.json (pooling_mode_mean_tokens,
 * _cls_token, _lasttoken, _max_tokens, _mean_sqrt_len_tokens; one of them)
 * and sentence_bert_config.json (max_seq_length).
 * For a GGUF: <arch>.pooling_type; encoders normalize (llama.cpp's default)
 * and truncate at their context length. A decoder states nothing: mean,
 * normalized, no truncation. */
typedef struct llm_embed_info {
    llm_pooling pooling;  /* MEAN, CLS, LAST, MAX or MEAN_SQRT_LEN: what LLM_POOLING_MODEL means */
    bool pooling_stated;  /* the files stated it (else MEAN is a default) */
    bool normalize;       /* the pipeline L2-normalizes its vectors */
    int32_t max_tokens;   /* texts longer than this (special tokens included) are
                             truncated; 0: never truncated (too long is an error) */
    bool is_encoder;      /* bidirectional encoder (BERT family) */
} llm_embed_info;

/* Fills *out for `model`. LLM_OK, LLM_ERR_INVALID_ARG, LLM_ERR_STATE
 * (vocab_only model), LLM_ERR_UNSUPPORTED (the model states a pooling llm
 * does not implement, e.g. weighted mean or several modes at once; the
 * message says which).
 * Thread-safe. */
llm_status llm_model_embed_info(const llm_model *model, llm_embed_info *out);

/* What llm_embed did on a model since it was loaded. */
typedef struct llm_embed_stats {
    int64_t texts;            /* texts embedded */
    int64_t tokens;           /* tokens run through the model */
    int64_t truncated_texts;  /* texts longer than max_tokens, truncated */
    int64_t truncated_tokens; /* tokens those truncations dropped */
    int64_t forwards;         /* forward passes */
    double ms;                /* wall time inside llm_embed */
} llm_embed_stats;

/* Fills *out. LLM_OK or LLM_ERR_INVALID_ARG. Thread-safe. */
llm_status llm_embed_telemetry(const llm_model *model, llm_embed_stats *out);

/* Embeds `n` NUL-terminated UTF-8 texts into `out` (row-major
 * [n][dim] floats, dim must equal info.n_embd). Each text is tokenized with
 * the model's special tokens and pooled (LLM_POOLING_MODEL: the model's own,
 * llm_embed_info); with `normalize` each row gets unit L2 norm. A text's
 * vector is bit-identical whatever else is in the call and however the
 * texts are batched: a decoder runs each text on its own; an encoder packs
 * several whole texts into one forward pass (no padding), each attending
 * only to itself. A text longer than the model's max_tokens
 * (llm_embed_info) is truncated as sentence-transformers does (its first
 * max_tokens - 1 tokens and its closing special token, e.g. [SEP]) and
 * counted in llm_embed_telemetry (truncated_texts, truncated_tokens); with
 * max_tokens 0 a text longer than the context is an error (LLM_CONTEXT_FULL,
 * message names the text index). Returns LLM_OK, LLM_CONTEXT_FULL,
 * LLM_ERR_STATE (vocab_only model), LLM_ERR_BAD_UTF8, LLM_ERR_INVALID_ARG
 * (dim mismatch, empty text), LLM_ERR_UNSUPPORTED (LLM_POOLING_MODEL and the
 * model's pooling is not implemented), LLM_ERR_BACKEND, LLM_ERR_NO_MEMORY.
 * On error the contents of `out` are unspecified. Thread-safe (serialized
 * per model). */
llm_status llm_embed(llm_model *model, const char *const *texts, size_t n,
                     llm_pooling pooling, bool normalize, float *out, size_t dim);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_ENGINE_EMBED_H */
