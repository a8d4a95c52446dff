/*
 * cuda/softmax_cuda.cu -- row-wise softmax over ne[0], one thread block per
 * row: max, then e = expf(x - max) written out and summed in double (as the
 * CPU reference), then every element multiplied by (float)(1 / sum). Each
 * element is read and written by the same thread, so out may alias x.
 */
#include "cuda/cuda_internal.cuh"

#define SM_THREADS 256

static __global__ void __launch_bounds__(SM_THREADS)
    softmax_kernel(float *out,      /* [rows][d] */
                   const float *x,  /* [rows][d] */
                   int64_t d) {
    __shared__ float pmax[SM_THREADS / 32];
    __shared__ double psum[SM_THREADS / 32];
    __shared__ float mx_sh, inv_sh;
    const int64_t r = blockIdx.x;
    const float *xr = x + r * d;
    float *orow = out + r * d;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    float mx = -INFINITY;
    for (int64_t i = threadIdx.x; i < d; i += SM_THREADS) mx = fmaxf(mx, xr[i]);
    mx = llm__warp_max(mx);
    if (lane == 0) pmax[warp] = mx;
    __syncthreads();
    if (threadIdx.x == 0) {
        float m = -INFINITY;
        for (int k = 0; k < SM_THREADS / 32; k++) m = fmaxf(m, pmax[k]);
        mx_sh = m;
    }
    __syncthreads();
    mx = mx_sh;

    double sum = 0.0;
    for (int64_t i = threadIdx.x; i < d; i += SM_THREADS) {
        const float e = expf(__fsub_rn(xr[i], mx));
        orow[i] = e;
        sum += (double)e;
    }
    sum = llm__warp_sum_d(sum);
    if (lane == 0) psum[warp] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0.0;
        for (int k = 0; k < SM_THREADS / 32; k++) t += psum[k];
        inv_sh = (float)(1.0 / t);
    }
    __syncthreads();
    const float inv = inv_sh;
    for (int64_t i = threadIdx.x; i < d; i += SM_THREADS) orow[i] = __fmul_rn(orow[i], inv);
}

extern "C" llm_status llm__cuda_softmax(llm_backend *be, const llm_tensor *out,
                                        const llm_tensor *x) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    const int64_t rows = llm__cuda_rows(x);
    if (rows > INT32_MAX) {
        return llm__err(LLM_ERR_UNSUPPORTED, "softmax: too many rows");
    }
    softmax_kernel<<<(unsigned)rows, SM_THREADS, 0, c->stream>>>(
        (float *)llm__cuda_ptr(out), (const float *)llm__cuda_ptr(x), x->ne[0]);
    LLM_CU_LAUNCHED("softmax kernel");
    return LLM_OK;
}
