/*
 * llama/runtime.h -- compute backends, device buffers, tensors and eager ops.
 *
 * A backend (CPU today, CUDA later) is an opaque handle; behind it sits a
 * private table of function pointers, so model code written against the ops
 * below runs unchanged on any backend. Memory lives in opaque buffers; a tensor
 * is a small value struct (type, shape, strides, buffer, offset) that never
 * exposes a data pointer: data moves in and out with llm_buffer_write/read.
 *
 *     llm_backend_params bp = llm_backend_default_params();
 *     llm_backend *be = NULL;
 *     if (llm_backend_create("cpu", &bp, &be) != LLM_OK)
 *         fprintf(stderr, "%s\n", llm_runtime_last_error());
 *     llm_buffer *buf = NULL;
 *     llm_buffer_alloc(be, 3 * 4 * sizeof(float), &buf);
 *     llm_tensor x = llm_tensor_2d(buf, 0, LLM_DTYPE_F32, 4, 3);  // [3][4]
 *     llm_buffer_write(buf, 0, host_x, sizeof(float) * 12);
 *     llm_op_rms_norm(be, &x, &x, NULL, 1e-5f);                     // in place
 *     llm_buffer_read(buf, 0, host_x, sizeof(float) * 12);
 *     llm_buffer_free(buf);
 *     llm_backend_free(be);
 *
 * Shapes follow the GGUF convention: ne[0] is the innermost (contiguous)
 * dimension. A matrix written [rows][cols] in a comment has ne[0] = cols.
 *
 * Threads: a backend runs one op at a time with its own worker threads; calls
 * on the same backend (ops, buffer transfers) must not overlap in time. Use
 * one backend per calling thread for concurrent work. Results of the CPU
 * backend do not depend on its thread count (bit for bit).
 *
 * Errors: every fallible call returns an llm_status and keeps a message,
 * readable on the same thread with llm_runtime_last_error(). The library never
 * prints, exits or aborts. Ops are eager: when an op returns on the CPU backend
 * its output is written (other backends may queue; llm_backend_synchronize
 * waits). Int32 arguments such as token ids, positions and block tables are
 * host arrays owned by the caller and only read during the call.
 */
#ifndef LLAMA_RUNTIME_H
#define LLAMA_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "llama/dtype.h"
#include "llama/rope.h"
#include "llama/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string, e.g. "0.1.0". */
const char *llm_runtime_version(void);

/* The text of the last error raised by this library on the calling thread
 * ("" if none). The pointer stays valid until the next failing call on the
 * same thread. */
const char *llm_runtime_last_error(void);

/* ---------------------------------------------------------------- types -- */

typedef struct llm_backend llm_backend; /* a compute device with its own threads/streams */
typedef struct llm_buffer llm_buffer;   /* a block of memory owned by (or visible to) a backend */

/* A view of up to 4 dimensions inside a buffer. Plain value: copy it freely.
 * nb[i] is the byte stride of dimension i; for block-quantized types nb[0] is
 * the size of one block and ne[0] must be a multiple of the block length. */
typedef struct llm_tensor {
    llm_dtype dtype;    /* element type (llama/dtype.h) */
    int64_t ne[4];      /* elements per dimension, ne[0] innermost; unused dims are 1 */
    size_t nb[4];       /* byte strides */
    llm_buffer *buffer; /* where the data lives (not owned) */
    size_t offset;      /* byte offset of element [0][0][0][0] in buffer */
} llm_tensor;

/* Builds a contiguous tensor view [ne3][ne2][ne1][ne0] starting at `offset`.
 * Returns a tensor with buffer NULL if dtype is unknown or ne0 is not a multiple
 * of the type's block length. */
llm_tensor llm_tensor_4d(llm_buffer *buf, size_t offset, llm_dtype dtype,
                         int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
static inline llm_tensor llm_tensor_2d(llm_buffer *buf, size_t offset, llm_dtype dtype,
                                       int64_t ne0, int64_t ne1) {
    return llm_tensor_4d(buf, offset, dtype, ne0, ne1, 1, 1);
}
/* Bytes spanned by a contiguous tensor (ne3*nb[3]). */
size_t llm_tensor_nbytes(const llm_tensor *t);
/* View of rows [first, first + n) of the outermost non-unit dimension of a
 * 2-D tensor (dimension 1): same strides, shifted offset, ne[1] = n. */
llm_tensor llm_tensor_rows(const llm_tensor *t, int64_t first, int64_t n);

/* -------------------------------------------------------------- backend -- */

typedef enum llm_op {
    LLM_OP_GET_ROWS = 0,
    LLM_OP_MATMUL,
    LLM_OP_RMS_NORM,
    LLM_OP_ROPE,
    LLM_OP_SWIGLU,
    LLM_OP_ADD,
    LLM_OP_MUL,
    LLM_OP_SCALE,
    LLM_OP_SOFTMAX,
    LLM_OP_KV_WRITE,
    LLM_OP_ATTENTION,
    LLM_OP_ARGMAX,
    LLM_OP_GEGLU,
    /* Encoder ops (BERT family), llama/runtime.h "Encoder ops" below. */
    LLM_OP_LAYER_NORM,
    LLM_OP_GELU,
    LLM_OP_ATTENTION_FULL,
    LLM_OP_MATMUL_INVARIANT, /* llm_op_matmul_invariant */
    /* Recurrent (linear-attention) ops, "Recurrent ops" below. */
    LLM_OP_UNARY,
    LLM_OP_SSM_CONV,
    LLM_OP_GATED_DELTA,
    /* Mixture-of-experts ops, llama/runtime.h "Mixture of experts" below. */
    LLM_OP_MATMUL_ID,
    LLM_OP_MOE_TOPK,
    LLM_OP_MOE_SUM,
    LLM_OP_COUNT
} llm_op;

/* Name of an op class ("matmul", ...). */
const char *llm_op_name(llm_op op);

/* Which kernels the CPU backend may use. Every selection gives the same
 * bits; the capped ones run this CPU as an older one would (to measure or
 * test those kernels here). With AUTO, the environment variable
 * LLM_CPU_KERNELS (auto, avx2, avx-vnni or scalar) caps it the same way for
 * programs that have no option of their own; any other value makes
 * llm_backend_create fail with LLM_ERR_INVALID_ARG. */
typedef enum llm_kernels {
    LLM_KERNELS_AUTO = 0,     /* the fastest the CPU supports (checked at run time) */
    LLM_KERNELS_SCALAR = 1,   /* plain C reference kernels only */
    LLM_KERNELS_AVX2 = 2,     /* AVX2 + FMA + F16C at most (no AVX-VNNI, no AVX-512) */
    LLM_KERNELS_AVX_VNNI = 3  /* ... plus AVX-VNNI (256-bit), no AVX-512 */
} llm_kernels;

/* Called after each op when set: op class, the output tensor (may be NULL for
 * ops without a tensor output), wall time in ns and bytes read + written. */
typedef void (*llm_op_hook)(void *user, llm_op op, const llm_tensor *out,
                            uint64_t ns, uint64_t bytes);

typedef struct llm_backend_params {
    int n_threads;         /* CPU threads in total; <= 0: number of physical cores */
    llm_kernels kernels;   /* CPU kernel selection (default AUTO) */
    int device;            /* device ordinal for GPU backends (default 0) */
    llm_op_hook hook;      /* optional per-op callback (default NULL) */
    void *hook_user;       /* passed to hook */
} llm_backend_params;

/* Per op class counters, accumulated since creation or the last reset. */
typedef struct llm_op_stats {
    uint64_t calls;
    uint64_t ns;
    uint64_t bytes;
} llm_op_stats;

/* Default parameters: n_threads 0 (physical cores), AUTO kernels, device 0. */
llm_backend_params llm_backend_default_params(void);

/* Creates a backend by name: "cpu", "cuda" or "auto" (CUDA when it was built
 * and a device exists, else CPU). params may be NULL for defaults.
 * Returns LLM_OK and sets *out; LLM_ERR_NOT_FOUND for an unknown name or a
 * backend not built in; LLM_ERR_NO_MEMORY; LLM_ERR_BACKEND if the device
 * failed. On failure *out is NULL. The caller frees with llm_backend_free. */
llm_status llm_backend_create(const char *name, const llm_backend_params *params,
                              llm_backend **out);
/* Frees the backend and its threads. Buffers must be freed first. NULL is harmless. */
void llm_backend_free(llm_backend *be);
/* "cpu", "cuda". */
const char *llm_backend_name(const llm_backend *be);
/* Threads the CPU backend uses (1 for GPU backends). */
int llm_backend_n_threads(const llm_backend *be);
/* A description of the kernels selected, e.g. "avx2+fma+f16c" or "scalar". */
const char *llm_backend_kernels(const llm_backend *be);
/* Non-zero if the backend implements `op` for tensors of type `dtype` (for
 * matmul and get_rows: the weight type; for other ops: their input type). */
int llm_backend_supports(const llm_backend *be, llm_op op, llm_dtype dtype);
/* Waits until all queued work finished (no-op on CPU). */
llm_status llm_backend_synchronize(llm_backend *be);
/* Copies the per-op counters into stats[LLM_OP_COUNT]; reset zeroes them. */
void llm_backend_stats(const llm_backend *be, llm_op_stats stats[LLM_OP_COUNT]);
void llm_backend_reset_stats(llm_backend *be);

/* --------------------------------------------------------------- buffers -- */

/* Allocates `size` bytes of backend memory (64-byte aligned, contents zero).
 * Returns LLM_OK, LLM_ERR_NO_MEMORY or LLM_ERR_INVALID_ARG. */
llm_status llm_buffer_alloc(llm_backend *be, size_t size, llm_buffer **out);
/* Makes a buffer for an existing read-only host region (e.g. mmapped weights).
 * The CPU backend uses the memory in place (no copy): the region must outlive
 * the buffer and ops must not write to it. A GPU backend copies it to device
 * memory. Returns LLM_OK, LLM_ERR_NO_MEMORY or LLM_ERR_INVALID_ARG. */
llm_status llm_buffer_wrap_host(llm_backend *be, const void *ptr, size_t size, llm_buffer **out);
/* Offers a matmul weight in a wrapped buffer (llm_buffer_wrap_host) to the
 * backend, which may keep a copy in a layout of its own for llm_op_matmul
 * with this very tensor (same buffer, offset, type and shape). Results are
 * the same bits either way. *kept is 1 if a copy was made: matmul then no
 * longer reads the region's bytes for w (other ops, such as get_rows on a
 * tied embedding, and llm_op_matmul_invariant still do), so the caller may
 * let the system drop their pages. The copy lives until the buffer is freed.
 * The CPU backend keeps one for weights of M % 16 == 0 rows: Q4_0 on any
 * CPU with AVX2, Q4_K, Q6_K and Q8_0 on one with AVX-512 VNNI (the same
 * bytes as the weight, Q6_K 1% more); otherwise *kept is 0. Returns
 * LLM_OK, LLM_ERR_NO_MEMORY or LLM_ERR_INVALID_ARG. */
llm_status llm_backend_prepare_weight(llm_backend *be, const llm_tensor *w, int *kept);
/* Frees a buffer (a wrapped region is not freed). NULL is harmless. */
void llm_buffer_free(llm_buffer *buf);
/* Copies host <-> buffer. [offset, offset + n) must lie inside the buffer
 * (else LLM_ERR_INVALID_ARG); writing to a wrapped buffer gives LLM_ERR_STATE. */
llm_status llm_buffer_write(llm_buffer *buf, size_t offset, const void *src, size_t n);
llm_status llm_buffer_read(const llm_buffer *buf, size_t offset, void *dst, size_t n);
/* Copies n bytes from src at src_offset to dst at dst_offset, on the device
 * (no round trip through the caller; e.g. copy-on-write of a KV block). Both
 * buffers must belong to the same backend, both ranges must lie inside their
 * buffers, and dst must not wrap host memory. Overlapping ranges are allowed
 * (memmove semantics). Returns LLM_OK, LLM_ERR_INVALID_ARG, LLM_ERR_STATE
 * (dst wraps host memory), LLM_ERR_NO_MEMORY or a backend error. */
llm_status llm_buffer_copy(llm_buffer *dst, size_t dst_offset, const llm_buffer *src,
                           size_t src_offset, size_t n);
/* Sets every byte of the buffer to zero. */
llm_status llm_buffer_clear(llm_buffer *buf);

/* ------------------------------------------------------------------- ops -- */
/*
 * Common rules: every tensor must live in a buffer of `be`; activations are F32
 * with contiguous rows (nb[0] = 4) unless stated; out may alias an input only
 * where stated. Each op returns LLM_OK, LLM_ERR_INVALID_ARG for a shape, type
 * or buffer mismatch (the message names it), or LLM_ERR_UNSUPPORTED for a
 * type the backend lacks. On error the output is unspecified.
 */

/* out[i][:] = dequant(w[ids[i]][:]) for i < n.
 * out: F32 [n][d]; w: any supported type [n_rows][d]; ids: host [n], each in [0, n_rows). */
llm_status llm_op_get_rows(llm_backend *be, const llm_tensor *out, const llm_tensor *w,
                           const int32_t *ids, int64_t n);

/* out[i][m] = sum_k x[i][k] * w[m][k]   (out = x . w^T).
 * out: F32 [n][M]; x: F32 [n][K]; w: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
 * Q4_K, Q5_K or Q6_K [M][K]. For quantized w the CPU backend quantizes x rows to
 * Q8_0 / Q8_1 / Q8_K first and uses integer dot products (as llama.cpp does). */
llm_status llm_op_matmul(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                         const llm_tensor *w);

/* The same product, with every out[i][m] summed in an order that depends on
 * K and the weight type only: never on n, on i or on the other rows, so a
 * row's result is the same whatever it is batched with (llm_op_matmul's
 * order may depend on n for some weight types, as llama.cpp's does). For
 * encoders, whose texts are packed into one batch. Same shapes and types as
 * llm_op_matmul. The CPU backend: for F32, F16 and BF16 w a register-tiled
 * product summing each output in eight lanes (lane j takes k = j mod 8, by
 * FMA in ascending k) folded at the end (llama.cpp's order for these types
 * when a batch has 2 or more rows; F16 / BF16 round x to w's type first);
 * for quantized w its per-row dot products. Returns LLM_ERR_UNSUPPORTED on
 * a backend without it (llm_backend_supports with LLM_OP_MATMUL_INVARIANT
 * tells beforehand; the CUDA backend has none yet). Accounted as
 * LLM_OP_MATMUL_INVARIANT. */
llm_status llm_op_matmul_invariant(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                                   const llm_tensor *w);

/* out[i][:] = x[i][:] / sqrt(mean(x[i]^2) + eps) * weight[:] (weight may be NULL).
 * out, x: F32 [n][d] (may alias); weight: F32 [d]. */
llm_status llm_op_rms_norm(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                           const llm_tensor *weight, float eps);

/* llm_rope_mode and llm_rope_scale_kind: llama/rope.h. */

typedef struct llm_rope_params {
    int32_t n_dims;          /* rotated dims per head (<= head_dim, even) */
    llm_rope_mode mode;
    float freq_base;         /* theta_i = pos * freq_base^(-2i/n_dims) */
    llm_rope_scale_kind scaling;
    float freq_scale;        /* LINEAR: 1/factor (1 = none) */
    float llama3_factor;     /* LLAMA3: factor, low/high freq factors, original context */
    float llama3_low_freq_factor;
    float llama3_high_freq_factor;
    int32_t llama3_orig_ctx;
    const float *freq_factors; /* optional host [n_dims/2]: theta_i /= freq_factors[i]
                                  (GGUF rope_freqs, phi3 rope_factors_long/short);
                                  overrides the LLAMA3 rule */
    float attn_factor;       /* cos and sin are multiplied by it before the rotation
                                (llama.cpp's attn_factor / mscale: phi3 longrope's
                                rope.scaling.attn_factor); 0 is taken as 1 (none) */
} llm_rope_params;

/* Rotates x in place. x: F32 [n][n_head][head_dim]; positions: host [n]. */
llm_status llm_op_rope(llm_backend *be, const llm_tensor *x, const int32_t *positions,
                       const llm_rope_params *p);

/* out = silu(gate) * up, elementwise. All F32 of one shape (out may alias). */
llm_status llm_op_swiglu(llm_backend *be, const llm_tensor *out, const llm_tensor *gate,
                         const llm_tensor *up);
/* out = gelu_tanh(gate) * up, elementwise (Gemma's feed-forward). All F32 of
 * one shape (out may alias gate or up). The CPU backend computes it as
 * llama.cpp's CPU does, bit for bit: gate <= -10 gives 0, gate >= 10 gives
 * gate * up, and otherwise gelu_tanh is read from a table of F16 values
 * indexed by gate rounded to F16 (gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi)
 * x (1 + 0.044715 x^2)))), so it is exact to F16 precision only. Returns
 * LLM_ERR_UNSUPPORTED on a backend without it (llm_backend_supports tells). */
llm_status llm_op_geglu(llm_backend *be, const llm_tensor *out, const llm_tensor *gate,
                        const llm_tensor *up);
/* out = a + b and out = a * b, elementwise, same shapes (out may alias a or b).
 * add also takes a single row b: F32 [1][d] (nb rows of 1) with a, out [n][d]
 * gives out[i][j] = a[i][j] + b[j] (a bias after a projection, ggml_add's
 * broadcast: one F32 add per element, so the same bits as llama.cpp); mul
 * takes such a row too (out[i][j] = a[i][j] * b[j], ggml_mul's broadcast). */
llm_status llm_op_add(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                      const llm_tensor *b);
llm_status llm_op_mul(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                      const llm_tensor *b);
/* out = x * s (out may alias x). */
llm_status llm_op_scale(llm_backend *be, const llm_tensor *out, const llm_tensor *x, float s);
/* Row-wise softmax over ne[0]: out[i][:] = exp(x[i][:] - max) / sum (may alias). */
llm_status llm_op_softmax(llm_backend *be, const llm_tensor *out, const llm_tensor *x);

/*
 * Paged KV cache. Per layer, K and V each are a tensor
 *     [n_blocks][n_head_kv][block_size][head_dim]  (ne = {head_dim, block_size, n_head_kv, n_blocks})
 * so that within a block each KV head's rows lie side by side (vLLM's
 * order, not llama.cpp's [cell][head]): attention reads one head's rows at
 * a time, and these stream from memory and fill the caches' sets evenly.
 * of a cache type: F16, F32, BF16, Q8_0, Q4_0, Q4_1, Q5_0 or Q5_1 (head_dim a
 * multiple of the type's block; a row [head_dim] is head_dim / 32 blocks of
 * a quantized type). K and V of one layer have the same shape; their types
 * may differ. llm_backend_supports(be, LLM_OP_ATTENTION, type) tells which
 * types a backend runs (the CPU all; CUDA F16 and F32, K and V alike: the
 * others are LLM_ERR_UNSUPPORTED). A sequence's logical position p lives in
 * physical block block_table[p / block_size], slot p % block_size.
 */

/* Writes k, v (F32 [n][n_head_kv][head_dim]) for token positions[i] into the
 * caches through block_table (host [n_table]; every position must map to an
 * entry holding a block id in [0, n_blocks); the other entries are not read
 * and may hold anything, e.g. -1 for blocks a sliding window released).
 * Values are rounded to the cache type as llama.cpp's CPU backend stores
 * them (F16/BF16: to nearest even; Q8_0: its x86 quantize_row_q8_0, scale
 * 127 / amax, quants rounded half to even; Q4_0, Q4_1, Q5_0, Q5_1: its
 * quantize_row_*_ref, as llm_dtype_quantize_row). A quantized cache with
 * head_dim a multiple of 64 holds its rows rotated, as llama.cpp's does: K
 * (and q, in attention) by a normalised Hadamard transform over rows of the
 * largest power of two dividing head_dim, V over rows of 64 (attention
 * rotates its output back), which spreads quantization error evenly; so a
 * quantized cache's bytes are not the plain quantized rows. */
llm_status llm_op_kv_write(llm_backend *be, const llm_tensor *k_cache, const llm_tensor *v_cache,
                           const llm_tensor *k, const llm_tensor *v, const int32_t *positions,
                           const int32_t *block_table, int32_t n_table);

/* Causal grouped-query attention of one sequence over the paged cache:
 * query i (at logical position positions[i]) attends keys at positions
 * 0..positions[i], which must already have been written.
 * out, q: F32 [n][n_head][head_dim]; n_head must be a multiple of n_head_kv
 * (query head h uses KV head h / (n_head / n_head_kv)); scale usually
 * 1/sqrt(head_dim). The CPU kernel rounds q to F16 when the cache is F16 and
 * sums in llama.cpp's order (its logits, bit for bit): with F16 or F32
 * caches of one type, the order of its attention without flash attention
 * (two matrix products around a softmax); with any other cache (quantized,
 * BF16, or K and V of different types) the order of its CPU flash attention
 * (q converted to K's dot-product type, one online softmax per query head
 * over the keys in ascending order), which llama.cpp requires for a
 * quantized V cache. Same as llm_op_attention_ex with {scale, n_swa = 0}. */
llm_status llm_op_attention(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                            const llm_tensor *k_cache, const llm_tensor *v_cache,
                            const int32_t *positions, const int32_t *block_table,
                            int32_t n_table, float scale);

/* Options of llm_op_attention_ex; get them from llm_attn_default_params(). */
typedef struct llm_attn_params {
    float scale;   /* multiplies every q . k score; usually 1/sqrt(head_dim) (default 1) */
    int32_t n_swa; /* sliding window in keys; 0 (default) means none (see below) */
} llm_attn_params;

/* Default options: scale 1, no sliding window. */
llm_attn_params llm_attn_default_params(void);

/* Attention as llm_op_attention, with options. With n_swa > 0 each query
 * sees only the n_swa most recent keys up to its own position (llama.cpp's
 * standard sliding window): query i at position p = positions[i] attends the
 * keys at positions k with p - n_swa < k <= p. Keys before a query's window
 * count as masked cells (probability exactly 0), so on the CPU the result
 * equals, bit for bit, that of llama.cpp's masked softmax over the same
 * cache; with n_swa >= p + 1 for every query it equals llm_op_attention's.
 * The op reads neither the cache rows nor the block table entries of keys
 * before the window of the earliest query of the batch: the entries for
 * blocks wholly before position min_i(positions[i] - n_swa + 1) may hold any
 * value (for instance -1 once a sliding-window layer released those blocks),
 * while every entry from that block up to the block of max_i(positions[i])
 * must be a valid block id. p may not be NULL; scale must be finite and
 * n_swa >= 0. Returns LLM_OK, LLM_ERR_INVALID_ARG, or LLM_ERR_UNSUPPORTED
 * (a backend without sliding windows, or a cache type it lacks). */
llm_status llm_op_attention_ex(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                               const llm_tensor *k_cache, const llm_tensor *v_cache,
                               const int32_t *positions, const int32_t *block_table,
                               int32_t n_table, const llm_attn_params *p);

/* ------------------------------------------------------ encoder ops -- */
/*
 * What encoder-only models (BERT and its family) need beyond the decoder's
 * ops. A backend that lacks one returns LLM_ERR_UNSUPPORTED naming the op
 * and the backend; llm_backend_supports(be, op, LLM_DTYPE_F32) tells
 * beforehand. The CPU backend has all three; the CUDA backend none yet.
 */

/* LayerNorm with optional affine weight and bias, per row:
 *     mu = mean(x[i]), var = mean((x[i] - mu)^2)
 *     out[i][j] = (x[i][j] - mu) / sqrt(var + eps) * weight[j] + bias[j]
 * out, x: F32 [n][d] (may alias); weight, bias: F32 [d] or NULL (1 and 0).
 * Mean and variance are summed in double, as ggml_norm does. */
llm_status llm_op_layer_norm(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                             const llm_tensor *weight, const llm_tensor *bias, float eps);

/* out = gelu(x) = x/2 (1 + erf(x / sqrt 2)), elementwise: the exact (erf)
 * GELU of BERT's "gelu" activation (PyTorch's default), not the tanh
 * approximation. out, x: F32 of one shape (may alias). The CPU backend
 * evaluates erf with a rational approximation (absolute error < 2e-7), 0 for
 * x <= -10 and x for x >= 10. */
llm_status llm_op_gelu(llm_backend *be, const llm_tensor *out, const llm_tensor *x);

/* Bidirectional (non-causal, unmasked) multi-head attention, no cache, of
 * n_seqs sequences packed back to back (seq_lens[s] tokens each, summing to
 * n): every query attends every key of its own sequence and no other.
 *     out[i][h][:] = sum_j softmax_j(scale * q[i][h] . k[j][g]) v[j][g]
 * over the j of i's sequence, with g = h / (n_head / n_head_kv).
 * out, q: F32 [n][n_head][head_dim]; k, v: F32 [n][n_head_kv][head_dim];
 * n_head a multiple of n_head_kv; seq_lens: host [n_seqs], each >= 1;
 * scale finite. Each (query, head) is computed by one thread in a fixed
 * order, so a sequence's result depends neither on the thread count nor on
 * the other sequences of the call. */
llm_status llm_op_attention_full(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                                 const llm_tensor *k, const llm_tensor *v, const int32_t *seq_lens,
                                 int32_t n_seqs, float scale);

/* ---------------------------------------------------- Recurrent ops --
 *
 * The ops of hybrid recurrent decoders (Qwen3.5's Gated DeltaNet layers).
 * Optional backend extensions like the encoder ops: a backend without one
 * returns LLM_ERR_UNSUPPORTED naming it; llm_backend_supports(be, op,
 * LLM_DTYPE_F32) tells beforehand. The CPU backend has all three (scalar
 * reference and AVX2, same bits where stated); the CUDA backend none yet.
 */

typedef enum llm_unary {
    LLM_UNARY_SILU = 0, /* x / (1 + exp(-x)) (exp as the CPU's swiglu evaluates it) */
    LLM_UNARY_SIGMOID,  /* 1 / (1 + expf(-x)) */
    LLM_UNARY_SOFTPLUS  /* x > 20 ? x : logf(1 + expf(x)) */
} llm_unary;

/* out = f(x) elementwise, f one of llm_unary. out, x: F32 of one shape (may
 * alias). */
llm_status llm_op_unary(llm_backend *be, const llm_tensor *out, const llm_tensor *x, llm_unary kind);

/* Causal depthwise convolution of ONE sequence's n new rows with a carried
 * state of the K - 1 rows before them:
 *     win = [state; x]                              [K - 1 + n][C]
 *     out[t][c] = sum_{i < K} win[t + i][c] * w[c][i]   (i ascending, from 0,
 *                                                      product and sum rounded)
 *     state = the last K - 1 rows of win
 * out, x: F32 [n][C] (distinct); state: F32 [K - 1][C], updated in place;
 * w: F32 [C][K], K >= 2. */
llm_status llm_op_ssm_conv(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                           const llm_tensor *state, const llm_tensor *w);

/* The gated delta rule of ONE sequence, token by token (llama.cpp's
 * ggml_gated_delta_net order). Per value head h (key head h % H_k), with S
 * the head's state matrix stored transposed (state[h][j][i] = S[i][j]):
 *     S    *= exp(g[t][h])
 *     d[j]  = (v[t][h][j] - sum_i S[i][j] k[t][h'][i]) * beta[t][h]
 *     S[i][j] += k[t][h'][i] * d[j]                     (fused multiply-add)
 *     out[t][h][j] = (sum_i S[i][j] q[t][h'][i]) / sqrt(D)
 * q, k: F32 [n][H_k][D]; v, out: F32 [n][H_v][D], H_v a multiple of H_k;
 * g, beta: F32 [n][H_v] (log-decay, mixing weight); state: F32 [H_v][D][D],
 * updated in place. The sums over i are the CPU's F32 dot (AVX2: llama.cpp's
 * ggml_vec_dot_f32 order; the scalar reference sums in double). */
llm_status llm_op_gated_delta(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                              const llm_tensor *k, const llm_tensor *v, const llm_tensor *g,
                              const llm_tensor *beta, const llm_tensor *state);

/* out_ids[i] = index of the largest x[i][:] (first one on ties).
 * x: F32 [n][V]; out_ids: host [n]. */
llm_status llm_op_argmax(llm_backend *be, const llm_tensor *x, int32_t *out_ids);

/*
 * Mixture of experts (llama.cpp's build_moe_ffn on the CPU). Per token t of
 * n, a router gives probabilities probs[t][n_expert] (llm_op_softmax of the
 * router's logits); llm_op_moe_topk picks the n_used largest and their
 * weights; llm_op_matmul_id multiplies each token only by the experts it was
 * routed to; llm_op_moe_sum adds the weighted expert outputs. Optional
 * extensions: a backend without them (CUDA for now) returns
 * LLM_ERR_UNSUPPORTED naming the op, and llm_backend_supports tells
 * beforehand (LLM_OP_MATMUL_ID with the expert weights' type, the other two
 * with F32).
 */

/* ids[t][j] = the expert of the j-th largest probs[t][:] (j < n_used; on
 * equal probabilities the lower index first), weights[t][j] = probs[t][ids[t][j]];
 * with norm != 0 each row of weights is then divided by its sum, the sum
 * accumulated in double in j order, rounded to float and raised to at least
 * 6.103515625e-5 (llama.cpp's clamp to the smallest normal F16).
 * weights: F32 [n][n_used]; probs: F32 [n][n_expert]; ids: host [n][n_used];
 * 1 <= n_used <= n_expert. Accounted as LLM_OP_MOE_TOPK. */
llm_status llm_op_moe_topk(llm_backend *be, const llm_tensor *weights, int32_t *ids, const llm_tensor *probs,
                           int32_t n_used, int norm);

/* out[t][j][m] = sum_k x[t][jx][k] * w[ids[t][j]][m][k], jx = j when x has
 * n_used rows per token, 0 when it has one (shared by all the token's
 * experts). out: F32 [n][n_used][M]; x: F32 [n][1 or n_used][K]; w: a
 * weight type of llm_op_matmul, [n_expert][M][K]; ids: host [n][n_used],
 * each in [0, n_expert). Each expert's rows are read once per call for all
 * the (token, slot) pairs routed to it. Every output is the per-row dot
 * product of llm_op_matmul_invariant (x converted to the weights' activation
 * type as llm_op_matmul does), never a shape-dependent kernel: llama.cpp's
 * CPU mul_mat_id order for the types without a repacked or tiled layout
 * (F32, F16, BF16, Q4_1, Q5_0, Q5_1, Q8_0). Accounted as LLM_OP_MATMUL_ID. */
llm_status llm_op_matmul_id(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *w,
                            const int32_t *ids);

/* out[t][:] = (e[t][0] * w[t][0]) + (e[t][1] * w[t][1]) + ... in j order,
 * each product rounded to F32 before it is added (llama.cpp's ggml_mul then
 * a chain of ggml_add over the experts' views). out: F32 [n][E]; e: F32
 * [n][n_used][E]; w: F32 [n][n_used]. Accounted as LLM_OP_MOE_SUM. */
llm_status llm_op_moe_sum(llm_backend *be, const llm_tensor *out, const llm_tensor *e, const llm_tensor *w);

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_RUNTIME_H */
