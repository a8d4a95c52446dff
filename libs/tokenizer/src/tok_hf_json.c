/* tok_hf_json.c -- Hugging Face tokenizer.json -> llm_tokenizer.
 *
 * The JSON pipeline is mapped onto our three engines rather than
 * interpreted step by step: BPE + ByteLevel pre-tokenizer becomes byte-level
 * BPE with the Split/Digits/ByteLevel patterns in order; BPE without
 * ByteLevel becomes character BPE with U+2581 handling and byte fallback;
 * WordPiece + Bert* becomes WordPiece; Unigram + Precompiled/Strip/Replace
 * + Metaspace becomes our Unigram engine with HF tokenizers' semantics
 * (tok_ugm.c). Any component we cannot map is an
 * LLM_ERR_UNSUPPORTED error naming it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"
#include "tok_json.h"

#define MAX_PATTERNS TOK_MAX_REGEX

/* The JSON reader's nodes (tok_json.h), read forgivingly: a
 * missing or mistyped value reads as absent, 0 or false. */
#define TJ_IS_STRING(v) llm__tj_is((v), LLM__TJ_STRING)
#define TJ_IS_TRUE(v) llm__tj_is((v), LLM__TJ_TRUE)
#define TJ_IS_INT(v) llm__tj_is((v), LLM__TJ_INT)
#define TJ_IS_ARRAY(v) llm__tj_is((v), LLM__TJ_ARRAY)
#define TJ_IS_OBJECT(v) llm__tj_is((v), LLM__TJ_OBJECT)
/* for (each element e of array arr, at index i) */
#define TJ_ARRAY_FOREACH(arr, i, e) \
    for ((i) = 0, (e) = TJ_IS_ARRAY(arr) ? llm__tj_first(arr) : NULL; (e); (e) = (e)->next, (i)++)
/* for (each member val of object obj, with its key) */
#define TJ_OBJECT_FOREACH(obj, key, val) \
    for ((val) = TJ_IS_OBJECT(obj) ? llm__tj_first(obj) : NULL; (val) && ((key) = (val)->key, 1); (val) = (val)->next)

static int64_t tj_int(const llm__tj *v) { return TJ_IS_INT(v) ? v->num.i : 0; }
static size_t tj_array_size(const llm__tj *v) { return TJ_IS_ARRAY(v) ? v->n : 0; }

typedef struct hf_ctx {
    llm_vocab_spec spec;
    tok_hf_norm hf;
    char *patterns[MAX_PATTERNS];
    int n_patterns;
    int byte_level;
    int bert_pre;
    int metaspace;
    const char *bos_text, *eos_text; /* from the post-processor */
    unsigned char *charsmap;          /* Unigram: decoded Precompiled charsmap */
    size_t charsmap_len;
} hf_ctx;

/* Standard base64 (with optional '=' padding) into a fresh buffer. */
static llm_status base64_decode(const char *s, unsigned char **out, size_t *out_len) {
    size_t n = strlen(s);
    unsigned char *b = malloc(n / 4 * 3 + 3);
    if (!b) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    uint32_t acc = 0;
    int bits = 0;
    size_t k = 0, i = 0;
    for (; i < n && s[i] != '='; i++) {
        char ch = s[i];
        int v = ch >= 'A' && ch <= 'Z' ? ch - 'A' : ch >= 'a' && ch <= 'z' ? ch - 'a' + 26
              : ch >= '0' && ch <= '9' ? ch - '0' + 52 : ch == '+' ? 62 : ch == '/' ? 63 : -1;
        if (v < 0) {
            free(b);
            return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: precompiled_charsmap is not base64");
        }
        acc = (acc << 6 | (uint32_t)v) & 0xFFFFFF;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            b[k++] = (unsigned char)(acc >> bits);
        }
    }
    for (; i < n; i++)
        if (s[i] != '=') {
            free(b);
            return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: precompiled_charsmap is not base64");
        }
    *out = b;
    *out_len = k;
    return LLM_OK;
}

static const char *jstr(const llm__tj *o, const char *key) {
    const llm__tj *v = llm__tj_get(o, key);
    return TJ_IS_STRING(v) ? llm__tj_str(v) : NULL;
}

static int jbool(const llm__tj *o, const char *key, int dflt) {
    const llm__tj *v = llm__tj_get(o, key);
    return llm__tj_is_bool(v) ? TJ_IS_TRUE(v) : dflt;
}

static llm_status add_pattern(hf_ctx *c, const char *p, int literal) {
    if (c->n_patterns >= MAX_PATTERNS)
        return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: more than %d pre-tokenizer splits", MAX_PATTERNS);
    size_t n = strlen(p);
    char *s = malloc(n + 5);
    if (!s) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    if (literal) /* \Q...\E quotes the literal (a "\E" inside is not expected) */
        snprintf(s, n + 5, "\\Q%s\\E", p);
    else
        memcpy(s, p, n + 1);
    c->patterns[c->n_patterns++] = s;
    return LLM_OK;
}

static llm_status pre_step(hf_ctx *c, const llm__tj *p) {
    const char *type = jstr(p, "type");
    if (!type) return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: pre_tokenizer without type");
    if (strcmp(type, "Sequence") == 0) {
        const llm__tj *arr = llm__tj_get(p, "pretokenizers");
        size_t i;
        const llm__tj *e;
        TJ_ARRAY_FOREACH(arr, i, e) {
            llm_status st = pre_step(c, e);
            if (st != LLM_OK) return st;
        }
        return LLM_OK;
    }
    if (strcmp(type, "ByteLevel") == 0) {
        c->byte_level = 1;
        c->hf.bytelevel_prefix_space = jbool(p, "add_prefix_space", 0);
        if (jbool(p, "use_regex", 1)) return add_pattern(c, TOK_RE_GPT2, 0);
        return LLM_OK;
    }
    if (strcmp(type, "Split") == 0) {
        const char *beh = jstr(p, "behavior");
        if (!beh || strcmp(beh, "Isolated") != 0 || jbool(p, "invert", 0))
            return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: Split with behavior \"%s\"%s is not supported",
                                beh ? beh : "?", jbool(p, "invert", 0) ? " and invert" : "");
        const llm__tj *pat = llm__tj_get(p, "pattern");
        const char *re = jstr(pat, "Regex");
        if (re) return add_pattern(c, re, 0);
        const char *lit = jstr(pat, "String");
        if (lit) return add_pattern(c, lit, 1);
        return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: Split without a pattern");
    }
    if (strcmp(type, "Digits") == 0)
        return add_pattern(c, jbool(p, "individual_digits", 0) ? "\\p{N}" : "\\p{N}+", 0);
    if (strcmp(type, "BertPreTokenizer") == 0) {
        c->bert_pre = 1;
        return LLM_OK;
    }
    if (strcmp(type, "Metaspace") == 0) {
        const char *rep = jstr(p, "replacement");
        if (rep && strcmp(rep, "\xE2\x96\x81") != 0)
            return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: Metaspace replacement other than U+2581");
        c->metaspace = 1;
        c->hf.replace_space = 1;
        c->hf.metaspace_split = jbool(p, "split", 1);
        const char *scheme = jstr(p, "prepend_scheme");
        if (scheme) {
            if (strcmp(scheme, "never") != 0) c->hf.prepend_space = 2;
            c->hf.prepend_first_only = strcmp(scheme, "first") == 0;
        } else if (jbool(p, "add_prefix_space", 1)) {
            c->hf.prepend_space = 2;
        }
        return LLM_OK;
    }
    return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: pre_tokenizer \"%s\" is not supported", type);
}

static llm_status norm_step(hf_ctx *c, const llm__tj *p, const char *model) {
    const char *type = jstr(p, "type");
    if (!type) return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: normalizer without type");
    int wpm = strcmp(model, "WordPiece") == 0, ugm = strcmp(model, "Unigram") == 0;
    if (strcmp(type, "Sequence") == 0) {
        const llm__tj *arr = llm__tj_get(p, "normalizers");
        size_t i;
        const llm__tj *e;
        TJ_ARRAY_FOREACH(arr, i, e) {
            llm_status st = norm_step(c, e, model);
            if (st != LLM_OK) return st;
        }
        return LLM_OK;
    }
    if (ugm && strcmp(type, "Precompiled") == 0) {
        const char *cm = jstr(p, "precompiled_charsmap");
        if (c->charsmap) return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: two Precompiled normalizers");
        if (!cm) return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: Precompiled without precompiled_charsmap");
        return base64_decode(cm, &c->charsmap, &c->charsmap_len);
    }
    if (ugm && strcmp(type, "Strip") == 0) {
        if (!c->charsmap || c->hf.ugm_collapse) /* we apply Precompiled, Strip, Replace in that order */
            return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: Strip before Precompiled or after Replace");
        c->hf.ugm_strip = (jbool(p, "strip_left", 0) ? 1 : 0) | (jbool(p, "strip_right", 0) ? 2 : 0);
        return LLM_OK;
    }
    if (ugm && strcmp(type, "Replace") == 0) {
        const char *re = jstr(llm__tj_get(p, "pattern"), "Regex");
        const char *to = jstr(p, "content");
        if (re && to && strcmp(re, " {2,}") == 0 && strcmp(to, "\xE2\x96\x81") == 0) {
            if (!c->charsmap) return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: Replace before Precompiled");
            c->hf.ugm_collapse = 1;
            return LLM_OK;
        }
    }
    if (strcmp(type, "Prepend") == 0 && !wpm && !ugm) {
        const char *pp = jstr(p, "prepend");
        if (pp && strcmp(pp, "\xE2\x96\x81") == 0) {
            c->hf.prepend_space = 1;
            return LLM_OK;
        }
    }
    if (strcmp(type, "Replace") == 0 && !wpm && !ugm) {
        const char *from = jstr(llm__tj_get(p, "pattern"), "String");
        const char *to = jstr(p, "content");
        if (from && to && strcmp(from, " ") == 0 && strcmp(to, "\xE2\x96\x81") == 0) {
            c->hf.replace_space = 1;
            return LLM_OK;
        }
    }
    if (strcmp(type, "NFC") == 0 && !wpm && !ugm) {
        c->hf.nfc = 1;
        return LLM_OK;
    }
    if (wpm && strcmp(type, "BertNormalizer") == 0) {
        const llm__tj *lc = llm__tj_get(p, "lowercase");
        c->spec.lowercase = llm__tj_is_bool(lc) ? TJ_IS_TRUE(lc) : 1;
        return LLM_OK;
    }
    if (wpm && (strcmp(type, "Lowercase") == 0 || strcmp(type, "NFD") == 0 || strcmp(type, "StripAccents") == 0)) {
        c->spec.lowercase = 1;
        return LLM_OK;
    }
    return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: normalizer \"%s\" is not supported with model %s", type,
                        model);
}

static llm_status post_step(hf_ctx *c, const llm__tj *p) {
    const char *type = jstr(p, "type");
    if (!type) return LLM_OK;
    if (strcmp(type, "Sequence") == 0) {
        const llm__tj *arr = llm__tj_get(p, "processors");
        size_t i;
        const llm__tj *e;
        TJ_ARRAY_FOREACH(arr, i, e) {
            llm_status st = post_step(c, e);
            if (st != LLM_OK) return st;
        }
        return LLM_OK;
    }
    if (strcmp(type, "ByteLevel") == 0) return LLM_OK;
    if (strcmp(type, "BertProcessing") == 0 || strcmp(type, "RobertaProcessing") == 0) {
        const llm__tj *cls = llm__tj_get(p, "cls"), *sep = llm__tj_get(p, "sep");
        c->bos_text = llm__tj_str(llm__tj_at(cls, 0));
        c->eos_text = llm__tj_str(llm__tj_at(sep, 0));
        return LLM_OK;
    }
    if (strcmp(type, "TemplateProcessing") == 0) {
        const llm__tj *single = llm__tj_get(p, "single");
        size_t i;
        const llm__tj *e;
        int seen_a = 0;
        TJ_ARRAY_FOREACH(single, i, e) {
            const llm__tj *sp = llm__tj_get(e, "SpecialToken");
            if (llm__tj_get(e, "Sequence")) {
                seen_a = 1;
                continue;
            }
            const char *id = jstr(sp, "id");
            if (!id) continue;
            if (!seen_a) {
                if (c->bos_text) return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: template adds two tokens before the text");
                c->bos_text = id;
            } else {
                if (c->eos_text) return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: template adds two tokens after the text");
                c->eos_text = id;
            }
        }
        return LLM_OK;
    }
    return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: post_processor \"%s\" is not supported", type);
}

static llm_token find_text(char **tokens, int32_t n, const char *s) {
    if (!s) return LLM_TOKEN_NULL;
    for (int32_t i = 0; i < n; i++)
        if (tokens[i] && strcmp(tokens[i], s) == 0) return i;
    return LLM_TOKEN_NULL;
}

static llm_status build(const llm__tj *root, llm_tokenizer **out) {
    hf_ctx c;
    memset(&c, 0, sizeof c);
    llm_vocab_spec_init(&c.spec);
    llm_status st = LLM_OK;
    char **tokens = NULL, **merges = NULL;
    const char **merges_right = NULL;
    int32_t *types = NULL;
    uint8_t *strip = NULL;
    float *scores = NULL;
    int32_t n = 0, n_merges = 0;

    const llm__tj *model = llm__tj_get(root, "model");
    const char *mtype = jstr(model, "type");
    const llm__tj *vocab = llm__tj_get(model, "vocab");
    if (!mtype && llm__tj_get(model, "merges")) mtype = "BPE"; /* old files omit the type */
    if (!mtype) return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: no model type");
    const int ugm = strcmp(mtype, "Unigram") == 0;
    if (strcmp(mtype, "BPE") != 0 && strcmp(mtype, "WordPiece") != 0 && !ugm)
        return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: model \"%s\" is not supported", mtype);
    if (ugm ? !TJ_IS_ARRAY(vocab) : !TJ_IS_OBJECT(vocab))
        return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: model.vocab is not an %s", ugm ? "array" : "object");
    if (ugm) {
        if (jbool(model, "byte_fallback", 0))
            return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: Unigram with byte_fallback is not supported");
    } else if (strcmp(mtype, "BPE") == 0) {
        const char *pfx = jstr(model, "continuing_subword_prefix"), *sfx = jstr(model, "end_of_word_suffix");
        if ((pfx && *pfx) || (sfx && *sfx))
            return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: BPE with subword prefix/suffix is not supported");
    } else {
        const char *pfx = jstr(model, "continuing_subword_prefix");
        if (pfx && strcmp(pfx, "##") != 0)
            return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: WordPiece prefix \"%s\" is not supported", pfx);
        const llm__tj *mx = llm__tj_get(model, "max_input_chars_per_word");
        if (TJ_IS_INT(mx) && tj_int(mx) != 100)
            return llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: max_input_chars_per_word other than 100");
    }

    /* Vocabulary size: the largest id of vocab and added_tokens, plus one. */
    const llm__tj *added = llm__tj_get(root, "added_tokens");
    const char *key;
    const llm__tj *val;
    int64_t max_id = -1;
    size_t i;
    const llm__tj *e;
    if (ugm) { /* [[piece, score], ...]: the index is the id */
        TJ_ARRAY_FOREACH(vocab, i, e) {
            if (!TJ_IS_ARRAY(e) || tj_array_size(e) != 2 || !TJ_IS_STRING(llm__tj_at(e, 0)) ||
                !llm__tj_is_number(llm__tj_at(e, 1)))
                return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: model.vocab[%zu] is not [piece, score]", i);
        }
        max_id = (int64_t)tj_array_size(vocab) - 1;
        if (max_id >= (int64_t)1 << 24)
            return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: more than 16M Unigram pieces");
        c.hf.ugm_n_pieces = (int32_t)tj_array_size(vocab);
    }
    TJ_OBJECT_FOREACH(vocab, key, val) {
        if (!TJ_IS_INT(val) || tj_int(val) < 0)
            return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: vocab id of \"%.40s\" is not a non-negative integer", key);
        if (tj_int(val) > max_id) max_id = tj_int(val);
    }
    TJ_ARRAY_FOREACH(added, i, e) {
        const llm__tj *id = llm__tj_get(e, "id");
        if (!TJ_IS_INT(id) || tj_int(id) < 0 || !jstr(e, "content"))
            return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: added_tokens[%zu] lacks id or content", i);
        if (tj_int(id) > max_id) max_id = tj_int(id);
    }
    /* Ids index arrays: a stray huge id must not turn into a huge allocation. */
    if (max_id < 0) return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: empty vocab");
    if (max_id >= (int64_t)1 << 24)
        return llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: token id %lld is past the 16M limit", (long long)max_id);
    n = (int32_t)(max_id + 1);
    tokens = calloc((size_t)n, sizeof *tokens);
    types = malloc((size_t)n * sizeof *types);
    if (!tokens || !types) goto oom;
    strip = calloc((size_t)n, 1);
    if (!strip) goto oom;
    for (int32_t k = 0; k < n; k++) types[k] = LLM_TOKEN_TYPE_NORMAL;
    TJ_OBJECT_FOREACH(vocab, key, val) tokens[tj_int(val)] = (char *)key;
    if (ugm) {
        if (!(scores = calloc((size_t)n, sizeof *scores))) goto oom;
        TJ_ARRAY_FOREACH(vocab, i, e) {
            tokens[i] = (char *)llm__tj_str(llm__tj_at(e, 0));
            scores[i] = (float)llm__tj_num(llm__tj_at(e, 1));
        }
    }
    TJ_ARRAY_FOREACH(added, i, e) {
        int64_t id = tj_int(llm__tj_get(e, "id"));
        tokens[id] = (char *)jstr(e, "content");
        types[id] = jbool(e, "special", 0) ? LLM_TOKEN_TYPE_CONTROL : LLM_TOKEN_TYPE_USER_DEFINED;
        strip[id] = (uint8_t)((jbool(e, "lstrip", 0) ? TOK_LSTRIP : 0) | (jbool(e, "rstrip", 0) ? TOK_RSTRIP : 0));
    }
    for (int32_t k = 0; k < n; k++)
        if (!tokens[k]) {
            tokens[k] = (char *)"";
            types[k] = LLM_TOKEN_TYPE_UNUSED;
        }

    /* Merges: "a b" strings or ["a", "b"] pairs (which allow spaces inside
     * pieces). Left pieces are copied (NUL-terminated); right pieces point
     * into the JSON document, alive for this call. */
    const llm__tj *jm = llm__tj_get(model, "merges");
    if (TJ_IS_ARRAY(jm)) {
        n_merges = (int32_t)tj_array_size(jm);
        merges = calloc((size_t)(n_merges ? n_merges : 1), sizeof *merges);
        merges_right = calloc((size_t)(n_merges ? n_merges : 1), sizeof *merges_right);
        if (!merges || !merges_right) goto oom;
        TJ_ARRAY_FOREACH(jm, i, e) {
            const char *left = NULL, *right = NULL;
            size_t ll = 0;
            if (TJ_IS_STRING(e)) {
                left = llm__tj_str(e);
                const char *sp = strchr(left + (left[0] ? 1 : 0), ' ');
                if (sp) {
                    ll = (size_t)(sp - left);
                    right = sp + 1;
                }
            } else if (TJ_IS_ARRAY(e) && tj_array_size(e) == 2 && TJ_IS_STRING(llm__tj_at(e, 0)) &&
                       TJ_IS_STRING(llm__tj_at(e, 1))) {
                left = llm__tj_str(llm__tj_at(e, 0));
                ll = strlen(left);
                right = llm__tj_str(llm__tj_at(e, 1));
            }
            if (!right) {
                st = llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: merges[%zu] is neither \"a b\" nor [a, b]", i);
                goto done;
            }
            if (!(merges[i] = malloc(ll + 1))) goto oom;
            memcpy(merges[i], left, ll);
            merges[i][ll] = '\0';
            merges_right[i] = right;
        }
    }

    const llm__tj *norm = llm__tj_get(root, "normalizer");
    const llm__tj *pre = llm__tj_get(root, "pre_tokenizer");
    const llm__tj *post = llm__tj_get(root, "post_processor");
    if (TJ_IS_OBJECT(pre) && (st = pre_step(&c, pre)) != LLM_OK) goto done;
    if (TJ_IS_OBJECT(norm) && (st = norm_step(&c, norm, mtype)) != LLM_OK) goto done;
    if (TJ_IS_OBJECT(post) && (st = post_step(&c, post)) != LLM_OK) goto done;

    if (ugm) {
        if (!c.metaspace || c.byte_level || c.bert_pre || c.n_patterns || c.hf.prepend_first_only) {
            st = llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: Unigram needs the Metaspace pre-tokenizer alone "
                                                   "(prepend_scheme \"always\" or \"never\")");
            goto done;
        }
        c.spec.type = LLM_TOKENIZER_UGM;
        c.spec.scores = scores;
        c.spec.precompiled_charsmap = c.charsmap;
        c.spec.precompiled_charsmap_len = c.charsmap_len;
        c.spec.remove_extra_whitespaces = 0;
    } else if (strcmp(mtype, "WordPiece") == 0) {
        if (c.byte_level || c.metaspace || c.n_patterns)
            {
            st = llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: WordPiece needs BertPreTokenizer");
            goto done;
        }
        c.spec.type = LLM_TOKENIZER_WPM;
        c.spec.cls = find_text(tokens, n, c.bos_text);
        c.spec.sep = find_text(tokens, n, c.eos_text);
        c.spec.add_bos = c.spec.cls >= 0;
        c.spec.add_eos = c.spec.sep >= 0;
        c.spec.bos = c.spec.cls;
        c.spec.eos = c.spec.sep;
        c.spec.pad = find_text(tokens, n, "[PAD]");
        c.spec.mask = find_text(tokens, n, "[MASK]");
    } else if (c.byte_level) {
        if (c.metaspace || c.bert_pre || c.hf.replace_space || c.hf.prepend_space)
            {
            st = llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: ByteLevel mixed with Metaspace/Bert steps");
            goto done;
        }
        c.spec.type = LLM_TOKENIZER_BPE;
    } else {
        if (c.bert_pre || c.n_patterns)
            {
            st = llm__tok_err(LLM_ERR_UNSUPPORTED, "tokenizer.json: character BPE with Split/Digits/Bert pre-tokenizers");
            goto done;
        }
        c.spec.type = LLM_TOKENIZER_HF_BPE;
        c.spec.byte_fallback = jbool(model, "byte_fallback", 0);
    }
    if (c.spec.type != LLM_TOKENIZER_WPM) {
        c.spec.bos = find_text(tokens, n, c.bos_text);
        c.spec.eos = find_text(tokens, n, c.eos_text);
        c.spec.add_bos = c.spec.bos >= 0;
        c.spec.add_eos = c.spec.eos >= 0;
        c.spec.add_space_prefix = ugm ? c.hf.prepend_space != 0 : 0; /* the decoder drops it again */
        c.spec.ignore_merges = jbool(model, "ignore_merges", 0);
        /* Without a post-processor EOS, guess the usual end-of-text tokens. */
        static const char *const k_eos[] = {"</s>", "<|endoftext|>", "<eos>", "<|end_of_text|>", NULL};
        for (int k = 0; c.spec.eos < 0 && k_eos[k]; k++) c.spec.eos = find_text(tokens, n, k_eos[k]);
        static const char *const k_eot[] = {"<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|end|>", NULL};
        for (int k = 0; c.spec.eot < 0 && k_eot[k]; k++) c.spec.eot = find_text(tokens, n, k_eot[k]);
    }
    c.spec.unk = find_text(tokens, n, jstr(model, "unk_token"));
    if (ugm) {
        const llm__tj *uid = llm__tj_get(model, "unk_id");
        c.spec.unk = LLM_TOKEN_NULL;
        if (TJ_IS_INT(uid)) {
            if (tj_int(uid) < 0 || tj_int(uid) >= n) {
                st = llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: unk_id %lld is out of range",
                                  (long long)tj_int(uid));
                goto done;
            }
            c.spec.unk = (llm_token)tj_int(uid);
        }
    }
    c.spec.pre = "tokenizer.json";
    c.spec.n_tokens = n;
    c.spec.tokens = (const char *const *)tokens;
    c.spec.token_types = types;
    c.spec.n_merges = n_merges;
    c.spec.merges = (const char *const *)merges;
    c.spec.merges_right = merges_right;
    st = llm__tok_create(&c.spec, (const char *const *)c.patterns, c.n_patterns, &c.hf, strip, out);
    goto done;
oom:
    st = llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
done:
    for (int k = 0; k < c.n_patterns; k++) free(c.patterns[k]);
    for (int32_t k = 0; merges && k < n_merges; k++) free(merges[k]);
    free(merges);
    free(merges_right);
    free(tokens);
    free(types);
    free(strip);
    free(scores);
    free(c.charsmap);
    return st;
}

llm_status llm_tokenizer_from_hf_json(const char *json, size_t len, llm_tokenizer **out) {
    if (!out) return llm__tok_err(LLM_ERR_INVALID_ARG, "out is NULL");
    *out = NULL;
    if (!json) return llm__tok_err(LLM_ERR_INVALID_ARG, "json is NULL");
    llm__tj_doc *doc = NULL;
    const llm__tj *root = NULL;
    llm_status st = llm__tj_parse(json, len, "tokenizer.json", &doc, &root);
    if (st != LLM_OK) return st;
    st = TJ_IS_OBJECT(root) ? build(root, out)
                            : llm__tok_err(LLM_ERR_BAD_FORMAT, "tokenizer.json: top level is not an object");
    llm__tj_free(doc);
    return st;
}

llm_status llm_tokenizer_from_hf_json_file(const char *path, llm_tokenizer **out) {
    if (!out) return llm__tok_err(LLM_ERR_INVALID_ARG, "out is NULL");
    *out = NULL;
    if (!path) return llm__tok_err(LLM_ERR_INVALID_ARG, "path is NULL");
    FILE *f = fopen(path, "rb");
    if (!f) return llm__tok_err(LLM_ERR_IO, "cannot open %s", path);
    tok_buf b = {0};
    char chunk[65536];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (llm__buf_append(&b, chunk, r)) {
            fclose(f);
            free(b.p);
            return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(b.p);
        return llm__tok_err(LLM_ERR_IO, "cannot read %s", path);
    }
    llm_status st = llm_tokenizer_from_hf_json(b.p ? b.p : "", b.n, out);
    free(b.p);
    return st;
}
