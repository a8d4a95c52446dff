/* Streaming answers, as OpenAI sends them (server-sent events):
 *
 *   data: {chunk}\n\n          chat: first a delta with the role, then one per
 *                              piece of text; completions: text chunks
 *   data: {final chunk}\n\n    empty delta, finish_reason
 *   data: {usage chunk}\n\n    choices [], usage (stream_options.include_usage)
 *   data: [DONE]\n\n
 *
 * A comment line ": keep-alive" goes out after each second of silence (a
 * long prefill, a long queue), which also finds a client that went away: the
 * write fails, libmicrohttpd ends the connection and frees the response,
 * and its free callback cancels the request, whose KV blocks the scheduler
 * frees at its next step. An error after the headers is sent as an error
 * event: data: {"error":{...}}. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h"

enum { PH_ROLE, PH_TEXT, PH_USAGE, PH_DONE, PH_END };

static void out_add(greq *g, const char *s, size_t n) {
    if (g->on + n > g->ocap) {
        size_t cap = g->ocap ? g->ocap : 1024;
        while (cap < g->on + n) cap *= 2;
        char *o = realloc(g->out, cap);
        if (!o) return;
        g->out = o;
        g->ocap = cap;
    }
    memcpy(g->out + g->on, s, n);
    g->on += n;
}

/* Adds "data: <json>\n\n" (steals j). */
static void out_event(greq *g, json_t *j) {
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!s) return;
    out_add(g, "data: ", 6);
    out_add(g, s, strlen(s));
    out_add(g, "\n\n", 2);
    free(s);
}

static json_t *chunk(const greq *g, json_t *text, const char *finish, bool role) {
    json_t *root = json_object(), *choice = json_object(), *choices = json_array();
    json_object_set_new(root, "id", json_string(g->cid));
    json_object_set_new(root, "object", json_string(g->chat ? "chat.completion.chunk" : "text_completion"));
    json_object_set_new(root, "created", json_integer(g->created));
    json_object_set_new(root, "model", json_string(g->sv->model_id));
    json_object_set_new(choice, "index", json_integer(0));
    if (g->chat) {
        json_t *delta = json_object();
        if (role) json_object_set_new(delta, "role", json_string("assistant"));
        if (text) json_object_set_new(delta, "content", text);
        json_object_set_new(choice, "delta", delta);
    } else {
        json_object_set_new(choice, "text", text ? text : json_string(""));
    }
    json_object_set_new(choice, "logprobs", json_null());
    json_object_set_new(choice, "finish_reason", finish ? json_string(finish) : json_null());
    json_array_append_new(choices, choice);
    json_object_set_new(root, "choices", choices);
    if (g->include_usage) json_object_set_new(root, "usage", json_null());
    return root;
}

/* Produces the next piece of output into g->out (mutex held). */
static void produce(greq *g) {
    switch (g->phase) {
    case PH_ROLE:
        g->phase = PH_TEXT;
        if (g->chat) out_event(g, chunk(g, json_string(""), NULL, true));
        return;
    case PH_TEXT: {
        if (g->n == 0 && !g->done) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&g->cv, &g->mu, &ts);
            if (g->n == 0 && !g->done) {
                out_add(g, ": keep-alive\n\n", 14);
                return;
            }
        }
        if (g->n) {
            out_event(g, chunk(g, json_text(g->text, g->n), NULL, false));
            g->n = 0;
            return;
        }
        /* done */
        if (g->fin.finish == LLM_FINISH_ERROR || g->fin.finish == LLM_FINISH_CANCELLED) {
            json_t *e = json_object(), *root = json_object();
            char m[600];
            snprintf(m, sizeof m, "%s%s", g->fin.finish == LLM_FINISH_ERROR ? "generation failed: " : "cancelled: ",
                     g->fin.finish == LLM_FINISH_ERROR ? g->msg : "the server is shutting down");
            json_object_set_new(e, "message", json_text(m, strlen(m)));
            json_object_set_new(e, "type", json_string("server_error"));
            json_object_set_new(e, "param", json_null());
            json_object_set_new(e, "code", json_integer(g->fin.finish == LLM_FINISH_ERROR ? 500 : 503));
            json_object_set_new(root, "error", e);
            out_event(g, root);
            g->phase = PH_END;
            return;
        }
        out_event(g, chunk(g, NULL, finish_name(g->fin.finish), false));
        g->phase = PH_USAGE;
        return;
    }
    case PH_USAGE:
        g->phase = PH_DONE;
        if (g->include_usage) {
            json_t *root = json_object();
            json_object_set_new(root, "id", json_string(g->cid));
            json_object_set_new(root, "object", json_string(g->chat ? "chat.completion.chunk" : "text_completion"));
            json_object_set_new(root, "created", json_integer(g->created));
            json_object_set_new(root, "model", json_string(g->sv->model_id));
            json_object_set_new(root, "choices", json_array());
            json_object_set_new(root, "usage", usage_json(g));
            out_event(g, root);
        }
        return;
    case PH_DONE:
        out_add(g, "data: [DONE]\n\n", 14);
        g->phase = PH_END;
        return;
    default:
        return;
    }
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    greq *g = cls;
    pthread_mutex_lock(&g->mu);
    while (g->ooff >= g->on) {
        g->on = g->ooff = 0;
        if (g->phase == PH_END) {
            pthread_mutex_unlock(&g->mu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        produce(g);
    }
    size_t k = g->on - g->ooff < max ? g->on - g->ooff : max;
    memcpy(buf, g->out + g->ooff, k);
    g->ooff += k;
    pthread_mutex_unlock(&g->mu);
    return (ssize_t)k;
}

static void reader_free(void *cls) {
    greq *g = cls;
    pthread_mutex_lock(&g->mu);
    bool done = g->done;
    pthread_mutex_unlock(&g->mu);
    if (!done) llm_sched_cancel(g->sv->sched, g->id); /* the client went away */
    greq_release(g);
}

struct MHD_Response *stream_response(greq *g) {
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, reader, g, reader_free);
    if (!r) return NULL;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return r;
}
