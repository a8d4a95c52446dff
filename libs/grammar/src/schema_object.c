/*
 * schema_object.c -- the rule of a JSON object with known properties.
 *
 * As llama.cpp writes it: the required properties first, in schema order,
 * then the optional ones in schema order, any of which may be left out,
 * then (when additionalProperties allows) any number of other keys, whose
 * names are kept apart from the known ones by a "none of these strings"
 * rule built on a trie of the names. For optional properties o1..on the
 * rule is
 *     ( o1 o1-rest | o2 o2-rest | ... | on )?     oi-rest ::= ( "," oi+1 )? oi+1-rest
 * so any subset can appear, in order, with commas only between members.
 */
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"

/* ---- "none of these strings" ----------------------------------------------------- */

typedef struct trie_node {
    uint32_t *cps;  /* [n] child code points, ascending */
    size_t *kids;   /* [n] child node indexes */
    size_t n, cap;
    int is_end;     /* a name ends here */
} trie_node;

typedef struct trie {
    trie_node *v;
    size_t n, cap;
} trie;

static size_t trie_new_node(js_ctx *c, trie *t) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        trie_node *v = llm__js_alloc(c, cap * sizeof *v);
        if (!v)
            return 0;
        if (t->n)
            memcpy(v, t->v, t->n * sizeof *v);
        t->v = v;
        t->cap = cap;
    }
    memset(&t->v[t->n], 0, sizeof t->v[0]);
    return t->n++;
}

/* The child of node `at` on code point cp, created in order if missing;
 * 0 on failure (the root is never a child). */
static size_t trie_child(js_ctx *c, trie *t, size_t at, uint32_t cp) {
    size_t i = 0;
    while (i < t->v[at].n && t->v[at].cps[i] < cp)
        i++;
    if (i < t->v[at].n && t->v[at].cps[i] == cp)
        return t->v[at].kids[i];
    size_t child = trie_new_node(c, t);
    if (!child)
        return 0;
    trie_node *nd = &t->v[at];
    if (nd->n == nd->cap) {
        size_t cap = nd->cap ? 2 * nd->cap : 4;
        uint32_t *cps = llm__js_alloc(c, cap * sizeof *cps);
        size_t *kids = llm__js_alloc(c, cap * sizeof *kids);
        if (!cps || !kids)
            return 0;
        if (nd->n) {
            memcpy(cps, nd->cps, nd->n * sizeof *cps);
            memcpy(kids, nd->kids, nd->n * sizeof *kids);
        }
        nd->cps = cps;
        nd->kids = kids;
        nd->cap = cap;
    }
    memmove(nd->cps + i + 1, nd->cps + i, (nd->n - i) * sizeof *nd->cps);
    memmove(nd->kids + i + 1, nd->kids + i, (nd->n - i) * sizeof *nd->kids);
    nd->cps[i] = cp;
    nd->kids[i] = child;
    nd->n++;
    return child;
}

/* One code point of valid UTF-8 (jansson checked it) at s; its length in *len. */
static uint32_t utf8_next(const unsigned char *s, size_t *len) {
    if (s[0] < 0x80) {
        *len = 1;
        return s[0];
    }
    size_t n = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : 2;
    uint32_t cp = s[0] & (0x3F >> (n - 1));
    for (size_t i = 1; i < n && s[i]; i++)
        cp = cp << 6 | (s[i] & 0x3F);
    *len = n;
    return cp;
}

/* A code point inside a GBNF character class, written raw as llama.cpp
 * writes it, except where raw text would change the class: '\\' and ']'
 * always, '-' unless it ends the class, '^' when it opens it. (llama.cpp
 * writes them raw, which breaks its grammar for such property names.) */
static void put_class_char(js_sb *b, uint32_t cp, int first, int last) {
    if (cp == '\\' || cp == ']' || (cp == '-' && !last)) {
        llm__js_sb_putc(b, '\\');
        llm__js_sb_putc(b, (char)cp);
        return;
    }
    if (cp == '^' && first) {
        llm__js_sb_puts(b, "\\x5E");
        return;
    }
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12);
        u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | cp >> 18);
        u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    llm__js_sb_putn(b, u, n);
}

static int not_strings_node(js_ctx *c, const trie *t, size_t at, const char *char_rule, js_sb *out) {
    if (llm__js_enter(c, "#") != 0)
        return -1;
    const trie_node *nd = &t->v[at];
    for (size_t i = 0; i < nd->n; i++) {
        if (i)
            llm__js_sb_puts(out, " | ");
        llm__js_sb_putc(out, '[');
        put_class_char(out, nd->cps[i], 1, 1);
        llm__js_sb_putc(out, ']');
        if (t->v[nd->kids[i]].n) {
            llm__js_sb_puts(out, " (");
            if (not_strings_node(c, t, nd->kids[i], char_rule, out) != 0)
                return -1;
            llm__js_sb_putc(out, ')');
        } else {
            llm__js_sb_putc(out, ' ');
            llm__js_sb_puts(out, char_rule);
            llm__js_sb_putc(out, '+');
        }
    }
    if (nd->n) {
        llm__js_sb_puts(out, " | [^\"");
        for (size_t i = 0; i < nd->n; i++) /* after '"': never first */
            put_class_char(out, nd->cps[i], 0, i + 1 == nd->n);
        llm__js_sb_puts(out, "] ");
        llm__js_sb_puts(out, char_rule);
        llm__js_sb_putc(out, '*');
    }
    llm__js_leave(c);
    return 0;
}

const char *llm__js_not_strings(js_ctx *c, const char *const *names, size_t n) {
    trie t = {0};
    if (trie_new_node(c, &t) != 0)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t at = 0, len;
        for (const unsigned char *s = (const unsigned char *)names[i]; *s; s += len) {
            at = trie_child(c, &t, at, utf8_next(s, &len));
            if (!at)
                return NULL;
        }
        t.v[at].is_end = 1;
    }
    const char *char_rule = llm__js_add_primitive(c, "char", "char");
    if (!char_rule)
        return NULL;
    js_sb b;
    llm__js_sb_init(&b, c);
    llm__js_sb_puts(&b, "[\"] ( ");
    if (not_strings_node(c, &t, 0, char_rule, &b) != 0)
        return NULL;
    llm__js_sb_puts(&b, t.v[0].is_end ? " ) [\"]" : " )? [\"]");
    return llm__js_sb_str(&b);
}

/* ---- the object rule ------------------------------------------------------------------- */

static const char *join3(js_ctx *c, const char *a, const char *b, const char *d) {
    js_sb s;
    llm__js_sb_init(&s, c);
    llm__js_sb_puts(&s, a ? a : "");
    llm__js_sb_puts(&s, b ? b : "");
    llm__js_sb_puts(&s, d ? d : "");
    return a && b && d ? llm__js_sb_str(&s) : NULL;
}

/* What follows optional member p when it is not the first one written:
 * ( "," kv )? or ( "," kv )* for the additional keys, then the rest rule. */
static void put_optional(js_sb *b, const char *kv, int is_additional, int first_is_optional) {
    if (first_is_optional) {
        llm__js_sb_puts(b, "( \",\" space ");
        llm__js_sb_puts(b, kv);
        llm__js_sb_puts(b, is_additional ? " )*" : " )?");
    } else {
        llm__js_sb_puts(b, kv);
        if (is_additional) {
            llm__js_sb_puts(b, " ( \",\" space ");
            llm__js_sb_puts(b, kv);
            llm__js_sb_puts(b, " )*");
        }
    }
}

const char *llm__js_object_body(js_ctx *c, const char *name, const js_members *m) {
    const char *sep = *name ? "-" : "";
    size_t n_req = m->n_req, n_opt = m->n_opt;
    const char **opt = m->opt_name, **opt_kv = m->opt_kv;
    if (n_req == 0 && n_opt == 0)
        return "\"{\" space \"}\"";

    /* rest[p]: the rule for the optional members after p, named after p;
     * made from the last one back, the order llama.cpp adds them in */
    const char **rest = llm__js_alloc(c, (n_opt + 1) * sizeof *rest);
    if (!rest)
        return NULL;
    for (size_t p = n_opt > 1 ? n_opt - 1 : 0; p-- > 0;) {
        js_sb b;
        llm__js_sb_init(&b, c);
        put_optional(&b, opt_kv[p + 1], opt[p + 1] == NULL, 1);
        if (p + 1 < n_opt - 1) {
            llm__js_sb_putc(&b, ' ');
            llm__js_sb_puts(&b, rest[p + 1]);
        }
        rest[p] = llm__js_add_rule(c, join3(c, name, sep, join3(c, opt[p] ? opt[p] : "*", "-rest", "")),
                                   llm__js_sb_str(&b));
        if (!rest[p])
            return NULL;
    }

    js_sb b;
    llm__js_sb_init(&b, c);
    llm__js_sb_puts(&b, "\"{\" space ");
    for (size_t i = 0; i < n_req; i++) {
        if (i)
            llm__js_sb_puts(&b, " \",\" space ");
        llm__js_sb_puts(&b, m->req_kv[i]);
    }
    if (n_opt) {
        llm__js_sb_puts(&b, " (");
        if (n_req)
            llm__js_sb_puts(&b, " \",\" space ( ");
        for (size_t i = 0; i < n_opt; i++) {
            if (i)
                llm__js_sb_puts(&b, " | ");
            put_optional(&b, opt_kv[i], opt[i] == NULL, 0);
            if (i + 1 < n_opt) {
                llm__js_sb_putc(&b, ' ');
                llm__js_sb_puts(&b, rest[i]);
            }
        }
        if (n_req)
            llm__js_sb_puts(&b, " )");
        llm__js_sb_puts(&b, " )?");
    }
    llm__js_sb_puts(&b, " space \"}\"");
    return llm__js_sb_str(&b);
}
