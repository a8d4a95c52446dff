/*
 * cuda/cuda_internal.cuh -- PRIVATE to the CUDA backend (.cu files only):
 * backend state, error helpers, the host->device argument ring, scratch
 * memory, and the op entry points each .cu file defines.
 *
 * Execution model: every op is queued on one stream (c->stream) and returns
 * without waiting. Host arrays an op receives (token ids, positions, block
 * tables, rope factors) are only valid during the call, so they are copied
 * into pinned staging memory at once and then uploaded on the stream
 * (llm__cuda_upload). buf_read, argmax and synchronize wait for the stream.
 */
#ifndef LLM_RUNTIME_CUDA_INTERNAL_CUH
#define LLM_RUNTIME_CUDA_INTERNAL_CUH

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

extern "C" {
#include "backend.h"
}
#include "cuda/cuda.h"

/* Staging ring for host arguments: UP_SLOTS slots, each guarded by an event
 * recorded when the ring moves past it (see llm__cuda_upload). */
#define LLM_CUDA_UP_SLOTS 8
#define LLM_CUDA_UP_SLOT_BYTES (64 * 1024)

typedef struct llm__cuda {
    int device;
    int sm_count;
    int cc;                    /* compute capability, e.g. 86 */
    cudaStream_t stream;       /* every op and copy is queued here */
    cublasHandle_t blas;       /* bound to stream */
    void *rng;                 /* curandGenerator_t, created on first use (random_cuda.cu) */

    /* Grow-only device scratch for matmul (dequantized weights, F16 activations). */
    void *scratch;
    size_t scratch_size;

    /* Argument upload ring: pinned host memory mirrored by device memory. */
    char *up_host;             /* [LLM_CUDA_UP_SLOTS][up_slot_bytes], pinned */
    char *up_dev;              /* same layout on the device */
    size_t up_slot_bytes;
    int up_slot;               /* slot being filled */
    size_t up_off;             /* bytes used in that slot */
    cudaEvent_t up_ev[LLM_CUDA_UP_SLOTS];

    /* Results copied back to the host (argmax ids). */
    int32_t *dl_host;          /* pinned [dl_cap] */
    int32_t *dl_dev;           /* device [dl_cap] */
    size_t dl_cap;
} llm__cuda;

static inline llm__cuda *llm__cuda_of(llm_backend *be) { return (llm__cuda *)be->impl; }

/* Converts a CUDA error into LLM_ERR_BACKEND (LLM_ERR_NO_MEMORY for an
 * allocation failure) with the CUDA error text in the thread-local message.
 * Clears CUDA's non-sticky last error so a later launch check does not report
 * it twice. */
static inline llm_status llm__cuda_check(cudaError_t e, const char *what) {
    if (e == cudaSuccess) {
        return LLM_OK;
    }
    (void)cudaGetLastError();
    return llm__err(e == cudaErrorMemoryAllocation ? LLM_ERR_NO_MEMORY : LLM_ERR_BACKEND,
                    "cuda: %s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static inline llm_status llm__cublas_check(cublasStatus_t s, const char *what) {
    if (s == CUBLAS_STATUS_SUCCESS) {
        return LLM_OK;
    }
    return llm__err(s == CUBLAS_STATUS_ALLOC_FAILED ? LLM_ERR_NO_MEMORY : LLM_ERR_BACKEND,
                    "cuda: %s: cuBLAS %s", what, cublasGetStatusString(s));
}

#define LLM_CU_TRY(expr, what)                                                                     \
    do {                                                                                           \
        llm_status cu_st_ = llm__cuda_check((expr), (what));                                       \
        if (cu_st_ != LLM_OK) return cu_st_;                                                       \
    } while (0)

#define LLM_TRY(expr)                                                                              \
    do {                                                                                           \
        llm_status st_ = (expr);                                                                   \
        if (st_ != LLM_OK) return st_;                                                             \
    } while (0)

/* A launch error (bad configuration, no kernel image for this GPU) shows up
 * in cudaGetLastError right after the launch. */
#define LLM_CU_LAUNCHED(what) LLM_CU_TRY(cudaGetLastError(), what)

/* Makes the backend's device current on the calling thread (CUDA's current
 * device is per thread, and the backend may be used from any thread). */
static inline llm_status llm__cuda_enter(llm__cuda *c) {
    return llm__cuda_check(cudaSetDevice(c->device), "cudaSetDevice");
}

/* Device pointer of a tensor's first element. */
static inline char *llm__cuda_ptr(const llm_tensor *t) {
    return (char *)t->buffer->data + t->offset;
}

static inline int64_t llm__cuda_rows(const llm_tensor *t) {
    return t->ne[1] * t->ne[2] * t->ne[3];
}

/* Blocks for a 1-D grid of n threads in blocks of bs, capped (kernels loop). */
static inline unsigned llm__cuda_grid(int64_t n, int bs) {
    int64_t g = (n + bs - 1) / bs;
    const int64_t cap = 65535LL * 16;
    return (unsigned)(g < 1 ? 1 : g > cap ? cap : g);
}

/* Helpers shared by the CUDA files: C linkage, so the library exports only
 * llm_/llm__ names (tests/common's symbol check runs nm over it). */
extern "C" {
/* Copies `count` host arrays (srcs[i], sizes[i] bytes) to the device in one
 * stream-ordered upload; dev[i] receives each array's device address, valid
 * for kernels queued on c->stream until the ring wraps (8 slots later), i.e.
 * for the op being queued. Returns LLM_OK or LLM_ERR_BACKEND/NO_MEMORY. */
llm_status llm__cuda_upload(llm__cuda *c, int count, const void *const *srcs, const size_t *sizes,
                            void **dev);

/* Device scratch of at least n bytes (grow-only, stream-ordered reuse). */
llm_status llm__cuda_scratch(llm__cuda *c, size_t n, void **out);

/* Makes sure dl_host/dl_dev hold at least n int32. */
llm_status llm__cuda_reserve_download(llm__cuda *c, size_t n);

/* Frees the cuRAND generator if one was created (random_cuda.cu). */
void llm__cuda_rng_free(llm__cuda *c);
} /* extern "C" */

/* Op entry points, one family per file; arguments were validated by ops.c. */
extern "C" {
llm_status llm__cuda_get_rows(llm_backend *be, const llm_tensor *out, const llm_tensor *w,
                              const int32_t *ids, int64_t n);
llm_status llm__cuda_matmul(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                            const llm_tensor *w);
llm_status llm__cuda_rms_norm(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                              const llm_tensor *weight, float eps);
llm_status llm__cuda_rope(llm_backend *be, const llm_tensor *x, const int32_t *positions,
                          const llm_rope_params *p);
llm_status llm__cuda_swiglu(llm_backend *be, const llm_tensor *out, const llm_tensor *gate,
                            const llm_tensor *up);
llm_status llm__cuda_geglu(llm_backend *be, const llm_tensor *out, const llm_tensor *gate,
                           const llm_tensor *up);
llm_status llm__cuda_add(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                         const llm_tensor *b);
llm_status llm__cuda_mul(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                         const llm_tensor *b);
llm_status llm__cuda_scale(llm_backend *be, const llm_tensor *out, const llm_tensor *x, float s);
llm_status llm__cuda_softmax(llm_backend *be, const llm_tensor *out, const llm_tensor *x);
llm_status llm__cuda_kv_write(llm_backend *be, const llm_tensor *k_cache,
                              const llm_tensor *v_cache, const llm_tensor *k, const llm_tensor *v,
                              const int32_t *positions, const int32_t *block_table,
                              int32_t n_table);
llm_status llm__cuda_attention(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                               const llm_tensor *k_cache, const llm_tensor *v_cache,
                               const int32_t *positions, const int32_t *block_table,
                               int32_t n_table, const llm_attn_params *p);
llm_status llm__cuda_argmax(llm_backend *be, const llm_tensor *x, int32_t *out_ids);
}

/* Warp-wide sum; every lane gets the total. */
static __device__ __forceinline__ float llm__warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

static __device__ __forceinline__ double llm__warp_sum_d(double v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

static __device__ __forceinline__ float llm__warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    return v;
}

#endif /* LLM_RUNTIME_CUDA_INTERNAL_CUH */
