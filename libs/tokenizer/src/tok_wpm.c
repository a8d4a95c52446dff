/* tok_wpm.c -- WordPiece (BERT), as HF's BertNormalizer + BertPreTokenizer +
 * WordPiece model: drop control characters, whitespace to ' ', spaces
 * around CJK ideographs, NFD + remove nonspacing marks + lowercase (when
 * lowercasing), split on whitespace and punctuation, then greedy
 * longest-match-first with "##" continuations; a word that cannot be spelled,
 * or has more than 100 characters, is [UNK]. */
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "tok_internal.h"

#define WPM_MAX_CHARS 100

static int is_ws(uint32_t c) {
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
           c == 0x3000;
}

/* BertNormalizer's clean_text drops Cc, Cf, Cs and Co characters but keeps
 * unassigned code points (Cn): HF's BertTokenizer and llama.cpp both spell
 * those as [UNK] rather than deleting them. */
static int is_control(uint32_t c) {
    if (c == '\t' || c == '\n' || c == '\r') return 0;
    utf8proc_category_t cat = utf8proc_category((utf8proc_int32_t)c);
    return cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF || cat == UTF8PROC_CATEGORY_CS ||
           cat == UTF8PROC_CATEGORY_CO;
}

static int is_cjk(uint32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

static int is_punct(uint32_t c) {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return 1;
    utf8proc_category_t cat = utf8proc_category((utf8proc_int32_t)c);
    return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

typedef struct cp_vec {
    uint32_t *v;
    size_t n, cap;
} cp_vec;

static int cp_push(cp_vec *v, uint32_t c) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 256;
        uint32_t *nv = realloc(v->v, cap * sizeof *nv);
        if (!nv) return -1;
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = c;
    return 0;
}

/* WordPiece one word (UTF-8 w[0..n), nchars characters). */
static int wordpiece(const llm_tokenizer *t, const char *w, size_t n, size_t nchars, tok_buf *scratch, tok_vec *out) {
    if (n == 0) return 0;
    size_t mark = out->n;
    if (nchars > WPM_MAX_CHARS) goto unk;
    size_t start = 0;
    while (start < n) {
        size_t end = n;
        llm_token found = LLM_TOKEN_NULL;
        while (end > start) {
            scratch->n = 0;
            if (start > 0 && llm__buf_append(scratch, "##", 2)) return -1;
            if (llm__buf_append(scratch, w + start, end - start)) return -1;
            found = llm__tok_lookup(t, scratch->p, scratch->n);
            if (found >= 0) break;
            /* Step back one whole character. */
            end--;
            while (end > start && ((unsigned char)w[end] & 0xC0) == 0x80) end--;
        }
        if (found < 0) goto unk;
        if (llm__vec_push(out, found)) return -1;
        start = end;
    }
    return 0;
unk:
    out->n = mark;
    if (t->unk >= 0 && llm__vec_push(out, t->unk)) return -1;
    return 0;
}

llm_status llm__wpm_encode(const llm_tokenizer *t, const char *text, size_t n, tok_vec *out) {
    cp_vec cps = {0};
    tok_buf word = {0}, scratch = {0};
    llm_status st = LLM_OK;
    /* Normalise into code points. */
    for (size_t i = 0; i < n;) {
        size_t adv;
        uint32_t c = llm__utf8_decode(text + i, n - i, &adv);
        i += adv;
        if (c == 0 || c == 0xFFFD || is_control(c)) continue;
        if (is_ws(c)) c = ' ';
        if (is_cjk(c)) {
            if (cp_push(&cps, ' ') || cp_push(&cps, c) || cp_push(&cps, ' ')) goto oom;
            continue;
        }
        if (!t->lowercase) {
            if (cp_push(&cps, c)) goto oom;
            continue;
        }
        utf8proc_int32_t dec[32];
        int last = 0;
        utf8proc_ssize_t nd = utf8proc_decompose_char((utf8proc_int32_t)c, dec, 32, UTF8PROC_DECOMPOSE, &last);
        if (nd < 0 || nd > 32) {
            dec[0] = (utf8proc_int32_t)c;
            nd = 1;
        }
        for (utf8proc_ssize_t k = 0; k < nd; k++) {
            if (utf8proc_category(dec[k]) == UTF8PROC_CATEGORY_MN) continue;
            if (cp_push(&cps, (uint32_t)utf8proc_tolower(dec[k]))) goto oom;
        }
    }
    /* Split on whitespace and punctuation, WordPiece each word. */
    size_t nchars = 0;
    for (size_t i = 0; i <= cps.n; i++) {
        uint32_t c = i < cps.n ? cps.v[i] : ' ';
        int ws = is_ws(c), pu = !ws && is_punct(c);
        if (ws || pu) {
            if (wordpiece(t, word.p, word.n, nchars, &scratch, out)) goto oom;
            word.n = 0;
            nchars = 0;
            if (pu) {
                char u[4];
                size_t l = llm__utf8_encode(c, u);
                if (wordpiece(t, u, l, 1, &scratch, out)) goto oom;
            }
            continue;
        }
        char u[4];
        size_t l = llm__utf8_encode(c, u);
        if (llm__buf_append(&word, u, l)) goto oom;
        nchars++;
    }
    goto done;
oom:
    st = llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
done:
    free(cps.v);
    free(word.p);
    free(scratch.p);
    return st;
}
