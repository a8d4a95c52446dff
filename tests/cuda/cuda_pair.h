/*
 * cuda_pair.h -- helpers for the CUDA tests: a "cuda" backend and a "cpu"
 * backend side by side, buffers mirrored in both, random inputs generated on
 * the GPU with cuRAND (llm__cuda_fill_uniform) and copied to the CPU, and
 * tolerance checks that print the worst element.
 *
 * Every test starts with cu_pair_open(), which calls cr_skip_test("no CUDA
 * device: ...") when cudaGetDeviceCount reports no device or an error, so a
 * machine without a GPU shows the tests as skipped, never as passed.
 *
 * Harness self-check (no GPU needed): with LLM_CUDA_TEST_SELFCHECK=1 the
 * "device" side is a second CPU backend with the scalar kernels and random
 * inputs come from a host generator. This only exercises the test code and its
 * tolerances (scalar vs AVX2 kernels); it says nothing about the CUDA kernels.
 */
#ifndef LLM_TESTS_CUDA_PAIR_H
#define LLM_TESTS_CUDA_PAIR_H

#include <stddef.h>
#include <stdint.h>

#include "llama/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cu_pair {
    llm_backend *dev; /* "cuda" (or scalar "cpu" in self-check mode) */
    llm_backend *cpu; /* "cpu", AUTO kernels */
    int selfcheck;
} cu_pair;

/* A buffer of the same size in both backends. */
typedef struct cu_buf {
    llm_buffer *dev, *cpu;
    size_t size;
} cu_buf;

void cu_pair_open(cu_pair *p);
/* Prints "no CUDA device: <why>" to stderr and skips the current test. */
void cu_skip_no_device(const char *why);
void cu_pair_close(cu_pair *p);

void cu_buf_alloc(cu_pair *p, cu_buf *b, size_t size);
void cu_buf_free(cu_buf *b);
/* Writes the same bytes into both copies. */
void cu_buf_write(cu_buf *b, size_t off, const void *src, size_t n);
/* n floats at byte offset off, uniform in [lo, hi], generated on the device
 * by cuRAND (seeded) and mirrored to the CPU copy; host (optional) gets them. */
void cu_fill_uniform(cu_pair *p, cu_buf *b, size_t off, size_t n, float lo, float hi,
                     uint64_t seed, float *host);
/* Tensor views of the device / cpu copy. */
llm_tensor cu_view(const cu_buf *b, int on_dev, size_t off, llm_dtype t, int64_t ne0, int64_t ne1,
                   int64_t ne2);
void cu_read(const cu_buf *b, int on_dev, size_t off, void *dst, size_t n);

/* Fails the test unless |got[i] - want[i]| <= atol + rtol * scale[i] for all
 * i (scale NULL: |want[i]|), naming `what` and the worst element. */
void cu_check_close(const float *got, const float *want, const double *scale, size_t n,
                    double atol, double rtol, const char *what);

/* Host xorshift for weight bytes and ids (deterministic per seed). */
uint32_t cu_rand_u32(uint64_t *state);
float cu_rand_float(uint64_t *state, float lo, float hi);

/* Random but valid bytes for n_rows rows of k elements of type t (scales
 * finite and realistic): F32/F16/BF16/Q4_0/Q4_1/Q8_0 via the reference
 * quantizer from floats in [-1, 1], other types as random bytes with their
 * scale fields overwritten. Returns malloc'ed bytes (caller frees). */
uint8_t *cu_random_weights(llm_dtype t, int64_t k, int64_t n_rows, uint64_t seed, size_t *nbytes);

#ifdef __cplusplus
}
#endif
#endif
