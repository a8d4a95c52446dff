/*
 * golden_check.h -- running a model's forward (llama/arch.h) on the prompts
 * of a llama.cpp golden (golden_logits.h) and checking logits and greedy
 * continuations against it, shared by test_forward.c (the default model)
 * and test_families.c (the synthetic family models).
 */
#ifndef LLM_TEST_GOLDEN_CHECK_H
#define LLM_TEST_GOLDEN_CHECK_H

#include "golden_logits.h"
#include "llama/arch.h"

/* LIGHT: 1 under AddressSanitizer, where the golden checks run on fewer
 * positions and steps (same checks, less work). */
#include "under_asan.h"
#define LIGHT LLM_UNDER_ASAN

#define GC_N_BLOCKS 64
#define GC_BLOCK 16

typedef struct gc_fx {
    llm_model_desc *desc;
    llm_backend *be;
    llm_net *net;
    llm_net_kv *kv;
    int32_t table[GC_N_BLOCKS]; /* scrambled logical -> physical map: paging is exercised */
    int32_t n_vocab;
} gc_fx;

/* Loads path (a GGUF, or a Hugging Face folder) on the CPU backend with
 * n_threads and a kernel set; skips the test (cr_skip_test) when the file is
 * absent. */
void gc_open(gc_fx *f, const char *path, int n_threads, llm_kernels kernels);
/* The same with the net's n_ctx_seq (llm_net_params; gc_open passes 0). */
void gc_open_ctx(gc_fx *f, const char *path, int n_threads, llm_kernels kernels, int32_t n_ctx_seq);
/* The same with K and V cache types (llm_net_params type_k, type_v). */
void gc_open_kv(gc_fx *f, const char *path, int n_threads, llm_kernels kernels, llm_dtype type_k, llm_dtype type_v);
/* The same with any net parameters (e.g. a small max_batch: prefill in chunks). */
void gc_open_np(gc_fx *f, const char *path, int n_threads, llm_kernels kernels, const llm_net_params *np);
void gc_close(gc_fx *f);

/* Runs tokens[0..n) at positions first.. in chunks of max_batch; logits as
 * mode says ([n][n_vocab] for ALL, [n_vocab] for LAST). */
void gc_run(gc_fx *f, const int32_t *tokens, int32_t n, int32_t first, llm_logits_mode mode, float *logits);

int32_t gc_argmax(const float *v, int32_t n);

/* Every position of every prompt (at most max_pos each, 0: all) against the
 * golden: bit-identical top-10 and full rows when `exact`, else within the
 * tolerances of test_forward.c; argmax equal everywhere (near ties
 * included). Failures are cr_expect'ed; returns the argmax failures. */
int gc_check_logits(gc_fx *f, const golden_set *g, int exact, int32_t max_pos);

/* Free-running greedy continuation of each prompt (at most max_prompts
 * prompts of at most max_tokens tokens, max_steps steps; 0: no limit) must
 * equal llama.cpp's. */
void gc_check_greedy(gc_fx *f, const golden_set *g, int max_prompts, int32_t max_tokens, int32_t max_steps);

/* 1 if the backend runs the kernel set whose order equals llama.cpp's
 * AVX2 build. */
int gc_exact_kernels(const gc_fx *f);

#endif
