/* One generation in flight (greq, gen.h): the scheduler's events recorded
 * for the connection's thread, the reference count both share, and the
 * pieces of an answer's JSON that whole and streamed answers both send. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

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
