/*
 * cuda/argmax_cuda.cu -- out_ids[i] = index of the largest x[i][:], the first
 * one on ties (as the CPU). One thread block per row; the ids come back to
 * the host, so this op waits for the stream.
 */
#include "cuda/cuda_internal.cuh"

#define AM_THREADS 256

/* (v, i) beats (bv, bi) if larger, or equal and earlier. */
static __device__ __forceinline__ bool am_better(float v, int64_t i, float bv, int64_t bi) {
    return v > bv || (v == bv && i < bi);
}

static __global__ void __launch_bounds__(AM_THREADS)
    argmax_kernel(int32_t *ids,      /* [rows] */
                  const float *x,    /* [rows][d] */
                  int64_t d) {
    __shared__ float sv[AM_THREADS];
    __shared__ int64_t si[AM_THREADS];
    const int64_t r = blockIdx.x;
    const float *xr = x + r * d;
    /* Each thread scans increasing indices with a strict >, keeping its first
     * maximum; the tree breaks ties by index. NaNs never win, and a row whose
     * first element is NaN or whose values are all -inf gives 0: exactly the
     * CPU loop `if (v[i] > v[best]) best = i` starting from best = 0. */
    float bv = -INFINITY;
    int64_t bi = INT64_MAX;
    for (int64_t i = threadIdx.x; i < d; i += AM_THREADS) {
        const float v = xr[i];
        if (v > bv) {
            bv = v;
            bi = i;
        }
    }
    sv[threadIdx.x] = bv;
    si[threadIdx.x] = bi;
    __syncthreads();
    for (int s = AM_THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) {
            const float ov = sv[threadIdx.x + s];
            const int64_t oi = si[threadIdx.x + s];
            if (am_better(ov, oi, sv[threadIdx.x], si[threadIdx.x])) {
                sv[threadIdx.x] = ov;
                si[threadIdx.x] = oi;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const float x0 = xr[0];
        ids[r] = (si[0] == INT64_MAX || x0 != x0) ? 0 : (int32_t)si[0];
    }
}

extern "C" llm_status llm__cuda_argmax(llm_backend *be, const llm_tensor *x, int32_t *out_ids) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    const int64_t rows = llm__cuda_rows(x);
    if (rows > INT32_MAX) {
        return llm__err(LLM_ERR_UNSUPPORTED, "argmax: too many rows");
    }
    LLM_TRY(llm__cuda_reserve_download(c, (size_t)rows));
    argmax_kernel<<<(unsigned)rows, AM_THREADS, 0, c->stream>>>(
        c->dl_dev, (const float *)llm__cuda_ptr(x), x->ne[0]);
    LLM_CU_LAUNCHED("argmax kernel");
    LLM_CU_TRY(cudaMemcpyAsync(c->dl_host, c->dl_dev, (size_t)rows * sizeof(int32_t),
                               cudaMemcpyDeviceToHost, c->stream),
               "argmax download");
    LLM_CU_TRY(cudaStreamSynchronize(c->stream), "argmax (synchronize)");
    memcpy(out_ids, c->dl_host, (size_t)rows * sizeof(int32_t));
    return LLM_OK;
}
