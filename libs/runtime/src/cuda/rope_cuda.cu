/*
 * cuda/rope_cuda.cu -- rotary position embedding, in place, NORMAL (adjacent
 * pairs) and NEOX (halves) modes, with linear, Llama 3.1 or per-frequency
 * factor scaling.
 *
 * Angles are built exactly as the CPU backend builds them: theta_i =
 * pos * s^i by i successive float multiplications with s = base^(-2/n_dims)
 * (computed once on the host with the same powf), divided by a per-frequency
 * factor (GGUF rope_freqs, or the Llama 3.1 rule, evaluated on the host), then
 * times freq_scale for linear scaling; cos and sin are then multiplied by
 * attn_factor (1 when 0), as the CPU does. The rotation uses separately rounded
 * products, as the CPU's plain C does. Only cosf/sinf may differ by an ulp.
 */
#include <math.h>

#include "cuda/cuda_internal.cuh"
#include "rope_llama3.h" /* the Llama 3.1 rule, shared with cpu/ops_cpu.c */

/* Grid: x over (head, pair) of one token, y over tokens. */
static __global__ void rope_kernel(float *x,               /* [n][n_head][hd] */
                                   const int32_t *pos,     /* [n] */
                                   const float *div,       /* [n_half] or NULL */
                                   int64_t n, int n_head, int hd, int n_half, int neox,
                                   float theta_scale, int linear, float freq_scale,
                                   float mscale) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n_head * n_half) {
        return;
    }
    const int h = idx / n_half, i = idx % n_half;
    for (int64_t t = blockIdx.y; t < n; t += gridDim.y) {
        float theta = (float)pos[t];
        for (int k = 0; k < i; k++) {
            theta = __fmul_rn(theta, theta_scale);
        }
        if (div) {
            theta = __fdiv_rn(theta, div[i]);
        }
        if (linear) {
            theta = __fmul_rn(theta, freq_scale);
        }
        const float cs = __fmul_rn(cosf(theta), mscale), sn = __fmul_rn(sinf(theta), mscale);
        float *v = x + ((int64_t)t * n_head + h) * hd;
        const int i0 = neox ? i : 2 * i, i1 = neox ? i + n_half : 2 * i + 1;
        const float x0 = v[i0], x1 = v[i1];
        v[i0] = __fsub_rn(__fmul_rn(x0, cs), __fmul_rn(x1, sn));
        v[i1] = __fadd_rn(__fmul_rn(x0, sn), __fmul_rn(x1, cs));
    }
}

#define ROPE_MAX_HALF 4096

extern "C" llm_status llm__cuda_rope(llm_backend *be, const llm_tensor *x,
                                     const int32_t *positions, const llm_rope_params *p) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    const int64_t n = x->ne[2], n_head = x->ne[1], hd = x->ne[0];
    const int n_half = p->n_dims / 2;
    if (n_half > ROPE_MAX_HALF || n_head * n_half > INT32_MAX) {
        return llm__err(LLM_ERR_UNSUPPORTED, "rope: sizes too large for cuda (n %lld, n_dims %d)",
                        (long long)n, p->n_dims);
    }
    float div[ROPE_MAX_HALF];
    const int has_div = p->freq_factors != NULL || p->scaling == LLM_ROPE_SCALE_LLAMA3;
    if (has_div) {
        for (int i = 0; i < n_half; i++) {
            div[i] = p->freq_factors ? p->freq_factors[i] : llm__rope_llama3_factor(p, i);
        }
    }
    const void *srcs[2] = {positions, div};
    size_t sizes[2] = {(size_t)n * sizeof(int32_t), has_div ? (size_t)n_half * sizeof(float) : 0};
    void *dev[2];
    LLM_TRY(llm__cuda_upload(c, 2, srcs, sizes, dev));
    const float theta_scale = powf(p->freq_base, -2.0f / (float)p->n_dims);
    const int units = (int)(n_head * n_half);
    dim3 grid((unsigned)((units + 127) / 128), (unsigned)(n < 65535 ? n : 65535));
    rope_kernel<<<grid, 128, 0, c->stream>>>((float *)llm__cuda_ptr(x), (const int32_t *)dev[0],
                                             has_div ? (const float *)dev[1] : (const float *)NULL, n,
                                             (int)n_head, (int)hd, n_half,
                                             p->mode == LLM_ROPE_MODE_NEOX,
                                             theta_scale, p->scaling == LLM_ROPE_SCALE_LINEAR,
                                             p->freq_scale,
                                             p->attn_factor != 0.0f ? p->attn_factor : 1.0f);
    LLM_CU_LAUNCHED("rope kernel");
    return LLM_OK;
}
