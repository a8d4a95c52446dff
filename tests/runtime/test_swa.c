/*
 * test_swa.c -- sliding-window attention (llm_op_attention_ex, n_swa > 0) on
 * the CPU backend, scalar and AVX2 kernels, 1 and 3 threads, F16 and F32
 * caches, head sizes 64 / 40 / 17 / 32 (tiled and dot orders, the odd-size
 * fallbacks), GQA groups of 4, 1 and 6 (6 > the kernels' group of 4), block
 * sizes 16 and 7, windows 1, 7, 32, 33 and 100, a batch of 9 queries (tiled
 * order) and a single query (dot order). Checks:
 *   - an independent double-precision reference of the windowed softmax
 *     attention, within 2e-3 absolute with an F16 cache (q, K, V rounded to
 *     half, 2^-11 relative each, probabilities rounded to half) and 1e-5 with
 *     an F32 cache (inputs in [-1, 1]);
 *   - n_swa = 0, n_swa = max position + 1 and n_swa = 2^30 give the same bits;
 *   - the same bits when every cache row before the batch's first visible
 *     key holds NaNs and the block-table entries of blocks wholly before it
 *     are -1 (so neither is read);
 *   - llama.cpp's masking, bit for bit: full attention (n_swa = 0) over a
 *     cache whose keys before the window give scores so negative that their
 *     probabilities are exactly 0 (what llama.cpp's -inf mask gives) equals
 *     the windowed result (single query, and two queries at one position for
 *     the tiled order);
 *   - keys before the window are not read at all: with the cache in host
 *     memory whose pages holding the blocks wholly before the batch's first
 *     visible key are made unreadable (mprotect PROT_NONE), the op neither
 *     faults nor changes a bit;
 *   - argument validation.
 */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "llama/runtime.h"

static uint64_t g_rng = 0x5DEECE66Dull;
static uint32_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}
static float frand(void) { return (float)rnd() / 4294967296.0f * 2.0f - 1.0f; }

enum { NPOS = 259, NBLK = 48, NQ = 9, PAST = NPOS - NQ };

typedef struct {
    int hd, nh, nkv, bs, f16;
} shape;

/* One cache configuration on one backend. */
typedef struct {
    llm_backend *be;
    shape s;
    llm_buffer *bk, *bv, *bq, *bo;
    llm_tensor kc, vc;
    int32_t table[NBLK];
    float *K, *V; /* host [NPOS][nkv][hd] as written (before rounding) */
} fixture;

static size_t es(const fixture *f) { return f->s.f16 ? 2 : 4; }

/* Writes rows [0, NPOS) of K, V through the block table. */
static void write_cache(fixture *f, const float *K, const float *V) {
    const size_t row = sizeof(float) * (size_t)(f->s.nkv * f->s.hd) * NPOS;
    llm_buffer *tk, *tv;
    cr_assert_eq(llm_buffer_alloc(f->be, row, &tk), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(f->be, row, &tv), LLM_OK);
    llm_buffer_write(tk, 0, K, row);
    llm_buffer_write(tv, 0, V, row);
    llm_tensor k = llm_tensor_4d(tk, 0, LLM_DTYPE_F32, f->s.hd, f->s.nkv, NPOS, 1);
    llm_tensor v = llm_tensor_4d(tv, 0, LLM_DTYPE_F32, f->s.hd, f->s.nkv, NPOS, 1);
    int32_t pos[NPOS];
    for (int i = 0; i < NPOS; i++) pos[i] = i;
    cr_assert_eq(llm_op_kv_write(f->be, &f->kc, &f->vc, &k, &v, pos, f->table, NBLK), LLM_OK, "%s",
                 llm_runtime_last_error());
    llm_buffer_free(tk);
    llm_buffer_free(tv);
}

static void fixture_init(fixture *f, llm_backend *be, shape s) {
    memset(f, 0, sizeof(*f));
    f->be = be;
    f->s = s;
    const llm_dtype ct = s.f16 ? LLM_DTYPE_F16 : LLM_DTYPE_F32;
    const size_t cache = es(f) * (size_t)(s.hd * s.nkv * s.bs) * NBLK;
    cr_assert_eq(llm_buffer_alloc(be, cache, &f->bk), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(be, cache, &f->bv), LLM_OK);
    f->kc = llm_tensor_4d(f->bk, 0, ct, s.hd, s.bs, s.nkv, NBLK);
    f->vc = llm_tensor_4d(f->bv, 0, ct, s.hd, s.bs, s.nkv, NBLK);
    for (int b = 0; b < NBLK; b++) f->table[b] = (int32_t)((b * 29 + 5) % NBLK); /* a permutation */
    const size_t n = (size_t)(NPOS * s.nkv * s.hd);
    f->K = malloc(sizeof(float) * n);
    f->V = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++) {
        f->K[i] = frand();
        f->V[i] = frand();
    }
    write_cache(f, f->K, f->V);
    const size_t qb = sizeof(float) * (size_t)(NQ * s.nh * s.hd);
    cr_assert_eq(llm_buffer_alloc(be, qb, &f->bq), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(be, qb, &f->bo), LLM_OK);
}

static void fixture_free(fixture *f) {
    llm_buffer_free(f->bk);
    llm_buffer_free(f->bv);
    llm_buffer_free(f->bq);
    llm_buffer_free(f->bo);
    free(f->K);
    free(f->V);
}

/* out [n][nh][hd] = attention of Q [n][nh][hd] at pos [n] with window n_swa. */
static llm_status attend(fixture *f, const float *Q, const int32_t *pos, int n, int32_t n_swa,
                         const int32_t *table, float *out) {
    const shape s = f->s;
    llm_buffer_write(f->bq, 0, Q, sizeof(float) * (size_t)(n * s.nh * s.hd));
    llm_tensor q = llm_tensor_4d(f->bq, 0, LLM_DTYPE_F32, s.hd, s.nh, n, 1);
    llm_tensor o = llm_tensor_4d(f->bo, 0, LLM_DTYPE_F32, s.hd, s.nh, n, 1);
    llm_attn_params p = llm_attn_default_params();
    p.scale = 1.0f / sqrtf((float)s.hd);
    p.n_swa = n_swa;
    llm_status st = llm_op_attention_ex(f->be, &o, &q, &f->kc, &f->vc, pos, table, NBLK, &p);
    if (st == LLM_OK) llm_buffer_read(f->bo, 0, out, sizeof(float) * (size_t)(n * s.nh * s.hd));
    return st;
}

static double rounded(const fixture *f, float x) {
    return f->s.f16 ? (double)llm_fp16_to_fp32(llm_fp32_to_fp16(x)) : (double)x;
}

/* Double-precision windowed attention, checked against out. */
static void check_reference(const fixture *f, const float *Q, const int32_t *pos, int n, int32_t n_swa,
                            const float *out) {
    const shape s = f->s;
    const double scale = 1.0 / sqrt((double)s.hd), tol = s.f16 ? 2e-3 : 1e-5;
    double *w = malloc(sizeof(double) * NPOS);
    for (int i = 0; i < n; i++) {
        const int lo = n_swa > 0 && pos[i] + 1 - n_swa > 0 ? pos[i] + 1 - n_swa : 0;
        for (int h = 0; h < s.nh; h++) {
            const int kvh = h / (s.nh / s.nkv);
            const float *q = Q + (i * s.nh + h) * s.hd;
            double mx = -INFINITY, sum = 0;
            for (int t = lo; t <= pos[i]; t++) {
                double d = 0;
                for (int e = 0; e < s.hd; e++) d += rounded(f, q[e]) * rounded(f, f->K[(t * s.nkv + kvh) * s.hd + e]);
                w[t] = d * scale;
                mx = fmax(mx, w[t]);
            }
            for (int t = lo; t <= pos[i]; t++) {
                w[t] = exp(w[t] - mx);
                sum += w[t];
            }
            for (int e = 0; e < s.hd; e++) {
                double ref = 0;
                for (int t = lo; t <= pos[i]; t++) ref += w[t] / sum * rounded(f, f->V[(t * s.nkv + kvh) * s.hd + e]);
                const double got = out[(i * s.nh + h) * s.hd + e];
                cr_assert(fabs(got - ref) <= tol, "hd %d nh %d nkv %d bs %d f16 %d n_swa %d: query %d head %d dim %d: %g vs %g",
                          s.hd, s.nh, s.nkv, s.bs, s.f16, n_swa, i, h, e, got, ref);
            }
        }
    }
    free(w);
}

/* Fills the cache rows of positions [0, until) with NaNs (bytes 0xFF). */
static void poison_before(fixture *f, int until) {
    const size_t row = es(f) * (size_t)f->s.hd;
    uint8_t *nan = malloc(row);
    memset(nan, 0xFF, row);
    for (int t = 0; t < until; t++) {
        for (int h = 0; h < f->s.nkv; h++) { /* [block][kv head][slot] rows (runtime.h) */
            const size_t r = ((size_t)f->table[t / f->s.bs] * (size_t)f->s.nkv + (size_t)h) * (size_t)f->s.bs +
                             (size_t)(t % f->s.bs);
            cr_assert_eq(llm_buffer_write(f->bk, r * row, nan, row), LLM_OK);
            cr_assert_eq(llm_buffer_write(f->bv, r * row, nan, row), LLM_OK);
        }
    }
    free(nan);
}

static int first_visible(const int32_t *pos, int n, int32_t n_swa) {
    int lo = NPOS;
    for (int i = 0; i < n; i++) {
        const int l = pos[i] + 1 - n_swa > 0 ? pos[i] + 1 - n_swa : 0;
        lo = l < lo ? l : lo;
    }
    return lo;
}

static const shape g_shapes[] = {
    {64, 8, 2, 16, 0}, {40, 3, 3, 7, 0}, {17, 4, 2, 16, 0}, {32, 6, 1, 7, 0},
};
static const int32_t g_windows[] = {1, 7, 32, 33, 100};

Test(swa, windowed_attention) {
    static const llm_kernels kinds[2] = {LLM_KERNELS_SCALAR, LLM_KERNELS_AUTO};
    for (int k = 0; k < 2; k++) {
        for (int threads = 1; threads <= 3; threads += 2) {
            llm_backend_params bp = llm_backend_default_params();
            bp.kernels = kinds[k];
            bp.n_threads = threads;
            llm_backend *be = NULL;
            cr_assert_eq(llm_backend_create("cpu", &bp, &be), LLM_OK);
            for (size_t si = 0; si < sizeof(g_shapes) / sizeof(g_shapes[0]); si++) {
                for (int f16 = 0; f16 < 2; f16++) {
                    shape s = g_shapes[si];
                    s.f16 = f16;
                    fixture f;
                    fixture_init(&f, be, s);
                    const int nqf = NQ * s.nh * s.hd;
                    float *Q = malloc(sizeof(float) * (size_t)nqf), *o = malloc(sizeof(float) * (size_t)nqf);
                    float *o2 = malloc(sizeof(float) * (size_t)nqf);
                    for (int i = 0; i < nqf; i++) Q[i] = frand() * 2;
                    int32_t batch[NQ], single[1] = {PAST + 3};
                    for (int i = 0; i < NQ; i++) batch[i] = PAST + i;
                    for (int qs = 0; qs < 2; qs++) {
                        const int32_t *pos = qs ? single : batch;
                        const int n = qs ? 1 : NQ;
                        /* No window: 0 and any n_swa past the longest row agree bit for bit. */
                        cr_assert_eq(attend(&f, Q, pos, n, 0, f.table, o), LLM_OK, "%s", llm_runtime_last_error());
                        check_reference(&f, Q, pos, n, 0, o);
                        const int32_t wide[2] = {PAST + NQ, 1 << 30};
                        for (int w = 0; w < 2; w++) {
                            cr_assert_eq(attend(&f, Q, pos, n, wide[w], f.table, o2), LLM_OK);
                            cr_assert(memcmp(o, o2, sizeof(float) * (size_t)(n * s.nh * s.hd)) == 0,
                                      "n_swa %d differs from no window (%s, hd %d)", wide[w], llm_backend_kernels(be), s.hd);
                        }
                        for (size_t wi = 0; wi < sizeof(g_windows) / sizeof(g_windows[0]); wi++) {
                            const int32_t n_swa = g_windows[wi];
                            cr_assert_eq(attend(&f, Q, pos, n, n_swa, f.table, o), LLM_OK, "%s", llm_runtime_last_error());
                            check_reference(&f, Q, pos, n, n_swa, o);
                            /* Rows and table entries before the window: garbage, same bits. */
                            const int lo = first_visible(pos, n, n_swa);
                            poison_before(&f, lo);
                            int32_t table[NBLK];
                            memcpy(table, f.table, sizeof(table));
                            for (int b = 0; (b + 1) * s.bs <= lo; b++) table[b] = -1;
                            cr_assert_eq(attend(&f, Q, pos, n, n_swa, table, o2), LLM_OK, "%s", llm_runtime_last_error());
                            cr_assert(memcmp(o, o2, sizeof(float) * (size_t)(n * s.nh * s.hd)) == 0,
                                      "rows before the window were read (%s, %d threads, hd %d, f16 %d, n_swa %d, n %d)",
                                      llm_backend_kernels(be), threads, s.hd, f16, n_swa, n);
                            /* Full attention needs those entries. */
                            if (lo >= s.bs) cr_assert_eq(attend(&f, Q, pos, n, 0, table, o2), LLM_ERR_INVALID_ARG);
                            write_cache(&f, f.K, f.V);
                        }
                    }
                    free(Q);
                    free(o);
                    free(o2);
                    fixture_free(&f);
                }
            }
            llm_backend_free(be);
        }
    }
}

/* llama.cpp masks the keys before the window with -inf: probability 0. Keys
 * whose score is hugely negative get probability exactly 0 too, so full
 * attention over a cache holding such keys before the window must give the
 * windowed result bit for bit. q > 0 and K = -60000 there make every head's
 * score about -60000 * sum(q) / sqrt(hd), far below exp's underflow. */
Test(swa, equals_masked_full_attention) {
    static const llm_kernels kinds[2] = {LLM_KERNELS_SCALAR, LLM_KERNELS_AUTO};
    for (int k = 0; k < 2; k++) {
        llm_backend_params bp = llm_backend_default_params();
        bp.kernels = kinds[k];
        bp.n_threads = 2;
        llm_backend *be = NULL;
        cr_assert_eq(llm_backend_create("cpu", &bp, &be), LLM_OK);
        for (size_t si = 0; si < sizeof(g_shapes) / sizeof(g_shapes[0]); si++) {
            for (int f16 = 0; f16 < 2; f16++) {
                shape s = g_shapes[si];
                s.f16 = f16;
                fixture f;
                fixture_init(&f, be, s);
                const int nqf = NQ * s.nh * s.hd;
                float *Q = malloc(sizeof(float) * (size_t)nqf), *o = malloc(sizeof(float) * (size_t)nqf);
                float *o2 = malloc(sizeof(float) * (size_t)nqf);
                float *Km = malloc(sizeof(float) * (size_t)(NPOS * s.nkv * s.hd));
                for (int i = 0; i < nqf; i++) Q[i] = 0.05f + 0.95f * (frand() + 1.0f) / 2.0f;
                for (int reps = 1; reps <= 2; reps++) { /* 1 query: dot order; 2 at one position: tiled */
                    const int32_t pos[2] = {PAST + 5, PAST + 5};
                    for (size_t wi = 0; wi < sizeof(g_windows) / sizeof(g_windows[0]); wi++) {
                        const int32_t n_swa = g_windows[wi];
                        const int lo = pos[0] + 1 - n_swa;
                        memcpy(Km, f.K, sizeof(float) * (size_t)(NPOS * s.nkv * s.hd));
                        for (int i = 0; i < lo * s.nkv * s.hd; i++) Km[i] = -60000.0f;
                        write_cache(&f, Km, f.V);
                        for (int r = 1; r < reps; r++) memcpy(Q + r * s.nh * s.hd, Q, sizeof(float) * (size_t)(s.nh * s.hd));
                        cr_assert_eq(attend(&f, Q, pos, reps, 0, f.table, o), LLM_OK);
                        cr_assert_eq(attend(&f, Q, pos, reps, n_swa, f.table, o2), LLM_OK);
                        cr_assert(memcmp(o, o2, sizeof(float) * (size_t)(reps * s.nh * s.hd)) == 0,
                                  "windowed != masked full attention (%s, hd %d, f16 %d, n_swa %d, %d queries)",
                                  llm_backend_kernels(be), s.hd, f16, n_swa, reps);
                    }
                }
                free(Q);
                free(o);
                free(o2);
                free(Km);
                fixture_free(&f);
            }
        }
        llm_backend_free(be);
    }
}

/* The cache as wrapped host memory (4096-byte blocks: hd 64, 2 KV heads, 16
 * cells, F16), the blocks before the window unreadable. */
Test(swa, blocks_before_the_window_are_not_read) {
    const int hd = 64, nkv = 2, nh = 8, bs = 16;
    const size_t row = 2 * (size_t)(nkv * hd), blk = row * (size_t)bs, bytes = blk * NBLK;
    cr_assert_eq(blk % (size_t)sysconf(_SC_PAGESIZE), 0);
    uint8_t *mk = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint8_t *mv = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(mk != MAP_FAILED && mv != MAP_FAILED);
    int32_t table[NBLK];
    for (int b = 0; b < NBLK; b++) table[b] = (int32_t)((b * 29 + 5) % NBLK);
    for (int t = 0; t < NPOS; t++) {
        uint16_t *kr = (uint16_t *)(mk + (size_t)table[t / bs] * blk + (size_t)(t % bs) * row);
        uint16_t *vr = (uint16_t *)(mv + (size_t)table[t / bs] * blk + (size_t)(t % bs) * row);
        for (int e = 0; e < nkv * hd; e++) {
            kr[e] = llm_fp32_to_fp16(frand());
            vr[e] = llm_fp32_to_fp16(frand());
        }
    }
    float Q[NQ * 8 * 64], o[NQ * 8 * 64], o2[NQ * 8 * 64];
    for (int i = 0; i < NQ * nh * hd; i++) Q[i] = frand() * 2;
    static const llm_kernels kinds[2] = {LLM_KERNELS_SCALAR, LLM_KERNELS_AUTO};
    for (int k = 0; k < 2; k++) {
        for (int threads = 1; threads <= 3; threads += 2) {
            llm_backend_params bp = llm_backend_default_params();
            bp.kernels = kinds[k];
            bp.n_threads = threads;
            llm_backend *be = NULL;
            cr_assert_eq(llm_backend_create("cpu", &bp, &be), LLM_OK);
            llm_buffer *bk, *bv, *bq, *bo;
            cr_assert_eq(llm_buffer_wrap_host(be, mk, bytes, &bk), LLM_OK);
            cr_assert_eq(llm_buffer_wrap_host(be, mv, bytes, &bv), LLM_OK);
            cr_assert_eq(llm_buffer_alloc(be, sizeof(Q), &bq), LLM_OK);
            cr_assert_eq(llm_buffer_alloc(be, sizeof(Q), &bo), LLM_OK);
            llm_buffer_write(bq, 0, Q, sizeof(Q));
            llm_tensor kc = llm_tensor_4d(bk, 0, LLM_DTYPE_F16, hd, bs, nkv, NBLK);
            llm_tensor vc = llm_tensor_4d(bv, 0, LLM_DTYPE_F16, hd, bs, nkv, NBLK);
            for (int qs = 0; qs < 2; qs++) {
                const int n = qs ? 1 : NQ;
                int32_t pos[NQ];
                for (int i = 0; i < n; i++) pos[i] = PAST + i;
                llm_tensor q = llm_tensor_4d(bq, 0, LLM_DTYPE_F32, hd, nh, n, 1);
                llm_tensor out = llm_tensor_4d(bo, 0, LLM_DTYPE_F32, hd, nh, n, 1);
                for (size_t wi = 0; wi < sizeof(g_windows) / sizeof(g_windows[0]); wi++) {
                    llm_attn_params p = llm_attn_default_params();
                    p.scale = 0.125f;
                    p.n_swa = g_windows[wi];
                    cr_assert_eq(llm_op_attention_ex(be, &out, &q, &kc, &vc, pos, table, NBLK, &p), LLM_OK);
                    llm_buffer_read(bo, 0, o, sizeof(float) * (size_t)(n * nh * hd));
                    const int lo = first_visible(pos, n, p.n_swa);
                    for (int b = 0; (b + 1) * bs <= lo; b++) {
                        cr_assert_eq(mprotect(mk + (size_t)table[b] * blk, blk, PROT_NONE), 0);
                        cr_assert_eq(mprotect(mv + (size_t)table[b] * blk, blk, PROT_NONE), 0);
                    }
                    cr_assert_eq(llm_op_attention_ex(be, &out, &q, &kc, &vc, pos, table, NBLK, &p), LLM_OK);
                    llm_buffer_read(bo, 0, o2, sizeof(float) * (size_t)(n * nh * hd));
                    cr_assert(memcmp(o, o2, sizeof(float) * (size_t)(n * nh * hd)) == 0);
                    cr_assert_eq(mprotect(mk, bytes, PROT_READ | PROT_WRITE), 0);
                    cr_assert_eq(mprotect(mv, bytes, PROT_READ | PROT_WRITE), 0);
                }
            }
            llm_buffer_free(bk);
            llm_buffer_free(bv);
            llm_buffer_free(bq);
            llm_buffer_free(bo);
            llm_backend_free(be);
        }
    }
    munmap(mk, bytes);
    munmap(mv, bytes);
}

Test(swa, validation) {
    llm_backend *be = NULL;
    cr_assert_eq(llm_backend_create("cpu", NULL, &be), LLM_OK);
    fixture f;
    fixture_init(&f, be, (shape){32, 2, 1, 16, 1});
    float Q[2 * 32] = {0}, o[2 * 32];
    int32_t pos[1] = {200};
    cr_assert_eq(attend(&f, Q, pos, 1, -1, f.table, o), LLM_ERR_INVALID_ARG);
    llm_tensor q = llm_tensor_4d(f.bq, 0, LLM_DTYPE_F32, 32, 2, 1, 1);
    llm_tensor out = llm_tensor_4d(f.bo, 0, LLM_DTYPE_F32, 32, 2, 1, 1);
    cr_assert_eq(llm_op_attention_ex(be, &out, &q, &f.kc, &f.vc, pos, f.table, NBLK, NULL), LLM_ERR_INVALID_ARG);
    llm_attn_params p = llm_attn_default_params();
    cr_assert_eq(p.n_swa, 0);
    cr_assert_eq(p.scale, 1.0f);
    p.scale = INFINITY;
    cr_assert_eq(llm_op_attention_ex(be, &out, &q, &f.kc, &f.vc, pos, f.table, NBLK, &p), LLM_ERR_INVALID_ARG);
    /* Window 10 at position 200 sees 191..200, all in block 11 (16-cell blocks):
     * blocks 0..10 may be -1; block 11 may not. */
    int32_t table[NBLK];
    memcpy(table, f.table, sizeof(table));
    for (int b = 0; b < 11; b++) table[b] = -1;
    cr_assert_eq(attend(&f, Q, pos, 1, 10, table, o), LLM_OK, "%s", llm_runtime_last_error());
    table[11] = -1;
    cr_assert_eq(attend(&f, Q, pos, 1, 10, table, o), LLM_ERR_INVALID_ARG);
    /* kv_write reads only the entries of the positions it writes. */
    table[11] = f.table[11];
    table[12] = f.table[12];
    llm_buffer *bkv;
    cr_assert_eq(llm_buffer_alloc(be, sizeof(float) * 32, &bkv), LLM_OK);
    llm_tensor kv = llm_tensor_4d(bkv, 0, LLM_DTYPE_F32, 32, 1, 1, 1);
    int32_t wpos[1] = {201};
    cr_assert_eq(llm_op_kv_write(be, &f.kc, &f.vc, &kv, &kv, wpos, table, NBLK), LLM_OK, "%s", llm_runtime_last_error());
    wpos[0] = 150; /* block 9: -1 */
    cr_assert_eq(llm_op_kv_write(be, &f.kc, &f.vc, &kv, &kv, wpos, table, NBLK), LLM_ERR_INVALID_ARG);
    llm_buffer_free(bkv);
    fixture_free(&f);
    llm_backend_free(be);
}
