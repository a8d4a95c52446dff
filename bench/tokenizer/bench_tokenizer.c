/* bench-tokenizer MODEL TEXT_FILE [MIN_MB]: encode and decode throughput,
 * single thread. The text is repeated until it is at least MIN_MB (default 1)
 * megabytes; each measurement is the best of 5 runs of process CPU time. Special-token text is
 * parsed (as HF does by default). Encode is timed on the whole text as one
 * string and as separate paragraphs. MODEL is a GGUF or a
 * tokenizer.json. Prints one line per figure, parsed by bench_hf.py. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama/tokenizer.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: the machine may be shared */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return p;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bench-tokenizer MODEL(.gguf|tokenizer.json) TEXT_FILE [MIN_MB]\n");
        return 2;
    }
    double min_mb = argc > 3 ? atof(argv[3]) : 1.0;
    size_t base_len;
    char *base = read_file(argv[2], &base_len);
    if (!base || base_len == 0) {
        fprintf(stderr, "bench-tokenizer: cannot read %s\n", argv[2]);
        return 1;
    }
    size_t reps = 1;
    while ((double)(base_len * reps) < min_mb * 1e6) reps++;
    size_t len = base_len * reps;
    char *text = malloc(len + 1);
    for (size_t r = 0; r < reps; r++) memcpy(text + r * base_len, base, base_len);
    text[len] = 0;

    llm_tokenizer *tok = NULL;
    if (llm_tokenizer_load(argv[1], &tok) != LLM_OK) {
        fprintf(stderr, "bench-tokenizer: %s\n", llm_tokenizer_last_error());
        return 1;
    }
    int32_t cap = (int32_t)(len + 16), n = 0;
    llm_token *ids = malloc((size_t)cap * sizeof *ids);
    char *out = malloc(len * 2 + 16);
    double best_enc = 1e30, best_dec = 1e30;
    size_t out_len = 0;
    for (int run = 0; run < 5; run++) {
        double t0 = now();
        if (llm_tokenizer_encode(tok, text, len, LLM_TOKENIZE_PARSE_SPECIAL, ids, cap, &n) != LLM_OK) {
            fprintf(stderr, "bench-tokenizer: %s\n", llm_tokenizer_last_error());
            return 1;
        }
        double t1 = now();
        if (llm_tokenizer_decode(tok, ids, n, 0, out, len * 2 + 16, &out_len) != LLM_OK) {
            fprintf(stderr, "bench-tokenizer: %s\n", llm_tokenizer_last_error());
            return 1;
        }
        double t2 = now();
        if (t1 - t0 < best_enc) best_enc = t1 - t0;
        if (t2 - t1 < best_dec) best_dec = t2 - t1;
    }
    /* The same text as separate paragraphs (split after each "\n\n"), one call each. */
    double best_par = 1e30;
    for (int run = 0; run < 5; run++) {
        double t0 = now();
        size_t p = 0;
        while (p < len) {
            const char *e = strstr(text + p, "\n\n");
            size_t q = e ? (size_t)(e - text) + 2 : len;
            int32_t m = 0;
            if (llm_tokenizer_encode(tok, text + p, q - p, LLM_TOKENIZE_PARSE_SPECIAL, ids, cap, &m) != LLM_OK) {
                fprintf(stderr, "bench-tokenizer: %s\n", llm_tokenizer_last_error());
                return 1;
            }
            p = q;
        }
        double t1 = now();
        if (t1 - t0 < best_par) best_par = t1 - t0;
    }
    printf("text_bytes %zu\n", len);
    printf("tokens %d\n", (int)n);
    printf("roundtrip %s\n", out_len == len && memcmp(out, text, len) == 0 ? "ok" : "DIFFERS");
    printf("encode_MBps %.2f\n", (double)len / best_enc / 1e6);
    printf("decode_MBps %.2f\n", (double)len / best_dec / 1e6);
    printf("encode_paragraphs_MBps %.2f\n", (double)len / best_par / 1e6);
    free(ids);
    free(out);
    free(text);
    free(base);
    llm_tokenizer_free(tok);
    return 0;
}
