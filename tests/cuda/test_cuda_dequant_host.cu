/*
 * test_cuda_dequant_host.cu -- the CUDA backend's bit-level block decoding
 * (libs/runtime/src/cuda/quant_cuda.cuh), compiled for and run on the HOST,
 * against the reference dequantizer (llm_dtype_dequantize_row). Needs no GPU,
 * so it runs on every CUDA build: the byte offsets, nibble/bit packing and
 * rounding order of every type are checked even where no device exists.
 *
 * llm__deq (get_rows, GEMM path) must be bit-identical to the reference for
 * every element of every known type; llm__deq8 (mat-vec kernels: fused
 * d * q + m) must equal llm__deq within one float rounding (2^-23 relative).
 *
 * The 8-bit decode path (Q4_0/Q4_1/Q5_0/Q5_1/Q8_0): the device quantizer's
 * per-element formulas must reproduce the reference Q8_0/Q8_1 blocks
 * bit for bit, and the packed dp4a block sums, scaled and added in block
 * order, must give exactly the scalar CPU backend's matmul result.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/quant_cuda.cuh"
#include "cuda_pair.h"

template <int T>
static void check_type(uint64_t seed) {
    const llm_dtype t = (llm_dtype)T;
    const int64_t bs = (int64_t)llm_dtype_block_size(t);
    const int64_t k = bs == 1 ? 70 : bs * 3, rows = 5;
    size_t nbytes = 0;
    uint8_t *w = cu_random_weights(t, k, rows, seed, &nbytes);
    const size_t row = nbytes / (size_t)rows;
    float *ref = (float *)malloc(sizeof(float) * (size_t)k);
    float *got = (float *)malloc(sizeof(float) * (size_t)k);
    for (int64_t r = 0; r < rows; r++) {
        const uint8_t *rp = w + (size_t)r * row;
        cr_assert_eq(llm_dtype_dequantize_row(t, rp, ref, (size_t)k), LLM_OK);
        for (int64_t j = 0; j < k; j++) got[j] = llm__deq<T>(rp, j);
        for (int64_t j = 0; j < k; j++) {
            cr_assert(memcmp(&got[j], &ref[j], sizeof(float)) == 0,
                      "%s row %lld element %lld: device decoder %.9g, reference %.9g",
                      llm_dtype_name(t), (long long)r, (long long)j, (double)got[j],
                      (double)ref[j]);
        }
        constexpr bool mv = T == LLM_DTYPE_F32 || T == LLM_DTYPE_F16 || T == LLM_DTYPE_BF16 ||
                        T == LLM_DTYPE_Q4_0 || T == LLM_DTYPE_Q4_1 || T == LLM_DTYPE_Q5_0 ||
                        T == LLM_DTYPE_Q5_1 || T == LLM_DTYPE_Q8_0;
        if constexpr (mv) {
            /* Walk the mat-vec layout: group g, part p -> elements 32g+4p+i and
             * 32g+16+4p+i (zero past k for the float types). */
            for (int64_t g = 0; g < (k + 31) / 32; g++) {
                for (int p = 0; p < 4; p++) {
                    float v[8];
                    llm__deq8<T>(rp, g, p, k, v);
                    for (int i = 0; i < 8; i++) {
                        const int64_t e = g * 32 + 4 * p + (i < 4 ? i : 12 + i);
                        const float want = e < k ? ref[e] : 0.0f;
                        cr_assert(fabsf(v[i] - want) <= 1.2e-7f * fabsf(want) + 1e-30f,
                                  "%s row %lld: mat-vec decoder gives %.9g for element %lld, "
                                  "reference %.9g", llm_dtype_name(t), (long long)r, (double)v[i],
                                  (long long)e, (double)want);
                    }
                }
            }
        }
    }
    free(ref);
    free(got);
    free(w);
}

Test(cuda_dequant_host, every_type_matches_reference) {
    uint64_t seed = 1;
#define CHECK_TYPE(T) check_type<T>(seed++);
    LLM_CU_FOR_EACH_TYPE(CHECK_TYPE)
#undef CHECK_TYPE
}

template <int T>
static void check_q8dot(llm_backend *cpu, uint64_t seed) {
    const llm_dtype t = (llm_dtype)T;
    const llm_dtype at = (T == LLM_DTYPE_Q4_1 || T == LLM_DTYPE_Q5_1) ? LLM_DTYPE_Q8_1 : LLM_DTYPE_Q8_0;
    const int64_t k = 96 * 2, m = 7, nb = k / 32;
    size_t wbytes = 0;
    uint8_t *w = cu_random_weights(t, k, m, seed, &wbytes);
    const size_t row = wbytes / (size_t)m;
    float x[192];
    uint64_t st = seed + 99;
    for (int64_t i = 0; i < k; i++) x[i] = cu_rand_float(&st, -3.0f, 3.0f);
    x[5] = 0.0f;
    for (int i = 32; i < 64; i++) x[i] = 0.0f; /* an all-zero block: d = 0 */
    /* Reference activation blocks vs the device quantizer's formulas. */
    uint8_t ref[nb * 36];
    cr_assert_eq(llm_dtype_quantize_row(at, x, ref, (size_t)k), LLM_OK);
    const size_t ab = llm_dtype_block_bytes(at), qo = at == LLM_DTYPE_Q8_1 ? 4 : 2;
    int8_t xq[192];
    float xd[6], xs[6];
    for (int64_t b = 0; b < nb; b++) {
        float amax = 0.0f;
        for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(x[b * 32 + i]));
        int sum = 0;
        for (int i = 0; i < 32; i++) {
            xq[b * 32 + i] = (int8_t)llm__q8_elem(x[b * 32 + i], amax);
            sum += xq[b * 32 + i];
            cr_assert_eq(xq[b * 32 + i], (int8_t)ref[b * ab + qo + i], "%s block %lld elem %d",
                         llm_dtype_name(at), (long long)b, i);
        }
        xd[b] = llm__q8_d(amax);
        xs[b] = llm__q8_s(sum, amax);
        uint16_t h;
        memcpy(&h, ref + b * ab, 2);
        cr_assert(xd[b] == llm_fp16_to_fp32(h), "d of block %lld", (long long)b);
        if (at == LLM_DTYPE_Q8_1) {
            memcpy(&h, ref + b * ab + 2, 2);
            cr_assert(xs[b] == llm_fp16_to_fp32(h), "s of block %lld", (long long)b);
        }
    }
    /* The kernel's arithmetic, in block order, vs the scalar CPU matmul. */
    llm_buffer *bw = NULL, *bx = NULL, *bo = NULL;
    cr_assert_eq(llm_buffer_wrap_host(cpu, w, wbytes, &bw), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(cpu, sizeof x, &bx), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(cpu, sizeof(float) * (size_t)m, &bo), LLM_OK);
    cr_assert_eq(llm_buffer_write(bx, 0, x, sizeof x), LLM_OK);
    llm_tensor wt = llm_tensor_2d(bw, 0, t, k, m), xt = llm_tensor_2d(bx, 0, LLM_DTYPE_F32, k, 1);
    llm_tensor ot = llm_tensor_2d(bo, 0, LLM_DTYPE_F32, m, 1);
    cr_assert_eq(llm_op_matmul(cpu, &ot, &xt, &wt), LLM_OK, "%s", llm_runtime_last_error());
    float want[7];
    cr_assert_eq(llm_buffer_read(bo, 0, want, sizeof want), LLM_OK);
    for (int64_t r = 0; r < m; r++) {
        float acc = 0.0f;
        for (int64_t g = 0; g < nb; g++) {
            const uint8_t *blk = w + (size_t)r * row + (size_t)g * LLM_CU_Q8DOT_BYTES(T);
            int sumi = 0;
            for (int p = 0; p < 4; p++) sumi += llm__q8dot_part<T>(blk, p, xq + g * 32);
            acc = acc + llm__q8dot_scale<T>(blk, sumi, xd[g], xs[g]);
        }
        cr_assert(memcmp(&acc, &want[r], sizeof acc) == 0,
                  "%s row %lld: 8-bit mat-vec arithmetic %.9g, scalar CPU %.9g", llm_dtype_name(t),
                  (long long)r, (double)acc, (double)want[r]);
    }
    llm_buffer_free(bw);
    llm_buffer_free(bx);
    llm_buffer_free(bo);
    free(w);
}

Test(cuda_dequant_host, q8_matvec_arithmetic_matches_scalar_cpu) {
    llm_backend_params bp = llm_backend_default_params();
    bp.kernels = LLM_KERNELS_SCALAR;
    bp.n_threads = 1;
    llm_backend *cpu = NULL;
    cr_assert_eq(llm_backend_create("cpu", &bp, &cpu), LLM_OK);
    check_q8dot<LLM_DTYPE_Q4_0>(cpu, 11);
    check_q8dot<LLM_DTYPE_Q4_1>(cpu, 12);
    check_q8dot<LLM_DTYPE_Q5_0>(cpu, 13);
    check_q8dot<LLM_DTYPE_Q5_1>(cpu, 14);
    check_q8dot<LLM_DTYPE_Q8_0>(cpu, 15);
    llm_backend_free(cpu);
}
