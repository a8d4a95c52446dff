/*
 * gbnf_matcher.c -- the matcher: a history of stack sets (rollback pops
 * it), accepting bytes and tokens, lazy triggers, and masks.
 *
 * Step k of the history holds the stack set after k accepted steps (ids in
 * hist.v[off..off+n), a slice shared with step k-1 when unchanged), the
 * pending partial UTF-8 sequence, and the lazy state. Stacks are nodes of
 * the matcher's pool; nodes are never freed, so every step stays valid.
 */
#include <stdlib.h>
#include <string.h>

#include "gbnf_internal.h"

#define MASK_CACHE_SLOTS 16 /* recent (stack set -> mask) results */

typedef struct hstep {
    uint32_t off, n;   /* stack set: hist.v[off..off+n) */
    gpartial p;
    uint8_t awaiting;  /* lazy: trigger not seen yet */
    uint8_t ended;     /* an EOG token was accepted */
    size_t tbuf_len;   /* lazy: bytes of text buffered so far */
    uint32_t n_tpos;
} hstep;

typedef struct tpos {
    int32_t token; /* -1 for accept_bytes */
    size_t start, end;
} tpos;

typedef struct mslot {
    uint64_t key;
    uint32_t *set, n_set; /* the set the mask is for */
    gpartial p;
    uint32_t *mask;
} mslot;

struct llm_grammar_matcher {
    const llm_grammar *g;
    const llm_grammar_vocab *v;
    gpool pool;
    gstep_ctx ctx;
    gids hist;
    hstep *steps; /* [n_steps + 1]: steps[n_steps] is the current state */
    uint32_t n_steps, cap_steps;
    gids cur, tmp; /* scratch sets */
    gmask_table *table;
    mslot cache[MASK_CACHE_SLOTS];
    uint32_t cache_next;
    /* lazy */
    int lazy;
    char **words;
    size_t *word_len, max_word;
    int32_t n_words;
    int32_t *ttok;
    int32_t n_ttok;
    char *tbuf;
    size_t tbuf_cap;
    tpos *tp;
    uint32_t tp_cap;
};

llm_grammar_matcher_params llm_grammar_matcher_default_params(void) {
    llm_grammar_matcher_params p;
    memset(&p, 0, sizeof p);
    p.max_stacks = 2048;
    return p;
}

static const hstep *cur_step(const llm_grammar_matcher *m) { return &m->steps[m->n_steps]; }

void llm_grammar_matcher_free(llm_grammar_matcher *m) {
    if (!m) return;
    llm__gpool_free(&m->pool);
    llm__gstep_ctx_free(&m->ctx);
    llm__gids_free(&m->hist);
    llm__gids_free(&m->cur);
    llm__gids_free(&m->tmp);
    free(m->steps);
    llm__gmask_table_release(m->table);
    for (int i = 0; i < MASK_CACHE_SLOTS; i++) {
        free(m->cache[i].set);
        free(m->cache[i].mask);
    }
    for (int32_t i = 0; i < m->n_words; i++) free(m->words ? m->words[i] : NULL);
    free(m->words);
    free(m->word_len);
    free(m->ttok);
    free(m->tbuf);
    free(m->tp);
    free(m);
}

static llm_status push_step(llm_grammar_matcher *m, const hstep *s) {
    if (m->n_steps + 1 == m->cap_steps) {
        uint32_t cap = m->cap_steps * 2;
        hstep *ns = realloc(m->steps, cap * sizeof *ns);
        if (!ns) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
        m->steps = ns;
        m->cap_steps = cap;
    }
    m->steps[++m->n_steps] = *s;
    return LLM_OK;
}

/* The history slice for set[0..n): the current one when equal, else appended. */
static llm_status store_set(llm_grammar_matcher *m, const uint32_t *set, uint32_t n, uint32_t *off) {
    const hstep *c = cur_step(m);
    if (c->n == n && memcmp(m->hist.v + c->off, set, n * sizeof *set) == 0) {
        *off = c->off;
        return LLM_OK;
    }
    m->hist.n = c->off + c->n; /* drop slices of rolled-back steps */
    *off = m->hist.n;
    for (uint32_t i = 0; i < n; i++) {
        llm_status st = llm__gids_push(&m->hist, set[i]);
        if (st != LLM_OK) {
            m->hist.n = *off;
            return st;
        }
    }
    return LLM_OK;
}

llm_status llm_grammar_matcher_create(const llm_grammar *g, const llm_grammar_vocab *v,
                                      const llm_grammar_matcher_params *params, llm_grammar_matcher **out) {
    if (out) *out = NULL;
    if (!g || !out) return GERR(LLM_ERR_INVALID_ARG, "llm_grammar_matcher_create: NULL argument");
    llm_grammar_matcher_params p = params ? *params : llm_grammar_matcher_default_params();
    if (p.max_stacks < 1 || p.n_trigger_words < 0 || p.n_trigger_tokens < 0 ||
        (p.n_trigger_words && !p.trigger_words) || (p.n_trigger_tokens && !p.trigger_tokens))
        return GERR(LLM_ERR_INVALID_ARG, "llm_grammar_matcher_create: bad params");
    if (p.lazy && !p.n_trigger_words && !p.n_trigger_tokens)
        return GERR(LLM_ERR_INVALID_ARG, "a lazy grammar needs trigger words or tokens");
    for (int32_t i = 0; i < p.n_trigger_words; i++)
        if (!p.trigger_words[i] || !p.trigger_words[i][0])
            return GERR(LLM_ERR_INVALID_ARG, "trigger word %d is NULL or empty", (int)i);
    llm_grammar_matcher *m = calloc(1, sizeof *m);
    if (!m) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    m->g = g;
    m->v = v;
    llm_status st = llm__gpool_init(&m->pool);
    m->ctx.g = g;
    m->ctx.pool = &m->pool;
    m->ctx.max_stacks = (uint32_t)p.max_stacks;
    m->cap_steps = 64;
    m->steps = malloc(m->cap_steps * sizeof *m->steps);
    m->lazy = p.lazy;
    if (st == LLM_OK && !m->steps) st = GERR(LLM_ERR_NO_MEMORY, "out of memory");
    if (st == LLM_OK && p.n_trigger_words) {
        m->words = calloc((size_t)p.n_trigger_words, sizeof *m->words);
        m->word_len = calloc((size_t)p.n_trigger_words, sizeof *m->word_len);
        if (!m->words || !m->word_len) st = GERR(LLM_ERR_NO_MEMORY, "out of memory");
        for (int32_t i = 0; st == LLM_OK && i < p.n_trigger_words; i++) {
            size_t len = strlen(p.trigger_words[i]);
            m->words[i] = malloc(len + 1);
            if (!m->words[i]) {
                st = GERR(LLM_ERR_NO_MEMORY, "out of memory");
                break;
            }
            memcpy(m->words[i], p.trigger_words[i], len + 1);
            m->word_len[i] = len;
            if (len > m->max_word) m->max_word = len;
            m->n_words = i + 1;
        }
    }
    if (st == LLM_OK && p.n_trigger_tokens) {
        m->ttok = malloc((size_t)p.n_trigger_tokens * sizeof *m->ttok);
        if (!m->ttok) st = GERR(LLM_ERR_NO_MEMORY, "out of memory");
        else memcpy(m->ttok, p.trigger_tokens, (size_t)p.n_trigger_tokens * sizeof *m->ttok);
        m->n_ttok = p.n_trigger_tokens;
    }
    /* the class table exists from the start, so that every clone shares it */
    if (st == LLM_OK && v) st = llm__gmask_table_create(g, v, &m->table);
    if (st == LLM_OK) st = llm__gstack_initial(&m->ctx, &m->cur);
    if (st == LLM_OK) {
        hstep s0 = {0};
        s0.awaiting = (uint8_t)(p.lazy != 0);
        m->steps[0] = s0;
        m->n_steps = 0;
        uint32_t off = 0;
        for (uint32_t i = 0; i < m->cur.n && st == LLM_OK; i++) st = llm__gids_push(&m->hist, m->cur.v[i]);
        m->steps[0].off = off;
        m->steps[0].n = m->cur.n;
    }
    if (st != LLM_OK) {
        llm_grammar_matcher_free(m);
        return st;
    }
    *out = m;
    return LLM_OK;
}

static llm_status dup_mem(void **dst, const void *src, size_t bytes) {
    *dst = NULL;
    if (!bytes) return LLM_OK;
    *dst = malloc(bytes);
    if (!*dst) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    memcpy(*dst, src, bytes);
    return LLM_OK;
}

llm_status llm_grammar_matcher_clone(const llm_grammar_matcher *m, llm_grammar_matcher **out) {
    if (out) *out = NULL;
    if (!m || !out) return GERR(LLM_ERR_INVALID_ARG, "llm_grammar_matcher_clone: NULL argument");
    llm_grammar_matcher *c = calloc(1, sizeof *c);
    if (!c) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    c->g = m->g;
    c->v = m->v;
    c->ctx.g = m->g;
    c->ctx.pool = &c->pool;
    c->ctx.max_stacks = m->ctx.max_stacks;
    c->lazy = m->lazy;
    c->max_word = m->max_word;
    llm_status st = llm__gpool_copy(&c->pool, &m->pool);
    c->cap_steps = m->cap_steps;
    c->n_steps = m->n_steps;
    if (st == LLM_OK) st = dup_mem((void **)&c->steps, m->steps, m->cap_steps * sizeof *m->steps);
    if (st == LLM_OK) {
        c->hist.n = c->hist.cap = m->hist.n;
        st = dup_mem((void **)&c->hist.v, m->hist.v, m->hist.n * sizeof *m->hist.v);
    }
    if (st == LLM_OK && m->n_words) {
        c->words = calloc((size_t)m->n_words, sizeof *c->words);
        st = c->words ? dup_mem((void **)&c->word_len, m->word_len, (size_t)m->n_words * sizeof *m->word_len)
                      : GERR(LLM_ERR_NO_MEMORY, "out of memory");
        for (int32_t i = 0; st == LLM_OK && i < m->n_words; i++) {
            st = dup_mem((void **)&c->words[i], m->words[i], m->word_len[i] + 1);
            c->n_words = i + 1;
        }
    }
    if (st == LLM_OK && m->n_ttok) {
        st = dup_mem((void **)&c->ttok, m->ttok, (size_t)m->n_ttok * sizeof *m->ttok);
        c->n_ttok = m->n_ttok;
    }
    if (st == LLM_OK && m->tbuf_cap) {
        st = dup_mem((void **)&c->tbuf, m->tbuf, m->tbuf_cap);
        c->tbuf_cap = c->tbuf ? m->tbuf_cap : 0;
    }
    if (st == LLM_OK && m->tp_cap) {
        st = dup_mem((void **)&c->tp, m->tp, m->tp_cap * sizeof *m->tp);
        c->tp_cap = c->tp ? m->tp_cap : 0;
    }
    if (st == LLM_OK && m->table) {
        llm__gmask_table_retain(m->table);
        c->table = m->table;
    }
    if (st != LLM_OK) {
        llm_grammar_matcher_free(c);
        return st;
    }
    *out = c;
    return LLM_OK;
}

/* From stack set set[0..n) with partial p: the set after a piece of a token
 * (token < 0: plain text; text_ok: the bytes may match text). Result in
 * m->cur and *pout; LLM_ERR_BAD_FORMAT when nothing survives. */
static llm_status step_piece(llm_grammar_matcher *m, const uint32_t *set, uint32_t n, gpartial p, int32_t token,
                             const uint8_t *bytes, size_t len, int text_ok, gpartial *pout) {
    gstep_ctx *c = &m->ctx;
    gids *cur = &m->cur, *nxt = &m->tmp;
    llm_status st = LLM_OK;
    gids by_token = {0};
    c->work = 0;
    if (token >= 0)
        for (uint32_t i = 0; i < n && st == LLM_OK; i++) st = llm__gstack_accept_token(c, set[i], token, &by_token);
    cur->n = 0;
    if (text_ok)
        for (uint32_t i = 0; i < n && st == LLM_OK; i++) st = llm__gids_push(cur, set[i]);
    for (size_t b = 0; b < len && st == LLM_OK && cur->n > 0; b++) {
        uint32_t cp;
        int r = llm__gutf8_step(&p, bytes[b], &cp);
        if (r < 0) {
            cur->n = 0;
            break;
        }
        if (r == 0) continue;
        nxt->n = 0;
        c->work = 0;
        for (uint32_t i = 0; i < cur->n && st == LLM_OK; i++) st = llm__gstack_accept_cp(c, cur->v[i], cp, nxt);
        llm__gids_sort_unique(nxt);
        if (st == LLM_OK && nxt->n > c->max_stacks)
            st = GERR(LLM_ERR_EXHAUSTED, "grammar too ambiguous: %u stacks (max_stacks %u)", nxt->n, c->max_stacks);
        gids t = *cur;
        *cur = *nxt;
        *nxt = t;
    }
    if (st == LLM_OK && cur->n > 0 && p.n_remain > 0) {
        int alive = 0;
        for (uint32_t i = 0; i < cur->n && !alive; i++) {
            uint32_t s = cur->v[i];
            if (s <= GSTACK_BOTTOM) continue;
            uint32_t pos = m->pool.nodes[s].pos;
            alive = llm__gelem_is_char(m->g->elems[pos].type) && llm__gclass_match_partial(m->g->elems, pos, p);
        }
        if (!alive) cur->n = 0;
    }
    if (st == LLM_OK) {
        if (cur->n == 0) p = (gpartial){0, 0};
        for (uint32_t i = 0; i < by_token.n && st == LLM_OK; i++) st = llm__gids_push(cur, by_token.v[i]);
        llm__gids_sort_unique(cur);
        if (st == LLM_OK && cur->n > c->max_stacks)
            st = GERR(LLM_ERR_EXHAUSTED, "grammar too ambiguous: %u stacks (max_stacks %u)", cur->n, c->max_stacks);
        if (st == LLM_OK && cur->n == 0) st = GERR(LLM_ERR_BAD_FORMAT, "the grammar does not allow this text here");
    }
    llm__gids_free(&by_token);
    *pout = p;
    return st;
}

/* Commits m->cur with partial p (and the lazy fields of s) as a new step. */
static llm_status commit(llm_grammar_matcher *m, hstep s, gpartial p) {
    uint32_t off;
    llm_status st = store_set(m, m->cur.v, m->cur.n, &off);
    if (st != LLM_OK) return st;
    s.off = off;
    s.n = m->cur.n;
    s.p = p;
    return push_step(m, &s);
}

static int is_trigger_token(const llm_grammar_matcher *m, int32_t token) {
    for (int32_t i = 0; i < m->n_ttok; i++)
        if (m->ttok[i] == token) return 1;
    return 0;
}

static llm_status tbuf_append(llm_grammar_matcher *m, const hstep *s, int32_t token, const void *b, size_t len) {
    if (s->tbuf_len + len > m->tbuf_cap) {
        size_t cap = m->tbuf_cap ? m->tbuf_cap : 256;
        while (cap < s->tbuf_len + len) cap *= 2;
        char *nb = realloc(m->tbuf, cap);
        if (!nb) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
        m->tbuf = nb;
        m->tbuf_cap = cap;
    }
    if (s->n_tpos + 1 > m->tp_cap) {
        uint32_t cap = m->tp_cap ? 2 * m->tp_cap : 64;
        tpos *nt = realloc(m->tp, cap * sizeof *nt);
        if (!nt) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
        m->tp = nt;
        m->tp_cap = cap;
    }
    if (len) memcpy(m->tbuf + s->tbuf_len, b, len);
    m->tp[s->n_tpos] = (tpos){token, s->tbuf_len, s->tbuf_len + len};
    return LLM_OK;
}

/* Earliest start of a trigger word in tbuf[0..len), searching only where a
 * match could end after `from`; SIZE_MAX when none. */
static size_t find_trigger(const llm_grammar_matcher *m, size_t len, size_t from) {
    size_t best = SIZE_MAX;
    size_t lo = from > m->max_word ? from - m->max_word : 0;
    for (int32_t w = 0; w < m->n_words; w++) {
        size_t wl = m->word_len[w];
        for (size_t i = lo; i + wl <= len && i < best; i++)
            if (memcmp(m->tbuf + i, m->words[w], wl) == 0) {
                best = i;
                break;
            }
    }
    return best;
}

static int text_allowed(const llm_grammar_vocab *v, int32_t token) {
    return !(v->flags[token] & LLM_GRAMMAR_TOKEN_SPECIAL) && v->off[token + 1] > v->off[token];
}

/* A lazy matcher that has not triggered yet takes one token or text. */
static llm_status accept_awaiting(llm_grammar_matcher *m, int32_t token, const void *bytes, size_t len) {
    const hstep *c = cur_step(m);
    const uint32_t *set0 = m->hist.v + c->off;
    uint32_t n0 = c->n;
    hstep s = *c;
    gpartial p;
    llm_status st;
    if (token >= 0 && is_trigger_token(m, token)) {
        st = step_piece(m, set0, n0, c->p, token, bytes, len, text_allowed(m->v, token), &p);
        if (st != LLM_OK) return st;
        s.awaiting = 0;
        return commit(m, s, p);
    }
    if ((st = tbuf_append(m, &s, token, bytes, len)) != LLM_OK) return st;
    size_t from = s.tbuf_len, end = s.tbuf_len + len;
    s.tbuf_len = end;
    s.n_tpos++;
    size_t at = find_trigger(m, end, from);
    if (at == SIZE_MAX) {
        m->cur.n = 0;
        for (uint32_t i = 0; i < n0 && st == LLM_OK; i++) st = llm__gids_push(&m->cur, set0[i]);
        return st == LLM_OK ? commit(m, s, c->p) : st;
    }
    /* replay from the trigger: pieces of the buffered steps from `at` on */
    gids set = {0};
    for (uint32_t i = 0; i < n0 && st == LLM_OK; i++) st = llm__gids_push(&set, set0[i]);
    p = c->p;
    for (uint32_t k = 0; k < s.n_tpos && st == LLM_OK; k++) {
        const tpos *t = &m->tp[k];
        if (t->end <= at) continue;
        int whole = t->start >= at && t->token >= 0;
        size_t b = t->start > at ? t->start : at;
        st = step_piece(m, set.v, set.n, p, whole ? t->token : -1, (const uint8_t *)m->tbuf + b, t->end - b,
                        whole ? text_allowed(m->v, t->token) : 1, &p);
        set.n = 0;
        for (uint32_t i = 0; i < m->cur.n && st == LLM_OK; i++) st = llm__gids_push(&set, m->cur.v[i]);
    }
    llm__gids_free(&set);
    if (st != LLM_OK) return st;
    s.awaiting = 0;
    return commit(m, s, p);
}

llm_status llm_grammar_matcher_accept_bytes(llm_grammar_matcher *m, const void *bytes, size_t len) {
    if (!m || (!bytes && len)) return GERR(LLM_ERR_INVALID_ARG, "llm_grammar_matcher_accept_bytes: NULL argument");
    const hstep *c = cur_step(m);
    if (c->awaiting) return accept_awaiting(m, -1, bytes, len);
    if (c->ended && len) return GERR(LLM_ERR_BAD_FORMAT, "text after the end of generation");
    gpartial p;
    llm_status st = step_piece(m, m->hist.v + c->off, c->n, c->p, -1, bytes, len, 1, &p);
    return st == LLM_OK ? commit(m, *c, p) : st;
}

int llm_grammar_matcher_can_end(const llm_grammar_matcher *m) {
    if (!m) return 0;
    const hstep *c = cur_step(m);
    if (c->awaiting) return 1;
    if (c->p.n_remain) return 0;
    return c->n > 0 && m->hist.v[c->off] == GSTACK_EMPTY; /* sets are sorted: EMPTY (0) first */
}

llm_status llm_grammar_matcher_accept_token(llm_grammar_matcher *m, int32_t token) {
    if (!m || !m->v) return GERR(LLM_ERR_INVALID_ARG, "llm_grammar_matcher_accept_token: no matcher or vocabulary");
    if (token < 0 || token >= m->v->n_tokens) return GERR(LLM_ERR_INVALID_ARG, "token %d out of range", (int)token);
    const llm_grammar_vocab *v = m->v;
    const hstep *c = cur_step(m);
    const void *b = v->bytes + v->off[token];
    size_t len = v->off[token + 1] - v->off[token];
    if (v->flags[token] & LLM_GRAMMAR_TOKEN_EOG) {
        hstep s = *c;
        if (!c->awaiting) {
            if (!llm_grammar_matcher_can_end(m)) return GERR(LLM_ERR_BAD_FORMAT, "the grammar cannot end here");
            s.ended = 1;
            m->cur.n = 0;
            llm_status st = llm__gids_push(&m->cur, GSTACK_EMPTY);
            if (st != LLM_OK) return st;
            return commit(m, s, c->p);
        }
        m->cur.n = 0;
        for (uint32_t i = 0; i < c->n; i++) {
            llm_status st = llm__gids_push(&m->cur, m->hist.v[c->off + i]);
            if (st != LLM_OK) return st;
        }
        return commit(m, s, c->p);
    }
    if (c->awaiting) return accept_awaiting(m, token, b, len);
    if (c->ended) return GERR(LLM_ERR_BAD_FORMAT, "a token after the end of generation");
    gpartial p;
    llm_status st = step_piece(m, m->hist.v + c->off, c->n, c->p, token, b, len, text_allowed(v, token), &p);
    return st == LLM_OK ? commit(m, *c, p) : st;
}

llm_status llm_grammar_matcher_rollback(llm_grammar_matcher *m, int32_t n) {
    if (!m || n < 0 || (uint32_t)n > m->n_steps)
        return GERR(LLM_ERR_INVALID_ARG, "rollback of %d steps: only %u taken", (int)n, m ? m->n_steps : 0);
    m->n_steps -= (uint32_t)n;
    return LLM_OK;
}

int32_t llm_grammar_matcher_n_steps(const llm_grammar_matcher *m) { return m ? (int32_t)m->n_steps : 0; }

static uint64_t set_key(const uint32_t *set, uint32_t n, gpartial p) {
    uint64_t h = 0xcbf29ce484222325ull ^ ((uint64_t)p.value << 8 | (uint32_t)p.n_remain);
    for (uint32_t i = 0; i < n; i++) h = (h ^ set[i]) * 0x100000001b3ull;
    return h;
}

llm_status llm_grammar_matcher_fill_mask(llm_grammar_matcher *m, uint32_t *mask, size_t n_words) {
    if (!m || !mask || !m->v) return GERR(LLM_ERR_INVALID_ARG, "llm_grammar_matcher_fill_mask: NULL argument or no vocabulary");
    const llm_grammar_vocab *v = m->v;
    size_t need = LLM_GRAMMAR_MASK_WORDS(v->n_tokens);
    if (n_words < need) return GERR(LLM_ERR_BUFFER_TOO_SMALL, "mask needs %zu words", need);
    const hstep *c = cur_step(m);
    memset(mask, 0, n_words * sizeof *mask);
    if (c->awaiting) {
        memset(mask, 0xFF, need * sizeof *mask);
    } else if (!c->ended) {
        const uint32_t *set = m->hist.v + c->off;
        uint64_t key = set_key(set, c->n, c->p);
        int hit = -1;
        for (int i = 0; i < MASK_CACHE_SLOTS && hit < 0; i++) {
            const mslot *s = &m->cache[i];
            if (s->mask && s->key == key && s->n_set == c->n && s->p.value == c->p.value &&
                s->p.n_remain == c->p.n_remain && memcmp(s->set, set, c->n * sizeof *set) == 0)
                hit = i;
        }
        if (hit >= 0) {
            memcpy(mask, m->cache[hit].mask, need * sizeof *mask);
        } else {
            llm_status st = LLM_OK;
            if (!m->table) st = llm__gmask_table_create(m->g, v, &m->table);
            if (st == LLM_OK) st = llm__gmask_fill(m->table, &m->ctx, set, c->n, c->p, mask);
            if (st != LLM_OK) return st;
            mslot *s = &m->cache[m->cache_next];
            uint32_t *ms = s->mask ? s->mask : malloc(need * sizeof *ms);
            uint32_t *ss = realloc(s->set, (c->n ? c->n : 1) * sizeof *ss);
            if (ms && ss) { /* a failed allocation only skips caching */
                memcpy(ms, mask, need * sizeof *ms);
                memcpy(ss, set, c->n * sizeof *ss);
                *s = (mslot){key, ss, c->n, c->p, ms};
                m->cache_next = (m->cache_next + 1) % MASK_CACHE_SLOTS;
            } else {
                if (ss) s->set = ss;
                if (ms && !s->mask) free(ms);
            }
        }
    }
    if (!c->awaiting) {
        int can_end = llm_grammar_matcher_can_end(m);
        for (int32_t i = 0; i < v->n_eog; i++) {
            int32_t t = v->eog[i];
            if (can_end) mask[t >> 5] |= 1u << (t & 31);
            else mask[t >> 5] &= ~(1u << (t & 31));
        }
    }
    if (v->n_tokens % 32) mask[need - 1] &= (1u << (v->n_tokens % 32)) - 1;
    for (size_t w = need; w < n_words; w++) mask[w] = 0;
    return LLM_OK;
}
