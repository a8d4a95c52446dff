/* jinja_lex.c -- template source -> tokens, with jinja2's whitespace rules
 * as transformers configures them: trim_blocks (drop the newline after a
 * block or comment tag), lstrip_blocks (drop spaces/tabs before a block or
 * comment tag that starts its line), "-" / "+" tag modifiers, one trailing
 * newline of the template removed, newlines normalized to "\n". */
#include <stdlib.h>
#include <string.h>

#include "jinja.h"

typedef struct lexer {
    jj_state *S;
    const char *src; /* normalized source */
    size_t len, pos;
    int line;
    jj_tok *toks;
    size_t n, cap;
} lexer;

static void push(lexer *L, jj_tok t) {
    if (L->n == L->cap) {
        size_t cap = L->cap ? L->cap * 2 : 256;
        jj_tok *p = llm__jj_alloc(L->S, cap * sizeof *p);
        if (L->n)
            memcpy(p, L->toks, L->n * sizeof *p);
        L->toks = p;
        L->cap = cap;
    }
    L->toks[L->n++] = t;
}

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static void count_lines(lexer *L, size_t from, size_t to) {
    for (size_t i = from; i < to; i++)
        if (L->src[i] == '\n')
            L->line++;
}

static void emit_text(lexer *L, const char *s, size_t n) {
    if (n == 0)
        return;
    jj_tok t = {0};
    t.type = TK_TEXT;
    t.s = s;
    t.n = n;
    t.line = L->line;
    push(L, t);
}

/* After a "-" closer: skip all whitespace. */
static void skip_ws(lexer *L) {
    size_t p = L->pos;
    while (p < L->len && is_ws(L->src[p]))
        p++;
    count_lines(L, L->pos, p);
    L->pos = p;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void put_utf8(llm__sb *sb, uint32_t cp) {
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6)), b[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12)), b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18)), b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), b[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    }
    llm__sb_put(sb, b, n);
}

/* A quoted string at L->pos; Python unicode-escape rules for backslashes. */
static void lex_string(lexer *L, jj_tok *t) {
    char q = L->src[L->pos];
    size_t p = L->pos + 1;
    llm__sb sb = {0};
    for (;;) {
        if (p >= L->len) {
            llm__sb_free(&sb);
            llm__jj_fail(L->S, LLM_ERR_BAD_FORMAT, "line %d: unterminated string", L->line);
        }
        char c = L->src[p];
        if (c == q)
            break;
        if (c != '\\' || p + 1 >= L->len) {
            llm__sb_put(&sb, &c, 1);
            p++;
            continue;
        }
        char e = L->src[p + 1];
        p += 2;
        uint32_t cp = 0;
        int digits = 0;
        switch (e) {
        case 'n': llm__sb_put(&sb, "\n", 1); break;
        case 't': llm__sb_put(&sb, "\t", 1); break;
        case 'r': llm__sb_put(&sb, "\r", 1); break;
        case 'a': llm__sb_put(&sb, "\a", 1); break;
        case 'b': llm__sb_put(&sb, "\b", 1); break;
        case 'f': llm__sb_put(&sb, "\f", 1); break;
        case 'v': llm__sb_put(&sb, "\v", 1); break;
        case '\\': llm__sb_put(&sb, "\\", 1); break;
        case '\'': llm__sb_put(&sb, "'", 1); break;
        case '"': llm__sb_put(&sb, "\"", 1); break;
        case '\n': break; /* line continuation */
        case 'x': digits = 2; break;
        case 'u': digits = 4; break;
        case 'U': digits = 8; break;
        default:
            if (e >= '0' && e <= '7') {
                cp = (uint32_t)(e - '0');
                for (int k = 0; k < 2 && p < L->len && L->src[p] >= '0' && L->src[p] <= '7'; k++)
                    cp = cp * 8 + (uint32_t)(L->src[p++] - '0');
                put_utf8(&sb, cp);
            } else { /* unknown escapes stay as written */
                llm__sb_put(&sb, "\\", 1);
                llm__sb_put(&sb, &e, 1);
            }
        }
        if (digits) {
            for (int k = 0; k < digits; k++) {
                int h = p < L->len ? hexval(L->src[p]) : -1;
                if (h < 0) {
                    llm__sb_free(&sb);
                    llm__jj_fail(L->S, LLM_ERR_BAD_FORMAT, "line %d: bad \\%c escape", L->line, e);
                }
                cp = cp * 16 + (uint32_t)h;
                p++;
            }
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                llm__sb_free(&sb);
                llm__jj_fail(L->S, LLM_ERR_UNSUPPORTED, "line %d: escape to a surrogate or beyond U+10FFFF",
                        L->line);
            }
            put_utf8(&sb, cp);
        }
    }
    if (sb.failed) {
        llm__sb_free(&sb);
        llm__jj_fail(L->S, LLM_ERR_NO_MEMORY, "out of memory");
    }
    t->type = TK_STRING;
    t->s = llm__jj_strndup(L->S, sb.data ? sb.data : "", sb.len);
    t->n = sb.len;
    llm__sb_free(&sb);
    count_lines(L, L->pos, p);
    L->pos = p + 1;
}

/* Tokens of one tag, up to its closer. kind is '{' (variable) or '%'. */
static void lex_tag(lexer *L, char kind) {
    static const char *const ops2[] = {"//", "**", "==", "!=", "<=", ">="};
    int balance = 0; /* like jinja2, no closer is seen inside (), [] or {} */
    for (;;) {
        while (L->pos < L->len && is_ws(L->src[L->pos])) {
            if (L->src[L->pos] == '\n')
                L->line++;
            L->pos++;
        }
        if (L->pos >= L->len)
            llm__jj_fail(L->S, LLM_ERR_BAD_FORMAT, "line %d: unclosed tag", L->line);
        const char *s = L->src + L->pos;
        size_t rest = L->len - L->pos;
        char close = kind == '{' ? '}' : '%';
        int mod = (s[0] == '-' || s[0] == '+') ? 1 : 0;
        if (balance == 0 && rest >= (size_t)(2 + mod) && s[mod] == close && s[mod + 1] == '}' && !(kind == '{' && s[0] == '+')) {
            jj_tok t = {0};
            t.type = kind == '{' ? TK_VAR_END : TK_BLOCK_END;
            t.line = L->line;
            push(L, t);
            L->pos += (size_t)(2 + mod);
            if (s[0] == '-')
                skip_ws(L);
            else if (kind == '%' && s[0] != '+' && L->pos < L->len && L->src[L->pos] == '\n') {
                L->pos++; /* trim_blocks */
                L->line++;
            }
            return;
        }
        jj_tok t = {0};
        t.line = L->line;
        if (is_alpha(s[0])) {
            size_t n = 1;
            while (n < rest && (is_alpha(s[n]) || is_digit(s[n])))
                n++;
            t.type = TK_NAME, t.s = s, t.n = n;
            L->pos += n;
        } else if (is_digit(s[0])) {
            size_t n = 0;
            bool is_float = false;
            int64_t iv = 0;
            while (n < rest && (is_digit(s[n]) || s[n] == '_')) {
                if (s[n] != '_') {
                    if (iv > (INT64_MAX - 9) / 10)
                        llm__jj_fail(L->S, LLM_ERR_UNSUPPORTED, "line %d: integer too large", L->line);
                    iv = iv * 10 + (s[n] - '0');
                }
                n++;
            }
            if (n + 1 < rest && s[n] == '.' && is_digit(s[n + 1])) {
                is_float = true;
                n++;
                while (n < rest && is_digit(s[n]))
                    n++;
            }
            if (n < rest && (s[n] == 'e' || s[n] == 'E')) {
                size_t m = n + 1;
                if (m < rest && (s[m] == '+' || s[m] == '-'))
                    m++;
                if (m < rest && is_digit(s[m])) {
                    is_float = true;
                    n = m;
                    while (n < rest && is_digit(s[n]))
                        n++;
                }
            }
            if (is_float) {
                char buf[64];
                size_t k = 0;
                for (size_t j = 0; j < n && k + 1 < sizeof buf; j++)
                    if (s[j] != '_')
                        buf[k++] = s[j];
                buf[k] = '\0';
                t.type = TK_FLOAT;
                t.f = strtod(buf, NULL);
            } else {
                t.type = TK_INT;
                t.i = iv;
            }
            L->pos += n;
        } else if (s[0] == '\'' || s[0] == '"') {
            lex_string(L, &t);
        } else {
            size_t n = 0;
            for (size_t k = 0; k < sizeof ops2 / sizeof ops2[0]; k++)
                if (rest >= 2 && s[0] == ops2[k][0] && s[1] == ops2[k][1])
                    n = 2;
            if (!n) {
                if (!strchr("+-*/%~|.,:()[]{}<>=!", s[0]))
                    llm__jj_fail(L->S, LLM_ERR_BAD_FORMAT, "line %d: unexpected character '%c'", L->line, s[0]);
                n = 1;
            }
            t.type = TK_OP, t.s = s, t.n = n;
            L->pos += n;
            if (n == 1 && (s[0] == '(' || s[0] == '[' || s[0] == '{'))
                balance++;
            else if (n == 1 && (s[0] == ')' || s[0] == ']' || s[0] == '}') && balance > 0)
                balance--;
        }
        push(L, t);
    }
}

/* {% raw %}...{% endraw %} at L->pos (just after "{%" and its sign): emit
 * the body as text, with the whitespace control of both tags ('-' signs,
 * lstrip_blocks before "{% endraw", trim_blocks after "endraw %}" only, as
 * jinja2). False when the tag is not "raw". */
static bool lex_raw(lexer *L) {
    const char *src = L->src;
    size_t len = L->len, p = L->pos;
    while (p < len && is_ws(src[p]))
        p++;
    if (p + 3 > len || memcmp(src + p, "raw", 3) != 0 || (p + 3 < len && (is_alpha(src[p + 3]) || is_digit(src[p + 3]))))
        return false;
    p += 3;
    while (p < len && is_ws(src[p]))
        p++;
    char osign = 0;
    if (p < len && (src[p] == '-' || src[p] == '+'))
        osign = src[p++];
    if (p + 2 > len || src[p] != '%' || src[p + 1] != '}')
        return false;
    size_t cstart = p + 2;
    if (osign == '-') /* (jinja2 applies no trim_blocks after the opening raw tag) */
        while (cstart < len && is_ws(src[cstart]))
            cstart++;
    for (size_t q = cstart; q + 1 < len; q++) {
        if (src[q] != '{' || src[q + 1] != '%')
            continue;
        size_t r = q + 2;
        char sign = 0, esign = 0;
        if (r < len && (src[r] == '-' || src[r] == '+'))
            sign = src[r++];
        while (r < len && is_ws(src[r]))
            r++;
        if (r + 6 > len || memcmp(src + r, "endraw", 6) != 0)
            continue;
        r += 6;
        while (r < len && is_ws(src[r]))
            r++;
        if (r < len && (src[r] == '-' || src[r] == '+'))
            esign = src[r++];
        if (r + 2 > len || src[r] != '%' || src[r + 1] != '}')
            continue;
        size_t cend = q;
        if (sign == '-') {
            while (cend > cstart && is_ws(src[cend - 1]))
                cend--;
        } else if (sign != '+') {
            size_t l = cend;
            while (l > cstart && (src[l - 1] == ' ' || src[l - 1] == '\t'))
                l--;
            if (l > 0 && src[l - 1] == '\n')
                cend = l;
        }
        emit_text(L, src + cstart, cend - cstart);
        count_lines(L, L->pos, r + 2);
        L->pos = r + 2;
        if (esign == '-')
            skip_ws(L);
        else if (esign != '+' && L->pos < L->len && src[L->pos] == '\n') {
            L->pos++;
            L->line++;
        }
        return true;
    }
    llm__jj_fail(L->S, LLM_ERR_BAD_FORMAT, "line %d: {%% raw %%} without {%% endraw %%}", L->line);
}

jj_tok *llm__jj_lex(jj_state *S, const char *raw, size_t *n_tok) {
    /* Normalize newlines and drop one trailing newline (keep_trailing_newline
     * is off in jinja2's default environment). */
    size_t rlen = strlen(raw);
    char *src = llm__jj_alloc(S, rlen + 1);
    size_t len = 0;
    for (size_t i = 0; i < rlen; i++) {
        if (raw[i] == '\r') {
            src[len++] = '\n';
            if (i + 1 < rlen && raw[i + 1] == '\n')
                i++;
        } else {
            src[len++] = raw[i];
        }
    }
    if (len && src[len - 1] == '\n')
        len--;
    src[len] = '\0';

    lexer L = {S, src, len, 0, 1, NULL, 0, 0};
    while (L.pos < L.len) {
        size_t start = L.pos;
        const char *open = NULL;
        for (size_t p = L.pos; p + 1 < L.len; p++) {
            if (src[p] == '{' && (src[p + 1] == '{' || src[p + 1] == '%' || src[p + 1] == '#')) {
                open = src + p;
                break;
            }
        }
        if (!open) {
            emit_text(&L, src + start, L.len - start);
            count_lines(&L, start, L.len);
            L.pos = L.len;
            break;
        }
        size_t text_n = (size_t)(open - (src + start));
        char kind = open[1];
        char sign = (open + 2 < src + len && (open[2] == '-' || open[2] == '+')) ? open[2] : 0;
        if (sign == '-') { /* strip all whitespace before the tag */
            while (text_n > 0 && is_ws(src[start + text_n - 1]))
                text_n--;
        } else if (sign != '+' && kind != '{') { /* lstrip_blocks */
            size_t l_pos = text_n;
            while (l_pos > 0 && src[start + l_pos - 1] != '\n')
                l_pos--;
            bool line_start = l_pos > 0 || start == 0 || src[start - 1] == '\n';
            bool only_blank = l_pos < text_n;
            for (size_t k = l_pos; k < text_n; k++)
                if (src[start + k] != ' ' && src[start + k] != '\t')
                    only_blank = false;
            if (line_start && only_blank)
                text_n = l_pos;
        }
        emit_text(&L, src + start, text_n);
        count_lines(&L, start, (size_t)(open - src));
        L.pos = (size_t)(open - src) + 2 + (sign ? 1 : 0);
        if (kind == '#') {
            const char *end = strstr(src + L.pos, "#}");
            if (!end)
                llm__jj_fail(S, LLM_ERR_BAD_FORMAT, "line %d: unclosed comment", L.line);
            size_t endpos = (size_t)(end - src);
            char m = endpos > L.pos ? src[endpos - 1] : 0;
            count_lines(&L, L.pos, endpos);
            L.pos = endpos + 2;
            if (m == '-')
                skip_ws(&L);
            else if (m != '+' && L.pos < L.len && src[L.pos] == '\n') {
                L.pos++;
                L.line++;
            }
            continue;
        }
        if (kind == '%' && lex_raw(&L))
            continue;
        jj_tok t = {0};
        t.type = kind == '{' ? TK_VAR_BEGIN : TK_BLOCK_BEGIN;
        t.line = L.line;
        push(&L, t);
        lex_tag(&L, kind);
    }
    jj_tok eof = {0};
    eof.type = TK_EOF;
    eof.line = L.line;
    push(&L, eof);
    *n_tok = L.n;
    return L.toks;
}
