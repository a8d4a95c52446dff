/* Private to llama-engine: what engine_chat.c needs from a model (its chat
 * template and BOS/EOS texts) without the model struct's definition. */
#ifndef LLM_ENGINE_CHAT_BRIDGE_H
#define LLM_ENGINE_CHAT_BRIDGE_H

struct llm_model;
const char *llm__model_chat_template(const struct llm_model *m);
const char *llm__model_bos_text(const struct llm_model *m);
const char *llm__model_eos_text(const struct llm_model *m);

#endif
