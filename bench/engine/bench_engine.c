/* bench_engine: end-to-end figures through llama/engine.h.
 *
 *   bench_engine [-m MODEL] [-t THREADS] [-p PROMPT_TOKENS] [-n DECODE_TOKENS] [-r REPEATS]
 *
 * Prints, per repeat and as the median: model load time, prefill tok/s of a
 * synthetic prompt, time to first token, greedy decode tok/s, the prefill of
 * the same prompt in a new session (whole blocks come from the prefix cache),
 * a second chat turn (only the new tail is computed) and embeddings/s. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama/engine.h"
#include "llama/engine_embed.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
    const char *model = getenv("LLM_DEFAULT_MODEL");
    char defp[1024];
    if (!model) {
        const char *home = getenv("HOME");
        snprintf(defp, sizeof defp, "%s/.cache/llm/models/SmolLM2-135M-Instruct.Q4_1.gguf", home ? home : ".");
        model = defp;
    }
    int threads = 0, n_prompt = 256, n_decode = 64, reps = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-m")) model = argv[i + 1];
        else if (!strcmp(argv[i], "-t")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-p")) n_prompt = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-n")) n_decode = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-r")) reps = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bench_engine [-m MODEL] [-t N] [-p N] [-n N] [-r N]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 50 || n_prompt < 2 || n_prompt > 3000 || n_decode < 1) {
        fprintf(stderr, "bench_engine: bad sizes\n");
        return 2;
    }
    double *load = calloc((size_t)reps, sizeof(double)), *pf = calloc((size_t)reps, sizeof(double)),
           *ttft = calloc((size_t)reps, sizeof(double)), *dec = calloc((size_t)reps, sizeof(double)),
           *pf2 = calloc((size_t)reps, sizeof(double)), *turn2 = calloc((size_t)reps, sizeof(double)),
           *emb = calloc((size_t)reps, sizeof(double));
    llm_token *prompt = malloc((size_t)n_prompt * sizeof *prompt);
    int reused = 0, turn2_tokens = 0;
    char info_line[512] = "";
    for (int r = 0; r < reps; r++) {
        llm_model_params mp = llm_model_default_params();
        mp.n_threads = threads;
        mp.n_ctx = 4096;
        mp.kv_tokens = 8192;
        llm_model *m;
        double t0 = now_ms();
        if (llm_load_model(model, &mp, &m) != LLM_OK) {
            fprintf(stderr, "bench_engine: %s\n", llm_last_error());
            return 1;
        }
        load[r] = now_ms() - t0;
        llm_model_info in;
        llm_model_get_info(m, &in);
        snprintf(info_line, sizeof info_line, "%s (%s, %s), backend %s, %d threads", in.name, in.architecture,
                 in.weight_type, in.backend, in.n_threads);
        /* a deterministic prompt of ordinary tokens */
        for (int i = 0; i < n_prompt; i++) prompt[i] = 1000 + (i * 7919) % 20000;
        llm_session_params sp = llm_session_default_params();
        sp.sampling.temperature = 0;
        llm_session *s;
        llm_session_new(m, &sp, &s);
        t0 = now_ms();
        if (llm_prefill(s, prompt, n_prompt) != LLM_OK) {
            fprintf(stderr, "bench_engine: %s\n", llm_last_error());
            return 1;
        }
        double t1 = now_ms();
        llm_token tok;
        llm_session_next_token(s, &tok, NULL, NULL);
        double t2 = now_ms();
        int produced = 1;
        for (; produced < n_decode; produced++)
            if (llm_session_next_token(s, &tok, NULL, NULL) != LLM_OK) break;
        double t3 = now_ms();
        pf[r] = n_prompt * 1e3 / (t1 - t0);
        ttft[r] = t2 - t0;
        dec[r] = produced > 1 ? (produced - 1) * 1e3 / (t3 - t2) : 0;
        /* second session, same prompt: whole blocks from the prefix cache */
        llm_session *s2;
        llm_session_new(m, &sp, &s2);
        t0 = now_ms();
        llm_prefill(s2, prompt, n_prompt);
        pf2[r] = now_ms() - t0;
        llm_telemetry tel;
        llm_session_telemetry(s2, &tel);
        reused = tel.reused_tokens;
        /* second turn: the context plus 32 new tokens, only the tail computed */
        int n_ctx_now = llm_session_n_past(s);
        llm_token *ctx = malloc((size_t)(n_ctx_now + 32) * sizeof *ctx);
        llm_session_tokens(s, ctx, n_ctx_now);
        for (int i = 0; i < 32; i++) ctx[n_ctx_now + i] = 2000 + i;
        t0 = now_ms();
        llm_prefill_context(s, ctx, n_ctx_now + 32);
        turn2[r] = now_ms() - t0;
        llm_session_telemetry(s, &tel);
        turn2_tokens = tel.prefill_tokens;
        free(ctx);
        /* embeddings */
        const char *texts[8] = {"The quick brown fox jumps over the lazy dog.", "Embeddings map text to vectors.",
                                "Paris is the capital of France.", "Water boils at 100 degrees Celsius.",
                                "A short sentence.", "Another example of a sentence to embed here.",
                                "Retrieval augmented generation needs good vectors.", "The end."};
        float *vec = malloc(8 * (size_t)in.n_embd * sizeof *vec);
        t0 = now_ms();
        llm_embed(m, texts, 8, LLM_POOLING_MEAN, true, vec, (size_t)in.n_embd);
        emb[r] = 8 * 1e3 / (now_ms() - t0);
        free(vec);
        llm_session_free(s2);
        llm_session_free(s);
        llm_model_free(m);
        printf("run %d: load %.0f ms | prefill %d tok %.1f tok/s | ttft %.0f ms | decode %.1f tok/s | "
               "same prompt again %.1f ms (%d reused) | turn 2 %.1f ms (%d computed) | embed %.1f texts/s\n",
               r, load[r], n_prompt, pf[r], ttft[r], dec[r], pf2[r], reused, turn2[r], turn2_tokens, emb[r]);
    }
    printf("model: %s\n", info_line);
    printf("median of %d: load %.0f ms, prefill %.1f tok/s (%d tokens), ttft %.0f ms, decode %.1f tok/s, "
           "cached re-prefill %.1f ms, turn-2 prefill %.1f ms, embed %.1f texts/s\n",
           reps, median(load, reps), median(pf, reps), n_prompt, median(ttft, reps), median(dec, reps),
           median(pf2, reps), median(turn2, reps), median(emb, reps));
    free(load);
    free(pf);
    free(ttft);
    free(dec);
    free(pf2);
    free(turn2);
    free(emb);
    free(prompt);
    return 0;
}
