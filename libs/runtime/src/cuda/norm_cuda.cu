/*
 * cuda/norm_cuda.cu -- RMSNorm: out[i][:] = x[i][:] / sqrt(mean(x[i]^2) + eps) * w[:].
 *
 * One thread block per row. As in the CPU reference, squares are rounded to
 * float and summed in double, the scale is 1 / sqrtf((float)mean + eps), and
 * the output is (x * scale) * w with separate roundings, so results normally
 * agree with the CPU bit for bit (the double sum's order differs).
 */
#include "cuda/cuda_internal.cuh"

#define NORM_THREADS 256

static __global__ void __launch_bounds__(NORM_THREADS)
    rms_norm_kernel(float *out,        /* [rows][d] (may alias x) */
                    const float *x,    /* [rows][d] */
                    const float *w,    /* [d] or NULL */
                    int64_t d, float eps) {
    __shared__ double part[NORM_THREADS / 32];
    __shared__ float scale_sh;
    const int64_t r = blockIdx.x;
    const float *xr = x + r * d;
    float *orow = out + r * d;
    double ss = 0.0;
    for (int64_t i = threadIdx.x; i < d; i += NORM_THREADS) {
        ss += (double)__fmul_rn(xr[i], xr[i]);
    }
    ss = llm__warp_sum_d(ss);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = ss;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0.0;
        for (int k = 0; k < NORM_THREADS / 32; k++) t += part[k];
        scale_sh = __fdiv_rn(1.0f, sqrtf(__fadd_rn((float)(t / (double)d), eps)));
    }
    __syncthreads();
    const float scale = scale_sh;
    for (int64_t i = threadIdx.x; i < d; i += NORM_THREADS) {
        const float v = __fmul_rn(xr[i], scale);
        orow[i] = w ? __fmul_rn(v, w[i]) : v;
    }
}

extern "C" llm_status llm__cuda_rms_norm(llm_backend *be, const llm_tensor *out,
                                         const llm_tensor *x, const llm_tensor *weight, float eps) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    const int64_t rows = llm__cuda_rows(x);
    if (rows > INT32_MAX) {
        return llm__err(LLM_ERR_UNSUPPORTED, "rms_norm: too many rows");
    }
    rms_norm_kernel<<<(unsigned)rows, NORM_THREADS, 0, c->stream>>>(
        (float *)llm__cuda_ptr(out), (const float *)llm__cuda_ptr(x),
        weight ? (const float *)llm__cuda_ptr(weight) : (const float *)NULL, x->ne[0], eps);
    LLM_CU_LAUNCHED("rms_norm kernel");
    return LLM_OK;
}
