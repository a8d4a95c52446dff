/*
 * test_cuda_attention.c -- paged KV writes and causal GQA attention on CUDA
 * against the CPU backend: F16 and F32 caches, several head layouts (GQA
 * groups of 1, 3, 8; head_dim 40, 64, 128, 256), block sizes that do and do not
 * divide the sequence, a scrambled block table, a prefill batch, a decode step
 * after it, and queries at scattered positions; sliding windows (n_swa 1, 7,
 * 33) over the same layouts.
 *
 * Tolerances (why): the caches must be byte-identical (F32 copied, F16 rounded
 * to nearest even on both sides). Attention reads identical K/V values and
 * follows the CPU's softmax step for step; only the order of float sums and
 * expf's last ulp differ, so with an F32 cache outputs (weighted means of
 * values in [-1, 1]) agree within 2e-5 absolute. With an F16 cache both sides
 * round each probability to F16; a last-bit difference before that rounding
 * flips it now and then (about 1 in 8000 probabilities), moving the output by
 * up to one F16 ulp of that probability (<= 2^-10 p), hence 1e-3.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_pair.h"

typedef struct {
    int64_t n_head, n_kv, hd, bs;
} att_shape;

typedef struct {
    cu_buf kc, vc;        /* [n_blocks][n_kv][bs][hd] */
    int64_t n_blocks;
    llm_dtype t;
    int32_t table[64];
    int32_t n_table;
} cache;

static llm_tensor cache_view(const cache *c, const cu_buf *b, int on_dev, const att_shape *s) {
    return llm_tensor_4d(on_dev ? b->dev : b->cpu, 0, c->t, s->hd, s->bs, s->n_kv, c->n_blocks);
}

/* Writes n tokens' K/V (random, generated on the device) at pos[] on both sides
 * and checks the caches are byte-identical afterwards. */
static void write_kv(cu_pair *p, cache *c, const att_shape *s, const int32_t *pos, int64_t n,
                     uint64_t seed) {
    const size_t cnt = (size_t)(n * s->n_kv * s->hd);
    cu_buf kb, vb;
    cu_buf_alloc(p, &kb, cnt * 4);
    cu_buf_alloc(p, &vb, cnt * 4);
    cu_fill_uniform(p, &kb, 0, cnt, -1.0f, 1.0f, seed, NULL);
    cu_fill_uniform(p, &vb, 0, cnt, -1.0f, 1.0f, seed + 1, NULL);
    for (int side = 1; side >= 0; side--) {
        llm_tensor kc = cache_view(c, &c->kc, side, s), vc = cache_view(c, &c->vc, side, s);
        llm_tensor k = cu_view(&kb, side, 0, LLM_DTYPE_F32, s->hd, s->n_kv, n);
        llm_tensor v = cu_view(&vb, side, 0, LLM_DTYPE_F32, s->hd, s->n_kv, n);
        cr_assert_eq(llm_op_kv_write(side ? p->dev : p->cpu, &kc, &vc, &k, &v, pos, c->table,
                                     c->n_table),
                     LLM_OK, "%s", llm_runtime_last_error());
    }
    const size_t bytes = c->kc.size;
    uint8_t *a = malloc(bytes), *b = malloc(bytes);
    for (int which = 0; which < 2; which++) {
        const cu_buf *cb = which ? &c->vc : &c->kc;
        cu_read(cb, 1, 0, a, bytes);
        cu_read(cb, 0, 0, b, bytes);
        cr_assert_arr_eq(a, b, bytes, "%s cache differs after kv_write (%s)", which ? "V" : "K",
                         llm_dtype_name(c->t));
    }
    free(a);
    free(b);
    cu_buf_free(&kb);
    cu_buf_free(&vb);
}

static void attend_swa(cu_pair *p, cache *c, const att_shape *s, const int32_t *pos, int64_t n,
                       uint64_t seed, const char *what, int32_t n_swa) {
    const size_t cnt = (size_t)(n * s->n_head * s->hd);
    cu_buf qb, ob;
    cu_buf_alloc(p, &qb, cnt * 4);
    cu_buf_alloc(p, &ob, cnt * 4);
    cu_fill_uniform(p, &qb, 0, cnt, -1.0f, 1.0f, seed, NULL);
    float *got = malloc(cnt * 4), *want = malloc(cnt * 4);
    llm_attn_params ap = llm_attn_default_params();
    ap.scale = 1.0f / sqrtf((float)s->hd);
    ap.n_swa = n_swa;
    for (int side = 1; side >= 0; side--) {
        llm_tensor kc = cache_view(c, &c->kc, side, s), vc = cache_view(c, &c->vc, side, s);
        llm_tensor q = cu_view(&qb, side, 0, LLM_DTYPE_F32, s->hd, s->n_head, n);
        llm_tensor o = cu_view(&ob, side, 0, LLM_DTYPE_F32, s->hd, s->n_head, n);
        cr_assert_eq(llm_op_attention_ex(side ? p->dev : p->cpu, &o, &q, &kc, &vc, pos, c->table,
                                         c->n_table, &ap),
                     LLM_OK, "%s", llm_runtime_last_error());
        cu_read(&ob, side, 0, side ? got : want, cnt * 4);
    }
    char msg[160];
    snprintf(msg, sizeof msg, "%s: %s cache, n_head %lld, n_kv %lld, hd %lld, block %lld, n_swa %d",
             what, llm_dtype_name(c->t), (long long)s->n_head, (long long)s->n_kv, (long long)s->hd,
             (long long)s->bs, (int)n_swa);
    cu_check_close(got, want, NULL, cnt, c->t == LLM_DTYPE_F16 ? 1e-3 : 2e-5, 1e-5, msg);
    free(got);
    free(want);
    cu_buf_free(&qb);
    cu_buf_free(&ob);
}

static void attend(cu_pair *p, cache *c, const att_shape *s, const int32_t *pos, int64_t n,
                   uint64_t seed, const char *what) {
    attend_swa(p, c, s, pos, n, seed, what, 0);
}

Test(cuda_attention, paged_prefill_decode_scattered) {
    cu_pair p;
    cu_pair_open(&p);
    static const att_shape shapes[] = {{9, 3, 64, 16}, {4, 4, 40, 5}, {8, 1, 128, 7}, {2, 2, 256, 32}};
    static const llm_dtype types[] = {LLM_DTYPE_F16, LLM_DTYPE_F32};
    const int64_t n1 = 37; /* prefill length; then one decode step at position n1 */
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        for (size_t ti = 0; ti < 2; ti++) {
            const att_shape *s = &shapes[si];
            cache c;
            memset(&c, 0, sizeof c);
            c.t = types[ti];
            c.n_table = (int32_t)((n1 + 1 + s->bs - 1) / s->bs);
            c.n_blocks = c.n_table + 3;
            if (c.n_blocks % 5 == 0) c.n_blocks++; /* keep i -> 5i + 2 a permutation */
            /* Logical block i -> a scrambled physical block; some blocks unused. */
            for (int32_t i = 0; i < c.n_table; i++) {
                c.table[i] = (int32_t)((i * 5 + 2) % c.n_blocks);
            }
            const size_t es = c.t == LLM_DTYPE_F16 ? 2 : 4;
            const size_t bytes = (size_t)(c.n_blocks * s->bs * s->n_kv * s->hd) * es;
            cu_buf_alloc(&p, &c.kc, bytes);
            cu_buf_alloc(&p, &c.vc, bytes);
            int32_t pos[64];
            for (int32_t i = 0; i < n1; i++) pos[i] = i;
            const uint64_t seed = 1000 + si * 10 + ti;
            write_kv(&p, &c, s, pos, n1, seed);
            attend(&p, &c, s, pos, n1, seed + 2, "prefill");
            int32_t dpos = (int32_t)n1;
            write_kv(&p, &c, s, &dpos, 1, seed + 3);
            attend(&p, &c, s, &dpos, 1, seed + 4, "decode");
            /* Queries at scattered positions see only keys up to their own. */
            int32_t sc[4] = {0, 5, 36, 17};
            attend(&p, &c, s, sc, 4, seed + 5, "scattered");
            /* Sliding windows: each query sees its last n_swa keys only. */
            static const int32_t windows[] = {1, 7, 33};
            for (int w = 0; w < 3; w++) {
                attend_swa(&p, &c, s, pos, n1, seed + 6 + (uint64_t)w, "prefill, window", windows[w]);
                attend_swa(&p, &c, s, &dpos, 1, seed + 9 + (uint64_t)w, "decode, window", windows[w]);
            }
            cu_buf_free(&c.kc);
            cu_buf_free(&c.vc);
        }
    }
    cu_pair_close(&p);
}

Test(cuda_attention, long_context_decode) {
    /* One query over 5000 keys in blocks of 16 (313 table entries): more keys
     * than the kernel keeps in shared memory (4096), so scores are recomputed
     * in each pass; also a larger argument upload. */
    cu_pair p;
    cu_pair_open(&p);
    const att_shape s = {6, 2, 64, 16};
    cache c;
    memset(&c, 0, sizeof c);
    c.t = LLM_DTYPE_F16;
    const int64_t n = 5000;
    int32_t *table = NULL;
    c.n_table = (int32_t)((n + s.bs - 1) / s.bs);
    c.n_blocks = c.n_table;
    const size_t bytes = (size_t)(c.n_blocks * s.bs * s.n_kv * s.hd) * 2;
    cu_buf_alloc(&p, &c.kc, bytes);
    cu_buf_alloc(&p, &c.vc, bytes);
    /* The fixed table field holds 64 entries; use a heap table instead. */
    table = malloc((size_t)c.n_table * sizeof(int32_t));
    for (int32_t i = 0; i < c.n_table; i++) table[i] = (int32_t)((i * 7 + 1) % c.n_table);
    int32_t *pos = malloc((size_t)n * sizeof(int32_t));
    for (int32_t i = 0; i < n; i++) pos[i] = i;
    const size_t cnt = (size_t)(n * s.n_kv * s.hd);
    cu_buf kb, vb, qb, ob;
    cu_buf_alloc(&p, &kb, cnt * 4);
    cu_buf_alloc(&p, &vb, cnt * 4);
    cu_fill_uniform(&p, &kb, 0, cnt, -1.0f, 1.0f, 7, NULL);
    cu_fill_uniform(&p, &vb, 0, cnt, -1.0f, 1.0f, 8, NULL);
    const size_t qn = (size_t)(s.n_head * s.hd);
    cu_buf_alloc(&p, &qb, qn * 4);
    cu_buf_alloc(&p, &ob, qn * 4);
    cu_fill_uniform(&p, &qb, 0, qn, -3.0f, 3.0f, 9, NULL);
    float got[6 * 64], want[6 * 64];
    int32_t last = (int32_t)(n - 1);
    for (int side = 1; side >= 0; side--) {
        llm_backend *be = side ? p.dev : p.cpu;
        llm_tensor kc = cache_view(&c, &c.kc, side, &s), vc = cache_view(&c, &c.vc, side, &s);
        llm_tensor k = cu_view(&kb, side, 0, LLM_DTYPE_F32, s.hd, s.n_kv, n);
        llm_tensor v = cu_view(&vb, side, 0, LLM_DTYPE_F32, s.hd, s.n_kv, n);
        cr_assert_eq(llm_op_kv_write(be, &kc, &vc, &k, &v, pos, table, c.n_table), LLM_OK, "%s",
                     llm_runtime_last_error());
        llm_tensor q = cu_view(&qb, side, 0, LLM_DTYPE_F32, s.hd, s.n_head, 1);
        llm_tensor o = cu_view(&ob, side, 0, LLM_DTYPE_F32, s.hd, s.n_head, 1);
        cr_assert_eq(llm_op_attention(be, &o, &q, &kc, &vc, &last, table, c.n_table, 0.125f),
                     LLM_OK, "%s", llm_runtime_last_error());
        cu_read(&ob, side, 0, side ? got : want, qn * 4);
    }
    cu_check_close(got, want, NULL, qn, 1e-3, 1e-5, "long-context decode (F16 cache)");
    free(table);
    free(pos);
    cu_buf_free(&kb);
    cu_buf_free(&vb);
    cu_buf_free(&qb);
    cu_buf_free(&ob);
    cu_buf_free(&c.kc);
    cu_buf_free(&c.vc);
    cu_pair_close(&p);
}

Test(cuda_attention, unsupported_head_dim_is_an_error) {
    cu_pair p;
    cu_pair_open(&p);
    if (p.selfcheck) {
        cu_pair_close(&p);
        cr_skip_test("self-check mode: CUDA limit only");
    }
    /* head_dim 288 exceeds the kernel's 256: a clean error, not a crash. */
    const att_shape s = {1, 1, 288, 4};
    llm_buffer *kb = NULL, *vb = NULL, *qb = NULL;
    cr_assert_eq(llm_buffer_alloc(p.dev, (size_t)(s.bs * s.hd) * 2, &kb), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(p.dev, (size_t)(s.bs * s.hd) * 2, &vb), LLM_OK);
    cr_assert_eq(llm_buffer_alloc(p.dev, (size_t)s.hd * 8, &qb), LLM_OK);
    llm_tensor kc = llm_tensor_4d(kb, 0, LLM_DTYPE_F16, s.hd, 1, s.bs, 1);
    llm_tensor vc = llm_tensor_4d(vb, 0, LLM_DTYPE_F16, s.hd, 1, s.bs, 1);
    llm_tensor q = llm_tensor_4d(qb, 0, LLM_DTYPE_F32, s.hd, 1, 1, 1);
    llm_tensor o = llm_tensor_4d(qb, (size_t)s.hd * 4, LLM_DTYPE_F32, s.hd, 1, 1, 1);
    int32_t pos = 0, table = 0;
    cr_assert_eq(llm_op_attention(p.dev, &o, &q, &kc, &vc, &pos, &table, 1, 1.0f),
                 LLM_ERR_UNSUPPORTED);
    cr_assert(strstr(llm_runtime_last_error(), "head_dim") != NULL, "%s", llm_runtime_last_error());
    /* The backend still works afterwards. */
    cr_assert_eq(llm_backend_synchronize(p.dev), LLM_OK, "%s", llm_runtime_last_error());
    llm_buffer_free(kb);
    llm_buffer_free(vb);
    llm_buffer_free(qb);
    cu_pair_close(&p);
}
