/* Private to llama-engine: building the tokenizer and finding the chat
 * template of a model descriptor (GGUF metadata or a Hugging Face folder). */
#ifndef LLM_ENGINE_TOK_H
#define LLM_ENGINE_TOK_H

#include <stddef.h>

#include "llama/models.h"
#include "llama/tokenizer.h"

/* Builds the model's tokenizer. On failure a message is in err. */
llm_status llm__tokenizer_load(const llm_model_desc *d, llm_tokenizer **out, char *err, size_t cap);

/* The model's Jinja chat template (malloc'd; "" when it has none), or NULL
 * when out of memory. */
char *llm__chat_template_string(const llm_model_desc *d);
/* The same from an open GGUF (tokenizer.chat_template) or from a Hugging Face
 * folder (tokenizer_config.json's chat_template). */
char *llm__gguf_chat_template(const llm_gguf *g);
char *llm__hf_chat_template(const char *dir);

#endif
