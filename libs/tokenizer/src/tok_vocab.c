/* tok_vocab.c -- building a tokenizer from a vocabulary spec: token storage,
 * the text -> id and pair -> merge hash tables (XXH3), decoded bytes of every
 * token, the special-token list, and the simple queries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tok_internal.h"

void llm_vocab_spec_init(llm_vocab_spec *s) {
    if (!s) return;
    memset(s, 0, sizeof *s);
    s->bos = s->eos = s->eot = s->eom = s->unk = LLM_TOKEN_NULL;
    s->pad = s->sep = s->cls = s->mask = LLM_TOKEN_NULL;
    s->add_bos = s->add_eos = s->add_space_prefix = s->ignore_merges = -1;
    s->lowercase = -1;
    s->remove_extra_whitespaces = -1;
}

/* Power of two with a load of at most 2/3 (linear probing stays short);
 * Llama 3's 280k merges take 512k entries (8 MiB), not 1M. */
static uint32_t table_size(size_t n) {
    uint32_t cap = 16;
    while (cap < n + n / 2) cap *= 2;
    return cap;
}

static uint64_t hash_bytes(const char *s, size_t n) { return XXH3_64bits(s, n); }

llm_token llm__tok_lookup(const llm_tokenizer *t, const char *s, size_t n) {
    uint32_t i = (uint32_t)hash_bytes(s, n) & t->ht_mask;
    for (;;) {
        int32_t id = t->ht[i];
        if (id < 0) return LLM_TOKEN_NULL;
        if (t->len[id] == n && memcmp(t->blob + t->off[id], s, n) == 0) return id;
        i = (i + 1) & t->ht_mask;
    }
}

llm_token llm__tok_lookup_raw(const llm_tokenizer *t, const char *s, size_t n) {
    if (!t->raw_ht) return LLM_TOKEN_NULL;
    uint32_t i = (uint32_t)hash_bytes(s, n) & t->raw_ht_mask;
    for (;;) {
        int32_t id = t->raw_ht[i];
        if (id < 0) return LLM_TOKEN_NULL;
        if (t->dlen[id] == n && memcmp(t->dblob + t->doff[id], s, n) == 0) return id;
        i = (i + 1) & t->raw_ht_mask;
    }
}

static uint32_t hash_pair(uint64_t key) { return (uint32_t)XXH3_64bits(&key, sizeof key); }

int32_t llm__tok_merge(const llm_tokenizer *t, llm_token a, llm_token b, llm_token *res) {
    if (!t->mt || a < 0 || b < 0) return -1;
    uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
    uint32_t i = hash_pair(key) & t->mt_mask;
    for (;;) {
        const tok_merge *m = &t->mt[i];
        if (m->key == key) {
            *res = m->res;
            return m->rank;
        }
        if (m->key == UINT64_MAX) return -1;
        i = (i + 1) & t->mt_mask;
    }
}

/* Insert id under its text; duplicates keep the first id (as HF does). */
static void ht_insert(int32_t *ht, uint32_t mask, const char *s, size_t n, int32_t id,
                      const char *blob, const uint32_t *off, const uint32_t *len) {
    uint32_t i = (uint32_t)hash_bytes(s, n) & mask;
    while (ht[i] >= 0) {
        int32_t o = ht[i];
        if (len[o] == n && memcmp(blob + off[o], s, n) == 0) return;
        i = (i + 1) & mask;
    }
    ht[i] = id;
}

static int is_pre(const char *pre, const char *const *names) {
    for (; *names; names++)
        if (strcmp(pre, *names) == 0) return 1;
    return 0;
}

/* Decoded bytes of one token, appended to b. */
static int decode_token(const llm_tokenizer *t, int32_t id, const char *s, size_t n, tok_buf *b) {
    int ty = t->types[id];
    if (ty == LLM_TOKEN_TYPE_CONTROL || ty == LLM_TOKEN_TYPE_USER_DEFINED ||
        ty == LLM_TOKEN_TYPE_UNKNOWN)
        return llm__buf_append(b, s, n);
    if (ty == LLM_TOKEN_TYPE_BYTE && n == 6 && memcmp(s, "<0x", 3) == 0) {
        unsigned char byte = (unsigned char)strtoul(s + 3, NULL, 16);
        return llm__buf_append(b, &byte, 1);
    }
    switch (t->type) {
    case LLM_TOKENIZER_BPE: {
        /* Undo the byte map; a char outside it is kept as it is. */
        size_t i = 0;
        while (i < n) {
            size_t adv;
            uint32_t cp = llm__utf8_decode(s + i, n - i, &adv);
            int byte = llm__cp_to_byte(cp);
            if (byte >= 0) {
                unsigned char c = (unsigned char)byte;
                if (llm__buf_append(b, &c, 1)) return -1;
            } else if (llm__buf_append(b, s + i, adv)) {
                return -1;
            }
            i += adv;
        }
        return 0;
    }
    case LLM_TOKENIZER_SPM:
    case LLM_TOKENIZER_HF_BPE:
    case LLM_TOKENIZER_UGM: {
        size_t i = 0;
        while (i < n) {
            if (i + 3 <= n && memcmp(s + i, "\xE2\x96\x81", 3) == 0) {
                if (llm__buf_append(b, " ", 1)) return -1;
                i += 3;
            } else {
                if (llm__buf_append(b, s + i, 1)) return -1;
                i++;
            }
        }
        return 0;
    }
    case LLM_TOKENIZER_WPM:
        if (n >= 2 && s[0] == '#' && s[1] == '#') return llm__buf_append(b, s + 2, n - 2);
        if (llm__buf_append(b, " ", 1)) return -1;
        return llm__buf_append(b, s, n);
    default: return llm__buf_append(b, s, n);
    }
}

typedef struct spec_item {
    uint32_t len;
    llm_token id;
} spec_item;

static int cmp_spec_item(const void *a, const void *b) {
    const spec_item *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return x->id < y->id ? -1 : (x->id > y->id);
}

static llm_status build_specials(llm_tokenizer *t) {
    spec_item *items = malloc((size_t)t->n * sizeof *items);
    if (!items) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    int32_t k = 0;
    for (int32_t i = 0; i < t->n; i++) {
        int ty = t->types[i];
        if ((ty == LLM_TOKEN_TYPE_CONTROL || ty == LLM_TOKEN_TYPE_USER_DEFINED ||
             ty == LLM_TOKEN_TYPE_UNKNOWN) && t->len[i] > 0) {
            items[k].len = t->len[i];
            items[k].id = i;
            k++;
        }
    }
    qsort(items, (size_t)k, sizeof *items, cmp_spec_item);
    t->specials = malloc((size_t)(k ? k : 1) * sizeof *t->specials);
    if (!t->specials) {
        free(items);
        return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    }
    for (int32_t i = 0; i < k; i++) t->specials[i] = items[i].id;
    t->n_specials = k;
    /* Distinct lengths, so that matching looks up each length once in the
     * hash table instead of comparing every special token (Gemma has
     * thousands). */
    t->special_lens = malloc((size_t)(k ? k : 1) * sizeof *t->special_lens);
    if (!t->special_lens) {
        free(items);
        return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    }
    for (int32_t i = 0; i < k; i++) {
        llm_token id = items[i].id;
        if (t->n_special_lens == 0 || t->special_lens[t->n_special_lens - 1] != items[i].len)
            t->special_lens[t->n_special_lens++] = items[i].len;
        if (llm__tok_lookup(t, t->blob + t->off[id], t->len[id]) != id) t->specials_shadowed = 1;
        unsigned char c = (unsigned char)t->blob[t->off[id]];
        t->special_first[1][c] = 1;
        if (t->types[id] == LLM_TOKEN_TYPE_USER_DEFINED) t->special_first[0][c] = 1;
    }
    free(items);
    return LLM_OK;
}

/* Convert a llama.cpp "phantom space" WordPiece piece to HF form:
 * "\u2581word" -> "word", "piece" -> "##piece"; control tokens unchanged. */
static char *wpm_unphantom(const char *s, int type) {
    size_t n = strlen(s);
    char *r = malloc(n + 3);
    if (!r) return NULL;
    if (type != LLM_TOKEN_TYPE_NORMAL || n == 0) {
        memcpy(r, s, n + 1);
    } else if (n >= 3 && memcmp(s, "\xE2\x96\x81", 3) == 0) {
        memcpy(r, s + 3, n - 2);
    } else {
        r[0] = '#', r[1] = '#';
        memcpy(r + 2, s, n + 1);
    }
    return r;
}

static llm_status build_merges(llm_tokenizer *t, const llm_vocab_spec *spec) {
    t->mt_mask = table_size((size_t)spec->n_merges) - 1;
    t->mt = malloc(((size_t)t->mt_mask + 1) * sizeof *t->mt);
    if (!t->mt) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i <= t->mt_mask; i++) t->mt[i].key = UINT64_MAX;
    tok_buf cat = {0};
    for (int32_t r = 0; r < spec->n_merges; r++) {
        const char *m = spec->merges[r];
        if (!m) {
            free(cat.p);
            return llm__tok_err(LLM_ERR_INVALID_ARG, "merge %d is NULL", (int)r);
        }
        const char *right;
        size_t ln;
        if (spec->merges_right) {
            right = spec->merges_right[r];
            if (!right) {
                free(cat.p);
                return llm__tok_err(LLM_ERR_INVALID_ARG, "merge %d: right piece is NULL", (int)r);
            }
            ln = strlen(m);
        } else {
            /* Split at the first space after the first character (as HF reads "a b"). */
            const char *sp = strchr(m + (m[0] ? 1 : 0), ' ');
            if (!sp) {
                free(cat.p);
                return llm__tok_err(LLM_ERR_BAD_FORMAT, "merge %d (\"%.40s\") is not \"left right\"", (int)r, m);
            }
            ln = (size_t)(sp - m);
            right = sp + 1;
        }
        size_t rn = strlen(right);
        llm_token a = llm__tok_lookup(t, m, ln), b = llm__tok_lookup(t, right, rn);
        cat.n = 0;
        if (llm__buf_append(&cat, m, ln) || llm__buf_append(&cat, right, rn)) {
            free(cat.p);
            return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
        }
        llm_token res = llm__tok_lookup(t, cat.p, cat.n);
        if (a < 0 || b < 0 || res < 0) continue; /* can never apply */
        uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
        uint32_t i = hash_pair(key) & t->mt_mask;
        while (t->mt[i].key != UINT64_MAX && t->mt[i].key != key) i = (i + 1) & t->mt_mask;
        if (t->mt[i].key == key) continue; /* the first (best) rank wins */
        t->mt[i].key = key;
        t->mt[i].rank = r;
        t->mt[i].res = res;
    }
    free(cat.p);
    t->n_merges = spec->n_merges;
    return LLM_OK;
}

static const char *const k_llama3_pres[] = {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1",
                                            "pixtral", "midm-2.0", "lfm2", "tekken", NULL};
static const char *const k_ignore_merge_pres[] = {"llama3", "llama-v3", "llama-bpe", "falcon3",
                                                  "falcon-h1", "pixtral", "midm-2.0", "lfm2", "tekken",
                                                  "glm4", "minicpm5", "youtu", NULL};

/* End-of-generation markers that llama.cpp always treats as control tokens,
 * whatever type a GGUF gives them (llama_vocab::load: "control-looking
 * token ... its type will be overridden"). A GGUF cannot say whether the HF
 * tokenizer marked an added token special, so, for GGUF vocabularies, we take
 * llama.cpp's rule: e.g. phi-3 stores "</s>" as USER_DEFINED, and llama.cpp,
 * hence we, do not match its text as the token unless special parsing is on.
 * (HF itself would match it: Phi-3's tokenizer.json has it as a non-special
 * added token; this is one place where we follow llama.cpp, not HF.) */
static const char *const k_eog_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", "[e~[", NULL};

llm_status llm_tokenizer_create(const llm_vocab_spec *spec, llm_tokenizer **out) {
    return llm__tok_create(spec, NULL, 0, NULL, spec ? spec->strip : NULL, out);
}

llm_status llm__tok_create(const llm_vocab_spec *spec, const char *const *patterns, int n_patterns,
                           const tok_hf_norm *hf, const uint8_t *strip, llm_tokenizer **out) {
    if (!out) return llm__tok_err(LLM_ERR_INVALID_ARG, "out is NULL");
    *out = NULL;
    if (!spec || spec->n_tokens <= 0 || !spec->tokens)
        return llm__tok_err(LLM_ERR_INVALID_ARG, "vocabulary spec has no tokens");
    if (spec->type < LLM_TOKENIZER_BPE || spec->type > LLM_TOKENIZER_UGM)
        return llm__tok_err(LLM_ERR_UNSUPPORTED, "unsupported tokenizer type %d", (int)spec->type);
    if (spec->n_merges < 0 || (spec->n_merges > 0 && !spec->merges))
        return llm__tok_err(LLM_ERR_INVALID_ARG, "bad merges array");
    const llm_token sp_ids[9] = {spec->bos, spec->eos, spec->eot, spec->eom, spec->unk,
                                 spec->pad, spec->sep, spec->cls, spec->mask};
    for (int i = 0; i < 9; i++)
        if (sp_ids[i] < -1 || sp_ids[i] >= spec->n_tokens)
            return llm__tok_err(LLM_ERR_INVALID_ARG, "special token id %d out of range", (int)sp_ids[i]);

    llm_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
    llm_status st = LLM_ERR_NO_MEMORY;
    int32_t n = spec->n_tokens;
    t->type = spec->type;
    t->n = n;
    t->llamacpp_partition = hf == NULL;
    t->off = malloc((size_t)n * sizeof *t->off);
    t->len = malloc((size_t)n * sizeof *t->len);
    t->doff = malloc((size_t)n * sizeof *t->doff);
    t->dlen = malloc((size_t)n * sizeof *t->dlen);
    t->scores = malloc((size_t)n * sizeof *t->scores);
    t->types = malloc((size_t)n * sizeof *t->types);
    if (!t->off || !t->len || !t->doff || !t->dlen || !t->scores || !t->types) goto fail;

    /* Token texts (converted from phantom-space WordPiece when asked). */
    tok_buf blob = {0};
    for (int32_t i = 0; i < n; i++) {
        int ty = spec->token_types ? spec->token_types[i] : LLM_TOKEN_TYPE_NORMAL;
        if (ty < 0 || ty > LLM_TOKEN_TYPE_BYTE) ty = LLM_TOKEN_TYPE_NORMAL;
        t->types[i] = ty;
        t->scores[i] = spec->scores ? spec->scores[i] : 0.0f;
        const char *s = spec->tokens[i] ? spec->tokens[i] : "";
        char *conv = NULL;
        if (spec->type == LLM_TOKENIZER_WPM && spec->wpm_phantom_space) {
            conv = wpm_unphantom(s, ty);
            if (!conv) {
                free(blob.p);
                goto fail;
            }
            s = conv;
        }
        size_t l = strlen(s);
        t->off[i] = (uint32_t)blob.n;
        t->len[i] = (uint32_t)l;
        int e = llm__buf_append(&blob, s, l + 1);
        free(conv);
        if (e) {
            free(blob.p);
            goto fail;
        }
    }
    t->blob = blob.p;

    t->ht_mask = table_size((size_t)n) - 1;
    t->ht = malloc(((size_t)t->ht_mask + 1) * sizeof *t->ht);
    if (!t->ht) goto fail;
    memset(t->ht, 0xFF, ((size_t)t->ht_mask + 1) * sizeof *t->ht);
    for (int32_t i = 0; i < n; i++)
        ht_insert(t->ht, t->ht_mask, t->blob + t->off[i], t->len[i], i, t->blob, t->off, t->len);

    /* Flags and their per-family defaults. */
    const char *pre = spec->pre && spec->pre[0] ? spec->pre : "default";
    snprintf(t->pre, sizeof t->pre, "%s", pre);
    int llama3 = is_pre(pre, k_llama3_pres);
    switch (spec->type) {
    case LLM_TOKENIZER_SPM:
        t->add_bos = spec->add_bos >= 0 ? spec->add_bos : 1;
        t->add_eos = spec->add_eos >= 0 ? spec->add_eos : 0;
        t->add_space_prefix = spec->add_space_prefix >= 0 ? spec->add_space_prefix : 1;
        break;
    case LLM_TOKENIZER_WPM:
        t->add_bos = spec->add_bos >= 0 ? spec->add_bos : 1;
        t->add_eos = spec->add_eos >= 0 ? spec->add_eos : 1;
        t->add_space_prefix = 0;
        break;
    case LLM_TOKENIZER_UGM: /* llama.cpp's defaults for "t5" */
        t->add_bos = spec->add_bos >= 0 ? spec->add_bos : 0;
        t->add_eos = spec->add_eos >= 0 ? spec->add_eos : 1;
        t->add_space_prefix = spec->add_space_prefix >= 0 ? spec->add_space_prefix : 1;
        break;
    default:
        t->add_bos = spec->add_bos >= 0 ? spec->add_bos : llama3;
        t->add_eos = spec->add_eos >= 0 ? spec->add_eos : 0;
        t->add_space_prefix = spec->add_space_prefix >= 0 ? spec->add_space_prefix : 0;
        break;
    }
    t->ignore_merges = spec->ignore_merges >= 0 ? spec->ignore_merges : is_pre(pre, k_ignore_merge_pres);
    t->byte_fallback = spec->byte_fallback;
    t->lowercase = spec->lowercase >= 0 ? spec->lowercase : 1;
    t->bos = spec->bos, t->eos = spec->eos, t->eot = spec->eot, t->eom = spec->eom;
    t->unk = spec->unk, t->pad = spec->pad, t->sep = spec->sep, t->cls = spec->cls;
    t->mask = spec->mask;

    /* SPM / HF_BPE: "<0xXX>" pieces are byte tokens whatever their stored type. */
    if (spec->type == LLM_TOKENIZER_SPM || spec->type == LLM_TOKENIZER_HF_BPE) {
        char name[8];
        for (int b = 0; b < 256; b++) {
            snprintf(name, sizeof name, "<0x%02X>", b);
            llm_token id = llm__tok_lookup(t, name, 6);
            t->byte_tok[b] = id;
            if (id >= 0 && t->types[id] == LLM_TOKEN_TYPE_NORMAL) t->types[id] = LLM_TOKEN_TYPE_BYTE;
        }
    } else if (spec->type == LLM_TOKENIZER_BPE) {
        for (int b = 0; b < 256; b++) {
            char u[4];
            size_t l = llm__utf8_encode(llm__byte_to_cp((unsigned char)b), u);
            t->byte_tok[b] = llm__tok_lookup(t, u, l);
        }
    } else {
        for (int b = 0; b < 256; b++) t->byte_tok[b] = LLM_TOKEN_NULL;
    }

    /* Decoded bytes. */
    tok_buf dec = {0};
    for (int32_t i = 0; i < n; i++) {
        t->doff[i] = (uint32_t)dec.n;
        if (decode_token(t, i, t->blob + t->off[i], t->len[i], &dec) || llm__buf_append(&dec, "", 1)) {
            free(dec.p);
            goto fail;
        }
        t->dlen[i] = (uint32_t)(dec.n - t->doff[i] - 1);
    }
    t->dblob = dec.p;

    if (spec->type == LLM_TOKENIZER_BPE && t->ignore_merges) {
        t->raw_ht_mask = table_size((size_t)n) - 1;
        t->raw_ht = malloc(((size_t)t->raw_ht_mask + 1) * sizeof *t->raw_ht);
        if (!t->raw_ht) goto fail;
        memset(t->raw_ht, 0xFF, ((size_t)t->raw_ht_mask + 1) * sizeof *t->raw_ht);
        for (int32_t i = 0; i < n; i++)
            if (t->types[i] == LLM_TOKEN_TYPE_NORMAL)
                ht_insert(t->raw_ht, t->raw_ht_mask, t->dblob + t->doff[i], t->dlen[i], i, t->dblob,
                          t->doff, t->dlen);
    }

    /* GGUF vocabularies: llama.cpp's end-of-generation markers are control. */
    if (!hf) {
        for (int k = 0; k_eog_texts[k]; k++) {
            llm_token id = llm__tok_lookup(t, k_eog_texts[k], strlen(k_eog_texts[k]));
            if (id >= 0 && t->types[id] == LLM_TOKEN_TYPE_USER_DEFINED) t->types[id] = LLM_TOKEN_TYPE_CONTROL;
        }
        /* ...except "</s>" next to Gemma 4's "<|tool_response>" (or PLaMo's
         * "<|plamo:eos|>"): there it is an ordinary token (llama.cpp too). */
        llm_token s_end = llm__tok_lookup(t, "</s>", 4);
        if (s_end >= 0 && (llm__tok_lookup(t, "<|tool_response>", 16) >= 0 || llm__tok_lookup(t, "<|plamo:eos|>", 13) >= 0))
            t->types[s_end] = LLM_TOKEN_TYPE_NORMAL;
    }

    if (spec->n_merges > 0 && (st = build_merges(t, spec)) != LLM_OK) goto fail_st;
    if ((st = build_specials(t)) != LLM_OK) goto fail_st;
    if (spec->type == LLM_TOKENIZER_UGM && (st = llm__ugm_setup(t, spec, hf)) != LLM_OK) goto fail_st;
    if (hf) t->hf = *hf;
    /* A gemma4 GGUF (tokenizer.ggml.model "gemma4", pre "gemma4"): BPE on raw
     * UTF-8 with spaces escaped as U+2581, words split at newline runs,
     * <0xXX> byte fallback, and always a BOS (llama.cpp forces add_bos). */
    if (!hf && spec->type == LLM_TOKENIZER_HF_BPE && strcmp(pre, "gemma4") == 0) {
        t->hf.replace_space = 1;
        t->hf.newline_split = 1;
        t->byte_fallback = 1;
        t->add_bos = 1;
    }
    if (strip) {
        if (!(t->strip = malloc((size_t)n))) goto fail;
        memcpy(t->strip, strip, (size_t)n);
    }
    /* Normalization: a GGUF does not record the HF normalizer, so a GGUF
     * vocabulary gets exactly the normalization its tokenizer model defines in
     * llama.cpp (BERT's for WPM, none for BPE and SPM besides the space
     * escaping), for every pre-tokenizer alike; e.g. Qwen2's tokenizer.json
     * composes to NFC, a Qwen2 GGUF does not (as in llama.cpp). A
     * tokenizer.json vocabulary gets the normalizer it declares (hf above). */
    t->bpe_unk = (hf || spec->type == LLM_TOKENIZER_HF_BPE) ? spec->unk : LLM_TOKEN_NULL;
    if (patterns) {
        for (int i = 0; i < n_patterns; i++)
            if ((st = llm__pretok_compile(t, patterns[i], strlen(patterns[i]))) != LLM_OK) goto fail_st;
    } else if (spec->type == LLM_TOKENIZER_BPE && (st = llm__pretok_setup(t, pre)) != LLM_OK) {
        goto fail_st;
    }

    *out = t;
    return LLM_OK;
fail:
    st = llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
fail_st:
    llm_tokenizer_free(t);
    return st;
}

void llm_tokenizer_free(llm_tokenizer *t) {
    if (!t) return;
    for (int i = 0; i < t->n_re; i++) pcre2_code_free(t->re[i]);
    free(t->blob);
    free(t->off);
    free(t->len);
    free(t->scores);
    free(t->types);
    free(t->strip);
    free(t->dblob);
    free(t->doff);
    free(t->dlen);
    free(t->ht);
    free(t->raw_ht);
    free(t->mt);
    free(t->specials);
    free(t->special_lens);
    llm__ugm_free(t->ugm);
    free(t);
}

llm_tokenizer_type llm_tokenizer_get_type(const llm_tokenizer *t) { return t ? t->type : LLM_TOKENIZER_NONE; }
int32_t llm_tokenizer_n_tokens(const llm_tokenizer *t) { return t ? t->n : 0; }

const char *llm_tokenizer_token_text(const llm_tokenizer *t, llm_token id) {
    if (!t || id < 0 || id >= t->n) return NULL;
    return t->blob + t->off[id];
}

const char *llm_tokenizer_token_bytes(const llm_tokenizer *t, llm_token id, size_t *len) {
    if (!t || id < 0 || id >= t->n) return NULL;
    if (len) *len = t->dlen[id];
    return t->dblob + t->doff[id];
}

llm_token_type llm_tokenizer_token_type(const llm_tokenizer *t, llm_token id) {
    if (!t || id < 0 || id >= t->n) return LLM_TOKEN_TYPE_UNDEFINED;
    return (llm_token_type)t->types[id];
}

float llm_tokenizer_token_score(const llm_tokenizer *t, llm_token id) {
    if (!t || id < 0 || id >= t->n) return 0.0f;
    return t->scores[id];
}

llm_token llm_tokenizer_find(const llm_tokenizer *t, const char *text, size_t len) {
    if (!t || (!text && len)) return LLM_TOKEN_NULL;
    return llm__tok_lookup(t, text ? text : "", len);
}

const char *llm_tokenizer_pre_name(const llm_tokenizer *t) { return t ? t->pre : NULL; }

llm_token llm_tokenizer_special(const llm_tokenizer *t, llm_special which) {
    if (!t) return LLM_TOKEN_NULL;
    switch (which) {
    case LLM_SPECIAL_BOS: return t->bos;
    case LLM_SPECIAL_EOS: return t->eos;
    case LLM_SPECIAL_EOT: return t->eot;
    case LLM_SPECIAL_EOM: return t->eom;
    case LLM_SPECIAL_UNK: return t->unk;
    case LLM_SPECIAL_PAD: return t->pad;
    case LLM_SPECIAL_SEP: return t->sep;
    case LLM_SPECIAL_CLS: return t->cls;
    case LLM_SPECIAL_MASK: return t->mask;
    }
    return LLM_TOKEN_NULL;
}

int llm_tokenizer_adds_bos(const llm_tokenizer *t) { return t ? t->add_bos : 0; }

int llm_tokenizer_is_eog(const llm_tokenizer *t, llm_token id) {
    if (!t || id < 0) return 0;
    return id == t->eos || id == t->eot || id == t->eom;
}
