/*
 * cuda/matmul_cuda.cu -- out[n][M] = x[n][K] . w[M][K]^T for every known
 * weight type.
 *
 * Two paths:
 *  - Decode (n <= MV_MAX_COLS): mat-vec kernels, one warp per weight row,
 *    reading the weights once for all n activation rows (decode is bound by
 *    weight bandwidth). Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 weights: x is quantized to
 *    Q8_0/Q8_1 exactly as the CPU backend does, and each block's integer sum
 *    (dp4a) equals the CPU's; F32/F16/BF16 weights: x stays F32.
 *  - Everything else (prefill batches, K-quants): weights are dequantized to
 *    F16 in chunks of rows into scratch, x is rounded to F16, and cuBLAS
 *    multiplies with F32 accumulation (cublasGemmEx, tensor cores where the
 *    GPU has them). F16 weights are used in place; BF16 weights pair with BF16
 *    activations (as on the CPU); F32 weights use a plain FP32 GEMM (no TF32).
 *
 * Numerics: the 8-bit mat-vec matches the CPU up to the order of the float
 * sum over blocks. The GEMM path differs from the CPU (which quantizes x to
 * 8 bits): x is F16-rounded, which is at least as accurate; F16 activations
 * overflow above 65504, as in llama.cpp's cuBLAS path.
 */
#include <cuda_bf16.h>

#include "cuda/cuda_internal.cuh"
#include "cuda/quant_cuda.cuh"

#define MV_MAX_COLS 4
#define MV_WARPS 4
/* Dequantized-weight chunk for the GEMM path: bounds scratch at 64 MiB of F16
 * whatever the matrix size (a 128k-vocab output matrix would need 1 GiB). */
#define GEMM_CHUNK_ELEMS (32LL * 1024 * 1024)

/* ---------------------------------------------------------------- mat-vec -- */

template <int T>
static __global__ void __launch_bounds__(32 * MV_WARPS)
    matvec_kernel(float *out,        /* [nc][M] */
                  const uint8_t *w,  /* [M][w_row bytes] */
                  size_t w_row,
                  const float *x,    /* [nc][K] */
                  int64_t K, int64_t M, int nc) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t m = (int64_t)blockIdx.x * MV_WARPS + warp;
    if (m >= M) {
        return; /* whole warps leave together; no block-level sync below */
    }
    const uint8_t *row = w + (size_t)m * w_row;
    const int p = lane & 3;
    const int64_t ng = (K + 31) / 32;
    float acc[MV_MAX_COLS];
#pragma unroll
    for (int c = 0; c < MV_MAX_COLS; c++) acc[c] = 0.0f;
    for (int64_t g = lane >> 2; g < ng; g += 8) {
        float wv[8];
        llm__deq8<T>(row, g, p, K, wv);
        const int64_t e0 = g * 32 + 4 * p, e1 = e0 + 16;
#pragma unroll
        for (int c = 0; c < MV_MAX_COLS; c++) {
            if (c < nc) {
                const float *xc = x + c * K;
                float s = 0.0f;
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    if (e0 + k < K) s = fmaf(wv[k], xc[e0 + k], s);
                    if (e1 + k < K) s = fmaf(wv[4 + k], xc[e1 + k], s);
                }
                acc[c] += s;
            }
        }
    }
#pragma unroll
    for (int c = 0; c < MV_MAX_COLS; c++) {
        if (c < nc) {
            const float v = llm__warp_sum(acc[c]);
            if (lane == 0) out[c * M + m] = v;
        }
    }
}

/* ------------------------------------------ mat-vec, 8-bit activations -- */

/* One warp per block of 32 activations: q = roundf(x * (1 / d)), d = amax / 127,
 * exactly the reference quantizer; d and s stored half-rounded as floats. */
static __global__ void quantize_q8_kernel(int8_t *q,        /* [n * K] */
                                          float *d,         /* [n * K / 32] */
                                          float *s,         /* [n * K / 32] */
                                          const float *x,   /* [n * K] */
                                          int64_t n_blocks) {
    const int lane = threadIdx.x & 31;
    const int64_t wid = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t nw = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t b = wid; b < n_blocks; b += nw) {
        const float v = x[b * 32 + lane];
        const float amax = llm__warp_max(fabsf(v));
        const int qi = llm__q8_elem(v, amax);
        q[b * 32 + lane] = (int8_t)qi;
        int sum = qi;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
        if (lane == 0) {
            d[b] = llm__q8_d(amax);
            s[b] = llm__q8_s(sum, amax);
        }
    }
}

/*
 * Same lane layout as matvec_kernel; the 4 lanes of a group add their integer
 * parts into the block's sumi, and the group's first lane adds the block's
 * float term. Every lane runs every step (inactive groups contribute 0) so the
 * shuffles always see the full warp.
 */
template <int T>
static __global__ void __launch_bounds__(32 * MV_WARPS)
    matvec_q8_kernel(float *out,          /* [nc][M] */
                     const uint8_t *w,    /* [M][w_row bytes] */
                     size_t w_row,
                     const int8_t *xq,    /* [nc][K] */
                     const float *xd,     /* [nc][K / 32] */
                     const float *xs,     /* [nc][K / 32] */
                     int64_t K, int64_t M, int nc) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t m = (int64_t)blockIdx.x * MV_WARPS + warp;
    if (m >= M) {
        return;
    }
    const uint8_t *row = w + (size_t)m * w_row;
    const int p = lane & 3;
    const int64_t nb = K / 32;
    float acc[MV_MAX_COLS];
#pragma unroll
    for (int c = 0; c < MV_MAX_COLS; c++) acc[c] = 0.0f;
    for (int64_t g0 = 0; g0 < nb; g0 += 8) {
        const int64_t g = g0 + (lane >> 2);
        const bool active = g < nb;
        const uint8_t *blk = row + (active ? g : 0) * LLM_CU_Q8DOT_BYTES(T);
#pragma unroll
        for (int c = 0; c < MV_MAX_COLS; c++) {
            if (c < nc) {
                int sumi = active ? llm__q8dot_part<T>(blk, p, xq + c * K + g * 32) : 0;
                sumi += __shfl_xor_sync(0xffffffffu, sumi, 1);
                sumi += __shfl_xor_sync(0xffffffffu, sumi, 2);
                if (active && p == 0) {
                    const int64_t yb = c * nb + g;
                    acc[c] = __fadd_rn(acc[c], llm__q8dot_scale<T>(blk, sumi, xd[yb], xs[yb]));
                }
            }
        }
    }
#pragma unroll
    for (int c = 0; c < MV_MAX_COLS; c++) {
        if (c < nc) {
            const float v = llm__warp_sum(acc[c]);
            if (lane == 0) out[c * M + m] = v;
        }
    }
}

static llm_status matvec_q8(llm__cuda *c, float *out, const float *x, const llm_tensor *w,
                            int64_t n, int64_t K, int64_t M) {
    const int64_t nblk = n * K / 32;
    const size_t qbytes = ((size_t)(n * K) + 255) & ~(size_t)255;
    const size_t fbytes = ((size_t)nblk * sizeof(float) + 255) & ~(size_t)255;
    void *scr = NULL;
    LLM_TRY(llm__cuda_scratch(c, qbytes + 2 * fbytes, &scr));
    int8_t *xq = (int8_t *)scr;
    float *xd = (float *)((char *)scr + qbytes), *xs = (float *)((char *)scr + qbytes + fbytes);
    quantize_q8_kernel<<<llm__cuda_grid(nblk * 32, 256), 256, 0, c->stream>>>(xq, xd, xs, x, nblk);
    LLM_CU_LAUNCHED("matmul activation quantize kernel");
    const uint8_t *wp = (const uint8_t *)llm__cuda_ptr(w);
    const unsigned grid = (unsigned)((M + MV_WARPS - 1) / MV_WARPS);
    switch (w->dtype) {
#define MQ_CASE(T)                                                                                 \
    case T:                                                                                        \
        matvec_q8_kernel<T><<<grid, 32 * MV_WARPS, 0, c->stream>>>(out, wp, w->nb[1], xq, xd, xs,  \
                                                                   K, M, (int)n);                  \
        break;
        MQ_CASE(LLM_DTYPE_Q4_0)
        MQ_CASE(LLM_DTYPE_Q4_1)
        MQ_CASE(LLM_DTYPE_Q5_0)
        MQ_CASE(LLM_DTYPE_Q5_1)
        MQ_CASE(LLM_DTYPE_Q8_0)
#undef MQ_CASE
    default:
        return llm__err(LLM_ERR_INTERNAL, "matmul: no 8-bit mat-vec kernel for %s",
                        llm_dtype_name(w->dtype));
    }
    LLM_CU_LAUNCHED("matmul 8-bit mat-vec kernel");
    return LLM_OK;
}

static int mv_type(llm_dtype t) {
    switch (t) {
    case LLM_DTYPE_F32: case LLM_DTYPE_F16: case LLM_DTYPE_BF16: case LLM_DTYPE_Q4_0:
    case LLM_DTYPE_Q4_1: case LLM_DTYPE_Q5_0: case LLM_DTYPE_Q5_1: case LLM_DTYPE_Q8_0:
        return 1;
    default:
        return 0;
    }
}

static llm_status matvec(llm__cuda *c, float *out, const float *x, const llm_tensor *w, int64_t n,
                         int64_t K, int64_t M) {
    const uint8_t *wp = (const uint8_t *)llm__cuda_ptr(w);
    const unsigned grid = (unsigned)((M + MV_WARPS - 1) / MV_WARPS);
    if ((M + MV_WARPS - 1) / MV_WARPS > INT32_MAX) {
        return llm__err(LLM_ERR_UNSUPPORTED, "matmul: %lld rows is too many", (long long)M);
    }
    switch (w->dtype) {
#define MV_CASE(T)                                                                                 \
    case T:                                                                                        \
        matvec_kernel<T><<<grid, 32 * MV_WARPS, 0, c->stream>>>(out, wp, w->nb[1], x, K, M,        \
                                                                (int)n);                           \
        break;
        MV_CASE(LLM_DTYPE_F32)
        MV_CASE(LLM_DTYPE_F16)
        MV_CASE(LLM_DTYPE_BF16)
        MV_CASE(LLM_DTYPE_Q4_0)
        MV_CASE(LLM_DTYPE_Q4_1)
        MV_CASE(LLM_DTYPE_Q5_0)
        MV_CASE(LLM_DTYPE_Q5_1)
        MV_CASE(LLM_DTYPE_Q8_0)
#undef MV_CASE
    default:
        return llm__err(LLM_ERR_INTERNAL, "matmul: no mat-vec kernel for %s",
                        llm_dtype_name(w->dtype));
    }
    LLM_CU_LAUNCHED("matmul mat-vec kernel");
    return LLM_OK;
}

/* ------------------------------------------------------------------- GEMM -- */

/* dst[m][k] = (half) dequant(w[m0 + m][k]) for m < rows. */
template <int T>
static __global__ void dequant_f16_kernel(__half *dst,       /* [rows][K] */
                                          const uint8_t *w,  /* [.][w_row bytes] */
                                          size_t w_row, int64_t rows, int64_t K) {
    const int64_t total = rows * K;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t m = e / K, k = e % K;
        dst[e] = __float2half_rn(llm__deq<T>(w + (size_t)m * w_row, k));
    }
}

static __global__ void f32_to_f16_kernel(__half *dst, const float *src, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        dst[i] = __float2half_rn(src[i]);
    }
}

static __global__ void f32_to_bf16_kernel(__nv_bfloat16 *dst, const float *src, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        dst[i] = __float2bfloat16_rn(src[i]);
    }
}

static llm_status dequant_rows(llm__cuda *c, __half *dst, const uint8_t *w, size_t w_row,
                               llm_dtype t, int64_t rows, int64_t K) {
    const unsigned grid = llm__cuda_grid(rows * K, 256);
    switch (t) {
#define DQ_CASE(T)                                                                                 \
    case T:                                                                                        \
        dequant_f16_kernel<T><<<grid, 256, 0, c->stream>>>(dst, w, w_row, rows, K);                \
        break;
        LLM_CU_FOR_EACH_TYPE(DQ_CASE)
#undef DQ_CASE
    default:
        return llm__err(LLM_ERR_UNSUPPORTED, "matmul: type %s is not supported on cuda",
                        llm_dtype_name(t));
    }
    LLM_CU_LAUNCHED("matmul dequantize kernel");
    return LLM_OK;
}

/* Column-major view for cuBLAS: out^T (M x n, ldc M) = W (K x M, lda)^T . x^T (K x n, ldb K). */
static llm_status gemm(llm__cuda *c, float *out, int64_t ldc, const void *A, cudaDataType at,
                       int64_t lda, const void *B, cudaDataType bt, int64_t m, int64_t n,
                       int64_t K) {
    const float one = 1.0f, zero = 0.0f;
    return llm__cublas_check(cublasGemmEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)m, (int)n, (int)K,
                                          &one, A, at, (int)lda, B, bt, (int)K, &zero, out,
                                          CUDA_R_32F, (int)ldc, CUBLAS_COMPUTE_32F,
                                          CUBLAS_GEMM_DEFAULT),
                             "matmul cublasGemmEx");
}

static llm_status gemm_path(llm__cuda *c, float *out, const float *x, const llm_tensor *w,
                            int64_t n, int64_t K, int64_t M) {
    const llm_dtype t = w->dtype;
    const uint8_t *wp = (const uint8_t *)llm__cuda_ptr(w);
    if (M > INT32_MAX || K > INT32_MAX || n > INT32_MAX ||
        (t != LLM_DTYPE_F32 && n * K > INT32_MAX)) {
        return llm__err(LLM_ERR_UNSUPPORTED, "matmul: sizes exceed cuBLAS's int range");
    }
    if (t == LLM_DTYPE_F32) {
        return gemm(c, out, M, wp, CUDA_R_32F, (int64_t)(w->nb[1] / 4), x, CUDA_R_32F, M, n, K);
    }
    /* Scratch: [n][K] low-precision activations, then (quantized w) a chunk of
     * dequantized weight rows. */
    const size_t xa = ((size_t)(n * K) * 2 + 255) & ~(size_t)255;
    /* BF16 GEMMs need sm_80; older GPUs take BF16 weights through F16. */
    const int direct = t == LLM_DTYPE_F16 || (t == LLM_DTYPE_BF16 && c->cc >= 80);
    int64_t chunk = 0;
    if (!direct) {
        chunk = GEMM_CHUNK_ELEMS / K;
        chunk = chunk < 1 ? 1 : chunk > M ? M : chunk;
    }
    void *scr = NULL;
    LLM_TRY(llm__cuda_scratch(c, xa + (size_t)(chunk * K) * 2, &scr));
    const unsigned xg = llm__cuda_grid(n * K, 256);
    if (t == LLM_DTYPE_BF16 && c->cc >= 80) {
        __nv_bfloat16 *xb = (__nv_bfloat16 *)scr;
        f32_to_bf16_kernel<<<xg, 256, 0, c->stream>>>(xb, x, n * K);
        LLM_CU_LAUNCHED("matmul f32->bf16 kernel");
        return gemm(c, out, M, wp, CUDA_R_16BF, (int64_t)(w->nb[1] / 2), xb, CUDA_R_16BF, M, n, K);
    }
    __half *xh = (__half *)scr;
    f32_to_f16_kernel<<<xg, 256, 0, c->stream>>>(xh, x, n * K);
    LLM_CU_LAUNCHED("matmul f32->f16 kernel");
    if (t == LLM_DTYPE_F16) {
        return gemm(c, out, M, wp, CUDA_R_16F, (int64_t)(w->nb[1] / 2), xh, CUDA_R_16F, M, n, K);
    }
    __half *wh = (__half *)((char *)scr + xa);
    for (int64_t m0 = 0; m0 < M; m0 += chunk) {
        const int64_t rows = M - m0 < chunk ? M - m0 : chunk;
        LLM_TRY(dequant_rows(c, wh, wp + (size_t)m0 * w->nb[1], w->nb[1], t, rows, K));
        LLM_TRY(gemm(c, out + m0, M, wh, CUDA_R_16F, K, xh, CUDA_R_16F, rows, n, K));
    }
    return LLM_OK;
}

/* ------------------------------------------------------------------ entry -- */

extern "C" llm_status llm__cuda_matmul(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                                       const llm_tensor *w) {
    llm__cuda *c = llm__cuda_of(be);
    LLM_TRY(llm__cuda_enter(c));
    const llm_dtype t = w->dtype;
    const int64_t n = llm__cuda_rows(x), K = x->ne[0], M = w->ne[1];
    /* Float weights are read with typed loads (cuBLAS needs element alignment
     * too); quantized blocks are read byte by byte and may sit anywhere. */
    const size_t es = t == LLM_DTYPE_F32 ? 4 : (t == LLM_DTYPE_F16 || t == LLM_DTYPE_BF16) ? 2 : 1;
    if ((((uintptr_t)llm__cuda_ptr(w)) | w->nb[1]) % es != 0) {
        return llm__err(LLM_ERR_UNSUPPORTED, "matmul: %s weights at offset %zu (row %zu bytes) are "
                        "not %zu-byte aligned", llm_dtype_name(t), w->offset, w->nb[1], es);
    }
    float *o = (float *)llm__cuda_ptr(out);
    const float *xp = (const float *)llm__cuda_ptr(x);
    if (n <= MV_MAX_COLS && LLM_CU_IS_Q8DOT(t)) {
        return matvec_q8(c, o, xp, w, n, K, M);
    }
    if (n <= MV_MAX_COLS && mv_type(t)) {
        return matvec(c, o, xp, w, n, K, M);
    }
    return gemm_path(c, o, xp, w, n, K, M);
}
