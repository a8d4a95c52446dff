/*
 * cuda/cuda_module.c -- the glue of the CUDA run-time module (libllm-cuda.so):
 * its exported entry point, and the two runtime functions the CUDA sources
 * call (llm__err, llm_runtime_last_error), forwarded to the host runtime so a
 * message set here is the one the program reads.
 */
#include <stdarg.h>
#include <stdio.h>

#include "backend.h"
#include "cuda/cuda.h"
#include "cuda/cuda_module.h"

static const llm__cuda_host *g_host;

llm_status llm__err(llm_status st, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (g_host) g_host->set_error(buf);
    return st;
}

const char *llm_runtime_last_error(void) { return g_host ? g_host->last_error() : ""; }

__attribute__((visibility("default"))) int llm_cuda_module_v1(const llm__cuda_host *host,
                                                              llm__cuda_api *api);

int llm_cuda_module_v1(const llm__cuda_host *host, llm__cuda_api *api) {
    if (!host || !api || host->abi != LLM_CUDA_MODULE_ABI ||
        host->backend_size != sizeof(struct llm_backend) ||
        host->buffer_size != sizeof(struct llm_buffer))
        return -1;
    g_host = host;
    api->backend_create = llm__cuda_backend_create;
    api->device_count = llm__cuda_device_count;
    api->fill_uniform = llm__cuda_fill_uniform;
    return 0;
}
