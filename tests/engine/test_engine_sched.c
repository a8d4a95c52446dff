/* The scheduler (llama/engine.h, "Scheduler"), on the default model:
 * - a greedy request gives the tokens of a plain session (same kernels);
 * - determinism: a seeded request gives the same tokens alone and batched
 *   with other requests (each step mixes its decode with others' decodes
 *   and prompt chunks), bit for bit on the CPU backend;
 * - a small KV pool: more requests than fit all complete (preemption and
 *   recompute), the pool checks clean and holds no block afterwards;
 * - cancellation ends a running request at the next step and frees its
 *   blocks; a full queue refuses with LLM_ERR_EXHAUSTED; a prompt longer
 *   than the context is LLM_CONTEXT_FULL. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llama/engine.h"
#include "llama/engine_sched.h"

static llm_model *M;

static void load(int32_t n_ctx, int32_t kv_tokens) {
    const char *p = getenv("LLM_DEFAULT_MODEL");
    if (!p || !*p || access(p, R_OK) != 0)
        cr_skip_test("default model not found (set LLM_DEFAULT_MODEL; scripts/setup.sh)");
    llm_model_params mp = llm_model_default_params();
    mp.backend = "cpu";
    mp.n_threads = 2;
    mp.n_ctx = n_ctx;
    mp.kv_tokens = kv_tokens;
    mp.kv_block_size = 16;
    cr_assert_eq(llm_load_model(p, &mp, &M), LLM_OK, "load: %s", llm_last_error());
}

/* What one request received. */
typedef struct result {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    llm_token toks[512];
    int32_t n_toks;
    char text[4096];
    size_t n_text;
    llm_sched_event last;
} result;

static void on_event(const llm_sched_event *ev, void *user) {
    result *r = user;
    pthread_mutex_lock(&r->mu);
    if (ev->kind == LLM_SCHED_TEXT) {
        if (ev->token != LLM_TOKEN_NULL && r->n_toks < 512) r->toks[r->n_toks++] = ev->token;
        if (r->n_text + ev->len < sizeof r->text) {
            memcpy(r->text + r->n_text, ev->text, ev->len);
            r->n_text += ev->len;
        }
    } else {
        r->last = *ev;
        r->last.text = NULL;
        r->last.message = NULL;
        r->done = true;
        pthread_cond_signal(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
}

static void result_init(result *r) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
}

static void result_wait(result *r) {
    pthread_mutex_lock(&r->mu);
    while (!r->done) pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
}

static int32_t tokenize(const char *text, llm_token *out, int32_t cap) {
    int32_t n = 0;
    cr_assert_eq(llm_tokenize(M, text, strlen(text), LLM_ENCODE_PARSE_SPECIAL, out, cap, &n), LLM_OK, "%s",
                 llm_last_error());
    return n;
}

static const char *PROMPTS[] = {
    "<|im_start|>user\nWrite a short poem about the sea.<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nWhat is the capital of France? Explain its history in detail.<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nList five fruits.<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nTell me a story about a robot who learns to paint, with many details about colours.<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
};
#define N_PROMPTS 5

static void submit(llm_sched *sc, int p, float temp, uint64_t seed, int32_t max_tokens, result *r, uint64_t *id) {
    llm_token toks[512];
    int32_t n = tokenize(PROMPTS[p], toks, 512);
    llm_sched_request q = llm_sched_default_request();
    q.prompt = toks;
    q.n_prompt = n;
    q.max_tokens = max_tokens;
    q.sampling.temperature = temp;
    q.sampling.seed = seed;
    q.callback = on_event;
    q.user = r;
    cr_assert_eq(llm_sched_submit(sc, &q, id), LLM_OK, "%s", llm_last_error());
}

Test(sched, greedy_equals_session) {
    load(512, 0);
    llm_token toks[512];
    int32_t n = tokenize(PROMPTS[1], toks, 512);
    llm_session_params sp = llm_session_default_params();
    sp.sampling.temperature = 0;
    llm_session *s;
    cr_assert_eq(llm_session_new(M, &sp, &s), LLM_OK);
    cr_assert_eq(llm_prefill(s, toks, n), LLM_OK);
    llm_token want[24];
    int32_t nw = 0;
    while (nw < 24) {
        llm_token t;
        llm_status st = llm_session_next_token(s, &t, NULL, NULL);
        cr_assert(st == LLM_OK || st == LLM_END_OF_STREAM);
        want[nw++] = t;
        if (st == LLM_END_OF_STREAM) break;
    }
    llm_session_free(s);

    llm_sched *sc;
    cr_assert_eq(llm_sched_new(M, NULL, &sc), LLM_OK, "%s", llm_last_error());
    result r;
    result_init(&r);
    submit(sc, 1, 0, 1, 24, &r, NULL);
    result_wait(&r);
    cr_assert_eq(r.last.finish, nw == 24 ? LLM_FINISH_LENGTH : LLM_FINISH_STOP);
    cr_assert_eq(r.last.prompt_tokens, n);
    cr_assert_eq(r.last.completion_tokens, nw);
    for (int32_t i = 0; i < r.n_toks; i++) cr_assert_eq(r.toks[i], want[i], "token %d differs", i);
    llm_sched_free(sc);
    llm_model_free(M);
}

/* Each prompt alone, then all together (several at once in every step,
 * prompt chunks beside decodes): the same tokens, request by request. */
Test(sched, seeded_request_same_alone_and_batched) {
    load(1024, 4096);
    llm_sched_params pp = llm_sched_default_params();
    pp.max_running = 8;
    pp.token_budget = 48; /* long prompts are chunked across steps */
    llm_sched *sc;
    cr_assert_eq(llm_sched_new(M, &pp, &sc), LLM_OK, "%s", llm_last_error());
    static result alone[N_PROMPTS], batched[N_PROMPTS];
    for (int p = 0; p < N_PROMPTS; p++) {
        result_init(&alone[p]);
        submit(sc, p, 0.9f, 1234 + (uint64_t)p, 40, &alone[p], NULL);
        result_wait(&alone[p]);
    }
    for (int p = 0; p < N_PROMPTS; p++) {
        result_init(&batched[p]);
        submit(sc, p, 0.9f, 1234 + (uint64_t)p, 40, &batched[p], NULL);
    }
    for (int p = 0; p < N_PROMPTS; p++) result_wait(&batched[p]);
    llm_sched_stats st;
    /* The worker retires a request just after its DONE event. */
    for (int i = 0; i < 1000; i++) {
        cr_assert_eq(llm_sched_get_stats(sc, &st), LLM_OK);
        if (st.running == 0) break;
        usleep(1000);
    }
    for (int p = 0; p < N_PROMPTS; p++) {
        cr_assert_eq(batched[p].n_toks, alone[p].n_toks, "prompt %d: %d tokens batched, %d alone", p,
                     batched[p].n_toks, alone[p].n_toks);
        cr_assert_eq(memcmp(batched[p].toks, alone[p].toks, sizeof(llm_token) * (size_t)alone[p].n_toks), 0,
                     "prompt %d: tokens differ in a batch", p);
        cr_assert_eq(batched[p].n_text, alone[p].n_text);
        /* The second time, the prompt's full blocks come from the prefix cache. */
        cr_assert_geq(batched[p].last.cached_tokens, (alone[p].last.prompt_tokens - 1) / 16 * 16 - 16);
    }
    /* Batching happened: fewer steps than tokens computed one by one. */
    cr_assert_lt(st.steps, st.computed_tokens);
    cr_assert_eq(st.running, 0);
    cr_assert_eq(st.kv_blocks_used, 0, "blocks still held: %d", st.kv_blocks_used);
    llm_sched_free(sc);
    llm_model_free(M);
}

/* 12 requests of ~60 tokens on a 256-token pool (room for 4): all complete. */
Test(sched, small_pool_preempts_and_completes) {
    load(256, 256);
    llm_sched_params pp = llm_sched_default_params();
    pp.max_running = 8;
    llm_sched *sc;
    cr_assert_eq(llm_sched_new(M, &pp, &sc), LLM_OK, "%s", llm_last_error());
    static result r[12];
    for (int i = 0; i < 12; i++) {
        result_init(&r[i]);
        submit(sc, i % N_PROMPTS, 0.8f, (uint64_t)i, 48, &r[i], NULL);
    }
    for (int i = 0; i < 12; i++) {
        result_wait(&r[i]);
        cr_assert(r[i].last.finish == LLM_FINISH_STOP || r[i].last.finish == LLM_FINISH_LENGTH,
                  "request %d: finish %d status %d", i, r[i].last.finish, r[i].last.status);
        cr_assert_gt(r[i].n_toks, 0);
    }
    llm_sched_stats st;
    cr_assert_eq(llm_sched_get_stats(sc, &st), LLM_OK);
    cr_assert_eq(st.kv_blocks_used, 0);
    fprintf(stderr, "small pool: %lld steps, %lld preemptions\n", (long long)st.steps, (long long)st.preemptions);
    llm_sched_free(sc);
    llm_model_free(M);
}

static llm_sched *g_sc; /* for the callback below */

static void cancel_on_third(const llm_sched_event *ev, void *user) {
    result *r = user;
    on_event(ev, user);
    if (ev->kind == LLM_SCHED_TEXT && r->n_toks == 3) llm_sched_cancel(g_sc, ev->id);
}

Test(sched, cancel_frees_blocks_and_queue_bounds) {
    load(512, 0);
    llm_sched_params pp = llm_sched_default_params();
    pp.max_running = 1;
    pp.max_waiting = 1;
    llm_sched *sc;
    cr_assert_eq(llm_sched_new(M, &pp, &sc), LLM_OK, "%s", llm_last_error());
    result r;
    result_init(&r);
    g_sc = sc;
    llm_token toks[512];
    int32_t n = tokenize(PROMPTS[3], toks, 512);
    llm_sched_request q = llm_sched_default_request();
    q.prompt = toks;
    q.n_prompt = n;
    q.max_tokens = 0;
    q.sampling.temperature = 0;
    q.callback = cancel_on_third;
    q.user = &r;
    cr_assert_eq(llm_sched_submit(sc, &q, NULL), LLM_OK);
    /* One running + one waiting fill it; the third is refused. */
    result r2, r3;
    result_init(&r2);
    result_init(&r3);
    q.callback = on_event;
    q.user = &r2;
    q.max_tokens = 2;
    llm_status s2 = llm_sched_submit(sc, &q, NULL);
    q.user = &r3;
    llm_status s3 = llm_sched_submit(sc, &q, NULL);
    cr_assert_eq(s2, LLM_OK);
    cr_assert_eq(s3, LLM_ERR_EXHAUSTED, "third submit: %d", s3);
    result_wait(&r);
    cr_assert_eq(r.last.finish, LLM_FINISH_CANCELLED);
    cr_assert_geq(r.n_toks, 3);
    cr_assert_leq(r.n_toks, 4);
    result_wait(&r2);
    llm_sched_stats st;
    cr_assert_eq(llm_sched_get_stats(sc, &st), LLM_OK);
    cr_assert_eq(st.kv_blocks_used, 0);
    /* A prompt longer than the context. */
    llm_token *big = calloc(600, sizeof *big);
    for (int i = 0; i < 600; i++) big[i] = toks[i % n];
    q.prompt = big;
    q.n_prompt = 600;
    cr_assert_eq(llm_sched_submit(sc, &q, NULL), LLM_CONTEXT_FULL);
    free(big);
    llm_sched_free(sc);
    llm_model_free(M);
}
