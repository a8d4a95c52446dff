/*
 * cpu/kernels.h -- the CPU kernel registry: per weight type, which activation
 * type it pairs with and which dot product to call; per hot op, which row
 * kernel. Filled once per backend from the scalar reference, then overridden
 * by the SIMD variants the CPU supports (checked at run time).
 */
#ifndef LLM_CPU_KERNELS_H
#define LLM_CPU_KERNELS_H

#include <stdint.h>

#include "llama/dtype.h"

/* Dot product of one weight row w (n elements of the weight type, whole blocks)
 * with one activation row a (n elements of the paired activation type). */
typedef float (*llm__vec_dot_fn)(int64_t n, const void *w, const void *a);
/* Four dot products of one weight row with activation rows a, a + a_stride,
 * a + 2 a_stride, a + 3 a_stride: out[j] must equal dot(n, w, a + j a_stride)
 * bit for bit (the same per-block arithmetic in the same order), so batching
 * never changes a result. */
typedef void (*llm__vec_dot4_fn)(int64_t n, const void *w, const void *a, size_t a_stride,
                                 float out[4]);
/* Two weight rows (w and w + w_stride bytes) by four activation rows of an
 * 8-bit block type (Q8_0 / Q8_1) whose block scales were unpacked to floats
 * beforehand: sc[8 b + j] = d of block b of activation row j, sc[8 b + 4 + j]
 * its s (Q8_1 only). out[r][j] must equal dot(n, w_r, a + j a_stride) bit for
 * bit. Unpacking once per matmul instead of once per weight row, and sharing
 * each activation block between two weight rows, halves the work per block
 * outside the integer dot itself. */
typedef void (*llm__vec_dot2x4_fn)(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride,
                                   const float *sc, float out[2][4]);
/* Four weight rows (w + r w_stride bytes) by one activation row of an 8-bit
 * block type whose block scales were unpacked: sc[2 b] = d of block b,
 * sc[2 b + 1] its s (Q8_1 only). out[r] must equal dot(n, w_r, a) bit for
 * bit. Four independent accumulator chains instead of one: a single dot is
 * bound by its FMA latency, not by the CPU's throughput. */
typedef void (*llm__vec_dot4x1_fn)(int64_t n, const void *w, size_t w_stride, const void *a, const float *sc,
                                   float out[4]);
/* Eight consecutive weight rows (w + r w_stride bytes, r < 8) by n_a (1..4)
 * consecutive activation rows (a + j a_stride): out[j * o_stride + r] must
 * equal, bit for bit, what the pair's dot4 gives for them when n_a == 4 and
 * what its dot gives otherwise (kernels.h llm__dot_pair). One call reads each
 * weight block once for all n_a rows and keeps 8 independent chains. */
typedef void (*llm__vec_dot8_fn)(int64_t n, const void *w, size_t w_stride, const void *a, size_t a_stride,
                                 int n_a, float *out, size_t o_stride);
/* Packing of 8 consecutive weight rows (w + r w_stride bytes, r < 8, n
 * elements each) into a kernel's own tile layout at dst (pack8_bytes(n)
 * bytes, 32-byte aligned), and the product of such a tile with 4 activation
 * rows: out[j * o_stride + r] equal, bit for bit, to the pair's dot4 (as
 * dot8 with n_a == 4). For prompt passes, where a tile meets every
 * activation row: packed once per matmul, it is read n / 4 times. */
typedef void (*llm__pack8_fn)(int64_t n, const void *w, size_t w_stride, void *dst);
typedef void (*llm__vec_dot8x4_packed_fn)(int64_t n, const void *pk, const void *a, size_t a_stride, float *out,
                                          size_t o_stride);
/* The same product on two consecutive packed groups at once (the second at
 * pk + pk_stride bytes): out[j * o_stride + r] for r < 16, rows 0..7 of the
 * first group then of the second, each equal to what dot8x4_packed gives. */
typedef void (*llm__vec_dot16x4_packed_fn)(int64_t n, const void *pk, size_t pk_stride, const void *a,
                                           size_t a_stride, float *out, size_t o_stride);
/* kernels.h gemm_rows (below). */
typedef void (*llm__gemm_rows_fn)(int64_t K, const float *x, size_t x_stride, int64_t n_rows, const void *w,
                                  size_t w_row, int64_t m_rows, float *out, size_t o_stride);
/* Converts n floats into the activation type (n a multiple of its block). */
typedef void (*llm__quantize_fn)(const float *x, void *y, int64_t n);
/* One row of n elements (whole blocks) of a KV cache type to floats, as
 * ggml-base's to_float computes it (flash attention's V rows): x = d * q,
 * d * (q - 8) or d * (q - 16) in one multiply; with a minimum (Q4_1, Q5_1) a
 * multiply then an add (ggml-base is built without FMA, so no fusion); F16
 * and BF16 widened exactly. Elementwise, so variants are bit-identical. */
typedef void (*llm__to_float_fn)(const void *x, float *y, int64_t n);
/* y[i] = expf(x[i]) for i < n, with the bits of the C library's expf (what
 * llama.cpp's flash attention calls). */
typedef void (*llm__expf_n_fn)(float *y, const float *x, int64_t n);

/* Where the K or V rows of one KV head live in a paged cache:
 * row(t) = base + offs[t] + head_off elements, where offs[t] is the element
 * offset of logical position t's row of KV head 0 (computed once per op from
 * the block table, so the inner loops do no division) and head_off that of
 * the head's rows in a block (kv_head * block_size * head_dim: runtime.h). */
typedef struct llm__kv_rows {
    const void *base;      /* cache start (uint16_t halves or floats) */
    const size_t *offs;    /* [positions] slot offsets, in elements */
    size_t head_off;       /* kv_head * block_size * head_dim */
    int f16;               /* 1: halves, 0: floats */
} llm__kv_rows;

static inline const void *llm__kv_row(const llm__kv_rows *r, int64_t t) {
    size_t e = r->offs[t] + r->head_off;
    return r->f16 ? (const void *)((const uint16_t *)r->base + e) : (const void *)((const float *)r->base + e);
}

/* Instruction-set levels the kernel registry may use (runtime.h
 * llm_kernels), in order. */
enum { LLM__ISA_SCALAR = 0, LLM__ISA_AVX2 = 1, LLM__ISA_AVX_VNNI = 2, LLM__ISA_ALL = 3 };

typedef struct llm__cpu_kernels {
    const char *desc;                          /* "scalar", "avx2+fma+f16c", "avx2+fma+f16c+avx512vnni" */
    int isa;                                   /* the LLM__ISA_ level its entries were picked under */
    llm_dtype act_type[LLM_DTYPE_END_];        /* weight type -> activation type */
    llm__vec_dot_fn dot[LLM_DTYPE_END_];       /* weight type -> dot (NULL: unsupported) */
    llm__vec_dot4_fn dot4[LLM_DTYPE_END_];     /* optional 1 x 4 variant (NULL: use dot) */
    llm__vec_dot2x4_fn dot2x4[LLM_DTYPE_END_]; /* optional 2 x 4 variant (NULL: use dot4) */
    llm__vec_dot4x1_fn dot4x1[LLM_DTYPE_END_]; /* optional 4 x 1 variant (NULL: use dot) */
    /* Shape-dependent kernels. llama.cpp does not multiply every K-quant
     * with one kernel: on x86 it repacks Q4_K (and Q4_0) weights whose row
     * count divides by 8 and runs its interleaved gemv/gemm on them, and from 8 activation
     * rows up it runs a tiled K-quant matmul; each sums in its own order. To
     * give its logits on such models too, the matmul takes (dot, dot4) from
     * rows8 when the weight's row count M is a multiple of 8, else from
     * tiled when it has n >= 8 activation rows, else the entries above. Here
     * dot4 need not equal dot: the split is llama.cpp's (groups of 4 rows
     * through dot4, the last n % 4 through dot). NULL: not used. */
    struct llm__dot_pair {
        llm__vec_dot_fn dot;
        llm__vec_dot4_fn dot4;
        llm__vec_dot8_fn dot8; /* optional: 8 weight rows at once, same bits (NULL: unused) */
        /* optional: dot8's bits, and the next 8 weight rows prefetched
         * while these are read. For a matmul with a few activation rows
         * (decode, batched decode: matmul_cpu.c STREAM_ROWS), which reads
         * its weights from memory once; a prompt pass keeps each tile in
         * cache for many rows and has no use for it. NULL: dot8. */
        llm__vec_dot8_fn dot8_stream;
        /* optional, all three or none: 8 weight rows packed once, then
         * multiplied by 4 activation rows at a time (llm__pack8_fn). */
        llm__pack8_fn pack8;
        size_t (*pack8_bytes)(int64_t n);
        llm__vec_dot8x4_packed_fn dot8x4_packed;
        llm__vec_dot16x4_packed_fn dot16x4_packed; /* optional, with pack8: 2 groups per call (NULL: unused) */
    } rows8[LLM_DTYPE_END_], tiled[LLM_DTYPE_END_];
    /* Weights kept in a layout of the backend's own (runtime.h
     * llm_backend_prepare_weight), per weight type; all NULL where there is
     * none. A prepared [M][K] weight (M % 16 == 0) is M / 16 groups of
     * group_bytes(K) bytes (a multiple of 64), group g made by repack from
     * rows 16 g .. 16 g + 15. dot multiplies one group by n_a <= max_a
     * activation rows (the type's activation type, a_stride bytes apart; the
     * matmul passes max_a rows at a time, then the rest): out[j *
     * o_stride + r] for r < 16, the bits of the type's matmul without the
     * copy. aux_ints (0: none): int32 per activation block of 32 that dot
     * reads besides the rows, aux(K, row, ys) forms them for one row (ys[b *
     * aux_ints ..]); dot gets row j's at ys + j * ys_stride. flags:
     * LLM__PREP_STREAM, the group is read from memory (its first pass), so
     * the bytes after it are prefetched as it is read; LLM__PREP_BATCH8, the
     * matmul has 8 or more activation rows (for types whose order depends
     * on it: Q6_K, Q5_K, Q3_K and Q2_K, llama.cpp's tiled order from 8
     * rows). */
#define LLM__PREP_STREAM 1
#define LLM__PREP_BATCH8 2
    struct llm__prep_kernels {
        size_t (*group_bytes)(int64_t K);
        void (*repack)(int64_t K, const void *w, size_t w_stride, void *grp);
        void (*dot)(int64_t K, const void *grp, const void *a, size_t a_stride, const int32_t *ys, size_t ys_stride,
                    int n_a, float *out, size_t o_stride, int flags);
        int aux_ints;
        void (*aux)(int64_t K, const void *a, int32_t *ys);
        int max_a;
        /* Row r (< 16) of a group back in the file's bytes (K / block
         * elements blocks at dst), for get_rows on a prepared weight (a
         * tied embedding), so the file's pages stay unread. NULL: get_rows
         * reads the file's bytes. */
        void (*unpack_row)(int64_t K, const void *grp, int r, void *dst);
        /* Optional, for types whose tiled pair has packed tiles (pack8,
         * dot16x4_packed): a group as those two 8-row tiles (rows 0..7 at
         * dst, 8..15 at dst + tile_stride, pack8_bytes(K) each), which a
         * matmul with many activation rows makes once per group and
         * multiplies by dot16x4_packed, 4 rows at a time (the rest through
         * dot); same bits. NULL: dot for every row. */
        void (*pack16)(int64_t K, const void *grp, void *dst, size_t tile_stride);
        /* Optional (types without pack16 whose rows8 pair packs tiles:
         * pack8 and dot8x4_packed): a group's 16 rows back in the file's
         * bytes (row r at dst + r * stride, as unpack_row). Where set, from
         * PREP_TILE_ROWS activation rows each group goes through it and the
         * rows8 pair's pack8, as the matmul without the copy packs it, then
         * its packed products 4 rows at a time (the rest through dot); same
         * bits. NULL: dot for every row. */
        void (*unpack16)(int64_t K, const void *grp, void *dst, size_t stride);
    } prep[LLM_DTYPE_END_];
    /* llama.cpp's llamafile sgemm (tinyBLAS): for F16 / BF16 weights it takes
     * every matmul with n >= 2 activation rows, K % 8 == 0 and M % 4 == 0
     * (lone rows go to its vec_dot, our dot). The matmul uses this pair under
     * those conditions when rows8 and tiled do not apply; same split of the
     * rows between dot4 and dot as above. NULL: not used. */
    struct llm__dot_pair sgemm[LLM_DTYPE_END_];
    llm__quantize_fn quantize[LLM_DTYPE_END_]; /* activation type -> quantizer */
    /* out[i] = x[i] / sqrt(mean(x^2) + eps) * (w ? w[i] : 1) */
    void (*rms_norm_row)(float *out, const float *x, const float *w, int64_t n, float eps);
    /* Attention inner loops: dot of f16/f32 vectors (scores), and the
     * probability-weighted sum of value rows out[d] = sum_t p[t] * v_t[d] for
     * t < len (scratch: 32 * hd floats). n_all >= len is the number of cache
     * positions the whole batch sees; the SIMD variant uses it to sum in the
     * same order as llama.cpp's dot over n_all masked cells. */
    float (*dot_f16)(int64_t n, const uint16_t *x, const uint16_t *y);
    float (*dot_f32)(int64_t n, const float *x, const float *y);
    /* x[i] = fp16_to_fp32(fp32_to_fp16(x[i])) (round to nearest even). */
    void (*round_f16)(int64_t n, float *x);
    void (*attn_wsum)(const llm__kv_rows *v, int64_t len, int64_t n_all, int64_t hd, const float *p,
                      float *out, float *scratch);
    /* The same two attention products in the order a register-tiled matrix
     * product sums them (what llama.cpp uses when a batch has two or more
     * tokens): one 8-lane accumulator, element i into lane i % 8 by FMA in
     * ascending i, then llm__hsum8. n and len need not be multiples of 8
     * (missing lanes are zero). Scratch of attn_wsum8: 8 * hd floats. Scalar
     * and SIMD variants are bit-identical. */
    float (*dot_f16_8)(int64_t n, const uint16_t *x, const uint16_t *y);
    /* scores[t] = dot(q16, k_t) * scale for t < len over an F16 cache, the dot
     * summed exactly as dot_f16_8 (tiled != 0) or dot_f16 (tiled == 0) sum it. */
    void (*attn_scores_f16)(const llm__kv_rows *k, int64_t len, int64_t hd, const uint16_t *q16, float scale,
                            int tiled, float *scores);
    void (*attn_wsum8)(const llm__kv_rows *v, int64_t len, int64_t hd, const float *p, float *out,
                       float *scratch);
    /* Grouped forms of the two attention products: nq queries that read the
     * same KV head (a GQA group's query heads) and see the same keys
     * t_start <= t < len, so each K/V row is loaded and converted once for
     * all of them. Query j's results equal the single-query kernels' bit for
     * bit (same FMA chains, same folds):
     * attn_scores_f16_g: scores[j * sstride + t] for t_start <= t < len =
     *   what attn_scores_f16 gives for q16 + j * hd (q16: [nq][hd] halves; qf:
     *   scratch of nq * hd floats). A score does not depend on its key's
     *   index.
     * attn_wsum_g: out[j * hd + d] = what attn_wsum8 (tiled != 0) or
     *   attn_wsum (n_all used) gives for p + j * pstride (scratch: nq * 32 * hd
     *   floats) when p[t] = 0 for t < t_start. Every key keeps the lane / slot
     *   of its absolute index t, and a key before t_start would only add
     *   fma(v, 0, +0) = +0 to a still-zero slot, so skipping it is exact:
     *   a sliding window gives llama.cpp's bits for its masked cells.
     * Neither reads a row (nor an offs entry) before t_start, so the blocks of
     * keys that left a sliding window may be freed. */
    void (*attn_scores_f16_g)(const llm__kv_rows *k, int64_t t_start, int64_t len,
                              int64_t hd, const uint16_t *q16, int64_t nq, float scale, int tiled, float *scores,
                              int64_t sstride, float *qf);
    void (*attn_wsum_g)(const llm__kv_rows *v, int64_t t_start, int64_t len, int64_t n_all, int64_t hd,
                        const float *p, int64_t pstride, int64_t nq, int tiled, float *out, float *scratch);
    /* out[i] = x[i] / (1 + e^-x[i]) * g[i] over one row, e^ by llm__exp_poly
     * for the first n - n % 8 elements and libm expf for the rest.
     * Scalar and SIMD variants are bit-identical. */
    void (*swiglu_row)(float *out, const float *x, const float *g, int64_t n);
    /* out[i] = gelu_tanh(x[i]) * g[i] over n elements, by llama.cpp's F16
     * table rule (ggml-cpu, GGML_GELU_FP16): x <= -10 gives 0, x >= 10 gives
     * x * g, else fp32(table[fp16(x)]) * g, table from llm__gelu_f16_table().
     * Elementwise, so any split of a row gives the same bits. */
    void (*geglu_row)(float *out, const float *x, const float *g, int64_t n, const uint16_t *table);
    /* y[i] = e^(x[i] - max) (llm__exp_poly for groups of 8 from the start,
     * expf for the last n % 8); returns their sum: each group's llm__hsum8
     * added in double, then the rest one by one. Bit-identical variants. */
    double (*exp_sum_row)(float *y, const float *x, float max, int64_t n);
    /* The register-tiled product's block (llm__gemm_block_fn below). */
    void (*gemm_block)(int64_t K, const float *x, size_t x_stride, int64_t n_rows, const float *wp,
                       int64_t n_strips, int64_t m_lim, float *out, size_t o_stride);
    /* The same block in the same order on weight rows of type t (F16,
     * BF16) read where they are (weight row m at w + m * w_row bytes, K
     * halves), widened as they load instead of packed per call:
     * out[i * o_stride + m] for i < n_rows, m < m_rows. NULL (and for every
     * other type): the tiled product packs (gemm_block). */
    llm__gemm_rows_fn gemm_rows[LLM_DTYPE_END_];
    /* The vector steps of llama.cpp's CPU flash attention (its
     * ggml_vec_{mad,scale}_{f32,f16} on x86, where every element goes
     * through one fused multiply-add or multiply): y[i] = fma(x[i], v, y[i]);
     * y[i] *= v; on halves y[i] = fp16(fma(fp32(x[i]), v, fp32(y[i]))) and
     * y[i] = fp16(fp32(y[i]) * v), rounded to nearest even. Elementwise, so
     * scalar and SIMD variants are bit-identical. */
    void (*fa_mad_f32)(int64_t n, float *y, const float *x, float v);
    void (*fa_scale_f32)(int64_t n, float *y, float v);
    void (*fa_mad_f16)(int64_t n, uint16_t *y, const uint16_t *x, float v);
    void (*fa_scale_f16)(int64_t n, uint16_t *y, float v);
    /* KV cache type -> its rows as floats (NULL: not a cache type). */
    llm__to_float_fn to_float[LLM_DTYPE_END_];
    /* libm's expf over a vector (the scalar entry is the loop over expf). */
    llm__expf_n_fn expf_n;
    /* out[i] = x[i] / (1 + e^-x[i]) with e^ as swiglu_row evaluates it (llama.cpp's
     * ggml_vec_silu_f32 on AVX2): bit-identical variants. */
    void (*silu_row)(float *out, const float *x, int64_t n);
} llm__cpu_kernels;

/* The F16 GELU table of geglu_row (gelu_table.c): built on first call,
 * thread-safely, then read-only for the life of the process. */
const uint16_t *llm__gelu_f16_table(void);

/* The register-tiled product (gemm_cpu.c) over a packed weight panel.
 * Packed layout: weight rows in strips of 8, K in chunks of 8 floats (KC =
 * ceil(K / 8) chunks), wp[((s * KC) + c) * 64 + r * 8 + j] = w[8 s + r][8 c + j],
 * zero past M rows or K columns. The order every variant sums in, for each
 * output on its own: eight lanes, lane j taking elements k = 8 c + j (zero
 * past K) by FMA in ascending c from +0, then the lanes folded as llm__hsum8
 * folds them, ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)). That is
 * llama.cpp's tinyBLAS order on AVX2 (kernels/sgemm_x86_256.c: for K % 8 == 0
 * the sgemm pairs' bits). It depends on K alone: never on the number of rows,
 * a row's place among them or the tiling, so variants and thread counts give
 * the same bits. A block computes out[i * o_stride + 8 s + r] for i < n_rows
 * (x row i at x + i * x_stride), s < n_strips (strip s at wp + s * KC * 64)
 * and 8 s + r < m_lim; it reads x rows only up to K. */
typedef void (*llm__gemm_block_fn)(int64_t K, const float *x, size_t x_stride, int64_t n_rows, const float *wp,
                                   int64_t n_strips, int64_t m_lim, float *out, size_t o_stride);
/* The block variants: 0 scalar (the reference), 1 AVX2+FMA, 2 AVX-512 (F, DQ);
 * NULL when not built or not supported by the running CPU. */
llm__gemm_block_fn llm__gemm_block_variant(int which);
void llm__gemm_block_scalar(int64_t K, const float *x, size_t x_stride, int64_t n_rows, const float *wp,
                            int64_t n_strips, int64_t m_lim, float *out, size_t o_stride);
llm__gemm_block_fn llm__gemm_block_avx2_get(void);   /* gemm_x86_256.c; NULL if not built */
llm__gemm_block_fn llm__gemm_block_avx512_get(void); /* gemm_x86_512.c; NULL if not built or no CPU support */
/* The in-place rows (gemm_rows) for weight type t (F16
 * or BF16) of the AVX2 block (gemm_x86_256.c) and of the AVX-512 one
 * (gemm_x86_512.c); NULL if not built, no CPU support or another type. */
llm__gemm_rows_fn llm__gemm_rows_avx2_get(llm_dtype t);
llm__gemm_rows_fn llm__gemm_rows_avx512_get(llm_dtype t);

/* Fills k with the scalar reference kernels. */
void llm__cpu_kernels_scalar(llm__cpu_kernels *k);
/* Overrides entries with the x86 SIMD variants the feature flags cpu
 * (llm__cpu_features_upto: cpu_features.c) allow, and nothing else. Call
 * only when cpu has LLM__CPU_AVX2. The per-family fills below are called
 * from it with the same flags. */
void llm__cpu_kernels_x86(llm__cpu_kernels *k, unsigned cpu);
void llm__cpu_kernels_q5_x86(llm__cpu_kernels *k, unsigned cpu); /* Q5 dots: kernels/q5_x86_256.c */
/* The Q5_0 packed product (its tiled pair's dot8x4_packed, on q5_0's pack8
 * tiles), for tests: which 1 the AVX-512 VNNI one, the only one (AVX2 CPUs
 * keep dot4); NULL when not built, not supported, or which is another
 * number. Call only when llm__cpu_has_avx2(). */
llm__vec_dot8x4_packed_fn llm__q5_0_packed_variant(int which);
void llm__cpu_kernels_kquant_x86(llm__cpu_kernels *k); /* Q4_K/Q6_K dots, Q8_K quantizer: kernels/kquant_x86_256.c */
void llm__cpu_kernels_attn_x86_256(llm__cpu_kernels *k); /* grouped attention: attention_x86_256.c */
/* Q4_1 prepared at load (kernels/q4_1_x86_512.c); call only with LLM__CPU_AVX512_VNNI. */
void llm__cpu_kernels_q4_1_x86_512(llm__cpu_kernels *k);
/* The same grouped attention in 16-lane registers (attention_x86_512.c), same
 * bits; call only with LLM__CPU_AVX512F (k unchanged where the build lacks it). */
void llm__cpu_kernels_attn_x86_512(llm__cpu_kernels *k);
void llm__cpu_kernels_q4_0_x86(llm__cpu_kernels *k, unsigned cpu); /* Q4_0 rows8 pair (repacked order) */
/* The Q4_0 rows8 dot8 variants, for tests: vnni 0 the AVX2 one, 1 the AVX-VNNI
 * one (what the registry takes when the CPU has it); NULL when not built or
 * (VNNI) not supported. Call only when llm__cpu_has_avx2(). */
llm__vec_dot8_fn llm__q4_0_dot8_variant(int vnni);
/* The Q4_0 packed tiles and products (rows8 pack8, pack8_bytes,
 * dot8x4_packed, dot16x4_packed; the other fields zero), for tests: which 0
 * AVX2, 1 AVX-VNNI (256-bit, same tiles), 2 AVX-512 VNNI (its own tiles, 16
 * weight rows per register); the registry takes 2, else 1, else 0. Returns
 * 1, or 0 when not built or not supported. Call only when
 * llm__cpu_has_avx2(). */
int llm__q4_0_packed_pair(int which, struct llm__dot_pair *pr);
/* The Q4_0 prepared layout with its product (kernels.h prep) for tests:
 * which 0 the 256-bit AVX2 product, 1 the AVX-VNNI one, 2 the AVX-512 one
 * (what the registry takes when the CPU has it, else the next); returns 1,
 * or 0 (*pk zeroed) when not built or not supported. Call only when
 * llm__cpu_has_avx2(). */
int llm__q4_0_prep_variant(int which, struct llm__prep_kernels *pk);
/* The dot8 of the Q4_K rows8 pair and of the Q6_K tiled pair
 * (kernels/kquant_rows8_x86_256.c), and their packed tiles
 * (pack8 / dot8x4_packed), installed by llm__cpu_kernels_x86(). */
void llm__cpu_kernels_kquant_rows8_x86(llm__cpu_kernels *k, unsigned cpu);
/* The Q4_K and Q6_K prepared layouts (kernels.h prep) where the CPU has
 * AVX-512 VNNI and the rows8 / tiled pairs they match are installed
 * (kernels/prep_kquant_x86_256.c); call after llm__cpu_kernels_kquant_rows8_x86(). */
void llm__cpu_kernels_prep_kquant_x86(llm__cpu_kernels *k, unsigned cpu);
/* Those dot8 kernels, for tests: t Q4_K (rows8 order) or Q6_K (tiled order),
 * vnni 0 the AVX2 one, 1 the AVX-VNNI one, 2 the AVX-512 one (Q4_K only);
 * NULL when not built, not supported, or t is another type. Call only when
 * llm__cpu_has_avx2(). */
llm__vec_dot8_fn llm__kq_dot8_variant(llm_dtype t, int vnni);
/* The packed products (dot8x4_packed on a pair's pack8 tiles) of Q4_K's
 * rows8 pair and of the tiled pairs of Q6_K, Q5_K, Q3_K and Q2_K, for
 * tests: which 0 the AVX2 one, 1 the AVX-512 VNNI one (512-bit, what the
 * registry takes when the CPU has it); NULL when not built, not supported,
 * or t is another type. Call only when llm__cpu_has_avx2(). */
llm__vec_dot8x4_packed_fn llm__kq_packed_variant(llm_dtype t, int which);
/* Their 16-row product (dot16x4_packed on the same tiles), AVX-512 VNNI
 * only, as the registry installs it; NULL elsewhere. */
llm__vec_dot16x4_packed_fn llm__kq_packed16_variant(llm_dtype t);
/* The packed tiles of Q6_K, Q5_K, Q3_K and Q2_K (cpu/kernels/kquant_tile.h,
 * kernels/kquant_tile_x86_256.c): their products, mins 0 for the types whose
 * offsets fold into S1 (Q6_K, Q3_K), 1 for those with mins (Q5_K, Q2_K);
 * which as above. llm__kqt_install puts pack8 and the widest products the
 * flags cpu allow into a tiled pair. llm__cpu_kernels_kquant_tile_x86 installs Q6_K's
 * and Q5_K's (after kernels/kquant_x86_256.c registered their tiled pairs). */
llm__vec_dot8x4_packed_fn llm__kqt_packed_variant(int mins, int which);
llm__vec_dot16x4_packed_fn llm__kqt_packed16_variant(int mins);
void llm__kqt_install(struct llm__dot_pair *pr, llm__pack8_fn pack8, int mins, unsigned cpu);
void llm__cpu_kernels_kquant_tile_x86(llm__cpu_kernels *k, unsigned cpu);
/* The Q8_0 dot2x4 / dot4x1 (kernels/q8_0_x86_256.c), installed by
 * llm__cpu_kernels_x86() over the first ones in kernels/x86_256.c. */
void llm__cpu_kernels_q8_0_x86(llm__cpu_kernels *k, unsigned cpu);
/* Those kernels, for tests: vnni 0 the AVX2 pair, 1 the AVX-VNNI pair, 2 the
 * AVX-512 dot2x4 (with the AVX-VNNI dot4x1). Sets
 * both and returns 1, or returns 0 when that variant is not built or (VNNI)
 * not supported. Call only when llm__cpu_has_avx2(). */
int llm__q8_0_micro_variant(int vnni, llm__vec_dot2x4_fn *d2x4, llm__vec_dot4x1_fn *d4x1);
void llm__cpu_kernels_sgemm_x86(llm__cpu_kernels *k); /* F16/BF16 sgemm pairs (tinyBLAS order) */
void llm__cpu_kernels_q3_k_x86(llm__cpu_kernels *k, unsigned cpu); /* Q3_K dot and tiles */
void llm__cpu_kernels_q2_k_x86(llm__cpu_kernels *k, unsigned cpu); /* Q2_K dot and tiles */
void llm__cpu_kernels_tofloat_x86(llm__cpu_kernels *k); /* KV rows to floats: kernels/tofloat_x86_256.c */
/* glibc's expf algorithm four lanes at a time (kernels/expf_x86_256.c); NULL if
 * not built. Installed by llm__cpu_kernels_x86 only when
 * llm__cpu_expf_matches_libm says it gives this process's libm bits. */
llm__expf_n_fn llm__cpu_expf_n_avx2_get(void);
/* 1 if f gives the bits of the C library's expf on a sweep of inputs over
 * [-110, 90] and the special values (kernels/ref.c). */
int llm__cpu_expf_matches_libm(llm__expf_n_fn f);
/* Q4_K x Q8_K summed as llama.cpp's repacked (CPU_REPACK, q4_K_8x8) kernels
 * sum, which it uses instead of its vec_dot for Q4_K weights with a multiple
 * of 8 rows on AVX2 CPUs: _gemv as ggml_gemv_q4_K_8x8_q8_K (lone activation
 * rows), _gemm as ggml_gemm_q4_K_8x8_q8_K (four rows at once; a batch sends
 * its first n - n % 4 rows there). Not in the registry (the two orders differ,
 * so dot4 != dot); kernels/kquant_x86_256.c describes the orders. In AVX2 builds
 * call only when llm__cpu_has_avx2(). */
float llm__q4_k_dot_repack_gemv(int64_t n, const void *w, const void *a);
void llm__q4_k_dot4_repack_gemm(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]);
/* Q4_K / Q5_K / Q6_K x Q8_K summed as llama.cpp's tiled K-quant matmul sums
 * (ggml-cpu/tiled, on by default), which it uses instead of its vec_dot when
 * a matmul has 8 or more activation rows and the weight is not repacked (Q6_K
 * and Q5_K always on AVX2, Q4_K when its row count is not a multiple of 8).
 * dot4: four activation rows, out[j] equal to dot of row j. Same conditions
 * as above. */
float llm__q4_k_dot_tiled(int64_t n, const void *w, const void *a);
void llm__q4_k_dot4_tiled(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]);
float llm__q6_k_dot_tiled(int64_t n, const void *w, const void *a);
void llm__q6_k_dot4_tiled(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]);
float llm__q5_k_dot_tiled(int64_t n, const void *w, const void *a);
void llm__q5_k_dot4_tiled(int64_t n, const void *w, const void *a, size_t a_stride, float out[4]);
/* CPU features the kernels use (cpu_features.c), as flags. Each implies
 * LLM__CPU_AVX2: without it (or without the AVX2 variants in the build) the
 * answer is 0. */
#define LLM__CPU_AVX2 0x01u        /* AVX2 + FMA + F16C */
#define LLM__CPU_AVX_VNNI 0x02u    /* VEX vpdpbusd / vpdpwssd on ymm */
#define LLM__CPU_AVX512F 0x04u     /* AVX-512F */
#define LLM__CPU_AVX512DQ 0x08u    /* AVX-512 F and DQ */
#define LLM__CPU_AVX512_VNNI 0x10u /* AVX-512 F, BW, DQ, VL and VNNI */
#define LLM__CPU_GFNI 0x20u        /* GFNI (with AVX-512 VNNI: Q5_K's prepared product) */
/* The running CPU's features. */
unsigned llm__cpu_features(void);
/* The same, without those above an LLM__ISA_ level: SCALAR none, AVX2 only
 * LLM__CPU_AVX2, AVX_VNNI adds LLM__CPU_AVX_VNNI, ALL everything. */
unsigned llm__cpu_features_upto(int level);
/* Non-zero if the running CPU supports AVX2, FMA and F16C and the variants were built. */
int llm__cpu_has_avx2(void);

/* Scalar reference entry points (also used by tests through the registry). */
/* out[i] = gelu_erf(x[i]) for i < n (kernels/ref.c; the AVX2 variant is
 * cpu.h llm__gelu_erf_row_avx2). */
void llm__gelu_erf_row_scalar(float *out, const float *x, int64_t n);
float llm__dot_f16_scalar(int64_t n, const uint16_t *x, const uint16_t *y);
float llm__dot_f32_scalar(int64_t n, const float *x, const float *y);

#endif
