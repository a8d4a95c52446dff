/*
 * cuda/cuda.h -- PRIVATE to llama-runtime: the few plain-C entry points of the
 * CUDA backend that C code (runtime.c, tests) may call. No CUDA header is
 * included, so this compiles as C11 and C++17 alike. Only present in builds
 * with LLM_HAVE_CUDA (libs/runtime/src/cuda/cuda.cmake).
 */
#ifndef LLM_RUNTIME_CUDA_H
#define LLM_RUNTIME_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "llama/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of CUDA devices the driver reports. On any error (no driver, no
 * device, a driver older than the runtime) returns 0 and writes the CUDA error
 * text into msg (NUL-terminated, truncated to cap); msg may be NULL. */
int llm__cuda_device_count(char *msg, size_t cap);

/* Fills n floats of a CUDA buffer, starting at byte `offset`, with uniform
 * random values in [lo, hi), generated on the device by cuRAND's Philox4x32-10
 * generator seeded with `seed` (same seed, same values on any GPU). Queued on
 * the backend's stream like an op. Returns LLM_OK; LLM_ERR_INVALID_ARG if buf
 * is not a CUDA buffer, is read-only, or the range does not fit / is not
 * 4-byte aligned; LLM_ERR_BACKEND on a CUDA or cuRAND error. */
llm_status llm__cuda_fill_uniform(llm_buffer *buf, size_t offset, size_t n, float lo, float hi,
                                  uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif /* LLM_RUNTIME_CUDA_H */
