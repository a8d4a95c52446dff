/* POST /v1/chat/completions and /v1/completions: the prompt (chat template
 * or text), the parameters, submission to the scheduler, and the answer,
 * whole or streamed (stream.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "gen.h"

/* ---- text helpers ---------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t k;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) k = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) k = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) k = 4, min = 0x10000;
    else return 0;
    if (n < k) return 0;
    unsigned cp = c & (0xFFu >> (k + 1));
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return k;
}

json_t *json_text(const char *s, size_t n) {
    json_t *j = json_stringn(s, n);
    if (j) return j;
    char *b = malloc(n * 3 + 1);
    if (!b) return json_string("");
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq((const unsigned char *)s + i, n - i);
        if (k) {
            memcpy(b + o, s + i, k);
            o += k;
            i += k;
        } else {
            memcpy(b + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    j = json_stringn(b, o);
    free(b);
    return j ? j : json_string("");
}

const char *finish_name(llm_finish_reason f) { return f == LLM_FINISH_LENGTH ? "length" : "stop"; }

json_t *usage_json(const greq *g) {
    json_t *u = json_object();
    json_object_set_new(u, "prompt_tokens", json_integer(g->fin.prompt_tokens));
    json_object_set_new(u, "completion_tokens", json_integer(g->fin.completion_tokens));
    json_object_set_new(u, "total_tokens", json_integer(g->fin.prompt_tokens + g->fin.completion_tokens));
    json_t *d = json_object();
    json_object_set_new(d, "cached_tokens", json_integer(g->fin.cached_tokens));
    json_object_set_new(u, "prompt_tokens_details", d);
    return u;
}

/* ---- the prompt ------------------------------------------------------------- */

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

/* Tokens of text (malloc'd, *n set); NULL with an error reply. */
static llm_token *tokenize(server *sv, const char *text, size_t len, unsigned flags, int32_t *n, reply *r) {
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

/* The prompt of /v1/completions: a string, [string], or [token ids]. */
static llm_token *completion_prompt(server *sv, json_t *p, int32_t *n, reply *r) {
    if (json_is_array(p) && json_array_size(p) == 1 && json_is_string(json_array_get(p, 0))) p = json_array_get(p, 0);
    if (json_is_string(p))
        return tokenize(sv, json_string_value(p), json_string_length(p), LLM_ENCODE_ADD_SPECIAL | LLM_ENCODE_PARSE_SPECIAL,
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

/* ---- requests in flight ------------------------------------------------------ */

void greq_release(greq *g) {
    pthread_mutex_lock(&g->mu);
    int left = --g->refs;
    pthread_mutex_unlock(&g->mu);
    if (left) return;
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    free(g->text);
    free(g->out);
    free(g);
}

static void append(greq *g, const char *s, size_t n) {
    if (g->n + n + 1 > g->cap) {
        size_t cap = g->cap ? g->cap : 256;
        while (cap < g->n + n + 1) cap *= 2;
        char *t = realloc(g->text, cap);
        if (!t) return; /* the text is lost, the request goes on */
        g->text = t;
        g->cap = cap;
    }
    memcpy(g->text + g->n, s, n);
    g->n += n;
    g->text[g->n] = '\0';
}

void greq_on_event(const llm_sched_event *ev, void *user) {
    greq *g = user;
    metrics *met = &g->sv->met;
    double t = now_s();
    pthread_mutex_lock(&g->mu);
    if (ev->kind == LLM_SCHED_TEXT) {
        if (ev->token != LLM_TOKEN_NULL) {
            if (g->t_last > 0) metrics_observe(met, H_ITL, t - g->t_last);
            else metrics_observe(met, H_TTFT, t - g->t_submit);
            g->t_last = t;
        }
        append(g, ev->text, ev->len);
        pthread_cond_broadcast(&g->cv);
        pthread_mutex_unlock(&g->mu);
        return;
    }
    g->fin = *ev;
    g->fin.text = NULL;
    snprintf(g->msg, sizeof g->msg, "%s", ev->message ? ev->message : "");
    g->fin.message = NULL;
    g->done = true;
    metrics_observe(met, H_E2E, t - g->t_submit);
    metrics_observe(met, H_QUEUE, ev->queue_ms / 1e3);
    metrics_tokens(met, ev->prompt_tokens, ev->cached_tokens, ev->completion_tokens);
    metrics_outcome(met, ev->finish == LLM_FINISH_CANCELLED ? OUT_CANCELLED
                         : ev->finish == LLM_FINISH_ERROR   ? OUT_ERROR
                                                            : OUT_SUCCESS);
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    atomic_fetch_sub(&g->sv->inflight, 1);
    greq_release(g);
}

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

int handle_chat(server *sv, struct MHD_Connection *c, json_t *body, bool chat, reply *r) {
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
        if (text) toks = tokenize(sv, text, strlen(text), LLM_ENCODE_PARSE_SPECIAL, &n, r);
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
    q.callback = greq_on_event;
    q.user = g;
    g->t_submit = now_s();
    atomic_fetch_add(&sv->inflight, 1);
    llm_status st = llm_sched_submit(sv->sched, &q, &g->id);
    free(toks);
    gen_params_free(&gp);
    if (st != LLM_OK) {
        atomic_fetch_sub(&sv->inflight, 1);
        g->refs = 1;
        greq_release(g);
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
