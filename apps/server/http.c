/* The HTTP side: request bodies (bounded), the API key, and the routes, all
 * in one table (ROUTES) that names each endpoint's handler. One thread per
 * connection (libmicrohttpd), so a handler may block while its request
 * generates. Replies are built by reply.c. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "server.h"

typedef struct conn_ctx {
    char *body;
    size_t n, cap;
    bool too_big;
} conn_ctx;

/* Constant-time comparison of the presented key with the configured one. */
static bool key_ok(const char *want, const char *got) {
    if (!got) return false;
    size_t lw = strlen(want), lg = strlen(got);
    unsigned char d = (unsigned char)(lw != lg);
    for (size_t i = 0; i < lw; i++) d |= (unsigned char)(want[i] ^ (i < lg ? got[i] : 0));
    return d == 0;
}

static bool authorized(server *sv, struct MHD_Connection *c) {
    if (!sv->o.api_key) return true;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Bearer ", 7) != 0) return false;
    h += 7;
    while (*h == ' ') h++;
    return key_ok(sv->o.api_key, h);
}

/* A path of the table below starting with /v1/ is also served without it. */
static bool is(const char *url, const char *a) {
    if (strcmp(url, a) == 0) return true;
    return strncmp(a, "/v1/", 4) == 0 && strcmp(url, a + 3) == 0; /* /v1/x and /x */
}

/* GET /v1/models: the one model this server runs. */
static int handle_models(server *sv, struct MHD_Connection *c, json_t *body, reply *r) {
    (void)c;
    (void)body;
    json_t *m = json_object(), *data = json_array(), *root = json_object();
    json_object_set_new(m, "id", json_string(sv->model_id));
    json_object_set_new(m, "object", json_string("model"));
    json_object_set_new(m, "created", json_integer(sv->created));
    json_object_set_new(m, "owned_by", json_string("llm-server"));
    json_array_append_new(data, m);
    json_object_set_new(root, "object", json_string("list"));
    json_object_set_new(root, "data", data);
    reply_json(r, 200, root);
    return 0;
}

/* Every endpoint but /health (which answers without the API key, also while
 * the model loads): its path, its method (POST: the body must be a JSON
 * object) and its handler. */
static const struct route {
    const char *path;
    bool post;
    handler_fn *fn;
} ROUTES[] = {
    {"/v1/models", false, handle_models},
    {"/metrics", false, handle_metrics},                       /* metrics.c */
    {"/v1/chat/completions", true, handle_chat_completions},   /* gen.c */
    {"/v1/completions", true, handle_completions},             /* gen.c */
    {"/v1/embeddings", true, handle_embeddings},               /* embeddings.c */
    {"/tokenize", true, handle_tokenize},                      /* text.c */
    {"/detokenize", true, handle_detokenize},                  /* text.c */
    {"/apply-template", true, handle_apply_template},          /* text.c */
};

static int route(server *sv, struct MHD_Connection *c, const char *url, const char *method, conn_ctx *cc,
                  reply *r) {
    const bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
    if (strcmp(url, "/health") == 0) {
        if (!get) return reply_error(r, 405, "invalid_request_error", NULL, "use GET for /health");
        if (!atomic_load(&sv->ready))
            return reply_error(r, 503, "unavailable_error", NULL, "Loading model");
        json_t *j = json_object();
        json_object_set_new(j, "status", json_string(atomic_load(&sv->draining) ? "shutting down" : "ok"));
        return reply_json(r, 200, j);
    }
    if (!authorized(sv, c)) return reply_error(r, 401, "authentication_error", NULL, "Invalid API key");
    const struct route *rt = NULL;
    for (size_t i = 0; i < sizeof ROUTES / sizeof ROUTES[0]; i++)
        if (is(url, ROUTES[i].path)) rt = &ROUTES[i];
    if (!rt) return reply_error(r, 404, "not_found_error", NULL, "no such endpoint: %s", url);
    if (rt->post ? !post : !get)
        return reply_error(r, 405, "invalid_request_error", NULL, "use %s for %s", rt->post ? "POST" : "GET", url);
    if (!atomic_load(&sv->ready)) {
        r->retry_after = "1";
        return reply_error(r, 503, "unavailable_error", NULL, "Loading model");
    }
    if (!rt->post) return rt->fn(sv, c, NULL, r);
    if (cc->too_big) {
        metrics_outcome(&sv->met, OUT_INVALID);
        return reply_error(r, 413, "invalid_request_error", NULL, "request body larger than %d bytes",
                           sv->o.max_body);
    }
    json_error_t jerr;
    json_t *body = cc->n ? json_loadb(cc->body, cc->n, 0, &jerr) : NULL;
    if (!body || !json_is_object(body)) {
        metrics_outcome(&sv->met, OUT_INVALID);
        if (!cc->n) reply_error(r, 400, "invalid_request_error", NULL, "empty request body (a JSON object is expected)");
        else if (!body) reply_error(r, 400, "invalid_request_error", NULL, "invalid JSON at line %d column %d: %s",
                                    jerr.line, jerr.column, jerr.text);
        else reply_error(r, 400, "invalid_request_error", NULL, "the request body must be a JSON object");
        json_decref(body);
        return 0;
    }
    rt->fn(sv, c, body, r);
    json_decref(body);
    return 0;
}

enum MHD_Result http_handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                             const char *version, const char *upload, size_t *upload_size, void **ctx) {
    (void)version;
    server *sv = cls;
    conn_ctx *cc = *ctx;
    if (!cc) {
        cc = calloc(1, sizeof *cc);
        if (!cc) return MHD_NO;
        *ctx = cc;
        atomic_fetch_add(&sv->active, 1);
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > (unsigned long long)sv->o.max_body) cc->too_big = true;
        return MHD_YES;
    }
    if (*upload_size) {
        /* Past the limit the rest is read and dropped, so the client gets its 413. */
        if (!cc->too_big && cc->n + *upload_size > (size_t)sv->o.max_body) {
            cc->too_big = true;
            free(cc->body);
            cc->body = NULL;
            cc->n = cc->cap = 0;
        }
        if (!cc->too_big) {
            if (cc->n + *upload_size + 1 > cc->cap) {
                size_t cap = cc->cap ? cc->cap : 4096;
                while (cap < cc->n + *upload_size + 1) cap *= 2;
                char *b = realloc(cc->body, cap);
                if (!b) return MHD_NO;
                cc->body = b;
                cc->cap = cap;
            }
            memcpy(cc->body + cc->n, upload, *upload_size);
            cc->n += *upload_size;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    reply r;
    memset(&r, 0, sizeof r);
    route(sv, c, url, method, cc, &r);
    struct MHD_Response *resp = r.custom;
    if (!resp) {
        resp = MHD_create_response_from_buffer(r.len, r.body ? r.body : (void *)"", r.body ? MHD_RESPMEM_MUST_FREE
                                                                                          : MHD_RESPMEM_PERSISTENT);
        if (!resp) {
            free(r.body);
            return MHD_NO;
        }
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r.ctype ? r.ctype : "application/json");
    }
    if (r.retry_after) MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, r.retry_after);
    if (r.status == 401) MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    enum MHD_Result ret = MHD_queue_response(c, r.status ? r.status : 200, resp);
    MHD_destroy_response(resp);
    return ret;
}

void http_completed(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode toe) {
    (void)c;
    (void)toe;
    server *sv = cls;
    conn_ctx *cc = *ctx;
    if (cc) {
        free(cc->body);
        free(cc);
        atomic_fetch_sub(&sv->active, 1); /* the reply went out (or the client left) */
    }
    *ctx = NULL;
}
