/*
 * cpu/encoder_cpu.c -- the encoder ops on the CPU: LayerNorm with bias,
 * erf GELU, and bidirectional attention of one sequence over itself.
 *
 * Work is split by whole rows (LayerNorm), elements (GELU) or (query, head)
 * pairs (attention; (sequence, head) pairs with AVX2); each output is computed by one thread in a fixed order,
 * so results depend neither on the thread count nor on the other rows of a
 * batch (llm_embed's contract: a text's vector is the same whatever it was
 * batched with).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/vexp.h"

#define PAR_MIN_ELEMS 16384

static int64_t rows_of(const llm_tensor *t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

static int pick_nth(llm_backend *be, int64_t elems, int64_t units) {
    if (elems < PAR_MIN_ELEMS || units < 2) return 1;
    return units < be->n_threads ? (int)units : be->n_threads;
}

/* -------------------------------------------------------------- layer_norm -- */

typedef struct {
    float *out;           /* [rows][d] */
    const float *x;       /* [rows][d] */
    const float *w, *b;   /* [d] or NULL */
    int64_t rows, d;
    float eps;
} ln_ctx;

/* ggml_norm's order: mean and variance summed in double, then
 * (x - mean) * 1/sqrt(var + eps) in float; then * w and + b as separate
 * float operations (llama.cpp's build_norm: ggml_mul then ggml_add). */
static void ln_task(void *p, int ith, int nth) {
    ln_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->rows, ith, nth, &b, &e);
    for (int64_t i = b; i < e; i++) {
        const float *x = c->x + i * c->d;
        float *o = c->out + i * c->d;
        double sum = 0.0;
        for (int64_t j = 0; j < c->d; j++) sum += (double)x[j];
        const float mean = (float)(sum / (double)c->d);
        double sum2 = 0.0;
        for (int64_t j = 0; j < c->d; j++) {
            const float y = x[j] - mean;
            o[j] = y;
            sum2 += (double)(y * y);
        }
        const float var = (float)(sum2 / (double)c->d);
        const float scale = 1.0f / sqrtf(var + c->eps);
        for (int64_t j = 0; j < c->d; j++) o[j] *= scale;
        if (c->w)
            for (int64_t j = 0; j < c->d; j++) o[j] *= c->w[j];
        if (c->b)
            for (int64_t j = 0; j < c->d; j++) o[j] += c->b[j];
    }
}

llm_status llm__cpu_layer_norm(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                               const llm_tensor *weight, const llm_tensor *bias, float eps) {
    ln_ctx c = {llm__host_ptr(out), llm__host_ptr(x), weight ? (const float *)llm__host_ptr(weight) : NULL,
                bias ? (const float *)llm__host_ptr(bias) : NULL, rows_of(x), x->ne[0], eps};
    llm__threadpool_run(llm__cpu_of(be)->tp, ln_task, &c, pick_nth(be, c.rows * c.d, c.rows));
    return LLM_OK;
}

/* -------------------------------------------------------------------- gelu -- */

typedef struct {
    float *out;
    const float *x;
    int64_t n;
    void (*row)(float *out, const float *x, int64_t n);
} gelu_ctx;

static void gelu_task(void *p, int ith, int nth) {
    gelu_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->n, ith, nth, &b, &e);
    c->row(c->out + b, c->x + b, e - b);
}

llm_status llm__cpu_gelu(llm_backend *be, const llm_tensor *out, const llm_tensor *x) {
    gelu_ctx c = {llm__host_ptr(out), llm__host_ptr(x), x->ne[0] * rows_of(x), llm__gelu_erf_row_scalar};
    if (llm__cpu_of(be)->k.isa >= LLM__ISA_AVX2) c.row = llm__gelu_erf_row_avx2;
    llm__threadpool_run(llm__cpu_of(be)->tp, gelu_task, &c, pick_nth(be, c.n, c.n));
    return LLM_OK;
}

/* ---------------------------------------------------------- attention_full -- */

typedef struct {
    const llm__cpu_kernels *k;
    float *out;          /* [n][n_head][hd] */
    const float *q;      /* [n][n_head][hd] */
    const float *kk, *v; /* [n][n_kv][hd] */
    int64_t n, n_head, n_kv, hd;
    float scale;
    float **scratch;     /* per thread: [longest sequence] scores + [hd] accumulator */
    const int32_t *seq_of; /* [n] sequence of each token */
    const int64_t *start;  /* [n_seqs + 1] first token of each sequence, then n */
    int64_t n_seqs;
} fa_ctx;

static void fa_task(void *p, int ith, int nth) {
    fa_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->n * c->n_head, ith, nth, &b, &e);
    const int64_t group = c->n_head / c->n_kv, hd = c->hd;
    float *s = c->scratch[ith];
    for (int64_t u = b; u < e; u++) {
        const int64_t i = u / c->n_head, h = u % c->n_head, g = h / group;
        const int32_t sq = c->seq_of[i];
        const int64_t j0 = c->start[sq], n = c->start[sq + 1] - j0;
        float *acc = s + n;
        const float *qi = c->q + (i * c->n_head + h) * hd;
        const float *kk = c->kk + j0 * c->n_kv * hd, *vv = c->v + j0 * c->n_kv * hd;
        float mx = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
            s[j] = c->k->dot_f32(hd, qi, kk + (j * c->n_kv + g) * hd) * c->scale;
            mx = s[j] > mx ? s[j] : mx;
        }
        double sum = 0.0;
        for (int64_t j = 0; j < n; j++) {
            s[j] = llm__exp_poly(s[j] - mx);
            sum += (double)s[j];
        }
        const float inv = (float)(1.0 / sum);
        memset(acc, 0, (size_t)hd * sizeof *acc);
        for (int64_t j = 0; j < n; j++) {
            const float pj = s[j] * inv;
            const float *vj = vv + (j * c->n_kv + g) * hd;
            for (int64_t d = 0; d < hd; d++) acc[d] += pj * vj[d]; /* vectorized; no libm fmaf call */
        }
        memcpy(c->out + (i * c->n_head + h) * hd, acc, (size_t)hd * sizeof *acc);
    }
}

/* AVX2: one (sequence, head) per unit (llm__attn_full_seq_avx2). */
static void fa_seq_task(void *p, int ith, int nth) {
    fa_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->n_seqs * c->n_head, ith, nth, &b, &e);
    const int64_t group = c->n_head / c->n_kv, hd = c->hd;
    for (int64_t u = b; u < e; u++) {
        const int64_t sq = u / c->n_head, h = u % c->n_head, g = h / group;
        const int64_t j0 = c->start[sq], n = c->start[sq + 1] - j0;
        llm__attn_full_seq_avx2(n, hd, c->q + (j0 * c->n_head + h) * hd, (size_t)(c->n_head * hd),
                                c->kk + (j0 * c->n_kv + g) * hd, c->v + (j0 * c->n_kv + g) * hd,
                                (size_t)(c->n_kv * hd), c->scale, c->out + (j0 * c->n_head + h) * hd,
                                (size_t)(c->n_head * hd), c->scratch[ith], c->k->exp_sum_row);
    }
}

llm_status llm__cpu_attention_full(llm_backend *be, const llm_tensor *out, const llm_tensor *q,
                                   const llm_tensor *k, const llm_tensor *v, const int32_t *seq_lens,
                                   int32_t n_seqs, float scale) {
    llm__cpu *cpu = llm__cpu_of(be);
    fa_ctx c = {&cpu->k, llm__host_ptr(out), llm__host_ptr(q), llm__host_ptr(k), llm__host_ptr(v),
                q->ne[2] * q->ne[3], q->ne[1], k->ne[1], q->ne[0], scale, NULL, NULL, NULL, 0};
    /* Host index of the packing (validated in ops_encoder.c). */
    int32_t *seq_of = malloc((size_t)c.n * sizeof *seq_of);
    int64_t *start = malloc(((size_t)n_seqs + 1) * sizeof *start);
    if (!seq_of || !start) {
        free(seq_of);
        free(start);
        return llm__err(LLM_ERR_NO_MEMORY, "attention_full: out of memory");
    }
    int64_t longest = 0, work = 0;
    start[0] = 0;
    for (int32_t s = 0; s < n_seqs; s++) {
        start[s + 1] = start[s] + seq_lens[s];
        for (int64_t i = start[s]; i < start[s + 1]; i++) seq_of[i] = s;
        longest = seq_lens[s] > longest ? seq_lens[s] : longest;
        work += (int64_t)seq_lens[s] * seq_lens[s];
    }
    const int simd = cpu->k.isa >= LLM__ISA_AVX2 && c.hd % 8 == 0;
    const int64_t l8 = (longest + 7) & ~(int64_t)7;
    llm_status st = llm__cpu_reserve_tscratch(cpu, be->n_threads, simd ? (size_t)((c.hd + 1) * l8)
                                                                      : (size_t)(longest + c.hd));
    if (st == LLM_OK) {
        c.scratch = cpu->tscratch;
        c.seq_of = seq_of;
        c.start = start;
        c.n_seqs = n_seqs;
        if (simd) {
            llm__threadpool_run(cpu->tp, fa_seq_task, &c, pick_nth(be, work * c.n_head * c.hd, n_seqs * c.n_head));
        } else {
            const int64_t units = c.n * c.n_head;
            llm__threadpool_run(cpu->tp, fa_task, &c, pick_nth(be, work * c.n_head * c.hd, units));
        }
    }
    free(seq_of);
    free(start);
    return st;
}
