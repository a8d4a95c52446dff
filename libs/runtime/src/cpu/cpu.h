/*
 * cpu/cpu.h -- private state of the CPU backend, shared by its op files.
 */
#ifndef LLM_CPU_CPU_H
#define LLM_CPU_CPU_H

#include "backend.h"
#include "cpu/kernels.h"
#include "cpu/threadpool.h"

typedef struct llm__cpu {
    llm__threadpool *tp;
    llm__cpu_kernels k;
    /* Quantized activations of the current matmul; grown, never shrunk. */
    void *act;       /* [n][row bytes of the activation type] */
    size_t act_size;
    /* Their block scales as floats, per group of 4 rows (kernels.h dot2x4). */
    float *act_sc;   /* [n / 4][blocks per row][8] */
    size_t act_sc_len;
    /* Per-thread scratch (attention scores and accumulators); grown, never shrunk. */
    float **tscratch;     /* [n_threads] -> [tscratch_len] */
    size_t tscratch_len;  /* floats per thread */
    /* Slot offsets of the current attention op; grown, never shrunk. */
    size_t *kv_offs;      /* [kv_offs_len] */
    size_t kv_offs_len;
    /* The tiled product's packed weights and widened activations (gemm_cpu.c); grown, never shrunk. */
    float *gemm_w;        /* [strips][K chunks][8][8] */
    size_t gemm_w_len;    /* floats */
    float *gemm_x;        /* [n][K] (F16 / BF16 weights only) */
    size_t gemm_x_len;
    /* Packed weight tiles of the current matmul (matmul_cpu.c, kernels.h
     * llm__pack8_fn); grown, never shrunk. */
    void *pack;
    size_t pack_size;
    /* Weights prepared for matmul (llm_backend_prepare_weight, matmul_cpu.c):
     * the tensor each copy stands for, and the copy (kernels.h prep). */
    struct llm__cpu_prep {
        const llm_buffer *buf;
        size_t offset, nb1;
        llm_dtype dtype;
        int64_t ne0, ne1;
        void *data;
    } *prep;
    int n_prep, cap_prep;
    void *rowtmp;         /* get_rows of a prepared weight: [threads][row bytes]; grown, never shrunk */
    size_t rowtmp_size;
    int32_t *act_ys;      /* [n][K / 32 * aux_ints]: the prepared dot's ys (kernels.h prep); grown, never shrunk */
    size_t act_ys_size;   /* bytes */
    /* matmul_id's grouping tables and gathered activations (moe_cpu.c); grown, never shrunk. */
    void *moe;
    size_t moe_size;
} llm__cpu;

static inline llm__cpu *llm__cpu_of(llm_backend *be) { return (llm__cpu *)be->impl; }

/* Scratch and host memory (scratch_cpu.c). A zeroed buffer of size bytes,
 * 64-byte aligned (2 MiB and huge pages from 2 MiB up), freed with free();
 * NULL when out of memory. */
void *llm__cpu_zalloc(size_t size);
/* Makes sure every thread has at least n floats of scratch. */
llm_status llm__cpu_reserve_tscratch(llm__cpu *c, int n_threads, size_t n);
/* Row index of (logical position p, KV head h) in a paged cache of rows
 * [n_blocks][n_kv][bs] (runtime.h: each KV head's rows of a block side by
 * side); multiply by a row's elements or bytes. The one place the CPU
 * backend spells the layout. */
static inline size_t llm__cpu_kv_row_index(const int32_t *table, int64_t bs, int64_t n_kv, int64_t p, int64_t h) {
    return (size_t)(((int64_t)table[p / bs] * n_kv + h) * bs + p % bs);
}
/* Grows c->kv_offs to at least n_pos entries (attention's per-position slot
 * table, shared by the attention paths). LLM_OK or LLM_ERR_NO_MEMORY. */
llm_status llm__cpu_reserve_kv_offs(llm__cpu *c, int64_t n_pos);
/* Grows a 64-byte aligned scratch buffer (*buf, *size bytes; grown, never
 * shrunk, contents not kept) to at least need bytes. LLM_OK, or
 * LLM_ERR_NO_MEMORY with "<op>: no memory for <what>" and the buffer as it
 * was. */
llm_status llm__cpu_grow(void **buf, size_t *size, size_t need, const char *op, const char *what);

/* Op implementations (one file per family). */
/* Mixture of experts (moe_cpu.c). */
llm_status llm__cpu_moe_topk(llm_backend *be, const llm_tensor *weights, int32_t *ids, const llm_tensor *probs,
                             int32_t n_used, int norm);
llm_status llm__cpu_matmul_id(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *w,
                              const int32_t *ids);
llm_status llm__cpu_moe_sum(llm_backend *be, const llm_tensor *out, const llm_tensor *e, const llm_tensor *w);
llm_status llm__cpu_matmul(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                           const llm_tensor *w);
/* llm_backend_prepare_weight / the buffer's end (or change) for its copies. */
llm_status llm__cpu_prepare_weight(llm_backend *be, const llm_tensor *w, int *kept);
/* The copy standing for w, or NULL (matmul_cpu.c). */
const struct llm__cpu_prep *llm__cpu_prep_find(const llm__cpu *cpu, const llm_tensor *w);
void llm__cpu_forget_buffer(llm_backend *be, const llm_buffer *buf);
/* The same product in the tiled order (gemm_cpu.c), for F32 / F16 / BF16 w only. */
llm_status llm__cpu_gemm(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *w);
/* llm_op_matmul_invariant: llm__cpu_gemm for float weights, the registry's dot (never a shape-dependent
 * pair) for quantized ones. */
llm_status llm__cpu_matmul_invariant(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                                     const llm_tensor *w);
llm_status llm__cpu_kv_write(llm_backend *be, const llm_tensor *k_cache, const llm_tensor *v_cache,
                             const llm_tensor *k, const llm_tensor *v, const int32_t *positions,
                             const int32_t *block_table, int32_t n_table);
llm_status llm__cpu_attention(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                              const llm_tensor *k_cache, const llm_tensor *v_cache,
                              const int32_t *positions, const int32_t *block_table,
                              int32_t n_table, const llm_attn_params *p);
/* K/V caches of any type llm__cpu_kv_type_ok accepts (attention_fa.c):
 * rows stored as llama.cpp's CPU set_rows stores them, and attention in the
 * order of its flash attention. llm__cpu_kv_write and llm__cpu_attention
 * send a cache that is not F16/F32 (or K and V of different types) here. */
int llm__cpu_kv_type_ok(llm_dtype t);
void llm__cpu_kv_quantize_row(llm_dtype t, const float *x, void *y, int64_t n);
/* The Hadamard rotation of a quantized cache (see attention_fa.c): its row
 * length for a K (is_v 0) or V cache of type t and head_dim hd, 0 for none;
 * and the transform itself, in place on len values in rows of n. */
int64_t llm__cpu_kv_rot(llm_dtype t, int64_t hd, int is_v);
void llm__cpu_fwht(float *x, int64_t len, int64_t n);
llm_status llm__cpu_kv_write_any(llm_backend *be, const llm_tensor *k_cache, const llm_tensor *v_cache,
                                 const llm_tensor *k, const llm_tensor *v, const int32_t *positions,
                                 const int32_t *block_table);
llm_status llm__cpu_attention_fa(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                                 const llm_tensor *k_cache, const llm_tensor *v_cache,
                                 const int32_t *positions, const int32_t *block_table,
                                 const llm_attn_params *p);
llm_status llm__cpu_rope(llm_backend *be, const llm_tensor *x, const int32_t *positions,
                         const llm_rope_params *p);
llm_status llm__cpu_get_rows(llm_backend *be, const llm_tensor *out, const llm_tensor *w,
                             const int32_t *ids, int64_t n);
llm_status llm__cpu_rms_norm(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                             const llm_tensor *weight, float eps);
llm_status llm__cpu_swiglu(llm_backend *be, const llm_tensor *out, const llm_tensor *gate,
                           const llm_tensor *up);
llm_status llm__cpu_geglu(llm_backend *be, const llm_tensor *out, const llm_tensor *gate,
                          const llm_tensor *up);
llm_status llm__cpu_add(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                        const llm_tensor *b);
llm_status llm__cpu_mul(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                        const llm_tensor *b);
llm_status llm__cpu_scale(llm_backend *be, const llm_tensor *out, const llm_tensor *x, float s);
llm_status llm__cpu_softmax(llm_backend *be, const llm_tensor *out, const llm_tensor *x);
/* Encoder ops (encoder_cpu.c), installed as backend extensions. */
/* Recurrent ops (ssm_cpu.c). */
llm_status llm__cpu_unary(llm_backend *be, const llm_tensor *out, const llm_tensor *x, llm_unary kind);
llm_status llm__cpu_ssm_conv(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *state,
                             const llm_tensor *w);
llm_status llm__cpu_gated_delta(llm_backend *be, const llm_tensor *out, const llm_tensor *q, const llm_tensor *k,
                                const llm_tensor *v, const llm_tensor *g, const llm_tensor *beta,
                                const llm_tensor *state);
llm_status llm__cpu_layer_norm(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                               const llm_tensor *weight, const llm_tensor *bias, float eps);
llm_status llm__cpu_gelu(llm_backend *be, const llm_tensor *out, const llm_tensor *x);
llm_status llm__cpu_attention_full(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                                   const llm_tensor *k, const llm_tensor *v, const int32_t *seq_lens,
                                   int32_t n_seqs, float scale);
/* out[i] = gelu_erf(x[i]) for i < n: the AVX2 variant of kernels.h
 * llm__gelu_erf_row_scalar. */
void llm__gelu_erf_row_avx2(float *out, const float *x, int64_t n);
/* attention_full for one head of one sequence of n tokens, AVX2 (hd % 8 == 0):
 * out_i = sum_j softmax_j(scale * q_i . k_j) v_j, rows q_i = q + i qs,
 * k_j = k + j kvs, v_j = v + j kvs, out_i = out + i os (in floats); scratch:
 * hd * n8 + n8 floats, n8 = n rounded up to 8. Per query, in a fixed order
 * that depends on n and hd only: each score sums d ascending by FMA, times
 * scale; exp_sum (the registry's exp_sum_row) gives e^(s - max) and their
 * sum; each output element sums j ascending by FMA of p_j = e_j * (1 / sum).
 * (The scalar reference, encoder_cpu.c, sums in another order: results agree
 * within rounding, not bit for bit.) */
void llm__attn_full_seq_avx2(int64_t n, int64_t hd, const float *q, size_t qs, const float *k, const float *v,
                             size_t kvs, float scale, float *out, size_t os, float *scratch,
                             double (*exp_sum)(float *y, const float *x, float max, int64_t n));
llm_status llm__cpu_argmax(llm_backend *be, const llm_tensor *x, int32_t *out_ids);

#endif
