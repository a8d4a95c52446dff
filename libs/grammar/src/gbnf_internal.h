/*
 * gbnf_internal.h -- shared types of the GBNF part of llama-grammar.
 *
 * A grammar is a flat array of elements (llama.cpp's encoding): rule r is
 * elems[rule_start[r] ..] up to its END, alternatives separated by ALT; a
 * character class is a CHAR / CHAR_NOT / CHAR_ANY followed by CHAR_ALT and
 * RNG_UPPER elements. A grammar position is an index into elems.
 *
 * A pushdown stack is a node of a hash-consed persistent list (top position,
 * parent node): equal stacks are the same node id, so a stack set is a
 * sorted array of ids, and history, clones and masks share stacks freely.
 */
#ifndef LLM_GBNF_INTERNAL_H
#define LLM_GBNF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "llama/error.h"
#include "llama/grammar.h"

#define GERR(st, ...) llm__err_set(LLM__ERR_GRAMMAR, (st), __VA_ARGS__)

enum gelem_type {
    GE_END = 0,
    GE_ALT = 1,
    GE_RULE_REF = 2,
    GE_CHAR = 3,
    GE_CHAR_NOT = 4,
    GE_RNG_UPPER = 5,
    GE_CHAR_ALT = 6,
    GE_CHAR_ANY = 7,
    GE_TOKEN = 8,
    GE_TOKEN_NOT = 9
};

typedef struct gelem {
    uint32_t type;  /* enum gelem_type */
    uint32_t value; /* code point, rule id or token id */
} gelem;

struct llm_grammar {
    gelem *elems;         /* [n_elems] */
    uint32_t n_elems;
    uint32_t *rule_start; /* [n_rules] offset of each rule in elems */
    char **rule_names;    /* [n_rules] */
    uint32_t n_rules;
    uint32_t root;
};

/* ------------------------------------------------------------ vocabulary */

typedef struct gtrie_node {
    uint32_t skip;   /* index of the next node after this subtree (pre-order) */
    uint32_t lo, hi; /* tokens of the subtree: sorted[lo..hi) */
    uint32_t depth;  /* bytes before this node's byte */
    uint32_t n_end : 24; /* tokens whose bytes end here: sorted[lo..lo+n_end) */
    uint32_t byte : 8;
} gtrie_node;

struct llm_grammar_vocab {
    int32_t n_tokens;
    char *bytes;       /* all token bytes, concatenated */
    size_t *off;       /* [n_tokens + 1] */
    uint8_t *flags;    /* [n_tokens] */
    int32_t *sorted;   /* [n_text] text tokens sorted by bytes */
    int32_t n_text;
    int32_t *rank;     /* [n_tokens] position in sorted, -1 for non-text tokens */
    gtrie_node *trie;  /* [n_nodes] pre-order; children follow their parent */
    uint64_t (*below)[2];  /* [n_nodes][2] bit b: ASCII byte b occurs below the node */
    uint8_t *below_flags;  /* [n_nodes] GBELOW_* of the node's tokens */
    uint32_t n_nodes;
    uint32_t max_len;  /* longest text token */
    int32_t *eog;      /* [n_eog] */
    int32_t n_eog;
};

#define GBELOW_NONASCII 1u /* a token holds a code point of two bytes or more */
#define GBELOW_BAD 2u      /* a token is not whole, valid UTF-8 of code points 0x80.. as multi-byte */

/* ------------------------------------------------------------ stacks */

#define GSTACK_EMPTY 0u  /* the empty stack: the grammar is complete */
#define GSTACK_BOTTOM 1u /* "the caller's frames": used when classifying tokens */

typedef struct gnode {
    uint32_t pos;
    uint32_t parent;
} gnode;

typedef struct gpool {
    gnode *nodes; /* [n] */
    uint32_t n, cap;
    uint32_t *table; /* open addressing over node ids, 0 = free slot */
    uint32_t table_cap;
} gpool;

/* A partial UTF-8 sequence: value so far and bytes still expected. */
typedef struct gpartial {
    uint32_t value;
    int32_t n_remain; /* 0: none pending */
} gpartial;

/* Scratch growable id array. */
typedef struct gids {
    uint32_t *v;
    uint32_t n, cap;
} gids;

/* One level of a trie walk: the stack set after the bytes of a prefix. */
typedef struct gwalk_level {
    uint32_t off, n;     /* the set: arena.v[off..off+n), BOTTOM removed */
    gpartial p;
    uint8_t has_bottom;  /* BOTTOM was reached by the code point that ends here */
    uint8_t bseen;       /* BOTTOM was reached before */
    uint8_t loop;        /* the set is the walk's loop set */
    /* what every code point 0x80..0x10FFFF does to the set, when all do the
     * same: 0 not known yet, 1 they do, 2 they do not, 3 result known:
     * gstep_ctx.na_ids[na_off..na_off+na_n) and na_bottom */
    uint8_t na, na_bottom;
    uint32_t na_off, na_n;
} gwalk_level;

#define GLOOP_SLOTS 1024u

/* A code point known to take a trie walk's loop set back to itself. */
typedef struct gloop_slot {
    uint32_t cp;   /* code point + 1; 0: empty slot */
    uint32_t same; /* 1: back to the loop set; 0: elsewhere */
} gloop_slot;

typedef struct gstep_ctx {
    const llm_grammar *g;
    gpool *pool;
    uint32_t max_stacks;
    gids todo, seen;     /* scratch of gstack_advance */
    uint32_t work;       /* stacks expanded since the caller last reset it */
    gids arena;          /* scratch of trie walks */
    /* a trie walk's loop set: the stack set that a code point took back to
     * itself (a string body), and per code point whether it does, so that
     * most nodes below such a set need no step */
    gids loop;
    gloop_slot *loop_cp; /* [GLOOP_SLOTS] */
    gids na_ids;         /* the levels' non-ASCII results (gwalk_level.na) */
    uint64_t loop_known[2]; /* ASCII code points tried on the loop set */
    uint64_t loop_same[2];  /* those that take it back to itself */
    int loop_nonascii;      /* 1: so do all code points 0x80..0x10FFFF; -1: not tried */
    gwalk_level *lv;     /* [lv_cap] */
    uint32_t lv_cap;
    /* memo of llm__gstack_accept_cp: stack -> the stacks after its top class
     * took a code point, direct-mapped; a trie walk meets the same stack at
     * many nodes */
    struct gmemo_slot *memo; /* [GMEMO_SLOTS] */
    gids memo_ids;           /* the results, concatenated */
} gstep_ctx;

#define GMEMO_SLOTS (1u << 14)

typedef struct gmemo_slot {
    uint32_t key_id; /* stack id + 1; 0: empty slot */
    uint32_t off, n; /* results: memo_ids.v[off..off+n) */
} gmemo_slot;

/* Frees a context's scratch and memo. */
void llm__gstep_ctx_free(gstep_ctx *c);

llm_status llm__gpool_init(gpool *p);
void llm__gpool_free(gpool *p);
llm_status llm__gpool_copy(gpool *dst, const gpool *src);
/* The id of stack (pos, parent), created when new. */
llm_status llm__gpool_intern(gpool *p, uint32_t pos, uint32_t parent, uint32_t *id);

llm_status llm__gids_push(gids *a, uint32_t v);
void llm__gids_free(gids *a);
/* Sorts and removes duplicates (of a, or of v[0..n), returning the new count). */
void llm__gids_sort_unique(gids *a);
uint32_t llm__sort_unique_u32(uint32_t *v, uint32_t n);

/* Expands stack id until every resulting stack has a terminal on top (or
 * is EMPTY/BOTTOM) and appends the results to out (unsorted, possibly with
 * duplicates). Fails with LLM_ERR_EXHAUSTED when c->work, which callers
 * reset once per code point, passes GSTACK_MAX_STEP_WORK. */
llm_status llm__gstack_advance(gstep_ctx *c, uint32_t id, gids *out);
/* The stacks that follow accepting code point cp on stack id (appended). */
llm_status llm__gstack_accept_cp(gstep_ctx *c, uint32_t id, uint32_t cp, gids *out);
/* The stacks after a whole token matched the token element on top of id. */
llm_status llm__gstack_accept_token(gstep_ctx *c, uint32_t id, int32_t token, gids *out);
/* Whether the character class at pos accepts cp; *next gets the position after the class. */
int llm__gclass_match(const gelem *e, uint32_t pos, uint32_t cp, uint32_t *next);
/* Whether some completion of the partial sequence could match the class at pos. */
int llm__gclass_match_partial(const gelem *e, uint32_t pos, gpartial p);
/* Steps the UTF-8 decoder by one byte: returns 1 with *cp when a code point
 * completes, 0 when more bytes are needed, -1 on invalid UTF-8. */
int llm__gutf8_step(gpartial *p, uint8_t b, uint32_t *cp);
/* The initial stack set of the grammar's root (sorted, unique). */
llm_status llm__gstack_initial(gstep_ctx *c, gids *out);
int llm__gelem_is_char(uint32_t type);

/* ------------------------------------------------------------ masks */

typedef struct gmask_table gmask_table; /* per (grammar, vocab) token classes, shared by clones */

llm_status llm__gmask_table_create(const llm_grammar *g, const llm_grammar_vocab *v, gmask_table **out);
void llm__gmask_table_retain(gmask_table *t);
void llm__gmask_table_release(gmask_table *t);

/* Sets in mask (already cleared, n_words words) every text or
 * token-reference token that stack set set[0..n) with pending partial p
 * accepts. EOG bits are the caller's. */
llm_status llm__gmask_fill(gmask_table *t, gstep_ctx *c, const uint32_t *set, uint32_t n, gpartial p,
                           uint32_t *mask);

#endif /* LLM_GBNF_INTERNAL_H */
