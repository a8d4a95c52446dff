/*
 * cuda/cuda_module.h -- PRIVATE to llama-runtime: the interface between the
 * runtime and the CUDA backend built as a run-time module (libllm-cuda.so).
 *
 * No program links a CUDA library: the runtime (cuda_loader.c) dlopen()s the
 * module when the CUDA backend is asked for ("cuda"), or for "auto" when the
 * CUDA driver (libcuda.so.1) is present, and looks up one symbol,
 * LLM_CUDA_MODULE_ENTRY. The module carries its own copy of the dtype helpers;
 * its error messages go through the host's set_error, so llm_runtime_last_error()
 * sees them. Both sides are built from one tree: abi and the struct sizes
 * guard against a module from another build.
 */
#ifndef LLM_RUNTIME_CUDA_MODULE_H
#define LLM_RUNTIME_CUDA_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "llama/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LLM_CUDA_MODULE_ABI 1
#define LLM_CUDA_MODULE_ENTRY "llm_cuda_module_v1"
#define LLM_CUDA_MODULE_FILE "libllm-cuda.so"

/* What the runtime gives the module. */
typedef struct llm__cuda_host {
    int abi;                 /* LLM_CUDA_MODULE_ABI */
    size_t backend_size;     /* sizeof(struct llm_backend) */
    size_t buffer_size;      /* sizeof(struct llm_buffer) */
    void (*set_error)(const char *msg);   /* the runtime's thread-local message */
    const char *(*last_error)(void);
} llm__cuda_host;

/* What the module gives the runtime: the entry points of cuda.h and backend.h. */
typedef struct llm__cuda_api {
    llm_status (*backend_create)(const llm_backend_params *p, llm_backend **out);
    int (*device_count)(char *msg, size_t cap);
    llm_status (*fill_uniform)(llm_buffer *buf, size_t offset, size_t n, float lo, float hi,
                               uint64_t seed);
} llm__cuda_api;

/* The module's one exported function. Returns 0 and fills *api, or -1 when
 * host->abi or the sizes differ from the module's (then *api is untouched). */
typedef int (*llm__cuda_module_entry)(const llm__cuda_host *host, llm__cuda_api *api);

#ifdef __cplusplus
}
#endif
#endif /* LLM_RUNTIME_CUDA_MODULE_H */
