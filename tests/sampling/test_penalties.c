/*
 * test_penalties.c -- repetition / frequency / presence penalties over a
 * window, logit bias, and the masking hook, on hand-computed cases, on both
 * the dense path (first in the chain) and the sparse path (after top-k).
 */
#include "sampling_test_util.h"

static const float X6[6] = {1.0f, 2.0f, -1.0f, 0.5f, 3.0f, -2.0f};

static llm_sampler_chain *pen_chain(int32_t window, bool sparse) {
    llm_sampler_chain *ch = tu_chain(16, 1);
    if (sparse) cr_assert_eq(llm_sampler_chain_add_top_k(ch, 5), LLM_OK); /* drops id 5 */
    cr_assert_eq(llm_sampler_chain_add_penalties(ch, window, 2.0f, 0.5f, 0.25f), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_greedy(ch), LLM_OK);
    return ch;
}

static float logit_of(const int32_t *ids, const float *x, size_t n, int32_t id) {
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id) return x[i];
    cr_assert_fail("id %d not among the candidates", id);
    return 0.0f;
}

static void check_penalties(bool sparse) {
    llm_sampler_chain *ch = pen_chain(8, sparse);
    const int32_t hist[4] = {2, 2, 5, 4};
    for (int i = 0; i < 4; i++) cr_assert_eq(llm_sampler_chain_accept(ch, hist[i]), LLM_OK);
    int32_t ids[6];
    float x[6];
    size_t n = tu_cands(ch, X6, 6, ids, x, 6);
    cr_assert_eq(n, sparse ? 5u : 6u);
    /* id 2: x=-1, c=2: -1*2 = -2, then -(2*0.5 + 0.25) = -3.25 */
    cr_expect_eq(logit_of(ids, x, n, 2), -3.25f);
    /* id 4: x=3, c=1: 3/2 = 1.5, then -(0.5 + 0.25) = 0.75 */
    cr_expect_eq(logit_of(ids, x, n, 4), 0.75f);
    /* id 5: x=-2, c=1: -4 - 0.75 */
    if (!sparse) cr_expect_eq(logit_of(ids, x, n, 5), -4.75f);
    cr_expect_eq(logit_of(ids, x, n, 0), 1.0f);
    cr_expect_eq(logit_of(ids, x, n, 1), 2.0f);
    cr_expect_eq(logit_of(ids, x, n, 3), 0.5f);
    /* greedy now picks id 1 (2.0) instead of id 4 (3.0) */
    int32_t tok;
    cr_assert_eq(llm_sampler_chain_sample(ch, X6, 6, &tok), LLM_OK);
    cr_expect_eq(tok, 1);
    /* reset forgets the history */
    llm_sampler_chain_reset(ch);
    cr_assert_eq(llm_sampler_chain_sample(ch, X6, 6, &tok), LLM_OK);
    cr_expect_eq(tok, 4);
    llm_sampler_chain_free(ch);
}

Test(penalties, dense_hand_computed) { check_penalties(false); }
Test(penalties, sparse_hand_computed) { check_penalties(true); }

Test(penalties, window_forgets_old_tokens) {
    for (int sparse = 0; sparse < 2; sparse++) {
        llm_sampler_chain *ch = pen_chain(3, sparse);
        const int32_t hist[4] = {2, 2, 5, 4}; /* window keeps 2, 5, 4 */
        for (int i = 0; i < 4; i++) cr_assert_eq(llm_sampler_chain_accept(ch, hist[i]), LLM_OK);
        int32_t ids[6];
        float x[6];
        size_t n = tu_cands(ch, X6, 6, ids, x, 6);
        cr_expect_eq(logit_of(ids, x, n, 2), -2.75f); /* c = 1: -2 - 0.75 */
        for (int i = 0; i < 3; i++) cr_assert_eq(llm_sampler_chain_accept(ch, 0), LLM_OK);
        n = tu_cands(ch, X6, 6, ids, x, 6); /* window: 0, 0, 0 */
        cr_expect_eq(logit_of(ids, x, n, 2), -1.0f);
        cr_expect_eq(logit_of(ids, x, n, 4), 3.0f);
        cr_expect_eq(logit_of(ids, x, n, 0), 1.0f / 2.0f - (3 * 0.5f + 0.25f));
        llm_sampler_chain_free(ch);
    }
}

Test(penalties, bad_arguments) {
    llm_sampler_chain *ch = tu_chain(16, 1);
    cr_expect_eq(llm_sampler_chain_add_penalties(ch, -1, 1.1f, 0, 0), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_sampler_chain_add_penalties(ch, 4, 0.0f, 0, 0), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_sampler_chain_add_penalties(ch, 4, 1.0f, NAN, 0), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_sampler_chain_accept(ch, 16), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_sampler_chain_accept(ch, -1), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_sampler_chain_length(ch), 0);
    llm_sampler_chain_free(ch);
}

/* ---- logit bias ---------------------------------------------------------- */

static void check_bias(bool sparse) {
    llm_sampler_chain *ch = tu_chain(16, 1);
    if (sparse) cr_assert_eq(llm_sampler_chain_add_top_k(ch, 5), LLM_OK);
    const llm_logit_bias b[4] = {{0, 1.0f}, {4, -INFINITY}, {0, 0.5f}, {9, 100.0f}};
    cr_assert_eq(llm_sampler_chain_add_logit_bias(ch, b, 4), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_greedy(ch), LLM_OK);
    int32_t ids[6];
    float x[6];
    size_t n = tu_cands(ch, X6, 6, ids, x, 6); /* id 9 is beyond this n_vocab: ignored */
    cr_expect_eq(logit_of(ids, x, n, 0), 2.5f);
    cr_expect_eq(logit_of(ids, x, n, 4), -INFINITY);
    cr_expect_eq(logit_of(ids, x, n, 1), 2.0f);
    int32_t tok;
    cr_assert_eq(llm_sampler_chain_sample(ch, X6, 6, &tok), LLM_OK);
    cr_expect_eq(tok, 0); /* 2.5 beats 2.0; banned 3.0 */
    llm_sampler_chain_free(ch);
}

Test(logit_bias, dense_hand_computed) { check_bias(false); }
Test(logit_bias, sparse_hand_computed) { check_bias(true); }

Test(logit_bias, rejects_out_of_range) {
    llm_sampler_chain *ch = tu_chain(16, 1);
    const llm_logit_bias b[1] = {{16, 1.0f}};
    cr_expect_eq(llm_sampler_chain_add_logit_bias(ch, b, 1), LLM_ERR_INVALID_ARG);
    cr_expect_eq(llm_sampler_chain_add_logit_bias(ch, NULL, 1), LLM_ERR_INVALID_ARG);
    llm_sampler_chain_free(ch);
}

/* ---- mask hook ----------------------------------------------------------- */

typedef struct {
    size_t calls, last_n;
    int identity; /* ids[i] == i for all i on the last call */
} mask_log;

static llm_status mask_even(void *user, const int32_t *ids, float *logits, size_t n) {
    mask_log *log = user;
    log->calls++;
    log->last_n = n;
    log->identity = 1;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] != (int32_t)i) log->identity = 0;
        if (ids[i] % 2 == 0) logits[i] = -INFINITY;
    }
    return LLM_OK;
}

static llm_status mask_fail(void *user, const int32_t *ids, float *logits, size_t n) {
    (void)user, (void)ids, (void)logits, (void)n;
    return LLM_ERR_BACKEND;
}

Test(mask, forbids_tokens_dense_and_sparse) {
    const float x[6] = {9.0f, 1.0f, 8.0f, 3.0f, 7.0f, 2.0f};
    for (int sparse = 0; sparse < 2; sparse++) {
        mask_log log = {0, 0, 0};
        llm_sampler_chain *ch = tu_chain(16, 3);
        if (sparse) cr_assert_eq(llm_sampler_chain_add_top_k(ch, 4), LLM_OK); /* 0 2 4 3 */
        cr_assert_eq(llm_sampler_chain_add_mask(ch, mask_even, &log), LLM_OK);
        cr_assert_eq(llm_sampler_chain_add_dist(ch), LLM_OK);
        for (int r = 0; r < 50; r++) {
            int32_t tok;
            cr_assert_eq(llm_sampler_chain_sample(ch, x, 6, &tok), LLM_OK);
            cr_expect(tok % 2 == 1, "masked token %d drawn", tok);
            if (sparse) cr_expect_eq(tok, 3);
        }
        cr_expect_eq(log.calls, 50);
        cr_expect_eq(log.last_n, sparse ? 4u : 6u);
        cr_expect_eq(log.identity, !sparse);
        llm_sampler_chain_free(ch);
    }
}

Test(mask, hook_error_is_returned) {
    const float x[3] = {1, 2, 3};
    llm_sampler_chain *ch = tu_chain(16, 3);
    cr_assert_eq(llm_sampler_chain_add_mask(ch, mask_fail, NULL), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_dist(ch), LLM_OK);
    int32_t tok;
    cr_expect_eq(llm_sampler_chain_sample(ch, x, 3, &tok), LLM_ERR_BACKEND);
    cr_expect_eq(tok, -1);
    cr_expect_eq(llm_sampler_chain_add_mask(ch, NULL, NULL), LLM_ERR_INVALID_ARG);
    llm_sampler_chain_free(ch);
}

/* ---- dense patches read by top-k (penalties/bias before top-k) ----------- */

Test(penalties, then_top_k_reads_patched_logits) {
    llm_sampler_chain *ch = tu_chain(16, 1);
    cr_assert_eq(llm_sampler_chain_add_penalties(ch, 8, 2.0f, 0.5f, 0.25f), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_top_k(ch, 3), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_greedy(ch), LLM_OK);
    const int32_t hist[4] = {2, 2, 5, 4};
    for (int i = 0; i < 4; i++) cr_assert_eq(llm_sampler_chain_accept(ch, hist[i]), LLM_OK);
    int32_t ids[3];
    float x[3];
    /* after penalties: 1.0 2.0 -3.25 0.5 0.75 -4.75 -> best three 1, 0, 4 */
    cr_assert_eq(tu_cands(ch, X6, 6, ids, x, 3), 3);
    cr_expect_eq(ids[0], 1);
    cr_expect_eq(ids[1], 0);
    cr_expect_eq(ids[2], 4);
    cr_expect_eq(x[2], 0.75f);
    /* the next call starts clean (patches do not leak between calls) */
    llm_sampler_chain_reset(ch);
    cr_assert_eq(tu_cands(ch, X6, 6, ids, x, 3), 3);
    cr_expect_eq(ids[0], 4);
    cr_expect_eq(x[0], 3.0f);
    llm_sampler_chain_free(ch);
}

Test(logit_bias, then_top_k_ties_and_bans) {
    const float x[5] = {5.0f, 3.0f, 3.0f, 1.0f, 4.0f};
    llm_sampler_chain *ch = tu_chain(16, 1);
    /* id 1 patched to the same value: the tie with id 2 goes to the lower id;
     * id 4 banned. */
    const llm_logit_bias b[2] = {{1, 0.0f}, {4, -INFINITY}};
    cr_assert_eq(llm_sampler_chain_add_logit_bias(ch, b, 2), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_top_k(ch, 2), LLM_OK);
    cr_assert_eq(llm_sampler_chain_add_greedy(ch), LLM_OK);
    int32_t ids[2];
    cr_assert_eq(tu_cands(ch, x, 5, ids, NULL, 2), 2);
    cr_expect_eq(ids[0], 0);
    cr_expect_eq(ids[1], 1);
    llm_sampler_chain_free(ch);
}

static int cmp_pair_desc(const void *a, const void *b) {
    const float *x = a, *y = b; /* [value, id] */
    if (x[0] != y[0]) return x[0] < y[0] ? 1 : -1;
    return x[1] < y[1] ? -1 : 1;
}

Test(logit_bias, many_tokens_then_top_k) {
    /* 3000 biased tokens: more than fit the patch list, so the copy path. */
    enum { V = 4096, NB = 3000, K = 10 };
    float *x = malloc(V * sizeof *x), *ref = malloc(2 * V * sizeof *ref);
    llm_logit_bias *b = malloc(NB * sizeof *b);
    uint64_t s = 17;
    for (int i = 0; i < V; i++) x[i] = (float)tu_gauss(&s);
    for (int i = 0; i < V; i++) {
        ref[2 * i] = x[i];
        ref[2 * i + 1] = (float)i;
    }
    for (int j = 0; j < NB; j++) {
        b[j].token = (int32_t)((j * 7) % V);
        b[j].bias = (j % 3 == 0) ? 2.0f : -1.0f;
        ref[2 * b[j].token] += b[j].bias;
    }
    qsort(ref, V, 2 * sizeof *ref, cmp_pair_desc);
    for (int small = 0; small < 2; small++) {
        llm_sampler_chain *ch = tu_chain(V, 1);
        /* small: only the first 100 entries (patch path); reference redone */
        size_t nb = small ? 100 : NB;
        cr_assert_eq(llm_sampler_chain_add_logit_bias(ch, b, nb), LLM_OK);
        cr_assert_eq(llm_sampler_chain_add_top_k(ch, K), LLM_OK);
        cr_assert_eq(llm_sampler_chain_add_greedy(ch), LLM_OK);
        int32_t ids[K];
        float lx[K];
        cr_assert_eq(tu_cands(ch, x, V, ids, lx, K), K);
        if (small) {
            for (int i = 0; i < V; i++) {
                ref[2 * i] = x[i];
                ref[2 * i + 1] = (float)i;
            }
            for (size_t j = 0; j < nb; j++) ref[2 * b[j].token] += b[j].bias;
            qsort(ref, V, 2 * sizeof *ref, cmp_pair_desc);
        }
        for (int r = 0; r < K; r++) {
            cr_expect_eq(ids[r], (int32_t)ref[2 * r + 1], "nb %zu rank %d", nb, r);
            cr_expect_eq(lx[r], ref[2 * r], "nb %zu rank %d", nb, r);
        }
        llm_sampler_chain_free(ch);
    }
    free(x);
    free(ref);
    free(b);
}
