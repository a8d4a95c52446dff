/* The server's counters and clock, which the other files record into, and
 * GET /metrics: Prometheus text exposition (version 0.0.4). Latencies are
 * measured on the server side: time to first token and end-to-end from the
 * moment the request was submitted, inter-token between sampled tokens,
 * queue time as the scheduler reports it. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"

double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const double BUCKETS[N_BUCKETS] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                          1,     2.5,   5,    10,    30,    60,  120};

void metrics_init(metrics *m) {
    memset(m, 0, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
}

void metrics_observe(metrics *m, int which, double s) {
    if (s < 0) s = 0;
    pthread_mutex_lock(&m->mu);
    histogram *h = &m->h[which];
    int b = 0;
    while (b < N_BUCKETS && s > BUCKETS[b]) b++;
    h->counts[b]++;
    h->sum += s;
    h->n++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_outcome(metrics *m, int outcome) {
    pthread_mutex_lock(&m->mu);
    m->outcome[outcome]++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_tokens(metrics *m, int64_t prompt, int64_t cached, int64_t gen) {
    pthread_mutex_lock(&m->mu);
    m->prompt_tokens += (uint64_t)prompt;
    m->cached_tokens += (uint64_t)cached;
    m->gen_tokens += (uint64_t)gen;
    pthread_mutex_unlock(&m->mu);
}

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(sbuf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) return;
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 8192;
        while (cap < b->n + (size_t)k + 1) cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) return;
        b->p = np;
        b->cap = cap;
    }
}

static void hist(sbuf *b, const histogram *h, const char *name, const char *help) {
    add(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    uint64_t cum = 0;
    for (int i = 0; i < N_BUCKETS; i++) {
        cum += h->counts[i];
        add(b, "%s_bucket{le=\"%g\"} %llu\n", name, BUCKETS[i], (unsigned long long)cum);
    }
    cum += h->counts[N_BUCKETS];
    add(b, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n%s_count %llu\n", name, (unsigned long long)cum, name, h->sum,
        name, (unsigned long long)h->n);
}

static void scalar(sbuf *b, const char *name, const char *type, const char *help, double v) {
    add(b, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name, v);
}

int handle_metrics(server *sv, struct MHD_Connection *c, json_t *body, reply *r) {
    (void)c;
    (void)body;
    llm_sched_stats st;
    memset(&st, 0, sizeof st);
    if (sv->sched) llm_sched_get_stats(sv->sched, &st);
    metrics m;
    pthread_mutex_lock(&sv->met.mu);
    m = sv->met;
    pthread_mutex_unlock(&sv->met.mu);
    sbuf b = {0};
    static const char *const names[OUT_COUNT] = {"success", "cancelled", "error", "rejected", "invalid"};
    add(&b, "# HELP llm_requests_total Generation requests by outcome (rejected: queue full or shutting down; "
            "invalid: a 4xx before submission).\n# TYPE llm_requests_total counter\n");
    for (int i = 0; i < OUT_COUNT; i++)
        add(&b, "llm_requests_total{outcome=\"%s\"} %llu\n", names[i], (unsigned long long)m.outcome[i]);
    scalar(&b, "llm_requests_running", "gauge", "Requests in the scheduler's running set.", st.running);
    scalar(&b, "llm_requests_waiting", "gauge", "Requests queued for admission.", st.waiting);
    hist(&b, &m.h[H_TTFT], "llm_time_to_first_token_seconds", "Submission to the first generated token.");
    hist(&b, &m.h[H_ITL], "llm_inter_token_latency_seconds", "Time between consecutive generated tokens.");
    hist(&b, &m.h[H_E2E], "llm_e2e_request_latency_seconds", "Submission to the end of the request.");
    hist(&b, &m.h[H_QUEUE], "llm_request_queue_time_seconds", "Submission to admission into the running set.");
    scalar(&b, "llm_prompt_tokens_total", "counter", "Prompt tokens of finished requests.", (double)m.prompt_tokens);
    scalar(&b, "llm_prompt_cached_tokens_total", "counter", "Prompt tokens served from the prefix cache.",
           (double)m.cached_tokens);
    scalar(&b, "llm_generation_tokens_total", "counter", "Tokens generated.", (double)m.gen_tokens);
    scalar(&b, "llm_kv_blocks_used", "gauge", "KV blocks held by running requests.", st.kv_blocks_used);
    scalar(&b, "llm_kv_blocks_cached", "gauge", "Unreferenced KV blocks kept by the prefix cache.", st.kv_blocks_cached);
    scalar(&b, "llm_kv_blocks_total", "gauge", "KV blocks in the pool.", st.kv_blocks_total);
    scalar(&b, "llm_kv_cache_bytes", "gauge", "Bytes of the KV pool, in its cache types (-ctk, -ctv).",
           (double)sv->kv_bytes);
    scalar(&b, "llm_kv_swa_blocks_used", "gauge", "KV blocks held in the sliding-window layers' own pool.",
           st.kv_swa_blocks_used);
    scalar(&b, "llm_kv_swa_blocks_total", "gauge", "KV blocks in the sliding-window layers' own pool (0: none).",
           st.kv_swa_blocks_total);
    scalar(&b, "llm_prefix_cache_queries_total", "counter", "Prefix-cache lookups.", (double)st.prefix_queries);
    scalar(&b, "llm_prefix_cache_hit_blocks_total", "counter", "Full KV blocks found in the prefix cache.",
           (double)st.prefix_hit_blocks);
    scalar(&b, "llm_prefix_cache_miss_blocks_total", "counter", "Full KV blocks looked up and not found.",
           (double)st.prefix_miss_blocks);
    scalar(&b, "llm_preemptions_total", "counter", "Requests preempted for KV blocks (recomputed later).",
           (double)st.preemptions);
    scalar(&b, "llm_scheduler_steps_total", "counter", "Forward passes run by the scheduler.", (double)st.steps);
    r->status = 200;
    r->body = b.p;
    r->len = b.n;
    r->ctype = "text/plain; version=0.0.4; charset=utf-8";
    if (!r->body) reply_error(r, 500, "server_error", NULL, "out of memory");
    return 0;
}
