/* chat_render.c -- one renderer per template family.
 *
 * Each renderer is a straight transcription of what its model's published
 * Jinja template does for a plain list of {role, content} messages, including
 * the template's error checks (raise_exception) and jinja's own failures (an
 * empty conversation where the template reads messages[0]). The golden tests
 * compare every renderer with transformers' rendering of the real template.
 */
#include <string.h>

#include "chat_internal.h"

#define ROLES_ALTERNATE_MSG "Conversation roles must alternate user/assistant/user/assistant/..."
#define MISTRAL_ALTERNATE_MSG                                                                      \
    "After the optional system message, conversation roles must alternate "                        \
    "user/assistant/user/assistant/..."

static bool is_role(const llm_chat_message *m, const char *role) { return strcmp(m->role, role) == 0; }

/* jinja: `messages[0]['role']` on an empty list raises UndefinedError. */
static llm_status need_first(const llm__chat_ctx *c) {
    if (c->n == 0)
        return llm__chat_fail(LLM_ERR_INVALID_ARG,
                              "the template reads messages[0] but the conversation is empty");
    return LLM_OK;
}

/* The common check `(role == 'user') != (index % 2 == 0)` over msgs[from..n). */
static llm_status check_alternation(const llm__chat_ctx *c, size_t from, const char *msg) {
    for (size_t i = from; i < c->n; i++)
        if (is_role(&c->msgs[i], "user") != ((i - from) % 2 == 0))
            return llm__chat_fail(LLM_ERR_INVALID_ARG, "%s (message %zu has role '%s')", msg, i,
                                  c->msgs[i].role);
    return LLM_OK;
}

static void chatml_turn(llm__sb *sb, const char *role, const char *content) {
    llm__sb_puts(sb, "<|im_start|>");
    llm__sb_puts(sb, role);
    llm__sb_puts(sb, "\n");
    llm__sb_puts(sb, content);
    llm__sb_puts(sb, "<|im_end|>\n");
}

/* chatml and smollm2: every message as a ChatML turn; SmolLM2 first inserts
 * its default system turn when the first message is not "system". */
static llm_status render_chatml(const llm__chat_ctx *c, llm__sb *sb, const char *default_system) {
    for (size_t i = 0; i < c->n; i++) {
        if (i == 0 && default_system && !is_role(&c->msgs[0], "system"))
            chatml_turn(sb, "system", default_system);
        chatml_turn(sb, c->msgs[i].role, c->msgs[i].content);
    }
    if (c->add_gen)
        llm__sb_puts(sb, "<|im_start|>assistant\n");
    return LLM_OK;
}

/* Qwen2.5 without tools: a leading system turn (given or default), then user
 * turns, later system turns and assistant turns as ChatML; runs of "tool"
 * messages become one user turn of <tool_response> blocks; other roles (and
 * the leading system message, already written) produce nothing. */
static llm_status render_qwen2_5(const llm__chat_ctx *c, llm__sb *sb) {
    llm_status st = need_first(c);
    if (st != LLM_OK)
        return st;
    if (is_role(&c->msgs[0], "system"))
        chatml_turn(sb, "system", c->msgs[0].content);
    else
        chatml_turn(sb, "system", "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.");
    for (size_t i = 0; i < c->n; i++) {
        const llm_chat_message *m = &c->msgs[i];
        if (is_role(m, "user") || (is_role(m, "system") && i > 0) || is_role(m, "assistant")) {
            chatml_turn(sb, m->role, m->content);
        } else if (is_role(m, "tool")) {
            if (i == 0 || !is_role(&c->msgs[i - 1], "tool"))
                llm__sb_puts(sb, "<|im_start|>user");
            llm__sb_puts(sb, "\n<tool_response>\n");
            llm__sb_puts(sb, m->content);
            llm__sb_puts(sb, "\n</tool_response>");
            if (i + 1 == c->n || !is_role(&c->msgs[i + 1], "tool"))
                llm__sb_puts(sb, "<|im_end|>\n");
        }
    }
    if (c->add_gen)
        llm__sb_puts(sb, "<|im_start|>assistant\n");
    return LLM_OK;
}

/* Llama 3.0: header + trimmed content + <|eot_id|>, bos_token first. */
static llm_status render_llama3(const llm__chat_ctx *c, llm__sb *sb) {
    for (size_t i = 0; i < c->n; i++) {
        if (i == 0)
            llm__sb_puts(sb, c->bos);
        llm__sb_puts(sb, "<|start_header_id|>");
        llm__sb_puts(sb, c->msgs[i].role);
        llm__sb_puts(sb, "<|end_header_id|>\n\n");
        llm__sb_put_stripped(sb, c->msgs[i].content);
        llm__sb_puts(sb, "<|eot_id|>");
    }
    if (c->add_gen)
        llm__sb_puts(sb, "<|start_header_id|>assistant<|end_header_id|>\n\n");
    return LLM_OK;
}

/* Llama 2 chat: the system text is folded into the first turn inside
 * <<SYS>> markers; every user turn opens with bos_token. */
static llm_status render_llama2(const llm__chat_ctx *c, llm__sb *sb) {
    llm_status st = need_first(c);
    if (st != LLM_OK)
        return st;
    size_t from = is_role(&c->msgs[0], "system") ? 1 : 0;
    const char *system = from ? c->msgs[0].content : NULL;
    if ((st = check_alternation(c, from, ROLES_ALTERNATE_MSG)) != LLM_OK)
        return st;
    llm__sb tmp = {0};
    for (size_t i = from; i < c->n; i++) {
        const llm_chat_message *m = &c->msgs[i];
        const char *content = m->content;
        if (i == from && system) {
            /* content = '<<SYS>>\n' + system + '\n<</SYS>>\n\n' + content, then .strip() */
            tmp.len = 0;
            llm__sb_puts(&tmp, "<<SYS>>\n");
            llm__sb_puts(&tmp, system);
            llm__sb_puts(&tmp, "\n<</SYS>>\n\n");
            llm__sb_puts(&tmp, m->content);
            if (tmp.failed)
                break;
            content = tmp.data;
        }
        if (is_role(m, "user")) {
            llm__sb_puts(sb, c->bos);
            llm__sb_puts(sb, "[INST] ");
            llm__sb_put_stripped(sb, content);
            llm__sb_puts(sb, " [/INST]");
        } else if (is_role(m, "assistant")) {
            llm__sb_puts(sb, " ");
            llm__sb_put_stripped(sb, content);
            llm__sb_puts(sb, " ");
            llm__sb_puts(sb, c->eos);
        }
    }
    if (tmp.failed)
        sb->failed = true;
    llm__sb_free(&tmp);
    return LLM_OK;
}

/* Mistral v1 (Mixtral / 7B v0.1-v0.2 current template). */
static llm_status render_mistral_v1(const llm__chat_ctx *c, llm__sb *sb) {
    llm_status st = need_first(c);
    if (st != LLM_OK)
        return st;
    size_t from = is_role(&c->msgs[0], "system") ? 1 : 0;
    if ((st = check_alternation(c, from, MISTRAL_ALTERNATE_MSG)) != LLM_OK)
        return st;
    llm__sb_puts(sb, c->bos);
    for (size_t i = from; i < c->n; i++) {
        const llm_chat_message *m = &c->msgs[i];
        if (is_role(m, "user")) {
            llm__sb_puts(sb, " [INST] ");
            if (i == from && from == 1) {
                llm__sb_puts(sb, c->msgs[0].content);
                llm__sb_puts(sb, "\n\n");
            }
            llm__sb_puts(sb, m->content);
            llm__sb_puts(sb, " [/INST]");
        } else if (is_role(m, "assistant")) {
            llm__sb_puts(sb, " ");
            llm__sb_puts(sb, m->content);
            llm__sb_puts(sb, c->eos);
        } else {
            return llm__chat_fail(LLM_ERR_INVALID_ARG,
                                  "Only user and assistant roles are supported, with the exception "
                                  "of an initial optional system message! (message %zu has role '%s')",
                                  i, m->role);
        }
    }
    return LLM_OK;
}

/* Mistral v3 (7B v0.3): the system text goes before the LAST message if that
 * is a user turn (and is dropped otherwise, as the template does). The
 * alternation check skips "tool"/"tool_results" messages; those then fail on
 * their missing tool_call_id exactly as the template does. */
static llm_status render_mistral_v3(const llm__chat_ctx *c, llm__sb *sb) {
    llm_status st = need_first(c);
    if (st != LLM_OK)
        return st;
    size_t from = is_role(&c->msgs[0], "system") ? 1 : 0;
    size_t k = 0;
    for (size_t i = from; i < c->n; i++) {
        const llm_chat_message *m = &c->msgs[i];
        if (is_role(m, "tool") || is_role(m, "tool_results"))
            continue;
        if (is_role(m, "user") != (k % 2 == 0))
            return llm__chat_fail(LLM_ERR_INVALID_ARG, "%s (message %zu has role '%s')",
                                  MISTRAL_ALTERNATE_MSG, i, m->role);
        k++;
    }
    llm__sb_puts(sb, c->bos);
    for (size_t i = from; i < c->n; i++) {
        const llm_chat_message *m = &c->msgs[i];
        if (is_role(m, "user")) {
            llm__sb_puts(sb, "[INST] ");
            if (i + 1 == c->n && from == 1) {
                llm__sb_puts(sb, c->msgs[0].content);
                llm__sb_puts(sb, "\n\n");
            }
            llm__sb_puts(sb, m->content);
            llm__sb_puts(sb, "[/INST]");
        } else if (is_role(m, "assistant")) {
            llm__sb_puts(sb, " ");
            llm__sb_put_stripped(sb, m->content);
            llm__sb_puts(sb, c->eos);
        } else if (is_role(m, "tool") || is_role(m, "tool_results")) {
            return llm__chat_fail(LLM_ERR_INVALID_ARG,
                                  "Tool call IDs should be alphanumeric strings with length 9! "
                                  "(message %zu: tool results need a tool_call_id, which plain "
                                  "messages do not carry)",
                                  i);
        } else {
            return llm__chat_fail(LLM_ERR_INVALID_ARG,
                                  "Only user and assistant roles are supported, with the exception "
                                  "of an initial optional system message! (message %zu has role '%s')",
                                  i, m->role);
        }
    }
    return LLM_OK;
}

/* Mistral v7 (Small 3, 2501). The default system prompt is the model's own
 * text with today's date. */
static llm_status render_mistral_v7(const llm__chat_ctx *c, llm__sb *sb) {
    llm_status st = need_first(c);
    if (st != LLM_OK)
        return st;
    size_t from = is_role(&c->msgs[0], "system") ? 1 : 0;
    llm__sb_puts(sb, c->bos);
    llm__sb_puts(sb, "[SYSTEM_PROMPT]");
    if (from) {
        llm__sb_puts(sb, c->msgs[0].content);
    } else {
        llm__sb_puts(sb, "You are Mistral Small 3, a Large Language Model (LLM) created by Mistral AI, "
                         "a French startup headquartered in Paris.\nYour knowledge base was last "
                         "updated on 2023-10-01. The current date is ");
        llm__sb_puts(sb, c->date);
        llm__sb_puts(sb, ".\n\nWhen you're not sure about some information, you say that you don't "
                         "have the information and don't make up anything.\nIf the user's question "
                         "is not clear, ambiguous, or does not provide enough context for you to "
                         "accurately answer the question, you do not try to answer it right away "
                         "and you rather ask the user to clarify their request (e.g. \"What are some "
                         "good restaurants around me?\" => \"Where are you?\" or \"When is the next "
                         "flight to Tokyo\" => \"Where do you travel from?\")");
    }
    llm__sb_puts(sb, "[/SYSTEM_PROMPT]");
    for (size_t i = from; i < c->n; i++) {
        const llm_chat_message *m = &c->msgs[i];
        if (is_role(m, "user")) {
            llm__sb_puts(sb, "[INST]");
            llm__sb_puts(sb, m->content);
            llm__sb_puts(sb, "[/INST]");
        } else if (is_role(m, "system")) {
            llm__sb_puts(sb, "[SYSTEM_PROMPT]");
            llm__sb_puts(sb, m->content);
            llm__sb_puts(sb, "[/SYSTEM_PROMPT]");
        } else if (is_role(m, "assistant")) {
            llm__sb_puts(sb, m->content);
            llm__sb_puts(sb, c->eos);
        } else {
            return llm__chat_fail(LLM_ERR_INVALID_ARG,
                                  "Only user, system and assistant roles are supported! "
                                  "(message %zu has role '%s')",
                                  i, m->role);
        }
    }
    return LLM_OK;
}

/* Gemma 1/2 (fold_system false: a system message is an error) and Gemma 3
 * (the system text + "\n\n" prefixes the first turn's trimmed content). */
static llm_status render_gemma(const llm__chat_ctx *c, llm__sb *sb, bool fold_system) {
    llm_status st = need_first(c);
    if (st != LLM_OK)
        return st;
    llm__sb_puts(sb, c->bos);
    size_t from = 0;
    if (is_role(&c->msgs[0], "system")) {
        if (!fold_system)
            return llm__chat_fail(LLM_ERR_INVALID_ARG, "System role not supported");
        from = 1;
    }
    if ((st = check_alternation(c, from, ROLES_ALTERNATE_MSG)) != LLM_OK)
        return st;
    for (size_t i = from; i < c->n; i++) {
        const llm_chat_message *m = &c->msgs[i];
        llm__sb_puts(sb, "<start_of_turn>");
        llm__sb_puts(sb, is_role(m, "assistant") ? "model" : m->role);
        llm__sb_puts(sb, "\n");
        if (i == from && from == 1) {
            llm__sb_puts(sb, c->msgs[0].content);
            llm__sb_puts(sb, "\n\n");
        }
        llm__sb_put_stripped(sb, m->content);
        llm__sb_puts(sb, "<end_of_turn>\n");
    }
    if (c->add_gen)
        llm__sb_puts(sb, "<start_of_turn>model\n");
    return LLM_OK;
}

llm_status llm__chat_render_family(llm_chat_template tmpl, const llm__chat_ctx *c, llm__sb *sb) {
    switch (tmpl) {
    case LLM_CHAT_TEMPLATE_CHATML:
        return render_chatml(c, sb, NULL);
    case LLM_CHAT_TEMPLATE_SMOLLM2:
        return render_chatml(c, sb, "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
    case LLM_CHAT_TEMPLATE_QWEN2_5:
        return render_qwen2_5(c, sb);
    case LLM_CHAT_TEMPLATE_LLAMA3:
        return render_llama3(c, sb);
    case LLM_CHAT_TEMPLATE_LLAMA2:
        return render_llama2(c, sb);
    case LLM_CHAT_TEMPLATE_MISTRAL_V1:
        return render_mistral_v1(c, sb);
    case LLM_CHAT_TEMPLATE_MISTRAL_V3:
        return render_mistral_v3(c, sb);
    case LLM_CHAT_TEMPLATE_MISTRAL_V7:
        return render_mistral_v7(c, sb);
    case LLM_CHAT_TEMPLATE_GEMMA:
        return render_gemma(c, sb, false);
    case LLM_CHAT_TEMPLATE_GEMMA3:
        return render_gemma(c, sb, true);
    case LLM_CHAT_TEMPLATE_UNKNOWN:
    case LLM_CHAT_TEMPLATE_COUNT:
        break;
    }
    return llm__chat_fail(LLM_ERR_INVALID_ARG, "unknown chat template family %d", (int)tmpl);
}
