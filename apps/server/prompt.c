/* Prompts: a chat request's messages rendered with the model's template
 * (/v1/chat/completions, /apply-template), a /v1/completions prompt, and
 * their tokens. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* A message's content as one string: a string, null, or an array of
 * {"type":"text","text":...} parts (joined). NULL if malformed. */
static char *content_text(json_t *c) {
    if (!c || json_is_null(c)) return strdup("");
    if (json_is_string(c)) return strndup(json_string_value(c), json_string_length(c));
    if (!json_is_array(c)) return NULL;
    size_t total = 0, i;
    json_t *part;
    json_array_foreach(c, i, part) {
        json_t *t = json_object_get(part, "text");
        if (!json_is_object(part) || !json_is_string(json_object_get(part, "type")) ||
            strcmp(json_string_value(json_object_get(part, "type")), "text") != 0 || !json_is_string(t))
            return NULL;
        total += json_string_length(t);
    }
    char *s = malloc(total + 1), *p = s;
    if (!s) return NULL;
    json_array_foreach(c, i, part) {
        json_t *t = json_object_get(part, "text");
        memcpy(p, json_string_value(t), json_string_length(t));
        p += json_string_length(t);
    }
    *p = '\0';
    return s;
}

char *render_messages(server *sv, json_t *messages, reply *r) {
    if (!json_is_array(messages) || json_array_size(messages) == 0) {
        reply_error(r, 400, "invalid_request_error", "messages", "'messages' must be a non-empty array");
        return NULL;
    }
    json_t *norm = json_array();
    size_t i;
    json_t *m;
    json_array_foreach(messages, i, m) {
        json_t *role = json_object_get(m, "role");
        if (!json_is_object(m) || !json_is_string(role)) {
            json_decref(norm);
            reply_error(r, 400, "invalid_request_error", "messages", "message %zu must be an object with a string 'role'", i);
            return NULL;
        }
        char *text = content_text(json_object_get(m, "content"));
        if (!text) {
            json_decref(norm);
            reply_error(r, 400, "invalid_request_error", "messages",
                        "message %zu: 'content' must be a string, null or an array of text parts", i);
            return NULL;
        }
        json_t *copy = json_deep_copy(m);
        json_object_set_new(copy, "content", json_string(text));
        free(text);
        json_array_append_new(norm, copy);
    }
    json_t *req = json_object();
    json_object_set_new(req, "messages", norm);
    json_object_set_new(req, "add_generation_prompt", json_true());
    char *dump = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    char *out = NULL, err[512] = "";
    size_t len = 0;
    llm_status st = dump ? llm_chat_apply_json(sv->model, NULL, dump, &out, &len, err, sizeof err) : LLM_ERR_NO_MEMORY;
    free(dump);
    if (st != LLM_OK) {
        reply_error(r, st == LLM_ERR_NO_MEMORY ? 500 : 400, "invalid_request_error", "messages",
                    "cannot apply the chat template: %s", err[0] ? err : llm_status_str(st));
        return NULL;
    }
    return out;
}

llm_token *prompt_tokenize(server *sv, const char *text, size_t len, unsigned flags, int32_t *n, reply *r) {
    int32_t cap = (int32_t)(len < 1000000 ? len + 16 : 1000016), got = 0;
    for (int tries = 0; tries < 2; tries++) {
        llm_token *t = malloc((size_t)cap * sizeof *t);
        if (!t) break;
        llm_status st = llm_tokenize(sv->model, text, len, flags, t, cap, &got);
        if (st == LLM_OK) {
            *n = got;
            return t;
        }
        free(t);
        if (st != LLM_ERR_BUFFER_TOO_SMALL) {
            reply_error(r, 400, "invalid_request_error", NULL, "cannot tokenize the prompt: %s", llm_last_error());
            return NULL;
        }
        cap = -got;
    }
    reply_error(r, 500, "server_error", NULL, "out of memory");
    return NULL;
}

llm_token *completion_prompt(server *sv, json_t *p, int32_t *n, reply *r) {
    if (json_is_array(p) && json_array_size(p) == 1 && json_is_string(json_array_get(p, 0))) p = json_array_get(p, 0);
    if (json_is_string(p))
        return prompt_tokenize(sv, json_string_value(p), json_string_length(p), LLM_ENCODE_ADD_SPECIAL | LLM_ENCODE_PARSE_SPECIAL,
                        n, r);
    if (json_is_array(p) && json_array_size(p) > 0) {
        size_t cnt = json_array_size(p), i;
        llm_token *t = malloc(cnt * sizeof *t);
        json_t *x;
        if (!t) return reply_error(r, 500, "server_error", NULL, "out of memory"), NULL;
        json_array_foreach(p, i, x) {
            if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= sv->info.n_vocab) {
                free(t);
                reply_error(r, 400, "invalid_request_error", "prompt",
                            "'prompt' must be a string, an array of one string, or an array of token ids in [0, %d)",
                            sv->info.n_vocab);
                return NULL;
            }
            t[i] = (llm_token)json_integer_value(x);
        }
        *n = (int32_t)cnt;
        return t;
    }
    reply_error(r, 400, "invalid_request_error", "prompt",
                "'prompt' must be a non-empty string, an array of one string, or an array of token ids");
    return NULL;
}
