/*
 * cuda/random_cuda.cu -- device-side random fills with cuRAND (Philox4x32-10),
 * used by the CUDA tests to generate inputs on the GPU: the same seed gives
 * the same numbers on every GPU, and the test copies them to the CPU backend
 * so both backends see identical inputs.
 */
#include <curand.h>

#include "cuda/cuda_internal.cuh"

static llm_status curand_check(curandStatus_t s, const char *what) {
    if (s == CURAND_STATUS_SUCCESS) {
        return LLM_OK;
    }
    return llm__err(s == CURAND_STATUS_ALLOCATION_FAILED ? LLM_ERR_NO_MEMORY : LLM_ERR_BACKEND,
                    "cuda: %s: cuRAND status %d", what, (int)s);
}

/* u in (0, 1] (cuRAND's range) -> lo + (hi - lo) * (1 - u), clamped to
 * [lo, hi] against the rounding of hi - lo. */
static __global__ void affine_kernel(float *x, int64_t n, float lo, float hi) {
    const float span = hi - lo;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        x[i] = fminf(fmaxf(lo + span * (1.0f - x[i]), lo), hi);
    }
}

void llm__cuda_rng_free(llm__cuda *c) {
    if (c->rng) {
        curandDestroyGenerator((curandGenerator_t)c->rng);
        c->rng = NULL;
    }
}

extern "C" llm_status llm__cuda_fill_uniform(llm_buffer *buf, size_t offset, size_t n, float lo,
                                             float hi, uint64_t seed) {
    if (!buf || !buf->be || strcmp(buf->be->iface->name, "cuda") != 0) {
        return llm__err(LLM_ERR_INVALID_ARG, "fill_uniform: not a cuda buffer");
    }
    if (buf->wrapped || offset % 4 != 0 || offset > buf->size || n > (buf->size - offset) / 4) {
        return llm__err(LLM_ERR_INVALID_ARG, "fill_uniform: range [%zu, +%zu floats) does not fit",
                        offset, n);
    }
    if (n == 0) {
        return LLM_OK;
    }
    llm__cuda *c = llm__cuda_of(buf->be);
    LLM_TRY(llm__cuda_enter(c));
    if (!c->rng) {
        curandGenerator_t g;
        LLM_TRY(curand_check(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10),
                             "curandCreateGenerator"));
        c->rng = g;
        LLM_TRY(curand_check(curandSetStream(g, c->stream), "curandSetStream"));
    }
    curandGenerator_t g = (curandGenerator_t)c->rng;
    LLM_TRY(curand_check(curandSetPseudoRandomGeneratorSeed(g, seed), "curandSetSeed"));
    LLM_TRY(curand_check(curandSetGeneratorOffset(g, 0), "curandSetGeneratorOffset"));
    float *p = (float *)((char *)buf->data + offset);
    LLM_TRY(curand_check(curandGenerateUniform(g, p, n), "curandGenerateUniform"));
    affine_kernel<<<llm__cuda_grid((int64_t)n, 256), 256, 0, c->stream>>>(p, (int64_t)n, lo, hi);
    LLM_CU_LAUNCHED("fill_uniform kernel");
    return LLM_OK;
}
