/*
 * cuda/elementwise_cuda.cu -- swiglu, add, mul, scale: one thread per element
 * (grid-stride), F32, contiguous; out may alias an input since every element
 * is read and written by the same thread.
 *
 * Rounding matches the CPU backend's scalar loops: the operations are single
 * IEEE roundings (no FMA contraction possible in these forms); swiglu's expf
 * may differ from glibc's by an ulp or two.
 *
 * geglu follows the CPU's (llama.cpp's) F16 table rule without the table:
 * gelu_tanh of gate rounded to F16, evaluated in F32 with the same fused
 * inner sum, rounded to F16 (cpu/gelu_table.c). tanhf's last ulp may differ
 * from glibc's, which moves an F16 result by one F16 ulp at most, rarely.
 */
#include <cuda_fp16.h>

#include "cuda/cuda_internal.cuh"

enum { EW_ADD, EW_MUL, EW_SWIGLU, EW_SCALE, EW_GEGLU };

/* gelu_tanh(x) * g by the F16 table rule (see above). */
static __device__ __forceinline__ float geglu1(float x, float g) {
    if (x <= -10.0f) return 0.0f;
    if (x >= 10.0f) return __fmul_rn(x, g);
    const float f = __half2float(__float2half_rn(x));
    const float inner = __fmaf_rn(__fmul_rn(0.044715f, f), f, 1.0f);
    const float t = tanhf(__fmul_rn(__fmul_rn(0.79788456080286535587989211986876f, f), inner));
    const float ge = __fmul_rn(__fmul_rn(0.5f, f), __fadd_rn(1.0f, t));
    return __fmul_rn(__half2float(__float2half_rn(ge)), g);
}

template <int KIND>
static __global__ void ew_kernel(float *out,       /* [n] */
                                 const float *a,   /* [n] */
                                 const float *b,   /* [n], or [bd] repeated (add), NULL for scale */
                                 float s, int64_t n, int64_t bd) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const float x = a[i];
        if (KIND == EW_ADD) {
            out[i] = x + b[bd ? i % bd : i];
        } else if (KIND == EW_MUL) {
            out[i] = x * b[bd ? i % bd : i];
        } else if (KIND == EW_SWIGLU) {
            out[i] = __fmul_rn(__fdiv_rn(x, __fadd_rn(1.0f, expf(-x))), b[i]);
        } else if (KIND == EW_GEGLU) {
            out[i] = geglu1(x, b[i]);
        } else {
            out[i] = x * s;
        }
    }
}

template <int KIND>
static llm_status ew_run(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                         const llm_tensor *b, float s) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    const int64_t n = out->ne[0] * llm__cuda_rows(out);
    /* add or mul of a single row b [1][d] (validated in ops.c): a bias, a scale. */
    const int64_t bd = b && llm__cuda_rows(b) != llm__cuda_rows(out) ? b->ne[0] : 0;
    ew_kernel<KIND><<<llm__cuda_grid(n, 256), 256, 0, c->stream>>>(
        (float *)llm__cuda_ptr(out), (const float *)llm__cuda_ptr(a),
        b ? (const float *)llm__cuda_ptr(b) : (const float *)NULL, s, n, bd);
    LLM_CU_LAUNCHED("elementwise kernel");
    return LLM_OK;
}

extern "C" llm_status llm__cuda_add(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                                    const llm_tensor *b) {
    return ew_run<EW_ADD>(be, out, a, b, 0.0f);
}

extern "C" llm_status llm__cuda_mul(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                                    const llm_tensor *b) {
    return ew_run<EW_MUL>(be, out, a, b, 0.0f);
}

extern "C" llm_status llm__cuda_swiglu(llm_backend *be, const llm_tensor *out,
                                       const llm_tensor *gate, const llm_tensor *up) {
    return ew_run<EW_SWIGLU>(be, out, gate, up, 0.0f);
}

extern "C" llm_status llm__cuda_geglu(llm_backend *be, const llm_tensor *out,
                                      const llm_tensor *gate, const llm_tensor *up) {
    return ew_run<EW_GEGLU>(be, out, gate, up, 0.0f);
}

extern "C" llm_status llm__cuda_scale(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                                      float s) {
    return ew_run<EW_SCALE>(be, out, x, NULL, s);
}
