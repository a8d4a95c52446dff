/* The bert architecture on all-MiniLM-L6-v2 (the Hugging Face folder that
 * scripts/fetch-model.sh all-minilm-l6-v2 installs) against committed
 * goldens from the references (scripts/golden/embed/make_embed_golden.py):
 * token ids equal to HF tokenizers' for 200 texts, and every embedding
 * within cosine 0.99999 of sentence-transformers' (max abs diff printed).
 * Also the engine's own contracts: the model's pipeline is read from its
 * files, long texts are truncated and counted, and a text's vector is
 * bit-identical whatever it is batched with. Skips without the model.
 * Under AddressSanitizer the embedding checks run on a subset (LIGHT_TEXTS). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llama/engine.h"
#include "llama/engine_embed.h"

#define N_TEXTS 200
#define DIM 384

/* LIGHT: 1 under AddressSanitizer (scripts/test.sh --sanitize), where the
 * forward runs ~30x slower (~9 ms a token on 2 threads: with all the texts
 * this file took 353 s). The checks are the same; the embedding tests run
 * on fewer texts. */
#include "under_asan.h"
#define LIGHT LLM_UNDER_ASAN

/* The texts the embedding tests use under LIGHT; token ids are still
 * checked on all 200 (that is cheap), and outside LIGHT nothing changes.
 * Why these are enough: they take every path of llm_embed on this model.
 * Truncation far over the limit (184: 804 tokens, 183: 603), just over it
 * (174: 277) and a text just under it (171: 250). 1157 tokens in all, so a
 * call packs them into two passes of at most 1024 and the pass-full split
 * runs (in order, 184 alone in the second pass; reversed, a split before
 * 131), each text meeting other neighbours and offsets in reverse order.
 * Short and odd inputs: the empty text and a lone newline ([CLS] [SEP]),
 * Thai ([CLS] [UNK] [SEP]), emoji, Cyrillic, Chinese, code, French accents,
 * and Korean (106), whose llama.cpp tokens differ so the llama.cpp
 * comparison skips it. A call costs ~10 s under ASan. Pooling modes, the
 * GGUF and nomic-bert have their own tests below. */
static const int LIGHT_TEXTS[] = {0, 16, 90, 101, 104, 106, 112, 119, 131, 155, 167, 171, 174, 183, 184};

static llm_model *M;
static char *TEXTS[N_TEXTS];
static const char *USED[N_TEXTS]; /* [N_USED] the texts the embedding tests run, in order */
static int USED_IDX[N_TEXTS];     /* [N_USED] their indices in TEXTS */
static int POS[N_TEXTS];          /* [N_TEXTS] a text's place in USED, or -1 */
static int N_USED;
static char path_buf[4096];

static const char *model_path(void) {
    const char *p = getenv("LLM_EMBED_MODEL");
    if (p && *p) return p;
    const char *d = getenv("LLM_DEFAULT_MODEL"); /* .../models/<default>.gguf */
    if (!d || !*d) return NULL;
    snprintf(path_buf, sizeof path_buf, "%s", d);
    char *slash = strrchr(path_buf, '/');
    if (!slash) return NULL;
    snprintf(slash + 1, sizeof path_buf - (size_t)(slash + 1 - path_buf), "all-MiniLM-L6-v2");
    return path_buf;
}

static void gold_path(char *out, size_t cap, const char *name) {
    const char *src = getenv("LLM_SOURCE_DIR");
    snprintf(out, cap, "%s/scripts/golden/embed/%s", src ? src : ".", name);
}

/* The embedding tests run texts idx[0..n) (NULL: all, in order). */
static void use_texts(const int *idx, int n) {
    N_USED = n;
    for (int i = 0; i < N_TEXTS; i++) POS[i] = -1;
    for (int j = 0; j < n; j++) {
        USED_IDX[j] = idx ? idx[j] : j;
        USED[j] = TEXTS[USED_IDX[j]];
        POS[USED_IDX[j]] = j;
    }
}

static void setup(void) {
    const char *p = model_path();
    char cfg[4200];
    snprintf(cfg, sizeof cfg, "%s/config.json", p ? p : "");
    if (!p || access(cfg, R_OK) != 0)
        cr_skip_test("all-MiniLM-L6-v2 not found (scripts/fetch-model.sh all-minilm-l6-v2, or LLM_EMBED_MODEL)");
    llm_model_params mp = llm_model_default_params();
    mp.backend = "cpu";
    mp.n_threads = 2;
    cr_assert_eq(llm_load_model(p, &mp, &M), LLM_OK, "load: %s", llm_last_error());
    char sp[4096];
    gold_path(sp, sizeof sp, "sentences.jsonl");
    FILE *f = fopen(sp, "r");
    cr_assert(f, "cannot open %s", sp);
    char line[65536];
    for (int i = 0; i < N_TEXTS; i++) {
        cr_assert(fgets(line, sizeof line, f), "sentences.jsonl: line %d missing", i + 1);
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        cr_assert(o && json_is_string(json_object_get(o, "text")), "sentences.jsonl line %d", i + 1);
        TEXTS[i] = strdup(json_string_value(json_object_get(o, "text")));
        json_decref(o);
    }
    fclose(f);
    use_texts(LIGHT ? LIGHT_TEXTS : NULL, LIGHT ? (int)(sizeof LIGHT_TEXTS / sizeof LIGHT_TEXTS[0]) : N_TEXTS);
}

static void teardown(void) {
    for (int i = 0; i < N_TEXTS; i++) free(TEXTS[i]);
    memset(TEXTS, 0, sizeof TEXTS);
    llm_model_free(M);
    M = NULL;
}

/* The float32 [rows][DIM] matrix of a .npy (version 1 header). */
static float *load_npy_rows(const char *name, int rows) {
    char p[4096];
    gold_path(p, sizeof p, name);
    FILE *f = fopen(p, "rb");
    cr_assert(f, "cannot open %s", p);
    unsigned char h[10];
    cr_assert_eq(fread(h, 1, 10, f), 10u);
    cr_assert(!memcmp(h, "\x93NUMPY", 6) && h[6] == 1, "%s: not a version 1 .npy", p);
    const size_t hl = (size_t)h[8] | (size_t)h[9] << 8;
    char hdr[1024];
    cr_assert(hl < sizeof hdr && fread(hdr, 1, hl, f) == hl);
    hdr[hl] = '\0';
    char shape[32];
    snprintf(shape, sizeof shape, "(%d, %d)", rows, DIM);
    cr_assert(strstr(hdr, "'<f4'") && strstr(hdr, shape), "%s: header %s", p, hdr);
    float *v = malloc((size_t)rows * DIM * sizeof *v);
    cr_assert(v && fread(v, sizeof *v, (size_t)rows * DIM, f) == (size_t)rows * DIM);
    fclose(f);
    return v;
}

static float *load_npy(const char *name) { return load_npy_rows(name, N_TEXTS); }

TestSuite(embed_bert, .init = setup, .fini = teardown, .timeout = 600);

Test(embed_bert, pipeline_from_the_model_files) {
    llm_model_info info;
    cr_assert_eq(llm_model_get_info(M, &info), LLM_OK);
    cr_expect_str_eq(info.architecture, "bert");
    cr_expect(info.is_encoder);
    cr_expect_eq(info.n_embd, DIM);
    llm_embed_info ei;
    cr_assert_eq(llm_model_embed_info(M, &ei), LLM_OK, "%s", llm_last_error());
    cr_expect_eq(ei.pooling, LLM_POOLING_MEAN);
    cr_expect(ei.pooling_stated);
    cr_expect(ei.normalize, "modules.json has a Normalize module");
    cr_expect_eq(ei.max_tokens, 256, "sentence_bert_config.json max_seq_length");
    cr_expect(ei.is_encoder);
}

Test(embed_bert, token_ids_equal_hf_tokenizers) {
    char p[4096];
    gold_path(p, sizeof p, "tokens.txt");
    FILE *f = fopen(p, "r");
    cr_assert(f, "cannot open %s", p);
    static char line[1 << 16];
    llm_token got[2048];
    int bad = 0;
    for (int i = 0; i < N_TEXTS; i++) {
        cr_assert(fgets(line, sizeof line, f));
        int32_t n = 0;
        cr_assert_eq(llm_tokenize(M, TEXTS[i], strlen(TEXTS[i]), LLM_ENCODE_ADD_SPECIAL, got, 2048, &n), LLM_OK,
                     "text %d: %s", i, llm_last_error());
        int32_t k = 0, diff = 0;
        for (char *s = strtok(line, " \n"); s; s = strtok(NULL, " \n"), k++)
            if (!diff && (k >= n || got[k] != atoi(s))) {
                diff = 1;
                cr_log_error("text %d: token %d differs (ours %d, HF %s)", i, k, k < n ? got[k] : -1, s);
            }
        if (diff || k != n) bad++;
        cr_expect_eq(n, k, "text %d: %d tokens, HF %d", i, n, k);
    }
    fclose(f);
    cr_expect_eq(bad, 0, "%d of %d texts tokenize differently", bad, N_TEXTS);
}

static double cosine(const float *a, const float *b) {
    double ab = 0, aa = 0, bb = 0;
    for (int k = 0; k < DIM; k++) ab += (double)a[k] * b[k], aa += (double)a[k] * a[k], bb += (double)b[k] * b[k];
    return ab / sqrt(aa * bb);
}

Test(embed_bert, embeddings_match_sentence_transformers) {
    float *ref = load_npy("st_embeddings.npy");
    float *got = malloc((size_t)N_USED * DIM * sizeof *got);
    llm_embed_stats s0, s1;
    cr_assert_eq(llm_embed_telemetry(M, &s0), LLM_OK);
    cr_assert_eq(llm_embed(M, USED, (size_t)N_USED, LLM_POOLING_MODEL, true, got, DIM), LLM_OK, "%s",
                 llm_model_last_error(M));
    cr_assert_eq(llm_embed_telemetry(M, &s1), LLM_OK);
    double min_cos = 1, max_abs = 0;
    int worst = -1;
    for (int j = 0; j < N_USED; j++) {
        const int i = USED_IDX[j];
        const double c = cosine(got + j * DIM, ref + i * DIM);
        if (c < min_cos) min_cos = c, worst = i;
        for (int k = 0; k < DIM; k++) {
            const double d = fabs((double)got[j * DIM + k] - ref[i * DIM + k]);
            max_abs = d > max_abs ? d : max_abs;
        }
        cr_expect(c >= 0.99999, "text %d: cosine %.8f vs sentence-transformers", i, c);
    }
    fprintf(stderr, "embed_bert: %d texts vs sentence-transformers: min cosine %.9f (text %d), max abs diff %.3g\n",
            N_USED, min_cos, worst, max_abs);
    /* Truncation: every text HF tokenizes to more than 256 tokens, counted
     * with the tokens dropped. */
    char p[4096];
    gold_path(p, sizeof p, "tokens.txt");
    FILE *f = fopen(p, "r");
    cr_assert(f);
    static char line[1 << 16];
    int64_t want_texts = 0, want_tokens = 0;
    for (int i = 0; i < N_TEXTS; i++) {
        cr_assert(fgets(line, sizeof line, f));
        int n = 0;
        for (char *s = strtok(line, " \n"); s; s = strtok(NULL, " \n")) n++;
        if (n > 256 && POS[i] >= 0) want_texts++, want_tokens += n - 256;
    }
    fclose(f);
    cr_expect_gt(want_texts, 0);
    cr_expect_eq(s1.truncated_texts - s0.truncated_texts, want_texts);
    cr_expect_eq(s1.truncated_tokens - s0.truncated_tokens, want_tokens);
    cr_expect_eq(s1.texts - s0.texts, N_USED);
    cr_expect(s1.forwards - s0.forwards < N_USED / 4, "texts are packed into few forward passes (%lld)",
              (long long)(s1.forwards - s0.forwards));
    cr_expect(s1.forwards - s0.forwards > 1, "the texts fill more than one pass (%lld): the split is exercised",
              (long long)(s1.forwards - s0.forwards));
    free(got);
    free(ref);
}

/* llm_embed's contract: a text's vector does not depend on what it is
 * batched with (alone, all at once, reversed). */
Test(embed_bert, bit_identical_whatever_the_batch) {
    float *all = malloc((size_t)N_USED * DIM * sizeof *all), *one = malloc(DIM * sizeof *one);
    float *rev = malloc((size_t)N_USED * DIM * sizeof *rev);
    const char *rtexts[N_TEXTS];
    for (int j = 0; j < N_USED; j++) rtexts[j] = USED[N_USED - 1 - j];
    cr_assert_eq(llm_embed(M, USED, (size_t)N_USED, LLM_POOLING_MODEL, true, all, DIM), LLM_OK);
    cr_assert_eq(llm_embed(M, rtexts, (size_t)N_USED, LLM_POOLING_MODEL, true, rev, DIM), LLM_OK);
    for (int j = 0; j < N_USED; j++) {
        cr_expect(!memcmp(all + j * DIM, rev + (N_USED - 1 - j) * DIM, DIM * sizeof(float)),
                  "text %d: another vector in reversed order", USED_IDX[j]);
        /* alone: a sample, to keep the test short (under LIGHT: texts 0,
         * 101, 112, 155 and the truncated 174, which sits at offset 389 of
         * the first pass when batched) */
        if (j % (LIGHT ? 3 : 7)) continue;
        cr_assert_eq(llm_embed(M, &USED[j], 1, LLM_POOLING_MODEL, true, one, DIM), LLM_OK);
        cr_expect(!memcmp(all + j * DIM, one, DIM * sizeof(float)), "text %d: another vector alone", USED_IDX[j]);
    }
    free(all);
    free(one);
    free(rev);
}

Test(embed_bert, no_sessions_on_an_encoder) {
    llm_session *s = NULL;
    llm_status st = llm_session_new(M, NULL, &s);
    if (st == LLM_OK) {
        const llm_token toks[3] = {101, 7592, 102};
        st = llm_prefill(s, toks, 3);
        cr_expect_neq(st, LLM_OK, "an encoder cannot prefill");
        llm_session_free(s);
    }
}

/* The GGUF the committed converter writes (CTest fixture embed_bert_gguf_generate):
 * the same vectors as the Hugging Face folder (within 1e-5; they are in fact
 * equal, the weights and the tokenization being the same), and within
 * cosine 0.99999 / max abs diff 1e-3 of llama.cpp's on the texts where
 * llama.cpp's token ids equal HF's (llamacpp_meta.json: llama.cpp tokenizes
 * Korean and Hindi otherwise). llama.cpp evaluates GELU with its tanh
 * approximation from an F16 table; we use the erf GELU of the model. */
Test(embed_bert, gguf_equals_folder_and_llamacpp) {
    const char *gp = getenv("LLM_BERT_GGUF");
    if (!gp || access(gp, R_OK) != 0) cr_skip_test("no bert GGUF (fixture embed_bert_gguf_generate)");
    llm_model_params mp = llm_model_default_params();
    mp.backend = "cpu";
    mp.n_threads = 2;
    llm_model *G = NULL;
    cr_assert_eq(llm_load_model(gp, &mp, &G), LLM_OK, "%s", llm_last_error());
    if (LIGHT) {
        /* What differs from the folder is loading, the tokenizer and the
         * metadata (max_tokens: 184 is truncated), not the forward or the
         * packing: LIGHT_TEXTS without 174 and 183, which are there to
         * fill two passes; one pass, ~6 s a call. */
        static const int gguf_texts[] = {0, 16, 90, 101, 104, 106, 112, 119, 131, 155, 167, 171, 184};
        use_texts(gguf_texts, (int)(sizeof gguf_texts / sizeof gguf_texts[0]));
    }
    llm_embed_info ei;
    cr_assert_eq(llm_model_embed_info(G, &ei), LLM_OK);
    cr_expect_eq(ei.pooling, LLM_POOLING_MEAN, "bert.pooling_type 1");
    float *a = malloc((size_t)N_USED * DIM * sizeof *a), *b = malloc((size_t)N_USED * DIM * sizeof *b);
    cr_assert_eq(llm_embed(M, USED, (size_t)N_USED, LLM_POOLING_MODEL, true, a, DIM), LLM_OK);
    cr_assert_eq(llm_embed(G, USED, (size_t)N_USED, LLM_POOLING_MODEL, true, b, DIM), LLM_OK, "%s",
                 llm_model_last_error(G));
    double max_folder = 0;
    for (size_t k = 0; k < (size_t)N_USED * DIM; k++) {
        const double d = fabs((double)a[k] - b[k]);
        max_folder = d > max_folder ? d : max_folder;
    }
    cr_expect(max_folder <= 1e-5, "GGUF vs HF folder: max abs diff %.3g", max_folder);
    /* llama.cpp's vectors. */
    char mpth[4096];
    gold_path(mpth, sizeof mpth, "llamacpp_meta.json");
    json_error_t je;
    json_t *meta = json_load_file(mpth, 0, &je);
    cr_assert(meta, "%s: %s", mpth, je.text);
    json_t *index = json_object_get(meta, "index"), *differ = json_object_get(meta, "tokens_differ");
    const size_t n_lc = json_array_size(index);
    char np[4096];
    gold_path(np, sizeof np, "llamacpp_embeddings.npy");
    FILE *f = fopen(np, "rb");
    cr_assert(f);
    unsigned char h[10];
    cr_assert_eq(fread(h, 1, 10, f), 10u);
    const size_t hl = (size_t)h[8] | (size_t)h[9] << 8;
    cr_assert_eq(fseek(f, (long)(10 + hl), SEEK_SET), 0);
    float *lc = malloc(n_lc * DIM * sizeof *lc);
    cr_assert(lc && fread(lc, sizeof *lc, n_lc * DIM, f) == n_lc * DIM, "%s: short", np);
    fclose(f);
    double max_lc = 0, min_cos = 1;
    int compared = 0;
    for (size_t r = 0; r < n_lc; r++) {
        const int i = (int)json_integer_value(json_array_get(index, r));
        if (i < 0 || i >= N_TEXTS || POS[i] < 0) continue; /* not run (LIGHT) */
        int skip = 0;
        for (size_t k = 0; k < json_array_size(differ); k++) skip |= json_integer_value(json_array_get(differ, k)) == i;
        if (skip) continue;
        compared++;
        const double c = cosine(b + (size_t)POS[i] * DIM, lc + r * DIM);
        min_cos = c < min_cos ? c : min_cos;
        for (int k = 0; k < DIM; k++) {
            const double d = fabs((double)b[(size_t)POS[i] * DIM + k] - lc[r * DIM + k]);
            max_lc = d > max_lc ? d : max_lc;
        }
        cr_expect(c >= 0.99999, "text %d: cosine %.8f vs llama.cpp", i, c);
    }
    cr_expect(max_lc <= 1e-3, "GGUF vs llama.cpp: max abs diff %.3g", max_lc);
    /* LIGHT: 9 of its texts are in llama.cpp's golden with the same tokens
     * (155, 167 and the truncated ones are not in it; 106 differs). */
    cr_expect_gt(compared, LIGHT ? 8 : 150);
    fprintf(stderr, "embed_bert: GGUF vs folder max abs diff %.3g; vs llama.cpp on %d texts: min cosine %.9f, "
            "max abs diff %.3g\n", max_folder, compared, min_cos, max_lc);
    json_decref(meta);
    free(lc);
    free(a);
    free(b);
    llm_model_free(G);
}

/* Max and mean_sqrt_len pooling, stated the sentence-transformers way: a
 * copy of the model folder (files linked) whose 1_Pooling/config.json turns
 * the mode on and whose modules.json has no Normalize module, as
 * make_pooling_golden.py builds it for SentenceTransformer. The pipeline is
 * read from the files, and the raw pooled vectors of every 10th text are
 * within cosine 0.99999 and 2e-5 abs (their norms are near 15) of
 * sentence-transformers'; the same pooling asked of the unmodified model
 * gives the same bits. */
static void pool_folder(char *dir, const char *src, const char *key) {
    strcpy(dir, "/tmp/llm-pool-XXXXXX");
    cr_assert(mkdtemp(dir), "mkdtemp");
    static const char *const files[] = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                                        "special_tokens_map.json", "sentence_bert_config.json",
                                        "config_sentence_transformers.json"};
    char a[4200], b[4200];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(a, sizeof a, "%s/%s", src, files[i]);
        snprintf(b, sizeof b, "%s/%s", dir, files[i]);
        if (access(a, R_OK) == 0) cr_assert_eq(symlink(a, b), 0, "symlink %s", b);
    }
    snprintf(b, sizeof b, "%s/modules.json", dir);
    FILE *f = fopen(b, "w");
    cr_assert(f);
    fputs("[{\"idx\": 0, \"name\": \"0\", \"path\": \"\", \"type\": \"sentence_transformers.models.Transformer\"},\n"
          " {\"idx\": 1, \"name\": \"1\", \"path\": \"1_Pooling\", \"type\": \"sentence_transformers.models.Pooling\"}]\n",
          f);
    fclose(f);
    snprintf(b, sizeof b, "%s/1_Pooling", dir);
    cr_assert_eq(mkdir(b, 0700), 0);
    snprintf(b, sizeof b, "%s/1_Pooling/config.json", dir);
    f = fopen(b, "w");
    cr_assert(f);
    fprintf(f, "{\"word_embedding_dimension\": 384, \"pooling_mode_cls_token\": false, "
               "\"pooling_mode_mean_tokens\": false, \"%s\": true}\n", key);
    fclose(f);
}

static void pool_folder_remove(const char *dir) {
    static const char *const names[] = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                                        "special_tokens_map.json", "sentence_bert_config.json",
                                        "config_sentence_transformers.json", "modules.json",
                                        "1_Pooling/config.json", "1_Pooling"};
    char b[4200];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(b, sizeof b, "%s/%s", dir, names[i]);
        if (i + 1 == sizeof names / sizeof names[0]) rmdir(b);
        else unlink(b);
    }
    rmdir(dir);
}

Test(embed_bert, max_and_mean_sqrt_len_pooling_match_sentence_transformers) {
    enum { NG = 20 }; /* the golden's rows: texts 0, 10, ..., 190 */
    /* LIGHT: 4 of the golden's rows, texts 0, 90 (accents), 160 ("!!!": 3
     * tokens) and 190 (73 tokens), packed in one pass as the 20 are; each
     * text is pooled on its own, so fewer texts take the same paths. */
    static const int light_rows[] = {0, 9, 16, 19};
    const int NP = LIGHT ? (int)(sizeof light_rows / sizeof light_rows[0]) : NG;
    static const struct {
        const char *key, *golden;
        llm_pooling pooling;
    } modes[] = {{"pooling_mode_max_tokens", "st_pool_max.npy", LLM_POOLING_MAX},
                 {"pooling_mode_mean_sqrt_len_tokens", "st_pool_mean_sqrt_len.npy", LLM_POOLING_MEAN_SQRT_LEN}};
    const char *texts[NG];
    int rows[NG]; /* [NP] the golden's row of each text */
    for (int j = 0; j < NP; j++) rows[j] = LIGHT ? light_rows[j] : j, texts[j] = TEXTS[10 * rows[j]];
    float *got = malloc((size_t)NG * DIM * sizeof *got), *direct = malloc((size_t)NG * DIM * sizeof *direct);
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        char dir[64];
        pool_folder(dir, model_path(), modes[m].key);
        llm_model_params mp = llm_model_default_params();
        mp.backend = "cpu";
        mp.n_threads = 2;
        llm_model *P = NULL;
        const llm_status ls = llm_load_model(dir, &mp, &P);
        if (ls != LLM_OK) pool_folder_remove(dir);
        cr_assert_eq(ls, LLM_OK, "%s: %s", dir, llm_last_error());
        llm_embed_info ei;
        cr_assert_eq(llm_model_embed_info(P, &ei), LLM_OK, "%s", llm_last_error());
        cr_expect_eq(ei.pooling, modes[m].pooling, "%s", modes[m].key);
        cr_expect(ei.pooling_stated);
        cr_expect(!ei.normalize, "no Normalize module");
        cr_assert_eq(llm_embed(P, texts, (size_t)NP, LLM_POOLING_MODEL, ei.normalize, got, DIM), LLM_OK, "%s",
                     llm_model_last_error(P));
        llm_model_free(P);
        pool_folder_remove(dir);
        cr_assert_eq(llm_embed(M, texts, (size_t)NP, modes[m].pooling, false, direct, DIM), LLM_OK);
        cr_expect(!memcmp(got, direct, (size_t)NP * DIM * sizeof *got), "%s: the folder's pooling differs from asking",
                  modes[m].key);
        float *ref = load_npy_rows(modes[m].golden, NG);
        double min_cos = 1, max_abs = 0;
        for (int j = 0; j < NP; j++) {
            const double c = cosine(got + j * DIM, ref + rows[j] * DIM);
            min_cos = c < min_cos ? c : min_cos;
            for (int k = 0; k < DIM; k++) {
                const double d = fabs((double)got[j * DIM + k] - ref[rows[j] * DIM + k]);
                max_abs = d > max_abs ? d : max_abs;
            }
            cr_expect(c >= 0.99999, "%s text %d: cosine %.8f", modes[m].key, 10 * rows[j], c);
        }
        cr_expect(max_abs <= 2e-5, "%s: max abs diff %.3g", modes[m].key, max_abs);
        fprintf(stderr, "embed_bert: %s vs sentence-transformers on %d texts: min cosine %.9f, max abs diff %.3g\n",
                modes[m].key, NP, min_cos, max_abs);
        free(ref);
    }
    free(got);
    free(direct);
}

/* nomic-bert (rotary positions, fused Q/K/V, SwiGLU) on a seeded synthetic
 * GGUF (make_nomic_synthetic.py, CTest fixture embed_nomic_generate):
 * token ids equal to llama.cpp's and embeddings within 1e-5 of llama.cpp's
 * (nomic_llamacpp.json, make_nomic_golden.py). Needs no downloaded model. */
Test(embed_nomic, matches_llamacpp) {
    const char *gp = getenv("LLM_NOMIC_GGUF");
    if (!gp || access(gp, R_OK) != 0) cr_skip_test("no synthetic nomic-bert GGUF (fixture embed_nomic_generate)");
    llm_model_params mp = llm_model_default_params();
    mp.backend = "cpu";
    mp.n_threads = 2;
    llm_model *G = NULL;
    cr_assert_eq(llm_load_model(gp, &mp, &G), LLM_OK, "%s", llm_last_error());
    llm_model_info info;
    llm_model_get_info(G, &info);
    cr_expect_str_eq(info.architecture, "nomic-bert");
    cr_expect(info.is_encoder);
    char p[4096];
    gold_path(p, sizeof p, "nomic_llamacpp.json");
    json_error_t je;
    json_t *g = json_load_file(p, 0, &je);
    cr_assert(json_is_array(g), "%s: %s", p, je.text);
    const size_t n = json_array_size(g), dim = (size_t)info.n_embd;
    const char **texts = calloc(n, sizeof *texts);
    float *got = malloc(n * dim * sizeof *got);
    for (size_t i = 0; i < n; i++) texts[i] = json_string_value(json_object_get(json_array_get(g, i), "text"));
    cr_assert_eq(llm_embed(G, texts, n, LLM_POOLING_MODEL, true, got, dim), LLM_OK, "%s", llm_model_last_error(G));
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(g, i), *ids = json_object_get(o, "ids"), *emb = json_object_get(o, "embedding");
        llm_token t[256];
        int32_t nt = 0;
        cr_assert_eq(llm_tokenize(G, texts[i], strlen(texts[i]), LLM_ENCODE_ADD_SPECIAL, t, 256, &nt), LLM_OK);
        cr_expect_eq((size_t)nt, json_array_size(ids), "text %zu: %d tokens, llama.cpp %zu", i, nt,
                     json_array_size(ids));
        for (int32_t k = 0; k < nt && (size_t)k < json_array_size(ids); k++)
            cr_expect_eq(t[k], json_integer_value(json_array_get(ids, (size_t)k)), "text %zu token %d", i, k);
        cr_assert_eq(json_array_size(emb), dim);
        for (size_t k = 0; k < dim; k++) {
            const double d = fabs((double)got[i * dim + k] - json_number_value(json_array_get(emb, k)));
            worst = d > worst ? d : worst;
        }
    }
    cr_expect(worst <= 1e-5, "nomic-bert vs llama.cpp: max abs diff %.3g", worst);
    fprintf(stderr, "embed_nomic: %zu texts vs llama.cpp: max abs diff %.3g\n", n, worst);
    json_decref(g);
    free(texts);
    free(got);
    llm_model_free(G);
}
