/* tok_ugm.c -- the Unigram tokenizer (SentencePiece "unigram" models: T5,
 * XLM-RoBERTa, mT5, nomic-bert-moe; GGUF tokenizer.ggml.model = "t5").
 *
 * 1. Normalization. The SentencePiece "precompiled charsmap" maps input
 *    prefixes to replacement strings (NFKC and friends, compiled by
 *    SentencePiece's trainer). Its bytes are:
 *        u32 LE  n        size in bytes of the trie
 *        n bytes          the trie: a XOR-compressed compact double array
 *                         (Kanda 2018, Darts-clone's layout), u32 LE units
 *        rest             replacement strings, NUL-terminated, back to back
 *    A unit packs BASE in bits 10-30 (shifted left by 8 more when bit 9 is
 *    set), the label of the edge that leads to it (LCHECK) in bits 0-7 plus
 *    bit 31, and in bit 8 whether it has a leaf child; the leaf unit's low 31
 *    bits are the offset of the replacement string. At each input position
 *    the longest matching key is replaced; no match copies one character.
 *    Then whitespace: spaces become U+2581; with remove_extra_whitespaces,
 *    leading and trailing spaces go and runs of spaces become one, every word
 *    getting one U+2581 before it; with add_space_prefix (and no merging) a
 *    U+2581 goes before the first word.
 * 2. Viterbi. best[i] is the best-scoring segmentation of the normalized
 *    bytes [0, i): for each character start i (in order) and each token that
 *    starts there (walk of a byte trie of the vocabulary's normal,
 *    user-defined and unused pieces), best[i + len] takes best[i] + score if
 *    strictly higher. User-defined pieces score 0. A character that no
 *    one-character piece covers may instead become UNK at the score
 *    min(normal scores) - 10. Back from the end; runs of UNK become one.
 *    Scores are summed in double, as SentencePiece and llama.cpp do.
 *
 * This follows SentencePiece as llama.cpp implements it (llm_tokenizer_ugm).
 * A tokenizer.json vocabulary (u->hf) follows HF tokenizers instead, whose
 * Unigram differs in three ways: its "Precompiled" normalizer works per
 * grapheme cluster (normalize_hf), its trie holds every piece (control
 * pieces too) with its own score, and the UNK penalty is taken from the
 * minimum score of all pieces, in double. */
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "tok_internal.h"

/* A node of the vocabulary byte trie. The children of a node are
 * contiguous, sorted by label: nodes[child .. child + n_child). */
typedef struct ugm_node {
    uint32_t child;
    int32_t value; /* token id ending here, or -1 */
    uint16_t n_child;
    uint8_t label;
} ugm_node;

struct tok_ugm {
    ugm_node *nodes;
    uint32_t n_nodes;
    uint32_t root[256];      /* node index of the root's child per byte, 0 = none */
    uint32_t *xcda;          /* [n_xcda] charsmap trie units, host order */
    uint32_t n_xcda;
    char *repl;              /* [n_repl] replacement strings (ends with NUL) */
    uint32_t n_repl;
    double unk_score;
    int remove_extra_ws;
    int hf;                  /* tokenizer.json semantics (HF tokenizers) */
    int32_t n_pieces;        /* hf: ids below this are the model's pieces, the rest added tokens */
};

void llm__ugm_free(tok_ugm *u) {
    if (!u) return;
    free(u->nodes);
    free(u->xcda);
    free(u->repl);
    free(u);
}

/* --- construction ------------------------------------------------------- */

/* A piece to sort: its bytes and id. */
typedef struct ugm_piece {
    const unsigned char *p;
    uint32_t len;
    int32_t id;
} ugm_piece;

static int cmp_piece(const void *a, const void *b) {
    const ugm_piece *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);
    if (c) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->id < y->id ? -1 : (x->id > y->id);
}

static int in_trie(const tok_ugm *u, int32_t id, int ty) {
    if (u->hf) return id < u->n_pieces; /* HF's trie: every model piece, control ones too */
    return ty == LLM_TOKEN_TYPE_NORMAL || ty == LLM_TOKEN_TYPE_USER_DEFINED || ty == LLM_TOKEN_TYPE_UNUSED;
}

/* Build the trie breadth-first from the pieces sorted by bytes: a node
 * stands for the range [lo, hi) of sorted pieces that share its first
 * `depth` bytes; its children are the groups of that range by the next byte. */
static llm_status build_trie(const llm_tokenizer *t, tok_ugm *u) {
    ugm_piece *ids = malloc((size_t)t->n * sizeof *ids);
    if (!ids) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    int32_t m = 0;
    size_t total = 1;
    for (int32_t i = 0; i < t->n; i++)
        if (in_trie(u, i, t->types[i]) && t->len[i] > 0) {
            ids[m++] = (ugm_piece){(const unsigned char *)t->blob + t->off[i], t->len[i], i};
            total += t->len[i];
        }
    qsort(ids, (size_t)m, sizeof *ids, cmp_piece);
    /* At most one node per byte of every piece, plus the root. */
    if (total > UINT32_MAX / 2) {
        free(ids);
        return llm__tok_err(LLM_ERR_INVALID_ARG, "vocabulary too large");
    }
    ugm_node *nodes = malloc(total * sizeof *nodes);
    uint32_t *lo = malloc(total * sizeof *lo), *hi = malloc(total * sizeof *hi), *dep = malloc(total * sizeof *dep);
    if (!nodes || !lo || !hi || !dep) {
        free(ids), free(nodes), free(lo), free(hi), free(dep);
        return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    }
    uint32_t n_nodes = 1;
    nodes[0] = (ugm_node){0, -1, 0, 0};
    lo[0] = 0, hi[0] = (uint32_t)m, dep[0] = 0;
    for (uint32_t k = 0; k < n_nodes; k++) {
        uint32_t a = lo[k], b = hi[k], d = dep[k];
        /* Pieces that end here (equal texts: the last id wins, as in llama.cpp). */
        while (a < b && ids[a].len == d) nodes[k].value = ids[a++].id;
        nodes[k].child = n_nodes;
        nodes[k].n_child = 0;
        while (a < b) {
            unsigned char c = ids[a].p[d];
            uint32_t e = a + 1;
            while (e < b && ids[e].p[d] == c) e++;
            nodes[n_nodes] = (ugm_node){0, -1, 0, c};
            lo[n_nodes] = a, hi[n_nodes] = e, dep[n_nodes] = d + 1;
            n_nodes++;
            nodes[k].n_child++;
            a = e;
        }
    }
    free(ids), free(lo), free(hi), free(dep);
    for (uint32_t c = 0; c < nodes[0].n_child; c++) u->root[nodes[nodes[0].child + c].label] = nodes[0].child + c;
    ugm_node *shrunk = realloc(nodes, (size_t)n_nodes * sizeof *nodes);
    u->nodes = shrunk ? shrunk : nodes;
    u->n_nodes = n_nodes;
    return LLM_OK;
}

static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static llm_status load_charsmap(tok_ugm *u, const unsigned char *p, size_t n) {
    if (n == 0) return LLM_OK;
    if (n < 4) return llm__tok_err(LLM_ERR_BAD_FORMAT, "precompiled charsmap: %zu bytes, too small", n);
    uint32_t tsize = rd32(p);
    if (tsize % 4 != 0 || (size_t)tsize + 4 >= n)
        return llm__tok_err(LLM_ERR_BAD_FORMAT, "precompiled charsmap: trie size %u does not fit in %zu bytes",
                            (unsigned)tsize, n);
    u->n_xcda = tsize / 4;
    u->n_repl = (uint32_t)(n - 4 - tsize);
    if (p[n - 1] != '\0')
        return llm__tok_err(LLM_ERR_BAD_FORMAT, "precompiled charsmap: unterminated replacement string");
    u->xcda = malloc((size_t)(u->n_xcda ? u->n_xcda : 1) * sizeof *u->xcda);
    u->repl = malloc(u->n_repl);
    if (!u->xcda || !u->repl) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    for (uint32_t i = 0; i < u->n_xcda; i++) u->xcda[i] = rd32(p + 4 + 4 * (size_t)i);
    memcpy(u->repl, p + 4 + tsize, u->n_repl);
    return LLM_OK;
}

llm_status llm__ugm_setup(llm_tokenizer *t, const llm_vocab_spec *spec, const tok_hf_norm *hf_norm) {
    const int hf = hf_norm != NULL;
    tok_ugm *u = calloc(1, sizeof *u);
    if (!u) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    t->ugm = u;
    u->remove_extra_ws = spec->remove_extra_whitespaces > 0;
    u->hf = hf;
    u->n_pieces = hf && hf_norm->ugm_n_pieces > 0 && hf_norm->ugm_n_pieces < t->n ? hf_norm->ugm_n_pieces : t->n;
    llm_status st = load_charsmap(u, spec->precompiled_charsmap, spec->precompiled_charsmap_len);
    if (st != LLM_OK) return st;
    float min_score = 3.4e38f;
    int any = 0;
    for (int32_t i = 0; i < t->n; i++)
        if (hf ? i < u->n_pieces : t->types[i] == LLM_TOKEN_TYPE_NORMAL) { /* HF: over all model pieces */
            if (t->scores[i] < min_score) min_score = t->scores[i];
            any = 1;
        }
    /* The penalty is subtracted in float (llama.cpp) or double (HF). */
    if (!any) min_score = 0.0f;
    u->unk_score = hf ? (double)min_score - 10.0 : (double)(min_score - 10.0f);
    return build_trie(t, u);
}

/* --- normalization ------------------------------------------------------ */

/* The longest charsmap key that prefixes s[0..n): its byte length (0 = none)
 * and in *repl, *repl_len its replacement. A unit index outside the trie
 * ends the walk (only a corrupt charsmap can lead there). */
static size_t charsmap_match(const tok_ugm *u, const unsigned char *s, size_t n, const char **repl, size_t *repl_len,
                             int shortest) {
    if (u->n_xcda == 0) return 0;
    const uint32_t *a = u->xcda;
#define XCDA_BASE(x) (((x) >> 10) << (((x) & (1u << 9)) >> 6))
    uint32_t node = XCDA_BASE(a[0]);
    size_t best = 0;
    uint32_t best_off = 0;
    for (size_t i = 0; i < n && s[i] != 0; i++) {
        node ^= s[i];
        if (node >= u->n_xcda) break;
        uint32_t unit = a[node];
        if ((unit & ((1u << 31) | 0xFFu)) != s[i]) break;
        node ^= XCDA_BASE(unit);
        if ((unit >> 8) & 1u) {
            if (node >= u->n_xcda) break;
            best = i + 1;
            best_off = a[node] & ((1u << 31) - 1);
            if (shortest) break;
        }
    }
#undef XCDA_BASE
    if (best == 0 || best_off >= u->n_repl) return 0;
    *repl = u->repl + best_off;
    *repl_len = strlen(*repl); /* the blob ends with a NUL (checked at load) */
    return best;
}

static const char k_ms[3] = {'\xE2', '\x96', '\x81'}; /* U+2581 */

/* SentencePiece's normalizer (llama.cpp's llm_tokenizer_ugm_session::normalize). */
static int normalize_spm(const llm_tokenizer *t, const tok_ugm *u, const char *text, size_t n, tok_buf *out) {
    const int prepend = t->add_space_prefix, merge = u->remove_extra_ws;
    int prepended = 0, in_word = 0;
    for (size_t i = 0; i < n;) {
        const char *r = NULL;
        size_t rl = 0, used = charsmap_match(u, (const unsigned char *)text + i, n - i, &r, &rl, 0);
        if (used == 0) {
            used = llm__utf8_len((unsigned char)text[i]);
            if (used > n - i) used = n - i;
            r = text + i, rl = used;
        }
        for (size_t k = 0; k < rl; k++) {
            if (r[k] != ' ') {
                if (!in_word) {
                    in_word = 1;
                    if ((prepend && !prepended) || merge) {
                        if (llm__buf_append(out, k_ms, 3)) return -1;
                        prepended = 1;
                    }
                }
                if (llm__buf_append(out, r + k, 1)) return -1;
            } else {
                in_word = 0;
                if (!merge && llm__buf_append(out, k_ms, 3)) return -1;
            }
        }
        i += used;
    }
    return 0;
}

/* Unicode White_Space (Rust's char::is_whitespace, used by HF's Strip). */
static int is_white(uint32_t c) {
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Append one character, or its charsmap replacement (a key that is the
 * whole character). */
static int put_char_hf(const tok_ugm *u, const char *s, size_t cl, tok_buf *out) {
    const char *r = NULL;
    size_t rl = 0;
    if (charsmap_match(u, (const unsigned char *)s, cl, &r, &rl, 1) == 0) r = s, rl = cl;
    return llm__buf_append(out, r, rl);
}

/* HF tokenizers' Precompiled normalizer: per extended grapheme cluster, a
 * cluster shorter than 6 bytes with a charsmap key as prefix becomes that
 * (shortest) key's replacement as a whole; otherwise each character is
 * replaced by its own key's replacement or kept. */
static int precompiled_hf(const tok_ugm *u, const char *text, size_t n, tok_buf *out) {
    size_t i = 0;
    while (i < n) {
        /* The cluster [i, e). */
        utf8proc_int32_t state = 0;
        size_t adv, e = i;
        uint32_t prev = llm__utf8_decode(text + e, n - e, &adv);
        e += adv;
        while (e < n) {
            uint32_t c = llm__utf8_decode(text + e, n - e, &adv);
            if (utf8proc_grapheme_break_stateful((utf8proc_int32_t)prev, (utf8proc_int32_t)c, &state)) break;
            prev = c;
            e += adv;
        }
        const char *r = NULL;
        size_t rl = 0;
        if (e - i < 6 && charsmap_match(u, (const unsigned char *)text + i, e - i, &r, &rl, 1) > 0) {
            if (llm__buf_append(out, r, rl)) return -1;
        } else {
            for (size_t k = i; k < e; k += adv) {
                llm__utf8_decode(text + k, e - k, &adv);
                if (put_char_hf(u, text + k, adv, out)) return -1;
            }
        }
        i = e;
    }
    return 0;
}

/* The whole HF normalizer and Metaspace pre-tokenizer: Precompiled, then
 * Strip and Replace(" {2,}", U+2581) as declared, then spaces to U+2581 and
 * one U+2581 in front unless there is one already (nothing for empty text). */
static int normalize_hf(const llm_tokenizer *t, const tok_ugm *u, const char *text, size_t n, tok_buf *out) {
    tok_buf a = {0};
    if (precompiled_hf(u, text, n, &a)) goto oom;
    size_t lo = 0, hi = a.n, adv;
    if (t->hf.ugm_strip & 1)
        while (lo < hi && is_white(llm__utf8_decode(a.p + lo, hi - lo, &adv))) lo += adv;
    if (t->hf.ugm_strip & 2)
        while (hi > lo) {
            size_t k = hi - 1;
            while (k > lo && ((unsigned char)a.p[k] & 0xC0) == 0x80) k--;
            if (!is_white(llm__utf8_decode(a.p + k, hi - k, &adv))) break;
            hi = k;
        }
    if (lo < hi && t->hf.prepend_space) {
        int starts_ms = hi - lo >= 3 && memcmp(a.p + lo, k_ms, 3) == 0;
        int starts_sp = a.p[lo] == ' '; /* becomes U+2581 below */
        if (!starts_ms && !starts_sp && llm__buf_append(out, k_ms, 3)) goto oom;
    }
    for (size_t i = lo; i < hi; i++) {
        if (a.p[i] != ' ') {
            if (llm__buf_append(out, a.p + i, 1)) goto oom;
            continue;
        }
        if (t->hf.ugm_collapse) /* a run of two or more spaces is one U+2581 */
            while (i + 1 < hi && a.p[i + 1] == ' ') i++;
        if (llm__buf_append(out, k_ms, 3)) goto oom;
    }
    free(a.p);
    return 0;
oom:
    free(a.p);
    return -1;
}

/* --- Viterbi ------------------------------------------------------------ */

typedef struct ugm_best {
    double score;
    uint32_t from; /* start of the last piece */
    llm_token id;
} ugm_best;

static const ugm_node *child(const tok_ugm *u, const ugm_node *nd, unsigned char c) {
    const ugm_node *k = u->nodes + nd->child;
    uint32_t lo = 0, hi = nd->n_child;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (k[mid].label < c) lo = mid + 1;
        else hi = mid;
    }
    return lo < nd->n_child && k[lo].label == c ? k + lo : NULL;
}

/* Best segmentation of s[0..n) (normalized), ids appended to out. */
static llm_status viterbi(const llm_tokenizer *t, const tok_ugm *u, const char *s, size_t n, tok_vec *out) {
    if (n == 0) return LLM_OK;
    if (n >= UINT32_MAX) return llm__tok_err(LLM_ERR_INVALID_ARG, "text too long");
    ugm_best *best = malloc((n + 1) * sizeof *best);
    if (!best) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 1; i <= n; i++) best[i] = (ugm_best){-1.7976931348623157e308, 0, t->unk};
    best[0] = (ugm_best){0.0, 0, t->unk};
    const unsigned char *b = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t cl = llm__utf8_len(b[i]);
        if (cl > n - i) cl = n - i;
        const double base = best[i].score;
        int single = 0;
        uint32_t ni = u->root[b[i]];
        const ugm_node *nd = ni ? u->nodes + ni : NULL;
        for (size_t j = i + 1; nd; j++) {
            if (nd->value >= 0) {
                if (j - i == cl) single = 1;
                llm_token id = nd->value;
                int zero = t->types[id] == LLM_TOKEN_TYPE_USER_DEFINED && !u->hf; /* HF: every piece its score */
                double sc = base + (zero ? 0.0 : (double)t->scores[id]);
                if (sc > best[j].score) best[j] = (ugm_best){sc, (uint32_t)i, id};
            }
            if (j >= n) break;
            nd = nd->n_child ? child(u, nd, b[j]) : NULL;
        }
        if (!single) {
            double sc = base + u->unk_score;
            if (sc > best[i + cl].score) best[i + cl] = (ugm_best){sc, (uint32_t)i, t->unk};
        }
        i += cl;
    }
    /* Back from the end: count, then write in order. Runs of UNK are one. */
    size_t count = 0;
    int prev_unk = 0;
    for (size_t p = n;;) {
        int unk = best[p].id == t->unk;
        if (!(prev_unk && unk)) count++;
        prev_unk = unk;
        if (best[p].from == 0) break;
        p = best[p].from;
    }
    size_t at = out->n;
    for (size_t k = 0; k < count; k++)
        if (llm__vec_push(out, 0)) {
            free(best);
            return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
        }
    size_t w = at + count;
    prev_unk = 0;
    for (size_t p = n;;) {
        int unk = best[p].id == t->unk;
        if (!(prev_unk && unk)) out->v[--w] = best[p].id;
        prev_unk = unk;
        if (best[p].from == 0) break;
        p = best[p].from;
    }
    free(best);
    /* No UNK token in the vocabulary: an uncovered character has no id. */
    if (t->unk < 0) {
        size_t k = at;
        for (size_t r = at; r < out->n; r++)
            if (out->v[r] >= 0) out->v[k++] = out->v[r];
        out->n = k;
    }
    return LLM_OK;
}

llm_status llm__ugm_encode(const llm_tokenizer *t, const char *text, size_t n, tok_vec *out) {
    const tok_ugm *u = t->ugm;
    tok_buf norm = {0};
    if ((u->hf ? normalize_hf(t, u, text, n, &norm) : normalize_spm(t, u, text, n, &norm))) {
        free(norm.p);
        return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    }
    llm_status st = LLM_OK;
    if (u->hf && t->hf.metaspace_split) { /* Viterbi per word, each word from one U+2581 to the next */
        for (size_t a = 0; a < norm.n && st == LLM_OK;) {
            size_t b = a + 1;
            while (b < norm.n && !(b + 3 <= norm.n && memcmp(norm.p + b, k_ms, 3) == 0)) b++;
            st = viterbi(t, u, norm.p + a, b - a, out);
            a = b;
        }
    } else {
        st = viterbi(t, u, norm.p, norm.n, out);
    }
    free(norm.p);
    return st;
}
