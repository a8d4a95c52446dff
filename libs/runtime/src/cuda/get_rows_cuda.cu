/*
 * cuda/get_rows_cuda.cu -- embedding lookup: out[i][:] = dequant(w[ids[i]][:]),
 * for every known weight type, bit-exact with the CPU reference dequantizer.
 */
#include "cuda/cuda_internal.cuh"
#include "cuda/quant_cuda.cuh"

/* One thread per output element (grid-stride). */
template <int T>
static __global__ void get_rows_kernel(float *out,          /* [n][d] */
                                       const uint8_t *w,    /* [n_rows][w_row bytes] */
                                       size_t w_row,
                                       const int32_t *ids,  /* [n] */
                                       int64_t n, int64_t d) {
    const int64_t total = n * d;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = e / d, j = e % d;
        out[e] = llm__deq<T>(w + (size_t)ids[i] * w_row, j);
    }
}

extern "C" llm_status llm__cuda_get_rows(llm_backend *be, const llm_tensor *out,
                                         const llm_tensor *w, const int32_t *ids, int64_t n) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    const void *srcs[1] = {ids};
    size_t sizes[1] = {(size_t)n * sizeof(int32_t)};
    void *dev[1];
    LLM_TRY(llm__cuda_upload(c, 1, srcs, sizes, dev));
    const int64_t d = w->ne[0];
    const unsigned grid = llm__cuda_grid(n * d, 256);
    float *o = (float *)llm__cuda_ptr(out);
    const uint8_t *wp = (const uint8_t *)llm__cuda_ptr(w);
    switch (w->dtype) {
#define LLM_CU_CASE(T)                                                                             \
    case T:                                                                                        \
        get_rows_kernel<T><<<grid, 256, 0, c->stream>>>(o, wp, w->nb[1], (const int32_t *)dev[0], \
                                                        n, d);                                     \
        break;
        LLM_CU_FOR_EACH_TYPE(LLM_CU_CASE)
#undef LLM_CU_CASE
    default:
        return llm__err(LLM_ERR_UNSUPPORTED, "get_rows: type %s is not supported on cuda",
                        llm_dtype_name(w->dtype));
    }
    LLM_CU_LAUNCHED("get_rows kernel");
    return LLM_OK;
}
