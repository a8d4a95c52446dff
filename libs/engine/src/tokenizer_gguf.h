/* tokenizer_gguf.h -- build an llm_tokenizer from a GGUF file's
 * tokenizer.ggml.* metadata (engine glue between llama-models and
 * llama-tokenizer; private to the engine). Other programs reach it through
 * the public llama/engine_tokenizer.h (llm_load_tokenizer). */
#ifndef LLM_TOKENIZER_GGUF_H
#define LLM_TOKENIZER_GGUF_H

#include "llama/models.h"
#include "llama/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read tokenizer.ggml.model ("gpt2" byte-level BPE, "llama" SentencePiece
 * BPE, "bert" WordPiece), tokens, scores, token_type, merges, pre and the
 * special ids / add_* flags from g and build a tokenizer into *out (caller
 * frees with llm_tokenizer_free). g may be closed afterwards: nothing is
 * borrowed. Returns LLM_OK; LLM_ERR_NOT_FOUND (no tokenizer.ggml.model or
 * tokens); LLM_ERR_UNSUPPORTED (another tokenizer model, named in the
 * message); LLM_ERR_BAD_FORMAT (a key of the wrong type or size);
 * LLM_ERR_NO_MEMORY; or what llm_tokenizer_create returns. On failure *out
 * is NULL and the thread's engine message (llm_last_error()) says why. */
llm_status llm__tokenizer_from_gguf(const llm_gguf *g, llm_tokenizer **out);

#ifdef __cplusplus
}
#endif
#endif
