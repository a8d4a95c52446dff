/*
 * llama/chat.h -- chat templates: render a conversation to prompt text.
 *
 * A chat model expects its conversation written in the exact text layout it
 * was trained on (ChatML, Llama 3 headers, [INST] blocks, ...). Models ship
 * that layout as a Jinja template string (GGUF key `tokenizer.chat_template`,
 * or `chat_template` in tokenizer_config.json). This module recognises the
 * common template families from that string and renders a list of
 * {role, content} messages byte for byte as Python jinja2 renders the model's
 * own template (checked by golden tests against Hugging Face transformers).
 * It can also render the template string itself with a small sandboxed
 * interpreter of the Jinja2 subset chat templates use
 * (llm_chat_render_template), falling back to the family renderers.
 *
 *     llm_chat_template t;
 *     if (llm_chat_template_detect(gguf_template_str, &t) != LLM_OK)
 *         llm_chat_template_from_name("chatml", &t);     // or give up
 *     llm_chat_message msgs[] = {
 *         {"system", "You are terse."},
 *         {"user", "Hello!"},
 *     };
 *     llm_chat_params p = llm_chat_default_params();
 *     p.bos_token = "<|begin_of_text|>";                 // the model's tokens
 *     p.eos_token = "<|eot_id|>";
 *     p.add_generation_prompt = true;
 *     char *text; size_t len;
 *     if (llm_chat_render_alloc(t, msgs, 2, &p, &text, &len) == LLM_OK) {
 *         ... tokenize text (special tokens parsed) ...
 *         free(text);
 *     } else fprintf(stderr, "%s\n", llm_chat_last_error());
 *
 * Thread safety: every function is reentrant; the last-error text is per
 * thread. This header includes only standard C headers and llama/status.h.
 */
#ifndef LLAMA_CHAT_H
#define LLAMA_CHAT_H

#include <stdbool.h>
#include <stddef.h>

#include "llama/status.h"
#include "llama/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One message of a conversation: llm_chat_message, defined in llama/types.h
 * (the engine's llm_chat_apply takes the same type). */

/* The template families we render. Each value is one published template
 * (named after the models that carry it); the name in quotes is what
 * llm_chat_template_name() returns and llm_chat_template_from_name() takes.
 * New values are only ever appended. */
typedef enum llm_chat_template {
    LLM_CHAT_TEMPLATE_UNKNOWN = 0,
    /* "chatml": <|im_start|>role\ncontent<|im_end|>\n, no default system
     * message (OpenHermes 2.5 and many fine-tunes). */
    LLM_CHAT_TEMPLATE_CHATML = 1,
    /* "smollm2": ChatML that inserts the system message "You are a helpful AI
     * assistant named SmolLM, trained by Hugging Face" when the first message
     * is not a system message (SmolLM2-*-Instruct). */
    LLM_CHAT_TEMPLATE_SMOLLM2 = 2,
    /* "qwen2.5": ChatML with the default system message "You are Qwen,
     * created by Alibaba Cloud. You are a helpful assistant.", a later system
     * message kept in place, and "tool" messages grouped into a user turn as
     * <tool_response> blocks (Qwen2.5-*-Instruct, no tools passed). */
    LLM_CHAT_TEMPLATE_QWEN2_5 = 3,
    /* "llama3": <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
     * with content trimmed and bos_token before the first message
     * (Meta-Llama-3-*-Instruct, i.e. Llama 3.0). */
    LLM_CHAT_TEMPLATE_LLAMA3 = 4,
    /* "llama2": <s>[INST] <<SYS>>\nsystem\n<</SYS>>\n\nuser [/INST] answer </s>
     * with the system message folded into the first user turn, contents
     * stripped, strict user/assistant alternation (Llama-2-*-chat). */
    LLM_CHAT_TEMPLATE_LLAMA2 = 5,
    /* "mistral-v1": <s> [INST] system\n\nuser [/INST] answer</s> (spaces
     * around the tags, system folded into the first user turn): the current
     * template of Mistral-7B-Instruct-v0.1/v0.2 and Mixtral-8x7B-Instruct. */
    LLM_CHAT_TEMPLATE_MISTRAL_V1 = 6,
    /* "mistral-v3": <s>[INST] user[/INST] answer</s> with the system message
     * prepended to the LAST message when that is a user turn, answers trimmed
     * (Mistral-7B-Instruct-v0.3, no tools passed). */
    LLM_CHAT_TEMPLATE_MISTRAL_V3 = 7,
    /* "mistral-v7": <s>[SYSTEM_PROMPT]...[/SYSTEM_PROMPT][INST]user[/INST]
     * answer</s>, with Mistral Small 3's dated default system prompt when the
     * first message is not a system message (Mistral-Small-24B-Instruct-2501). */
    LLM_CHAT_TEMPLATE_MISTRAL_V7 = 8,
    /* "gemma": <start_of_turn>user\n...<end_of_turn>\n, assistant shown as
     * "model", contents trimmed, a system message is an error
     * (gemma-*-it of Gemma 1 and 2). */
    LLM_CHAT_TEMPLATE_GEMMA = 9,
    /* "gemma3": like "gemma" but a leading system message is folded into the
     * first user turn as "system\n\n" + trimmed user text (gemma-3-*-it). */
    LLM_CHAT_TEMPLATE_GEMMA3 = 10,
    LLM_CHAT_TEMPLATE_COUNT
} llm_chat_template;

/* How llm_chat_render_template() renders a template string. */
typedef enum llm_chat_engine {
    /* The Jinja interpreter; if it meets syntax or a feature it does not
     * implement (LLM_ERR_UNSUPPORTED / LLM_ERR_BAD_FORMAT), the detected
     * family renderer instead. Errors the template itself raises are final. */
    LLM_CHAT_ENGINE_AUTO = 0,
    LLM_CHAT_ENGINE_JINJA = 1,  /* the interpreter only */
    LLM_CHAT_ENGINE_FAMILY = 2, /* llm_chat_template_detect() + llm_chat_render() only */
} llm_chat_engine;

/* Options for rendering. Get defaults from llm_chat_default_params() and
 * change fields, so that fields added later keep their defaults. */
typedef struct llm_chat_params {
    /* The model's BOS / EOS token text, as the template's bos_token and
     * eos_token variables (e.g. "<s>", "</s>"). NULL means "". */
    const char *bos_token;
    const char *eos_token;
    /* Append the header that opens the assistant's reply (the template's
     * add_generation_prompt). Default false. Templates that have no such
     * header ignore it (llama2, mistral-*). */
    bool add_generation_prompt;
    /* Today's date as "YYYY-MM-DD", for templates that print it (mistral-v7's
     * default system prompt, like jinja's strftime_now("%Y-%m-%d")). NULL
     * (the default) means the current local date. */
    const char *date;
    /* Used by llm_chat_render_template() only. Default LLM_CHAT_ENGINE_AUTO. */
    llm_chat_engine engine;
} llm_chat_params;

/* The default parameters: no BOS/EOS text, no generation prompt, today. */
llm_chat_params llm_chat_default_params(void);

/* Recognise a model's template string (NUL-terminated, e.g. the GGUF value of
 * tokenizer.chat_template) as one of the families above.
 *
 * Detection looks for each family's distinctive literal text, written either
 * with "\n" escapes or real newlines. A template that looks like a family but
 * has extra behaviour we do not reproduce (a different default system prompt,
 * reasoning blocks, Llama 3.1's dated system header, ...) is not claimed.
 *
 * Returns LLM_OK and sets *out; LLM_ERR_UNSUPPORTED (with *out set to
 * LLM_CHAT_TEMPLATE_UNKNOWN and a message naming the reason) when no family
 * matches; LLM_ERR_INVALID_ARG when an argument is NULL. */
llm_status llm_chat_template_detect(const char *template_str, llm_chat_template *out);

/* Look up a family by the name a user types (--chat-template NAME): the names
 * listed above, case-insensitive, plus the aliases "llama-3" (llama3),
 * "llama-2" (llama2), "mistral" (mistral-v1), "smollm" (smollm2),
 * "qwen" (qwen2.5) and "gemma2" (gemma).
 * Returns LLM_OK, LLM_ERR_NOT_FOUND (unknown name; *out set to
 * LLM_CHAT_TEMPLATE_UNKNOWN) or LLM_ERR_INVALID_ARG (NULL argument). */
llm_status llm_chat_template_from_name(const char *name, llm_chat_template *out);

/* The canonical name of a family ("chatml", "llama3", ...); "unknown" for
 * LLM_CHAT_TEMPLATE_UNKNOWN or any value out of range. Static; never NULL. */
const char *llm_chat_template_name(llm_chat_template tmpl);

/* For a --chat-template argument that may be either a family name or a whole
 * template string: tries llm_chat_template_from_name(), then
 * llm_chat_template_detect(). Returns what the latter returns. */
llm_status llm_chat_template_resolve(const char *name_or_template, llm_chat_template *out);

/* Render n messages with family tmpl into the caller's buffer out[cap].
 *
 * On LLM_OK the UTF-8 text is in out[0 .. *out_len) followed by a NUL, so
 * the buffer must hold *out_len + 1 bytes.
 * If cap is too small the call returns LLM_ERR_BUFFER_TOO_SMALL, sets
 * *out_len to the text length it needs (plus one for the NUL: pass a buffer
 * of at least *out_len + 1) and writes "" into out when cap > 0. (STYLE.md's
 * "return the negated size" is not used because rendering can also fail for
 * other reasons, which need the status codes.) out may be NULL when cap is 0:
 * that is how to ask for the size.
 *
 * The template's own checks are reproduced: where the model's template calls
 * raise_exception (roles not alternating user/assistant, a system message in
 * a template that rejects it, ...) or reads messages[0] of an empty list, this
 * returns LLM_ERR_INVALID_ARG and llm_chat_last_error() holds the reason.
 *
 * Other returns: LLM_ERR_INVALID_ARG (NULL params/out_len, n > 0 with NULL
 * messages, a message with a NULL role or content, an unknown tmpl),
 * LLM_ERR_BAD_UTF8 (a role, content or token text is not valid UTF-8),
 * LLM_ERR_NO_MEMORY. On any error *out_len is 0 unless stated above. */
llm_status llm_chat_render(llm_chat_template tmpl, const llm_chat_message *messages, size_t n,
                           const llm_chat_params *params, char *out, size_t cap, size_t *out_len);

/* Like llm_chat_render(), but allocates the NUL-terminated result with
 * malloc(); the caller owns *out and releases it with free(). On error *out
 * is NULL and *out_len is 0. */
llm_status llm_chat_render_alloc(llm_chat_template tmpl, const llm_chat_message *messages, size_t n,
                                 const llm_chat_params *params, char **out, size_t *out_len);

/* Render n messages with a model's own template string (NUL-terminated,
 * e.g. the GGUF tokenizer.chat_template), as Hugging Face transformers does
 * with jinja2: the variables are messages (a list of {role, content}),
 * bos_token, eos_token, add_generation_prompt, tools = none and
 * documents = none; raise_exception(), strftime_now() (giving params->date),
 * namespace(), range() and dict() are available. params->engine chooses the
 * interpreter, the family renderers, or the interpreter with the family as a
 * fallback (the default).
 *
 * The interpreter is sandboxed: a template sees only these values, cannot
 * change lists or dicts, and is stopped (LLM_ERR_UNSUPPORTED) past bounded
 * nesting, evaluation steps and output size.
 *
 * Buffer contract, NUL and error codes as for llm_chat_render(), plus:
 * LLM_ERR_BAD_FORMAT (the template has a syntax error) and
 * LLM_ERR_UNSUPPORTED (it uses Jinja features we do not implement, or no
 * family matches it for LLM_CHAT_ENGINE_FAMILY); in AUTO mode these are
 * returned only when the fallback has no family either. */
llm_status llm_chat_render_template(const char *template_str, const llm_chat_message *messages,
                                    size_t n, const llm_chat_params *params, char *out, size_t cap,
                                    size_t *out_len);

/* Like llm_chat_render_template(), but allocates the NUL-terminated result
 * with malloc(); the caller frees *out. On error *out is NULL, *out_len 0. */
llm_status llm_chat_render_template_alloc(const char *template_str, const llm_chat_message *messages,
                                          size_t n, const llm_chat_params *params, char **out,
                                          size_t *out_len);

/* Render a template string with the Jinja interpreter, its variables given
 * as a JSON object (vars_json, NUL-terminated UTF-8): an OpenAI-style chat
 * request such as {"messages": [...], "tools": [...]} where messages may carry
 * any keys (tool_calls, tool_call_id, name, reasoning_content, ...) and
 * content may be any JSON value. Every key of the object becomes a template
 * variable; the defaults it overrides are messages = [], tools = none,
 * documents = none, and bos_token, eos_token, add_generation_prompt from
 * params (params->engine is ignored: always the interpreter; params->date as
 * for llm_chat_render_template). The result is allocated as for
 * llm_chat_render_template_alloc().
 *
 * Returns LLM_OK; LLM_ERR_INVALID_ARG (NULL argument, vars_json not a JSON
 * object, or the template raised: the message is in llm_chat_last_error(),
 * with the template line when known); LLM_ERR_BAD_FORMAT (template syntax
 * error); LLM_ERR_UNSUPPORTED (a construct or limit we do not handle);
 * LLM_ERR_NO_MEMORY. */
llm_status llm_chat_render_json(const char *template_str, const char *vars_json, const llm_chat_params *params,
                                char **out, size_t *out_len);

/* The text of the last error raised by a chat function on this thread ("" if
 * none). Valid until the next chat call on the same thread. */
const char *llm_chat_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_CHAT_H */
