/*
 * test_no_alloc.c -- decoding allocates nothing once its buffers are sized.
 *
 * The test binary is linked with --wrap for malloc, calloc, realloc,
 * posix_memalign and aligned_alloc, so every allocation our static libraries
 * make goes through the counters below (Criterion's own, in its shared
 * library, does not). Scratch buffers grow geometrically (x1.5) as the
 * context grows, so a decode step may allocate only when it passes a new
 * high-water mark; decoding the same positions again must allocate nothing
 * at all, with 1 and with 2 threads.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/arch.h"
#include "llama/models.h"
#include "llama/runtime.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **p, size_t a, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);

static atomic_long g_allocs;

void *__wrap_malloc(size_t n) {
    atomic_fetch_add(&g_allocs, 1);
    return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t m) {
    atomic_fetch_add(&g_allocs, 1);
    return __real_calloc(n, m);
}
void *__wrap_realloc(void *p, size_t n) {
    atomic_fetch_add(&g_allocs, 1);
    return __real_realloc(p, n);
}
int __wrap_posix_memalign(void **p, size_t a, size_t n) {
    atomic_fetch_add(&g_allocs, 1);
    return __real_posix_memalign(p, a, n);
}
void *__wrap_aligned_alloc(size_t a, size_t n) {
    atomic_fetch_add(&g_allocs, 1);
    return __real_aligned_alloc(a, n);
}

#define N_BLOCKS 32
#define BLOCK 16
#define PROMPT 200
#define STEPS 64

/* Allocations made by decoding tokens at positions PROMPT .. PROMPT+STEPS-1
 * after a prefill of PROMPT tokens; *again: the same decode steps repeated
 * after re-running the prefill (buffers already at their high-water mark). */
static void decode_allocs(int n_threads, long *first, long *again) {
    const char *path = getenv("LLM_DEFAULT_MODEL");
    FILE *probe = path && *path ? fopen(path, "rb") : NULL;
    if (!probe) {
        cr_skip_test("default model not present (set LLM_DEFAULT_MODEL; scripts/setup.sh)");
    }
    fclose(probe);
    llm_model_desc *desc;
    cr_assert_eq(llm_model_desc_from_gguf(path, &desc), LLM_OK, "%s", llm_models_last_error());
    llm_backend_params bp = llm_backend_default_params();
    bp.n_threads = n_threads;
    llm_backend *be;
    cr_assert_eq(llm_backend_create("cpu", &bp, &be), LLM_OK);
    llm_net *net;
    const long at_create = atomic_load(&g_allocs);
    cr_assert_eq(llm_net_create(desc, be, NULL, &net), LLM_OK, "%s", llm_net_last_error());
    /* The counters see our libraries' allocations at all (else 0 proves nothing). */
    cr_assert_gt(atomic_load(&g_allocs) - at_create, 0, "--wrap did not catch llm_net_create's allocations");
    llm_net_kv *kv;
    cr_assert_eq(llm_net_kv_create(net, N_BLOCKS, BLOCK, &kv), LLM_OK);
    const int32_t n_vocab = (int32_t)llm_net_hparams(net)->n_vocab;
    int32_t table[N_BLOCKS], tokens[PROMPT + STEPS], pos[PROMPT + STEPS];
    for (int i = 0; i < N_BLOCKS; i++) table[i] = i;
    for (int i = 0; i < PROMPT + STEPS; i++) {
        tokens[i] = 100 + (i * 37) % 1000;
        pos[i] = i;
    }
    float *logits = malloc(sizeof(float) * (size_t)n_vocab);
    long counts[2];
    for (int round = 0; round < 2; round++) {
        llm_net_seq seq = {PROMPT, table, N_BLOCKS, NULL, 0};
        llm_net_batch b = llm_net_batch_default();
        b.tokens = tokens;
        b.positions = pos;
        b.n_tokens = PROMPT;
        b.seqs = &seq;
        b.n_seqs = 1;
        b.logits = logits;
        cr_assert_eq(llm_net_forward(net, kv, &b), LLM_OK, "%s", llm_net_last_error());
        long before = atomic_load(&g_allocs);
        for (int s = 0; s < STEPS; s++) {
            llm_net_seq one = {1, table, N_BLOCKS, NULL, 0};
            b.tokens = tokens + PROMPT + s;
            b.positions = pos + PROMPT + s;
            b.n_tokens = 1;
            b.seqs = &one;
            cr_assert_eq(llm_net_forward(net, kv, &b), LLM_OK, "%s", llm_net_last_error());
        }
        counts[round] = atomic_load(&g_allocs) - before;
    }
    free(logits);
    llm_net_kv_free(kv);
    llm_net_free(net);
    llm_backend_free(be);
    llm_model_desc_free(desc);
    *first = counts[0];
    *again = counts[1];
}

Test(no_alloc, decode_steps) {
    for (int t = 1; t <= 2; t++) {
        long first, again;
        decode_allocs(t, &first, &again);
        cr_log_info("%d thread(s): %ld allocations over %d decode steps past the prefill, %ld repeating them", t,
                    first, STEPS, again);
        /* Positions 200..263 pass at most one x1.5 growth of each of the
         * two position-sized buffers (attention scratch, slot offsets). */
        cr_expect_leq(first, 2 * t + 2, "%d thread(s): %ld allocations in %d decode steps", t, first, STEPS);
        cr_expect_eq(again, 0, "%d thread(s): %ld allocations decoding positions already seen", t, again);
    }
}
