/*
 * gbnf_stacks.c -- pushdown stacks as hash-consed nodes, and the steps of
 * llama.cpp's matcher on them: expand rule references until a terminal is
 * on top (advance), accept one code point, accept one whole token.
 */
#include <stdlib.h>
#include <string.h>

#include "gbnf_internal.h"

/* Bounds the expansions of one code point over all stacks: an ambiguous
 * grammar can otherwise expand exponentially many stacks from one step. */
#define GSTACK_MAX_STEP_WORK (1u << 18)
/* Bounds the stack pool of one matcher (about 24 bytes a node with its
 * table, so under 100 MiB): distinct stacks, never freed while the matcher
 * lives. */
#define GPOOL_MAX_NODES (1u << 22)

static uint32_t node_hash(uint32_t pos, uint32_t parent) {
    uint64_t h = ((uint64_t)pos << 32 | parent) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32);
}

llm_status llm__gpool_init(gpool *p) {
    memset(p, 0, sizeof *p);
    p->cap = 1024;
    p->nodes = malloc(p->cap * sizeof *p->nodes);
    p->table_cap = 2048;
    p->table = calloc(p->table_cap, sizeof *p->table);
    if (!p->nodes || !p->table) {
        llm__gpool_free(p);
        return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    }
    /* ids 0 (EMPTY) and 1 (BOTTOM) are sentinels, never in the table */
    p->nodes[0] = (gnode){UINT32_MAX, UINT32_MAX};
    p->nodes[1] = (gnode){UINT32_MAX, UINT32_MAX};
    p->n = 2;
    return LLM_OK;
}

void llm__gpool_free(gpool *p) {
    free(p->nodes);
    free(p->table);
    memset(p, 0, sizeof *p);
}

llm_status llm__gpool_copy(gpool *dst, const gpool *src) {
    memset(dst, 0, sizeof *dst);
    dst->nodes = malloc(src->cap * sizeof *dst->nodes);
    dst->table = malloc(src->table_cap * sizeof *dst->table);
    if (!dst->nodes || !dst->table) {
        llm__gpool_free(dst);
        return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(dst->nodes, src->nodes, src->n * sizeof *dst->nodes);
    memcpy(dst->table, src->table, src->table_cap * sizeof *dst->table);
    dst->n = src->n;
    dst->cap = src->cap;
    dst->table_cap = src->table_cap;
    return LLM_OK;
}

static llm_status pool_grow_table(gpool *p) {
    uint32_t cap = p->table_cap * 2;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
    for (uint32_t id = 2; id < p->n; id++) {
        uint32_t h = node_hash(p->nodes[id].pos, p->nodes[id].parent) & (cap - 1);
        while (t[h]) h = (h + 1) & (cap - 1);
        t[h] = id;
    }
    free(p->table);
    p->table = t;
    p->table_cap = cap;
    return LLM_OK;
}

llm_status llm__gpool_intern(gpool *p, uint32_t pos, uint32_t parent, uint32_t *id) {
    uint32_t mask = p->table_cap - 1, h = node_hash(pos, parent) & mask;
    for (;;) {
        uint32_t k = p->table[h];
        if (!k) break;
        if (p->nodes[k].pos == pos && p->nodes[k].parent == parent) {
            *id = k;
            return LLM_OK;
        }
        h = (h + 1) & mask;
    }
    if (p->n >= GPOOL_MAX_NODES)
        return GERR(LLM_ERR_EXHAUSTED, "grammar stack pool full (%u stacks)", GPOOL_MAX_NODES);
    if (p->n == p->cap) {
        gnode *nn = realloc(p->nodes, 2 * (size_t)p->cap * sizeof *nn);
        if (!nn) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
        p->nodes = nn;
        p->cap *= 2;
    }
    uint32_t k = p->n++;
    p->nodes[k] = (gnode){pos, parent};
    p->table[h] = k;
    *id = k;
    if (2 * (size_t)p->n > p->table_cap) return pool_grow_table(p);
    return LLM_OK;
}

llm_status llm__gids_push(gids *a, uint32_t v) {
    if (a->n == a->cap) {
        uint32_t cap = a->cap ? a->cap * 2 : 16;
        uint32_t *nv = realloc(a->v, cap * sizeof *nv);
        if (!nv) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
        a->v = nv;
        a->cap = cap;
    }
    a->v[a->n++] = v;
    return LLM_OK;
}

void llm__gids_free(gids *a) {
    free(a->v);
    memset(a, 0, sizeof *a);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

uint32_t llm__sort_unique_u32(uint32_t *v, uint32_t n) {
    if (n > 32) { /* an ambiguous grammar's sets before dedup can be large */
        qsort(v, n, sizeof *v, cmp_u32);
    } else { /* sets are usually a handful of stacks */
        for (uint32_t i = 1; i < n; i++) {
            uint32_t x = v[i], j = i;
            while (j > 0 && v[j - 1] > x) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i]) v[k++] = v[i];
    return k;
}

void llm__gids_sort_unique(gids *a) { a->n = llm__sort_unique_u32(a->v, a->n); }

int llm__gelem_is_char(uint32_t type) {
    return type == GE_CHAR || type == GE_CHAR_NOT || type == GE_CHAR_ANY;
}

static int is_end_of_seq(const gelem *e) { return e->type == GE_END || e->type == GE_ALT; }

int llm__gutf8_step(gpartial *p, uint8_t b, uint32_t *cp) {
    if (p->n_remain > 0) {
        if ((b & 0xC0) != 0x80) return -1;
        p->value = (p->value << 6) | (b & 0x3Fu);
        if (--p->n_remain == 0) {
            *cp = p->value;
            p->value = 0;
            return 1;
        }
        return 0;
    }
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    if (b < 0xC0 || b >= 0xF8) return -1;
    if (b < 0xE0) {
        p->value = b & 0x1Fu;
        p->n_remain = 1;
    } else if (b < 0xF0) {
        p->value = b & 0x0Fu;
        p->n_remain = 2;
    } else {
        p->value = b & 0x07u;
        p->n_remain = 3;
    }
    return 0;
}

int llm__gclass_match(const gelem *e, uint32_t pos, uint32_t cp, uint32_t *next) {
    int positive = e[pos].type != GE_CHAR_NOT, found = 0;
    do {
        if (e[pos + 1].type == GE_RNG_UPPER) {
            found = found || (e[pos].value <= cp && cp <= e[pos + 1].value);
            pos += 2;
        } else if (e[pos].type == GE_CHAR_ANY) {
            found = 1;
            pos += 1;
        } else {
            found = found || e[pos].value == cp;
            pos += 1;
        }
    } while (e[pos].type == GE_CHAR_ALT);
    *next = pos;
    return found == positive;
}

int llm__gclass_match_partial(const gelem *e, uint32_t pos, gpartial p) {
    int positive = e[pos].type != GE_CHAR_NOT;
    if (p.n_remain < 0 || (p.n_remain == 1 && p.value < 2)) return 0;
    uint32_t low = p.value << (6 * p.n_remain);
    uint32_t high = low | ((1u << (6 * p.n_remain)) - 1);
    if (low == 0) {
        if (p.n_remain == 2) low = 1u << 11;
        else if (p.n_remain == 3) low = 1u << 16;
    }
    do {
        if (e[pos + 1].type == GE_RNG_UPPER) {
            if (e[pos].value <= high && low <= e[pos + 1].value) return positive;
            pos += 2;
        } else if (e[pos].type == GE_CHAR_ANY) {
            return 1;
        } else {
            if (low <= e[pos].value && e[pos].value <= high) return positive;
            pos += 1;
        }
    } while (e[pos].type == GE_CHAR_ALT);
    return !positive;
}

/* seen is a tiny open-addressing set keyed by node id, reset per advance. */
static int seen_insert(gids *s, uint32_t id) {
    uint32_t mask = s->cap - 1, h = (id * 0x9E3779B1u) & mask;
    while (s->v[h] != UINT32_MAX) {
        if (s->v[h] == id) return 0;
        h = (h + 1) & mask;
    }
    s->v[h] = id;
    s->n++;
    return 1;
}

static llm_status seen_reset(gids *s, uint32_t want) {
    uint32_t cap = 64;
    while (cap < 2 * want) cap *= 2;
    if (cap > s->cap) {
        uint32_t *v = realloc(s->v, cap * sizeof *v);
        if (!v) return GERR(LLM_ERR_NO_MEMORY, "out of memory");
        s->v = v;
        s->cap = cap;
    }
    memset(s->v, 0xFF, s->cap * sizeof *s->v);
    s->n = 0;
    return LLM_OK;
}

static llm_status seen_grow(gids *s) {
    uint32_t old = s->cap, *ov = s->v;
    s->v = NULL;
    s->cap = 0;
    llm_status st = seen_reset(s, old);
    if (st != LLM_OK) {
        s->v = ov;
        s->cap = old;
        return st;
    }
    for (uint32_t i = 0; i < old; i++)
        if (ov[i] != UINT32_MAX) seen_insert(s, ov[i]);
    free(ov);
    return LLM_OK;
}

llm_status llm__gstack_advance(gstep_ctx *c, uint32_t id, gids *out) {
    const gelem *e = c->g->elems;
    llm_status st = seen_reset(&c->seen, 16);
    c->todo.n = 0;
    if (st == LLM_OK) st = llm__gids_push(&c->todo, id);
    while (st == LLM_OK && c->todo.n > 0) {
        uint32_t s = c->todo.v[--c->todo.n];
        if (2 * (c->seen.n + 1) > c->seen.cap && (st = seen_grow(&c->seen)) != LLM_OK) break;
        if (!seen_insert(&c->seen, s)) continue;
        if (++c->work > GSTACK_MAX_STEP_WORK)
            return GERR(LLM_ERR_EXHAUSTED, "grammar too ambiguous: one character expands over %u stacks",
                        GSTACK_MAX_STEP_WORK);
        if (s <= GSTACK_BOTTOM) {
            st = llm__gids_push(out, s);
            continue;
        }
        gnode nd = c->pool->nodes[s];
        const gelem *el = &e[nd.pos];
        if (el->type != GE_RULE_REF) {
            st = llm__gids_push(out, s);
            continue;
        }
        uint32_t base = nd.parent;
        if (!is_end_of_seq(el + 1)) st = llm__gpool_intern(c->pool, nd.pos + 1, nd.parent, &base);
        uint32_t a = c->g->rule_start[el->value];
        while (st == LLM_OK) {
            uint32_t next = base;
            if (!is_end_of_seq(&e[a])) st = llm__gpool_intern(c->pool, a, base, &next);
            if (st == LLM_OK) st = llm__gids_push(&c->todo, next);
            while (!is_end_of_seq(&e[a])) a++;
            if (e[a].type != GE_ALT) break;
            a++;
        }
    }
    return st;
}

/* The stacks after stack id's top class took a code point it matches;
 * next: the position after the class. */
static llm_status accept_cp_uncached(gstep_ctx *c, uint32_t id, uint32_t next, gids *out) {
    gnode nd = c->pool->nodes[id];
    const gelem *e = c->g->elems;
    uint32_t ns = nd.parent;
    if (!is_end_of_seq(&e[next])) {
        llm_status st = llm__gpool_intern(c->pool, next, nd.parent, &ns);
        if (st != LLM_OK) return st;
    }
    return llm__gstack_advance(c, ns, out);
}

/* Bounds the memo's results; past it the memo starts over. */
#define GMEMO_MAX_IDS (1u << 20)

llm_status llm__gstack_accept_cp(gstep_ctx *c, uint32_t id, uint32_t cp, gids *out) {
    if (id <= GSTACK_BOTTOM) return LLM_OK;
    const gelem *e = c->g->elems;
    uint32_t pos = c->pool->nodes[id].pos, next;
    if (!llm__gelem_is_char(e[pos].type)) return LLM_OK; /* token elements take whole tokens */
    if (!llm__gclass_match(e, pos, cp, &next)) return LLM_OK;
    /* past the class match the result no longer depends on cp: memoized per stack */
    if (!c->memo) {
        c->memo = calloc(GMEMO_SLOTS, sizeof *c->memo);
        if (!c->memo) return accept_cp_uncached(c, id, next, out); /* no memo: correct, slower */
    }
    gmemo_slot *slot = &c->memo[(id * 0x9E3779B1u) >> 18];
    if (slot->key_id == id + 1) {
        for (uint32_t i = 0; i < slot->n; i++) {
            llm_status st = llm__gids_push(out, c->memo_ids.v[slot->off + i]);
            if (st != LLM_OK) return st;
        }
        return LLM_OK;
    }
    uint32_t start = out->n;
    llm_status st = accept_cp_uncached(c, id, next, out);
    if (st != LLM_OK) return st;
    uint32_t n = out->n - start;
    if (c->memo_ids.n + n > GMEMO_MAX_IDS) {
        memset(c->memo, 0, GMEMO_SLOTS * sizeof *c->memo);
        c->memo_ids.n = 0;
    }
    uint32_t off = c->memo_ids.n;
    for (uint32_t i = 0; i < n; i++)
        if (llm__gids_push(&c->memo_ids, out->v[start + i]) != LLM_OK) {
            c->memo_ids.n = off; /* not memoized; the result stands */
            slot->key_id = 0;
            return LLM_OK;
        }
    *slot = (gmemo_slot){id + 1, off, n};
    return LLM_OK;
}

void llm__gstep_ctx_free(gstep_ctx *c) {
    llm__gids_free(&c->todo);
    llm__gids_free(&c->seen);
    llm__gids_free(&c->arena);
    llm__gids_free(&c->memo_ids);
    llm__gids_free(&c->loop);
    llm__gids_free(&c->na_ids);
    free(c->loop_cp);
    c->loop_cp = NULL;
    free(c->lv);
    free(c->memo);
    c->lv = NULL;
    c->memo = NULL;
    c->lv_cap = 0;
}

llm_status llm__gstack_accept_token(gstep_ctx *c, uint32_t id, int32_t token, gids *out) {
    if (id <= GSTACK_BOTTOM) return LLM_OK;
    gnode nd = c->pool->nodes[id];
    const gelem *e = c->g->elems;
    uint32_t t = e[nd.pos].type;
    if (t != GE_TOKEN && t != GE_TOKEN_NOT) return LLM_OK;
    if ((e[nd.pos].value == (uint32_t)token) != (t == GE_TOKEN)) return LLM_OK;
    uint32_t ns = nd.parent;
    if (!is_end_of_seq(&e[nd.pos + 1])) {
        llm_status st = llm__gpool_intern(c->pool, nd.pos + 1, nd.parent, &ns);
        if (st != LLM_OK) return st;
    }
    return llm__gstack_advance(c, ns, out);
}

llm_status llm__gstack_initial(gstep_ctx *c, gids *out) {
    const gelem *e = c->g->elems;
    uint32_t a = c->g->rule_start[c->g->root];
    llm_status st = LLM_OK;
    out->n = 0;
    c->work = 0;
    gids tmp = {0};
    while (st == LLM_OK) {
        uint32_t s = GSTACK_EMPTY;
        if (!is_end_of_seq(&e[a])) st = llm__gpool_intern(c->pool, a, GSTACK_EMPTY, &s);
        if (st == LLM_OK) st = llm__gstack_advance(c, s, &tmp);
        while (!is_end_of_seq(&e[a])) a++;
        if (e[a].type != GE_ALT) break;
        a++;
    }
    for (uint32_t i = 0; st == LLM_OK && i < tmp.n; i++) st = llm__gids_push(out, tmp.v[i]);
    llm__gids_free(&tmp);
    llm__gids_sort_unique(out);
    if (st == LLM_OK && out->n > c->max_stacks)
        st = GERR(LLM_ERR_EXHAUSTED, "grammar too ambiguous: %u stacks (max_stacks %u)", out->n, c->max_stacks);
    return st;
}
