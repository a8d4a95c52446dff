/*
 * cpu/kernels.h -- the CPU kernel registry: per weight type, which activation
 * type it pairs with and which dot product to call; per hot op, which row
 * kernel. Filled once per backend from the scalar reference, then overridden
 * by the SIMD variants the CPU supports (checked at run time).
 */
#ifndef LLM_CPU_KERNELS_H
#define LLM_CPU_KERNELS_H

#include <stdint.h>

#include "llama/dtype.h"

/* Dot product of one weight row w (n elements of the weight type, whole blocks)
 * with one activation row a (n elements of the paired activation type). */
typedef float (*llm__vec_dot_fn)(int64_t n, const void *w, const void *a);
/* Converts n floats into the activation type (n a multiple of its block). */
typedef void (*llm__quantize_fn)(const float *x, void *y, int64_t n);

typedef struct llm__cpu_kernels {
    const char *desc;                          /* "scalar", "avx2+fma+f16c" */
    llm_dtype act_type[LLM_DTYPE_END_];        /* weight type -> activation type */
    llm__vec_dot_fn dot[LLM_DTYPE_END_];       /* weight type -> dot (NULL: unsupported) */
    llm__quantize_fn quantize[LLM_DTYPE_END_]; /* activation type -> quantizer */
    /* out[i] = x[i] / sqrt(mean(x^2) + eps) * (w ? w[i] : 1) */
    void (*rms_norm_row)(float *out, const float *x, const float *w, int64_t n, float eps);
    /* Attention inner loops: dot of f16/f32 vectors, y += a * x. */
    float (*dot_f16)(int64_t n, const uint16_t *x, const uint16_t *y);
    float (*dot_f32)(int64_t n, const float *x, const float *y);
    void (*axpy_f16)(int64_t n, float a, const uint16_t *x, float *y);
    void (*axpy_f32)(int64_t n, float a, const float *x, float *y);
} llm__cpu_kernels;

/* Fills k with the scalar reference kernels. */
void llm__cpu_kernels_scalar(llm__cpu_kernels *k);
/* Overrides entries with AVX2+FMA+F16C variants. Call only when the CPU has them. */
void llm__cpu_kernels_avx2(llm__cpu_kernels *k);
/* Non-zero if the running CPU supports AVX2, FMA and F16C and the variants were built. */
int llm__cpu_has_avx2(void);

/* Scalar reference entry points (also used by tests through the registry). */
float llm__dot_f16_scalar(int64_t n, const uint16_t *x, const uint16_t *y);
float llm__dot_f32_scalar(int64_t n, const float *x, const float *y);

#endif
