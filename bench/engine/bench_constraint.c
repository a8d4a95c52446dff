/* bench_constraint: greedy decode tok/s with and without a constraint
 * (llm_session_set_constraint), through llama/engine.h.
 *
 *   bench_constraint [-m MODEL] [-t THREADS] [-n DECODE_TOKENS] [-r REPEATS]
 *
 * For each mode (none, a JSON object, a JSON schema of an array of
 * objects, a GBNF grammar of free lower-case text) prints the decode tok/s
 * of the first repeat (cold: the grammar is compiled and each new grammar
 * state walks the vocabulary once) and the median of the later repeats
 * (warm: the model's cache of compiled grammars and their token classes is
 * reused). Each repeat is a new session; the prompt comes from the prefix
 * cache after the first. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama/engine.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct mode {
    const char *name, *grammar, *schema;
} mode;

static const mode MODES[] = {
    {"none", NULL, NULL},
    {"json_object", NULL, "{\"type\": \"object\"}"},
    {"json_schema", NULL,
     "{\"type\": \"array\", \"minItems\": 8, \"items\": {\"type\": \"object\", \"properties\": {"
     "\"name\": {\"type\": \"string\", \"maxLength\": 20}, \"age\": {\"type\": \"integer\", \"minimum\": 0, "
     "\"maximum\": 120}, \"city\": {\"type\": \"string\"}, \"born\": {\"type\": \"string\", \"format\": \"date\"}},"
     " \"required\": [\"name\", \"age\", \"city\", \"born\"]}}"},
    {"gbnf_text", "root ::= [a-z ,.]+\n", NULL},
};

int main(int argc, char **argv) {
    const char *model = getenv("LLM_DEFAULT_MODEL");
    char defp[1024];
    if (!model) {
        const char *home = getenv("HOME");
        snprintf(defp, sizeof defp, "%s/.cache/llm/models/SmolLM2-135M-Instruct.Q4_1.gguf", home ? home : ".");
        model = defp;
    }
    int threads = 2, n_decode = 128, reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-m")) model = argv[i + 1];
        else if (!strcmp(argv[i], "-t")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-n")) n_decode = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-r")) reps = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bench_constraint [-m MODEL] [-t N] [-n N] [-r N]\n");
            return 2;
        }
    }
    if (reps < 2 || reps > 50 || n_decode < 1) {
        fprintf(stderr, "bench_constraint: bad sizes\n");
        return 2;
    }
    llm_model_params mp = llm_model_default_params();
    mp.n_threads = threads;
    mp.n_ctx = 1024;
    llm_model *m;
    if (llm_load_model(model, &mp, &m) != LLM_OK) {
        fprintf(stderr, "bench_constraint: %s\n", llm_last_error());
        return 1;
    }
    llm_model_info info;
    llm_model_get_info(m, &info);
    llm_chat_message msg = {"user", "List eight people with their name, age, city and birth date, as JSON."};
    char text[2048];
    int32_t n = 0;
    llm_token toks[1024];
    if (llm_chat_apply(m, &msg, 1, true, text, sizeof text, &n) != LLM_OK ||
        llm_tokenize(m, text, (size_t)n, LLM_ENCODE_PARSE_SPECIAL, toks, 1024, &n) != LLM_OK) {
        fprintf(stderr, "bench_constraint: %s\n", llm_last_error());
        return 1;
    }
    printf("model %s (%s, n_vocab %d), %s, %d threads, greedy, up to %d tokens, %d repeats\n", info.name,
           info.weight_type, info.n_vocab, info.backend, info.n_threads, n_decode, reps);
    printf("%-12s %8s %12s %12s\n", "mode", "tokens", "cold tok/s", "warm tok/s");
    double *warm = calloc((size_t)reps, sizeof *warm);
    for (size_t k = 0; k < sizeof MODES / sizeof MODES[0]; k++) {
        double cold = 0;
        int32_t got = 0;
        for (int r = 0; r < reps; r++) {
            llm_session_params sp = llm_session_default_params();
            sp.sampling.temperature = 0;
            llm_session *s;
            if (llm_session_new(m, &sp, &s) != LLM_OK) return 1;
            llm_constraint c = {0};
            c.grammar = MODES[k].grammar;
            c.json_schema = MODES[k].schema;
            double t0 = now_ms();
            if (llm_session_set_constraint(s, &c) != LLM_OK || llm_prefill(s, toks, n) != LLM_OK) {
                fprintf(stderr, "bench_constraint: %s\n", llm_session_last_error(s));
                return 1;
            }
            double t1 = now_ms();
            llm_status st = llm_decode(s, n_decode, NULL, NULL);
            double t2 = now_ms();
            if (st < 0) {
                fprintf(stderr, "bench_constraint: %s\n", llm_session_last_error(s));
                return 1;
            }
            llm_telemetry t;
            llm_session_telemetry(s, &t);
            got = t.decode_tokens;
            const double tps = got * 1e3 / (t2 - t1);
            if (r == 0) cold = tps;
            else warm[r - 1] = tps;
            (void)t0;
            llm_session_free(s);
        }
        qsort(warm, (size_t)(reps - 1), sizeof *warm, cmp_d);
        printf("%-12s %8d %12.1f %12.1f\n", MODES[k].name, got, cold, warm[(reps - 1) / 2]);
    }
    free(warm);
    llm_model_free(m);
    return 0;
}
