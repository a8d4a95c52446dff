/* chat_template.c -- family names, detection from a template string, and the
 * public render entry points (argument checks, buffer contract). */
#define _POSIX_C_SOURCE 200809L /* localtime_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "chat_internal.h"
#include "jinja.h"

static const char *const family_names[LLM_CHAT_TEMPLATE_COUNT] = {
    [LLM_CHAT_TEMPLATE_UNKNOWN] = "unknown",     [LLM_CHAT_TEMPLATE_CHATML] = "chatml",
    [LLM_CHAT_TEMPLATE_SMOLLM2] = "smollm2",     [LLM_CHAT_TEMPLATE_QWEN2_5] = "qwen2.5",
    [LLM_CHAT_TEMPLATE_LLAMA3] = "llama3",       [LLM_CHAT_TEMPLATE_LLAMA2] = "llama2",
    [LLM_CHAT_TEMPLATE_MISTRAL_V1] = "mistral-v1", [LLM_CHAT_TEMPLATE_MISTRAL_V3] = "mistral-v3",
    [LLM_CHAT_TEMPLATE_MISTRAL_V7] = "mistral-v7", [LLM_CHAT_TEMPLATE_GEMMA] = "gemma",
    [LLM_CHAT_TEMPLATE_GEMMA3] = "gemma3",
};

static const struct {
    const char *name;
    llm_chat_template tmpl;
} aliases[] = {
    {"llama-3", LLM_CHAT_TEMPLATE_LLAMA3},      {"llama-2", LLM_CHAT_TEMPLATE_LLAMA2},
    {"mistral", LLM_CHAT_TEMPLATE_MISTRAL_V1},  {"smollm", LLM_CHAT_TEMPLATE_SMOLLM2},
    {"qwen", LLM_CHAT_TEMPLATE_QWEN2_5},        {"gemma2", LLM_CHAT_TEMPLATE_GEMMA},
};

const char *llm_chat_template_name(llm_chat_template tmpl) {
    if ((int)tmpl < 0 || tmpl >= LLM_CHAT_TEMPLATE_COUNT)
        return "unknown";
    return family_names[tmpl];
}

static int ascii_casecmp(const char *a, const char *b) {
    for (;; a++, b++) {
        int ca = (unsigned char)*a, cb = (unsigned char)*b;
        if (ca >= 'A' && ca <= 'Z')
            ca += 'a' - 'A';
        if (cb >= 'A' && cb <= 'Z')
            cb += 'a' - 'A';
        if (ca != cb || ca == 0)
            return ca - cb;
    }
}

llm_status llm_chat_template_from_name(const char *name, llm_chat_template *out) {
    llm__chat_clear_error();
    if (!name || !out)
        return llm__chat_fail(LLM_ERR_INVALID_ARG, "llm_chat_template_from_name: NULL argument");
    *out = LLM_CHAT_TEMPLATE_UNKNOWN;
    for (int i = 1; i < LLM_CHAT_TEMPLATE_COUNT; i++) {
        if (ascii_casecmp(name, family_names[i]) == 0) {
            *out = (llm_chat_template)i;
            return LLM_OK;
        }
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (ascii_casecmp(name, aliases[i].name) == 0) {
            *out = aliases[i].tmpl;
            return LLM_OK;
        }
    }
    return llm__chat_fail(LLM_ERR_NOT_FOUND, "unknown chat template name '%.64s'", name);
}

static bool has(const char *s, const char *needle) { return strstr(s, needle) != NULL; }

/* The distinctive literal text of each published template. Needles avoid
 * line breaks and escapes, which templates write either as "\n" escapes or as
 * real newlines. */
static llm_chat_template detect(const char *t, const char **why) {
    *why = NULL;
    if (has(t, "<|im_start|>")) {
        if (has(t, "<think>")) {
            *why = "a ChatML template with <think> reasoning blocks (Qwen3-style) is not supported";
            return LLM_CHAT_TEMPLATE_UNKNOWN;
        }
        if (has(t, "You are a helpful AI assistant named SmolLM, trained by Hugging Face"))
            return LLM_CHAT_TEMPLATE_SMOLLM2;
        if (has(t, "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.") &&
            has(t, "<tool_response>"))
            return LLM_CHAT_TEMPLATE_QWEN2_5;
        if (has(t, "<|im_start|>system") || has(t, "tool")) {
            *why = "a ChatML template with its own system text or tool handling that we do not know";
            return LLM_CHAT_TEMPLATE_UNKNOWN;
        }
        return LLM_CHAT_TEMPLATE_CHATML;
    }
    if (has(t, "<|start_header_id|>")) {
        if (has(t, "Cutting Knowledge Date") || has(t, "tools") || has(t, "ipython")) {
            *why = "a Llama 3.1+ template (dated system header, tools) is not supported";
            return LLM_CHAT_TEMPLATE_UNKNOWN;
        }
        if (has(t, "bos_token") && has(t, "| trim"))
            return LLM_CHAT_TEMPLATE_LLAMA3;
        *why = "a Llama 3 style template that differs from Meta-Llama-3-Instruct's";
        return LLM_CHAT_TEMPLATE_UNKNOWN;
    }
    if (has(t, "<start_of_turn>")) {
        if (has(t, "first_user_prefix"))
            return LLM_CHAT_TEMPLATE_GEMMA3;
        if (has(t, "System role not supported"))
            return LLM_CHAT_TEMPLATE_GEMMA;
        *why = "a Gemma style template that differs from Gemma 1/2/3's";
        return LLM_CHAT_TEMPLATE_UNKNOWN;
    }
    if (has(t, "[SYSTEM_PROMPT]")) {
        if (has(t, "You are Mistral Small 3, a Large Language Model (LLM) created by Mistral AI, "
                   "a French startup headquartered in Paris.") &&
            has(t, "Your knowledge base was last updated on 2023-10-01. The current date is ") &&
            has(t, "What are some good restaurants around me?\\\" => \\\"Where are you?"))
            return LLM_CHAT_TEMPLATE_MISTRAL_V7;
        *why = "a Mistral v7 template whose default system prompt is not Mistral Small 3 (2501)'s";
        return LLM_CHAT_TEMPLATE_UNKNOWN;
    }
    if (has(t, "[INST]")) {
        if (has(t, "<<SYS>>")) {
            if (has(t, "bos_token + '[INST] ' + content.strip()") && !has(t, "DEFAULT_SYSTEM_MESSAGE"))
                return LLM_CHAT_TEMPLATE_LLAMA2;
            *why = "a Llama 2 style template that differs from Llama-2-chat's";
            return LLM_CHAT_TEMPLATE_UNKNOWN;
        }
        if (has(t, "[AVAILABLE_TOOLS]")) {
            if (has(t, "\"[INST] \" + message[\"content\"] + \"[/INST]\""))
                return LLM_CHAT_TEMPLATE_MISTRAL_V3;
            *why = "a Mistral tools template other than Mistral-7B-Instruct-v0.3's (e.g. Tekken "
                   "\"[INST]\" without a space)";
            return LLM_CHAT_TEMPLATE_UNKNOWN;
        }
        if (has(t, "' [INST] ' + system_message") && has(t, "' [INST] ' + message['content'] + ' [/INST]'"))
            return LLM_CHAT_TEMPLATE_MISTRAL_V1;
        *why = "an [INST] template other than the ones we know (older Mistral/Mixtral revisions "
               "without system-message folding are not supported)";
        return LLM_CHAT_TEMPLATE_UNKNOWN;
    }
    *why = "no known chat template family matches";
    return LLM_CHAT_TEMPLATE_UNKNOWN;
}

llm_status llm_chat_template_detect(const char *template_str, llm_chat_template *out) {
    llm__chat_clear_error();
    if (!template_str || !out)
        return llm__chat_fail(LLM_ERR_INVALID_ARG, "llm_chat_template_detect: NULL argument");
    const char *why;
    *out = detect(template_str, &why);
    if (*out == LLM_CHAT_TEMPLATE_UNKNOWN)
        return llm__chat_fail(LLM_ERR_UNSUPPORTED, "unknown chat template: %s", why);
    return LLM_OK;
}

llm_status llm_chat_template_resolve(const char *name_or_template, llm_chat_template *out) {
    if (name_or_template && out && llm_chat_template_from_name(name_or_template, out) == LLM_OK)
        return LLM_OK;
    return llm_chat_template_detect(name_or_template, out);
}

llm_chat_params llm_chat_default_params(void) {
    llm_chat_params p;
    memset(&p, 0, sizeof p);
    p.bos_token = NULL;
    p.eos_token = NULL;
    p.add_generation_prompt = false;
    p.date = NULL;
    p.engine = LLM_CHAT_ENGINE_AUTO;
    return p;
}

/* Validate the messages and parameters into c; today[16] backs c->date. */
static llm_status make_ctx(const llm_chat_message *messages, size_t n, const llm_chat_params *params,
                           llm__chat_ctx *c, char *today) {
    if (!params || (n > 0 && !messages))
        return llm__chat_fail(LLM_ERR_INVALID_ARG, "llm_chat_render: NULL params or messages");
    for (size_t i = 0; i < n; i++) {
        if (!messages[i].role || !messages[i].content)
            return llm__chat_fail(LLM_ERR_INVALID_ARG, "message %zu has a NULL role or content", i);
        if (!llm__chat_utf8_valid(messages[i].role) || !llm__chat_utf8_valid(messages[i].content))
            return llm__chat_fail(LLM_ERR_BAD_UTF8, "message %zu is not valid UTF-8", i);
    }
    c->msgs = messages;
    c->n = n;
    c->vars = NULL;
    c->bos = params->bos_token ? params->bos_token : "";
    c->eos = params->eos_token ? params->eos_token : "";
    c->add_gen = params->add_generation_prompt;
    if (!llm__chat_utf8_valid(c->bos) || !llm__chat_utf8_valid(c->eos))
        return llm__chat_fail(LLM_ERR_BAD_UTF8, "bos_token or eos_token is not valid UTF-8");
    if (params->date) {
        if (!llm__chat_utf8_valid(params->date))
            return llm__chat_fail(LLM_ERR_BAD_UTF8, "date is not valid UTF-8");
        c->date = params->date;
    } else {
        time_t now = time(NULL);
        struct tm tm;
        if (now == (time_t)-1 || !localtime_r(&now, &tm) ||
            strftime(today, 16, "%Y-%m-%d", &tm) == 0)
            strcpy(today, "1970-01-01");
        c->date = today;
    }
    return LLM_OK;
}

static llm_status finish(llm_status st, llm__sb *sb) {
    if (st == LLM_OK && sb->failed)
        st = llm__chat_fail(LLM_ERR_NO_MEMORY, "out of memory while rendering a chat template");
    return st;
}

/* Validate the arguments and render family tmpl into a fresh builder. */
static llm_status render_sb(llm_chat_template tmpl, const llm_chat_message *messages, size_t n,
                            const llm_chat_params *params, llm__sb *sb) {
    if ((int)tmpl <= LLM_CHAT_TEMPLATE_UNKNOWN || tmpl >= LLM_CHAT_TEMPLATE_COUNT)
        return llm__chat_fail(LLM_ERR_INVALID_ARG, "llm_chat_render: unknown template family %d",
                              (int)tmpl);
    llm__chat_ctx c;
    char today[16];
    llm_status st = make_ctx(messages, n, params, &c, today);
    if (st != LLM_OK)
        return st;
    return finish(llm__chat_render_family(tmpl, &c, sb), sb);
}

/* Render a template string with the engine params->engine selects. */
static llm_status render_template_sb(const char *tmpl_str, const llm_chat_message *messages, size_t n,
                                     const llm_chat_params *params, llm__sb *sb) {
    if (!tmpl_str)
        return llm__chat_fail(LLM_ERR_INVALID_ARG, "llm_chat_render_template: NULL template");
    llm__chat_ctx c;
    char today[16];
    llm_status st = make_ctx(messages, n, params, &c, today);
    if (st != LLM_OK)
        return st;
    llm_chat_engine engine = params->engine;
    if (engine == LLM_CHAT_ENGINE_AUTO || engine == LLM_CHAT_ENGINE_JINJA) {
        st = llm__jinja_render(tmpl_str, &c, sb);
        if (engine == LLM_CHAT_ENGINE_JINJA || (st != LLM_ERR_UNSUPPORTED && st != LLM_ERR_BAD_FORMAT))
            return finish(st, sb);
        sb->len = 0; /* fall back to the family renderer */
        if (sb->data)
            sb->data[0] = '\0';
        char why[256];
        snprintf(why, sizeof why, "%s", llm_chat_last_error());
        llm_chat_template fam;
        const char *reason;
        if ((fam = detect(tmpl_str, &reason)) == LLM_CHAT_TEMPLATE_UNKNOWN)
            return llm__chat_fail(st, "%s (and no template family matches: %s)", why, reason);
        return finish(llm__chat_render_family(fam, &c, sb), sb);
    }
    if (engine != LLM_CHAT_ENGINE_FAMILY)
        return llm__chat_fail(LLM_ERR_INVALID_ARG, "unknown chat engine %d", (int)engine);
    llm_chat_template fam;
    const char *reason;
    if ((fam = detect(tmpl_str, &reason)) == LLM_CHAT_TEMPLATE_UNKNOWN)
        return llm__chat_fail(LLM_ERR_UNSUPPORTED, "unknown chat template: %s", reason);
    return finish(llm__chat_render_family(fam, &c, sb), sb);
}

/* Copy a rendering into the caller's buffer (the llm_chat_render contract). */
static llm_status to_buffer(llm_status st, llm__sb *sb, char *out, size_t cap, size_t *out_len) {
    if (st == LLM_OK) {
        if (sb->len + 1 > cap) {
            *out_len = sb->len;
            st = llm__chat_fail(LLM_ERR_BUFFER_TOO_SMALL,
                                "the rendered chat needs %zu bytes plus a NUL, the buffer has %zu",
                                sb->len, cap);
        } else {
            if (sb->len)
                memcpy(out, sb->data, sb->len);
            out[sb->len] = '\0';
            *out_len = sb->len;
        }
    }
    llm__sb_free(sb);
    return st;
}

/* Hand the builder's text to the caller (the _alloc contract). */
static llm_status to_alloc(llm_status st, llm__sb *sb, char **out, size_t *out_len) {
    if (st != LLM_OK) {
        llm__sb_free(sb);
        return st;
    }
    if (!sb->data) { /* nothing rendered: still hand back an empty string */
        sb->data = malloc(1);
        if (!sb->data)
            return llm__chat_fail(LLM_ERR_NO_MEMORY, "out of memory");
        sb->data[0] = '\0';
    }
    *out = sb->data;
    *out_len = sb->len;
    return LLM_OK;
}

llm_status llm_chat_render(llm_chat_template tmpl, const llm_chat_message *messages, size_t n,
                           const llm_chat_params *params, char *out, size_t cap, size_t *out_len) {
    llm__chat_clear_error();
    if (!out_len || (cap > 0 && !out))
        return llm__chat_fail(LLM_ERR_INVALID_ARG, "llm_chat_render: NULL out or out_len");
    *out_len = 0;
    if (cap > 0)
        out[0] = '\0';
    llm__sb sb = {0};
    return to_buffer(render_sb(tmpl, messages, n, params, &sb), &sb, out, cap, out_len);
}

llm_status llm_chat_render_alloc(llm_chat_template tmpl, const llm_chat_message *messages, size_t n,
                                 const llm_chat_params *params, char **out, size_t *out_len) {
    llm__chat_clear_error();
    if (!out || !out_len)
        return llm__chat_fail(LLM_ERR_INVALID_ARG, "llm_chat_render_alloc: NULL out or out_len");
    *out = NULL;
    *out_len = 0;
    llm__sb sb = {0};
    return to_alloc(render_sb(tmpl, messages, n, params, &sb), &sb, out, out_len);
}

llm_status llm_chat_render_template(const char *template_str, const llm_chat_message *messages,
                                    size_t n, const llm_chat_params *params, char *out, size_t cap,
                                    size_t *out_len) {
    llm__chat_clear_error();
    if (!out_len || (cap > 0 && !out))
        return llm__chat_fail(LLM_ERR_INVALID_ARG, "llm_chat_render_template: NULL out or out_len");
    *out_len = 0;
    if (cap > 0)
        out[0] = '\0';
    llm__sb sb = {0};
    return to_buffer(render_template_sb(template_str, messages, n, params, &sb), &sb, out, cap, out_len);
}

llm_status llm_chat_render_template_alloc(const char *template_str, const llm_chat_message *messages,
                                          size_t n, const llm_chat_params *params, char **out,
                                          size_t *out_len) {
    llm__chat_clear_error();
    if (!out || !out_len)
        return llm__chat_fail(LLM_ERR_INVALID_ARG,
                              "llm_chat_render_template_alloc: NULL out or out_len");
    *out = NULL;
    *out_len = 0;
    llm__sb sb = {0};
    return to_alloc(render_template_sb(template_str, messages, n, params, &sb), &sb, out, out_len);
}

llm_status llm_chat_render_json(const char *template_str, const char *vars_json, const llm_chat_params *params,
                                char **out, size_t *out_len) {
    llm__chat_clear_error();
    if (!out || !out_len)
        return llm__chat_fail(LLM_ERR_INVALID_ARG, "llm_chat_render_json: NULL out or out_len");
    *out = NULL;
    *out_len = 0;
    if (!template_str || !vars_json || !params)
        return llm__chat_fail(LLM_ERR_INVALID_ARG, "llm_chat_render_json: NULL template, variables or params");
    json_error_t jerr;
    json_t *vars = json_loads(vars_json, JSON_REJECT_DUPLICATES, &jerr);
    if (!vars)
        return llm__chat_fail(LLM_ERR_INVALID_ARG, "template variables: line %d: %s", jerr.line, jerr.text);
    if (!json_is_object(vars)) {
        json_decref(vars);
        return llm__chat_fail(LLM_ERR_INVALID_ARG, "template variables: not a JSON object");
    }
    llm__chat_ctx c;
    char today[16];
    llm__sb sb = {0};
    llm_status st = make_ctx(NULL, 0, params, &c, today);
    if (st == LLM_OK) {
        c.vars = vars;
        st = finish(llm__jinja_render(template_str, &c, &sb), &sb);
    }
    json_decref(vars);
    return to_alloc(st, &sb, out, out_len);
}
