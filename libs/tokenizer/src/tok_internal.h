/* tok_internal.h -- private types and helpers shared by the tokenizer's files. */
#ifndef LLM_TOK_INTERNAL_H
#define LLM_TOK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "llama/tokenizer.h"

#define TOK_MAX_REGEX 8

/* Added-token attributes (tokenizer.json "lstrip"/"rstrip"): the token
 * swallows the whitespace on its left / right when matched. */
#define TOK_LSTRIP LLM_TOKEN_LSTRIP
#define TOK_RSTRIP LLM_TOKEN_RSTRIP

/* GPT-2's pattern (HF ByteLevel's), with the final "\s+" of the tokenizer.json. */
#define TOK_RE_GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

/* A growable array of token ids (encode's scratch output). */
typedef struct tok_vec {
    llm_token *v;
    size_t n, cap;
} tok_vec;

/* A growable byte buffer. */
typedef struct tok_buf {
    char *p;
    size_t n, cap;
} tok_buf;

/* Pair -> merge table entry. key = (left << 32) | right; UINT64_MAX = empty. */
typedef struct tok_merge {
    uint64_t key;
    int32_t rank;   /* position in the merges list: lower merges first */
    llm_token res;  /* the token the pair becomes */
} tok_merge;

/* Normalisation steps for the HF_BPE / Metaspace pipeline (tokenizer.json). */
typedef struct tok_hf_norm {
    int prepend_space;   /* prepend U+2581: 1 Prepend normalizer (always), 2 Metaspace (unless
                            the text already starts with a space) */
    int prepend_first_only; /* Metaspace prepend_scheme "first": only the first fragment */
    int replace_space;   /* ' ' -> U+2581 */
    int metaspace_split; /* split before each U+2581 (Metaspace split=true) */
    int bytelevel_prefix_space; /* ByteLevel add_prefix_space */
    int nfc;             /* NFC normalizer before byte-level BPE */
    int newline_split;   /* gemma4: words are runs of non-newlines and runs of newlines; a
                            newline run that is a token is taken whole */
    int ugm_strip;       /* Unigram: Strip normalizer, 1 left | 2 right (Unicode White_Space) */
    int ugm_collapse;    /* Unigram: Replace(" {2,}", U+2581) normalizer */
    int32_t ugm_n_pieces; /* Unigram: ids [0, n) are model.vocab (the rest added tokens) */
} tok_hf_norm;

typedef struct tok_ugm tok_ugm; /* Unigram state (tok_ugm.c) */

struct llm_tokenizer {
    llm_tokenizer_type type;
    int32_t n;             /* vocabulary size */
    char *blob;            /* all token texts, NUL-terminated, back to back */
    uint32_t *off, *len;   /* [n] text of token i = blob + off[i], len[i] bytes */
    float *scores;         /* [n] */
    int32_t *types;        /* [n] llm_token_type */
    uint8_t *strip;        /* [n] TOK_LSTRIP | TOK_RSTRIP of added tokens, or NULL */
    char *dblob;           /* decoded bytes of every token, NUL-terminated */
    uint32_t *doff, *dlen; /* [n] */

    int32_t *ht;           /* [ht_mask + 1] text -> id, open addressing, -1 empty */
    uint32_t ht_mask;
    int32_t *raw_ht;       /* byte-level BPE: decoded bytes -> id (ignore_merges), or NULL */
    uint32_t raw_ht_mask;
    tok_merge *mt;         /* [mt_mask + 1] pair -> merge, or NULL */
    uint32_t mt_mask;
    int32_t n_merges;
    llm_token byte_tok[256]; /* BPE: the token of each byte's mapped char; SPM/HF_BPE: <0xXX> */

    llm_token *specials;   /* [n_specials] matched as whole tokens, longest first */
    int32_t n_specials;
    uint32_t *special_lens; /* [n_special_lens] distinct byte lengths of specials, longest first */
    int32_t n_special_lens;
    int specials_shadowed;  /* a special shares its text with another token: scan, not look up */
    unsigned char special_first[2][256]; /* [parse_special][byte]: a special may start here */
    /* Special-token partition rule: 0 HF's (tokenizer.json: leftmost match,
     * longest first; lstrip/rstrip take Unicode whitespace), 1 llama.cpp's
     * (GGUF / spec vocabularies: longest token first over the whole text;
     * lstrip/rstrip take ASCII whitespace), see tok_encode.c. */
    int llamacpp_partition;

    char pre[64];
    pcre2_code *re[TOK_MAX_REGEX];
    int n_re;
    tok_hf_norm hf;

    int add_bos, add_eos, add_space_prefix, ignore_merges, byte_fallback, lowercase;
    llm_token bos, eos, eot, eom, unk, pad, sep, cls, mask;
    /* What a BPE symbol missing from the vocabulary becomes: UNK for
     * tokenizer.json models with an unk_token (HF), nothing for GGUF
     * byte-level vocabularies (llama.cpp and HF both drop it). */
    llm_token bpe_unk;
    tok_ugm *ugm;          /* UGM: vocabulary trie and charsmap, else NULL */
};

/* llm_tokenizer_create with explicit pre-tokenizer patterns (instead of the
 * set named by spec->pre) and tokenizer.json normalisation settings. */
llm_status llm__tok_create(const llm_vocab_spec *spec, const char *const *patterns, int n_patterns,
                           const tok_hf_norm *hf, const uint8_t *strip, llm_tokenizer **out);

/* Errors: set the thread-local message and return st. */
llm_status llm__tok_err(llm_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* UTF-8 helpers. */
/* Length of the UTF-8 sequence starting with byte c (1 for invalid lead bytes). */
static inline size_t llm__utf8_len(unsigned char c) {
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) return 2;
    if ((c & 0xF0) == 0xE0) return 3;
    if ((c & 0xF8) == 0xF0) return 4;
    return 1;
}
/* Offset of the first byte that makes s[0..n) invalid UTF-8, or n when valid. */
size_t llm__utf8_validate(const char *s, size_t n);
/* Decode one code point at s (valid UTF-8 assumed, at least one byte); *adv = bytes used. */
uint32_t llm__utf8_decode(const char *s, size_t n, size_t *adv);
/* Encode cp into out (4 bytes room); returns bytes written. */
size_t llm__utf8_encode(uint32_t cp, char *out);

int llm__vec_push(tok_vec *v, llm_token id);
int llm__buf_append(tok_buf *b, const void *p, size_t n);

/* Hash table lookups. */
llm_token llm__tok_lookup(const llm_tokenizer *t, const char *s, size_t n);
llm_token llm__tok_lookup_raw(const llm_tokenizer *t, const char *s, size_t n);
/* Merge of (a, b): returns rank or -1; *res gets the merged token. */
int32_t llm__tok_merge(const llm_tokenizer *t, llm_token a, llm_token b, llm_token *res);

/* Pre-tokenizer (tok_pretok.c). */
llm_status llm__pretok_setup(llm_tokenizer *t, const char *pre);
llm_status llm__pretok_compile(llm_tokenizer *t, const char *pattern, size_t len);
/* Split text[0..n) with every regex in turn; fragments (offset, length) pairs
 * are appended to *out as consecutive size_t values. */
typedef struct tok_spans {
    size_t *v; /* [n][2] offset, length */
    size_t n, cap;
} tok_spans;
llm_status llm__pretok_split(const llm_tokenizer *t, const char *text, size_t n, tok_spans *out);
void llm__spans_free(tok_spans *s);

/* The algorithms: append ids for one raw fragment. */
llm_status llm__bpe_word(const llm_tokenizer *t, const llm_token *syms, size_t n, tok_vec *out);
llm_status llm__bpe_encode(const llm_tokenizer *t, const char *text, size_t n, tok_vec *out);
llm_status llm__hfbpe_encode(const llm_tokenizer *t, const char *text, size_t n, int first, tok_vec *out);
llm_status llm__spm_encode(const llm_tokenizer *t, const char *text, size_t n, int space_prefix, tok_vec *out);
llm_status llm__wpm_encode(const llm_tokenizer *t, const char *text, size_t n, tok_vec *out);
llm_status llm__ugm_encode(const llm_tokenizer *t, const char *text, size_t n, tok_vec *out);

/* Unigram set-up (after token types are final): the vocabulary trie and the
 * charsmap of spec; hf = 1 for tokenizer.json semantics. */
llm_status llm__ugm_setup(llm_tokenizer *t, const llm_vocab_spec *spec, const tok_hf_norm *hf);
void llm__ugm_free(tok_ugm *u);

/* Byte-level BPE mapping. */
uint32_t llm__byte_to_cp(unsigned char b);
int llm__cp_to_byte(uint32_t cp); /* -1 when cp is not a mapped byte */

#endif
