/*
 * cpu/ops_cpu.c -- row-wise and elementwise CPU ops: get_rows, rms_norm,
 * swiglu/geglu/add/mul/scale, softmax, argmax, rope.
 *
 * Work is split by whole rows (or elements) between threads; no op reduces
 * across threads, so results do not depend on the thread count. Small inputs
 * run on the calling thread (waking workers costs more than the work).
 */
#include <math.h>
#include <string.h>

#include "cpu/cpu.h"
#include "rope_llama3.h"

#define PAR_MIN_ELEMS 16384

static int64_t rows_of(const llm_tensor *t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

static int pick_nth(llm_backend *be, int64_t elems, int64_t units) {
    if (elems < PAR_MIN_ELEMS || units < 2) {
        return 1;
    }
    return units < be->n_threads ? (int)units : be->n_threads;
}

/* ---------------------------------------------------------------- get_rows -- */

typedef struct {
    float *out;          /* [n][d] */
    const char *w;       /* [n_rows][row bytes] */
    size_t w_row;
    const int32_t *ids;  /* [n] */
    int64_t n, d;
    llm_dtype t;
    /* A prepared weight (kernels.h prep unpack_row): its groups of 16 rows
     * (gb bytes each), and per thread a row's bytes of scratch; else NULL. */
    const struct llm__prep_kernels *pk;
    const char *grp;
    size_t gb;
    char *tmp;
} rows_ctx;

static void get_rows_task(void *p, int ith, int nth) {
    rows_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->n, ith, nth, &b, &e);
    for (int64_t i = b; i < e; i++) {
        const char *row = c->w + (size_t)c->ids[i] * c->w_row;
        if (c->grp) {
            char *t = c->tmp + (size_t)ith * c->w_row;
            c->pk->unpack_row(c->d, c->grp + (size_t)(c->ids[i] / 16) * c->gb, c->ids[i] % 16, t);
            row = t;
        }
        (void)llm_dtype_dequantize_row(c->t, row, c->out + i * c->d, (size_t)c->d);
    }
}

llm_status llm__cpu_get_rows(llm_backend *be, const llm_tensor *out, const llm_tensor *w,
                             const int32_t *ids, int64_t n) {
    llm__cpu *cpu = llm__cpu_of(be);
    rows_ctx c = {llm__host_ptr(out), llm__host_ptr(w), w->nb[1], ids, n, w->ne[0], w->dtype, NULL, NULL, 0, NULL};
    const int nth = pick_nth(be, n * c.d, n);
    /* A tied embedding whose copy the matmul keeps: its rows come from the
     * copy, so the file's pages of it stay unread (and out of memory). */
    const struct llm__cpu_prep *pr = llm__cpu_prep_find(cpu, w);
    if (pr && cpu->k.prep[w->dtype].unpack_row) {
        llm_status st = llm__cpu_grow(&cpu->rowtmp, &cpu->rowtmp_size, (size_t)nth * w->nb[1], "get_rows",
                                      "row scratch");
        if (st != LLM_OK) return st;
        c.pk = &cpu->k.prep[w->dtype];
        c.grp = pr->data;
        c.gb = c.pk->group_bytes(w->ne[0]);
        c.tmp = cpu->rowtmp;
    }
    llm__threadpool_run(cpu->tp, get_rows_task, &c, nth);
    return LLM_OK;
}

/* ---------------------------------------------------------------- rms_norm -- */

typedef struct {
    const llm__cpu_kernels *k;
    float *out;
    const float *x, *w;
    int64_t rows, d;
    float eps;
} norm_ctx;

static void rms_norm_task(void *p, int ith, int nth) {
    norm_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->rows, ith, nth, &b, &e);
    for (int64_t i = b; i < e; i++) {
        c->k->rms_norm_row(c->out + i * c->d, c->x + i * c->d, c->w, c->d, c->eps);
    }
}

llm_status llm__cpu_rms_norm(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                             const llm_tensor *weight, float eps) {
    llm__cpu *cpu = llm__cpu_of(be);
    norm_ctx c = {&cpu->k, llm__host_ptr(out), llm__host_ptr(x),
                  weight ? (const float *)llm__host_ptr(weight) : NULL, rows_of(x), x->ne[0], eps};
    llm__threadpool_run(cpu->tp, rms_norm_task, &c, pick_nth(be, c.rows * c.d, c.rows));
    return LLM_OK;
}

/* ------------------------------------------------------------ elementwise -- */

enum { EW_ADD, EW_MUL, EW_SCALE };

typedef struct {
    float *out;
    const float *a, *b;
    float s;
    int64_t n;
    int64_t bd; /* 0: b has n elements; else b is one row of bd floats, repeated */
    int kind;
} ew_ctx;

static void ew_task(void *p, int ith, int nth) {
    ew_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->n, ith, nth, &b, &e);
    float *o = c->out;
    const float *x = c->a, *y = c->b;
    switch (c->kind) {
    case EW_ADD:
        if (!c->bd) {
            for (int64_t i = b; i < e; i++) o[i] = x[i] + y[i];
            break;
        }
        /* Broadcast row (a bias): runs of one row, each a plain loop the
         * compiler vectorizes; one F32 add per element either way. */
        for (int64_t i = b, m; i < e; i += m) {
            const int64_t j = i % c->bd;
            m = c->bd - j < e - i ? c->bd - j : e - i;
            for (int64_t k = 0; k < m; k++) o[i + k] = x[i + k] + y[j + k];
        }
        break;
    case EW_MUL:
        if (!c->bd) {
            for (int64_t i = b; i < e; i++) o[i] = x[i] * y[i];
            break;
        }
        for (int64_t i = b, m; i < e; i += m) { /* broadcast row, as for add */
            const int64_t j = i % c->bd;
            m = c->bd - j < e - i ? c->bd - j : e - i;
            for (int64_t k = 0; k < m; k++) o[i + k] = x[i + k] * y[j + k];
        }
        break;
    default:
        for (int64_t i = b; i < e; i++) o[i] = x[i] * c->s;
        break;
    }
}

static llm_status ew_run(llm_backend *be, int kind, const llm_tensor *out, const llm_tensor *a,
                         const llm_tensor *b, float s) {
    ew_ctx c = {llm__host_ptr(out), llm__host_ptr(a), b ? (const float *)llm__host_ptr(b) : NULL, s,
                out->ne[0] * rows_of(out), 0, kind};
    if (b && rows_of(b) != rows_of(out)) {
        c.bd = b->ne[0]; /* add or mul of a single row, validated in ops.c */
    }
    int nth = pick_nth(be, c.n, c.n);
    llm__threadpool_run(llm__cpu_of(be)->tp, ew_task, &c, nth);
    return LLM_OK;
}

llm_status llm__cpu_add(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                        const llm_tensor *b) {
    return ew_run(be, EW_ADD, out, a, b, 0.0f);
}
llm_status llm__cpu_mul(llm_backend *be, const llm_tensor *out, const llm_tensor *a,
                        const llm_tensor *b) {
    return ew_run(be, EW_MUL, out, a, b, 0.0f);
}
/* SwiGLU goes by whole rows: the kernel's exp switches method at a fixed
 * offset from the row start (see kernels.h), so a split inside a row would
 * change results with the thread count. */
typedef struct {
    const llm__cpu_kernels *k;
    float *out;
    const float *x, *g;
    int64_t rows, d;
} swiglu_ctx;

static void swiglu_task(void *p, int ith, int nth) {
    swiglu_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->rows, ith, nth, &b, &e);
    for (int64_t r = b; r < e; r++) {
        c->k->swiglu_row(c->out + r * c->d, c->x + r * c->d, c->g + r * c->d, c->d);
    }
}

llm_status llm__cpu_swiglu(llm_backend *be, const llm_tensor *out, const llm_tensor *gate,
                           const llm_tensor *up) {
    swiglu_ctx c = {&llm__cpu_of(be)->k, llm__host_ptr(out), llm__host_ptr(gate), llm__host_ptr(up),
                    rows_of(out), out->ne[0]};
    llm__threadpool_run(llm__cpu_of(be)->tp, swiglu_task, &c, pick_nth(be, c.rows * c.d, c.rows));
    return LLM_OK;
}
/* GEGLU is elementwise with no position-dependent method: split by
 * elements like add. */
typedef struct {
    const llm__cpu_kernels *k;
    const uint16_t *table;
    float *out;
    const float *x, *g;
    int64_t n;
} geglu_ctx;

static void geglu_task(void *p, int ith, int nth) {
    geglu_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->n, ith, nth, &b, &e);
    c->k->geglu_row(c->out + b, c->x + b, c->g + b, e - b, c->table);
}

llm_status llm__cpu_geglu(llm_backend *be, const llm_tensor *out, const llm_tensor *gate,
                          const llm_tensor *up) {
    geglu_ctx c = {&llm__cpu_of(be)->k, llm__gelu_f16_table(), llm__host_ptr(out), llm__host_ptr(gate),
                   llm__host_ptr(up), out->ne[0] * rows_of(out)};
    llm__threadpool_run(llm__cpu_of(be)->tp, geglu_task, &c, pick_nth(be, c.n, c.n));
    return LLM_OK;
}

llm_status llm__cpu_scale(llm_backend *be, const llm_tensor *out, const llm_tensor *x, float s) {
    return ew_run(be, EW_SCALE, out, x, NULL, s);
}

/* ----------------------------------------------------------------- softmax -- */

typedef struct {
    const llm__cpu_kernels *k;
    float *out;
    const float *x;
    int64_t rows, d;
} sm_ctx;

static void softmax_task(void *p, int ith, int nth) {
    sm_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->rows, ith, nth, &b, &e);
    for (int64_t r = b; r < e; r++) {
        const float *x = c->x + r * c->d;
        float *o = c->out + r * c->d;
        float mx = -INFINITY;
        for (int64_t i = 0; i < c->d; i++) mx = x[i] > mx ? x[i] : mx;
        const double sum = c->k->exp_sum_row(o, x, mx, c->d);
        const float inv = (float)(1.0 / sum);
        for (int64_t i = 0; i < c->d; i++) o[i] *= inv;
    }
}

llm_status llm__cpu_softmax(llm_backend *be, const llm_tensor *out, const llm_tensor *x) {
    sm_ctx c = {&llm__cpu_of(be)->k, llm__host_ptr(out), llm__host_ptr(x), rows_of(x), x->ne[0]};
    llm__threadpool_run(llm__cpu_of(be)->tp, softmax_task, &c, pick_nth(be, c.rows * c.d, c.rows));
    return LLM_OK;
}

/* ------------------------------------------------------------------ argmax -- */

llm_status llm__cpu_argmax(llm_backend *be, const llm_tensor *x, int32_t *out_ids) {
    (void)be;
    const float *p = llm__host_ptr(x);
    int64_t rows = rows_of(x), d = x->ne[0];
    for (int64_t r = 0; r < rows; r++) {
        const float *v = p + r * d;
        int64_t best = 0;
        for (int64_t i = 1; i < d; i++) {
            if (v[i] > v[best]) best = i;
        }
        out_ids[r] = (int32_t)best;
    }
    return LLM_OK;
}

/* -------------------------------------------------------------------- rope -- */

typedef struct {
    float *x;                /* [n][n_head][head_dim] */
    const int32_t *pos;      /* [n] */
    const llm_rope_params *p;
    int64_t n, n_head, hd;
    float theta_scale;
    float mscale;            /* p->attn_factor, 0 read as 1 */
} rope_ctx;

static void rope_task(void *vp, int ith, int nth) {
    rope_ctx *c = vp;
    const llm_rope_params *p = c->p;
    const int half = p->n_dims / 2;
    int64_t b, e;
    llm__split_range(c->n, ith, nth, &b, &e);
    for (int64_t t = b; t < e; t++) {
        /* theta_i = pos * base^(-2i/n_dims), built by repeated multiplication
         * in float as llama.cpp does, so angles round the same way. */
        float theta = (float)c->pos[t];
        for (int i = 0; i < half; i++) {
            float th = theta;
            if (p->freq_factors) {
                th /= p->freq_factors[i];
            } else if (p->scaling == LLM_ROPE_SCALE_LLAMA3) {
                th /= llm__rope_llama3_factor(p, i);
            }
            if (p->scaling == LLM_ROPE_SCALE_LINEAR) {
                th *= p->freq_scale;
            }
            /* times the magnitude factor, as llama.cpp's rope_yarn (exact when 1) */
            const float cs = cosf(th) * c->mscale, sn = sinf(th) * c->mscale;
            for (int64_t h = 0; h < c->n_head; h++) {
                float *v = c->x + (t * c->n_head + h) * c->hd;
                int64_t i0 = p->mode == LLM_ROPE_MODE_NEOX ? i : 2 * i;
                int64_t i1 = p->mode == LLM_ROPE_MODE_NEOX ? i + half : 2 * i + 1;
                const float x0 = v[i0], x1 = v[i1];
                /* One product rounded, the other fused: the form gcc gives
                 * llama.cpp's x0*cos - x1*sin (C++ contracts by default);
                 * with two roundings the rotated q/k differ in the last bit. */
                v[i0] = fmaf(x0, cs, -(x1 * sn));
                v[i1] = fmaf(x0, sn, x1 * cs);
            }
            theta *= c->theta_scale;
        }
    }
}

llm_status llm__cpu_rope(llm_backend *be, const llm_tensor *x, const int32_t *positions,
                         const llm_rope_params *p) {
    rope_ctx c = {llm__host_ptr(x), positions, p, x->ne[2], x->ne[1], x->ne[0],
                  powf(p->freq_base, -2.0f / (float)p->n_dims), p->attn_factor != 0.0f ? p->attn_factor : 1.0f};
    llm__threadpool_run(llm__cpu_of(be)->tp, rope_task, &c,
                        pick_nth(be, c.n * c.n_head * c.hd, c.n));
    return LLM_OK;
}
