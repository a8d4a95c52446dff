/*
 * cuda/backend_cuda.cu -- the CUDA backend: device, stream, cuBLAS handle,
 * device memory, the argument upload ring, scratch, and the function table.
 *
 * Memory is device memory. llm_buffer_wrap_host copies the host region to the
 * device (wrapped = 0, so the copy is freed with the buffer). Ops queue on one
 * stream; buf_write and buf_read wait for it so host memory can be reused as
 * soon as they return; synchronize waits for everything queued.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_internal.cuh"
#include "cuda/quant_cuda.cuh"

/* ------------------------------------------------------------- device info -- */

extern "C" int llm__cuda_device_count(char *msg, size_t cap) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        if (msg && cap) {
            snprintf(msg, cap, "cudaGetDeviceCount: %s (%s)", cudaGetErrorString(e),
                     cudaGetErrorName(e));
        }
        return 0;
    }
    if (n <= 0 && msg && cap) {
        snprintf(msg, cap, "cudaGetDeviceCount reports 0 devices");
    } else if (msg && cap) {
        msg[0] = '\0';
    }
    return n > 0 ? n : 0;
}

/* ------------------------------------------------------------- upload ring -- */

static void free_ring(llm__cuda *c) {
    if (c->up_host) cudaFreeHost(c->up_host);
    if (c->up_dev) cudaFree(c->up_dev);
    c->up_host = NULL;
    c->up_dev = NULL;
    c->up_slot_bytes = 0;
    c->up_slot = 0;
    c->up_off = 0;
}

static llm_status alloc_ring(llm__cuda *c, size_t slot_bytes) {
    size_t total = slot_bytes * LLM_CUDA_UP_SLOTS;
    void *h = NULL, *d = NULL;
    LLM_CU_TRY(cudaHostAlloc(&h, total, cudaHostAllocDefault), "pinned argument ring");
    cudaError_t e = cudaMalloc(&d, total);
    if (e != cudaSuccess) {
        cudaFreeHost(h);
        return llm__cuda_check(e, "device argument ring");
    }
    c->up_host = (char *)h;
    c->up_dev = (char *)d;
    c->up_slot_bytes = slot_bytes;
    c->up_slot = 0;
    c->up_off = 0;
    return LLM_OK;
}

static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

/*
 * The host half of a slot may be overwritten only after the copies reading it
 * have executed: leaving a slot records its event, and entering a slot waits
 * for the event recorded when it was last left (usually long done). The device
 * half needs no wait: the next copy into it is queued after the kernels that
 * read it, on the same stream.
 */
llm_status llm__cuda_upload(llm__cuda *c, int count, const void *const *srcs, const size_t *sizes,
                            void **dev) {
    size_t total = 0;
    for (int i = 0; i < count; i++) {
        total += align16(sizes[i]);
    }
    if (total == 0) {
        for (int i = 0; i < count; i++) dev[i] = NULL;
        return LLM_OK;
    }
    if (total > c->up_slot_bytes) {
        /* Larger than a slot: drain the stream (nothing reads the ring any
         * more), then reallocate it with slots big enough. Rare: block tables
         * of very long contexts. */
        LLM_CU_TRY(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
        size_t want = c->up_slot_bytes ? c->up_slot_bytes : LLM_CUDA_UP_SLOT_BYTES;
        while (want < total) want *= 2;
        free_ring(c);
        LLM_TRY(alloc_ring(c, want));
    } else if (c->up_off + total > c->up_slot_bytes) {
        LLM_CU_TRY(cudaEventRecord(c->up_ev[c->up_slot], c->stream), "cudaEventRecord");
        c->up_slot = (c->up_slot + 1) % LLM_CUDA_UP_SLOTS;
        c->up_off = 0;
        LLM_CU_TRY(cudaEventSynchronize(c->up_ev[c->up_slot]), "cudaEventSynchronize");
    }
    size_t base = (size_t)c->up_slot * c->up_slot_bytes + c->up_off;
    size_t at = base;
    for (int i = 0; i < count; i++) {
        if (sizes[i]) {
            memcpy(c->up_host + at, srcs[i], sizes[i]);
        }
        dev[i] = c->up_dev + at;
        at += align16(sizes[i]);
    }
    c->up_off += total;
    LLM_CU_TRY(cudaMemcpyAsync(c->up_dev + base, c->up_host + base, total, cudaMemcpyHostToDevice,
                               c->stream),
               "argument upload");
    return LLM_OK;
}

/* ------------------------------------------------------ scratch / download -- */

llm_status llm__cuda_scratch(llm__cuda *c, size_t n, void **out) {
    if (n > c->scratch_size) {
        /* Kernels queued earlier may still read the old scratch. */
        LLM_CU_TRY(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
        if (c->scratch) {
            cudaFree(c->scratch);
            c->scratch = NULL;
            c->scratch_size = 0;
        }
        size_t want = align16(n + n / 4);
        LLM_CU_TRY(cudaMalloc(&c->scratch, want), "matmul scratch");
        c->scratch_size = want;
    }
    *out = c->scratch;
    return LLM_OK;
}

llm_status llm__cuda_reserve_download(llm__cuda *c, size_t n) {
    if (n <= c->dl_cap) {
        return LLM_OK;
    }
    LLM_CU_TRY(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
    if (c->dl_host) cudaFreeHost(c->dl_host);
    if (c->dl_dev) cudaFree(c->dl_dev);
    c->dl_host = NULL;
    c->dl_dev = NULL;
    c->dl_cap = 0;
    size_t want = n < 256 ? 256 : n;
    void *h = NULL, *d = NULL;
    LLM_CU_TRY(cudaHostAlloc(&h, want * sizeof(int32_t), cudaHostAllocDefault), "pinned download");
    cudaError_t e = cudaMalloc(&d, want * sizeof(int32_t));
    if (e != cudaSuccess) {
        cudaFreeHost(h);
        return llm__cuda_check(e, "download buffer");
    }
    c->dl_host = (int32_t *)h;
    c->dl_dev = (int32_t *)d;
    c->dl_cap = want;
    return LLM_OK;
}

/* ------------------------------------------------------------------ memory -- */

static llm_status cu_buf_alloc(llm_backend *be, size_t size, void **data) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    void *p = NULL;
    /* cudaMalloc aligns to at least 256 bytes (the API promises 64). */
    LLM_CU_TRY(cudaMalloc(&p, size ? size : 256), "cudaMalloc");
    cudaError_t e = cudaMemsetAsync(p, 0, size ? size : 256, c->stream);
    if (e != cudaSuccess) {
        cudaFree(p);
        return llm__cuda_check(e, "cudaMemsetAsync");
    }
    *data = p;
    return LLM_OK;
}

static llm_status cu_buf_wrap(llm_backend *be, const void *host, size_t size, void **data,
                              int *wrapped) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    void *p = NULL;
    LLM_CU_TRY(cudaMalloc(&p, size ? size : 256), "cudaMalloc (wrapped host region)");
    if (size) {
        /* Synchronous: the caller's region (often an mmapped file) is pageable. */
        cudaError_t e = cudaMemcpyAsync(p, host, size, cudaMemcpyHostToDevice, c->stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
        if (e != cudaSuccess) {
            cudaFree(p);
            return llm__cuda_check(e, "copying a wrapped host region to the device");
        }
    }
    *data = p;
    *wrapped = 0; /* a device copy we own: freed with the buffer */
    return LLM_OK;
}

static void cu_buf_free(llm_backend *be, void *data, int wrapped) {
    (void)wrapped;
    llm__cuda *c = llm__cuda_of(be);
    if (cudaSetDevice(c->device) == cudaSuccess) {
        /* Kernels still queued may use the buffer: cudaFree waits for the
         * device, but make the ordering explicit for our stream. */
        (void)cudaStreamSynchronize(c->stream);
        (void)cudaFree(data);
    }
    (void)cudaGetLastError();
}

static llm_status cu_buf_write(llm_backend *be, void *data, size_t off, const void *src, size_t n) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    LLM_CU_TRY(cudaMemcpyAsync((char *)data + off, src, n, cudaMemcpyHostToDevice, c->stream),
               "buffer write");
    LLM_CU_TRY(cudaStreamSynchronize(c->stream), "buffer write (synchronize)");
    return LLM_OK;
}

static llm_status cu_buf_read(llm_backend *be, const void *data, size_t off, void *dst, size_t n) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    LLM_CU_TRY(cudaMemcpyAsync(dst, (const char *)data + off, n, cudaMemcpyDeviceToHost, c->stream),
               "buffer read");
    LLM_CU_TRY(cudaStreamSynchronize(c->stream), "buffer read (synchronize)");
    return LLM_OK;
}

/* Device-side copy, queued on the stream. cudaMemcpy does not allow
 * overlapping ranges, so an overlapping copy (memmove semantics) goes
 * through the scratch buffer. */
static llm_status cu_buf_copy(llm_backend *be, void *dst, size_t dst_off, const void *src,
                              size_t src_off, size_t n) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    char *d = (char *)dst + dst_off;
    const char *s = (const char *)src + src_off;
    if (d < s + n && s < d + n) {
        if (d == s) {
            return LLM_OK;
        }
        void *tmp = NULL;
        LLM_TRY(llm__cuda_scratch(c, n, &tmp));
        LLM_CU_TRY(cudaMemcpyAsync(tmp, s, n, cudaMemcpyDeviceToDevice, c->stream), "buffer copy");
        LLM_CU_TRY(cudaMemcpyAsync(d, tmp, n, cudaMemcpyDeviceToDevice, c->stream), "buffer copy");
        return LLM_OK;
    }
    LLM_CU_TRY(cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToDevice, c->stream), "buffer copy");
    return LLM_OK;
}

static llm_status cu_buf_clear(llm_backend *be, void *data, size_t size) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    LLM_CU_TRY(cudaMemsetAsync(data, 0, size, c->stream), "buffer clear");
    return LLM_OK;
}

/* ----------------------------------------------------------------- backend -- */

static llm_status cu_synchronize(llm_backend *be) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    LLM_CU_TRY(cudaStreamSynchronize(c->stream), "synchronize");
    return LLM_OK;
}

static int cu_supports(const llm_backend *be, llm_op op, llm_dtype dtype) {
    (void)be;
    switch (op) {
    case LLM_OP_MATMUL:
    case LLM_OP_GET_ROWS:
        return 1; /* every known type has a device dequantizer (quant_cuda.cuh) */
    case LLM_OP_KV_WRITE:
    case LLM_OP_ATTENTION:
        return dtype == LLM_DTYPE_F16 || dtype == LLM_DTYPE_F32;
    default:
        return dtype == LLM_DTYPE_F32;
    }
}

static void cu_destroy(llm_backend *be) {
    llm__cuda *c = llm__cuda_of(be);
    if (c) {
        if (cudaSetDevice(c->device) == cudaSuccess) {
            if (c->stream) (void)cudaStreamSynchronize(c->stream);
            llm__cuda_rng_free(c);
            if (c->blas) cublasDestroy(c->blas);
            free_ring(c);
            for (int i = 0; i < LLM_CUDA_UP_SLOTS; i++) {
                if (c->up_ev[i]) cudaEventDestroy(c->up_ev[i]);
            }
            if (c->scratch) cudaFree(c->scratch);
            if (c->dl_host) cudaFreeHost(c->dl_host);
            if (c->dl_dev) cudaFree(c->dl_dev);
            if (c->stream) cudaStreamDestroy(c->stream);
        }
        (void)cudaGetLastError();
        free(c);
    }
    free(be);
}

static const llm__backend_iface g_cuda_iface = {
    /* .name = */ "cuda",
    /* .destroy = */ cu_destroy,
    /* .synchronize = */ cu_synchronize,
    /* .supports = */ cu_supports,
    /* .buf_alloc = */ cu_buf_alloc,
    /* .buf_wrap = */ cu_buf_wrap,
    /* .buf_free = */ cu_buf_free,
    /* .buf_write = */ cu_buf_write,
    /* .buf_read = */ cu_buf_read,
    /* .buf_clear = */ cu_buf_clear,
    /* .get_rows = */ llm__cuda_get_rows,
    /* .matmul = */ llm__cuda_matmul,
    /* .rms_norm = */ llm__cuda_rms_norm,
    /* .rope = */ llm__cuda_rope,
    /* .swiglu = */ llm__cuda_swiglu,
    /* .add = */ llm__cuda_add,
    /* .mul = */ llm__cuda_mul,
    /* .scale = */ llm__cuda_scale,
    /* .softmax = */ llm__cuda_softmax,
    /* .kv_write = */ llm__cuda_kv_write,
    /* .attention = */ llm__cuda_attention,
    /* .argmax = */ llm__cuda_argmax,
    /* .geglu = */ llm__cuda_geglu,
};

/* The device readers hard-code blocks.h's byte sizes; refuse to run if the
 * two ever disagree. */
static llm_status check_layouts(void) {
    static const struct {
        llm_dtype t;
        size_t bytes;
    } k[] = {
        {LLM_DTYPE_Q4_0, LLM_CU_B_Q4_0}, {LLM_DTYPE_Q4_1, LLM_CU_B_Q4_1},
        {LLM_DTYPE_Q5_0, LLM_CU_B_Q5_0}, {LLM_DTYPE_Q5_1, LLM_CU_B_Q5_1},
        {LLM_DTYPE_Q8_0, LLM_CU_B_Q8_0}, {LLM_DTYPE_Q8_1, LLM_CU_B_Q8_1},
        {LLM_DTYPE_Q2_K, LLM_CU_B_Q2_K}, {LLM_DTYPE_Q3_K, LLM_CU_B_Q3_K},
        {LLM_DTYPE_Q4_K, LLM_CU_B_Q4_K}, {LLM_DTYPE_Q5_K, LLM_CU_B_Q5_K},
        {LLM_DTYPE_Q6_K, LLM_CU_B_Q6_K}, {LLM_DTYPE_Q8_K, LLM_CU_B_Q8_K},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        if (llm_dtype_block_bytes(k[i].t) != k[i].bytes) {
            return llm__err(LLM_ERR_INTERNAL, "cuda: block size of %s disagrees with blocks.h",
                            llm_dtype_name(k[i].t));
        }
    }
    return LLM_OK;
}

/* Fills c (already zeroed) for device p->device; on failure the caller frees. */
static llm_status cu_init(llm__cuda *c, const llm_backend_params *p, char *desc, size_t desc_cap) {
    LLM_TRY(check_layouts());
    char msg[160];
    int n = llm__cuda_device_count(msg, sizeof msg);
    if (n == 0) {
        return llm__err(LLM_ERR_NOT_FOUND, "cuda: no CUDA device: %s", msg);
    }
    if (p->device < 0 || p->device >= n) {
        return llm__err(LLM_ERR_NOT_FOUND, "cuda: device %d does not exist (%d device%s)",
                        p->device, n, n == 1 ? "" : "s");
    }
    c->device = p->device;
    LLM_TRY(llm__cuda_enter(c));
    cudaDeviceProp prop;
    LLM_CU_TRY(cudaGetDeviceProperties(&prop, c->device), "cudaGetDeviceProperties");
    c->sm_count = prop.multiProcessorCount;
    c->cc = prop.major * 10 + prop.minor;
    LLM_CU_TRY(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    for (int i = 0; i < LLM_CUDA_UP_SLOTS; i++) {
        LLM_CU_TRY(cudaEventCreateWithFlags(&c->up_ev[i], cudaEventDisableTiming),
                   "cudaEventCreate");
    }
    LLM_TRY(alloc_ring(c, LLM_CUDA_UP_SLOT_BYTES));
    LLM_TRY(llm__cublas_check(cublasCreate(&c->blas), "cublasCreate"));
    LLM_TRY(llm__cublas_check(cublasSetStream(c->blas, c->stream), "cublasSetStream"));
    /* Plain FP32 for F32 GEMMs (no TF32), so F32 weights stay exact-ish. */
    LLM_TRY(llm__cublas_check(cublasSetMathMode(c->blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode"));
    snprintf(desc, desc_cap, "cuda:%d %.32s sm_%d", c->device, prop.name, c->cc);
    return LLM_OK;
}

extern "C" llm_status llm__cuda_backend_create(const llm_backend_params *p, llm_backend **out) {
    *out = NULL;
    llm_backend *be = (llm_backend *)calloc(1, sizeof(*be));
    llm__cuda *c = (llm__cuda *)calloc(1, sizeof(*c));
    if (!be || !c) {
        free(be);
        free(c);
        return llm__err(LLM_ERR_NO_MEMORY, "cuda: out of memory creating the backend");
    }
    be->iface = &g_cuda_iface;
    be->ext.buf_copy = cu_buf_copy;
    be->impl = c;
    be->params = *p;
    be->n_threads = 1;
    llm_status st = cu_init(c, p, be->kernels, sizeof(be->kernels));
    if (st != LLM_OK) {
        char keep[256];
        snprintf(keep, sizeof keep, "%s", llm_runtime_last_error());
        cu_destroy(be);
        return llm__err(st, "%s", keep); /* cleanup must not hide the cause */
    }
    *out = be;
    return LLM_OK;
}
