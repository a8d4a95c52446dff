/*
 * cpu/ssm_cpu.c -- the recurrent ops on the CPU (llama/runtime.h "Recurrent
 * ops"): unary functions, the causal convolution with its carried state, and
 * the gated delta rule, in llama.cpp's float order (ggml-cpu's unary ops,
 * ssm_conv and gated_delta_net with one state slot).
 *
 * Work is split by whole elements, channels or heads, never inside one
 * reduction, so results do not depend on the thread count. The inner vector
 * steps come from the kernel registry (dot_f32, fa_mad_f32, fa_scale_f32,
 * silu_row): the scalar table is the reference (its dot sums in double), the
 * AVX2 table sums as llama.cpp's AVX2 build does.
 */
#include <math.h>
#include <string.h>

#include "cpu/cpu.h"

#define PAR_MIN_ELEMS 16384

static int64_t rows_of(const llm_tensor *t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

static int pick_nth(llm_backend *be, int64_t work, int64_t units) {
    if (work < PAR_MIN_ELEMS || units < 2) return 1;
    return units < be->n_threads ? (int)units : be->n_threads;
}

/* ------------------------------------------------------------------ unary -- */

typedef struct {
    const llm__cpu_kernels *k;
    float *out;
    const float *x;
    int64_t rows, d;
    llm_unary kind;
} unary_ctx;

static void unary_task(void *p, int ith, int nth) {
    unary_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->rows, ith, nth, &b, &e);
    for (int64_t r = b; r < e; r++) {
        float *o = c->out + r * c->d;
        const float *x = c->x + r * c->d;
        switch (c->kind) {
        case LLM_UNARY_SILU: /* per row, as ggml's silu: 8-lane groups from the row start */
            c->k->silu_row(o, x, c->d);
            break;
        case LLM_UNARY_SIGMOID:
            for (int64_t i = 0; i < c->d; i++) o[i] = 1.0f / (1.0f + expf(-x[i]));
            break;
        default: /* softplus, with ggml's cut-off at 20 */
            for (int64_t i = 0; i < c->d; i++) o[i] = x[i] > 20.0f ? x[i] : logf(1.0f + expf(x[i]));
            break;
        }
    }
}

llm_status llm__cpu_unary(llm_backend *be, const llm_tensor *out, const llm_tensor *x, llm_unary kind) {
    llm__cpu *cpu = llm__cpu_of(be);
    unary_ctx c = {&cpu->k, llm__host_ptr(out), llm__host_ptr(x), rows_of(x), x->ne[0], kind};
    llm__threadpool_run(cpu->tp, unary_task, &c, pick_nth(be, c.rows * c.d, c.rows));
    return LLM_OK;
}

/* --------------------------------------------------------------- ssm_conv -- */

typedef struct {
    float *out;        /* [n][C] */
    const float *x;    /* [n][C] */
    float *state;      /* [K-1][C] */
    const float *w;    /* [C][K] */
    int64_t n, C, K;
} conv_ctx;

/* Channels [b, e): the window of a channel is state rows then x rows. Each
 * output is llama.cpp's sumf += s * c from 0 over the kernel taps in
 * ascending order, a product and a sum each rounded; the loops run token by
 * token with the channels innermost (contiguous rows). */
static void conv_task(void *p, int ith, int nth) {
    conv_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->C, ith, nth, &b, &e);
    const int64_t K = c->K, C = c->C, n = c->n;
    for (int64_t t = 0; t < n; t++) {
        float *o = c->out + t * C;
        for (int64_t ch = b; ch < e; ch++) o[ch] = 0.0f;
        for (int64_t i = 0; i < K; i++) {
            const int64_t r = t + i; /* row of the window */
            const float *row = r < K - 1 ? c->state + r * C : c->x + (r - (K - 1)) * C;
            const float *w = c->w + i;
            for (int64_t ch = b; ch < e; ch++) o[ch] += row[ch] * w[ch * K];
        }
    }
    /* The new state: the window's last K - 1 rows (ascending, so a state row
     * still to be read is never overwritten first). */
    for (int64_t r = 0; r < K - 1; r++) {
        const int64_t src = n + r; /* window row */
        const float *row = src < K - 1 ? c->state + src * C : c->x + (src - (K - 1)) * C;
        memmove(c->state + r * C + b, row + b, (size_t)(e - b) * sizeof(float));
    }
}

llm_status llm__cpu_ssm_conv(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *state,
                             const llm_tensor *w) {
    conv_ctx c = {llm__host_ptr(out), llm__host_ptr(x), llm__host_ptr(state), llm__host_ptr(w),
                  rows_of(x), x->ne[0], w->ne[0]};
    llm__threadpool_run(llm__cpu_of(be)->tp, conv_task, &c, pick_nth(be, c.n * c.C * c.K, c.C));
    return LLM_OK;
}

/* ------------------------------------------------------------ gated_delta -- */

typedef struct {
    const llm__cpu_kernels *k;
    float *out;                      /* [n][Hv][D] */
    const float *q, *kk, *v;         /* [n][Hk][D], [n][Hk][D], [n][Hv][D] */
    const float *g, *beta;           /* [n][Hv] */
    float *state;                    /* [Hv][D][D]: state[h][j][i] = S[i][j] */
    float **scratch;                 /* per piece: D floats */
    int64_t n, Hv, Hk, D;
} gdn_ctx;

static void gdn_task(void *p, int ith, int nth) {
    gdn_ctx *c = p;
    const llm__cpu_kernels *k = c->k;
    int64_t b, e;
    llm__split_range(c->Hv, ith, nth, &b, &e);
    const int64_t D = c->D, Hv = c->Hv, Hk = c->Hk;
    const float scale = 1.0f / sqrtf((float)D);
    float *delta = c->scratch[ith];
    for (int64_t h = b; h < e; h++) {
        float *S = c->state + h * D * D;
        const int64_t hk = h % Hk; /* llama.cpp's head mapping for H_v > H_k */
        for (int64_t t = 0; t < c->n; t++) {
            const float *q = c->q + (t * Hk + hk) * D, *kv = c->kk + (t * Hk + hk) * D;
            const float *v = c->v + (t * Hv + h) * D;
            const float beta = c->beta[t * Hv + h];
            float *o = c->out + (t * Hv + h) * D;
            k->fa_scale_f32(D * D, S, expf(c->g[t * Hv + h]));
            for (int64_t j = 0; j < D; j++) delta[j] = (v[j] - k->dot_f32(D, S + j * D, kv)) * beta;
            for (int64_t j = 0; j < D; j++) k->fa_mad_f32(D, S + j * D, kv, delta[j]);
            for (int64_t j = 0; j < D; j++) o[j] = k->dot_f32(D, S + j * D, q) * scale;
        }
    }
}

llm_status llm__cpu_gated_delta(llm_backend *be, const llm_tensor *out, const llm_tensor *q, const llm_tensor *k,
                                const llm_tensor *v, const llm_tensor *g, const llm_tensor *beta,
                                const llm_tensor *state) {
    llm__cpu *cpu = llm__cpu_of(be);
    const int64_t D = v->ne[0];
    llm_status st = llm__cpu_reserve_tscratch(cpu, be->n_threads, (size_t)D);
    if (st != LLM_OK) return st;
    gdn_ctx c = {&cpu->k, llm__host_ptr(out), llm__host_ptr(q), llm__host_ptr(k), llm__host_ptr(v),
                 llm__host_ptr(g), llm__host_ptr(beta), llm__host_ptr(state), cpu->tscratch,
                 v->ne[2] * v->ne[3], v->ne[1], q->ne[1], D};
    llm__threadpool_run(cpu->tp, gdn_task, &c, pick_nth(be, c.n * D * D * 4, c.Hv));
    return LLM_OK;
}
