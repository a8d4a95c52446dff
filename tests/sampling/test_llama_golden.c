/*
 * test_llama_golden.c -- our samplers against llama.cpp's own (independent
 * reference): golden/llama_samplers.txt holds, per case, logits, a sampler
 * chain, an accepted-token history and the candidate set (ids and logits)
 * llama.cpp's llama_sampler_apply() left; made by golden/make_llama_golden.py
 * (llama-cpp-python). We run the same chain and compare the set and, per id,
 * the logit (temperature is a multiply by 1/t here and a divide there, so a
 * relative 1e-5 tolerance).
 */
#include <stdio.h>

#include "sampling_test_util.h"

#define MAXN 64

typedef struct {
    char name[64];
    char spec[256];
    int32_t hist[64];
    size_t n_hist;
    float logits[MAXN];
    size_t n;
    int32_t out_ids[MAXN];
    float out_x[MAXN];
    size_t n_out;
} golden_case;

/* Numbers of a ';'-delimited field. */
static size_t parse_floats(const char *s, const char *end, float *out, size_t cap) {
    size_t k = 0;
    while (s < end && k < cap) {
        char *e;
        float v = strtof(s, &e);
        if (e == s) break;
        out[k++] = v;
        s = e;
    }
    return k;
}

static int next_field(const char **s, const char **fb, const char **fe) {
    const char *p = *s;
    if (!p || !*p) return 0;
    const char *semi = strchr(p, ';');
    *fb = p;
    *fe = semi ? semi : p + strlen(p);
    *s = semi ? semi + 1 : NULL;
    return 1;
}

static int parse_line(const char *line, golden_case *c) {
    memset(c, 0, sizeof *c);
    const char *s = line, *b, *e;
    float tmp[MAXN];
    if (!next_field(&s, &b, &e)) return 0;
    snprintf(c->name, sizeof c->name, "%.*s", (int)(e - b), b);
    if (!next_field(&s, &b, &e)) return 0;
    snprintf(c->spec, sizeof c->spec, "%.*s", (int)(e - b), b);
    if (!next_field(&s, &b, &e)) return 0;
    c->n_hist = parse_floats(b, e, tmp, MAXN);
    for (size_t i = 0; i < c->n_hist; i++) c->hist[i] = (int32_t)tmp[i];
    if (!next_field(&s, &b, &e)) return 0;
    c->n = parse_floats(b, e, c->logits, MAXN);
    if (!next_field(&s, &b, &e)) return 0;
    c->n_out = parse_floats(b, e, tmp, MAXN);
    for (size_t i = 0; i < c->n_out; i++) c->out_ids[i] = (int32_t)tmp[i];
    if (!next_field(&s, &b, &e)) return 0;
    return parse_floats(b, e, c->out_x, MAXN) == c->n_out;
}

/* Add the samplers of a comma-separated spec. */
static void add_specs(llm_sampler_chain *ch, const char *spec) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *p = buf;
    while (p && *p) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        while (*p == ' ') p++;
        char kind[16];
        int used = 0;
        cr_assert_eq(sscanf(p, "%15s%n", kind, &used), 1);
        float a[16];
        size_t na = parse_floats(p + used, p + strlen(p), a, 16);
        llm_status st;
        if (strcmp(kind, "top_k") == 0) st = llm_sampler_chain_add_top_k(ch, (int32_t)a[0]);
        else if (strcmp(kind, "top_p") == 0) st = llm_sampler_chain_add_top_p(ch, a[0], (size_t)a[1]);
        else if (strcmp(kind, "min_p") == 0) st = llm_sampler_chain_add_min_p(ch, a[0], (size_t)a[1]);
        else if (strcmp(kind, "typical") == 0) st = llm_sampler_chain_add_typical(ch, a[0], (size_t)a[1]);
        else if (strcmp(kind, "temp") == 0) st = llm_sampler_chain_add_temperature(ch, a[0]);
        else if (strcmp(kind, "penalties") == 0)
            st = llm_sampler_chain_add_penalties(ch, (int32_t)a[0], a[1], a[2], a[3]);
        else if (strcmp(kind, "bias") == 0) {
            llm_logit_bias lb[8];
            size_t nb = na / 2;
            for (size_t i = 0; i < nb; i++) {
                lb[i].token = (int32_t)a[2 * i];
                lb[i].bias = a[2 * i + 1];
            }
            st = llm_sampler_chain_add_logit_bias(ch, lb, nb);
        } else {
            cr_assert_fail("unknown sampler '%s'", kind);
            return;
        }
        cr_assert_eq(st, LLM_OK, "%s: %s", p, llm_sampling_last_error());
        p = comma ? comma + 1 : NULL;
    }
}

Test(llama_golden, candidate_sets_match_llama_cpp) {
    const char *path = "tests/sampling/golden/llama_samplers.txt";
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s (tests run from the source root)", path);
    char line[32768];
    int cases = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        golden_case c;
        cr_assert(parse_line(line, &c), "bad golden line: %.40s", line);
        cr_assert_eq(c.n, 64u, "%s", c.name);
        llm_sampler_chain *ch = tu_chain(MAXN, 1);
        add_specs(ch, c.spec);
        cr_assert_eq(llm_sampler_chain_add_greedy(ch), LLM_OK);
        for (size_t i = 0; i < c.n_hist; i++)
            cr_assert_eq(llm_sampler_chain_accept(ch, c.hist[i]), LLM_OK);
        int32_t ids[MAXN];
        float x[MAXN];
        size_t n = tu_cands(ch, c.logits, (int32_t)c.n, ids, x, MAXN);
        if (n == c.n && c.n_out == c.n) {
            /* nothing narrowed or changed: the chain may report the caller's logits */
            int changed = 0;
            for (size_t i = 0; i < c.n; i++) changed |= c.out_x[i] != c.logits[c.out_ids[i]];
            if (!changed) {
                cases++;
                llm_sampler_chain_free(ch);
                continue;
            }
        }
        cr_expect_eq(n, c.n_out, "%s: %zu candidates, llama.cpp %zu", c.name, n, c.n_out);
        for (size_t i = 0; i < c.n_out && i < n; i++) {
            size_t j = 0;
            while (j < n && ids[j] != c.out_ids[i]) j++;
            if (j == n) {
                cr_expect_fail("%s: id %d (llama.cpp) missing", c.name, c.out_ids[i]);
                continue;
            }
            float want = c.out_x[i], got = x[j];
            if (isinf(want)) {
                cr_expect(got == want, "%s: id %d logit %g, want %g", c.name, ids[j], got, want);
            } else {
                float tol = 1e-5f * (fabsf(want) > 1.0f ? fabsf(want) : 1.0f);
                cr_expect(fabsf(got - want) <= tol, "%s: id %d logit %.9g, llama.cpp %.9g", c.name,
                          ids[j], got, want);
            }
        }
        llm_sampler_chain_free(ch);
        cases++;
    }
    fclose(f);
    cr_expect_eq(cases, 17, "golden cases read: %d", cases);
}
