/*
 * test_stats.c -- 100k draws per case through temperature, top-k, top-p,
 * min-p (and the usual chain) at a fixed seed; the observed frequencies must
 * pass a Pearson chi-square test at p = 0.001 against the distribution
 * computed here from each sampler's definition in double precision. A
 * negative control checks that the test can fail.
 */
#include "sampling_test_util.h"

#define DRAWS 100000

static void draw_counts(llm_sampler_chain *ch, const float *x, int32_t n, long *obs) {
    memset(obs, 0, (size_t)n * sizeof *obs);
    for (int i = 0; i < DRAWS; i++) {
        int32_t tok;
        cr_assert_eq(llm_sampler_chain_sample(ch, x, n, &tok), LLM_OK);
        cr_assert(tok >= 0 && tok < n);
        obs[tok]++;
    }
}

static void expect_pass(const long *obs, const double *p, size_t n, const char *what) {
    int df;
    double chi = tu_chi2(obs, p, n, DRAWS, &df);
    double crit = tu_chi2_crit_001(df);
    cr_expect(chi < crit, "%s: chi2 %.2f >= %.3f (df %d)", what, chi, crit, df);
}

/* Keep p only where keep[i], renormalize. */
static void restrict_to(double *p, const int *keep, size_t n) {
    double z = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!keep[i]) p[i] = 0.0;
        z += p[i];
    }
    for (size_t i = 0; i < n; i++) p[i] /= z;
}

/* Reference top-k / top-p / min-p masks over double logits. */
static void ref_top_k(const double *x, size_t n, size_t k, int *keep) {
    for (size_t i = 0; i < n; i++) {
        size_t better = 0;
        for (size_t j = 0; j < n; j++) better += x[j] > x[i] || (x[j] == x[i] && j < i);
        keep[i] = better < k;
    }
}
static void ref_top_p(const double *x, size_t n, double top_p, int *keep) {
    double p[64];
    tu_softmax(x, n, 1.0, p);
    /* token i is kept iff the mass strictly better than it is < top_p */
    for (size_t i = 0; i < n; i++) {
        double above = 0.0;
        for (size_t j = 0; j < n; j++)
            if (x[j] > x[i] || (x[j] == x[i] && j < i)) above += p[j];
        keep[i] = above < top_p;
    }
}
static void ref_min_p(const double *x, size_t n, double min_p, int *keep) {
    double p[64];
    tu_softmax(x, n, 1.0, p);
    double pmax = 0.0;
    for (size_t i = 0; i < n; i++) pmax = p[i] > pmax ? p[i] : pmax;
    for (size_t i = 0; i < n; i++) keep[i] = p[i] >= min_p * pmax;
}

/* 12 logits, not sorted by id, well away from any cut boundary below. */
static const double L12[12] = {1.3, -0.4, 2.2, 0.1, 2.9, -1.5, 0.8, 1.9, -0.9, 0.35, 2.5, -2.2};

static void to_float(const double *x, float *f, size_t n) {
    for (size_t i = 0; i < n; i++) f[i] = (float)x[i];
}

Test(stats, temperature) {
    float x[12];
    double xd[12], p[12];
    long obs[12];
    to_float(L12, x, 12);
    for (int i = 0; i < 12; i++) xd[i] = x[i];
    llm_sampler_chain *ch = tu_chain(12, 1001);
    cr_assert_eq(llm_sampler_chain_add_temperature(ch, 0.7f), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_dist(ch), LLM_OK);
    draw_counts(ch, x, 12, obs);
    tu_softmax(xd, 12, 0.7, p);
    expect_pass(obs, p, 12, "temperature 0.7");
    /* negative control: the same counts against temperature 1 must fail */
    int df;
    double p1[12];
    tu_softmax(xd, 12, 1.0, p1);
    double chi = tu_chi2(obs, p1, 12, DRAWS, &df);
    cr_expect_gt(chi, tu_chi2_crit_001(df), "control should fail, chi2 %.2f", chi);
    llm_sampler_chain_free(ch);
}

Test(stats, top_k) {
    float x[12];
    double xd[12], p[12];
    long obs[12];
    int keep[12];
    to_float(L12, x, 12);
    for (int i = 0; i < 12; i++) xd[i] = x[i];
    llm_sampler_chain *ch = tu_chain(12, 1002);
    cr_assert_eq(llm_sampler_chain_add_top_k(ch, 5), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_temperature(ch, 1.3f), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_dist(ch), LLM_OK);
    draw_counts(ch, x, 12, obs);
    ref_top_k(xd, 12, 5, keep);
    tu_softmax(xd, 12, 1.3, p);
    restrict_to(p, keep, 12);
    expect_pass(obs, p, 12, "top-k 5, temperature 1.3");
    /* negative control: without the top-k restriction */
    double pfull[12];
    int df;
    tu_softmax(xd, 12, 1.3, pfull);
    double chi = tu_chi2(obs, pfull, 12, DRAWS, &df);
    cr_expect_gt(chi, tu_chi2_crit_001(df), "control should fail, chi2 %.2f", chi);
    llm_sampler_chain_free(ch);
}

Test(stats, top_p) {
    float x[12];
    double xd[12], p[12];
    long obs[12];
    int keep[12];
    to_float(L12, x, 12);
    for (int i = 0; i < 12; i++) xd[i] = x[i];
    llm_sampler_chain *ch = tu_chain(12, 1003);
    cr_assert_eq(llm_sampler_chain_add_top_p(ch, 0.8f, 1), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_dist(ch), LLM_OK);
    draw_counts(ch, x, 12, obs);
    ref_top_p(xd, 12, 0.8, keep);
    tu_softmax(xd, 12, 1.0, p);
    restrict_to(p, keep, 12);
    expect_pass(obs, p, 12, "top-p 0.8");
    llm_sampler_chain_free(ch);
}

Test(stats, min_p) {
    float x[12];
    double xd[12], p[12];
    long obs[12];
    int keep[12];
    to_float(L12, x, 12);
    for (int i = 0; i < 12; i++) xd[i] = x[i];
    llm_sampler_chain *ch = tu_chain(12, 1004);
    cr_assert_eq(llm_sampler_chain_add_min_p(ch, 0.1f, 1), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_temperature(ch, 0.9f), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_dist(ch), LLM_OK);
    draw_counts(ch, x, 12, obs);
    ref_min_p(xd, 12, 0.1, keep);
    tu_softmax(xd, 12, 0.9, p);
    restrict_to(p, keep, 12);
    expect_pass(obs, p, 12, "min-p 0.1, temperature 0.9");
    llm_sampler_chain_free(ch);
}

/* The usual chain on a 600-token vocabulary (dense first stage): 12
 * meaningful tokens among 588 at -8. top-k 8 -> top-p 0.9 -> min-p 0.05 ->
 * temperature 0.8, each applied in turn by the reference. */
Test(stats, usual_chain_dense) {
    enum { V = 600 };
    float *x = malloc(V * sizeof *x);
    double *xd = malloc(V * sizeof *xd), *p = malloc(V * sizeof *p);
    long *obs = malloc(V * sizeof *obs);
    int *keep = malloc(V * sizeof *keep);
    for (int i = 0; i < V; i++) x[i] = -8.0f;
    int slot[12];
    for (int i = 0; i < 12; i++) {
        slot[i] = (i * 997 + 13) % V;
        x[slot[i]] = (float)L12[i];
    }
    for (int i = 0; i < V; i++) xd[i] = x[i];
    llm_sampler_params sp = llm_sampler_default_params();
    sp.n_vocab_max = V;
    sp.seed = 1005;
    sp.top_k = 8;
    sp.top_p = 0.9f;
    sp.min_p = 0.05f;
    sp.temperature = 0.8f;
    llm_sampler_chain *ch;
    cr_assert_eq(llm_sampler_chain_from_params(&sp, &ch), LLM_OK);
    draw_counts(ch, x, V, obs);
    /* reference on the 12 slots (the -8 floor is outside top-k 8) */
    double sub[12], ps[12];
    int k1[12], k2[12], k3[12];
    for (int i = 0; i < 12; i++) sub[i] = xd[slot[i]];
    ref_top_k(sub, 12, 8, k1);
    double tmp[12];
    int n1 = 0, idx1[12];
    for (int i = 0; i < 12; i++)
        if (k1[i]) {
            idx1[n1] = i;
            tmp[n1++] = sub[i];
        }
    ref_top_p(tmp, (size_t)n1, 0.9, k2);
    double tmp2[12];
    int n2 = 0, idx2[12];
    for (int i = 0; i < n1; i++)
        if (k2[i]) {
            idx2[n2] = idx1[i];
            tmp2[n2++] = tmp[i];
        }
    ref_min_p(tmp2, (size_t)n2, 0.05, k3);
    for (int i = 0; i < 12; i++) ps[i] = 0.0;
    double z = 0.0;
    for (int i = 0; i < n2; i++)
        if (k3[i]) {
            ps[idx2[i]] = exp(tmp2[i] / 0.8);
            z += ps[idx2[i]];
        }
    for (int i = 0; i < V; i++) p[i] = 0.0;
    for (int i = 0; i < 12; i++) p[slot[i]] = ps[i] / z;
    expect_pass(obs, p, V, "usual chain");
    llm_sampler_chain_free(ch);
    free(x);
    free(xd);
    free(p);
    free(obs);
    free(keep);
}

/* top-p alone on the dense path (histogram selection), 1024 tokens. */
Test(stats, top_p_dense) {
    enum { V = 1024 };
    float *x = malloc(V * sizeof *x);
    double *p = malloc(V * sizeof *p);
    long *obs = malloc(V * sizeof *obs);
    for (int i = 0; i < V; i++) x[i] = -12.0f + (float)(i % 7) * 0.01f;
    int slot[12];
    double sub[12];
    for (int i = 0; i < 12; i++) {
        slot[i] = (i * 331 + 5) % V;
        x[slot[i]] = (float)L12[i];
        sub[i] = x[slot[i]];
    }
    llm_sampler_chain *ch = tu_chain(V, 1006);
    cr_assert_eq(llm_sampler_chain_add_top_p(ch, 0.75f, 1), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_dist(ch), LLM_OK);
    draw_counts(ch, x, V, obs);
    /* The floor carries ~1012 * e^-12 / Z ~ 3e-4 of the mass, so the 0.75
     * cut falls among the 12; reference over the full vocabulary: */
    double m = 2.9, z = 0.0;
    for (int i = 0; i < V; i++) z += exp((double)x[i] - m);
    int keep[12];
    for (int i = 0; i < 12; i++) {
        double above = 0.0;
        for (int j = 0; j < 12; j++)
            if (sub[j] > sub[i]) above += exp(sub[j] - m) / z;
        keep[i] = above < 0.75;
    }
    for (int i = 0; i < V; i++) p[i] = 0.0;
    double zk = 0.0;
    for (int i = 0; i < 12; i++)
        if (keep[i]) zk += exp(sub[i] - m);
    for (int i = 0; i < 12; i++)
        if (keep[i]) p[slot[i]] = exp(sub[i] - m) / zk;
    expect_pass(obs, p, V, "dense top-p 0.75");
    llm_sampler_chain_free(ch);
    free(x);
    free(p);
    free(obs);
}
