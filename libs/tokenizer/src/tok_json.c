/* tok_json.c -- the strict read-only JSON reader of tok_json.h: one
 * recursive-descent pass (depth-limited), nodes and decoded strings carved
 * from an arena of large blocks, duplicate keys found with a hash table per
 * object, so the whole parse stays linear in the input. */
#include "tok_json.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

/* ---- arena: blocks of at least ARENA_BLOCK bytes, freed together ---- */

#define ARENA_BLOCK ((size_t)1 << 20)

typedef struct arena_block {
    struct arena_block *prev;
    size_t used, cap;
    max_align_t data[]; /* [cap] bytes */
} arena_block;

struct llm__tj_doc {
    arena_block *top;
};

static void *arena_alloc(llm__tj_doc *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    arena_block *b = a->top;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        if (cap > SIZE_MAX - sizeof(arena_block)) return NULL;
        arena_block *nb = malloc(sizeof(arena_block) + cap);
        if (!nb) return NULL;
        nb->prev = b;
        nb->used = 0;
        nb->cap = cap;
        a->top = b = nb;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

void llm__tj_free(llm__tj_doc *doc) {
    if (!doc) return;
    arena_block *b = doc->top;
    while (b) {
        arena_block *p = b->prev;
        free(b);
        b = p;
    }
    free(doc);
}

/* ---- parser ---- */

typedef struct parser {
    const unsigned char *s;
    size_t len, pos;
    const char *name;
    llm__tj_doc *doc;
    const llm__tj **slots; /* duplicate-key table, [slot_cap] */
    size_t slot_cap;
    llm_status st;         /* first error */
} parser;

/* Records the first error with its line, column and byte offset. */
static llm_status perr(parser *p, llm_status st, size_t at, const char *what) {
    if (p->st != LLM_OK) return p->st;
    p->st = st;
    if (st == LLM_ERR_NO_MEMORY) return llm__tok_err(st, "%s: out of memory", p->name);
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < p->len; i++) {
        if (p->s[i] == '\n') {
            line++;
            col = 1;
        } else if ((p->s[i] & 0xC0) != 0x80) {
            col++; /* columns count characters, not UTF-8 continuation bytes */
        }
    }
    return llm__tok_err(st, "%s: %s at line %zu column %zu (byte %zu)", p->name, what, line, col, at);
}

static void skip_ws(parser *p) {
    while (p->pos < p->len) {
        unsigned char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static llm__tj *new_node(parser *p, llm__tj_type t) {
    llm__tj *v = arena_alloc(p->doc, sizeof *v);
    if (!v) {
        perr(p, LLM_ERR_NO_MEMORY, p->pos, "");
        return NULL;
    }
    memset(v, 0, sizeof *v);
    v->type = t;
    return v;
}

static int hexval(unsigned char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Four hex digits at s[at..at+4) as a code unit, or -1. */
static long hex4(const parser *p, size_t at) {
    if (p->len - at < 4) return -1;
    long v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(p->s[at + (size_t)k]);
        if (h < 0) return -1;
        v = v << 4 | h;
    }
    return v;
}

static size_t put_utf8(char *o, uint32_t cp) {
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Length of the valid UTF-8 sequence at s[at..len) (no overlongs, no
 * surrogates, <= U+10FFFF), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t at, size_t len) {
    unsigned char c = s[at];
    size_t n;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1Fu; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0Fu; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07u; min = 0x10000; }
    else return 0;
    if (len - at < n) return 0;
    for (size_t k = 1; k < n; k++) {
        if ((s[at + k] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[at + k] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

/* A string at p->pos (the opening quote): decoded into the arena. */
static llm_status parse_string(parser *p, const char **out, size_t *out_len) {
    const size_t start = p->pos++;
    /* First pass: find the closing quote (escapes skipped) to size the copy. */
    size_t end = p->pos;
    while (end < p->len && p->s[end] != '"') end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->len) return perr(p, LLM_ERR_BAD_FORMAT, start, "unterminated string");
    char *o = arena_alloc(p->doc, end - p->pos + 1); /* decoding never grows the text */
    if (!o) return perr(p, LLM_ERR_NO_MEMORY, start, "");
    size_t k = 0;
    while (p->pos < end) {
        const unsigned char c = p->s[p->pos];
        if (c < 0x20) return perr(p, LLM_ERR_BAD_FORMAT, p->pos, "control character in a string");
        if (c >= 0x80) {
            size_t n = utf8_seq(p->s, p->pos, end);
            if (!n) return perr(p, LLM_ERR_BAD_FORMAT, p->pos, "invalid UTF-8 in a string");
            memcpy(o + k, p->s + p->pos, n);
            k += n;
            p->pos += n;
            continue;
        }
        if (c != '\\') {
            o[k++] = (char)c;
            p->pos++;
            continue;
        }
        const size_t esc = p->pos;
        const unsigned char e = p->s[p->pos + 1];
        p->pos += 2;
        switch (e) {
        case '"': o[k++] = '"'; break;
        case '\\': o[k++] = '\\'; break;
        case '/': o[k++] = '/'; break;
        case 'b': o[k++] = '\b'; break;
        case 'f': o[k++] = '\f'; break;
        case 'n': o[k++] = '\n'; break;
        case 'r': o[k++] = '\r'; break;
        case 't': o[k++] = '\t'; break;
        case 'u': {
            long u = hex4(p, p->pos);
            if (u < 0) return perr(p, LLM_ERR_BAD_FORMAT, esc, "bad \\u escape (four hex digits expected)");
            p->pos += 4;
            uint32_t cp = (uint32_t)u;
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return perr(p, LLM_ERR_BAD_FORMAT, esc, "lone low surrogate in a \\u escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                long lo = p->pos + 1 < end && p->s[p->pos] == '\\' && p->s[p->pos + 1] == 'u' ? hex4(p, p->pos + 2) : -1;
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return perr(p, LLM_ERR_BAD_FORMAT, esc, "high surrogate in a \\u escape without a low one");
                cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
                p->pos += 6;
            }
            k += put_utf8(o + k, cp);
            break;
        }
        default:
            return perr(p, LLM_ERR_BAD_FORMAT, esc, "bad escape in a string");
        }
    }
    p->pos = end + 1;
    o[k] = '\0';
    *out = o;
    *out_len = k;
    return LLM_OK;
}

/* A number at p->pos, by JSON's grammar. */
static llm_status parse_number(parser *p, llm__tj *v) {
    const size_t start = p->pos;
    size_t i = p->pos;
    const unsigned char *s = p->s;
    int neg = 0, real = 0;
    if (i < p->len && s[i] == '-') {
        neg = 1;
        i++;
    }
    if (i >= p->len || s[i] < '0' || s[i] > '9') return perr(p, LLM_ERR_BAD_FORMAT, start, "invalid number");
    if (s[i] == '0') {
        i++;
        if (i < p->len && s[i] >= '0' && s[i] <= '9')
            return perr(p, LLM_ERR_BAD_FORMAT, start, "number with a leading zero");
    } else {
        while (i < p->len && s[i] >= '0' && s[i] <= '9') i++;
    }
    if (i < p->len && s[i] == '.') {
        real = 1;
        i++;
        if (i >= p->len || s[i] < '0' || s[i] > '9') return perr(p, LLM_ERR_BAD_FORMAT, start, "invalid number");
        while (i < p->len && s[i] >= '0' && s[i] <= '9') i++;
    }
    if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
        real = 1;
        i++;
        if (i < p->len && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= p->len || s[i] < '0' || s[i] > '9') return perr(p, LLM_ERR_BAD_FORMAT, start, "invalid number");
        while (i < p->len && s[i] >= '0' && s[i] <= '9') i++;
    }
    p->pos = i;
    if (!real) {
        /* Magnitudes up to 2^63 (INT64_MIN's) accumulate in uint64_t. */
        uint64_t m = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        for (size_t k = start + (size_t)neg; k < i; k++) {
            unsigned d = (unsigned)(s[k] - '0');
            if (m > (lim - d) / 10) return perr(p, LLM_ERR_BAD_FORMAT, start, "integer out of range");
            m = m * 10 + d;
        }
        v->type = LLM__TJ_INT;
        v->num.i = neg ? (m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m) : (int64_t)m;
        return LLM_OK;
    }
    /* strtod wants a NUL-terminated copy written with the locale's decimal
     * point (a host program may have called setlocale). */
    const char *dp = localeconv()->decimal_point;
    const size_t dpl = dp && *dp ? strlen(dp) : 1;
    char small[64];
    const size_t need = (i - start) + dpl + 1;
    char *buf = need <= sizeof small ? small : arena_alloc(p->doc, need);
    if (!buf) return perr(p, LLM_ERR_NO_MEMORY, start, "");
    size_t k = 0;
    for (size_t j = start; j < i; j++) {
        if (s[j] == '.' && dp && *dp) {
            memcpy(buf + k, dp, dpl);
            k += dpl;
        } else {
            buf[k++] = (char)s[j];
        }
    }
    buf[k] = '\0';
    errno = 0;
    double d = strtod(buf, NULL);
    if (errno == ERANGE && isinf(d)) return perr(p, LLM_ERR_BAD_FORMAT, start, "number out of range");
    v->type = LLM__TJ_REAL;
    v->num.d = d;
    return LLM_OK;
}

static uint64_t key_hash(const char *k, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)k[i];
        h *= 1099511628211ull;
    }
    return h;
}

static int same_key(const llm__tj *a, const llm__tj *b) {
    return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

/* Rejects an object whose members repeat a key: pairwise for a few
 * members, else through an open-addressing table sized to the object. */
static llm_status check_keys(parser *p, const llm__tj *obj, size_t at) {
    if (obj->n < 2) return LLM_OK;
    if (obj->n <= 8) {
        for (const llm__tj *a = obj->u.first; a; a = a->next)
            for (const llm__tj *b = a->next; b; b = b->next)
                if (same_key(a, b)) return perr(p, LLM_ERR_BAD_FORMAT, at, "duplicate key in an object");
        return LLM_OK;
    }
    size_t cap = 16;
    while (cap < 2 * obj->n) cap *= 2;
    if (cap > p->slot_cap) {
        const llm__tj **t = realloc(p->slots, cap * sizeof *t);
        if (!t) return perr(p, LLM_ERR_NO_MEMORY, at, "");
        p->slots = t;
        p->slot_cap = cap;
    }
    memset(p->slots, 0, cap * sizeof *p->slots);
    for (const llm__tj *m = obj->u.first; m; m = m->next) {
        size_t i = (size_t)key_hash(m->key, m->key_len) & (cap - 1);
        while (p->slots[i]) {
            if (same_key(p->slots[i], m)) return perr(p, LLM_ERR_BAD_FORMAT, at, "duplicate key in an object");
            i = (i + 1) & (cap - 1);
        }
        p->slots[i] = m;
    }
    return LLM_OK;
}

static llm__tj *parse_value(parser *p, int depth);

/* An array or object at p->pos (its opening bracket). */
static llm__tj *parse_container(parser *p, int depth, int is_obj) {
    const size_t start = p->pos;
    if (depth >= LLM__TJ_MAX_DEPTH) {
        perr(p, LLM_ERR_BAD_FORMAT, start, "nested too deeply");
        return NULL;
    }
    llm__tj *v = new_node(p, is_obj ? LLM__TJ_OBJECT : LLM__TJ_ARRAY);
    if (!v) return NULL;
    const char close = is_obj ? '}' : ']';
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return v;
    }
    const llm__tj **tail = &v->u.first;
    for (;;) {
        const char *key = NULL;
        size_t key_len = 0;
        if (is_obj) {
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != '"') {
                perr(p, LLM_ERR_BAD_FORMAT, p->pos, "object key (a string) expected");
                return NULL;
            }
            if (parse_string(p, &key, &key_len) != LLM_OK) return NULL;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                perr(p, LLM_ERR_BAD_FORMAT, p->pos, "':' expected after an object key");
                return NULL;
            }
            p->pos++;
        }
        llm__tj *e = parse_value(p, depth + 1);
        if (!e) return NULL;
        e->key = key;
        e->key_len = key_len;
        *tail = e;
        tail = &e->next;
        v->n++;
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == close) {
            p->pos++;
            break;
        }
        perr(p, LLM_ERR_BAD_FORMAT, p->pos, is_obj ? "',' or '}' expected in an object" : "',' or ']' expected in an array");
        return NULL;
    }
    if (is_obj && check_keys(p, v, start) != LLM_OK) return NULL;
    return v;
}

static int literal(parser *p, const char *word) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) return 0;
    p->pos += n;
    return 1;
}

static llm__tj *parse_value(parser *p, int depth) {
    skip_ws(p);
    if (p->pos >= p->len) {
        perr(p, LLM_ERR_BAD_FORMAT, p->pos, "unexpected end of text (a value expected)");
        return NULL;
    }
    const unsigned char c = p->s[p->pos];
    if (c == '{' || c == '[') return parse_container(p, depth, c == '{');
    if (c == '"') {
        llm__tj *v = new_node(p, LLM__TJ_STRING);
        if (!v || parse_string(p, &v->u.s, &v->n) != LLM_OK) return NULL;
        return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        llm__tj *v = new_node(p, LLM__TJ_INT);
        if (!v || parse_number(p, v) != LLM_OK) return NULL;
        return v;
    }
    const size_t at = p->pos;
    if (literal(p, "true")) return new_node(p, LLM__TJ_TRUE);
    if (literal(p, "false")) return new_node(p, LLM__TJ_FALSE);
    if (literal(p, "null")) return new_node(p, LLM__TJ_NULL);
    perr(p, LLM_ERR_BAD_FORMAT, at, "invalid value");
    return NULL;
}

llm_status llm__tj_parse(const char *text, size_t len, const char *name, llm__tj_doc **doc, const llm__tj **root) {
    if (doc) *doc = NULL;
    if (root) *root = NULL;
    if (!doc || !root || (!text && len)) return llm__tok_err(LLM_ERR_INVALID_ARG, "JSON reader: NULL argument");
    parser p = {(const unsigned char *)(text ? text : ""), len, 0, name ? name : "JSON", NULL, NULL, 0, LLM_OK};
    p.doc = calloc(1, sizeof *p.doc);
    if (!p.doc) return llm__tok_err(LLM_ERR_NO_MEMORY, "%s: out of memory", p.name);
    const llm__tj *v = parse_value(&p, 0);
    if (v) {
        skip_ws(&p);
        if (p.pos < p.len) perr(&p, LLM_ERR_BAD_FORMAT, p.pos, "text after the JSON value");
    }
    free(p.slots);
    if (p.st != LLM_OK) {
        llm__tj_free(p.doc);
        return p.st;
    }
    *doc = p.doc;
    *root = v;
    return LLM_OK;
}

const llm__tj *llm__tj_get(const llm__tj *obj, const char *key) {
    if (!obj || obj->type != LLM__TJ_OBJECT || !key) return NULL;
    const size_t n = strlen(key);
    for (const llm__tj *m = obj->u.first; m; m = m->next)
        if (m->key_len == n && memcmp(m->key, key, n) == 0) return m;
    return NULL;
}

const llm__tj *llm__tj_at(const llm__tj *arr, size_t i) {
    if (!arr || arr->type != LLM__TJ_ARRAY || i >= arr->n) return NULL;
    const llm__tj *e = arr->u.first;
    while (i-- && e) e = e->next;
    return e;
}
