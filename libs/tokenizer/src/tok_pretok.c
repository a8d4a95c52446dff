/* tok_pretok.c -- byte-level BPE pre-tokenization: one list of PCRE2 patterns
 * (UTF + UCP, JIT) per pre-tokenizer name. Patterns run in sequence; each
 * splits every fragment left by the previous one into matches and the gaps
 * between them, all kept (HF's Split with behaviour "Isolated"). */
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

#define RE_GPT2 TOK_RE_GPT2
#define RE_LLAMA3                                                                             \
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|" \
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_QWEN2                                                                              \
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|" \
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_QWEN35                                                                                   \
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+" \
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_TEKKEN                                                                                  \
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|"          \
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}|" \
    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_BLOOM " ?[^(\\s|.,!?\xE2\x80\xA6\xE3\x80\x82\xEF\xBC\x8C\xE3\x80\x81\xE0\xA5\xA4\xDB\x94\xD8\x8C)]+"
/* CJK ideographs, U+0800-U+4E00 and Hangul blocks, as DeepSeek's tokenizer.json lists them. */
#define RE_DEEPSEEK_CJK "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+"

typedef struct pre_set {
    const char *const *names;
    const char *res[TOK_MAX_REGEX];
} pre_set;

static const char *const n_gpt2[] = {"gpt-2", "mpt", "phi-2", "jina-es", "jina-de", "gigachat",
                                     "jina-v2-es", "jina-v2-de", "jina-v1-en", "jina-v2-code",
                                     "roberta-bpe", "a.x-4.0", "mellum", "modern-bert", "olmo",
                                     "jais", "trillion", "granite-docling", NULL};
static const char *const n_starcoder[] = {"starcoder", "refact", "command-r", "smollm", "codeshell",
                                          "exaone", "minerva-7b", NULL};
static const char *const n_llama3[] = {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1",
                                       "pixtral", "midm-2.0", "lfm2", "dbrx", "smaug-bpe",
                                       "chatglm-bpe", "glm4", NULL};
static const char *const n_qwen2[] = {"qwen2", "deepseek-r1-qwen", "stablelm2", "kormo", NULL};
static const char *const n_qwen35[] = {"qwen35", NULL};
static const char *const n_tekken[] = {"tekken", NULL};
static const char *const n_falcon[] = {"falcon", NULL};
static const char *const n_default[] = {"default", NULL};
static const char *const n_bloom[] = {"bloom", "poro-chat", "gpt3-finnish", NULL};
static const char *const n_viking[] = {"viking", NULL};
static const char *const n_dsllm[] = {"deepseek-llm", NULL};
static const char *const n_dscoder[] = {"deepseek-coder", NULL};
static const char *const n_dsv3[] = {"deepseek-v3", NULL};

static const pre_set k_sets[] = {
    {n_gpt2, {RE_GPT2}},
    {n_starcoder, {"\\p{N}", RE_GPT2}},
    {n_llama3, {RE_LLAMA3}},
    {n_qwen2, {RE_QWEN2}},
    {n_qwen35, {RE_QWEN35}},
    {n_tekken, {RE_TEKKEN}},
    {n_falcon, {"[\\p{P}\\$\\+<=>\\^~\\|`]+", RE_GPT2, "[0-9][0-9][0-9]"}},
    {n_default, {"[\\p{P}\\$\\+<=>\\^~\\|]+", RE_GPT2, "\\p{N}+", "[0-9][0-9][0-9]"}},
    {n_bloom, {RE_BLOOM}},
    {n_viking, {RE_BLOOM, "\\p{N}"}},
    {n_dsllm,
     {"[\\r\\n]",
      "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}"
      "\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}"
      "\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}"
      "\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}"
      "\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}"
      "\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}"
      "\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}"
      "\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}"
      "\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}"
      "\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}"
      "\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}"
      "\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}"
      "\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}"
      "\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}"
      "\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+",
      "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+",
      "\\s+$", RE_DEEPSEEK_CJK, "\\p{N}+"}},
    {n_dscoder, {"[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", RE_DEEPSEEK_CJK, "\\p{N}"}},
    {n_dsv3,
     {"\\p{N}{1,3}", "[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+",
      "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
      " ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
};

llm_status llm__pretok_compile(llm_tokenizer *t, const char *pattern, size_t len) {
    if (t->n_re >= TOK_MAX_REGEX)
        return llm__tok_err(LLM_ERR_UNSUPPORTED, "more than %d pre-tokenizer patterns", TOK_MAX_REGEX);
    int errcode = 0;
    PCRE2_SIZE erroff = 0;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, len, PCRE2_UTF | PCRE2_UCP, &errcode, &erroff, NULL);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(errcode, msg, sizeof msg);
        return llm__tok_err(LLM_ERR_BAD_FORMAT, "pre-tokenizer pattern \"%.60s\": %s at offset %zu",
                            pattern, (const char *)msg, (size_t)erroff);
    }
    /* JIT is an optimisation: when unavailable, pcre2_match interprets. */
    (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    t->re[t->n_re++] = re;
    return LLM_OK;
}

llm_status llm__pretok_setup(llm_tokenizer *t, const char *pre) {
    for (size_t s = 0; s < sizeof k_sets / sizeof k_sets[0]; s++) {
        for (const char *const *nm = k_sets[s].names; *nm; nm++) {
            if (strcmp(*nm, pre) != 0) continue;
            for (int i = 0; i < TOK_MAX_REGEX && k_sets[s].res[i]; i++) {
                llm_status st = llm__pretok_compile(t, k_sets[s].res[i], strlen(k_sets[s].res[i]));
                if (st != LLM_OK) return st;
            }
            return LLM_OK;
        }
    }
    return llm__tok_err(LLM_ERR_UNSUPPORTED, "unsupported pre-tokenizer \"%s\"", pre);
}

void llm__spans_free(tok_spans *s) {
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

static int spans_push(tok_spans *s, size_t off, size_t len) {
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        size_t *nv = realloc(s->v, cap * 2 * sizeof *nv);
        if (!nv) return -1;
        s->v = nv;
        s->cap = cap;
    }
    s->v[2 * s->n] = off;
    s->v[2 * s->n + 1] = len;
    s->n++;
    return 0;
}

/* Matching state for one split call. The JIT machine stack of 32 KB that
 * PCRE2 uses by default suffices for ordinary text; a big JIT stack is made
 * only when a match hits that limit (e.g. a long run of spaces before
 * "\s+(?!\S)"), so short calls pay no mmap. */
typedef struct match_env {
    pcre2_match_data *md;
    pcre2_match_context *mc; /* NULL until needed */
    pcre2_jit_stack *js;
} match_env;

static int env_big_stack(match_env *env) {
    env->mc = pcre2_match_context_create(NULL);
    env->js = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, NULL);
    if (!env->mc || !env->js) return -1;
    pcre2_jit_stack_assign(env->mc, NULL, env->js);
    return 0;
}

/* Split one fragment [s, s+n) of text with re, appending matches and gaps. */
static llm_status split_one(pcre2_code *re, const char *text, size_t s, size_t n, match_env *env, tok_spans *out) {
    const PCRE2_SPTR subj = (PCRE2_SPTR)(text + s);
    size_t pos = 0, gap = 0;
    pcre2_match_data *md = env->md;
    while (pos < n) {
        int rc = pcre2_match(re, subj, n, pos, PCRE2_NO_UTF_CHECK, md, env->mc);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT && !env->mc) {
            if (env_big_stack(env)) return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
            continue;
        }
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            PCRE2_UCHAR msg[128];
            pcre2_get_error_message(rc, msg, sizeof msg);
            return llm__tok_err(LLM_ERR_INTERNAL, "pre-tokenizer match failed: %s", (const char *)msg);
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t ms = ov[0], me = ov[1];
        if (me == ms) { /* an empty match: step over one character */
            pos = ms + llm__utf8_len((unsigned char)text[s + ms]);
            continue;
        }
        if (ms > gap && spans_push(out, s + gap, ms - gap)) goto oom;
        if (spans_push(out, s + ms, me - ms)) goto oom;
        pos = gap = me;
    }
    if (n > gap && spans_push(out, s + gap, n - gap)) goto oom;
    return LLM_OK;
oom:
    return llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
}

llm_status llm__pretok_split(const llm_tokenizer *t, const char *text, size_t n, tok_spans *out) {
    out->n = 0;
    if (n == 0) return LLM_OK;
    if (t->n_re == 0) return spans_push(out, 0, n) ? llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory") : LLM_OK;
    llm_status st = LLM_OK;
    match_env env = {pcre2_match_data_create(1, NULL), NULL, NULL};
    tok_spans tmp = {0};
    if (!env.md) {
        st = llm__tok_err(LLM_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    tok_spans *cur = out, *next = &tmp;
    /* The first pattern runs over the whole text. Later ones over each fragment. */
    if (t->n_re % 2 == 0) cur = &tmp, next = out;
    st = split_one(t->re[0], text, 0, n, &env, cur);
    for (int r = 1; r < t->n_re && st == LLM_OK; r++) {
        next->n = 0;
        for (size_t i = 0; i < cur->n && st == LLM_OK; i++)
            st = split_one(t->re[r], text, cur->v[2 * i], cur->v[2 * i + 1], &env, next);
        tok_spans *sw = cur;
        cur = next;
        next = sw;
    }
done:
    llm__spans_free(&tmp);
    if (env.js) pcre2_jit_stack_free(env.js);
    if (env.mc) pcre2_match_context_free(env.mc);
    pcre2_match_data_free(env.md);
    return st;
}
