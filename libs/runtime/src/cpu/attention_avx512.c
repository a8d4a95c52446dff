/*
 * cpu/attention_avx512.c -- the grouped attention products of
 * attention_avx2.c compiled again with AVX-512 (LLM_ATTN_ZMM): a decode's
 * key rows and value sums in 16-lane registers, every output the same
 * chain, so the same bits (tests/runtime/test_llama_order.c runs both
 * copies). Compiled with -mavx512f -mavx2 -mfma -mf16c (sources.cmake);
 * llm__cpu_kernels_avx2 registers it where the CPU has AVX-512F.
 */
#define LLM_ATTN_ZMM 1
#include "attention_avx2.c"
