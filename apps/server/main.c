/* llm-server: an OpenAI-compatible HTTP server with continuous batching.
 *
 * Start-up: the HTTP daemon listens first (GET /health answers 503 while
 * the model loads), then the model loads and the scheduler starts.
 * SIGTERM / SIGINT: stop accepting connections, let requests in flight
 * finish until --shutdown-timeout, cancel what remains, exit 0. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "app_cache_type.h"
#include "app_common.h"
#include "server.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: llm-server [options]\n"
        "\n"
        "An OpenAI-compatible HTTP server with continuous batching: POST /v1/chat/completions,\n"
        "/v1/completions, /v1/embeddings, /tokenize, /detokenize, /apply-template; GET /v1/models,\n"
        "/health (503 while loading), /metrics (Prometheus).\n"
        "\n"
        "options (llama.cpp's llama-server spelling):\n"
        "  -m, --model PATH        GGUF file or Hugging Face folder (default: $LLM_MODEL, else\n"
        "                          ${LLM_MODELS_DIR:-~/.cache/llm/models}/" APP_DEFAULT_MODEL_FILE ")\n"
        "  -a, --alias NAME        model id served by /v1/models (default: the file name)\n"
        "  -c, --ctx-size N        context of one request in tokens (default: min(trained, 4096))\n"
        "  -np, --parallel N       requests decoded together (default 4)\n"
        "      --kv-tokens N       KV cache pool shared by all requests (default: ctx-size * parallel)\n"
        "  -b, --batch-size N      most tokens per forward pass (default 256)\n"
        "      --queue N           requests waiting beyond the running ones; more get 503 (default 64)\n"
        "  -t, --threads N         CPU threads (default: all cores)\n"
        APP_CACHE_TYPE_HELP
        "      --backend NAME      cpu, cuda or auto (default auto)\n"
        "      --host ADDR         address to bind: IPv4, IPv6 (::1, or [::1]) or a host name such as\n"
        "                          localhost, resolved once at start (default 127.0.0.1)\n"
        "      --port N            TCP port, 0 = any free one (default 8080)\n"
        "      --api-key KEY       require 'Authorization: Bearer KEY' (all but /health)\n"
        "      --timeout S         close a connection idle for S seconds (default 60)\n"
        "      --max-body BYTES    largest request body (default 4194304)\n"
        "      --max-connections N (default 256)\n"
        "      --shutdown-timeout S  on SIGTERM, wait S seconds for requests in flight (default 10)\n"
        "  -v, --verbose           log libmicrohttpd errors\n"
        "  -h, --help              this help\n"
        "\n"
        "The actual address is printed as 'llm-server: listening on http://HOST:PORT'.\n");
}

static int parse(int argc, char **argv, server_opts *o, char *model_buf, size_t cap) {
    memset(o, 0, sizeof *o);
    o->host = "127.0.0.1";
    o->port = 8080;
    o->n_parallel = 4;
    o->batch = 256;
    o->queue = 64;
    o->timeout_s = 60;
    o->shutdown_s = 10;
    o->max_body = 4 << 20;
    o->max_connections = 256;
    o->backend = "auto";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int is_v = 0;
#define OPT(s, l) (strcmp(a, s) == 0 || strcmp(a, l) == 0)
#define NEED() do { if (app_need_value(PROG, a, v)) return -1; i++; } while (0)
#define I32(lo, hi, dst) do { NEED(); if (app_parse_i32(PROG, a, v, lo, hi, dst)) return -1; } while (0)
        if (OPT("-h", "--help")) { usage(stdout); exit(0); }
        else if (OPT("-m", "--model")) { NEED(); o->model = v; }
        else if (OPT("-a", "--alias")) { NEED(); o->alias = v; }
        else if (OPT("-c", "--ctx-size")) I32(0, 1 << 20, &o->n_ctx);
        else if (OPT("-np", "--parallel")) I32(1, 256, &o->n_parallel);
        else if (OPT("--kv-tokens", "--kv-tokens")) I32(0, 1 << 24, &o->kv_tokens);
        else if (OPT("-b", "--batch-size")) I32(1, 8192, &o->batch);
        else if (OPT("--queue", "--queue")) I32(0, 100000, &o->queue);
        else if (OPT("-t", "--threads")) { NEED(); if (app_parse_threads(PROG, a, v, &o->threads)) return -1; }
        else if (OPT("--backend", "--backend")) { NEED(); o->backend = v; }
        else if (OPT("--host", "--host")) { NEED(); o->host = v; }
        else if (OPT("--port", "--port")) I32(0, 65535, &o->port);
        else if (OPT("--api-key", "--api-key")) { NEED(); o->api_key = v; }
        else if (OPT("--timeout", "--timeout")) I32(1, 86400, &o->timeout_s);
        else if (OPT("--max-body", "--max-body")) I32(1024, 1 << 30, &o->max_body);
        else if (OPT("--max-connections", "--max-connections")) I32(1, 65536, &o->max_connections);
        else if (OPT("--shutdown-timeout", "--shutdown-timeout")) I32(0, 86400, &o->shutdown_s);
        else if (app_is_cache_type_opt(a, &is_v)) {
            NEED();
            if (app_parse_cache_type(PROG, a, v, is_v ? &o->type_v : &o->type_k)) return -1;
        }
        else if (OPT("-v", "--verbose")) o->verbose = true;
        else {
            fprintf(stderr, PROG ": unknown option '%s' (try --help)\n", a);
            return -1;
        }
    }
    if (o->api_key && !*o->api_key) {
        fprintf(stderr, PROG ": --api-key must not be empty\n");
        return -1;
    }
    if (!o->model) {
        app_default_model(model_buf, cap);
        o->model = model_buf;
    }
    return 0;
}

static void set_model_id(server *sv) {
    const char *id = sv->o.alias;
    if (!id) {
        const char *slash = strrchr(sv->o.model, '/');
        id = slash && slash[1] ? slash + 1 : sv->o.model;
    }
    snprintf(sv->model_id, sizeof sv->model_id, "%s", id);
}

/* --host: a numeric IPv4 or IPv6 address (brackets allowed around IPv6, as in
 * URLs) or a host name, resolved once here; the first address returned is
 * bound. Returns 0, or -1 after printing why. */
static int resolve_host(const char *host, int port, struct sockaddr_storage *out) {
    char name[256];
    size_t n = strlen(host);
    if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
        if (n - 2 >= sizeof name) n = sizeof name + 1;
        snprintf(name, sizeof name, "%.*s", (int)(n - 2), host + 1);
    } else {
        snprintf(name, sizeof name, "%s", host);
    }
    if (!*name || strlen(host) >= sizeof name) {
        fprintf(stderr, PROG ": --host: '%s' is not an address or a host name\n", host);
        return -1;
    }
    char port_s[16];
    snprintf(port_s, sizeof port_s, "%d", port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int rc = getaddrinfo(name, port_s, &hints, &res);
    if (rc != 0 || !res) {
        fprintf(stderr, PROG ": --host: cannot resolve '%s': %s\n", host, rc ? gai_strerror(rc) : "no address");
        return -1;
    }
    const struct addrinfo *pick = NULL;
    for (const struct addrinfo *a = res; a; a = a->ai_next)
        if (a->ai_family == AF_INET || a->ai_family == AF_INET6) { pick = a; break; }
    if (!pick || pick->ai_addrlen > sizeof *out) {
        freeaddrinfo(res);
        fprintf(stderr, PROG ": --host: '%s' has no IPv4 or IPv6 address\n", host);
        return -1;
    }
    memset(out, 0, sizeof *out);
    memcpy(out, pick->ai_addr, pick->ai_addrlen);
    freeaddrinfo(res);
    return 0;
}

/* The bound address as a URL host: 127.0.0.1, [::1]. */
static void format_host(const struct sockaddr_storage *a, char *buf, size_t cap) {
    char ip[INET6_ADDRSTRLEN];
    if (a->ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)a)->sin6_addr, ip, sizeof ip);
        snprintf(buf, cap, "[%s]", ip);
    } else {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)a)->sin_addr, ip, sizeof ip);
        snprintf(buf, cap, "%s", ip);
    }
}

int main(int argc, char **argv) {
    static server sv;
    char model_buf[4096];
    if (parse(argc, argv, &sv.o, model_buf, sizeof model_buf)) return APP_EXIT_USAGE;
    set_model_id(&sv);
    metrics_init(&sv.met);
    sv.created = (int64_t)time(NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Every thread started from here on blocks SIGTERM/SIGINT; main waits for them. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    struct sockaddr_storage addr;
    if (resolve_host(sv.o.host, sv.o.port, &addr) != 0) return APP_EXIT_USAGE;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC;
    if (sv.o.verbose) flags |= MHD_USE_ERROR_LOG;
    if (addr.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    sv.d = MHD_start_daemon(flags, 0, NULL, NULL, http_handler, &sv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)sv.o.timeout_s, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)sv.o.max_connections, MHD_OPTION_NOTIFY_COMPLETED, http_completed, &sv,
                            MHD_OPTION_END);
    if (!sv.d) {
        fprintf(stderr, PROG ": cannot listen on %s:%d: %s\n", sv.o.host, sv.o.port, strerror(errno));
        return APP_EXIT_FAIL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(sv.d, MHD_DAEMON_INFO_BIND_PORT);
    char shown[INET6_ADDRSTRLEN + 2];
    format_host(&addr, shown, sizeof shown);
    fprintf(stderr, PROG ": listening on http://%s:%u\n", shown, di ? (unsigned)di->port : (unsigned)sv.o.port);

    llm_model_params mp = llm_model_default_params();
    mp.backend = sv.o.backend;
    mp.n_threads = sv.o.threads;
    mp.n_ctx = sv.o.n_ctx;
    mp.n_batch = sv.o.batch;
    mp.type_k = sv.o.type_k;
    mp.type_v = sv.o.type_v;
    llm_memory_plan plan;
    llm_status st = llm_model_plan(sv.o.model, &mp, &plan);
    if (st == LLM_OK) {
        mp.n_ctx = plan.n_ctx;
        mp.kv_tokens = sv.o.kv_tokens ? sv.o.kv_tokens : plan.n_ctx * sv.o.n_parallel;
        if (mp.kv_tokens < plan.n_ctx) {
            fprintf(stderr, PROG ": --kv-tokens %d is smaller than the context (%d)\n", mp.kv_tokens, plan.n_ctx);
            MHD_stop_daemon(sv.d);
            return APP_EXIT_USAGE;
        }
        st = llm_model_plan(sv.o.model, &mp, &plan); /* the pool as sized now */
        if (st == LLM_OK) st = llm_load_model(sv.o.model, &mp, &sv.model);
        sv.kv_bytes = plan.kv_bytes;
    }
    if (st != LLM_OK) {
        fprintf(stderr, PROG ": cannot load %s: %s\n", sv.o.model, llm_last_error());
        MHD_stop_daemon(sv.d);
        return APP_EXIT_FAIL;
    }
    llm_model_get_info(sv.model, &sv.info);
    llm_sched_params spar = llm_sched_default_params();
    spar.max_running = sv.o.n_parallel;
    spar.max_waiting = sv.o.queue;
    if ((st = llm_sched_new(sv.model, &spar, &sv.sched)) != LLM_OK) {
        fprintf(stderr, PROG ": %s\n", llm_last_error());
        MHD_stop_daemon(sv.d);
        llm_model_free(sv.model);
        return APP_EXIT_FAIL;
    }
    atomic_store(&sv.ready, true);
    fprintf(stderr, PROG ": model %s ready (context %d, %d parallel, KV %d tokens %s/%s %.1f MiB, %d threads)\n",
            sv.model_id, sv.info.n_ctx, sv.o.n_parallel, mp.kv_tokens, llm_kv_type_name(mp.type_k),
            llm_kv_type_name(mp.type_v), (double)sv.kv_bytes / 1048576.0, sv.info.n_threads);

    int sig = 0;
    sigwait(&sigs, &sig);
    fprintf(stderr, PROG ": %s: stopping (in flight: %d)\n", sig == SIGTERM ? "SIGTERM" : "SIGINT",
            atomic_load(&sv.inflight));
    atomic_store(&sv.draining, true);
    MHD_socket ls = MHD_quiesce_daemon(sv.d);
    if (ls != MHD_INVALID_SOCKET) close(ls);
    /* In flight = HTTP requests whose reply has not gone out completely. */
    double deadline = now_s() + sv.o.shutdown_s;
    while (atomic_load(&sv.active) > 0 && now_s() < deadline) usleep(20 * 1000);
    if (atomic_load(&sv.active) > 0) {
        fprintf(stderr, PROG ": cancelling %d requests still in flight\n", atomic_load(&sv.inflight));
        llm_sched_cancel_all(sv.sched);
        double hard = now_s() + 5;
        while (atomic_load(&sv.active) > 0 && now_s() < hard) usleep(20 * 1000);
    }
    MHD_stop_daemon(sv.d); /* joins the connection threads */
    llm_sched_free(sv.sched);
    llm_model_free(sv.model);
    fprintf(stderr, PROG ": stopped\n");
    return APP_EXIT_OK;
}
