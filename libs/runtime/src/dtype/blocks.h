/*
 * blocks.h -- PRIVATE to llama-runtime: the byte layout of every quantized
 * block, as stored in GGUF files and in memory (little-endian, packed: every
 * struct below has no padding, checked by the static asserts).
 *
 * Conventions used in the comments:
 *   - "half" fields are IEEE binary16 bit patterns (llm_fp16_to_fp32).
 *   - A row is a sequence of blocks; element i of a row is element i % QK of
 *     block i / QK.
 *   - "nibble" packing of the legacy quants: byte j (0..15) of qs holds
 *     element j in its low 4 bits and element j + 16 in its high 4 bits.
 *
 * Blocks may sit at any address inside a mapped file (GGUF aligns tensors,
 * not blocks: a 18-byte Q4_0 block is only 2-byte aligned), so kernels must
 * not assume more alignment than 2 bytes (4 for Q8_K, which is never mapped
 * from a file).
 */
#ifndef LLM_RUNTIME_DTYPE_BLOCKS_H
#define LLM_RUNTIME_DTYPE_BLOCKS_H

#include <stdint.h>

#include "llama/dtype.h"

/* Q4_0: 32 elements, 18 bytes. x[i] = d * (q[i] - 8), q[i] in 0..15.
 * q[i] = i < 16 ? qs[i] & 0x0F : qs[i - 16] >> 4. */
typedef struct llm_block_q4_0 {
    uint16_t d;            /* half: scale */
    uint8_t qs[LLM_QK32 / 2]; /* nibbles, see the packing above */
} llm_block_q4_0;

/* Q4_1: 32 elements, 20 bytes. x[i] = d * q[i] + m, q[i] in 0..15, same
 * nibble packing as Q4_0. */
typedef struct llm_block_q4_1 {
    uint16_t d;            /* half: scale */
    uint16_t m;            /* half: minimum (offset) */
    uint8_t qs[LLM_QK32 / 2]; /* nibbles */
} llm_block_q4_1;

/* Q5_0: 32 elements, 22 bytes. x[i] = d * (q[i] - 16), q[i] in 0..31:
 * low 4 bits from the nibbles as Q4_0, bit 4 is bit i of the little-endian
 * 32-bit word qh. */
typedef struct llm_block_q5_0 {
    uint16_t d;            /* half: scale */
    uint8_t qh[4];         /* bit i (of the LE uint32) = bit 4 of q[i] */
    uint8_t qs[LLM_QK32 / 2]; /* low nibbles */
} llm_block_q5_0;

/* Q5_1: 32 elements, 24 bytes. x[i] = d * q[i] + m, q[i] in 0..31, bits as
 * Q5_0. */
typedef struct llm_block_q5_1 {
    uint16_t d;            /* half: scale */
    uint16_t m;            /* half: minimum */
    uint8_t qh[4];         /* bit 4 of each q, LE uint32 */
    uint8_t qs[LLM_QK32 / 2]; /* low nibbles */
} llm_block_q5_1;

/* Q8_0: 32 elements, 34 bytes. x[i] = d * qs[i]. */
typedef struct llm_block_q8_0 {
    uint16_t d;            /* half: scale (amax / 127 when quantized) */
    int8_t qs[LLM_QK32];   /* quants, -127..127 */
} llm_block_q8_0;

/* Q8_1: 32 elements, 36 bytes: the activation format paired with Q4_1/Q5_1
 * weights. x[i] = d * qs[i]; s = d * sum(qs) lets a dot product with an
 * offset weight type add m * s instead of summing the activations. */
typedef struct llm_block_q8_1 {
    uint16_t d;            /* half: scale (amax / 127) */
    uint16_t s;            /* half: d * (qs[0] + ... + qs[31]) */
    int8_t qs[LLM_QK32];   /* quants, -127..127 */
} llm_block_q8_1;

/* Q2_K: 256 elements in 16 sub-blocks of 16, 84 bytes.
 * Element i: h = i / 128, s = (i % 128) / 32, b = i % 32;
 *   q = (qs[32*h + b] >> (2*s)) & 3, sub-block j = i / 16,
 *   x[i] = (d * (scales[j] & 15)) * q - (dmin * (scales[j] >> 4)). */
typedef struct llm_block_q2_k {
    uint8_t scales[LLM_QK_K / 16]; /* per sub-block: low 4 bits scale, high 4 bits min */
    uint8_t qs[LLM_QK_K / 4];      /* 2-bit quants, 4 per byte, layout above */
    uint16_t d;                    /* half: super-block scale for the scales */
    uint16_t dmin;                 /* half: super-block scale for the mins */
} llm_block_q2_k;

/* Q3_K: 256 elements in 16 sub-blocks of 16, 110 bytes.
 * 6-bit signed sub-block scales: for j in 0..15,
 *   lo = j < 8 ? scales[j] & 15 : scales[j - 8] >> 4,
 *   hi = (scales[8 + j % 4] >> (2 * (j / 4))) & 3,
 *   sc[j] = (lo | hi << 4) - 32.
 * Element i: h = i / 128, s = (i % 128) / 32, b = i % 32;
 *   low = (qs[32*h + b] >> (2*s)) & 3, high bit = (hmask[b] >> (i / 32)) & 1,
 *   q = low - (high ? 0 : 4), x[i] = (d * sc[i / 16]) * q. */
typedef struct llm_block_q3_k {
    uint8_t hmask[LLM_QK_K / 8];   /* high bits: bit (i/32) of byte (i%32) */
    uint8_t qs[LLM_QK_K / 4];      /* low 2 bits, layout above */
    uint8_t scales[12];            /* 16 packed 6-bit scales, layout above */
    uint16_t d;                    /* half: super-block scale */
} llm_block_q3_k;

/* Q4_K: 256 elements in 8 sub-blocks of 32, 144 bytes.
 * 6-bit scales and mins packed in 12 bytes (shared with Q5_K): for j in 0..7,
 *   j < 4: sc = scales[j] & 63,  mn = scales[j + 4] & 63;
 *   j >= 4: sc = (scales[j + 4] & 15) | ((scales[j - 4] >> 6) << 4),
 *           mn = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4).
 * Element i: j = i / 32, b = i % 32, q = (qs[32*(j/2) + b] >> (4*(j%2))) & 15,
 *   x[i] = (d * sc[j]) * q - (dmin * mn[j]). */
typedef struct llm_block_q4_k {
    uint16_t d;                    /* half: super-block scale for the scales */
    uint16_t dmin;                 /* half: super-block scale for the mins */
    uint8_t scales[12];            /* packed 6-bit scales and mins */
    uint8_t qs[LLM_QK_K / 2];      /* 4-bit quants, layout above */
} llm_block_q4_k;

/* Q5_K: 256 elements in 8 sub-blocks of 32, 176 bytes. As Q4_K, plus a fifth
 * bit: q = low | ((qh[i % 32] >> (i / 32)) & 1) << 4. */
typedef struct llm_block_q5_k {
    uint16_t d;                    /* half */
    uint16_t dmin;                 /* half */
    uint8_t scales[12];            /* as Q4_K */
    uint8_t qh[LLM_QK_K / 8];      /* bit 4 of q: bit (i/32) of byte (i%32) */
    uint8_t qs[LLM_QK_K / 2];      /* low 4 bits, as Q4_K */
} llm_block_q5_k;

/* Q6_K: 256 elements in 16 sub-blocks of 16, 210 bytes.
 * Element i: h = i / 128, r = i % 128;
 *   low = (ql[64*h + r % 64] >> (4 * (r / 64))) & 15,
 *   high = (qh[32*h + r % 32] >> (2 * (r / 32))) & 3,
 *   q = (low | high << 4) - 32, x[i] = (d * scales[i / 16]) * q. */
typedef struct llm_block_q6_k {
    uint8_t ql[LLM_QK_K / 2];      /* low 4 bits */
    uint8_t qh[LLM_QK_K / 4];      /* high 2 bits */
    int8_t scales[LLM_QK_K / 16];  /* signed 8-bit sub-block scales */
    uint16_t d;                    /* half: super-block scale */
} llm_block_q6_k;

/* Q8_K: 256 elements, 292 bytes: the activation format paired with K-quant
 * weights (never stored in files). x[i] = d * qs[i]; bsums[j] is the sum of
 * qs[16*j .. 16*j+15], used for the min/offset terms of K-quant dots. */
typedef struct llm_block_q8_k {
    float d;                       /* scale (float, not half) */
    int8_t qs[LLM_QK_K];           /* quants, -128..127 */
    int16_t bsums[LLM_QK_K / 16];  /* per-16 sums of qs */
} llm_block_q8_k;

_Static_assert(sizeof(llm_block_q4_0) == 18, "q4_0 layout");
_Static_assert(sizeof(llm_block_q4_1) == 20, "q4_1 layout");
_Static_assert(sizeof(llm_block_q5_0) == 22, "q5_0 layout");
_Static_assert(sizeof(llm_block_q5_1) == 24, "q5_1 layout");
_Static_assert(sizeof(llm_block_q8_0) == 34, "q8_0 layout");
_Static_assert(sizeof(llm_block_q8_1) == 36, "q8_1 layout");
_Static_assert(sizeof(llm_block_q2_k) == 84, "q2_k layout");
_Static_assert(sizeof(llm_block_q3_k) == 110, "q3_k layout");
_Static_assert(sizeof(llm_block_q4_k) == 144, "q4_k layout");
_Static_assert(sizeof(llm_block_q5_k) == 176, "q5_k layout");
_Static_assert(sizeof(llm_block_q6_k) == 210, "q6_k layout");
_Static_assert(sizeof(llm_block_q8_k) == 292, "q8_k layout");

/* Unpacks the 12-byte Q4_K/Q5_K scale field into sc[8] and mn[8]. */
static inline void llm__q4k_scale_min(const uint8_t scales[12], uint8_t sc[8], uint8_t mn[8]) {
    for (int j = 0; j < 8; j++) {
        if (j < 4) {
            sc[j] = (uint8_t)(scales[j] & 63);
            mn[j] = (uint8_t)(scales[j + 4] & 63);
        } else {
            sc[j] = (uint8_t)((scales[j + 4] & 15) | ((scales[j - 4] >> 6) << 4));
            mn[j] = (uint8_t)((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
        }
    }
}

#endif /* LLM_RUNTIME_DTYPE_BLOCKS_H */
