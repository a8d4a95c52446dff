/* Private to llama-engine: what engine_chat.c needs from a model, in plain
 * types (engine_chat.c includes llama/chat.h, whose llm_chat_message has the
 * same layout as engine.h's, so it cannot include llama/engine.h). */
#ifndef LLM_ENGINE_CHAT_BRIDGE_H
#define LLM_ENGINE_CHAT_BRIDGE_H

struct llm_model;
const char *llm__model_chat_template(const struct llm_model *m);
const char *llm__model_bos_text(const struct llm_model *m);
const char *llm__model_eos_text(const struct llm_model *m);
char *llm__model_errbuf(const struct llm_model *m);

#endif
