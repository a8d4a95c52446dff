/*
 * llama/engine_tokenizer.h -- a model file's tokenizer, for programs that use
 * the tokenizer library (llama/tokenizer.h) directly: tokenizer tests and
 * benchmarks, llm-tokenize, fuzzers, a RAG indexer that only tokenizes.
 *
 * Building a tokenizer from a GGUF file's tokenizer.ggml.* metadata needs the
 * GGUF reader (llama-models) and the tokenizer (llama-tokenizer); only the
 * engine may use both, so the engine offers it, here. Applications that run
 * models need only llama/engine.h (llm_model_params.vocab_only loads the same
 * tokenizer behind llm_tokenize).
 *
 *     llm_tokenizer *tok = NULL;
 *     if (llm_load_tokenizer("ggml-vocab-gpt-2.gguf", &tok) != LLM_OK) {
 *         fprintf(stderr, "%s\n", llm_last_error());
 *         return 1;
 *     }
 *     ... llm_tokenizer_encode(tok, ...) ...
 *     llm_tokenizer_free(tok);
 *
 * Link llama-engine. Messages go to llm_last_error() (llama/engine.h).
 */
#ifndef LLAMA_ENGINE_TOKENIZER_H
#define LLAMA_ENGINE_TOKENIZER_H

#include <stddef.h>

#include "llama/engine.h"
#include "llama/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Builds the tokenizer of `path`: a model or vocab-only .gguf file
 * (tokenizer.ggml.* metadata), a tokenizer.json file, or a Hugging Face model
 * folder (its tokenizer.json). No weights are read. On success *out is owned
 * by the caller (llm_tokenizer_free()); on failure it is NULL. Returns
 * LLM_OK, LLM_ERR_IO, LLM_ERR_BAD_FORMAT, LLM_ERR_NOT_FOUND (no tokenizer in
 * the file), LLM_ERR_UNSUPPORTED (a tokenizer model we do not implement,
 * named in the message), LLM_ERR_NO_MEMORY, LLM_ERR_INVALID_ARG.
 * Thread-safe. */
llm_status llm_load_tokenizer(const char *path, llm_tokenizer **out);

/* The same from the bytes of a GGUF file in memory (data[0..size) is only
 * read during the call; nothing is borrowed). Returns as llm_load_tokenizer.
 * Thread-safe. */
llm_status llm_load_tokenizer_from_gguf_buffer(const void *data, size_t size, llm_tokenizer **out);

/* The tokenizer a loaded model (full or vocab_only) uses. Borrowed: valid
 * until llm_model_free(model); its const functions are thread-safe. NULL
 * when model is NULL. */
const llm_tokenizer *llm_model_tokenizer(const llm_model *model);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_ENGINE_TOKENIZER_H */
