/*
 * test_filters.c -- top-k, top-p, min-p, typical-p, temperature and greedy
 * on hand-computed cases, plus full-vocabulary (dense path) cases checked
 * against a brute-force reference written here from each definition
 * (full sort in double precision).
 */
#include "sampling_test_util.h"

#define NEG_INF (-INFINITY)

/* Candidate set after `add` on logits x[0..n), with greedy at the end. */
typedef llm_status (*adder)(llm_sampler_chain *ch);
static size_t run(adder add, const float *x, int32_t n, int32_t *ids, float *lx) {
    llm_sampler_chain *ch = tu_chain(1 << 16, 1);
    cr_assert_eq(add(ch), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_greedy(ch), LLM_OK);
    size_t c = tu_cands(ch, x, n, ids, lx, (size_t)n);
    llm_sampler_chain_free(ch);
    return c;
}

/* ---- top-k ------------------------------------------------------------- */

static llm_status topk3(llm_sampler_chain *ch) { return llm_sampler_chain_add_top_k(ch, 3); }
static llm_status topk0(llm_sampler_chain *ch) { return llm_sampler_chain_add_top_k(ch, 0); }

Test(top_k, keeps_k_best_sorted_ties_by_lower_id) {
    const float x[7] = {1.0f, 5.0f, 3.0f, 5.0f, 2.0f, NEG_INF, NAN};
    int32_t ids[7];
    float lx[7];
    size_t n = run(topk3, x, 7, ids, lx);
    cr_assert_eq(n, 3);
    cr_expect_eq(ids[0], 1);
    cr_expect_eq(ids[1], 3);
    cr_expect_eq(ids[2], 2);
    cr_expect_eq(lx[0], 5.0f);
    cr_expect_eq(lx[2], 3.0f);
}

Test(top_k, zero_is_noop_and_never_keeps_nonfinite) {
    const float x[5] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
    int32_t ids[5];
    cr_expect_eq(run(topk0, x, 5, ids, NULL), 5);
    const float y[4] = {NEG_INF, 2.0f, NAN, NEG_INF};
    cr_expect_eq(run(topk3, y, 4, ids, NULL), 1);
    cr_expect_eq(ids[0], 1);
}

static int cmp_desc_pair(const void *a, const void *b) {
    const double *x = a, *y = b; /* [value, id] */
    if (x[0] != y[0]) return x[0] < y[0] ? 1 : -1;
    return x[1] < y[1] ? -1 : 1;
}

Test(top_k, dense_path_matches_full_sort) {
    enum { V = 20000, K = 40 };
    float *x = malloc(V * sizeof *x);
    double *pairs = malloc(2 * V * sizeof *pairs);
    uint64_t s = 99;
    for (int i = 0; i < V; i++) {
        x[i] = (float)(3.0 * tu_gauss(&s));
        if (i % 1000 == 7) x[i] = x[i - 1]; /* some exact ties */
        pairs[2 * i] = x[i];
        pairs[2 * i + 1] = i;
    }
    qsort(pairs, V, 2 * sizeof *pairs, cmp_desc_pair);
    llm_sampler_chain *ch = tu_chain(V, 1);
    cr_assert_eq(llm_sampler_chain_add_top_k(ch, K), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_greedy(ch), LLM_OK);
    int32_t ids[K];
    cr_assert_eq(tu_cands(ch, x, V, ids, NULL, K), K);
    for (int i = 0; i < K; i++) cr_expect_eq(ids[i], (int32_t)pairs[2 * i + 1], "rank %d", i);
    llm_sampler_chain_free(ch);
    free(x);
    free(pairs);
}

/* ---- top-p ------------------------------------------------------------- */

/* probabilities, deliberately not in id order */
static const double P5[5] = {0.15, 0.5, 0.05, 0.2, 0.1};
static void logits_of(const double *p, size_t n, float *x) {
    for (size_t i = 0; i < n; i++) x[i] = (float)log(p[i]);
}

static float g_p;
static size_t g_keep;
static llm_status topp(llm_sampler_chain *ch) { return llm_sampler_chain_add_top_p(ch, g_p, g_keep); }
static llm_status minp(llm_sampler_chain *ch) { return llm_sampler_chain_add_min_p(ch, g_p, g_keep); }
static llm_status typ(llm_sampler_chain *ch) { return llm_sampler_chain_add_typical(ch, g_p, g_keep); }

Test(top_p, smallest_prefix_reaching_p) {
    float x[5];
    int32_t ids[5];
    logits_of(P5, 5, x);
    g_keep = 1;
    /* sorted: id1 .5, id3 .2, id0 .15, id4 .1, id2 .05; cum .5 .7 .85 .95 1 */
    g_p = 0.1f;
    cr_expect_eq(run(topp, x, 5, ids, NULL), 1);
    cr_expect_eq(ids[0], 1);
    g_p = 0.6f;
    cr_assert_eq(run(topp, x, 5, ids, NULL), 2);
    cr_expect(tu_has(ids, 2, 1) && tu_has(ids, 2, 3));
    g_p = 0.75f;
    cr_assert_eq(run(topp, x, 5, ids, NULL), 3);
    cr_expect(tu_has(ids, 3, 1) && tu_has(ids, 3, 3) && tu_has(ids, 3, 0));
    g_p = 0.9f;
    cr_assert_eq(run(topp, x, 5, ids, NULL), 4);
    cr_expect(!tu_has(ids, 4, 2));
    g_p = 0.1f;
    g_keep = 3;
    cr_assert_eq(run(topp, x, 5, ids, NULL), 3);
    cr_expect(tu_has(ids, 3, 1) && tu_has(ids, 3, 3) && tu_has(ids, 3, 0));
    g_p = 1.0f;
    g_keep = 1;
    cr_expect_eq(run(topp, x, 5, ids, NULL), 5);
}

/* Reference top-p by full sort in double; returns the kept count and marks keep[]. */
static size_t ref_top_p(const float *x, size_t n, double p, unsigned char *keep, double *margin) {
    double *pairs = malloc(2 * n * sizeof *pairs);
    double m = -INFINITY, z = 0.0;
    for (size_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    for (size_t i = 0; i < n; i++) {
        pairs[2 * i] = x[i];
        pairs[2 * i + 1] = (double)i;
        z += exp(x[i] - m);
    }
    qsort(pairs, n, 2 * sizeof *pairs, cmp_desc_pair);
    double cum = 0.0;
    size_t k = 0;
    memset(keep, 0, n);
    double before = 0.0;
    while (k < n) {
        before = cum;
        cum += exp(pairs[2 * k] - m) / z;
        keep[(size_t)pairs[2 * k + 1]] = 1;
        k++;
        if (cum >= p) break;
    }
    /* distance of the cut from p on either side */
    *margin = fmin(p - before, cum - p);
    free(pairs);
    return k;
}

static void check_dense_top_p(double peak, float p, uint64_t seed) {
    enum { V = 30000 };
    float *x = malloc(V * sizeof *x);
    unsigned char *keep = malloc(V);
    int32_t *ids = malloc(V * sizeof *ids);
    uint64_t s = seed;
    for (int i = 0; i < V; i++) x[i] = (float)(3.0 * tu_gauss(&s));
    for (int i = 0; i < 5; i++) x[(i * 7919) % V] = (float)(peak - i);
    double margin;
    size_t nk = ref_top_p(x, V, p, keep, &margin);
    cr_assert(margin > 5e-6, "test input too close to the boundary (%g)", margin);
    g_p = p;
    g_keep = 1;
    size_t n = run(topp, x, V, ids, NULL);
    cr_expect_eq(n, nk, "kept %zu, reference %zu", n, nk);
    for (size_t i = 0; i < n; i++) cr_expect(keep[ids[i]], "id %d should not be kept", ids[i]);
    free(x);
    free(keep);
    free(ids);
}

Test(top_p, dense_path_matches_full_sort_peaked) { check_dense_top_p(20.0, 0.95f, 5); }
Test(top_p, dense_path_matches_full_sort_flat) { check_dense_top_p(5.0, 0.9f, 6); }

/* ---- min-p ------------------------------------------------------------- */

Test(min_p, keeps_p_at_least_fraction_of_max_in_order) {
    static const double P[5] = {0.06, 0.4, 0.04, 0.3, 0.2};
    float x[5];
    int32_t ids[5];
    logits_of(P, 5, x);
    g_keep = 1;
    g_p = 0.12f; /* threshold 0.048: drops only 0.04 */
    cr_assert_eq(run(minp, x, 5, ids, NULL), 4);
    cr_expect_eq(ids[0], 0); /* order preserved */
    cr_expect_eq(ids[1], 1);
    cr_expect_eq(ids[2], 3);
    cr_expect_eq(ids[3], 4);
    g_p = 0.6f; /* threshold 0.24 */
    cr_assert_eq(run(minp, x, 5, ids, NULL), 2);
    cr_expect_eq(ids[0], 1);
    cr_expect_eq(ids[1], 3);
    g_p = 0.99f;
    g_keep = 2;
    cr_assert_eq(run(minp, x, 5, ids, NULL), 2);
    cr_expect(tu_has(ids, 2, 1) && tu_has(ids, 2, 3));
}

Test(min_p, dense_path_matches_definition) {
    enum { V = 40000 };
    float *x = malloc(V * sizeof *x);
    int32_t *ids = malloc(V * sizeof *ids);
    uint64_t s = 11;
    double m = -INFINITY;
    for (int i = 0; i < V; i++) {
        x[i] = (float)(3.0 * tu_gauss(&s));
        m = x[i] > m ? x[i] : m;
    }
    g_p = 0.05f;
    g_keep = 1;
    size_t n = run(minp, x, V, ids, NULL);
    size_t want = 0;
    for (int i = 0; i < V; i++) {
        double r = exp(x[i] - m); /* p_i / p_max */
        if (fabs(r - 0.05) < 1e-6) continue; /* not decidable at float precision */
        if (r >= 0.05) {
            want++;
            cr_expect(tu_has(ids, n, i), "id %d (ratio %g) missing", i, r);
        }
    }
    cr_expect_eq(n, want);
    free(x);
    free(ids);
}

/* ---- typical ------------------------------------------------------------ */

Test(typical, orders_by_distance_to_entropy) {
    /* p = .4 .3 .2 .1, H = 1.2799 nats; |-ln p - H| = .364 .076 .330 1.023:
     * order id1 (.3), id2 (.2), id0 (.4), id3 (.1). */
    static const double P[4] = {0.4, 0.3, 0.2, 0.1};
    float x[4];
    int32_t ids[4];
    logits_of(P, 4, x);
    g_keep = 1;
    g_p = 0.25f;
    cr_assert_eq(run(typ, x, 4, ids, NULL), 1);
    cr_expect_eq(ids[0], 1);
    g_p = 0.45f;
    cr_assert_eq(run(typ, x, 4, ids, NULL), 2);
    cr_expect(tu_has(ids, 2, 1) && tu_has(ids, 2, 2));
    g_p = 0.55f;
    cr_assert_eq(run(typ, x, 4, ids, NULL), 3);
    cr_expect(!tu_has(ids, 3, 3));
    g_p = 0.95f;
    cr_assert_eq(run(typ, x, 4, ids, NULL), 4);
}

/* ---- temperature and greedy -------------------------------------------- */

static float g_t;
static llm_status temp(llm_sampler_chain *ch) { return llm_sampler_chain_add_temperature(ch, g_t); }

Test(temperature, scales_logits_by_reciprocal) {
    const float x[3] = {1.0f, -2.0f, 3.0f};
    int32_t ids[3];
    float lx[3];
    g_t = 0.5f;
    cr_assert_eq(run(temp, x, 3, ids, lx), 3);
    cr_expect_eq(lx[0], 2.0f);
    cr_expect_eq(lx[1], -4.0f);
    cr_expect_eq(lx[2], 6.0f);
    g_t = 2.0f;
    cr_assert_eq(run(temp, x, 3, ids, lx), 3);
    cr_expect_eq(lx[2], 1.5f);
    g_t = 0.0f; /* greedy */
    cr_assert_eq(run(temp, x, 3, ids, lx), 1);
    cr_expect_eq(ids[0], 2);
    g_t = -1.0f;
    cr_assert_eq(run(temp, x, 3, ids, lx), 1);
    cr_expect_eq(ids[0], 2);
}

Test(greedy, first_of_equal_maxima) {
    const float x[5] = {1.0f, 3.0f, NAN, 3.0f, 2.0f};
    llm_sampler_chain *ch = tu_chain(8, 1);
    cr_assert_eq(llm_sampler_chain_add_greedy(ch), LLM_OK);
    int32_t tok;
    cr_assert_eq(llm_sampler_chain_sample(ch, x, 5, &tok), LLM_OK);
    cr_expect_eq(tok, 1);
    const float dead[3] = {NEG_INF, NAN, NEG_INF};
    cr_expect_eq(llm_sampler_chain_sample(ch, dead, 3, &tok), LLM_ERR_STATE);
    cr_expect_eq(tok, -1);
    llm_sampler_chain_free(ch);
}
