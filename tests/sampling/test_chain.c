/*
 * test_chain.c -- chain construction and contracts: argument checks, the
 * selector rule, from_params order, caller logits never written, the draw
 * against an independent inverse-CDF in double, reproducibility (same seed,
 * different seeds, across threads), and dense vs sparse agreement.
 */
#include <pthread.h>

#include "sampling_test_util.h"

Test(chain, create_and_argument_checks) {
    llm_sampler_chain *ch = (llm_sampler_chain *)1;
    llm_sampler_chain_params cp = llm_sampler_chain_default_params();
    cp.n_vocab_max = 0;
    cr_expect_eq(llm_sampler_chain_create(&cp, &ch), LLM_ERR_INVALID_ARG);
    cr_expect_null(ch);
    cr_expect_neq(llm_sampling_last_error()[0], '\0');
    cr_expect_eq(llm_sampler_chain_create(NULL, &ch), LLM_ERR_INVALID_ARG);
    llm_sampler_chain_free(NULL);
    llm_stop_matcher_free(NULL);
    llm_sampler_chain_reset(NULL);

    ch = tu_chain(8, 1);
    const float x[8] = {0};
    int32_t tok;
    cr_expect_eq(llm_sampler_chain_sample(ch, x, 8, &tok), LLM_ERR_STATE); /* no selector */
    cr_assert_eq(llm_sampler_chain_add_top_k(ch, 2), LLM_OK);
    cr_expect_eq(llm_sampler_chain_sample(ch, x, 8, &tok), LLM_ERR_STATE);
    cr_assert_eq(llm_sampler_chain_add_dist(ch), LLM_OK);
    cr_expect_eq(llm_sampler_chain_add_top_k(ch, 2), LLM_ERR_STATE); /* after the selector */
    cr_expect_eq(llm_sampler_chain_add_greedy(ch), LLM_ERR_STATE);
    cr_expect_eq(llm_sampler_chain_length(ch), 2);
    cr_expect_eq(llm_sampler_chain_sample(ch, x, 9, &tok), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_sampler_chain_sample(ch, x, 0, &tok), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_sampler_chain_sample(ch, NULL, 8, &tok), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_sampler_chain_sample(ch, x, 8, &tok), LLM_OK);
    cr_expect(tok == 0 || tok == 1);
    cr_expect_eq(llm_sampler_chain_add_top_p(ch, 0.0f, 1), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_sampler_chain_add_min_p(ch, 1.5f, 1), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_sampler_chain_add_temperature(ch, NAN), LLM_ERR_INVALID_ARG);
    llm_sampler_chain_free(ch);
}

Test(chain, from_params_order_and_greedy) {
    llm_sampler_params sp = llm_sampler_default_params();
    sp.n_vocab_max = 100;
    llm_sampler_chain *ch;
    cr_assert_eq(llm_sampler_chain_from_params(&sp, &ch), LLM_OK);
    cr_expect_eq(llm_sampler_chain_length(ch), 5); /* top-k top-p min-p temp dist */
    llm_sampler_chain_free(ch);

    sp.repeat_penalty = 1.1f;
    sp.typical_p = 0.9f;
    llm_logit_bias b = {3, 1.0f};
    sp.logit_bias = &b;
    sp.n_logit_bias = 1;
    cr_assert_eq(llm_sampler_chain_from_params(&sp, &ch), LLM_OK);
    cr_expect_eq(llm_sampler_chain_length(ch), 8);
    llm_sampler_chain_free(ch);

    sp.temperature = 0.0f; /* bias, penalties, greedy */
    cr_assert_eq(llm_sampler_chain_from_params(&sp, &ch), LLM_OK);
    cr_expect_eq(llm_sampler_chain_length(ch), 3);
    float x[100];
    for (int i = 0; i < 100; i++) x[i] = (float)((i * 37) % 100) * 0.01f;
    int32_t tok;
    cr_assert_eq(llm_sampler_chain_sample(ch, x, 100, &tok), LLM_OK);
    cr_expect_eq(tok, 3); /* x[3] = 0.11 + bias 1 beats x[27] = 0.99 */
    llm_sampler_chain_free(ch);

    sp.top_p = 0.0f; /* invalid but enabled: the adder's error is returned */
    sp.temperature = 1.0f;
    cr_expect_eq(llm_sampler_chain_from_params(&sp, &ch), LLM_ERR_INVALID_ARG);
    cr_expect_null(ch);
}

static float *gauss_logits(int n, uint64_t seed) {
    float *x = malloc((size_t)n * sizeof *x);
    uint64_t s = seed;
    for (int i = 0; i < n; i++) x[i] = (float)(3.0 * tu_gauss(&s));
    for (int i = 0; i < 4; i++) x[(i * 104729 + 17) % n] = 14.0f - (float)i;
    return x;
}

static llm_sampler_chain *full_chain(int32_t v, uint64_t seed) {
    llm_sampler_params sp = llm_sampler_default_params();
    sp.n_vocab_max = v;
    sp.seed = seed;
    sp.repeat_penalty = 1.1f;
    sp.presence_penalty = 0.3f;
    sp.frequency_penalty = 0.2f;
    llm_sampler_chain *ch;
    cr_assert_eq(llm_sampler_chain_from_params(&sp, &ch), LLM_OK);
    return ch;
}

static void gen(llm_sampler_chain *ch, const float *x, int32_t v, int n, int32_t *out) {
    for (int i = 0; i < n; i++) {
        cr_assert_eq(llm_sampler_chain_sample(ch, x, v, &out[i]), LLM_OK);
        cr_assert_eq(llm_sampler_chain_accept(ch, out[i]), LLM_OK);
    }
}

Test(chain, logits_never_written) {
    enum { V = 5000 };
    float *x = gauss_logits(V, 3);
    float *copy = malloc(V * sizeof *copy);
    memcpy(copy, x, V * sizeof *copy);
    llm_sampler_chain *ch = full_chain(V, 1);
    int32_t out[20];
    gen(ch, x, V, 20, out);
    cr_expect(memcmp(copy, x, V * sizeof *x) == 0);
    llm_sampler_chain_free(ch);
    /* temperature first (dense write path) */
    ch = tu_chain(V, 1);
    cr_assert_eq(llm_sampler_chain_add_temperature(ch, 0.5f), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_dist(ch), LLM_OK);
    gen(ch, x, V, 5, out);
    cr_expect(memcmp(copy, x, V * sizeof *x) == 0);
    llm_sampler_chain_free(ch);
    free(x);
    free(copy);
}

/* The draw, checked against an inverse CDF in double: for stream word n,
 * u = (w >> 8) / 2^24 and the token is the first i with cum_p(i) > u. */
Test(chain, draw_matches_inverse_cdf) {
    enum { V = 3000 };
    float *x = gauss_logits(V, 8);
    double *xd = malloc(V * sizeof *xd), *p = malloc(V * sizeof *p);
    for (int i = 0; i < V; i++) xd[i] = x[i] * 0.25; /* flatter, so many tokens matter */
    for (int i = 0; i < V; i++) x[i] = (float)xd[i];
    tu_softmax(xd, V, 1.0, p);
    llm_sampler_chain *ch = tu_chain(V, 777);
    cr_assert_eq(llm_sampler_chain_add_dist(ch), LLM_OK);
    int checked = 0;
    for (uint64_t n = 0; n < 2000; n++) {
        int32_t tok;
        cr_assert_eq(llm_sampler_chain_sample(ch, x, V, &tok), LLM_OK);
        double u = (double)(llm_philox_stream_word(777, n) >> 8) / 16777216.0;
        double cum = 0.0;
        int want = V - 1;
        double gap = 1.0;
        for (int i = 0; i < V; i++) {
            cum += p[i];
            if (fabs(cum - u) < gap) gap = fabs(cum - u);
            if (cum > u) {
                want = i;
                break;
            }
        }
        if (gap < 1e-5) continue; /* within float rounding of a boundary */
        checked++;
        cr_expect_eq(tok, want, "draw %d: u=%.9f token %d want %d", (int)n, u, tok, want);
    }
    cr_expect_gt(checked, 1500);
    llm_sampler_chain_free(ch);
    free(x);
    free(xd);
    free(p);
}

Test(chain, same_seed_same_tokens_different_seed_differs) {
    enum { V = 49152, N = 200 };
    float *x = gauss_logits(V, 1);
    for (int i = 0; i < V; i++) x[i] *= 0.3f; /* a wide distribution */
    int32_t a[N], b[N], c[N];
    llm_sampler_chain *ch = full_chain(V, 42);
    gen(ch, x, V, N, a);
    llm_sampler_chain_reset(ch);
    gen(ch, x, V, N, b);
    cr_expect(memcmp(a, b, sizeof a) == 0, "reset + same seed must repeat");
    llm_sampler_chain_free(ch);
    ch = full_chain(V, 43);
    gen(ch, x, V, N, c);
    int diff = 0;
    for (int i = 0; i < N; i++) diff += a[i] != c[i];
    cr_expect_gt(diff, N / 4, "seed 43 agrees with seed 42 at %d of %d", N - diff, N);
    llm_sampler_chain_set_seed(ch, 42);
    llm_sampler_chain_reset(ch);
    gen(ch, x, V, N, c);
    cr_expect(memcmp(a, c, sizeof a) == 0, "set_seed(42) must repeat seed 42");
    llm_sampler_chain_free(ch);
    free(x);
}

typedef struct {
    const float *x;
    int32_t out[100];
} thread_job;

static void *thread_main(void *arg) {
    thread_job *j = arg;
    llm_sampler_chain *ch = full_chain(4096, 9);
    gen(ch, j->x, 4096, 100, j->out);
    llm_sampler_chain_free(ch);
    return NULL;
}

Test(chain, thread_agnostic) {
    float *x = gauss_logits(4096, 2);
    for (int i = 0; i < 4096; i++) x[i] *= 0.3f;
    thread_job j1 = {x, {0}}, j2 = {x, {0}};
    pthread_t t1, t2;
    cr_assert_eq(pthread_create(&t1, NULL, thread_main, &j1), 0);
    cr_assert_eq(pthread_create(&t2, NULL, thread_main, &j2), 0);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    int32_t here[100];
    llm_sampler_chain *ch = full_chain(4096, 9);
    gen(ch, x, 4096, 100, here);
    cr_expect(memcmp(j1.out, here, sizeof here) == 0);
    cr_expect(memcmp(j2.out, here, sizeof here) == 0);
    llm_sampler_chain_free(ch);
    free(x);
}

/* top-p and typical give the same set whether they run on the whole
 * vocabulary (dense) or after a no-op-sized top-k (sparse). */
Test(chain, dense_and_sparse_paths_agree) {
    enum { V = 8000 };
    float *x = gauss_logits(V, 4);
    int32_t *a = malloc(V * sizeof *a), *b = malloc(V * sizeof *b);
    for (int kind = 0; kind < 3; kind++) {
        size_t n[2];
        for (int sparse = 0; sparse < 2; sparse++) {
            llm_sampler_chain *ch = tu_chain(V, 1);
            if (sparse) cr_assert_eq(llm_sampler_chain_add_top_k(ch, V - 1), LLM_OK);
            if (kind == 0) cr_assert_eq(llm_sampler_chain_add_top_p(ch, 0.9f, 1), LLM_OK);
            if (kind == 1) cr_assert_eq(llm_sampler_chain_add_typical(ch, 0.9f, 1), LLM_OK);
            if (kind == 2) cr_assert_eq(llm_sampler_chain_add_min_p(ch, 0.01f, 1), LLM_OK);
            cr_assert_eq(llm_sampler_chain_add_greedy(ch), LLM_OK);
            n[sparse] = tu_cands(ch, x, V, sparse ? b : a, NULL, V);
            llm_sampler_chain_free(ch);
        }
        cr_expect_eq(n[0], n[1], "kind %d", kind);
        for (size_t i = 0; i < n[0]; i++) cr_expect(tu_has(b, n[1], a[i]), "kind %d id %d", kind, a[i]);
    }
    free(x);
    free(a);
    free(b);
}

/* Random chains on random logits (with NaN and +-inf sprinkled in): every
 * call succeeds unless no finite logit is left, the token is a finite
 * candidate of the selector's set, and nothing crashes (the suite also runs
 * under ASan/UBSan). */
static llm_status mask_mod3(void *user, const int32_t *ids, float *logits, size_t n) {
    (void)user;
    for (size_t i = 0; i < n; i++)
        if (ids[i] % 3 == 1) logits[i] = -INFINITY;
    return LLM_OK;
}

Test(chain, random_chains_hold_their_contracts) {
    enum { VMAX = 3000 };
    float *x = malloc(VMAX * sizeof *x);
    int32_t *ids = malloc(VMAX * sizeof *ids);
    uint64_t s = 2024;
    for (int iter = 0; iter < 300; iter++) {
        int32_t v = 1 + (int32_t)(tu_next(&s) % VMAX);
        double scale = 0.1 + 5.0 * tu_unif(&s);
        int finite = 0;
        for (int32_t i = 0; i < v; i++) {
            uint64_t r = tu_next(&s) % 100;
            x[i] = r == 0 ? NAN : r == 1 ? -INFINITY : r == 2 ? INFINITY : (float)(scale * tu_gauss(&s));
            finite |= r > 2;
        }
        llm_sampler_chain *ch = tu_chain(VMAX, tu_next(&s));
        int n_s = (int)(tu_next(&s) % 7);
        int masked = 0;
        for (int k = 0; k < n_s; k++) {
            float p = (float)tu_unif(&s);
            size_t keep = (size_t)(tu_next(&s) % 3);
            switch (tu_next(&s) % 9) {
            case 0: cr_assert_eq(llm_sampler_chain_add_top_k(ch, (int32_t)(tu_next(&s) % 60)), LLM_OK); break;
            case 1: cr_assert_eq(llm_sampler_chain_add_top_p(ch, p > 0 ? p : 0.5f, keep), LLM_OK); break;
            case 2: cr_assert_eq(llm_sampler_chain_add_min_p(ch, p, keep), LLM_OK); break;
            case 3: cr_assert_eq(llm_sampler_chain_add_typical(ch, p > 0 ? p : 0.5f, keep), LLM_OK); break;
            case 4: cr_assert_eq(llm_sampler_chain_add_temperature(ch, 2.0f * p - 0.2f), LLM_OK); break;
            case 5: cr_assert_eq(llm_sampler_chain_add_penalties(ch, (int32_t)(tu_next(&s) % 70), 1.3f, 0.2f, 0.1f), LLM_OK); break;
            case 6: {
                llm_logit_bias b[3] = {{(int32_t)(tu_next(&s) % VMAX), 5.0f},
                                       {(int32_t)(tu_next(&s) % VMAX), -INFINITY},
                                       {0, -1.0f}};
                cr_assert_eq(llm_sampler_chain_add_logit_bias(ch, b, 3), LLM_OK);
                break;
            }
            case 7:
                cr_assert_eq(llm_sampler_chain_add_mask(ch, mask_mod3, NULL), LLM_OK);
                masked = 1;
                break;
            default: break;
            }
        }
        if (tu_next(&s) % 2) cr_assert_eq(llm_sampler_chain_add_greedy(ch), LLM_OK);
        else cr_assert_eq(llm_sampler_chain_add_dist(ch), LLM_OK);
        for (int t = 0; t < 5; t++) {
            int32_t tok;
            llm_status st = llm_sampler_chain_sample(ch, x, v, &tok);
            if (st == LLM_ERR_STATE) {
                /* allowed only when filters/masks/bias left nothing finite */
                cr_expect(!finite || masked || n_s > 0, "iter %d: %s", iter, llm_sampling_last_error());
                cr_expect_eq(tok, -1);
                break;
            }
            cr_assert_eq(st, LLM_OK, "iter %d: %s", iter, llm_sampling_last_error());
            cr_assert(tok >= 0 && tok < v, "iter %d: token %d", iter, tok);
            cr_expect(isfinite(x[tok]), "iter %d: token %d has logit %g", iter, tok, x[tok]);
            if (masked) cr_expect(tok % 3 != 1, "iter %d: masked token %d", iter, tok);
            size_t n = llm_sampler_chain_last_candidates(ch, ids, NULL, VMAX);
            cr_expect(n >= 1 && n <= (size_t)v);
            cr_expect(tu_has(ids, n, tok), "iter %d: token %d not among the %zu candidates", iter, tok, n);
            cr_assert_eq(llm_sampler_chain_accept(ch, tok), LLM_OK);
        }
        llm_sampler_chain_free(ch);
    }
    free(x);
    free(ids);
}
