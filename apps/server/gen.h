/* Generation requests of llm-server (gen.c, params.c, prompt.c, stream.c,
 * greq.c). */
#ifndef LLM_SERVER_GEN_H
#define LLM_SERVER_GEN_H

#include "server.h"

#define GEN_MAX_STOPS 16

typedef struct gen_params {
    llm_sampling_params sampling;
    int32_t max_tokens;       /* 0 = to the end of the context */
    bool stream, include_usage;
    char *stops[GEN_MAX_STOPS];
    size_t n_stops;
    llm_token_bias *bias;
    size_t n_bias;
    char *grammar;            /* GBNF (the `grammar` field), malloc'd, or NULL */
    char *json_schema;        /* JSON Schema text (`json_schema`, `response_format`), malloc'd, or NULL */
    const char *constraint_param; /* the field that set one of them, for error replies */
} gen_params;

/* Parses the sampling / length / stream fields of a request body. 0, or -1
 * with an error reply set. */
int gen_params_parse(server *sv, json_t *body, gen_params *p, reply *r);
void gen_params_free(gen_params *p);

/* One generation in flight: filled by the scheduler's callback (worker
 * thread), read by the connection's thread. Freed when both have let go. */
typedef struct greq {
    server *sv;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;                 /* scheduler + connection */
    uint64_t id;
    bool chat, stream, include_usage;
    char *text;               /* stream: not yet sent; else: the whole answer */
    size_t n, cap;
    bool done;
    llm_sched_event fin;      /* the DONE event (text/message pointers cleared) */
    char msg[512];
    double t_submit, t_last;
    int32_t n_prompt;
    /* streaming output */
    int phase;
    char *out;
    size_t on, ooff, ocap;
    char cid[48];
    int64_t created;
} greq;

/* Tokens of text (malloc'd, *n set); NULL with an error reply (prompt.c). */
llm_token *prompt_tokenize(server *sv, const char *text, size_t len, unsigned flags, int32_t *n, reply *r);
/* The prompt of /v1/completions: a string, [string], or [token ids]
 * (prompt.c). NULL with an error reply. */
llm_token *completion_prompt(server *sv, json_t *p, int32_t *n, reply *r);

/* The scheduler callback (greq.c). */
void greq_on_event(const llm_sched_event *ev, void *user);
/* Drops one reference (freeing on the last). */
void greq_release(greq *g);
/* OpenAI's finish_reason and usage object of a finished request. */
const char *finish_name(llm_finish_reason f);
json_t *usage_json(const greq *g);

/* The streaming response of g (takes the connection's reference; stream.c). */
struct MHD_Response *stream_response(greq *g);

#endif
