/*
 * test_kv_quant.c -- quantized KV caches (llm_net_params type_k / type_v):
 * the default model's logits with Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, BF16 caches
 * and Q8_0 K + F16 V, F16 K + Q5_1 V against llama.cpp run with the same
 * cache types and flash attention (data/kvq_<types>_golden.bin,
 * scripts/golden/logits/make_kvq_golden.py).
 *
 * With the AVX2 kernels the logits must equal llama.cpp's bit for bit (top-10
 * of every position) and the greedy continuation must be llama.cpp's. With
 * the scalar kernels (dot products summed in double) the tolerances of
 * test_forward.c apply.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "golden_check.h"

static void load(golden_set *g, const char *tname) {
    const char *src = getenv("LLM_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/runtime/data/kvq_%s_golden.bin", src ? src : ".", tname);
    cr_assert_eq(golden_load(path, g), 0, "cannot read %s", path);
}

static void check_types(const char *tname, llm_dtype tk, llm_dtype tv) {
    gc_fx f;
    gc_open_kv(&f, getenv("LLM_DEFAULT_MODEL"), 2, LLM_KERNELS_AUTO, tk, tv);
    golden_set g;
    load(&g, tname);
    /* Under AddressSanitizer: a prefix of each prompt and a few greedy steps. */
    gc_check_logits(&f, &g, gc_exact_kernels(&f), LIGHT ? 24 : 0);
    gc_check_greedy(&f, &g, LIGHT ? 1 : 0, 0, LIGHT ? 2 : 0);
    golden_free(&g);
    gc_close(&f);
}

Test(kv_quant, q8_0_logits_match_llamacpp) { check_types("q8_0", LLM_DTYPE_Q8_0, LLM_DTYPE_Q8_0); }
Test(kv_quant, q4_0_logits_match_llamacpp) { check_types("q4_0", LLM_DTYPE_Q4_0, LLM_DTYPE_Q4_0); }
/* Smaller goldens (two prompts, 8 greedy steps): the other types, and K and
 * V of different types (an F16 V: llama.cpp's F16 accumulator; an F16 K:
 * rotated V only). */
Test(kv_quant, q4_1_logits_match_llamacpp) { check_types("q4_1", LLM_DTYPE_Q4_1, LLM_DTYPE_Q4_1); }
Test(kv_quant, q5_0_logits_match_llamacpp) { check_types("q5_0", LLM_DTYPE_Q5_0, LLM_DTYPE_Q5_0); }
Test(kv_quant, q5_1_logits_match_llamacpp) { check_types("q5_1", LLM_DTYPE_Q5_1, LLM_DTYPE_Q5_1); }
Test(kv_quant, bf16_logits_match_llamacpp) { check_types("bf16", LLM_DTYPE_BF16, LLM_DTYPE_BF16); }
Test(kv_quant, q8_0_k_f16_v_logits_match_llamacpp) { check_types("q8_0_f16", LLM_DTYPE_Q8_0, LLM_DTYPE_F16); }
Test(kv_quant, f16_k_q5_1_v_logits_match_llamacpp) { check_types("f16_q5_1", LLM_DTYPE_F16, LLM_DTYPE_Q5_1); }

/* The scalar kernels (the reference; their dot products and activation
 * quantizers differ from llama.cpp's x86 ones in rounding) on a prefix of
 * the chatml prompt: test_forward.c's tolerances. */
Test(kv_quant, q8_0_scalar_kernels_within_tolerance) {
    gc_fx f;
    gc_open_kv(&f, getenv("LLM_DEFAULT_MODEL"), 2, LLM_KERNELS_SCALAR, LLM_DTYPE_Q8_0, LLM_DTYPE_Q8_0);
    golden_set g;
    load(&g, "q8_0");
    const golden_prompt *p = &g.prompts[2]; /* chatml */
    cr_assert_str_eq(p->name, "chatml");
    const int32_t n = p->n_tokens < (LIGHT ? 4 : 16) ? p->n_tokens : (LIGHT ? 4 : 16);
    float *lg = malloc(sizeof(float) * (size_t)n * f.n_vocab);
    gc_run(&f, p->tokens, n, 0, LLM_LOGITS_ALL, lg);
    double max_top = 0;
    for (int32_t t = 0; t < n; t++) {
        const float *row = lg + (size_t)t * f.n_vocab;
        for (int32_t k = 0; k < g.topk; k++) {
            const double d = fabs(row[p->top_ids[t * g.topk + k]] - p->top_logits[t * g.topk + k]);
            max_top = d > max_top ? d : max_top;
        }
        const int32_t am = gc_argmax(row, f.n_vocab);
        cr_expect(am == p->argmax[t] || p->gap[t] < 0.5f, "scalar pos %d: %d vs llama.cpp %d (gap %.3f)", t, am,
                  p->argmax[t], (double)p->gap[t]);
    }
    fprintf(stderr, "scalar kernels, q8_0 cache, chatml: top-10 max|diff| %.4f\n", max_top);
    cr_expect_leq(max_top, 2.5);
    free(lg);
    golden_free(&g);
    gc_close(&f);
}
