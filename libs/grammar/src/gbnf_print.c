/*
 * gbnf_print.c -- rules back to GBNF text (llm-grammar --print).
 */
#include <stdio.h>
#include <string.h>

#include "gbnf_internal.h"

typedef struct obuf {
    char *p;
    size_t cap, len;
} obuf;

static void put(obuf *o, const char *s, size_t n) {
    if (o->len + n < o->cap) memcpy(o->p + o->len, s, n);
    o->len += n;
}

static void puts_(obuf *o, const char *s) { put(o, s, strlen(s)); }

/* One code point, escaped for a literal (in_class 0) or a class (1). */
static void put_cp(obuf *o, uint32_t c, int in_class) {
    char b[16];
    switch (c) {
    case '\n': puts_(o, "\\n"); return;
    case '\r': puts_(o, "\\r"); return;
    case '\t': puts_(o, "\\t"); return;
    case '\\': puts_(o, "\\\\"); return;
    case '"': puts_(o, "\\\""); return;
    default: break;
    }
    if (in_class && (c == ']' || c == '[' || c == '-')) {
        b[0] = '\\';
        b[1] = (char)c;
        put(o, b, 2);
    } else if (in_class && c == '^') {
        puts_(o, "\\x5E");
    } else if (c < 0x20 || c == 0x7F) {
        snprintf(b, sizeof b, "\\x%02X", c);
        puts_(o, b);
    } else if (c < 0x80) {
        b[0] = (char)c;
        put(o, b, 1);
    } else if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
        snprintf(b, sizeof b, "\\U%08X", c);
        puts_(o, b);
    } else {
        int n;
        if (c < 0x800) {
            b[0] = (char)(0xC0 | (c >> 6));
            b[1] = (char)(0x80 | (c & 0x3F));
            n = 2;
        } else if (c < 0x10000) {
            b[0] = (char)(0xE0 | (c >> 12));
            b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
            b[2] = (char)(0x80 | (c & 0x3F));
            n = 3;
        } else {
            b[0] = (char)(0xF0 | (c >> 18));
            b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
            b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
            b[3] = (char)(0x80 | (c & 0x3F));
            n = 4;
        }
        put(o, b, (size_t)n);
    }
}

/* A rule name; generated names (root_3) become root-3, as `_` is not a
 * GBNF name character. */
static void put_name(obuf *o, const char *name) {
    for (const char *c = name; *c; c++) put(o, *c == '_' ? "-" : c, 1);
}

static int single_char(const gelem *e, uint32_t i) {
    return e[i].type == GE_CHAR && e[i + 1].type != GE_CHAR_ALT && e[i + 1].type != GE_RNG_UPPER;
}

static void print_rule(obuf *o, const llm_grammar *g, uint32_t r) {
    const gelem *e = g->elems;
    put_name(o, g->rule_names[r]);
    puts_(o, " ::=");
    uint32_t i = g->rule_start[r];
    char b[32];
    /* an empty alternative is written "" (a bare `|` at the end of a line
     * would join the next line to the rule) */
    if (e[i].type == GE_END || e[i].type == GE_ALT) puts_(o, " \"\"");
    while (e[i].type != GE_END) {
        const gelem *x = &e[i];
        switch (x->type) {
        case GE_ALT:
            puts_(o, " |");
            i++;
            if (e[i].type == GE_END || e[i].type == GE_ALT) puts_(o, " \"\"");
            break;
        case GE_RULE_REF:
            puts_(o, " ");
            put_name(o, g->rule_names[x->value]);
            i++;
            break;
        case GE_TOKEN:
        case GE_TOKEN_NOT:
            snprintf(b, sizeof b, " %s<[%u]>", x->type == GE_TOKEN_NOT ? "!" : "", x->value);
            puts_(o, b);
            i++;
            break;
        case GE_CHAR_ANY:
            puts_(o, " .");
            i++;
            break;
        default:
            if (single_char(e, i)) {
                puts_(o, " \"");
                while (single_char(e, i)) put_cp(o, e[i++].value, 0);
                puts_(o, "\"");
                break;
            }
            puts_(o, x->type == GE_CHAR_NOT ? " [^" : " [");
            do {
                put_cp(o, e[i].value, 1);
                if (e[i + 1].type == GE_RNG_UPPER) {
                    puts_(o, "-");
                    put_cp(o, e[i + 1].value, 1);
                    i++;
                }
                i++;
            } while (e[i].type == GE_CHAR_ALT);
            puts_(o, "]");
            break;
        }
    }
    puts_(o, "\n");
}

llm_status llm_grammar_print(const llm_grammar *g, char *out, size_t cap, size_t *n_needed) {
    if (!g || (!out && cap)) return GERR(LLM_ERR_INVALID_ARG, "llm_grammar_print: NULL argument");
    obuf o = {out, cap, 0};
    for (uint32_t r = 0; r < g->n_rules; r++) print_rule(&o, g, r);
    if (n_needed) *n_needed = o.len;
    if (o.len + 1 > cap) return GERR(LLM_ERR_BUFFER_TOO_SMALL, "print needs %zu bytes", o.len + 1);
    out[o.len] = 0;
    return LLM_OK;
}
