/*
 * cuda/attention_cuda.cu -- writing K/V into the paged cache and causal GQA
 * attention reading it back through a block table.
 *
 * Cache layout per layer (as the CPU backend): [n_blocks][n_head_kv]
 * [block_size][head_dim], F16 or F32. Logical position p of a sequence lives
 * in physical block table[p / block_size], slot p % block_size. Positions and
 * the block table arrive as host arrays and are uploaded with the op.
 *
 * Attention: one thread block per (query token, head). Its warps take keys
 * round-robin; a warp computes one score with each lane holding head_dim/32
 * dimensions. The softmax follows the CPU backend step for step (see
 * attention_kernel): q rounded to F16 for an F16 cache, max, expf, a double
 * sum, probabilities rounded to F16 for an F16 cache, F32 value sums. Only
 * the summation order (and expf's last ulp) differs, so results agree with
 * the CPU to float rounding, not bit for bit. A sliding window (n_swa > 0)
 * starts every pass at the query's first visible key, p - n_swa + 1: the
 * keys before it are masked (probability 0) and never read.
 */
#include <cuda_fp16.h>

#include "cuda/cuda_internal.cuh"

#define ATT_WARPS 4
#define ATT_MAX_HD 256 /* head_dim <= 32 * ATT_PER_LANE */
#define ATT_PER_LANE (ATT_MAX_HD / 32)
#define ATT_SCORE_CAP 4096 /* keys whose scores stay in shared memory (16 KiB) */

template <typename C>
static __device__ __forceinline__ float cache_load(const C *p, int64_t i);
template <>
__device__ __forceinline__ float cache_load<float>(const float *p, int64_t i) {
    return p[i];
}
template <>
__device__ __forceinline__ float cache_load<__half>(const __half *p, int64_t i) {
    return __half2float(p[i]);
}

template <typename C>
static __device__ __forceinline__ C cache_store(float v);
template <>
__device__ __forceinline__ float cache_store<float>(float v) {
    return v;
}
template <>
__device__ __forceinline__ __half cache_store<__half>(float v) {
    return __float2half_rn(v);
}

/* ---------------------------------------------------------------- kv_write -- */

/* One thread per element of the [n][n_kv][hd] rows. */
template <typename C>
static __global__ void kv_write_kernel(C *kc, C *vc,                 /* caches */
                                       const float *k, const float *v, /* [n][row] */
                                       const int32_t *pos,           /* [n] */
                                       const int32_t *table,         /* block table */
                                       int64_t n, int64_t n_kv, int64_t hd, int64_t bs) {
    const int64_t row = n_kv * hd, total = n * row;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = e / row, h = e % row / hd, d = e % hd;
        const int64_t p = pos[i];
        const int64_t at = (((int64_t)table[p / bs] * n_kv + h) * bs + p % bs) * hd + d;
        kc[at] = cache_store<C>(k[e]);
        vc[at] = cache_store<C>(v[e]);
    }
}

extern "C" llm_status llm__cuda_kv_write(llm_backend *be, const llm_tensor *k_cache,
                                         const llm_tensor *v_cache, const llm_tensor *k,
                                         const llm_tensor *v, const int32_t *positions,
                                         const int32_t *block_table, int32_t n_table) {
    /* cu_supports admits F16 and F32 caches only (quantized caches are
     * UNSUPPORTED on CUDA, reported by ops.c); K and V must share one. */
    if (k_cache->dtype != v_cache->dtype) {
        return llm__err(LLM_ERR_UNSUPPORTED, "%s: K and V caches of different types are not supported on cuda",
                        "kv_write");
    }
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    const int64_t hd = k_cache->ne[0], bs = k_cache->ne[1], n_kv = k_cache->ne[2];
    const int64_t n = k->ne[2] * k->ne[3];
    const void *srcs[2] = {positions, block_table};
    size_t sizes[2] = {(size_t)n * sizeof(int32_t), (size_t)n_table * sizeof(int32_t)};
    void *dev[2];
    LLM_TRY(llm__cuda_upload(c, 2, srcs, sizes, dev));
    const unsigned grid = llm__cuda_grid(n * n_kv * hd, 256);
    const float *kp = (const float *)llm__cuda_ptr(k), *vp = (const float *)llm__cuda_ptr(v);
    const int32_t *dp = (const int32_t *)dev[0], *dt = (const int32_t *)dev[1];
    if (k_cache->dtype == LLM_DTYPE_F16) {
        kv_write_kernel<__half><<<grid, 256, 0, c->stream>>>(
            (__half *)llm__cuda_ptr(k_cache), (__half *)llm__cuda_ptr(v_cache), kp, vp, dp, dt, n,
            n_kv, hd, bs);
    } else {
        kv_write_kernel<float><<<grid, 256, 0, c->stream>>>(
            (float *)llm__cuda_ptr(k_cache), (float *)llm__cuda_ptr(v_cache), kp, vp, dp, dt, n,
            n_kv, hd, bs);
    }
    LLM_CU_LAUNCHED("kv_write kernel");
    return LLM_OK;
}

/* --------------------------------------------------------------- attention -- */

/* q . k(t) * scale for key t, computed by one warp (every lane gets it). The
 * same code and order in every pass, so a recomputed score is bit-identical. */
template <typename C>
static __device__ __forceinline__ float att_score(const float *qs, const C *kc,
                                                  const int32_t *table, int64_t t, int64_t bs,
                                                  int n_kv, int kvh, int hd, float scale,
                                                  int lane) {
    const int64_t base = (((int64_t)table[t / bs] * n_kv + kvh) * bs + t % bs) * hd;
    float s = 0.0f;
#pragma unroll
    for (int r = 0; r < ATT_PER_LANE; r++) {
        const int d = lane + 32 * r;
        if (d < hd) s = fmaf(qs[d], cache_load<C>(kc, base + d), s);
    }
    return llm__warp_sum(s) * scale;
}

/*
 * Three passes over the keys, each warp taking keys t = warp, warp + 4, ...:
 * (1) the scores' maximum; (2) e_t = expf(s_t - max), summed in double as the
 * CPU does; (3) p_t = e_t * (float)(1 / sum), rounded to F16 when the cache is
 * F16 (exactly as the CPU backend and llama.cpp round the probabilities before
 * the F16 value product), then out = sum_t p_t * v_t. Scores are kept in
 * shared memory when the sequence fits (ATT_SCORE_CAP keys), else recomputed.
 */
template <typename C>
static __global__ void __launch_bounds__(32 * ATT_WARPS)
    attention_kernel(float *out,            /* [n][n_head][hd] */
                     const float *q,        /* [n][n_head][hd] */
                     const C *kc, const C *vc, /* [n_blocks][n_kv][bs][hd] */
                     const int32_t *pos,    /* [n] */
                     const int32_t *table,  /* logical block -> physical block */
                     int n_head, int n_kv, int hd, int64_t bs, float scale,
                     int64_t n_swa) {        /* 0: no sliding window */
    __shared__ float qs[ATT_MAX_HD];
    __shared__ float sc[ATT_SCORE_CAP];     /* scores, then e_t, when len fits */
    __shared__ float wmax[ATT_WARPS];
    __shared__ double wsum[ATT_WARPS];
    __shared__ float wacc[ATT_WARPS][ATT_MAX_HD];
    const int64_t u = blockIdx.x; /* (token, head) pair */
    const int64_t i = u / n_head;
    const int h = (int)(u % n_head), kvh = h / (n_head / n_kv);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const bool f16 = sizeof(C) == 2;

    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
        const float qv = q[u * hd + d];
        /* Same rounding of q as the CPU kernel before its F16 dot. */
        qs[d] = f16 ? __half2float(__float2half_rn(qv)) : qv;
    }
    __syncthreads();

    const int64_t len = (int64_t)pos[i] + 1;
    const int64_t t0 = n_swa > 0 && len > n_swa ? len - n_swa : 0; /* first visible key */
    const bool cached = len - t0 <= ATT_SCORE_CAP;                  /* sc[t - t0] */

    /* (1) maximum */
    float m = -INFINITY;
    for (int64_t t = t0 + warp; t < len; t += ATT_WARPS) {
        const float s = att_score<C>(qs, kc, table, t, bs, n_kv, kvh, hd, scale, lane);
        if (cached && lane == 0) sc[t - t0] = s;
        m = fmaxf(m, s);
    }
    if (lane == 0) wmax[warp] = m;
    __syncthreads();
    float mx = -INFINITY;
    for (int w = 0; w < ATT_WARPS; w++) mx = fmaxf(mx, wmax[w]);

    /* (2) e_t and their sum */
    double sum = 0.0;
    for (int64_t t = t0 + warp; t < len; t += ATT_WARPS) {
        const float s = cached ? sc[t - t0] : att_score<C>(qs, kc, table, t, bs, n_kv, kvh, hd, scale, lane);
        const float e = expf(s - mx);
        sum += (double)e;
        __syncwarp();
        if (cached && lane == 0) sc[t - t0] = e;
    }
    if (lane == 0) wsum[warp] = sum;
    __syncthreads();
    double total = 0.0;
    for (int w = 0; w < ATT_WARPS; w++) total += wsum[w];
    const float inv = (float)(1.0 / total);

    /* (3) weighted sum of the values */
    float acc[ATT_PER_LANE];
#pragma unroll
    for (int r = 0; r < ATT_PER_LANE; r++) acc[r] = 0.0f;
    for (int64_t t = t0 + warp; t < len; t += ATT_WARPS) {
        const float e = cached ? sc[t - t0]
                               : expf(att_score<C>(qs, kc, table, t, bs, n_kv, kvh, hd, scale, lane) - mx);
        float pr = __fmul_rn(e, inv);
        if (f16) pr = __half2float(__float2half_rn(pr));
        const int64_t base = (((int64_t)table[t / bs] * n_kv + kvh) * bs + t % bs) * hd;
#pragma unroll
        for (int r = 0; r < ATT_PER_LANE; r++) {
            const int d = lane + 32 * r;
            if (d < hd) acc[r] = fmaf(pr, cache_load<C>(vc, base + d), acc[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < ATT_PER_LANE; r++) {
        const int d = lane + 32 * r;
        if (d < hd) wacc[warp][d] = acc[r];
    }
    __syncthreads();
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
        float o = 0.0f;
        for (int w = 0; w < ATT_WARPS; w++) o += wacc[w][d];
        out[u * hd + d] = o;
    }
}

extern "C" llm_status llm__cuda_attention(llm_backend *be, const llm_tensor *out,
                                          const llm_tensor *q, const llm_tensor *k_cache,
                                          const llm_tensor *v_cache, const int32_t *positions,
                                          const int32_t *block_table, int32_t n_table,
                                          const llm_attn_params *p) {
    /* cu_supports admits F16 and F32 caches only (quantized caches are
     * UNSUPPORTED on CUDA, reported by ops.c); K and V must share one. */
    if (k_cache->dtype != v_cache->dtype) {
        return llm__err(LLM_ERR_UNSUPPORTED, "%s: K and V caches of different types are not supported on cuda",
                        "attention");
    }
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    const int64_t n = q->ne[2] * q->ne[3], n_head = q->ne[1], hd = q->ne[0];
    const int64_t bs = k_cache->ne[1], n_kv = k_cache->ne[2];
    if (hd > ATT_MAX_HD) {
        return llm__err(LLM_ERR_UNSUPPORTED, "attention: head_dim %lld > %d is not supported on cuda",
                        (long long)hd, ATT_MAX_HD);
    }
    if (n * n_head > INT32_MAX || n_head > INT32_MAX) {
        return llm__err(LLM_ERR_UNSUPPORTED, "attention: too many (token, head) pairs");
    }
    const void *srcs[2] = {positions, block_table};
    size_t sizes[2] = {(size_t)n * sizeof(int32_t), (size_t)n_table * sizeof(int32_t)};
    void *dev[2];
    LLM_TRY(llm__cuda_upload(c, 2, srcs, sizes, dev));
    const unsigned grid = (unsigned)(n * n_head);
    const int32_t *dp = (const int32_t *)dev[0], *dt = (const int32_t *)dev[1];
    float *o = (float *)llm__cuda_ptr(out);
    const float *qp = (const float *)llm__cuda_ptr(q);
    if (k_cache->dtype == LLM_DTYPE_F16) {
        attention_kernel<__half><<<grid, 32 * ATT_WARPS, 0, c->stream>>>(
            o, qp, (const __half *)llm__cuda_ptr(k_cache), (const __half *)llm__cuda_ptr(v_cache),
            dp, dt, (int)n_head, (int)n_kv, (int)hd, bs, p->scale, (int64_t)p->n_swa);
    } else {
        attention_kernel<float><<<grid, 32 * ATT_WARPS, 0, c->stream>>>(
            o, qp, (const float *)llm__cuda_ptr(k_cache), (const float *)llm__cuda_ptr(v_cache),
            dp, dt, (int)n_head, (int)n_kv, (int)hd, bs, p->scale, (int64_t)p->n_swa);
    }
    LLM_CU_LAUNCHED("attention kernel");
    return LLM_OK;
}
