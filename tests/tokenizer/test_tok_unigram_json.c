/* A Unigram tokenizer.json (model "Unigram", Precompiled / Strip / Replace
 * normalizers, Metaspace) against HF tokenizers:
 * tests/tokenizer/data/unigram_hf_expected.txt, from
 * scripts/golden/tokenizer/make_unigram_hf_golden.py. The tokenizer.json
 * (XLM-RoBERTa's 250k pieces, from ggml-vocab-nomic-bert-moe.gguf) is made
 * at test time by scripts/golden/tokenizer/ugm_tokenizer_json.py (standard
 * library only); its path comes in LLM_UGM_TOKENIZER_JSON. */
#include <criterion/criterion.h>

#define TT_NO_GGUF
#include "tok_test_util.h"

static uint32_t fnv32(const llm_token *ids, int32_t n) {
    uint32_t h = 0x811C9DC5u;
    for (int32_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) h = (h ^ (((uint32_t)ids[i] >> (8 * k)) & 0xFF)) * 0x01000193u;
    return h;
}

static size_t unhex(const char *h, size_t n, char *out) {
    size_t k = 0;
    for (size_t i = 0; i + 1 < n; i += 2) {
        unsigned v;
        sscanf(h + i, "%2x", &v);
        out[k++] = (char)v;
    }
    return k;
}

static llm_tokenizer *load(void) {
    const char *path = getenv("LLM_UGM_TOKENIZER_JSON");
    cr_assert(path && *path, "LLM_UGM_TOKENIZER_JSON is not set");
    llm_tokenizer *tok = NULL;
    cr_assert_eq(llm_tokenizer_from_hf_json_file(path, &tok), LLM_OK, "%s", llm_tokenizer_last_error());
    return tok;
}

#define DOC_SEP "\n\x1d=== llm golden document ===\x1d\n"

Test(tokenizer_unigram_json, texts_and_corpus_match_hf_tokenizers, .timeout = 300) {
    llm_tokenizer *tok = load();
    char path[1024];
    const char *src = tt_env("LLM_SOURCE_DIR", ".");
    snprintf(path, sizeof path, "%s/tests/tokenizer/data/unigram_hf_expected.txt", src);
    size_t len = 0;
    char *all = tt_read_file(path, &len);
    cr_assert(all, "cannot read %s", path);
    snprintf(path, sizeof path, "%s/scripts/golden/tokenizer/corpus.txt", src);
    size_t clen = 0;
    char *corpus = tt_read_file(path, &clen);
    cr_assert(corpus, "cannot read %s", path);
    int texts = 0, docs = 0, bad = 0;
    for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        if (strncmp(line, "text\t", 5) == 0) {
            char *t1 = line + 4, *t2 = strchr(t1 + 1, '\t');
            cr_assert(t2, "bad line");
            char text[1024];
            size_t tl = unhex(t1 + 1, (size_t)(t2 - t1 - 1), text);
            llm_token want[1024];
            int nw = 0;
            for (char *p = t2 + 1; *p && nw < 1024;) {
                want[nw++] = (llm_token)strtol(p, &p, 10);
                while (*p == ' ') p++;
            }
            llm_token *got;
            int32_t ng;
            cr_assert_eq(tt_encode(tok, text, tl, 0, &got, &ng), LLM_OK, "%s", llm_tokenizer_last_error());
            if (ng != nw || (nw && memcmp(got, want, (size_t)nw * sizeof *got) != 0)) {
                if (bad < 5) {
                    printf("\"%.*s\": want", (int)tl, text);
                    for (int k = 0; k < nw; k++) printf(" %d", (int)want[k]);
                    printf("\n   got");
                    for (int k = 0; k < ng; k++) printf(" %d", (int)got[k]);
                    printf("\n");
                }
                bad++;
            }
            free(got);
            texts++;
        } else if (strncmp(line, "corpus\t", 7) == 0) {
            /* One n:hash pair per document of corpus.txt, in order. */
            char *doc = corpus, *p = line + 7;
            while (*p) {
                char *end = strstr(doc, DOC_SEP);
                size_t dl = end ? (size_t)(end - doc) : strlen(doc);
                long wn = strtol(p, &p, 10);
                cr_assert(*p == ':', "bad corpus entry");
                uint32_t wh = (uint32_t)strtoul(p + 1, &p, 16);
                while (*p == ' ') p++;
                llm_token *got;
                int32_t ng;
                cr_assert_eq(tt_encode(tok, doc, dl, 0, &got, &ng), LLM_OK, "%s", llm_tokenizer_last_error());
                if (ng != wn || fnv32(got, ng) != wh) {
                    if (bad < 5) printf("corpus document %d: %d ids, want %ld\n", docs, (int)ng, wn);
                    bad++;
                }
                free(got);
                docs++;
                if (!end) break;
                doc = end + strlen(DOC_SEP);
            }
        }
    }
    printf("unigram tokenizer.json: %d texts, %d corpus documents, %d differ from HF tokenizers\n", texts, docs, bad);
    free(all);
    free(corpus);
    llm_tokenizer_free(tok);
    cr_assert(texts >= 70 && docs >= 300, "only %d texts and %d documents", texts, docs);
    cr_assert_eq(bad, 0, "%d of %d texts and documents differ from HF tokenizers", bad, texts + docs);
}

/* The decoder (Metaspace) gives the text back without the prepended space. */
Test(tokenizer_unigram_json, decode_drops_the_prepended_space, .timeout = 120) {
    llm_tokenizer *tok = load();
    llm_token *ids;
    int32_t n;
    cr_assert_eq(tt_encode(tok, "Hello world", 11, 0, &ids, &n), LLM_OK);
    char buf[64];
    size_t w = 0;
    cr_assert_eq(llm_tokenizer_decode(tok, ids, n, 0, buf, sizeof buf, &w), LLM_OK, "%s", llm_tokenizer_last_error());
    cr_assert_eq(w, (size_t)11);
    cr_assert(memcmp(buf, "Hello world", 11) == 0, "%.*s", (int)w, buf);
    free(ids);
    llm_tokenizer_free(tok);
}

static llm_status from_json(const char *json) {
    llm_tokenizer *tok = NULL;
    llm_status st = llm_tokenizer_from_hf_json(json, strlen(json), &tok);
    llm_tokenizer_free(tok);
    return st;
}

#define UGM_PRE "\"pre_tokenizer\":{\"type\":\"Metaspace\",\"replacement\":\"\\u2581\",\"prepend_scheme\":\"always\"}"

Test(tokenizer_unigram_json, malformed_input_is_rejected) {
    /* A minimal valid file first, so the failures below are the mutations'. */
    cr_assert_eq(from_json("{\"model\":{\"type\":\"Unigram\",\"unk_id\":0,\"vocab\":[[\"<unk>\",0],[\"a\",-1]]},"
                           "\"normalizer\":{\"type\":\"Precompiled\",\"precompiled_charsmap\":\"\"}," UGM_PRE "}"),
                 LLM_OK, "%s", llm_tokenizer_last_error());
    cr_assert_eq(from_json("{\"model\":{\"type\":\"Unigram\",\"vocab\":{\"a\":0}}," UGM_PRE "}"), LLM_ERR_BAD_FORMAT);
    cr_assert_eq(from_json("{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\"]]}," UGM_PRE "}"), LLM_ERR_BAD_FORMAT);
    cr_assert_eq(from_json("{\"model\":{\"type\":\"Unigram\",\"unk_id\":5,\"vocab\":[[\"a\",0]]}," UGM_PRE "}"),
                 LLM_ERR_BAD_FORMAT);
    cr_assert_eq(from_json("{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",0]]},"
                           "\"normalizer\":{\"type\":\"Precompiled\",\"precompiled_charsmap\":\"A*==\"}," UGM_PRE "}"),
                 LLM_ERR_BAD_FORMAT);
    /* "AAAA" decodes to 3 bytes: too small for a charsmap. */
    cr_assert_eq(from_json("{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",0]]},"
                           "\"normalizer\":{\"type\":\"Precompiled\",\"precompiled_charsmap\":\"AAAA\"}," UGM_PRE "}"),
                 LLM_ERR_BAD_FORMAT);
    cr_assert_eq(from_json("{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",0]],\"byte_fallback\":true},"
                           UGM_PRE "}"),
                 LLM_ERR_UNSUPPORTED);
    cr_assert_eq(from_json("{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",0]]}}"), LLM_ERR_UNSUPPORTED);
    /* Normalizer steps only in the order Precompiled, Strip, Replace. */
    cr_assert_eq(from_json("{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",0]]},\"normalizer\":{\"type\":"
                           "\"Sequence\",\"normalizers\":[{\"type\":\"Precompiled\",\"precompiled_charsmap\":\"\"},"
                           "{\"type\":\"Replace\",\"pattern\":{\"Regex\":\" {2,}\"},\"content\":\"\\u2581\"},"
                           "{\"type\":\"Strip\",\"strip_left\":false,\"strip_right\":true}]}," UGM_PRE "}"),
                 LLM_ERR_UNSUPPORTED, "%s", llm_tokenizer_last_error());
    cr_assert_eq(from_json("{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",0]]},\"normalizer\":{\"type\":\"NFKC\"},"
                           UGM_PRE "}"),
                 LLM_ERR_UNSUPPORTED);
}

/* An added special token outside model.vocab: matched only as a special
 * token, never by the Unigram trie (which holds the model's pieces, "<unk>"
 * included). Expected ids from HF tokenizers:
 * scripts/golden/tokenizer/make_unigram_added_golden.py (special tokens
 * extracted = LLM_TOKENIZE_PARSE_SPECIAL; encode_special_tokens = flags 0). */
#define ADDED(c, i)                                                                                        \
    "{\"id\":" #i ",\"content\":\"" c "\",\"special\":true,\"single_word\":false,\"lstrip\":false,"         \
    "\"rstrip\":false,\"normalized\":false}"
static const char k_ugm_added[] =
    "{\"model\":{\"type\":\"Unigram\",\"unk_id\":0,\"vocab\":[[\"<unk>\",0.0],[\"\\u2581\",-1.0],[\"x\",-3.0],"
    "[\"y\",-2.0]]}," UGM_PRE ",\"added_tokens\":[" ADDED("xy", 4) "," ADDED("<unk>", 0) "]}";

static void expect_ids(const llm_tokenizer *tok, const char *text, unsigned flags, const llm_token *want, int32_t nw) {
    llm_token *got;
    int32_t ng;
    cr_assert_eq(tt_encode(tok, text, strlen(text), flags, &got, &ng), LLM_OK, "%s", llm_tokenizer_last_error());
    cr_expect(ng == nw && memcmp(got, want, (size_t)nw * sizeof *got) == 0, "\"%s\" flags %u: %d ids", text, flags,
              (int)ng);
    free(got);
}

Test(tokenizer_unigram_json, added_tokens_are_not_model_pieces) {
    llm_tokenizer *tok = NULL;
    cr_assert_eq(llm_tokenizer_from_hf_json(k_ugm_added, strlen(k_ugm_added), &tok), LLM_OK, "%s",
                 llm_tokenizer_last_error());
    expect_ids(tok, "xy <unk>", LLM_TOKENIZE_PARSE_SPECIAL, (const llm_token[]){4, 1, 0}, 3);
    expect_ids(tok, "xy <unk>", 0, (const llm_token[]){1, 2, 3, 1, 0}, 5);
    expect_ids(tok, "a xy", LLM_TOKENIZE_PARSE_SPECIAL, (const llm_token[]){1, 0, 1, 4}, 4);
    expect_ids(tok, "a xy", 0, (const llm_token[]){1, 0, 1, 2, 3}, 5);
    llm_tokenizer_free(tok);
}
