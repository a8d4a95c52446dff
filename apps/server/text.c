/* The text endpoints, in llama.cpp's server spelling: POST /tokenize,
 * /detokenize and /apply-template (a chat request's prompt as text). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "server.h"

int handle_tokenize(server *sv, struct MHD_Connection *c, json_t *body, reply *r) {
    (void)c;
    json_t *content = json_object_get(body, "content");
    json_t *add = json_object_get(body, "add_special"), *parse = json_object_get(body, "parse_special");
    if (!json_is_string(content))
        return reply_error(r, 400, "invalid_request_error", "content", "'content' must be a string");
    if ((add && !json_is_boolean(add)) || (parse && !json_is_boolean(parse)))
        return reply_error(r, 400, "invalid_request_error", NULL, "'add_special' and 'parse_special' must be booleans");
    unsigned flags = (json_is_true(add) ? LLM_ENCODE_ADD_SPECIAL : 0) |
                     (!parse || json_is_true(parse) ? LLM_ENCODE_PARSE_SPECIAL : 0);
    size_t len = json_string_length(content);
    int32_t cap = (int32_t)(len + 16), n = 0;
    llm_token *t = malloc((size_t)cap * sizeof *t);
    llm_status st = t ? llm_tokenize(sv->model, json_string_value(content), len, flags, t, cap, &n) : LLM_ERR_NO_MEMORY;
    if (st == LLM_ERR_BUFFER_TOO_SMALL) {
        cap = -n;
        free(t);
        t = malloc((size_t)cap * sizeof *t);
        st = t ? llm_tokenize(sv->model, json_string_value(content), len, flags, t, cap, &n) : LLM_ERR_NO_MEMORY;
    }
    if (st != LLM_OK) {
        free(t);
        return reply_error(r, 400, "invalid_request_error", "content", "cannot tokenize: %s", llm_last_error());
    }
    json_t *arr = json_array();
    for (int32_t i = 0; i < n; i++) json_array_append_new(arr, json_integer(t[i]));
    free(t);
    json_t *root = json_object();
    json_object_set_new(root, "tokens", arr);
    reply_json(r, 200, root);
    return 0;
}

int handle_detokenize(server *sv, struct MHD_Connection *c, json_t *body, reply *r) {
    (void)c;
    json_t *toks = json_object_get(body, "tokens");
    if (!json_is_array(toks)) return reply_error(r, 400, "invalid_request_error", "tokens", "'tokens' must be an array");
    size_t n = json_array_size(toks), i;
    llm_token *t = malloc((n ? n : 1) * sizeof *t);
    if (!t) return reply_error(r, 500, "server_error", NULL, "out of memory");
    json_t *x;
    json_array_foreach(toks, i, x) {
        if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= sv->info.n_vocab) {
            free(t);
            return reply_error(r, 400, "invalid_request_error", "tokens", "'tokens' must hold token ids in [0, %d)",
                               sv->info.n_vocab);
        }
        t[i] = (llm_token)json_integer_value(x);
    }
    size_t cap = n * 16 + 16;
    char *buf = malloc(cap);
    int32_t got = 0;
    llm_status st = buf ? llm_detokenize(sv->model, t, (int32_t)n, true, buf, cap, &got) : LLM_ERR_NO_MEMORY;
    if (st == LLM_ERR_BUFFER_TOO_SMALL) {
        cap = (size_t)-got + 1;
        free(buf);
        buf = malloc(cap);
        st = buf ? llm_detokenize(sv->model, t, (int32_t)n, true, buf, cap, &got) : LLM_ERR_NO_MEMORY;
    }
    free(t);
    if (st != LLM_OK) {
        free(buf);
        return reply_error(r, 500, "server_error", NULL, "cannot detokenize: %s", llm_last_error());
    }
    json_t *root = json_object();
    json_object_set_new(root, "content", json_text(buf, (size_t)got));
    free(buf);
    reply_json(r, 200, root);
    return 0;
}

int handle_apply_template(server *sv, struct MHD_Connection *c, json_t *body, reply *r) {
    (void)c;
    char *text = render_messages(sv, json_object_get(body, "messages"), r);
    if (!text) return 0;
    json_t *root = json_object();
    json_object_set_new(root, "prompt", json_text(text, strlen(text)));
    free(text);
    reply_json(r, 200, root);
    return 0;
}
