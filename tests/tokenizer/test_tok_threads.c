/* One tokenizer, four threads encoding and decoding at once: every thread
 * must get the same ids as a single-threaded run (the handle is immutable;
 * per-call state only). Run under TSan to check for races. */
#include <criterion/criterion.h>
#include <pthread.h>

#define TT_NO_GGUF
#include "tok_test_util.h"

typedef struct job {
    const llm_tokenizer *tok;
    const char *text;
    size_t len;
    const llm_token *want;
    int32_t n_want;
    int ok;
} job;

static void *worker(void *arg) {
    job *j = arg;
    j->ok = 1;
    for (int it = 0; it < 6; it++) {
        llm_token *ids;
        int32_t n;
        if (tt_encode(j->tok, j->text, j->len, LLM_TOKENIZE_PARSE_SPECIAL, &ids, &n) != LLM_OK || n != j->n_want ||
            memcmp(ids, j->want, (size_t)n * sizeof *ids) != 0)
            j->ok = 0;
        char *out = malloc(j->len + 1);
        size_t ol;
        if (llm_tokenizer_decode(j->tok, ids, n, 0, out, j->len + 1, &ol) != LLM_OK || ol != j->len ||
            memcmp(out, j->text, ol) != 0)
            j->ok = 0;
        free(out);
        free(ids);
    }
    return NULL;
}

Test(tokenizer_threads, concurrent_encode_decode) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/tokenizer/out_of_tree/tokenizer.json", tt_env("LLM_SOURCE_DIR", "."));
    llm_tokenizer *tok = NULL;
    cr_assert_eq(llm_tokenizer_from_hf_json_file(path, &tok), LLM_OK, "%s", llm_tokenizer_last_error());
    /* A text long enough to use the word cache and several pre-tokenizer passes. */
    size_t len = 0;
    char *text = malloc(64 * 1024);
    static const char *const parts[] = {"Hello world, ", "12345 ", "<|im_end|>", "naïve café ", "中文 ", "🦙 ", "\n\n  "};
    for (int i = 0; len < 60 * 1024; i++) {
        size_t l = strlen(parts[i % 7]);
        memcpy(text + len, parts[i % 7], l);
        len += l;
    }
    llm_token *want;
    int32_t n_want;
    cr_assert_eq(tt_encode(tok, text, len, LLM_TOKENIZE_PARSE_SPECIAL, &want, &n_want), LLM_OK);
    pthread_t th[4];
    job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (job){tok, text, len, want, n_want, 0};
        cr_assert_eq(pthread_create(&th[i], NULL, worker, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        cr_expect(jobs[i].ok, "thread %d saw different results", i);
    }
    free(want);
    free(text);
    llm_tokenizer_free(tok);
}
