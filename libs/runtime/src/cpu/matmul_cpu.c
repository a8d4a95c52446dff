/*
 * cpu/matmul_cpu.c -- out[n][M] = x[n][K] . w[M][K]^T for every weight type.
 *
 * Phase 1 converts each activation row to the weight type's partner type
 * (Q8_0 / Q8_1 / Q8_K / F16 / BF16; F32 weights use x as is). Phase 2 splits
 * the M weight rows into contiguous pieces (PIECES per thread, one for
 * decode; claimed by whichever thread is free) and walks each in tiles of
 * TILE rows, so a tile stays in cache while every activation row passes
 * over it; a pair with dot8 takes 8 weight rows by up to 4 activation rows
 * per call, and one with pack8 (a prompt pass) packs each tile's groups of
 * 8 rows once for all its activation rows (kernels.h llm__pack8_fn). Each
 * output element is one dot product computed by one thread, so results are
 * identical for any thread count. F16 / BF16 calls that take the sgemm pair
 * go to the tiled product (gemm_cpu.c), whose order is the pair's, from
 * GEMM_MIN_ROWS_IN_PLACE rows (or _F16_PACKED / _BF16_PACKED without the
 * in-place block).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise */
#include <stdlib.h>
#include <sys/mman.h>

#include "cpu/cpu.h"
#include "dtype/blocks.h"

#define TILE 16
#define PIECES 4
/* Up to this many activation rows a matmul streams its weights from memory
 * (decode, batched decode): a stream dot8 prefetches ahead (kernels.h).
 * Above, the rows are prompt passes that keep each tile in cache while many
 * rows pass over it. (A prefetch of the next tile for the other kernels was
 * tried: it helped one model and slowed the default one; see
 * docs/PERFORMANCE.md.) */
#define STREAM_ROWS 16
/* A prepared weight's groups (kernels.h prep) are read from memory by their
 * first pass whatever the row count, so that pass prefetches
 * (LLM__PREP_STREAM) for prompts too (faster or even on every model
 * measured: see docs/PERFORMANCE.md).
 *
 * From PREP_TILE_ROWS activation rows, a prepared weight with packed tiles
 * (kernels.h prep pack16: Q6_K, Q5_K, Q3_K, Q2_K) is decoded into them once per group
 * and matmul instead of once per max_a rows; below it the tiles lose (the
 * dot's 8-row passes stream with prefetch and decode only twice). Tuned:
 * see docs/PERFORMANCE.md. */
#define PREP_TILE_ROWS 32

typedef struct {
    const llm__cpu_kernels *k;
    const float *x;     /* [n][K] */
    float *out;         /* [n][M] */
    const char *w;      /* [M][w_row bytes] */
    const char *act;    /* [n][a_row bytes] */
    char *act_w;        /* writable alias of act during phase 1 */
    float *sc;          /* NULL, or [n / 4][K / 32][8] unpacked scales (kernels.h dot2x4) */
    float *sc_rem;      /* NULL, or [n - full][K / 32][2] for the rows after the groups (dot4x1) */
    int64_t full;       /* rows done in groups of 4 (dot4 / dot2x4): n & ~3 with dot4, else 0 */
    int64_t n, K, M;
    size_t w_row, a_row;
    llm_dtype act_type;
} mm_ctx;

static void quantize_task(void *p, int ith, int nth) {
    mm_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->n, ith, nth, &b, &e);
    const int64_t nb = c->K / 32, full = c->full;
    for (int64_t i = b; i < e; i++) {
        char *row = c->act_w + (size_t)i * c->a_row;
        c->k->quantize[c->act_type](c->x + i * c->K, row, c->K);
        /* Where this row's d and s go: lane i % 4 of its group's [8] (d at
         * +0, s at +4), or [2] per block after the groups. */
        float *sc;
        int64_t step, s_off;
        if (i < full && c->sc) {
            sc = c->sc + (i / 4) * nb * 8 + i % 4, step = 8, s_off = 4;
        } else if (i >= full && c->sc_rem) {
            sc = c->sc_rem + (i - full) * nb * 2, step = 2, s_off = 1;
        } else {
            continue;
        }
        if (c->act_type == LLM_DTYPE_Q8_1) {
            const llm_block_q8_1 *y = (const llm_block_q8_1 *)row;
            for (int64_t k = 0; k < nb; k++) {
                sc[step * k] = llm_fp16_to_fp32(y[k].d);
                sc[step * k + s_off] = llm_fp16_to_fp32(y[k].s);
            }
        } else {
            const llm_block_q8_0 *y = (const llm_block_q8_0 *)row;
            for (int64_t k = 0; k < nb; k++) sc[step * k] = llm_fp16_to_fp32(y[k].d);
        }
    }
}

/* mm_ctx plus the dot function, loaded once per call. */
typedef struct {
    mm_ctx base;
    llm__vec_dot_fn dot;
    llm__vec_dot4_fn dot4;     /* may be NULL */
    llm__vec_dot2x4_fn dot2x4; /* may be NULL (only used with dot4) */
    llm__vec_dot4x1_fn dot4x1; /* may be NULL */
    llm__vec_dot8_fn dot8;     /* may be NULL (rows8 / tiled / sgemm pairs only) */
    /* Packed tiles (kernels.h llm__pack8_fn), or pk NULL: per piece ith,
     * TILE / 8 groups of pk_bytes at pk + ith * TILE / 8 * pk_bytes. */
    llm__pack8_fn pack8;
    llm__vec_dot8x4_packed_fn dot8x4_packed;
    llm__vec_dot16x4_packed_fn dot16x4_packed; /* may be NULL */
    char *pk;
    size_t pk_bytes;
} mm_ctx2;

static void dot_task2(void *p, int ith, int nth) {
    mm_ctx2 *c2 = p;
    mm_ctx *c = &c2->base;
    int64_t b, e;
    llm__split_range(c->M, ith, nth, &b, &e);
    for (int64_t m0 = b; m0 < e; m0 += TILE) {
        int64_t m1 = m0 + TILE < e ? m0 + TILE : e;
        int64_t i = 0;
        if (c->full > 0) {
            /* A prompt pass: the tile's groups of 8 rows packed once for all
             * its activation rows (kernels.h llm__pack8_fn). */
            char *pk = c2->pk ? c2->pk + (size_t)ith * (TILE / 8) * c2->pk_bytes : NULL;
            int64_t m_pk = m0; /* rows m0 .. m_pk are packed */
            for (; pk && m_pk + 8 <= m1; m_pk += 8) {
                c2->pack8(c->K, c->w + (size_t)m_pk * c->w_row, c->w_row, pk + (size_t)(m_pk - m0) / 8 * c2->pk_bytes);
            }
            /* Four activation rows per weight row: the weight blocks are
             * decoded once for four outputs (same bits as four dots). */
            for (; i < c->full; i += 4) {
                const char *a = c->act + (size_t)i * c->a_row;
                float *o = c->out + i * c->M;
                int64_t m = m0;
                if (c2->dot16x4_packed) {
                    for (; m + 16 <= m_pk; m += 16) {
                        c2->dot16x4_packed(c->K, pk + (size_t)(m - m0) / 8 * c2->pk_bytes, c2->pk_bytes, a, c->a_row,
                                           o + m, (size_t)c->M);
                    }
                }
                for (; m < m_pk; m += 8) {
                    c2->dot8x4_packed(c->K, pk + (size_t)(m - m0) / 8 * c2->pk_bytes, a, c->a_row, o + m, (size_t)c->M);
                }
                if (c2->dot8) {
                    for (; m + 8 <= m1; m += 8) {
                        c2->dot8(c->K, c->w + (size_t)m * c->w_row, c->w_row, a, c->a_row, 4, o + m, (size_t)c->M);
                    }
                }
                if (c->sc) {
                    const float *sc = c->sc + (i / 4) * (c->K / 32) * 8;
                    for (; m + 2 <= m1; m += 2) {
                        float r2[2][4];
                        c2->dot2x4(c->K, c->w + (size_t)m * c->w_row, c->w_row, a, c->a_row, sc, r2);
                        for (int j = 0; j < 4; j++) {
                            o[j * c->M + m] = r2[0][j];
                            o[j * c->M + m + 1] = r2[1][j];
                        }
                    }
                }
                for (; m < m1; m++) {
                    float r[4];
                    c2->dot4(c->K, c->w + (size_t)m * c->w_row, a, c->a_row, r);
                    o[m] = r[0];
                    o[c->M + m] = r[1];
                    o[2 * c->M + m] = r[2];
                    o[3 * c->M + m] = r[3];
                }
            }
        }
        const int64_t full = c->full;
        if (c2->dot8 && i < c->n) {
            /* The last n - full (< 4, or all n without dot4) rows, up to 4 per call. */
            for (; i < c->n; i += 4) {
                const int na = c->n - i < 4 ? (int)(c->n - i) : 4;
                const char *a = c->act + (size_t)i * c->a_row;
                float *o = c->out + i * c->M;
                int64_t m = m0;
                for (; m + 8 <= m1; m += 8) {
                    if (na == 4) {
                        /* dot8 with 4 rows means dot4's bits; here dot's are wanted */
                        c2->dot8(c->K, c->w + (size_t)m * c->w_row, c->w_row, a, c->a_row, 2, o + m, (size_t)c->M);
                        c2->dot8(c->K, c->w + (size_t)m * c->w_row, c->w_row, a + 2 * c->a_row, c->a_row, 2,
                                 o + 2 * c->M + m, (size_t)c->M);
                    } else {
                        c2->dot8(c->K, c->w + (size_t)m * c->w_row, c->w_row, a, c->a_row, na, o + m, (size_t)c->M);
                    }
                }
                for (int j = 0; j < na; j++) {
                    for (int64_t mm = m; mm < m1; mm++) {
                        o[j * c->M + mm] = c2->dot(c->K, c->w + (size_t)mm * c->w_row, a + (size_t)j * c->a_row);
                    }
                }
            }
        }
        for (; i < c->n; i++) {
            const char *a = c->act + (size_t)i * c->a_row;
            float *o = c->out + i * c->M;
            int64_t m = m0;
            if (c->sc_rem) {
                /* Four weight rows per call: four independent FMA chains. */
                const float *sc = c->sc_rem + (i - full) * (c->K / 32) * 2;
                for (; m + 4 <= m1; m += 4) {
                    c2->dot4x1(c->K, c->w + (size_t)m * c->w_row, c->w_row, a, sc, o + m);
                }
            }
            for (; m < m1; m++) {
                o[m] = c2->dot(c->K, c->w + (size_t)m * c->w_row, a);
            }
        }
    }
}

/* Rows from which an sgemm-pair call goes to the tiled product (same bits).
 * F16 / BF16 weights are read in place there where the kernels can
 * (kernels.h gemm_rows, AVX2 and AVX-512), which is faster than
 * the pair from 8 rows (about even at 4). Weights packed as floats per
 * call cost more than they save below 64 rows for BF16 and about 128 for
 * F16. Measured: see docs/PERFORMANCE.md. */
#define GEMM_MIN_ROWS_IN_PLACE 8
#define GEMM_MIN_ROWS_F16_PACKED 128
#define GEMM_MIN_ROWS_BF16_PACKED 64

/* How many pieces the M weight rows go out in, in tiles of TILE (16) rows,
 * for nt threads. Small matrices are not worth waking the workers. Prompt
 * passes go out in PIECES pieces per thread (threadpool.h: claimed by
 * whichever thread is free), so on a busy machine a thread that lost its
 * core holds back a small share; each output is still one dot by one
 * thread. Up to STREAM_ROWS rows (decode, batched decode) one piece per
 * thread: each piece starts a new stream the prefetches have not reached
 * yet, and those starts cost more than the balance gains (measured on
 * decode, batched decode and a busy core: see docs/PERFORMANCE.md). */
static int dot_pieces(int64_t M, int64_t K, int64_t n, int nt) {
    if (M * K * n < 32768 || nt <= 1) return 1;
    const int64_t tiles = (M + TILE - 1) / TILE;
    const int per = n <= STREAM_ROWS ? 1 : PIECES;
    return tiles >= (int64_t)nt * per ? nt * per : (int)(tiles > nt ? tiles : nt);
}

/* ------------------------------------------------- prepared weights -- */

/* The copy standing for w (llm_backend_prepare_weight), or NULL. A model's
 * few hundred weights are looked up linearly: next to any matmul, nothing. */
const struct llm__cpu_prep *llm__cpu_prep_find(const llm__cpu *cpu, const llm_tensor *w) {
    for (int i = 0; i < cpu->n_prep; i++) {
        const struct llm__cpu_prep *p = &cpu->prep[i];
        if (p->buf == w->buffer && p->offset == w->offset && p->dtype == w->dtype && p->ne0 == w->ne[0] &&
            p->ne1 == w->ne[1] && p->nb1 == w->nb[1] && w->ne[2] == 1 && w->ne[3] == 1) {
            return p;
        }
    }
    return NULL;
}

typedef struct {
    const struct llm__prep_kernels *pk;
    const char *w;
    size_t w_row, gb;
    char *dst;
    int64_t K, groups;
} repack_ctx;

static void repack_task(void *p, int ith, int nth) {
    const repack_ctx *c = p;
    int64_t b, e;
    llm__split_range(c->groups, ith, nth, &b, &e);
    for (int64_t g = b; g < e; g++) c->pk->repack(c->K, c->w + (size_t)g * 16 * c->w_row, c->w_row, c->dst + (size_t)g * c->gb);
}

llm_status llm__cpu_prepare_weight(llm_backend *be, const llm_tensor *w, int *kept) {
    llm__cpu *cpu = llm__cpu_of(be);
    const struct llm__prep_kernels *pk = &cpu->k.prep[w->dtype];
    size_t row = 0;
    *kept = 0;
    /* Whole groups of 16 rows (kernels.h prep: the copy's bits are those of
     * the matmul without it for such weights), contiguous rows. */
    if (!pk->dot || w->ne[1] <= 0 || w->ne[1] % 16 != 0 || w->ne[2] != 1 ||
        w->ne[3] != 1 || llm_dtype_row_size(w->dtype, (uint64_t)w->ne[0], &row) != LLM_OK || row != w->nb[1]) {
        return LLM_OK;
    }
    if (llm__cpu_prep_find(cpu, w)) {
        *kept = 1;
        return LLM_OK;
    }
    repack_ctx rc = {pk, llm__host_ptr(w), w->nb[1], pk->group_bytes(w->ne[0]), NULL, w->ne[0], w->ne[1] / 16};
    if (rc.gb == 0 || (size_t)rc.groups > SIZE_MAX / rc.gb) {
        return llm__err(LLM_ERR_INVALID_ARG, "prepare_weight: a weight of %lld x %lld is too large",
                        (long long)w->ne[1], (long long)w->ne[0]);
    }
    if (cpu->n_prep == cpu->cap_prep) {
        const int cap = cpu->cap_prep ? 2 * cpu->cap_prep : 64;
        struct llm__cpu_prep *grown = realloc(cpu->prep, (size_t)cap * sizeof(*grown));
        if (!grown) return llm__err(LLM_ERR_NO_MEMORY, "prepare_weight: out of memory");
        cpu->prep = grown;
        cpu->cap_prep = cap;
    }
    /* Its whole 2 MiB stretches in huge pages where the system gives them
     * (a decode streams the copy: fewer TLB misses); the tail in small
     * pages, so nothing resident is added. */
    const size_t bytes = rc.gb * (size_t)rc.groups, huge = (size_t)2 << 20;
    void *mem = NULL; /* posix_memalign: C11 aligned_alloc wants the size a multiple of the alignment */
    rc.dst = posix_memalign(&mem, bytes >= huge ? huge : 64, bytes) == 0 ? mem : NULL;
    if (!rc.dst) {
        return llm__err(LLM_ERR_NO_MEMORY, "prepare_weight: no memory for a copy of %zu bytes", bytes);
    }
#ifdef MADV_HUGEPAGE
    if (bytes >= huge) (void)madvise(rc.dst, bytes / huge * huge, MADV_HUGEPAGE);
#endif
    llm__threadpool_run(cpu->tp, repack_task, &rc, rc.groups < be->n_threads ? (int)rc.groups : be->n_threads);
    cpu->prep[cpu->n_prep++] = (struct llm__cpu_prep){w->buffer, w->offset, w->nb[1], w->dtype, w->ne[0], w->ne[1],
                                                      rc.dst};
    *kept = 1;
    return LLM_OK;
}

void llm__cpu_forget_buffer(llm_backend *be, const llm_buffer *buf) {
    llm__cpu *cpu = llm__cpu_of(be);
    int j = 0;
    for (int i = 0; i < cpu->n_prep; i++) {
        if (cpu->prep[i].buf == buf) {
            free(cpu->prep[i].data);
        } else {
            cpu->prep[j++] = cpu->prep[i];
        }
    }
    cpu->n_prep = j;
}

typedef struct {
    const llm__cpu_kernels *k;
    const struct llm__prep_kernels *pk;
    const float *x;
    float *out;
    const char *grp; /* [M / 16][gb bytes] */
    char *act;       /* [n][a_row bytes] in the weight type's activation type */
    int32_t *ys;     /* [n][K / 32 * aux_ints], or NULL (kernels.h prep aux) */
    size_t gb, a_row, ys_stride;
    int64_t n, K, M;
    llm_dtype act_type;
    char *tiles; /* NULL, or per piece two packed tiles of tile_bytes (kernels.h prep pack16) */
    size_t tile_bytes;
    llm__vec_dot16x4_packed_fn dot16;
    /* unpack16 (kernels.h prep): per piece, after its two tiles, the
     * group's 16 rows in the file's bytes (w_row each); the rows8 pair's
     * pack8 and 8-row product. NULL pack8: not used. */
    llm__pack8_fn pack8;
    llm__vec_dot8x4_packed_fn dot8x4;
    size_t w_row;
} prep_mm;

static void prep_quantize_task(void *p, int ith, int nth) {
    const prep_mm *c = p;
    int64_t b, e;
    llm__split_range(c->n, ith, nth, &b, &e);
    for (int64_t i = b; i < e; i++) {
        char *row = c->act + (size_t)i * c->a_row;
        c->k->quantize[c->act_type](c->x + i * c->K, row, c->K);
        if (c->ys) c->pk->aux(c->K, row, c->ys + (size_t)i * c->ys_stride);
    }
}

static void prep_dot_task(void *p, int ith, int nth) {
    const prep_mm *c = p;
    int64_t b, e;
    llm__split_range(c->M / 16, ith, nth, &b, &e);
    for (int64_t g = b; g < e; g++) {
        const char *grp = c->grp + (size_t)g * c->gb;
        const int64_t step = c->pk->max_a;
        int64_t i = 0;
        if (c->tiles && c->pack8) {
            /* the group back in the file's bytes, packed as the matmul without the copy packs it */
            char *t = c->tiles + (size_t)ith * (2 * c->tile_bytes + 16 * c->w_row), *rows = t + 2 * c->tile_bytes;
            c->pk->unpack16(c->K, grp, rows, c->w_row);
            c->pack8(c->K, rows, c->w_row, t);
            c->pack8(c->K, rows + 8 * c->w_row, c->w_row, t + c->tile_bytes);
            for (; i + 4 <= c->n; i += 4) {
                const char *a = c->act + (size_t)i * c->a_row;
                float *o = c->out + i * c->M + g * 16;
                if (c->dot16) {
                    c->dot16(c->K, t, c->tile_bytes, a, c->a_row, o, (size_t)c->M);
                } else {
                    c->dot8x4(c->K, t, a, c->a_row, o, (size_t)c->M);
                    c->dot8x4(c->K, t + c->tile_bytes, a, c->a_row, o + 8, (size_t)c->M);
                }
            }
        } else if (c->tiles) {
            /* the group decoded once into the tiled pair's packed tiles */
            char *t = c->tiles + (size_t)ith * 2 * c->tile_bytes;
            c->pk->pack16(c->K, grp, t, c->tile_bytes);
            for (; i + 4 <= c->n; i += 4) {
                c->dot16(c->K, t, c->tile_bytes, c->act + (size_t)i * c->a_row, c->a_row, c->out + i * c->M + g * 16,
                         (size_t)c->M);
            }
        }
        for (; i < c->n; i += step) {
            const int na = c->n - i < step ? (int)(c->n - i) : (int)step;
            const int32_t *ys = c->ys ? c->ys + (size_t)i * c->ys_stride : NULL;
            const int flags = (i == 0 ? LLM__PREP_STREAM : 0) | (c->n >= 8 ? LLM__PREP_BATCH8 : 0);
            c->pk->dot(c->K, grp, c->act + (size_t)i * c->a_row, c->a_row, ys, c->ys_stride, na,
                       c->out + i * c->M + g * 16, (size_t)c->M, flags);
        }
    }
}

/* A prepared weight's matmul (kernels.h prep): the activations in the
 * type's activation type (with their aux ints), then each group of 16
 * weight rows by every activation row, max_a at a time (a group stays in
 * cache while they pass). */
static llm_status matmul_prepared(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *w,
                                  const struct llm__cpu_prep *pr) {
    llm__cpu *cpu = llm__cpu_of(be);
    prep_mm c;
    c.k = &cpu->k;
    c.pk = &cpu->k.prep[w->dtype];
    c.x = llm__host_ptr(x);
    c.out = llm__host_ptr(out);
    c.grp = pr->data;
    c.n = x->ne[1] * x->ne[2] * x->ne[3];
    c.K = x->ne[0];
    c.M = w->ne[1];
    c.gb = c.pk->group_bytes(c.K);
    c.act_type = cpu->k.act_type[w->dtype];
    if (llm_dtype_row_size(c.act_type, (uint64_t)c.K, &c.a_row) != LLM_OK) {
        return llm__err(LLM_ERR_INVALID_ARG, "matmul: K=%lld is not whole %s blocks", (long long)c.K,
                        llm_dtype_name(c.act_type));
    }
    llm_status st = llm__cpu_grow(&cpu->act, &cpu->act_size, c.a_row * (size_t)c.n, "matmul", "activations");
    c.ys_stride = (size_t)(c.K / 32) * (size_t)c.pk->aux_ints;
    if (st == LLM_OK && c.ys_stride) {
        st = llm__cpu_grow((void **)&cpu->act_ys, &cpu->act_ys_size, (size_t)c.n * c.ys_stride * sizeof(int32_t),
                           "matmul", "activation sums");
    }
    if (st != LLM_OK) return st;
    c.act = cpu->act;
    c.ys = c.ys_stride ? cpu->act_ys : NULL;
    const int nt = be->n_threads, pieces = dot_pieces(c.M, c.K, c.n, nt);
    const struct llm__dot_pair *tp = &cpu->k.tiled[w->dtype];
    c.tiles = NULL;
    c.tile_bytes = 0;
    c.dot16 = NULL;
    c.pack8 = NULL;
    c.dot8x4 = NULL;
    c.w_row = w->nb[1];
    const struct llm__dot_pair *r8 = &cpu->k.rows8[w->dtype];
    if (c.pk->unpack16 && r8->pack8 && r8->pack8_bytes && r8->dot8x4_packed &&
        c.n >= PREP_TILE_ROWS) {
        c.tile_bytes = (r8->pack8_bytes(c.K) + 63) & ~(size_t)63;
        st = llm__cpu_grow(&cpu->pack, &cpu->pack_size, (size_t)pieces * (2 * c.tile_bytes + 16 * c.w_row), "matmul",
                           "packed weights");
        if (st != LLM_OK) return st;
        c.tiles = cpu->pack;
        c.pack8 = r8->pack8;
        c.dot8x4 = r8->dot8x4_packed;
        c.dot16 = r8->dot16x4_packed;
    } else if (c.pk->pack16 && tp->pack8_bytes && tp->dot16x4_packed && c.n >= PREP_TILE_ROWS) {
        c.tile_bytes = (tp->pack8_bytes(c.K) + 63) & ~(size_t)63;
        st = llm__cpu_grow(&cpu->pack, &cpu->pack_size, (size_t)pieces * 2 * c.tile_bytes, "matmul", "packed weights");
        if (st != LLM_OK) return st;
        c.tiles = cpu->pack;
        c.dot16 = tp->dot16x4_packed;
    }
    llm__threadpool_run(cpu->tp, prep_quantize_task, &c, c.n < nt ? (int)c.n : nt);
    llm__threadpool_run(cpu->tp, prep_dot_task, &c, pieces);
    return LLM_OK;
}

/* invariant: only the registry's dot / dot4 / dot2x4 / dot4x1 (equal bit for
 * bit, kernels.h), never a shape-dependent pair. */
static llm_status matmul(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *w,
                         int invariant) {
    llm__cpu *cpu = llm__cpu_of(be);
    llm_dtype wt = w->dtype;
    if (!cpu->k.dot[wt]) {
        return llm__err(LLM_ERR_UNSUPPORTED, "matmul: weight type %s is not supported on cpu",
                        llm_dtype_name(wt));
    }
    const struct llm__cpu_prep *pr = invariant ? NULL : llm__cpu_prep_find(cpu, w);
    if (pr) {
        return matmul_prepared(be, out, x, w, pr);
    }
    mm_ctx2 c2;
    mm_ctx *c = &c2.base;
    c->k = &cpu->k;
    c->x = llm__host_ptr(x);
    c->out = llm__host_ptr(out);
    c->w = llm__host_ptr(w);
    c->n = x->ne[1] * x->ne[2] * x->ne[3];
    c->K = x->ne[0];
    c->M = w->ne[1];
    c->w_row = w->nb[1];
    c->act_type = cpu->k.act_type[wt];
    c2.dot = cpu->k.dot[wt];
    c2.dot4 = cpu->k.dot4[wt];
    c2.dot2x4 = cpu->k.dot2x4[wt];
    c2.dot4x1 = cpu->k.dot4x1[wt];
    c2.dot8 = NULL;
    c2.pack8 = NULL;
    c2.dot8x4_packed = NULL;
    c2.dot16x4_packed = NULL;
    c2.pk = NULL;
    c2.pk_bytes = 0;
    /* llama.cpp's shape-dependent kernels (kernels.h rows8 / tiled / sgemm). */
    const struct llm__dot_pair *alt = NULL;
    if (invariant) {
        /* the entries above */
    } else if (cpu->k.rows8[wt].dot && c->M % 8 == 0) {
        alt = &cpu->k.rows8[wt];
    } else if (cpu->k.tiled[wt].dot && c->n >= 8) {
        alt = &cpu->k.tiled[wt];
    } else if (cpu->k.sgemm[wt].dot && c->n >= 2 && c->K % 8 == 0 && c->M % 4 == 0) {
        alt = &cpu->k.sgemm[wt];
        const int64_t min_rows = cpu->k.gemm_rows[wt]  ? GEMM_MIN_ROWS_IN_PLACE
                                 : wt == LLM_DTYPE_BF16 ? GEMM_MIN_ROWS_BF16_PACKED
                                                        : GEMM_MIN_ROWS_F16_PACKED;
        if (c->n >= min_rows && cpu->k.gemm_block) {
            /* The sgemm pair's order is the tiled product's (kernels.h); it
             * runs the same sums with each vector load feeding more FMAs. */
            return llm__cpu_gemm(be, out, x, w);
        }
    }
    if (alt) {
        c2.dot = alt->dot;
        c2.dot4 = alt->dot4;
        c2.dot2x4 = NULL;
        c2.dot4x1 = NULL;
        c2.dot8 = c->n <= STREAM_ROWS && alt->dot8_stream ? alt->dot8_stream : alt->dot8;
    }
    int nt = be->n_threads;
    c->sc = c->sc_rem = NULL;
    c->full = c2.dot4 ? c->n & ~(int64_t)3 : 0;
    if (c->act_type == LLM_DTYPE_F32) {
        c->act = (const char *)c->x;
        c->a_row = (size_t)c->K * sizeof(float);
    } else {
        size_t row;
        if (llm_dtype_row_size(c->act_type, (uint64_t)c->K, &row) != LLM_OK) {
            return llm__err(LLM_ERR_INVALID_ARG, "matmul: K=%lld is not whole %s blocks",
                            (long long)c->K, llm_dtype_name(c->act_type));
        }
        llm_status st = llm__cpu_grow(&cpu->act, &cpu->act_size, row * (size_t)c->n, "matmul", "activations");
        if (st != LLM_OK) {
            return st;
        }
        c->act_w = cpu->act;
        c->act = cpu->act;
        c->a_row = row;
        const int byte_act = c->act_type == LLM_DTYPE_Q8_0 || c->act_type == LLM_DTYPE_Q8_1;
        const int groups = byte_act && c2.dot2x4 && c->full > 0;
        const int rest = byte_act && c2.dot4x1;
        const size_t nb = (size_t)(c->K / 32), full = (size_t)c->full;
        const size_t len_g = groups ? full * nb * 2 : 0, len_r = rest ? ((size_t)c->n - full) * nb * 2 : 0;
        if (len_g + len_r > 0) {
            if (len_g + len_r > cpu->act_sc_len) {
                float *p = malloc((len_g + len_r) * sizeof(float));
                if (!p) {
                    return llm__err(LLM_ERR_NO_MEMORY, "matmul: no memory for activation scales");
                }
                free(cpu->act_sc);
                cpu->act_sc = p;
                cpu->act_sc_len = len_g + len_r;
            }
            c->sc = len_g ? cpu->act_sc : NULL;
            c->sc_rem = len_r ? cpu->act_sc + len_g : NULL;
        }
        llm__threadpool_run(cpu->tp, quantize_task, c, c->n < nt ? (int)c->n : nt);
    }
    const int nth = dot_pieces(c->M, c->K, c->n, nt);
    if (alt && alt->pack8 && c->full >= 8) {
        /* A prompt pass, or 8 or more sequences decoding together: each
         * piece packs its tile's groups once for all c->full rows (kernels.h
         * llm__pack8_fn). Read only twice at 8 rows, the packing still pays
         * (see docs/PERFORMANCE.md). */
        c2.pk_bytes = (alt->pack8_bytes(c->K) + 63) & ~(size_t)63;
        llm_status st = llm__cpu_grow(&cpu->pack, &cpu->pack_size, (size_t)nth * (TILE / 8) * c2.pk_bytes, "matmul",
                                      "packed weights");
        if (st != LLM_OK) {
            return st;
        }
        c2.pack8 = alt->pack8;
        c2.dot8x4_packed = alt->dot8x4_packed;
        c2.dot16x4_packed = alt->dot16x4_packed;
        c2.pk = cpu->pack;
    }
    llm__threadpool_run(cpu->tp, dot_task2, &c2, nth);
    return LLM_OK;
}

llm_status llm__cpu_matmul(llm_backend *be, const llm_tensor *out, const llm_tensor *x, const llm_tensor *w) {
    return matmul(be, out, x, w, 0);
}

llm_status llm__cpu_matmul_invariant(llm_backend *be, const llm_tensor *out, const llm_tensor *x,
                                     const llm_tensor *w) {
    const llm_dtype wt = w->dtype;
    if (wt == LLM_DTYPE_F32 || wt == LLM_DTYPE_F16 || wt == LLM_DTYPE_BF16) return llm__cpu_gemm(be, out, x, w);
    return matmul(be, out, x, w, 1);
}
