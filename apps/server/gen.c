/* POST /v1/chat/completions and /v1/completions: the parameters
 * (params.c), the prompt (prompt.c), submission to the scheduler (whose
 * events greq.c records), and the answer, whole or streamed (stream.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "gen.h"

/* True when the peer closed its side of the connection. */
static bool peer_gone(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return false;
    struct pollfd pf = {ci->connect_fd, POLLIN | POLLRDHUP, 0};
    if (poll(&pf, 1, 0) <= 0) return false;
    if (pf.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
    char ch;
    ssize_t k = recv(ci->connect_fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT);
    return k == 0;
}

static json_t *whole_answer(const greq *g, const char *model) {
    json_t *root = json_object(), *choice = json_object(), *choices = json_array();
    json_object_set_new(root, "id", json_string(g->cid));
    json_object_set_new(root, "object", json_string(g->chat ? "chat.completion" : "text_completion"));
    json_object_set_new(root, "created", json_integer(g->created));
    json_object_set_new(root, "model", json_string(model));
    json_object_set_new(choice, "index", json_integer(0));
    json_t *text = json_text(g->text ? g->text : "", g->n);
    if (g->chat) {
        json_t *msg = json_object();
        json_object_set_new(msg, "role", json_string("assistant"));
        json_object_set_new(msg, "content", text);
        json_object_set_new(choice, "message", msg);
    } else {
        json_object_set_new(choice, "text", text);
    }
    json_object_set_new(choice, "logprobs", json_null());
    json_object_set_new(choice, "finish_reason", json_string(finish_name(g->fin.finish)));
    json_array_append_new(choices, choice);
    json_object_set_new(root, "choices", choices);
    json_object_set_new(root, "usage", usage_json(g));
    return root;
}

/* True when a failed submit's message is about the request's constraint
 * (llm_session_set_constraint names its messages so): a client error, even
 * where its status (LLM_ERR_EXHAUSTED: a schema too large) would mean a busy
 * server for another request. */
static bool constraint_error(const char *msg) {
    return strncmp(msg, "grammar", 7) == 0 || strncmp(msg, "json_schema", 11) == 0 ||
           strncmp(msg, "constraint", 10) == 0;
}

static int generate(server *sv, struct MHD_Connection *c, json_t *body, bool chat, reply *r) {
    if (atomic_load(&sv->draining)) {
        r->retry_after = "5";
        metrics_outcome(&sv->met, OUT_REJECTED);
        return reply_error(r, 503, "unavailable_error", NULL, "the server is shutting down");
    }
    gen_params gp;
    if (gen_params_parse(sv, body, &gp, r)) {
        gen_params_free(&gp);
        metrics_outcome(&sv->met, OUT_INVALID);
        return 0;
    }
    llm_token *toks = NULL;
    int32_t n = 0;
    if (chat) {
        char *text = render_messages(sv, json_object_get(body, "messages"), r);
        if (text) toks = prompt_tokenize(sv, text, strlen(text), LLM_ENCODE_PARSE_SPECIAL, &n, r);
        free(text);
    } else {
        toks = completion_prompt(sv, json_object_get(body, "prompt"), &n, r);
    }
    if (toks && n == 0) {
        free(toks);
        toks = NULL;
        reply_error(r, 400, "invalid_request_error", "prompt", "the prompt is empty");
    }
    if (toks && n > sv->info.n_ctx) {
        free(toks);
        toks = NULL;
        reply_error(r, 400, "invalid_request_error", chat ? "messages" : "prompt",
                    "the prompt has %d tokens, longer than the context size of %d tokens", n, sv->info.n_ctx);
    }
    if (!toks) {
        gen_params_free(&gp);
        metrics_outcome(&sv->met, OUT_INVALID);
        return 0;
    }
    greq *g = calloc(1, sizeof *g);
    if (!g) {
        free(toks);
        gen_params_free(&gp);
        return reply_error(r, 500, "server_error", NULL, "out of memory");
    }
    g->sv = sv;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->refs = 2;
    g->chat = chat;
    g->stream = gp.stream;
    g->include_usage = gp.include_usage;
    g->created = (int64_t)time(NULL);
    g->n_prompt = n;
    static _Atomic uint64_t seq;
    snprintf(g->cid, sizeof g->cid, "%s-%lld-%llu", chat ? "chatcmpl" : "cmpl", (long long)g->created,
             (unsigned long long)++seq);
    llm_sched_request q = llm_sched_default_request();
    q.prompt = toks;
    q.n_prompt = n;
    q.max_tokens = gp.max_tokens;
    q.sampling = gp.sampling;
    q.stops = (const char *const *)gp.stops;
    q.n_stops = gp.n_stops;
    q.bias = gp.bias;
    q.n_bias = gp.n_bias;
    llm_constraint con = {0};
    con.grammar = gp.grammar;
    con.json_schema = gp.json_schema;
    if (gp.grammar || gp.json_schema) q.constraint = &con;
    q.callback = greq_on_event;
    q.user = g;
    g->t_submit = now_s();
    atomic_fetch_add(&sv->inflight, 1);
    llm_status st = llm_sched_submit(sv->sched, &q, &g->id);
    free(toks);
    const char *cparam = gp.constraint_param;
    gen_params_free(&gp);
    if (st != LLM_OK) {
        atomic_fetch_sub(&sv->inflight, 1);
        g->refs = 1;
        greq_release(g);
        if (cparam && constraint_error(llm_last_error())) {
            metrics_outcome(&sv->met, OUT_INVALID);
            return reply_error(r, 400, "invalid_request_error", cparam, "%s", llm_last_error());
        }
        if (st == LLM_ERR_EXHAUSTED || st == LLM_ERR_STATE) {
            r->retry_after = "1";
            metrics_outcome(&sv->met, OUT_REJECTED);
            return reply_error(r, 503, "unavailable_error", NULL, "server busy: %s", llm_last_error());
        }
        metrics_outcome(&sv->met, OUT_INVALID);
        return reply_error(r, st == LLM_CONTEXT_FULL || st == LLM_ERR_INVALID_ARG ? 400 : 500,
                           st == LLM_CONTEXT_FULL || st == LLM_ERR_INVALID_ARG ? "invalid_request_error" : "server_error",
                           NULL, "%s", llm_last_error());
    }
    if (g->stream) {
        r->custom = stream_response(g);
        r->status = 200;
        if (!r->custom) {
            llm_sched_cancel(sv->sched, g->id);
            greq_release(g);
            reply_error(r, 500, "server_error", NULL, "out of memory");
        }
        return 0;
    }
    /* Whole answer: wait, watching for a client that goes away. */
    pthread_mutex_lock(&g->mu);
    bool cancelled = false;
    while (!g->done) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&g->cv, &g->mu, &ts);
        if (!g->done && !cancelled && peer_gone(c)) {
            cancelled = true;
            pthread_mutex_unlock(&g->mu);
            llm_sched_cancel(sv->sched, g->id);
            pthread_mutex_lock(&g->mu);
        }
    }
    pthread_mutex_unlock(&g->mu);
    if (g->fin.finish == LLM_FINISH_ERROR)
        reply_error(r, 500, "server_error", NULL, "generation failed: %s", g->msg);
    else if (g->fin.finish == LLM_FINISH_CANCELLED)
        reply_error(r, 503, "unavailable_error", NULL, "the request was cancelled (client gone or server shutting down)");
    else
        reply_json(r, 200, whole_answer(g, sv->model_id));
    greq_release(g);
    return 0;
}

int handle_chat_completions(server *sv, struct MHD_Connection *c, json_t *body, reply *r) {
    return generate(sv, c, body, true, r);
}

int handle_completions(server *sv, struct MHD_Connection *c, json_t *body, reply *r) {
    return generate(sv, c, body, false, r);
}
