/*
 * test_cuda_dequant_host.cu -- the CUDA backend's bit-level block decoding
 * (libs/runtime/src/cuda/quant_cuda.cuh), compiled for and run on the HOST,
 * against the reference dequantizer (llm_dtype_dequantize_row). Needs no GPU,
 * so it runs on every CUDA build: the byte offsets, nibble/bit packing and
 * rounding order of every type are checked even where no device exists.
 *
 * llm__deq (get_rows, GEMM path) must be bit-identical to the reference for
 * every element of every known type; llm__deq8 (mat-vec kernels: fused
 * d * q + m) must equal llm__deq within one float rounding (2^-23 relative).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/quant_cuda.cuh"
#include "cuda_pair.h"

template <int T>
static void check_type(uint64_t seed) {
    const llm_dtype t = (llm_dtype)T;
    const int64_t bs = (int64_t)llm_dtype_block_size(t);
    const int64_t k = bs == 1 ? 70 : bs * 3, rows = 5;
    size_t nbytes = 0;
    uint8_t *w = cu_random_weights(t, k, rows, seed, &nbytes);
    const size_t row = nbytes / (size_t)rows;
    float *ref = (float *)malloc(sizeof(float) * (size_t)k);
    float *got = (float *)malloc(sizeof(float) * (size_t)k);
    for (int64_t r = 0; r < rows; r++) {
        const uint8_t *rp = w + (size_t)r * row;
        cr_assert_eq(llm_dtype_dequantize_row(t, rp, ref, (size_t)k), LLM_OK);
        for (int64_t j = 0; j < k; j++) got[j] = llm__deq<T>(rp, j);
        for (int64_t j = 0; j < k; j++) {
            cr_assert(memcmp(&got[j], &ref[j], sizeof(float)) == 0,
                      "%s row %lld element %lld: device decoder %.9g, reference %.9g",
                      llm_dtype_name(t), (long long)r, (long long)j, (double)got[j],
                      (double)ref[j]);
        }
        constexpr bool mv = T == LLM_DTYPE_F32 || T == LLM_DTYPE_F16 || T == LLM_DTYPE_BF16 ||
                        T == LLM_DTYPE_Q4_0 || T == LLM_DTYPE_Q4_1 || T == LLM_DTYPE_Q5_0 ||
                        T == LLM_DTYPE_Q5_1 || T == LLM_DTYPE_Q8_0;
        if constexpr (mv) {
            /* Walk the mat-vec layout: group g, part p -> elements 32g+4p+i and
             * 32g+16+4p+i (zero past k for the float types). */
            for (int64_t g = 0; g < (k + 31) / 32; g++) {
                for (int p = 0; p < 4; p++) {
                    float v[8];
                    llm__deq8<T>(rp, g, p, k, v);
                    for (int i = 0; i < 8; i++) {
                        const int64_t e = g * 32 + 4 * p + (i < 4 ? i : 12 + i);
                        const float want = e < k ? ref[e] : 0.0f;
                        cr_assert(fabsf(v[i] - want) <= 1.2e-7f * fabsf(want) + 1e-30f,
                                  "%s row %lld: mat-vec decoder gives %.9g for element %lld, "
                                  "reference %.9g", llm_dtype_name(t), (long long)r, (double)v[i],
                                  (long long)e, (double)want);
                    }
                }
            }
        }
    }
    free(ref);
    free(got);
    free(w);
}

Test(cuda_dequant_host, every_type_matches_reference) {
    uint64_t seed = 1;
#define CHECK_TYPE(T) check_type<T>(seed++);
    LLM_CU_FOR_EACH_TYPE(CHECK_TYPE)
#undef CHECK_TYPE
}
