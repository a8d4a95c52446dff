/*
 * llama/dtype.h -- weight and activation element types: names, block
 * layouts, sizes, scalar conversions and the reference (scalar, slow,
 * obvious) dequantizers and quantizers.
 *
 * The numbering is GGUF's (ggml_type), so a tensor type read from a GGUF file
 * converts to llm_dtype by a range check (llm_dtype_is_known) and a cast.
 * Quantized types store a row as a sequence of fixed-size blocks: a block
 * holds llm_dtype_block_size(t) elements in llm_dtype_block_bytes(t) bytes.
 * The byte layout of every block is documented in the runtime's private
 * header src/dtype/blocks.h.
 *
 *     size_t nbytes;
 *     if (llm_dtype_row_size(LLM_DTYPE_Q4_1, n_embd, &nbytes) != LLM_OK) ...;
 *     float row[576];                                   // [n_embd]
 *     llm_dtype_dequantize_row(LLM_DTYPE_Q4_1, src, row, 576);
 *
 * These reference routines are the ground truth that the SIMD and CUDA
 * kernels are tested against; they are bit-exact with the `gguf` Python
 * package's gguf.quants (tests/models/test_dtype.c checks committed goldens).
 * Every function here is pure, thread-safe and allocation-free.
 */
#ifndef LLAMA_DTYPE_H
#define LLAMA_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "llama/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types, numbered as GGUF/ggml number them. Values not listed here
 * (the IQ types, the integer types, ...) are valid GGUF but unsupported by
 * llm: llm_dtype_is_known() returns 0 for them. */
typedef enum llm_dtype {
    LLM_DTYPE_F32 = 0,
    LLM_DTYPE_F16 = 1,
    LLM_DTYPE_Q4_0 = 2,
    LLM_DTYPE_Q4_1 = 3,
    LLM_DTYPE_Q5_0 = 6,
    LLM_DTYPE_Q5_1 = 7,
    LLM_DTYPE_Q8_0 = 8,
    LLM_DTYPE_Q8_1 = 9,   /* activation type for Q4_1/Q5_1 dot products */
    LLM_DTYPE_Q2_K = 10,
    LLM_DTYPE_Q3_K = 11,
    LLM_DTYPE_Q4_K = 12,
    LLM_DTYPE_Q5_K = 13,
    LLM_DTYPE_Q6_K = 14,
    LLM_DTYPE_Q8_K = 15,  /* activation type for K-quant dot products */
    LLM_DTYPE_BF16 = 30,
    LLM_DTYPE_END_ = 31   /* one past the largest value; not a type */
} llm_dtype;

/* Elements per block for the 32-element legacy quants and the 256-element
 * K-quants (the "super-block"). */
#define LLM_QK32 32
#define LLM_QK_K 256

/* Non-zero if the integer t is one of the llm_dtype values above (excluding
 * LLM_DTYPE_END_). Use it to vet a type read from a file before casting. */
int llm_dtype_is_known(int t);

/* The canonical upper-case name ("F32", "Q4_K", "BF16"), or NULL if t is not
 * a known type. The string is static. */
const char *llm_dtype_name(llm_dtype t);

/* Elements per block: 1 for F32/F16/BF16, 32 for Q4_0..Q8_1, 256 for the
 * K-quants. 0 if t is unknown. */
size_t llm_dtype_block_size(llm_dtype t);

/* Bytes per block (e.g. 4 for F32, 20 for Q4_1, 144 for Q4_K). 0 if t is
 * unknown. Note: Q8_1 is 36 bytes (fp16 d and s), as in ggml; the `gguf`
 * Python package still lists an older 40-byte layout that no file uses. */
size_t llm_dtype_block_bytes(llm_dtype t);

/* Byte size of a row of n_elements elements of type t, written to *out_bytes.
 * Returns LLM_OK; LLM_ERR_UNSUPPORTED if t is unknown; LLM_ERR_BAD_FORMAT if
 * n_elements is not a multiple of the block size; LLM_ERR_INVALID_ARG if
 * out_bytes is NULL or the size does not fit in size_t (overflow-checked, so
 * callers may pass sizes straight from a file). *out_bytes is untouched on
 * error. */
llm_status llm_dtype_row_size(llm_dtype t, uint64_t n_elements, size_t *out_bytes);

/* IEEE half (binary16) <-> float. fp32->fp16 rounds to nearest, ties to even,
 * overflows to infinity, keeps subnormals, and keeps NaN a NaN. */
float llm_fp16_to_fp32(uint16_t h);
uint16_t llm_fp32_to_fp16(float f);

/* bfloat16 <-> float. fp32->bf16 rounds to nearest even; a NaN becomes a quiet
 * NaN (same rule as ggml and gguf.quants). bf16->fp32 is exact. */
float llm_bf16_to_fp32(uint16_t h);
uint16_t llm_fp32_to_bf16(float f);

/* Reference dequantization: converts n elements of type t starting at src
 * (a row of whole blocks, any alignment) into dst (float[n]).
 * Supported for every known type. Returns LLM_OK; LLM_ERR_UNSUPPORTED if t is
 * unknown; LLM_ERR_INVALID_ARG if src/dst is NULL (with n > 0) or n is not a
 * multiple of the block size. dst is untouched on error. */
llm_status llm_dtype_dequantize_row(llm_dtype t, const void *src, float *dst, size_t n);

/* Reference quantization: converts n floats at src into type t at dst
 * (llm_dtype_row_size(t, n) bytes, any alignment).
 * Supported for F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 (bit-exact
 * with gguf.quants and ggml's quantize_row_*_ref), Q8_1 (d = amax/127, s = d * sum of the quants, as ggml) and
 * Q8_K (d = 1/iscale with iscale = -127/max, bsums = sums of 16 quants, as
 * ggml). Returns LLM_OK; LLM_ERR_UNSUPPORTED for any other type;
 * LLM_ERR_INVALID_ARG for NULL pointers (with n > 0) or n not a multiple of
 * the block size. Inputs should be finite. */
llm_status llm_dtype_quantize_row(llm_dtype t, const float *src, void *dst, size_t n);

/* Non-zero if llm_dtype_quantize_row supports t. */
int llm_dtype_can_quantize(llm_dtype t);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_DTYPE_H */
