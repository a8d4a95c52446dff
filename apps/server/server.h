/* llm-server: an OpenAI-compatible HTTP server on the engine's scheduler
 * (llama/engine_sched.h, continuous batching), on libmicrohttpd (one thread
 * per connection: a handler may block while its request generates) and
 * jansson.
 *
 * Files, each calling only the ones after it:
 *   main.c        options, load, signals, shutdown
 *   http.c        request bodies, the API key, the route table (every endpoint)
 *   gen.c         POST /v1/chat/completions and /v1/completions (gen.h):
 *     params.c      their parameters
 *     stream.c      a streamed answer (server-sent events)
 *     greq.c        a request in flight: the scheduler's events
 *   text.c        POST /tokenize, /detokenize, /apply-template
 *   embeddings.c  POST /v1/embeddings
 *   prompt.c      chat messages through the template, prompt tokens
 *   metrics.c     GET /metrics (Prometheus text), the counters, the clock
 *   reply.c       JSON and error replies (the leaf) */
#ifndef LLM_SERVER_H
#define LLM_SERVER_H

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "llama/engine.h"
#include "llama/engine_embed.h"
#include "llama/engine_sched.h"

#define PROG "llm-server"

typedef struct server_opts {
    const char *model, *host, *alias, *api_key, *backend;
    int32_t port, n_ctx, threads, n_parallel, kv_tokens, batch, queue;
    int32_t timeout_s;        /* slow-client inactivity timeout */
    int32_t shutdown_s;       /* SIGTERM: deadline for in-flight requests */
    int32_t max_body;         /* bytes */
    int32_t max_connections;
    llm_kv_type type_k, type_v; /* -ctk, -ctv */
    bool verbose;
} server_opts;

/* ---- metrics (metrics.c) -------------------------------------------------- */

enum { H_TTFT, H_ITL, H_E2E, H_QUEUE, H_COUNT };
#define N_BUCKETS 15
typedef struct histogram {
    uint64_t counts[N_BUCKETS + 1]; /* last: +Inf */
    double sum;
    uint64_t n;
} histogram;

enum { OUT_SUCCESS, OUT_CANCELLED, OUT_ERROR, OUT_REJECTED, OUT_INVALID, OUT_COUNT };

typedef struct metrics {
    pthread_mutex_t mu;
    histogram h[H_COUNT];
    uint64_t outcome[OUT_COUNT];
    uint64_t prompt_tokens, gen_tokens, cached_tokens;
} metrics;

/* Seconds on the monotonic clock. */
double now_s(void);

void metrics_init(metrics *m);
void metrics_observe(metrics *m, int which, double seconds);
void metrics_outcome(metrics *m, int outcome);
void metrics_tokens(metrics *m, int64_t prompt, int64_t cached, int64_t gen);

/* ---- the server ----------------------------------------------------------- */

typedef struct server {
    server_opts o;
    struct MHD_Daemon *d;
    llm_model *model;         /* NULL while loading */
    llm_sched *sched;
    llm_model_info info;
    uint64_t kv_bytes;        /* the KV pool's size (llm_memory_plan.kv_bytes) */
    char model_id[256];
    atomic_bool ready, draining;
    atomic_int inflight;      /* generation requests the scheduler holds */
    atomic_int active;        /* HTTP requests between their first byte and their reply's end */
    metrics met;
    int64_t created;          /* unix time for /v1/models */
} server;

/* A reply built by a handler: status, JSON or text body, extra header. */
typedef struct reply {
    unsigned status;
    char *body;               /* malloc'd */
    size_t len;
    const char *ctype;
    const char *retry_after;  /* Retry-After value or NULL */
    struct MHD_Response *custom; /* a ready response (streaming), queued as is */
} reply;

/* ---- replies (reply.c) ------------------------------------------------------ */

/* Sets an OpenAI-style error reply: {"error":{"message","type","param","code"}}. */
int reply_error(reply *r, unsigned status, const char *type, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Sets a JSON reply from `j` (reference stolen). */
int reply_json(reply *r, unsigned status, json_t *j);
/* UTF-8 text as a JSON string value (invalid bytes become U+FFFD). */
json_t *json_text(const char *s, size_t n);

/* ---- handlers (the route table of http.c) ------------------------------------ */

/* An endpoint: `body` is the request's JSON object for a POST (checked to
 * be one), NULL for a GET. Sets *r and returns 0. */
typedef int handler_fn(server *sv, struct MHD_Connection *c, json_t *body, reply *r);

int handle_chat_completions(server *sv, struct MHD_Connection *c, json_t *body, reply *r); /* gen.c */
int handle_completions(server *sv, struct MHD_Connection *c, json_t *body, reply *r);      /* gen.c */
int handle_tokenize(server *sv, struct MHD_Connection *c, json_t *body, reply *r);         /* text.c */
int handle_detokenize(server *sv, struct MHD_Connection *c, json_t *body, reply *r);       /* text.c */
int handle_apply_template(server *sv, struct MHD_Connection *c, json_t *body, reply *r);   /* text.c */
int handle_embeddings(server *sv, struct MHD_Connection *c, json_t *body, reply *r);       /* embeddings.c */
int handle_metrics(server *sv, struct MHD_Connection *c, json_t *body, reply *r);          /* metrics.c */

/* Routes one request (http.c); the MHD access handler. */
enum MHD_Result http_handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                             const char *version, const char *upload, size_t *upload_size, void **ctx);
void http_completed(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode toe);

/* Renders the request's messages with the model's template (prompt.c; for
 * chat completions and /apply-template). On failure sets an error reply and
 * returns NULL. */
char *render_messages(server *sv, json_t *messages, reply *r);

#endif
