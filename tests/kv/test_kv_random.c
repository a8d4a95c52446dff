/* Randomized model-based test (fixed seeds).
 *
 * Thousands of random engine-like operations (new request with prefix
 * attach, decode append, fork, truncate, window release, commit, free,
 * explicit eviction) run against the pool and against a plain reference
 * model kept here: each sequence as a token list, plus a simulated device
 * buffer dev[block][slot] into which the test "computes" K/V exactly like
 * the engine would (performing the copy-on-write copies the pool reports).
 * The K/V value of position p is a hash of ALL tokens 0..p, so a block
 * attached from the prefix cache under the wrong parent, a shared block
 * written without a copy, or a block reused while still held, all show up
 * as a wrong value. After every operation the test checks:
 *   - every live sequence reads its own expected values through its table;
 *   - ref count of each block == number of table entries holding it, no
 *     block twice in one table, USED iff referenced;
 *   - free + used + cached == total, and the counts match the block states;
 *   - exhaustion happens exactly when blocks_needed > free + cached and then
 *     changes nothing;
 *   - prefix hits never exceed what was committed, and equal it while no
 *     block has ever been evicted;
 *   - llm_kv_pool_check (the pool's own full invariant walk).
 */
#include <stdlib.h>

#include "kv_test_util.h"

#define MAXS 10
#define MAXLEN 160
#define NFAM 4
#define FAMLEN 48
#define NO_TAINT INT32_MAX

typedef struct {
    bool live;
    llm_kv_seq_id id;
    int32_t len;
    int32_t first_pos;
    int32_t tok[MAXLEN];
    uint64_t val[MAXLEN]; /* expected K/V of each position */
    int32_t n_hashed;     /* model of the committed chain */
    int32_t taint;        /* first logical block holding unknown ids */
} mseq;

typedef struct {
    llm_kv_pool *p;
    int32_t nb, bs;
    bool cache_on;
    uint64_t *dev; /* [nb][bs] */
    mseq s[MAXS];
    int32_t fam[NFAM][FAMLEN];
    uint64_t *committed; /* keys of committed block prefixes (val at block end) */
    int32_t n_committed, cap_committed;
    uint64_t rng;
    int32_t next_unknown; /* model ids of tokens appended as NULL */
    /* what happened, to make sure the run exercised every path */
    int n_exhausted, n_cow, n_hits, n_attach, n_window, n_trunc, n_fork, n_exact;
    bool evict_op; /* explicit evictions among the operations */
} world;

static uint64_t rnd(world *w) {
    w->rng ^= w->rng >> 12;
    w->rng ^= w->rng << 25;
    w->rng ^= w->rng >> 27;
    return w->rng * 0x2545F4914F6CDD1DULL;
}

static int32_t rndn(world *w, int32_t n) { return n <= 0 ? 0 : (int32_t)(rnd(w) % (uint64_t)n); }

static uint64_t mix(uint64_t a, int32_t t) {
    uint64_t z = a ^ ((uint64_t)(uint32_t)t * 0x9E3779B97F4A7C15ULL) ^ 0xD1B54A32D192ED03ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void set_token(mseq *m, int32_t p, int32_t t) {
    m->tok[p] = t;
    m->val[p] = mix(p > 0 ? m->val[p - 1] : 0x1234567ULL, t);
}

static bool committed_has(const world *w, uint64_t key) {
    for (int32_t i = 0; i < w->n_committed; i++)
        if (w->committed[i] == key) return true;
    return false;
}

static void committed_add(world *w, uint64_t key) {
    if (committed_has(w, key)) return;
    if (w->n_committed == w->cap_committed) {
        w->cap_committed = w->cap_committed ? 2 * w->cap_committed : 256;
        w->committed = realloc(w->committed, (size_t)w->cap_committed * sizeof *w->committed);
        cr_assert_not_null(w->committed);
    }
    w->committed[w->n_committed++] = key;
}

static uint64_t g_evictions(const world *w) { return kt_stats(w->p).evictions; }

/* Mirror of the documented commit rule. */
static void model_commit(world *w, mseq *m, int32_t n_written) {
    if (!w->cache_on) return;
    for (int32_t i = m->n_hashed; i < n_written / w->bs; i++) {
        if (i * w->bs < m->first_pos || i >= m->taint) break;
        committed_add(w, m->val[(i + 1) * w->bs - 1]);
        m->n_hashed = i + 1;
    }
}

static void do_commit(world *w, mseq *m, int32_t n_written) {
    cr_assert_eq(llm_kv_seq_commit(w->p, m->id, n_written), LLM_OK, "%s", llm_kv_last_error());
    model_commit(w, m, n_written);
}

/* Appends tokens[0..n) (known or not) to m, performs the copy and "computes"
 * the new positions into dev. Returns the status. */
static llm_status do_append(world *w, mseq *m, const int32_t *tokens, int32_t n, bool known) {
    const llm_kv_stats before = kt_stats(w->p);
    const int32_t needed = llm_kv_seq_blocks_needed(w->p, m->id, n);
    cr_assert(needed >= 0);
    llm_kv_cow cow;
    llm_status st = llm_kv_seq_append(w->p, m->id, known ? tokens : NULL, n, &cow);
    if (needed > before.n_free + before.n_cached) {
        cr_assert_eq(st, LLM_ERR_EXHAUSTED, "needed %d, free %d + cached %d", needed, before.n_free,
                     before.n_cached);
        const llm_kv_stats after = kt_stats(w->p);
        cr_assert_eq(after.n_free, before.n_free);
        cr_assert_eq(after.n_cached, before.n_cached);
        cr_assert_eq(after.evictions, before.evictions);
        cr_assert_eq(llm_kv_seq_len(w->p, m->id), m->len);
        w->n_exhausted++;
        return st;
    }
    cr_assert_eq(st, LLM_OK, "%s", llm_kv_last_error());
    const int32_t bs = w->bs;
    if (cow.src >= 0) {
        cr_assert_eq(cow.n_tokens, m->len % bs);
        cr_assert_neq(cow.src, cow.dst);
        memcpy(w->dev + (size_t)cow.dst * bs, w->dev + (size_t)cow.src * bs,
               (size_t)cow.n_tokens * sizeof *w->dev);
        w->n_cow++;
    }
    const int32_t *tbl;
    int32_t nt;
    cr_assert_eq(llm_kv_seq_block_table(w->p, m->id, &tbl, &nt), LLM_OK);
    cr_assert_eq(nt, (m->len + n + bs - 1) / bs);
    for (int32_t k = 0; k < n; k++) {
        const int32_t p = m->len + k;
        set_token(m, p, tokens[k]);
        w->dev[(size_t)tbl[p / bs] * bs + p % bs] = m->val[p];
    }
    if (!known && m->taint > m->len / bs) m->taint = m->len / bs;
    m->len += n;
    return LLM_OK;
}

static mseq *pick_live(world *w) {
    int32_t idx[MAXS], n = 0;
    for (int32_t i = 0; i < MAXS; i++)
        if (w->s[i].live) idx[n++] = i;
    return n ? &w->s[idx[rndn(w, n)]] : NULL;
}

static mseq *pick_free(world *w) {
    for (int32_t i = 0; i < MAXS; i++)
        if (!w->s[i].live) return &w->s[i];
    return NULL;
}

static void model_free(world *w, mseq *m) {
    cr_assert_eq(llm_kv_seq_free(w->p, m->id), LLM_OK);
    m->live = false;
}

static void op_new(world *w) {
    mseq *m = pick_free(w);
    if (!m) return;
    const int32_t bs = w->bs;
    int32_t prompt[MAXLEN];
    const int32_t f = rndn(w, NFAM);
    int32_t common = rndn(w, 4 * bs + 3);
    if (common > FAMLEN) common = FAMLEN;
    int32_t n = common + 1 + rndn(w, 2 * bs);
    if (n > MAXLEN / 2) n = MAXLEN / 2;
    for (int32_t i = 0; i < n; i++) prompt[i] = i < common ? w->fam[f][i] : rndn(w, 6);
    memset(m, 0, sizeof *m);
    m->id = kt_seq(w->p);
    m->live = true;
    m->taint = NO_TAINT;
    int32_t done = 0;
    if (rndn(w, 10) < 8) {
        /* Longest committed prefix according to the model. */
        int32_t longest = 0;
        uint64_t v = 0x1234567ULL;
        for (int32_t i = 0; i < (n - 1) / bs * bs; i++) {
            v = mix(v, prompt[i]);
            if ((i + 1) % bs == 0) {
                if (!committed_has(w, v)) break;
                longest = (i + 1) / bs;
            }
        }
        const bool no_evictions = g_evictions(w) == 0;
        cr_assert_eq(llm_kv_seq_attach_prefix(w->p, m->id, prompt, n - 1, &done), LLM_OK);
        cr_assert_eq(done % bs, 0);
        cr_assert(done <= n - 1);
        cr_assert(done <= longest * bs, "hit %d tokens, only %d blocks were ever committed", done,
                  longest);
        if (no_evictions && w->cache_on) w->n_exact++;
        if (no_evictions && w->cache_on)
            cr_assert_eq(done, longest * bs, "no eviction yet: expected a hit of %d blocks, got %d tokens",
                         longest, done);
        for (int32_t i = 0; i < done; i++) set_token(m, i, prompt[i]);
        m->len = done;
        m->n_hashed = done / bs;
        w->n_attach++;
        if (done > 0) w->n_hits++;
    }
    if (do_append(w, m, prompt + done, n - done, true) != LLM_OK) {
        model_free(w, m); /* the engine rejects this request */
        return;
    }
    if (rndn(w, 10) < 8) do_commit(w, m, m->len);
}

static void op_decode(world *w) {
    mseq *m = pick_live(w);
    if (!m) return;
    int32_t n = rndn(w, 10) < 7 ? 1 : 1 + rndn(w, 2 * w->bs);
    if (m->len + n > MAXLEN) n = MAXLEN - m->len;
    if (n <= 0) return;
    int32_t t[MAXLEN];
    const bool known = rndn(w, 20) != 0;
    for (int32_t i = 0; i < n; i++) t[i] = known ? rndn(w, 6) : (1 << 20) + w->next_unknown++;
    if (do_append(w, m, t, n, known) != LLM_OK) return;
    const int32_t r = rndn(w, 10);
    if (r < 6) do_commit(w, m, m->len);
    else if (r < 8) do_commit(w, m, rndn(w, m->len + 1));
}

static void op_fork(world *w) {
    mseq *m = pick_live(w), *c = pick_free(w);
    if (!m || !c) return;
    llm_kv_seq_id id;
    cr_assert_eq(llm_kv_seq_fork(w->p, m->id, &id), LLM_OK);
    *c = *m;
    c->id = id;
    w->n_fork++;
}

static void op_truncate(world *w) {
    mseq *m = pick_live(w);
    if (!m) return;
    /* Mostly near the end (regenerate), sometimes anywhere. */
    int32_t n = rndn(w, 4) ? m->len - rndn(w, w->bs + 2) : rndn(w, m->len + 1);
    if (n < 0) n = 0;
    llm_status st = llm_kv_seq_truncate(w->p, m->id, n);
    if (n < m->first_pos) {
        cr_assert_eq(st, LLM_ERR_STATE);
        return;
    }
    cr_assert_eq(st, LLM_OK, "%s", llm_kv_last_error());
    m->len = n;
    if (m->n_hashed > n / w->bs) m->n_hashed = n / w->bs;
    if (m->taint != NO_TAINT && n <= m->taint * w->bs) m->taint = NO_TAINT;
    w->n_trunc++;
}

static void op_window(world *w) {
    mseq *m = pick_live(w);
    if (!m) return;
    const int32_t pos = m->first_pos + rndn(w, m->len - m->first_pos + 1);
    cr_assert_eq(llm_kv_seq_release_before(w->p, m->id, pos), LLM_OK);
    const int32_t fp = pos / w->bs * w->bs;
    if (fp > m->first_pos) m->first_pos = fp;
    w->n_window++;
}

static void check_world(world *w) {
    const int32_t nb = w->nb, bs = w->bs;
    int32_t *count = calloc((size_t)nb, sizeof *count);
    int32_t *stamp = malloc((size_t)nb * sizeof *stamp);
    cr_assert(count && stamp);
    for (int32_t i = 0; i < nb; i++) stamp[i] = -1;
    int32_t live = 0;
    for (int32_t q = 0; q < MAXS; q++) {
        const mseq *m = &w->s[q];
        if (!m->live) continue;
        live++;
        cr_assert_eq(llm_kv_seq_len(w->p, m->id), m->len);
        cr_assert_eq(llm_kv_seq_first_pos(w->p, m->id), m->first_pos);
        const int32_t *tbl;
        int32_t nt;
        cr_assert_eq(llm_kv_seq_block_table(w->p, m->id, &tbl, &nt), LLM_OK);
        cr_assert_eq(nt, (m->len + bs - 1) / bs);
        for (int32_t e = 0; e < nt; e++) {
            if (e * bs < m->first_pos) {
                cr_assert_eq(tbl[e], LLM_KV_NO_BLOCK);
                continue;
            }
            cr_assert(tbl[e] >= 0 && tbl[e] < nb);
            cr_assert_neq(stamp[tbl[e]], q, "block %d twice in one table", tbl[e]);
            stamp[tbl[e]] = q;
            count[tbl[e]]++;
        }
        for (int32_t p = m->first_pos; p < m->len; p++)
            cr_assert_eq(w->dev[(size_t)tbl[p / bs] * bs + p % bs], m->val[p],
                         "seq %d position %d reads wrong K/V from block %d", q, p, tbl[p / bs]);
    }
    int32_t used = 0, nfree = 0, cached = 0;
    for (int32_t b = 0; b < nb; b++) {
        const llm_kv_block_info bi = kt_info(w->p, b);
        cr_assert_eq(bi.ref, count[b], "block %d: ref %d, held %d times", b, bi.ref, count[b]);
        if (count[b] > 0) {
            cr_assert_eq(bi.state, LLM_KV_BLOCK_USED);
            used++;
        } else if (bi.state == LLM_KV_BLOCK_CACHED) {
            cr_assert(bi.indexed && w->cache_on);
            cached++;
        } else {
            cr_assert_eq(bi.state, LLM_KV_BLOCK_FREE);
            cr_assert(!bi.indexed);
            nfree++;
        }
    }
    const llm_kv_stats st = kt_stats(w->p);
    cr_assert_eq(st.n_used, used);
    cr_assert_eq(st.n_free, nfree);
    cr_assert_eq(st.n_cached, cached);
    cr_assert_eq(st.n_free + st.n_used + st.n_cached, nb);
    cr_assert_eq(st.n_seqs, live);
    kt_check(w->p);
    free(count);
    free(stamp);
}


static uint64_t hash_const(const int32_t *t, int32_t n, uint64_t seed, void *ud) {
    (void)t, (void)n, (void)seed, (void)ud;
    return 7;
}

static uint64_t hash_2bits(const int32_t *t, int32_t n, uint64_t seed, void *ud) {
    (void)ud;
    uint64_t h = seed;
    for (int32_t i = 0; i < n; i++) h = mix(h, t[i]);
    return h & 3; /* four distinct hashes in all */
}

static void run(int32_t nb, int32_t bs, bool cache_on, llm_kv_hash_fn hf, uint64_t seed, int n_ops,
                bool evict_op) {
    world *w = calloc(1, sizeof *w);
    cr_assert_not_null(w);
    w->nb = nb;
    w->bs = bs;
    w->cache_on = cache_on;
    w->evict_op = evict_op;
    w->rng = seed;
    llm_kv_pool_params pp = llm_kv_pool_default_params();
    pp.n_blocks = nb;
    pp.block_size = bs;
    pp.enable_prefix_cache = cache_on;
    pp.hash_fn = hf;
    cr_assert_eq(llm_kv_pool_create(&pp, &w->p), LLM_OK);
    w->dev = calloc((size_t)nb * (size_t)bs, sizeof *w->dev);
    cr_assert_not_null(w->dev);
    for (int f = 0; f < NFAM; f++)
        for (int i = 0; i < FAMLEN; i++) w->fam[f][i] = rndn(w, 6);
    for (int op = 0; op < n_ops; op++) {
        const int32_t r = rndn(w, 100);
        if (r < 22) op_new(w);
        else if (r < 62) op_decode(w);
        else if (r < 68) op_fork(w);
        else if (r < 76) op_truncate(w);
        else if (r < 81) op_window(w);
        else if (r < 86) {
            mseq *m = pick_live(w);
            if (m) do_commit(w, m, rndn(w, m->len + 1));
        } else if (r < 99) {
            mseq *m = pick_live(w);
            if (m) model_free(w, m);
        } else if (w->evict_op) {
            cr_assert_eq(llm_kv_pool_evict(w->p, rndn(w, 5), NULL), LLM_OK);
        }
        check_world(w);
    }
    /* The run must have gone through the interesting paths. */
    if (bs > 1) {
        cr_assert(w->n_cow > 10, "only %d copies", w->n_cow);
    } else {
        cr_assert_eq(w->n_cow, 0); /* one-token blocks are never partial */
    }
    cr_assert(w->n_fork > 10 && w->n_trunc > 10 && w->n_window > 10);
    if (cache_on) cr_assert(w->n_hits > 10, "only %d prefix hits", w->n_hits);
    if (!evict_op) cr_assert(w->n_exact > 100, "only %d exact checks", w->n_exact);
    cr_log_info("nb=%d bs=%d: %d attaches (%d checked exactly), %d hits, %d copies, %d exhausted, %llu evictions", nb, bs,
                w->n_attach, w->n_exact, w->n_hits, w->n_cow, w->n_exhausted,
                (unsigned long long)kt_stats(w->p).evictions);
    for (int32_t q = 0; q < MAXS; q++)
        if (w->s[q].live) model_free(w, &w->s[q]);
    check_world(w);
    llm_kv_pool_free(w->p);
    free(w->dev);
    free(w->committed);
    free(w);
}

Test(kv_random, small_pool_xxh3) { run(48, 4, true, NULL, 0x9E3779B97F4A7C15ULL, 20000, true); }

Test(kv_random, small_pool_all_hashes_collide) { run(48, 3, true, hash_const, 12345, 20000, true); }

/* Never evicts: every prefix hit is checked for equality with the model. */
Test(kv_random, large_pool_few_hashes_exact_hits) {
    run(3000, 4, true, hash_2bits, 777, 6000, false);
}

Test(kv_random, large_pool_all_hashes_collide_exact_hits) {
    run(2000, 2, true, hash_const, 31337, 3000, false);
}

Test(kv_random, tiny_blocks) { run(40, 1, true, NULL, 4242, 10000, true); }

Test(kv_random, block_16) { run(120, 16, true, NULL, 99, 8000, true); }

Test(kv_random, cache_disabled) { run(40, 2, false, NULL, 2024, 10000, true); }
