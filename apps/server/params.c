/* Parameters of /v1/chat/completions and /v1/completions: each known field
 * is type- and range-checked (a wrong one is a 400 naming it), unknown
 * fields are ignored, as OpenAI's API does. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h"

void gen_params_free(gen_params *p) {
    for (size_t i = 0; i < p->n_stops; i++) free(p->stops[i]);
    free(p->bias);
    free(p->grammar);
    free(p->json_schema);
    memset(p, 0, sizeof *p);
}

/* A number field: absent or null keeps *out; else it must be a number in
 * [lo, hi]. */
static int num(json_t *b, const char *key, double lo, double hi, float *out, reply *r) {
    json_t *v = json_object_get(b, key);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_number(v)) {
        reply_error(r, 400, "invalid_request_error", key, "'%s' must be a number", key);
        return -1;
    }
    double d = json_number_value(v);
    if (!(d >= lo && d <= hi)) {
        reply_error(r, 400, "invalid_request_error", key, "'%s' must be in [%g, %g], got %g", key, lo, hi, d);
        return -1;
    }
    *out = (float)d;
    return 0;
}

static int integer(json_t *b, const char *key, json_int_t lo, json_int_t hi, json_int_t *out, bool *set, reply *r) {
    json_t *v = json_object_get(b, key);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_integer(v)) {
        reply_error(r, 400, "invalid_request_error", key, "'%s' must be an integer", key);
        return -1;
    }
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi) {
        reply_error(r, 400, "invalid_request_error", key, "'%s' must be in [%lld, %lld], got %lld", key,
                    (long long)lo, (long long)hi, (long long)x);
        return -1;
    }
    *out = x;
    if (set) *set = true;
    return 0;
}

static int boolean(json_t *b, const char *key, bool *out, reply *r) {
    json_t *v = json_object_get(b, key);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_boolean(v)) {
        reply_error(r, 400, "invalid_request_error", key, "'%s' must be a boolean", key);
        return -1;
    }
    *out = json_is_true(v);
    return 0;
}

static uint64_t random_seed(void) {
    static _Atomic uint64_t ctr;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (++ctr * 0x9E3779B97F4A7C15ull);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* A schema value (object or boolean) as JSON text into *out. */
static int schema_text(json_t *v, const char *param, char **out, reply *r) {
    if (!json_is_object(v) && !json_is_boolean(v))
        return reply_error(r, 400, "invalid_request_error", param, "'%s' must be a JSON Schema object", param), -1;
    *out = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!*out) return reply_error(r, 500, "server_error", NULL, "out of memory"), -1;
    return 0;
}

/* The output constraint: llama-server's `grammar` (GBNF) and `json_schema`
 * fields, and OpenAI's `response_format` ({"type": "text"}, {"type":
 * "json_object"} (any object, or llama-server's "schema" in it) and
 * {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}).
 * At most one of them. */
static int constraint_parse(json_t *b, gen_params *p, reply *r) {
    json_t *v;
    int n = 0;
    if ((v = json_object_get(b, "grammar")) && !json_is_null(v)) {
        if (!json_is_string(v)) return reply_error(r, 400, "invalid_request_error", "grammar", "'grammar' must be a string"), -1;
        if (json_string_length(v)) {
            if (!(p->grammar = strdup(json_string_value(v)))) return reply_error(r, 500, "server_error", NULL, "out of memory"), -1;
            p->constraint_param = "grammar";
            n++;
        }
    }
    if ((v = json_object_get(b, "json_schema")) && !json_is_null(v)) {
        if (schema_text(v, "json_schema", &p->json_schema, r)) return -1;
        p->constraint_param = "json_schema";
        n++;
    }
    if ((v = json_object_get(b, "response_format")) && !json_is_null(v)) {
        const char *type = json_is_object(v) ? json_string_value(json_object_get(v, "type")) : NULL;
        if (!type)
            return reply_error(r, 400, "invalid_request_error", "response_format",
                               "'response_format' must be an object with a string 'type'"),
                   -1;
        char *text = NULL;
        if (strcmp(type, "json_object") == 0) {
            json_t *sc = json_object_get(v, "schema");
            if (sc && !json_is_null(sc)) {
                if (schema_text(sc, "response_format", &text, r)) return -1;
            } else if (!(text = strdup("{\"type\": \"object\"}"))) {
                return reply_error(r, 500, "server_error", NULL, "out of memory"), -1;
            }
        } else if (strcmp(type, "json_schema") == 0) {
            json_t *js = json_object_get(v, "json_schema");
            if (!json_is_object(js))
                return reply_error(r, 400, "invalid_request_error", "response_format",
                                   "'response_format.json_schema' must be an object"),
                       -1;
            json_t *sc = json_object_get(js, "schema");
            if (sc && !json_is_null(sc)) {
                if (schema_text(sc, "response_format", &text, r)) return -1;
            } else if (!(text = strdup("{}"))) { /* OpenAI: an absent schema allows any JSON value */
                return reply_error(r, 500, "server_error", NULL, "out of memory"), -1;
            }
        } else if (strcmp(type, "text") != 0) {
            return reply_error(r, 400, "invalid_request_error", "response_format",
                               "unknown 'response_format' type '%s' (expected text, json_object or json_schema)", type),
                   -1;
        }
        if (text) {
            if (p->json_schema) {
                free(text);
                n++;
            } else {
                p->json_schema = text;
                p->constraint_param = "response_format";
                n++;
            }
        }
    }
    if (n > 1)
        return reply_error(r, 400, "invalid_request_error", p->constraint_param,
                           "give at most one of 'grammar', 'json_schema' and a JSON 'response_format'"),
               -1;
    return 0;
}

int gen_params_parse(server *sv, json_t *b, gen_params *p, reply *r) {
    memset(p, 0, sizeof *p);
    p->sampling = llm_sampling_default_params();
    p->sampling.seed = random_seed();
    json_t *v;
    if ((v = json_object_get(b, "model")) && !json_is_null(v)) {
        if (!json_is_string(v)) return reply_error(r, 400, "invalid_request_error", "model", "'model' must be a string"), -1;
        const char *m = json_string_value(v);
        if (*m && strcmp(m, sv->model_id) != 0) {
            reply_error(r, 404, "invalid_request_error", "model", "The model '%s' does not exist (this server runs '%s')",
                        m, sv->model_id);
            return -1;
        }
    }
    json_int_t mt = 0, seed = 0, n = 1, top_k = p->sampling.top_k;
    bool mt_set = false, seed_set = false;
    const json_int_t big = (json_int_t)1 << 40;
    if (integer(b, "max_tokens", 1, big, &mt, &mt_set, r) || integer(b, "max_completion_tokens", 1, big, &mt, &mt_set, r) ||
        integer(b, "seed", -big * 8192, big * 8192, &seed, &seed_set, r) || integer(b, "n", 1, 1, &n, NULL, r) ||
        integer(b, "top_k", 0, 1 << 20, &top_k, NULL, r))
        return -1;
    p->max_tokens = mt_set ? (mt > INT32_MAX ? INT32_MAX : (int32_t)mt) : 0;
    if (seed_set) p->sampling.seed = (uint64_t)seed;
    p->sampling.top_k = (int32_t)top_k;
    if (num(b, "temperature", 0, 2, &p->sampling.temperature, r) || num(b, "top_p", 0, 1, &p->sampling.top_p, r) ||
        num(b, "min_p", 0, 1, &p->sampling.min_p, r) ||
        num(b, "presence_penalty", -2, 2, &p->sampling.presence_penalty, r) ||
        num(b, "frequency_penalty", -2, 2, &p->sampling.frequency_penalty, r) ||
        num(b, "repeat_penalty", 0, 10, &p->sampling.repeat_penalty, r))
        return -1;
    if (p->sampling.top_p <= 0) p->sampling.top_p = 1e-6f; /* 0 means "only the top token" */
    if (boolean(b, "stream", &p->stream, r)) return -1;
    if ((v = json_object_get(b, "stream_options")) && !json_is_null(v)) {
        if (!json_is_object(v))
            return reply_error(r, 400, "invalid_request_error", "stream_options", "'stream_options' must be an object"), -1;
        if (boolean(v, "include_usage", &p->include_usage, r)) return -1;
    }
    if ((v = json_object_get(b, "stop")) && !json_is_null(v)) {
        if (json_is_string(v)) {
            if (json_string_length(v)) p->stops[p->n_stops++] = strdup(json_string_value(v));
        } else if (json_is_array(v) && json_array_size(v) <= GEN_MAX_STOPS) {
            size_t i;
            json_t *s;
            json_array_foreach(v, i, s) {
                if (!json_is_string(s))
                    return reply_error(r, 400, "invalid_request_error", "stop", "'stop' entries must be strings"), -1;
                if (json_string_length(s)) p->stops[p->n_stops++] = strdup(json_string_value(s));
            }
        } else {
            return reply_error(r, 400, "invalid_request_error", "stop",
                               "'stop' must be a string or an array of at most %d strings", GEN_MAX_STOPS),
                   -1;
        }
        for (size_t i = 0; i < p->n_stops; i++)
            if (!p->stops[i]) return reply_error(r, 500, "server_error", NULL, "out of memory"), -1;
    }
    if ((v = json_object_get(b, "logit_bias")) && !json_is_null(v)) {
        if (!json_is_object(v))
            return reply_error(r, 400, "invalid_request_error", "logit_bias", "'logit_bias' must be an object"), -1;
        size_t nb = json_object_size(v);
        p->bias = calloc(nb ? nb : 1, sizeof *p->bias);
        if (!p->bias) return reply_error(r, 500, "server_error", NULL, "out of memory"), -1;
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            char *end;
            long id = strtol(k, &end, 10);
            if (!*k || *end || id < 0 || id >= sv->info.n_vocab)
                return reply_error(r, 400, "invalid_request_error", "logit_bias",
                                   "'logit_bias' keys must be token ids in [0, %d)", sv->info.n_vocab),
                       -1;
            if (!json_is_number(x) || !(json_number_value(x) >= -100 && json_number_value(x) <= 100))
                return reply_error(r, 400, "invalid_request_error", "logit_bias",
                                   "'logit_bias' values must be numbers in [-100, 100]"),
                       -1;
            double bv = json_number_value(x);
            p->bias[p->n_bias].token = (llm_token)id;
            p->bias[p->n_bias].bias = bv <= -100 ? -INFINITY : (float)bv;
            p->n_bias++;
        }
    }
    return constraint_parse(b, p, r);
}
