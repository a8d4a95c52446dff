/* POST /v1/embeddings: one vector per input text (llama/engine_embed.h),
 * mean-pooled and normalized, as floats or base64 as the client asks. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "server.h"

/* The float32 values (little-endian bytes, as x86 holds them) in base64,
 * what the openai client asks for by default. */
static json_t *base64_floats(const float *v, size_t n) {
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *b = (const unsigned char *)v;
    size_t nb = n * sizeof *v, o = 0;
    char *s = malloc((nb + 2) / 3 * 4 + 1);
    if (!s) return json_string("");
    for (size_t i = 0; i < nb; i += 3) {
        unsigned x = (unsigned)b[i] << 16 | (i + 1 < nb ? (unsigned)b[i + 1] << 8 : 0) | (i + 2 < nb ? b[i + 2] : 0);
        s[o++] = A[x >> 18 & 63];
        s[o++] = A[x >> 12 & 63];
        s[o++] = i + 1 < nb ? A[x >> 6 & 63] : '=';
        s[o++] = i + 2 < nb ? A[x & 63] : '=';
    }
    json_t *j = json_stringn(s, o);
    free(s);
    return j;
}

int handle_embeddings(server *sv, struct MHD_Connection *c, json_t *body, reply *r) {
    (void)c;
    json_t *in = json_object_get(body, "input"), *fmt = json_object_get(body, "encoding_format");
    json_t *model = json_object_get(body, "model");
    if (model && !json_is_null(model) &&
        (!json_is_string(model) || (json_string_length(model) && strcmp(json_string_value(model), sv->model_id))))
        return reply_error(r, 404, "invalid_request_error", "model", "The model does not exist (this server runs '%s')",
                           sv->model_id);
    bool b64 = false;
    if (fmt && !json_is_null(fmt)) {
        b64 = json_is_string(fmt) && strcmp(json_string_value(fmt), "base64") == 0;
        if (!b64 && (!json_is_string(fmt) || strcmp(json_string_value(fmt), "float") != 0))
            return reply_error(r, 400, "invalid_request_error", "encoding_format",
                               "'encoding_format' must be 'float' or 'base64'");
    }
    size_t n = json_is_string(in) ? 1 : json_is_array(in) ? json_array_size(in) : 0;
    if (n == 0 || n > 256)
        return reply_error(r, 400, "invalid_request_error", "input",
                           "'input' must be a non-empty string or an array of 1 to 256 non-empty strings");
    const char **texts = calloc(n, sizeof *texts);
    if (!texts) return reply_error(r, 500, "server_error", NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_is_string(in) ? in : json_array_get(in, i);
        if (!json_is_string(s) || json_string_length(s) == 0 || strlen(json_string_value(s)) != json_string_length(s)) {
            free(texts);
            return reply_error(r, 400, "invalid_request_error", "input", "input %zu must be a non-empty string without NUL",
                               i);
        }
        texts[i] = json_string_value(s);
    }
    const size_t dim = (size_t)sv->info.n_embd;
    float *out = malloc(n * dim * sizeof *out);
    llm_status st = out ? llm_embed(sv->model, texts, n, LLM_POOLING_MEAN, true, out, dim) : LLM_ERR_NO_MEMORY;
    if (st != LLM_OK) {
        free(out);
        free(texts);
        return reply_error(r, st == LLM_CONTEXT_FULL || st == LLM_ERR_INVALID_ARG || st == LLM_ERR_BAD_UTF8 ? 400 : 500,
                           "invalid_request_error", "input", "%s", llm_last_error());
    }
    int64_t n_tok = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t k = 0;
        size_t len = strlen(texts[i]);
        llm_token *tk = malloc((len + 16) * sizeof *tk);
        if (tk && llm_tokenize(sv->model, texts[i], len, LLM_ENCODE_ADD_SPECIAL, tk, (int32_t)(len + 16), &k) == LLM_OK)
            n_tok += k;
        free(tk);
    }
    json_t *data = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_object(), *v = b64 ? base64_floats(out + i * dim, dim) : json_array();
        for (size_t k = 0; !b64 && k < dim; k++) json_array_append_new(v, json_real(out[i * dim + k]));
        json_object_set_new(e, "object", json_string("embedding"));
        json_object_set_new(e, "index", json_integer((json_int_t)i));
        json_object_set_new(e, "embedding", v);
        json_array_append_new(data, e);
    }
    free(out);
    free(texts);
    json_t *root = json_object(), *u = json_object();
    json_object_set_new(root, "object", json_string("list"));
    json_object_set_new(root, "data", data);
    json_object_set_new(root, "model", json_string(sv->model_id));
    json_object_set_new(u, "prompt_tokens", json_integer(n_tok));
    json_object_set_new(u, "total_tokens", json_integer(n_tok));
    json_object_set_new(root, "usage", u);
    reply_json(r, 200, root);
    return 0;
}
