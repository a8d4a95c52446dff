/*
 * gbnf_mask.c -- token masks: a walk of the vocabulary trie, and per grammar
 * position token classes computed once (the xgrammar idea).
 *
 * The tokens a stack set allows are the union of what each stack allows.
 * A stack's top GMASK_CONTEXT_DEPTH frames (its "context") decide most
 * tokens: the walk of the trie from the context alone, with BOTTOM standing
 * for whatever the real stack holds below it, sorts every token into
 *   accepted:  consumed within the context (or ending exactly as it ends),
 *              so accepted under any stack with this context;
 *   rejected:  refused within the context, so refused under any such stack;
 *   uncertain: it pops the whole context with bytes to spare.
 * A stack no deeper than the context is its own context, with no uncertain
 * tokens. A class is kept per (context, pending partial UTF-8) for the life
 * of the table (up to GMASK_MAX_CLASSES); a context deeper than
 * GMASK_SHARED_DEPTH starts from its top frames' class and walks only that
 * class's uncertain tokens again. A mask ORs the accepted bitsets
 * of its stacks' contexts and walks the trie from the real stacks only
 * through subtrees holding uncertain tokens.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gbnf_internal.h"

/* Frames of a stack's context: deeper means fewer uncertain tokens but more
 * contexts to classify; 6 did best on bench/grammar's JSON walk. Tests
 * build other depths to check masks stay exact. */
#ifndef GMASK_CONTEXT_DEPTH
#define GMASK_CONTEXT_DEPTH 6
#endif
/* Frames of the shared prefix a deeper context's class is derived from
 * (see get_class_locked); 3 holds a JSON string's body, which is where the
 * costly classes are. See docs/PERFORMANCE.md, "Grammar masks". */
#ifndef GMASK_SHARED_DEPTH
#define GMASK_SHARED_DEPTH 3
#endif
/* Bounds the table: a class is a bitset over the vocabulary. Past it, masks
 * of new contexts are walked in full, uncached. */
#ifndef GMASK_MAX_CLASSES
#define GMASK_MAX_CLASSES 1024
#endif

typedef struct gclass {
    uint32_t key[GMASK_CONTEXT_DEPTH]; /* positions of the context, top first */
    uint32_t key_len;
    uint32_t exact;   /* the context is the whole stack */
    uint32_t hash;
    gpartial p;
    uint32_t *accept; /* [n_words] bitset by token id */
    int32_t *unc;     /* [n_unc] ranks in vocab->sorted, ascending */
    uint32_t n_unc;
} gclass;

struct gmask_table {
    const llm_grammar *g;
    const llm_grammar_vocab *v;
    int refs;
    pthread_mutex_t mu; /* guards refs and cls */
    gclass **cls; /* [n_cls]; each class allocated alone, so that a pointer
                     handed out stays valid while another thread adds one */
    uint32_t n_cls, cap_cls;
    size_t n_words;
};

llm_status llm__gmask_table_create(const llm_grammar *g, const llm_grammar_vocab *v, gmask_table **out) {
    gmask_table *t = calloc(1, sizeof *t);
    if (!t) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    if (pthread_mutex_init(&t->mu, NULL) != 0) {
        free(t);
        return GERR(LLM_ERR_NO_MEMORY, "mutex init failed");
    }
    t->g = g;
    t->v = v;
    t->refs = 1;
    t->n_words = LLM_GRAMMAR_MASK_WORDS(v->n_tokens);
    *out = t;
    return LLM_OK;
}

void llm__gmask_table_retain(gmask_table *t) {
    pthread_mutex_lock(&t->mu);
    t->refs++;
    pthread_mutex_unlock(&t->mu);
}

void llm__gmask_table_release(gmask_table *t) {
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    int left = --t->refs;
    pthread_mutex_unlock(&t->mu);
    if (left) return;
    for (uint32_t i = 0; i < t->n_cls; i++) {
        free(t->cls[i]->accept);
        free(t->cls[i]->unc);
        free(t->cls[i]);
    }
    free(t->cls);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

/* Some stack of arena[off..off+n) can take a completion of partial p. */
static int partial_alive(const gstep_ctx *c, uint32_t off, uint32_t n, gpartial p) {
    for (uint32_t k = 0; k < n; k++) {
        uint32_t s = c->arena.v[off + k];
        if (s <= GSTACK_BOTTOM) continue;
        uint32_t pos = c->pool->nodes[s].pos;
        if (llm__gelem_is_char(c->g->elems[pos].type) && llm__gclass_match_partial(c->g->elems, pos, p)) return 1;
    }
    return 0;
}

/* Is some rank of r[0..n) (ascending) in [lo, hi)? */
static int any_in(const int32_t *r, uint32_t n, uint32_t lo, uint32_t hi) {
    uint32_t a = 0, b = n;
    while (a < b) {
        uint32_t m = (a + b) / 2;
        if ((uint32_t)r[m] < lo) a = m + 1;
        else b = m;
    }
    return a < n && (uint32_t)r[a] < hi;
}

static llm_status unc_range(gids *unc, uint32_t lo, uint32_t hi) {
    llm_status st = LLM_OK;
    for (uint32_t k = lo; k < hi && st == LLM_OK; k++) st = llm__gids_push(unc, k);
    return st;
}

/* Whether all code points 0x80..0x10FFFF do the same to the stacks of
 * set[0..n): no top class splits that range. */
static int nonascii_uniform(const gstep_ctx *c, const uint32_t *set, uint32_t n) {
    const gelem *e = c->g->elems;
    for (uint32_t k = 0; k < n; k++) {
        if (set[k] <= GSTACK_BOTTOM) continue;
        uint32_t pos = c->pool->nodes[set[k]].pos;
        if (!llm__gelem_is_char(e[pos].type)) continue;
        do {
            uint32_t lo = e[pos].value, hi = lo;
            if (e[pos + 1].type == GE_RNG_UPPER) hi = e[pos + 1].value, pos += 2;
            else if (e[pos].type == GE_CHAR_ANY) lo = 0, hi = 0x10FFFF, pos += 1;
            else pos += 1;
            if (!(hi < 0x80 || (lo <= 0x80 && hi >= 0x10FFFF))) return 0;
        } while (e[pos].type == GE_CHAR_ALT);
    }
    return 1;
}

/* Level N's stacks from level L's after code point cp (at the arena's
 * end, BOTTOM dropped into N->has_bottom). A non-ASCII code point reuses
 * L's result for another when their effect cannot differ. */
static llm_status step_level(gstep_ctx *c, gwalk_level *L, gwalk_level *N, uint32_t cp) {
    int na = cp >= 0x80 && cp <= 0x10FFFF;
    if (na && L->na == 0) L->na = nonascii_uniform(c, c->arena.v + L->off, L->n) ? 1 : 2;
    llm_status st = LLM_OK;
    N->off = c->arena.n;
    if (na && L->na == 3) {
        for (uint32_t k = 0; k < L->na_n && st == LLM_OK; k++) st = llm__gids_push(&c->arena, c->na_ids.v[L->na_off + k]);
        N->n = L->na_n;
        N->has_bottom = L->na_bottom;
        return st;
    }
    c->work = 0;
    for (uint32_t k = 0; k < L->n && st == LLM_OK; k++)
        st = llm__gstack_accept_cp(c, c->arena.v[L->off + k], cp, &c->arena);
    if (st != LLM_OK) return st;
    uint32_t *s = c->arena.v + N->off;
    uint32_t m = llm__sort_unique_u32(s, c->arena.n - N->off);
    if (m > 0 && s[0] == GSTACK_EMPTY && m > 1 && s[1] == GSTACK_BOTTOM) {
        N->has_bottom = 1;
        s[1] = s[0];
        N->off++;
        m--;
    } else if (m > 0 && s[0] == GSTACK_BOTTOM) {
        N->has_bottom = 1;
        N->off++;
        m--;
    }
    N->n = m;
    c->arena.n = N->off + m;
    if (na && L->na == 1) {
        L->na_off = c->na_ids.n;
        for (uint32_t k = 0; k < m && st == LLM_OK; k++) st = llm__gids_push(&c->na_ids, c->arena.v[N->off + k]);
        L->na_n = m;
        L->na_bottom = N->has_bottom;
        L->na = 3;
    }
    return st;
}

/* Level N holds the same stacks as level L. */
static void same_set(gwalk_level *N, const gwalk_level *L) {
    N->off = L->off;
    N->n = L->n;
    N->loop = L->loop;
    N->na = L->na;
    N->na_bottom = L->na_bottom;
    N->na_off = L->na_off;
    N->na_n = L->na_n;
}

/* Whether code point cp takes the loop set c->loop back to itself. */
static llm_status loop_step(gstep_ctx *c, uint32_t cp, int *same) {
    gids *a = &c->arena;
    uint32_t base = a->n;
    llm_status st = LLM_OK;
    c->work = 0;
    for (uint32_t k = 0; k < c->loop.n && st == LLM_OK; k++) st = llm__gstack_accept_cp(c, c->loop.v[k], cp, a);
    uint32_t m = st == LLM_OK ? llm__sort_unique_u32(a->v + base, a->n - base) : 0;
    *same = st == LLM_OK && m == c->loop.n && memcmp(a->v + base, c->loop.v, m * sizeof *a->v) == 0;
    a->n = base;
    return st;
}

/* Learns, for the ASCII bytes of want[2] not known yet, whether they take
 * the loop set back to itself (c->loop_same), and once whether all code
 * points 0x80.. do (c->loop_nonascii): then a subtree under the loop set
 * whose tokens hold only such code points accepts them all without a step
 * per node. */
static llm_status loop_learn(gstep_ctx *c, const uint64_t want[2]) {
    llm_status st = LLM_OK;
    for (uint32_t w = 0; w < 2; w++)
        for (uint64_t need = want[w] & ~c->loop_known[w]; need && st == LLM_OK; need &= need - 1) {
            uint32_t cp = 64 * w + (uint32_t)__builtin_ctzll(need);
            int same = 0;
            st = loop_step(c, cp, &same);
            c->loop_known[w] |= 1ull << (cp & 63);
            if (same) c->loop_same[w] |= 1ull << (cp & 63);
        }
    if (st != LLM_OK || c->loop_nonascii >= 0) return st;
    int same = 0;
    if (nonascii_uniform(c, c->loop.v, c->loop.n)) st = loop_step(c, 0x80, &same);
    c->loop_nonascii = same;
    return st;
}

/* Walks the trie from set[0..n) with pending partial p0. Accepted tokens
 * set their bit in accept. With unc (classification), uncertain tokens are
 * appended to it as ranks. With restrict_, only subtrees holding one of
 * its ranks are visited. */
static llm_status walk(gstep_ctx *c, const llm_grammar_vocab *v, const uint32_t *set, uint32_t n, gpartial p0,
                       const int32_t *restrict_, uint32_t n_restrict, uint32_t *accept, gids *unc) {
    if (c->lv_cap < v->max_len + 2) {
        gwalk_level *lv = realloc(c->lv, ((size_t)v->max_len + 2) * sizeof *lv);
        if (!lv) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
        c->lv = lv;
        c->lv_cap = v->max_len + 2;
    }
    c->loop.n = 0;
    c->loop_known[0] = c->loop_known[1] = c->loop_same[0] = c->loop_same[1] = 0;
    c->loop_nonascii = -1;
    int have_loop = 0;
    llm_status st = LLM_OK;
    c->arena.n = 0;
    for (uint32_t k = 0; k < n && st == LLM_OK; k++) st = llm__gids_push(&c->arena, set[k]);
    if (st != LLM_OK) return st;
    c->lv[0] = (gwalk_level){.off = 0, .n = n, .p = p0};
    c->na_ids.n = 0;
    const gtrie_node *trie = v->trie;
    uint32_t i = 0;
    while (i < v->n_nodes) {
        const gtrie_node *nd = &trie[i];
        if (restrict_ && !any_in(restrict_, n_restrict, nd->lo, nd->hi)) {
            i = nd->skip;
            continue;
        }
        gwalk_level *L = &c->lv[nd->depth], *N = &c->lv[nd->depth + 1];
        c->arena.n = L->off + L->n;
        N->p = L->p;
        N->bseen = L->bseen || L->has_bottom;
        N->has_bottom = 0;
        N->loop = 0;
        N->na = 0;
        uint32_t cp;
        int r = llm__gutf8_step(&N->p, (uint8_t)nd->byte, &cp);
        if (r < 0) {
            i = nd->skip;
            continue;
        }
        gloop_slot *ls = r > 0 && L->loop ? &c->loop_cp[(cp * 0x9E3779B1u) >> 22] : NULL;
        if (r == 0) {
            same_set(N, L);
            if (!partial_alive(c, N->off, N->n, N->p)) {
                if (unc && N->bseen && (st = unc_range(unc, nd->lo, nd->hi)) != LLM_OK) return st;
                i = nd->skip;
                continue;
            }
        } else if (L->loop && cp >= 0x80 && cp <= 0x10FFFF && c->loop_nonascii < 0 &&
                   (st = loop_learn(c, (const uint64_t[2]){0, 0})) != LLM_OK) {
            return st;
        } else if ((ls && ls->cp == cp + 1 && ls->same) ||
                   (L->loop && cp >= 0x80 && cp <= 0x10FFFF && c->loop_nonascii == 1)) {
            same_set(N, L); /* the loop set again: share L's stacks */
        } else {
            if ((st = step_level(c, L, N, cp)) != LLM_OK) return st;
            uint32_t *s = c->arena.v + N->off, m = N->n;
            if (m > c->max_stacks)
                return GERR(LLM_ERR_EXHAUSTED, "grammar too ambiguous: %u stacks (max_stacks %u)", m, c->max_stacks);
            if (!N->has_bottom && m > 0) {
                const uint32_t *ref = have_loop ? c->loop.v : c->arena.v + L->off;
                uint32_t n_ref = have_loop ? c->loop.n : L->n;
                N->loop = m == n_ref && memcmp(s, ref, m * sizeof *s) == 0;
                if (N->loop && !have_loop) { /* the first set a code point took back to itself */
                    if (!c->loop_cp && !(c->loop_cp = malloc(GLOOP_SLOTS * sizeof *c->loop_cp)))
                        return GERR(LLM_ERR_NO_MEMORY, "out of memory");
                    memset(c->loop_cp, 0, GLOOP_SLOTS * sizeof *c->loop_cp);
                    for (uint32_t k = 0; k < m && st == LLM_OK; k++) st = llm__gids_push(&c->loop, s[k]);
                    if (st != LLM_OK) return st;
                    have_loop = 1;
                    L->loop = 1;
                    ls = &c->loop_cp[(cp * 0x9E3779B1u) >> 22];
                }
            }
            if (ls) *ls = (gloop_slot){cp + 1, N->loop};
            if (m == 0 && !N->has_bottom) {
                if (unc && N->bseen && (st = unc_range(unc, nd->lo, nd->hi)) != LLM_OK) return st;
                i = nd->skip;
                continue;
            }
        }
        if (N->loop && N->p.n_remain == 0 && nd->skip > i + 1) {
            const uint64_t *b = v->below[i];
            uint8_t f = v->below_flags[i];
            if ((st = loop_learn(c, b)) != LLM_OK) return st;
            if (!(b[0] & ~c->loop_same[0]) && !(b[1] & ~c->loop_same[1]) && !(f & GBELOW_BAD) &&
                (!(f & GBELOW_NONASCII) || c->loop_nonascii == 1)) {
                for (uint32_t k = nd->lo; k < nd->hi; k++) {
                    int32_t tok = v->sorted[k];
                    accept[tok >> 5] |= 1u << (tok & 31);
                }
                i = nd->skip;
                continue;
            }
        }
        if (nd->n_end) {
            int acc = N->p.n_remain == 0 ? (N->n > 0 || N->has_bottom) : partial_alive(c, N->off, N->n, N->p);
            for (uint32_t k = nd->lo; k < nd->lo + nd->n_end; k++) {
                int32_t tok = v->sorted[k];
                if (acc) accept[tok >> 5] |= 1u << (tok & 31);
                else if (unc && (N->bseen || N->has_bottom) && (st = llm__gids_push(unc, k)) != LLM_OK) return st;
            }
        }
        i++;
    }
    return LLM_OK;
}

typedef struct gctx_key {
    uint32_t key[GMASK_CONTEXT_DEPTH];
    uint32_t len, exact, hash;
} gctx_key;

static void hash_context(gctx_key *k, gpartial p) {
    uint32_t h = 2166136261u ^ k->exact ^ (p.value << 3) ^ ((uint32_t)p.n_remain << 29);
    for (uint32_t i = 0; i < k->len; i++) h = (h ^ k->key[i]) * 16777619u;
    k->hash = h;
}

static void context_of(const gstep_ctx *c, uint32_t s, gpartial p, gctx_key *k) {
    k->len = 0;
    while (s > GSTACK_BOTTOM && k->len < GMASK_CONTEXT_DEPTH) {
        k->key[k->len++] = c->pool->nodes[s].pos;
        s = c->pool->nodes[s].parent;
    }
    k->exact = s == GSTACK_EMPTY;
    hash_context(k, p);
}

static int same_context(const gctx_key *a, const gctx_key *b) {
    return a->hash == b->hash && a->len == b->len && a->exact == b->exact &&
           memcmp(a->key, b->key, a->len * sizeof a->key[0]) == 0;
}

/* Ranks of a[0..na) also in b[0..nb) (both ascending), in place in a. */
static uint32_t intersect_ranks(int32_t *a, uint32_t na, const int32_t *b, uint32_t nb) {
    uint32_t i = 0, j = 0, n = 0;
    while (i < na && j < nb) {
        if (a[i] < b[j]) i++;
        else if (a[i] > b[j]) j++;
        else a[n++] = a[i++], j++;
    }
    return n;
}

static const gclass *find_class(const gmask_table *t, const gctx_key *k, gpartial p) {
    for (uint32_t i = 0; i < t->n_cls; i++) {
        const gclass *x = t->cls[i];
        if (x->hash == k->hash && x->key_len == k->len && x->exact == k->exact && x->p.value == p.value &&
            x->p.n_remain == p.n_remain && memcmp(x->key, k->key, k->len * sizeof k->key[0]) == 0)
            return x;
    }
    return NULL;
}

/* The class of context k with partial p, computed on first use; *out NULL
 * when the table is full. Called with t->mu held.
 *
 * A context's top frames alone (its prefix, one frame shorter, with BOTTOM
 * below) already decide most tokens: what the prefix accepts or rejects, k
 * does too. So k's class is its prefix's, with only the prefix's uncertain
 * tokens walked again from k. Contexts that differ only deep down (every
 * string value of a JSON object) then share the one expensive whole-trie
 * walk of their common top. */
static llm_status get_class_locked(gmask_table *t, gstep_ctx *c, const gctx_key *k, gpartial p,
                                   const gclass **out) {
    *out = find_class(t, k, p);
    if (*out || t->n_cls >= GMASK_MAX_CLASSES) return LLM_OK;
    llm_status st = LLM_OK;
    const gclass *up = NULL;
    if (k->len > GMASK_SHARED_DEPTH) {
        gctx_key pk = *k;
        pk.len = GMASK_SHARED_DEPTH;
        pk.exact = 0;
        hash_context(&pk, p);
        st = get_class_locked(t, c, &pk, p, &up);
        if (st != LLM_OK) return st;
        if (!up || t->n_cls >= GMASK_MAX_CLASSES) return LLM_OK;
    }
    gclass x = {.key_len = k->len, .exact = k->exact, .hash = k->hash, .p = p};
    memcpy(x.key, k->key, k->len * sizeof k->key[0]);
    gids unc = {0};
    uint32_t top = k->exact ? GSTACK_EMPTY : GSTACK_BOTTOM;
    for (uint32_t i = k->len; i-- > 0 && st == LLM_OK;) st = llm__gpool_intern(c->pool, k->key[i], top, &top);
    x.accept = calloc(t->n_words, sizeof *x.accept);
    if (st == LLM_OK && !x.accept) st = GERR(LLM_ERR_NO_MEMORY, "out of memory");
    if (st == LLM_OK && up) {
        memcpy(x.accept, up->accept, t->n_words * sizeof *x.accept);
        /* a restricted walk pays a search per node: not worth it when most tokens are uncertain */
        int restrict_ = 2 * (uint64_t)up->n_unc < (uint64_t)t->v->n_text;
        if (up->n_unc)
            st = walk(c, t->v, &top, 1, p, restrict_ ? up->unc : NULL, restrict_ ? up->n_unc : 0, x.accept, &unc);
        if (st == LLM_OK) unc.n = intersect_ranks((int32_t *)unc.v, unc.n, up->unc, up->n_unc);
    } else if (st == LLM_OK) {
        st = walk(c, t->v, &top, 1, p, NULL, 0, x.accept, &unc);
    }
    gclass *xp = st == LLM_OK ? malloc(sizeof *xp) : NULL;
    if (st == LLM_OK && !xp) st = GERR(LLM_ERR_NO_MEMORY, "out of memory");
    if (st == LLM_OK && t->n_cls == t->cap_cls) {
        uint32_t cap = t->cap_cls ? 2 * t->cap_cls : 32;
        gclass **nc = realloc(t->cls, cap * sizeof *nc);
        if (!nc) st = GERR(LLM_ERR_NO_MEMORY, "out of memory");
        else {
            t->cls = nc;
            t->cap_cls = cap;
        }
    }
    if (st != LLM_OK) {
        free(xp);
        free(x.accept);
        llm__gids_free(&unc);
        return st;
    }
    x.unc = (int32_t *)unc.v; /* ranks fit in int32 */
    x.n_unc = unc.n;
    *xp = x;
    t->cls[t->n_cls++] = xp;
    *out = xp;
    return LLM_OK;
}

static llm_status get_class(gmask_table *t, gstep_ctx *c, const gctx_key *k, gpartial p, const gclass **out) {
    pthread_mutex_lock(&t->mu);
    llm_status st = get_class_locked(t, c, k, p, out);
    pthread_mutex_unlock(&t->mu);
    return st;
}

llm_status llm__gmask_fill(gmask_table *t, gstep_ctx *c, const uint32_t *set, uint32_t n, gpartial p,
                           uint32_t *mask) {
    const gelem *e = c->g->elems;
    const llm_grammar_vocab *v = t->v;
    llm_status st = LLM_OK;
    gids group = {0};
    uint32_t n_not = 0, not_id = 0;
    int not_all = 0;
    gctx_key *keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    for (uint32_t i = 0; i < n; i++)
        if (set[i] > GSTACK_BOTTOM) context_of(c, set[i], p, &keys[i]);
    for (uint32_t i = 0; i < n && st == LLM_OK; i++) {
        uint32_t s = set[i];
        if (s <= GSTACK_BOTTOM) continue;
        uint32_t pos = c->pool->nodes[s].pos;
        uint32_t type = e[pos].type;
        if (type == GE_TOKEN) {
            if (e[pos].value < (uint32_t)v->n_tokens) mask[e[pos].value >> 5] |= 1u << (e[pos].value & 31);
            continue;
        }
        if (type == GE_TOKEN_NOT) {
            /* allows every token but its own: with two different ones, all */
            not_all = not_all || (n_not && not_id != e[pos].value);
            not_id = e[pos].value;
            n_not++;
            continue;
        }
        int done = 0; /* a stack with the same context was grouped already */
        for (uint32_t j = 0; j < i && !done; j++) done = set[j] > GSTACK_BOTTOM && same_context(&keys[j], &keys[i]);
        if (done) continue;
        group.n = 0;
        for (uint32_t j = i; j < n && st == LLM_OK; j++)
            if (set[j] > GSTACK_BOTTOM && same_context(&keys[j], &keys[i])) st = llm__gids_push(&group, set[j]);
        const gclass *k = NULL;
        if (st == LLM_OK) st = get_class(t, c, &keys[i], p, &k);
        if (st != LLM_OK) break;
        if (!k) { /* table full: the whole walk, uncached */
            st = walk(c, v, group.v, group.n, p, NULL, 0, mask, NULL);
            continue;
        }
        for (size_t w = 0; w < t->n_words; w++) mask[w] |= k->accept[w];
        if (k->n_unc) st = walk(c, v, group.v, group.n, p, k->unc, k->n_unc, mask, NULL);
    }
    free(keys);
    llm__gids_free(&group);
    if (st == LLM_OK && n_not) {
        uint32_t keep = 0, w0 = not_id >> 5, b0 = 1u << (not_id & 31);
        int in = !not_all && not_id < (uint32_t)v->n_tokens;
        if (in) keep = mask[w0] & b0;
        for (size_t w = 0; w < t->n_words; w++) mask[w] = ~0u;
        if (in) mask[w0] = (mask[w0] & ~b0) | keep;
    }
    return st;
}
