/* One translation unit with the engine's API, the chat library's and the
 * tokenizer's: llm_token, LLM_TOKEN_NULL and llm_chat_message come from
 * llama/types.h once, so the same message array goes to both renderers.
 * Compiled as strict C11 with -Werror by llm-header-check-c (test
 * public_headers_compile_alone). */
#include "llama/chat.h"
#include "llama/engine.h"
#include "llama/tokenizer.h"

int llm_hdr_engine_and_chat(const llm_model *m, char *buf, size_t cap);

int llm_hdr_engine_and_chat(const llm_model *m, char *buf, size_t cap) {
    const llm_chat_message msgs[] = {{"user", "Hello!"}};
    int32_t n_engine = 0;
    size_t n_chat = 0;
    llm_status a = llm_chat_apply(m, msgs, 1, true, buf, cap, &n_engine);
    llm_status b = llm_chat_render(LLM_CHAT_TEMPLATE_CHATML, msgs, 1, NULL, buf, cap, &n_chat);
    llm_token none = LLM_TOKEN_NULL;
    return (int)a + (int)b + (int)none;
}
