/*
 * cuda/quant_cuda.cuh -- PRIVATE: device dequantization of one element of a
 * row, for every known weight type, bit-exact with the reference
 * (src/dtype/dequant.c).
 *
 * Blocks are read byte by byte at the offsets of src/dtype/blocks.h (that
 * header uses C11 _Static_assert and cannot be included from CUDA C++), so
 * these readers work at any alignment, like the CPU reference. Multiplies and
 * adds use the explicitly rounded intrinsics (__fmul_rn, __fadd_rn, ... via
 * llm__mul_rn etc.)
 * because nvcc would otherwise fuse d * q + m into one FMA and change a
 * rounding. check_layouts() (backend_cuda.cu) compares the byte sizes below with
 * llm_dtype_block_bytes() when the backend starts.
 */
#ifndef LLM_RUNTIME_CUDA_QUANT_CUH
#define LLM_RUNTIME_CUDA_QUANT_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "llama/dtype.h"

/* Everything here also compiles for the host, so tests/cuda can check the
 * bit-level decoding against the reference without a GPU
 * (test_cuda_dequant_host.cu). On the host, plain float operations round the
 * same way (ISO C++ mode: no FMA contraction). */
#define LLM_HD static __host__ __device__ __forceinline__
#ifdef __CUDA_ARCH__
#define LLM_UNROLL _Pragma("unroll")
#else
#define LLM_UNROLL /* the host compiler does not know the pragma */
#endif

LLM_HD float llm__mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

LLM_HD float llm__add_rn(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

LLM_HD float llm__sub_rn(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}

LLM_HD float llm__bits_to_float(uint32_t u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

/* Block bytes per type (blocks.h): the element count is 1, 32 or 256. */
#define LLM_CU_B_Q4_0 18
#define LLM_CU_B_Q4_1 20
#define LLM_CU_B_Q5_0 22
#define LLM_CU_B_Q5_1 24
#define LLM_CU_B_Q8_0 34
#define LLM_CU_B_Q8_1 36
#define LLM_CU_B_Q2_K 84
#define LLM_CU_B_Q3_K 110
#define LLM_CU_B_Q4_K 144
#define LLM_CU_B_Q5_K 176
#define LLM_CU_B_Q6_K 210
#define LLM_CU_B_Q8_K 292

LLM_HD float llm__ld_half(const uint8_t *p) {
    uint16_t h = (uint16_t)(p[0] | (p[1] << 8));
    return __half2float(__ushort_as_half(h));
}

LLM_HD float llm__ld_bf16(const uint8_t *p) {
    uint32_t h = (uint32_t)(p[0] | (p[1] << 8));
    return llm__bits_to_float(h << 16);
}

LLM_HD float llm__ld_f32(const uint8_t *p) {
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return llm__bits_to_float(u);
}

LLM_HD uint32_t llm__ld_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Low/high nibble packing of the 32-element quants: element i < 16 is the low
 * nibble of qs[i], element i >= 16 the high nibble of qs[i - 16]. */
LLM_HD int llm__nib32(const uint8_t *qs, int i) {
    return i < 16 ? (qs[i] & 15) : (qs[i - 16] >> 4);
}

/* Q4_K/Q5_K 6-bit scale and min of sub-block j (0..7). */
LLM_HD void llm__q4k_sm(const uint8_t *s, int j, int *sc, int *mn) {
    if (j < 4) {
        *sc = s[j] & 63;
        *mn = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
        *mn = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* Element j (0-based, < row length) of a row of type T starting at `row`. */
template <int T>
LLM_HD float llm__deq(const uint8_t *row, int64_t j) {
    if (T == LLM_DTYPE_F32) {
        return llm__ld_f32(row + 4 * j);
    } else if (T == LLM_DTYPE_F16) {
        return llm__ld_half(row + 2 * j);
    } else if (T == LLM_DTYPE_BF16) {
        return llm__ld_bf16(row + 2 * j);
    } else if (T == LLM_DTYPE_Q4_0) {
        const uint8_t *b = row + (j / 32) * LLM_CU_B_Q4_0;
        const int i = (int)(j % 32);
        return llm__mul_rn(llm__ld_half(b), (float)(llm__nib32(b + 2, i) - 8));
    } else if (T == LLM_DTYPE_Q4_1) {
        const uint8_t *b = row + (j / 32) * LLM_CU_B_Q4_1;
        const int i = (int)(j % 32);
        return llm__add_rn(llm__mul_rn(llm__ld_half(b), (float)llm__nib32(b + 4, i)), llm__ld_half(b + 2));
    } else if (T == LLM_DTYPE_Q5_0) {
        const uint8_t *b = row + (j / 32) * LLM_CU_B_Q5_0;
        const int i = (int)(j % 32);
        const int q = llm__nib32(b + 6, i) | (int)((llm__ld_le32(b + 2) >> i) & 1u) << 4;
        return llm__mul_rn(llm__ld_half(b), (float)(q - 16));
    } else if (T == LLM_DTYPE_Q5_1) {
        const uint8_t *b = row + (j / 32) * LLM_CU_B_Q5_1;
        const int i = (int)(j % 32);
        const int q = llm__nib32(b + 8, i) | (int)((llm__ld_le32(b + 4) >> i) & 1u) << 4;
        return llm__add_rn(llm__mul_rn(llm__ld_half(b), (float)q), llm__ld_half(b + 2));
    } else if (T == LLM_DTYPE_Q8_0) {
        const uint8_t *b = row + (j / 32) * LLM_CU_B_Q8_0;
        return llm__mul_rn((float)(int8_t)b[2 + j % 32], llm__ld_half(b));
    } else if (T == LLM_DTYPE_Q8_1) {
        const uint8_t *b = row + (j / 32) * LLM_CU_B_Q8_1;
        return llm__mul_rn((float)(int8_t)b[4 + j % 32], llm__ld_half(b));
    } else if (T == LLM_DTYPE_Q2_K) {
        /* scales[16] @0, qs[64] @16, d @80, dmin @82 */
        const uint8_t *b = row + (j / 256) * LLM_CU_B_Q2_K;
        const int i = (int)(j % 256), h = i / 128, s = (i % 128) / 32, bi = i % 32;
        const int q = (b[16 + 32 * h + bi] >> (2 * s)) & 3;
        const int sc = b[i / 16];
        const float dl = llm__mul_rn(llm__ld_half(b + 80), (float)(sc & 15));
        const float ml = llm__mul_rn(llm__ld_half(b + 82), (float)(sc >> 4));
        return llm__sub_rn(llm__mul_rn(dl, (float)q), ml);
    } else if (T == LLM_DTYPE_Q3_K) {
        /* hmask[32] @0, qs[64] @32, scales[12] @96, d @108 */
        const uint8_t *b = row + (j / 256) * LLM_CU_B_Q3_K;
        const int i = (int)(j % 256), h = i / 128, s = (i % 128) / 32, bi = i % 32, sj = i / 16;
        const uint8_t *scl = b + 96;
        const int lo = sj < 8 ? (scl[sj] & 15) : (scl[sj - 8] >> 4);
        const int hi = (scl[8 + sj % 4] >> (2 * (sj / 4))) & 3;
        const float dl = llm__mul_rn(llm__ld_half(b + 108), (float)((lo | hi << 4) - 32));
        const int low = (b[32 + 32 * h + bi] >> (2 * s)) & 3;
        const int high = (b[bi] >> (i / 32)) & 1;
        return llm__mul_rn(dl, (float)(low - (high ? 0 : 4)));
    } else if (T == LLM_DTYPE_Q4_K) {
        /* d @0, dmin @2, scales[12] @4, qs[128] @16 */
        const uint8_t *b = row + (j / 256) * LLM_CU_B_Q4_K;
        const int i = (int)(j % 256), sj = i / 32, bi = i % 32;
        int sc, mn;
        llm__q4k_sm(b + 4, sj, &sc, &mn);
        const int q = (b[16 + 32 * (sj / 2) + bi] >> (4 * (sj % 2))) & 15;
        const float dj = llm__mul_rn(llm__ld_half(b), (float)sc);
        const float mj = llm__mul_rn(llm__ld_half(b + 2), (float)mn);
        return llm__sub_rn(llm__mul_rn(dj, (float)q), mj);
    } else if (T == LLM_DTYPE_Q5_K) {
        /* d @0, dmin @2, scales[12] @4, qh[32] @16, qs[128] @48 */
        const uint8_t *b = row + (j / 256) * LLM_CU_B_Q5_K;
        const int i = (int)(j % 256), sj = i / 32, bi = i % 32;
        int sc, mn;
        llm__q4k_sm(b + 4, sj, &sc, &mn);
        const int lo = (b[48 + 32 * (sj / 2) + bi] >> (4 * (sj % 2))) & 15;
        const int q = lo | ((b[16 + bi] >> sj) & 1) << 4;
        const float dj = llm__mul_rn(llm__ld_half(b), (float)sc);
        const float mj = llm__mul_rn(llm__ld_half(b + 2), (float)mn);
        return llm__sub_rn(llm__mul_rn(dj, (float)q), mj);
    } else if (T == LLM_DTYPE_Q6_K) {
        /* ql[128] @0, qh[64] @128, scales[16] (int8) @192, d @208 */
        const uint8_t *b = row + (j / 256) * LLM_CU_B_Q6_K;
        const int i = (int)(j % 256), h = i / 128, r = i % 128;
        const int low = (b[64 * h + r % 64] >> (4 * (r / 64))) & 15;
        const int high = (b[128 + 32 * h + r % 32] >> (2 * (r / 32))) & 3;
        const float dj = llm__mul_rn(llm__ld_half(b + 208), (float)(int8_t)b[192 + i / 16]);
        return llm__mul_rn(dj, (float)((low | high << 4) - 32));
    } else { /* LLM_DTYPE_Q8_K: d (float) @0, qs[256] @4, bsums @260 */
        const uint8_t *b = row + (j / 256) * LLM_CU_B_Q8_K;
        return llm__mul_rn(llm__ld_f32(b), (float)(int8_t)b[4 + j % 256]);
    }
}

/*
 * Mat-vec lane layout (matmul_cuda.cu): a row is cut into groups of 32
 * elements; 4 lanes share a group and lane part p (0..3) takes elements
 * 4p..4p+3 and 16+4p..16+4p+3, which for the nibble-packed quants are exactly
 * the low and high nibbles of bytes 4p..4p+3. A warp covers 8 groups per step,
 * i.e. contiguous weight bytes. llm__deq8 writes the 8 weights of (group g,
 * part p) in that order (fused d * q + m, so not bit-exact with llm__deq);
 * for the float types elements at or past K read as 0. Types: F32, F16, BF16,
 * Q4_0, Q4_1, Q5_0, Q5_1, Q8_0.
 */
template <int T>
LLM_HD void llm__deq8(const uint8_t *row, int64_t g, int p, int64_t K, float w[8]) {
    const int o = 4 * p;
    if (T == LLM_DTYPE_F32 || T == LLM_DTYPE_F16 || T == LLM_DTYPE_BF16) {
LLM_UNROLL
        for (int k = 0; k < 8; k++) {
            const int64_t e = g * 32 + o + (k < 4 ? k : 12 + k);
            float v = 0.0f;
            if (e < K) {
                if (T == LLM_DTYPE_F32) {
                    v = ((const float *)row)[e];
                } else if (T == LLM_DTYPE_F16) {
                    v = __half2float(((const __half *)row)[e]);
                } else {
                    v = __bfloat162float(((const __nv_bfloat16 *)row)[e]);
                }
            }
            w[k] = v;
        }
    } else if (T == LLM_DTYPE_Q4_0 || T == LLM_DTYPE_Q4_1) {
        const uint8_t *b = row + g * (T == LLM_DTYPE_Q4_0 ? LLM_CU_B_Q4_0 : LLM_CU_B_Q4_1);
        const float d = llm__ld_half(b);
        const float m = T == LLM_DTYPE_Q4_0 ? -8.0f * d : llm__ld_half(b + 2);
        const uint8_t *qs = b + (T == LLM_DTYPE_Q4_0 ? 2 : 4);
LLM_UNROLL
        for (int k = 0; k < 4; k++) {
            const int q = qs[o + k];
            w[k] = fmaf(d, (float)(q & 15), m);
            w[4 + k] = fmaf(d, (float)(q >> 4), m);
        }
    } else if (T == LLM_DTYPE_Q5_0 || T == LLM_DTYPE_Q5_1) {
        const uint8_t *b = row + g * (T == LLM_DTYPE_Q5_0 ? LLM_CU_B_Q5_0 : LLM_CU_B_Q5_1);
        const float d = llm__ld_half(b);
        const float m = T == LLM_DTYPE_Q5_0 ? -16.0f * d : llm__ld_half(b + 2);
        const uint32_t qh = llm__ld_le32(b + (T == LLM_DTYPE_Q5_0 ? 2 : 4));
        const uint8_t *qs = b + (T == LLM_DTYPE_Q5_0 ? 6 : 8);
LLM_UNROLL
        for (int k = 0; k < 4; k++) {
            const int q = qs[o + k];
            const int lo = (q & 15) | (int)((qh >> (o + k)) & 1u) << 4;
            const int hi = (q >> 4) | (int)((qh >> (16 + o + k)) & 1u) << 4;
            w[k] = fmaf(d, (float)lo, m);
            w[4 + k] = fmaf(d, (float)hi, m);
        }
    } else { /* Q8_0 */
        const uint8_t *b = row + g * LLM_CU_B_Q8_0;
        const float d = llm__ld_half(b);
LLM_UNROLL
        for (int k = 0; k < 4; k++) {
            w[k] = d * (float)(int8_t)b[2 + o + k];
            w[4 + k] = d * (float)(int8_t)b[2 + 16 + o + k];
        }
    }
}

/* Expands `X(type)` once per known type; used to dispatch a runtime llm_dtype
 * to a template instantiation. */
#define LLM_CU_FOR_EACH_TYPE(X)                                                                    \
    X(LLM_DTYPE_F32) X(LLM_DTYPE_F16) X(LLM_DTYPE_BF16) X(LLM_DTYPE_Q4_0) X(LLM_DTYPE_Q4_1)       \
    X(LLM_DTYPE_Q5_0) X(LLM_DTYPE_Q5_1) X(LLM_DTYPE_Q8_0) X(LLM_DTYPE_Q8_1) X(LLM_DTYPE_Q2_K)     \
    X(LLM_DTYPE_Q3_K) X(LLM_DTYPE_Q4_K) X(LLM_DTYPE_Q5_K) X(LLM_DTYPE_Q6_K) X(LLM_DTYPE_Q8_K)


/* ------------------------------------------- 8-bit activations (decode) -- */

/*
 * The CPU backend multiplies Q4_0/Q5_0/Q8_0 weights with activations
 * quantized to Q8_0, and Q4_1/Q5_1 weights with Q8_1, summing integers per
 * block of 32 (cpu/kernels/ref.c). The decode mat-vec does the same so its
 * block sums are identical to the CPU's; only the order of the float sum over
 * blocks differs. Quantized activations live in our own layout: q int8
 * [n][K] (4-byte aligned), d and s float [n][K/32] holding the half-rounded
 * values of the Q8_0/Q8_1 fields.
 */

/* Signed 4 x int8 dot product plus c (__dp4a on the device). */
LLM_HD int llm__dp4a(int a, int b, int c) {
#ifdef __CUDA_ARCH__
    return __dp4a(a, b, c);
#else
    for (int k = 0; k < 4; k++) {
        c += (int)(int8_t)(uint8_t)((uint32_t)a >> (8 * k)) *
             (int)(int8_t)(uint8_t)((uint32_t)b >> (8 * k));
    }
    return c;
#endif
}

/* One element of the reference Q8_0/Q8_1 quantizer (dtype/quant.c) given its
 * block's amax: d = amax / 127, id = 1 / d (0 if d is 0), q = roundf(x * id)
 * (half away from zero). */
LLM_HD int llm__q8_elem(float x, float amax) {
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    return (int)roundf(llm__mul_rn(x, id));
}

/* The block's d as stored (rounded to half) and the Q8_1 s = half(sum * d). */
LLM_HD float llm__q8_d(float amax) {
    return __half2float(__float2half_rn(amax / 127.0f));
}
LLM_HD float llm__q8_s(int sum, float amax) {
    return __half2float(__float2half_rn(llm__mul_rn((float)sum, amax / 127.0f)));
}

/* Weight types with an 8-bit-activation mat-vec. */
#define LLM_CU_IS_Q8DOT(T)                                                                         \
    ((T) == LLM_DTYPE_Q4_0 || (T) == LLM_DTYPE_Q4_1 || (T) == LLM_DTYPE_Q5_0 ||                    \
     (T) == LLM_DTYPE_Q5_1 || (T) == LLM_DTYPE_Q8_0)

/*
 * Integer part of one block's dot product taken by lane part p (0..3) in the
 * mat-vec layout: weight elements 4p..4p+3 and 16+4p..16+4p+3 of block `blk`
 * times the int8 activations y (the block's 32 quants, 4-byte aligned). The
 * four parts add up to the CPU's sumi (offsets -8 / -16 included for
 * Q4_0 / Q5_0).
 */
template <int T>
LLM_HD int llm__q8dot_part(const uint8_t *blk, int p, const int8_t *y) {
    const int o = 4 * p;
#ifdef __CUDA_ARCH__
    const int ylo = *(const int *)(y + o), yhi = *(const int *)(y + 16 + o);
#else
    int ylo, yhi;
    memcpy(&ylo, y + o, 4);
    memcpy(&yhi, y + 16 + o, 4);
#endif
    if (T == LLM_DTYPE_Q8_0) {
        const int wlo = (int)llm__ld_le32(blk + 2 + o), whi = (int)llm__ld_le32(blk + 2 + 16 + o);
        return llm__dp4a(wlo, ylo, llm__dp4a(whi, yhi, 0));
    }
    const int qoff = T == LLM_DTYPE_Q4_0 ? 2 : T == LLM_DTYPE_Q4_1 ? 4 : T == LLM_DTYPE_Q5_0 ? 6 : 8;
    const uint32_t qw = llm__ld_le32(blk + qoff + o);
    uint32_t lo = qw & 0x0F0F0F0Fu, hi = (qw >> 4) & 0x0F0F0F0Fu;
    if (T == LLM_DTYPE_Q5_0 || T == LLM_DTYPE_Q5_1) {
        const uint32_t qh = llm__ld_le32(blk + (T == LLM_DTYPE_Q5_0 ? 2 : 4));
        for (int k = 0; k < 4; k++) {
            lo |= ((qh >> (o + k)) & 1u) << (8 * k + 4);
            hi |= ((qh >> (16 + o + k)) & 1u) << (8 * k + 4);
        }
    }
    int s = llm__dp4a((int)lo, ylo, llm__dp4a((int)hi, yhi, 0));
    if (T == LLM_DTYPE_Q4_0 || T == LLM_DTYPE_Q5_0) {
        const int ysum = llm__dp4a(0x01010101, ylo, llm__dp4a(0x01010101, yhi, 0));
        s -= (T == LLM_DTYPE_Q4_0 ? 8 : 16) * ysum;
    }
    return s;
}

/* A block's float contribution from its integer sum, in the CPU's order:
 * sumi * (dw * dy) for Q4_0/Q5_0/Q8_0, (dw * dy) * sumi + m * s for
 * Q4_1/Q5_1. dy, sy: the activation block's half-rounded d and s. */
template <int T>
LLM_HD float llm__q8dot_scale(const uint8_t *blk, int sumi, float dy, float sy) {
    const float dw = llm__ld_half(blk);
    if (T == LLM_DTYPE_Q4_1 || T == LLM_DTYPE_Q5_1) {
        return llm__add_rn(llm__mul_rn(llm__mul_rn(dw, dy), (float)sumi),
                           llm__mul_rn(llm__ld_half(blk + 2), sy));
    }
    return llm__mul_rn((float)sumi, llm__mul_rn(dw, dy));
}

/* Bytes of one weight block of a Q8-dot type. */
#define LLM_CU_Q8DOT_BYTES(T)                                                                      \
    ((T) == LLM_DTYPE_Q4_0   ? LLM_CU_B_Q4_0                                                       \
     : (T) == LLM_DTYPE_Q4_1 ? LLM_CU_B_Q4_1                                                       \
     : (T) == LLM_DTYPE_Q5_0 ? LLM_CU_B_Q5_0                                                       \
     : (T) == LLM_DTYPE_Q5_1 ? LLM_CU_B_Q5_1                                                       \
                             : LLM_CU_B_Q8_0)

#endif /* LLM_RUNTIME_CUDA_QUANT_CUH */
