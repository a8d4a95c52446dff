/*
 * llm-bench: prompt-processing and generation speed, measured the way
 * llama.cpp's llama-bench measures it, so the two print comparable figures.
 *
 *   llm-bench [-m MODEL]... [-p N,..] [-n N,..] [-pg P,N]... [-d N,..] [-b N,..]
 *             [-t N,..] [-r N] [--sessions N] [-o md|json|jsonl] [--no-warmup]
 *             [--peak] [--peak-mib N]
 *
 * Tests (as llama-bench): ppP processes a P-token prompt in forward passes of
 * at most -b tokens; tgN generates N tokens, one forward pass of one token
 * each (the token fed is a fixed pseudo-random id, not sampled: sampling is
 * not part of the figure, as in llama-bench); pgP,N does both. -d D first
 * fills the context with D tokens (not timed). Each test runs once to warm up
 * (page faults of the mapped weights, caches), then -r times; the figure is
 * tokens / seconds per run, reported as median and spread (stddev, min..max)
 * in a markdown table, or with llama-bench's JSON field names (-o json).
 *
 * Generation reads every weight once per token, so tg tests also report the
 * bytes read per token (weights as the engine counts them, plus the K/V of
 * the context at its mid-point) and the implied read bandwidth. A model whose
 * token embedding is not the output matrix reads only one embedding row per
 * token, so there the figure overstates the bytes by that matrix.
 *
 * --sessions N runs the test as N requests at once through the engine's
 * scheduler (llm_sched, as llm-server serves them): every step is one
 * forward pass holding each running request's next token, so the weights are
 * read once per step for all N. The figure is all N requests' tokens over
 * the time. tgN: each request's prompt is the depth's D tokens (at least 1,
 * different per request), not timed; the clock runs from the step that gave
 * every request its first token to the last request's end, N x N tokens
 * (greedy, end-of-generation tokens banned so every request runs to its
 * length). ppP (pgP,G): N prompts of P tokens, each ending after its
 * first token (after G more), timed from submission to the last end (the
 * scheduler packs the prompts into passes of -b tokens). A depth applies to
 * tg tests only.
 *
 * --peak measures this machine's limits on the -t thread counts: memory read
 * bandwidth over a --peak-mib buffer (default 1024) and the int8 / fp32
 * arithmetic peaks of register-only loops (peak.c); the tg rows then show
 * their bandwidth as a share of the measured one. --peak without -m measures
 * only the machine.
 *
 * The prefix cache is off (a repeated prompt would otherwise be reused, not
 * computed). Uses only the engine's public API (llama/engine.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app_cache_type.h"
#include "app_common.h"
#include "bench.h"
#include "llama/engine.h"
#include "llama/engine_sched.h"

#define PROG "llm-bench"
#define MAXV 32

typedef struct {
    int32_t v[MAXV];
    int n;
} ilist;

typedef struct {
    const char *models[MAXV];
    int n_models;
    ilist p, n, d, b, t;
    int32_t pg[MAXV][2];
    int n_pg;
    int32_t reps, sessions, peak_mib;
    int warmup, peak;
    const char *out; /* md | json | jsonl */
    llm_kv_type type_k, type_v; /* -ctk, -ctv */
} opts;

typedef struct {
    int32_t n_prompt, n_gen, n_depth;
} test_shape;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec;
}

/* "a,b,c" of integers in [lo, hi]; appends to l. */
static int parse_list(const char *opt, const char *s, int32_t lo, int32_t hi, ilist *l) {
    if (app_need_value(PROG, opt, s)) return -1;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (l->n >= MAXV) {
            fprintf(stderr, "%s: %s: at most %d values\n", PROG, opt, MAXV);
            return -1;
        }
        if (strcmp(opt, "-t") == 0) {
            if (app_parse_threads(PROG, opt, tok, &l->v[l->n])) return -1;
        } else if (app_parse_i32(PROG, opt, tok, lo, hi, &l->v[l->n])) {
            return -1;
        }
        l->n++;
    }
    return 0;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: %s [-m MODEL]... [-p N,..] [-n N,..] [-pg P,N]... [-d N,..] [-b N,..] [-t N,..]\n"
            "          [-r N] [--sessions N] [-o md|json|jsonl] [--no-warmup] [--peak] [--peak-mib N]\n"
            "  -m MODEL      model file (repeat for several; default: the default model)\n"
            "  -p N,..       prompt sizes, one ppN test each (default 512; 0 = none)\n"
            "  -n N,..       generation sizes, one tgN test each (default 128; 0 = none)\n"
            "  -pg P,N       a prompt of P then N generated tokens (repeatable)\n"
            "  -d N,..       context depth filled before each test, not timed (default 0)\n"
            "  -b N,..       most prompt tokens per forward pass (default 512)\n"
            "  -t N,..       threads (default: all CPUs)\n"
            "  -ctk T, -ctv T  K and V cache types (f16, f32, bf16, q8_0, q4_0, q4_1, q5_0, q5_1)\n"
            "  -r N          timed runs per test (default 5)\n"
            "  --sessions N  N requests at once through the engine's scheduler (batched decode)\n"
            "  -o FMT        md (default), json or jsonl (llama-bench's field names)\n"
            "  --no-warmup   skip the untimed warm-up run\n"
            "  --peak        measure memory read bandwidth and int8/fp32 peaks\n"
            "  --peak-mib N  buffer size of the bandwidth test (default 1024)\n"
            "environment: LLM_CPU_KERNELS=avx2|avx-vnni|scalar caps the CPU kernels (default: the\n"
            "  best this CPU has), e.g. to compare with a llama.cpp built for that instruction set\n",
            PROG);
}

static int parse_opts(int argc, char **argv, opts *o) {
    memset(o, 0, sizeof *o);
    o->reps = 5;
    o->sessions = 1;
    o->warmup = 1;
    o->peak_mib = 1024;
    o->out = "md";
    int model_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int is_v = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(app_finish_stdout(PROG));
        } else if (strcmp(a, "-m") == 0) {
            if (app_need_value(PROG, a, v)) return -1;
            if (o->n_models >= MAXV) {
                fprintf(stderr, "%s: at most %d models\n", PROG, MAXV);
                return -1;
            }
            o->models[o->n_models++] = v;
            model_given = 1;
            i++;
        } else if (strcmp(a, "-p") == 0) {
            if (parse_list(a, v, 0, 1 << 20, &o->p)) return -1;
            i++;
        } else if (strcmp(a, "-n") == 0) {
            if (parse_list(a, v, 0, 1 << 20, &o->n)) return -1;
            i++;
        } else if (strcmp(a, "-d") == 0) {
            if (parse_list(a, v, 0, 1 << 20, &o->d)) return -1;
            i++;
        } else if (strcmp(a, "-b") == 0) {
            if (parse_list(a, v, 1, 1 << 16, &o->b)) return -1;
            i++;
        } else if (strcmp(a, "-t") == 0) {
            if (parse_list(a, v, 0, 1 << 20, &o->t)) return -1;
            i++;
        } else if (strcmp(a, "-pg") == 0) {
            ilist l = {{0}, 0};
            if (parse_list(a, v, 0, 1 << 20, &l)) return -1;
            if (l.n != 2 || o->n_pg >= MAXV) {
                fprintf(stderr, "%s: -pg expects P,N (two numbers), got '%s'\n", PROG, v);
                return -1;
            }
            o->pg[o->n_pg][0] = l.v[0];
            o->pg[o->n_pg][1] = l.v[1];
            o->n_pg++;
            i++;
        } else if (strcmp(a, "-r") == 0) {
            if (app_need_value(PROG, a, v) || app_parse_i32(PROG, a, v, 1, 1000, &o->reps)) return -1;
            i++;
        } else if (strcmp(a, "--sessions") == 0) {
            if (app_need_value(PROG, a, v) || app_parse_i32(PROG, a, v, 1, 256, &o->sessions)) return -1;
            i++;
        } else if (strcmp(a, "--peak-mib") == 0) {
            if (app_need_value(PROG, a, v) || app_parse_i32(PROG, a, v, 16, 1 << 16, &o->peak_mib)) return -1;
            i++;
        } else if (strcmp(a, "-o") == 0) {
            if (app_need_value(PROG, a, v)) return -1;
            if (strcmp(v, "md") && strcmp(v, "json") && strcmp(v, "jsonl")) {
                fprintf(stderr, "%s: -o expects md, json or jsonl, got '%s'\n", PROG, v);
                return -1;
            }
            o->out = v;
            i++;
        } else if (app_is_cache_type_opt(a, &is_v)) {
            if (app_need_value(PROG, a, v) || app_parse_cache_type(PROG, a, v, is_v ? &o->type_v : &o->type_k))
                return -1;
            i++;
        } else if (strcmp(a, "--no-warmup") == 0) {
            o->warmup = 0;
        } else if (strcmp(a, "--peak") == 0) {
            o->peak = 1;
        } else {
            fprintf(stderr, "%s: unknown option '%s'\n", PROG, a);
            usage(stderr);
            return -1;
        }
    }
    if (o->p.n == 0) o->p = (ilist){{512}, 1};
    if (o->n.n == 0) o->n = (ilist){{128}, 1};
    if (o->d.n == 0) o->d = (ilist){{0}, 1};
    if (o->b.n == 0) o->b = (ilist){{512}, 1};
    if (o->t.n == 0) o->t = (ilist){{app_cpu_count()}, 1};
    for (int i = 0; i < o->t.n; i++) {
        if (o->t.v[i] == 0) o->t.v[i] = app_cpu_count();
    }
    if (!model_given && o->peak) o->n_models = 0; /* --peak alone: the machine only */
    if (o->sessions > 1) {
        int depth = 0, prompt = o->n_pg > 0;
        for (int i = 0; i < o->d.n; i++) depth |= o->d.v[i] > 0;
        for (int i = 0; i < o->p.n; i++) prompt |= o->p.v[i] > 0;
        if (depth && prompt) {
            fprintf(stderr, "%s: --sessions with -d: give -p 0 (a depth applies to tg tests only: each "
                            "request's prompt is the depth)\n", PROG);
            return -1;
        }
    }
    return 0;
}

/* ---- running a test ------------------------------------------------------ */

typedef struct {
    llm_session *s;
    test_shape sh;
    int32_t n_vocab;
    pthread_barrier_t *bar; /* NULL with one session */
    llm_status st;
    double t0, t1;
} run_job;

static llm_token tok_at(int32_t i, int32_t n_vocab) {
    return (llm_token)(((int64_t)i * 7919 + 17) % n_vocab);
}

/* Fills the context to depth (untimed), then times the prompt and the
 * generated tokens. */
static void *run_job_main(void *p) {
    run_job *j = p;
    j->st = llm_session_reset(j->s);
    int32_t pos = 0;
    llm_token *buf = NULL;
    int32_t need = j->sh.n_depth > j->sh.n_prompt ? j->sh.n_depth : j->sh.n_prompt;
    if (j->st == LLM_OK && need > 0) {
        buf = malloc(sizeof *buf * (size_t)need);
        if (!buf) j->st = LLM_ERR_NO_MEMORY;
    }
    if (j->st == LLM_OK && j->sh.n_depth > 0) {
        for (int32_t i = 0; i < j->sh.n_depth; i++) buf[i] = tok_at(pos + i, j->n_vocab);
        j->st = llm_prefill(j->s, buf, j->sh.n_depth);
        pos += j->sh.n_depth;
    }
    if (j->bar) pthread_barrier_wait(j->bar);
    j->t0 = now_s();
    if (j->st == LLM_OK && j->sh.n_prompt > 0) {
        for (int32_t i = 0; i < j->sh.n_prompt; i++) buf[i] = tok_at(pos + i, j->n_vocab);
        j->st = llm_prefill(j->s, buf, j->sh.n_prompt);
        pos += j->sh.n_prompt;
    }
    for (int32_t i = 0; j->st == LLM_OK && i < j->sh.n_gen; i++) {
        llm_token t = tok_at(pos++, j->n_vocab);
        j->st = llm_prefill(j->s, &t, 1);
    }
    j->t1 = now_s();
    free(buf);
    return NULL;
}

/* One run of the test on all sessions; returns seconds (first start to last end), or < 0. */
static double run_once(llm_session **ss, int n_sess, test_shape sh, int32_t n_vocab) {
    run_job jobs[256];
    pthread_t th[256];
    pthread_barrier_t bar;
    if (n_sess > 1) pthread_barrier_init(&bar, NULL, (unsigned)n_sess);
    for (int i = 0; i < n_sess; i++) {
        jobs[i] = (run_job){.s = ss[i], .sh = sh, .n_vocab = n_vocab, .bar = n_sess > 1 ? &bar : NULL};
    }
    int ok = 1;
    for (int i = 1; i < n_sess; i++) {
        if (pthread_create(&th[i], NULL, run_job_main, &jobs[i]) != 0) {
            fprintf(stderr, "%s: cannot start a thread\n", PROG);
            exit(APP_EXIT_FAIL); /* the barrier would never open */
        }
    }
    run_job_main(&jobs[0]);
    double t0 = jobs[0].t0, t1 = jobs[0].t1;
    for (int i = 1; i < n_sess; i++) {
        pthread_join(th[i], NULL);
        if (jobs[i].t0 < t0) t0 = jobs[i].t0;
        if (jobs[i].t1 > t1) t1 = jobs[i].t1;
    }
    for (int i = 0; i < n_sess; i++) {
        if (jobs[i].st != LLM_OK) {
            fprintf(stderr, "%s: session %d: %s\n", PROG, i, llm_session_last_error(ss[i]));
            ok = 0;
        }
    }
    if (n_sess > 1) pthread_barrier_destroy(&bar);
    return ok ? t1 - t0 : -1.0;
}

/* ---- N requests through the scheduler (--sessions N) ---------------------- */

typedef struct batch_state batch_state;
typedef struct {
    batch_state *b;
    int i;
} batch_req; /* a request's callback argument */

struct batch_state {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n, firsts, done, failed;
    unsigned char seen[256]; /* request i has its first token */
    double t_first, t_done; /* the last first token, the last end */
    int32_t want;           /* tokens each request must produce */
    char err[256];
    batch_req req[256];
};

static void batch_cb(const llm_sched_event *ev, void *user) {
    const batch_req *q = user;
    batch_state *b = q->b;
    pthread_mutex_lock(&b->mu);
    if (ev->kind == LLM_SCHED_TEXT) {
        if (!b->seen[q->i]) {
            b->seen[q->i] = 1;
            b->firsts++;
            b->t_first = now_s();
        }
    } else {
        b->done++;
        b->t_done = now_s();
        if (ev->finish != LLM_FINISH_LENGTH || ev->completion_tokens != b->want) {
            b->failed = 1;
            snprintf(b->err, sizeof b->err, "request %llu ended after %d of %d tokens: %s",
                     (unsigned long long)ev->id, ev->completion_tokens, b->want,
                     ev->finish == LLM_FINISH_ERROR ? ev->message : "not by length");
        }
        pthread_cond_broadcast(&b->cv);
    }
    pthread_mutex_unlock(&b->mu);
}

/* One run of the test as n requests; returns the timed seconds, or < 0. */
static double run_batched(llm_sched *sc, int n, test_shape sh, int32_t n_vocab, const llm_token_bias *ban,
                          size_t n_ban) {
    const int tg = sh.n_prompt == 0;
    const int32_t plen = tg ? (sh.n_depth > 0 ? sh.n_depth : 1) : sh.n_prompt;
    static batch_state b; /* one run at a time; too large for the stack */
    memset(&b, 0, sizeof b);
    b.n = n;
    b.want = sh.n_gen + 1; /* the first token comes from the prompt pass */
    pthread_mutex_init(&b.mu, NULL);
    pthread_cond_init(&b.cv, NULL);
    llm_token *buf = malloc(sizeof *buf * (size_t)plen * (size_t)n);
    int submitted = 0;
    double t0 = now_s();
    for (int i = 0; buf && i < n; i++) {
        llm_token *pr = buf + (size_t)i * (size_t)plen;
        for (int32_t k = 0; k < plen; k++) pr[k] = tok_at(k + 1000 * i, n_vocab);
        llm_sched_request r = llm_sched_default_request();
        r.prompt = pr;
        r.n_prompt = plen;
        r.max_tokens = b.want;
        r.sampling.temperature = 0.0f;
        r.bias = ban;
        r.n_bias = n_ban;
        r.callback = batch_cb;
        b.req[i] = (batch_req){&b, i};
        r.user = &b.req[i];
        if (llm_sched_submit(sc, &r, NULL) != LLM_OK) {
            fprintf(stderr, "%s: submit: %s\n", PROG, llm_last_error());
            break;
        }
        submitted++;
    }
    pthread_mutex_lock(&b.mu);
    while (b.done < submitted) pthread_cond_wait(&b.cv, &b.mu);
    pthread_mutex_unlock(&b.mu);
    if (!buf) fprintf(stderr, "%s: out of memory\n", PROG);
    free(buf);
    pthread_cond_destroy(&b.cv);
    pthread_mutex_destroy(&b.mu);
    if (submitted < n) return -1.0;
    if (b.failed) {
        fprintf(stderr, "%s: %s\n", PROG, b.err);
        return -1.0;
    }
    return tg ? b.t_done - b.t_first : b.t_done - t0;
}

/* ---- statistics and output ----------------------------------------------- */

typedef struct {
    const char *model;
    llm_model_info info;
    int32_t n_batch, n_threads, n_sessions;
    llm_kv_type type_k, type_v;
    test_shape sh;
    double test_time;
    int n;
    double ts[1000], ns[1000];
    double avg_ts, sd_ts, med_ts, min_ts, max_ts, avg_ns, sd_ns;
    double bytes_per_token; /* tg only; 0 otherwise */
    double gbs;             /* bytes_per_token * median t/s / 1e9 */
    double peak_gbs;        /* measured --peak read bandwidth for these threads, 0 if none */
} result;

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void mean_sd(const double *v, int n, double *mean, double *sd) {
    double s = 0;
    for (int i = 0; i < n; i++) s += v[i];
    *mean = s / n;
    double q = 0;
    for (int i = 0; i < n; i++) q += (v[i] - *mean) * (v[i] - *mean);
    *sd = n > 1 ? sqrt(q / (n - 1)) : 0.0;
}

static void summarize(result *r) {
    mean_sd(r->ts, r->n, &r->avg_ts, &r->sd_ts);
    mean_sd(r->ns, r->n, &r->avg_ns, &r->sd_ns);
    double s[1000];
    memcpy(s, r->ts, sizeof(double) * (size_t)r->n);
    qsort(s, (size_t)r->n, sizeof(double), cmp_d);
    r->min_ts = s[0];
    r->max_ts = s[r->n - 1];
    r->med_ts = r->n % 2 ? s[r->n / 2] : 0.5 * (s[r->n / 2 - 1] + s[r->n / 2]);
}

static const char *basename_of(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static void test_name(const result *r, char *buf, size_t cap) {
    const test_shape *t = &r->sh;
    int k;
    if (t->n_prompt > 0 && t->n_gen > 0) k = snprintf(buf, cap, "pp%d+tg%d", t->n_prompt, t->n_gen);
    else if (t->n_prompt > 0) k = snprintf(buf, cap, "pp%d", t->n_prompt);
    else k = snprintf(buf, cap, "tg%d", t->n_gen);
    if (t->n_depth > 0 && k > 0 && (size_t)k < cap) k += snprintf(buf + k, cap - (size_t)k, " @ d%d", t->n_depth);
    if (r->n_sessions > 1 && k > 0 && (size_t)k < cap) snprintf(buf + k, cap - (size_t)k, " x%d", r->n_sessions);
}

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void print_json(FILE *f, const result *r, int pretty) {
    const char *nl = pretty ? "\n    " : " ", *end = pretty ? "\n  }" : " }";
    char type[256];
    snprintf(type, sizeof type, "%s %.2fB %s", r->info.architecture, (double)r->info.n_params / 1e9,
             r->info.weight_type);
    fprintf(f, "{%s\"model_filename\": ", nl);
    json_str(f, r->model);
    fprintf(f, ",%s\"model_type\": ", nl);
    json_str(f, type);
    fprintf(f, ",%s\"model_size\": %llu,%s\"model_n_params\": %llu,", nl, (unsigned long long)r->info.weights_bytes,
            nl, (unsigned long long)r->info.n_params);
    fprintf(f, "%s\"backends\": ", nl);
    json_str(f, r->info.backend);
    fprintf(f, ",%s\"kernels\": ", nl);
    json_str(f, r->info.kernels);
    fprintf(f, ",%s\"build_commit\": \"llm-%s\",", nl, llm_engine_version());
    fprintf(f, "%s\"n_batch\": %d,%s\"n_ubatch\": %d,%s\"n_threads\": %d,%s\"n_sessions\": %d,", nl, r->n_batch, nl,
            r->n_batch, nl, r->n_threads, nl, r->n_sessions);
    fprintf(f, "%s\"type_k\": \"%s\",%s\"type_v\": \"%s\",%s\"use_mmap\": true,", nl, llm_kv_type_name(r->type_k), nl,
            llm_kv_type_name(r->type_v), nl);
    fprintf(f, "%s\"n_prompt\": %d,%s\"n_gen\": %d,%s\"n_depth\": %d,", nl, r->sh.n_prompt, nl, r->sh.n_gen, nl,
            r->sh.n_depth);
    char when[32];
    time_t tt = (time_t)r->test_time;
    struct tm tmv;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&tt, &tmv));
    fprintf(f, "%s\"test_time\": \"%s\",", nl, when);
    fprintf(f, "%s\"avg_ns\": %.0f,%s\"stddev_ns\": %.0f,", nl, r->avg_ns, nl, r->sd_ns);
    fprintf(f, "%s\"avg_ts\": %.6f,%s\"stddev_ts\": %.6f,", nl, r->avg_ts, nl, r->sd_ts);
    fprintf(f, "%s\"median_ts\": %.6f,%s\"min_ts\": %.6f,%s\"max_ts\": %.6f,", nl, r->med_ts, nl, r->min_ts, nl,
            r->max_ts);
    fprintf(f, "%s\"bytes_per_token\": %.0f,%s\"gbs\": %.3f,%s\"peak_read_gbs\": %.3f,", nl, r->bytes_per_token,
            nl, r->gbs, nl, r->peak_gbs);
    fprintf(f, "%s\"samples_ns\": [", nl);
    for (int i = 0; i < r->n; i++) fprintf(f, "%s%.0f", i ? ", " : "", r->ns[i]);
    fprintf(f, "],%s\"samples_ts\": [", nl);
    for (int i = 0; i < r->n; i++) fprintf(f, "%s%.6f", i ? ", " : "", r->ts[i]);
    fprintf(f, "]%s", end);
}

static void print_md_header(void) {
    printf("| model | size | params | backend | threads | n_batch | test | t/s (median ± sd) | min..max | bytes/tok | GB/s |\n");
    printf("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
}

static void print_md(const result *r) {
    char test[96], gbs[64] = "-", bpt[32] = "-";
    test_name(r, test, sizeof test);
    if (r->bytes_per_token > 0) {
        snprintf(bpt, sizeof bpt, "%.1f MB", r->bytes_per_token / 1e6);
        if (r->peak_gbs > 0) snprintf(gbs, sizeof gbs, "%.2f (%.0f%%)", r->gbs, 100.0 * r->gbs / r->peak_gbs);
        else snprintf(gbs, sizeof gbs, "%.2f", r->gbs);
    }
    printf("| %s %s | %.2f GiB | %.2f B | %s | %d | %d | %s | %.2f ± %.2f | %.2f..%.2f | %s | %s |\n",
           basename_of(r->model), r->info.weight_type, (double)r->info.weights_bytes / (1024.0 * 1024 * 1024),
           (double)r->info.n_params / 1e9, r->info.backend, r->n_threads, r->n_batch, test, r->med_ts, r->sd_ts,
           r->min_ts, r->max_ts, bpt, gbs);
}

/* ---- main ---------------------------------------------------------------- */

typedef struct {
    int json, jsonl, n_printed;
} out_state;

static void emit(out_state *os, const result *r) {
    if (os->json) {
        printf("%s\n  ", os->n_printed ? "," : "[");
        print_json(stdout, r, 1);
    } else if (os->jsonl) {
        print_json(stdout, r, 0);
        printf("\n");
    } else {
        if (os->n_printed == 0) print_md_header();
        print_md(r);
    }
    os->n_printed++;
    fflush(stdout);
}

/* Runs every test of one model at one (threads, n_batch). 0 or -1. */
static int bench_model(const opts *o, const char *path, int32_t nt, int32_t nb, const double *peak_gbs,
                       out_state *os) {
    int32_t need = 1;
    for (int di = 0; di < o->d.n; di++) {
        int32_t most = 0;
        for (int i = 0; i < o->p.n; i++) most = o->p.v[i] > most ? o->p.v[i] : most;
        for (int i = 0; i < o->n.n; i++) most = o->n.v[i] > most ? o->n.v[i] : most;
        for (int i = 0; i < o->n_pg; i++) most = o->pg[i][0] + o->pg[i][1] > most ? o->pg[i][0] + o->pg[i][1] : most;
        if (o->d.v[di] + most > need) need = o->d.v[di] + most;
    }
    llm_model_params mp = llm_model_default_params();
    mp.backend = "cpu";
    mp.n_threads = nt;
    mp.n_batch = nb;
    mp.n_ctx = need + 16;
    mp.kv_tokens = (mp.n_ctx + 2 * mp.kv_block_size) * o->sessions;
    mp.prefix_cache = false;
    mp.type_k = o->type_k;
    mp.type_v = o->type_v;
    llm_memory_plan plan;
    if (llm_model_plan(path, &mp, &plan) != LLM_OK) {
        fprintf(stderr, "%s: %s: %s\n", PROG, path, llm_last_error());
        return -1;
    }
    double kv_per_tok = plan.kv_blocks > 0 ? (double)plan.kv_bytes / ((double)plan.kv_blocks * mp.kv_block_size) : 0;
    llm_model *m;
    if (llm_load_model(path, &mp, &m) != LLM_OK) {
        fprintf(stderr, "%s: %s: %s\n", PROG, path, llm_last_error());
        return -1;
    }
    llm_model_info info;
    llm_model_get_info(m, &info);
    llm_session *ss[256];
    int n_sess = 0, rc = 0;
    llm_sched *sc = NULL;
    llm_token_bias *ban = NULL;
    size_t n_ban = 0;
    if (o->sessions > 1) {
        llm_sched_params sp = llm_sched_default_params();
        sp.max_running = o->sessions;
        sp.max_waiting = o->sessions;
        ban = malloc(sizeof *ban * 64);
        for (llm_token t = 0; ban && t < info.n_vocab && n_ban < 64; t++) {
            if (llm_token_is_eog(m, t)) ban[n_ban++] = (llm_token_bias){t, -INFINITY};
        }
        if (!ban || llm_sched_new(m, &sp, &sc) != LLM_OK) {
            fprintf(stderr, "%s: %s: %s\n", PROG, path, ban ? llm_last_error() : "out of memory");
            rc = -1;
        }
    }
    for (; rc == 0 && !sc && n_sess < o->sessions; n_sess++) {
        if (llm_session_new(m, NULL, &ss[n_sess]) != LLM_OK) {
            fprintf(stderr, "%s: %s: %s\n", PROG, path, llm_last_error());
            rc = -1;
            break;
        }
    }
    test_shape shapes[3 * MAXV * MAXV];
    int n_sh = 0;
    for (int di = 0; di < o->d.n; di++) {
        for (int i = 0; i < o->p.n; i++)
            if (o->p.v[i] > 0) shapes[n_sh++] = (test_shape){o->p.v[i], 0, o->d.v[di]};
        for (int i = 0; i < o->n.n; i++)
            if (o->n.v[i] > 0) shapes[n_sh++] = (test_shape){0, o->n.v[i], o->d.v[di]};
        for (int i = 0; i < o->n_pg; i++)
            if (o->pg[i][0] + o->pg[i][1] > 0) shapes[n_sh++] = (test_shape){o->pg[i][0], o->pg[i][1], o->d.v[di]};
    }
    for (int k = 0; rc == 0 && k < n_sh; k++) {
        result *r = calloc(1, sizeof *r);
        if (!r) {
            rc = -1;
            break;
        }
        r->model = path;
        r->info = info;
        r->n_batch = nb;
        r->type_k = o->type_k;
        r->type_v = o->type_v;
        r->n_threads = info.n_threads;
        r->n_sessions = o->sessions;
        r->sh = shapes[k];
        r->test_time = wall_s();
        double tokens = (double)o->sessions * (shapes[k].n_prompt + shapes[k].n_gen);
        if (o->warmup && (sc ? run_batched(sc, o->sessions, shapes[k], info.n_vocab, ban, n_ban)
                             : run_once(ss, n_sess, shapes[k], info.n_vocab)) < 0) {
            rc = -1;
        }
        for (int rep = 0; rc == 0 && rep < o->reps; rep++) {
            double t = sc ? run_batched(sc, o->sessions, shapes[k], info.n_vocab, ban, n_ban)
                          : run_once(ss, n_sess, shapes[k], info.n_vocab);
            if (t <= 0) {
                rc = -1;
                break;
            }
            r->ns[r->n] = t * 1e9;
            r->ts[r->n] = tokens / t;
            r->n++;
        }
        if (rc == 0) {
            summarize(r);
            if (shapes[k].n_prompt == 0) {
                /* each generated token reads every weight and the K/V of its context */
                double ctx = shapes[k].n_depth + (shapes[k].n_gen + 1) / 2.0;
                /* a step of N requests reads the weights once and N contexts */
                r->bytes_per_token = (double)info.weights_bytes / o->sessions + kv_per_tok * ctx;
                r->gbs = r->bytes_per_token * r->med_ts / 1e9;
                r->peak_gbs = peak_gbs ? *peak_gbs : 0;
            }
            emit(os, r);
        }
        free(r);
    }
    for (int i = 0; i < n_sess; i++) llm_session_free(ss[i]);
    llm_sched_free(sc);
    free(ban);
    llm_model_free(m);
    return rc;
}

int main(int argc, char **argv) {
    opts o;
    if (parse_opts(argc, argv, &o)) return APP_EXIT_USAGE;
    char def[4096];
    if (o.n_models == 0 && !o.peak) {
        app_default_model(def, sizeof def);
        o.models[o.n_models++] = def;
    }
    out_state os = {strcmp(o.out, "json") == 0, strcmp(o.out, "jsonl") == 0, 0};
    double peak_read[MAXV] = {0};
    int rc = APP_EXIT_OK;
    if (o.peak) {
        for (int ti = 0; ti < o.t.n; ti++) {
            bench_peak_result pr;
            if (bench_peak(o.t.v[ti], (size_t)o.peak_mib, &pr) != 0) {
                fprintf(stderr, "%s: --peak needs an x86-64 CPU with AVX2 and FMA and %d MiB of memory\n", PROG,
                        o.peak_mib);
                return APP_EXIT_FAIL;
            }
            peak_read[ti] = pr.read_gbs;
            if (os.json || os.jsonl) {
                printf("%s{\"peak\": true, \"n_threads\": %d, \"read_gbs\": %.3f, \"buffer_mib\": %d, "
                       "\"int8_avx2_gops\": %.2f, \"int8_vnni_gops\": %.2f, \"int8_avx512_gops\": %.2f, "
                       "\"fp32_gflops\": %.2f, \"fp32_avx512_gflops\": %.2f}%s",
                       os.json ? (os.n_printed ? ",\n  " : "[\n  ") : "", pr.n_threads, pr.read_gbs, o.peak_mib,
                       pr.int8_avx2_gops, pr.int8_vnni_gops, pr.int8_avx512_gops, pr.fp32_gflops,
                       pr.fp32_avx512_gflops, os.jsonl ? "\n" : "");
                os.n_printed++;
            } else {
                printf("peak, %d thread%s: memory read %.2f GB/s (%d MiB buffer); int8 multiply-adds "
                       "%.1f G/s (AVX2 vpmaddubsw)",
                       pr.n_threads, pr.n_threads == 1 ? "" : "s", pr.read_gbs, o.peak_mib, pr.int8_avx2_gops);
                if (pr.has_vnni) printf(", %.1f G/s (AVX-VNNI vpdpbusd)", pr.int8_vnni_gops);
                if (pr.has_avx512) printf(", %.1f G/s (AVX-512 vpdpbusd)", pr.int8_avx512_gops);
                printf("; fp32 %.1f GFLOP/s (FMA)", pr.fp32_gflops);
                if (pr.has_avx512) printf(", %.1f GFLOP/s (AVX-512 FMA)", pr.fp32_avx512_gflops);
                printf("\n");
            }
            fflush(stdout);
        }
        if (!os.json && !os.jsonl && o.n_models > 0) printf("\n");
    }
    for (int mi = 0; rc == APP_EXIT_OK && mi < o.n_models; mi++) {
        for (int ti = 0; rc == APP_EXIT_OK && ti < o.t.n; ti++) {
            for (int bi = 0; rc == APP_EXIT_OK && bi < o.b.n; bi++) {
                if (bench_model(&o, o.models[mi], o.t.v[ti], o.b.v[bi], o.peak ? &peak_read[ti] : NULL, &os)) {
                    rc = APP_EXIT_FAIL;
                }
            }
        }
    }
    if (os.json) printf(os.n_printed ? "\n]\n" : "[]\n");
    if (o.sessions > 1 && !os.json && !os.jsonl) {
        printf("\nsessions: %d requests at once through the scheduler (one forward pass per step for all); "
               "t/s counts all of their tokens\n",
               o.sessions);
    }
    int fin = app_finish_stdout(PROG);
    return rc != APP_EXIT_OK ? rc : fin;
}
