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

#endif
