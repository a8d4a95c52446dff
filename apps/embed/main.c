/* llm-embed: sentence embeddings for retrieval pipelines, on llama/engine.h.
 *
 *   llm-embed [options] [FILE...]        embed lines (or JSONL records)
 *   llm-embed search --index X.npy --query TEXT [-k N]
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "embed.h"
#include "llama/engine.h"
#include "llama/engine_embed.h"


static void usage(FILE *f) {
    fprintf(f,
        "usage: llm-embed [options] [FILE...]\n"
        "       llm-embed search --index OUT.npy --query TEXT [-k N] [options]\n"
        "\n"
        "Computes one embedding vector per text. Input (FILEs, or stdin when none or '-'):\n"
        "one text per line (ids are 0-based line numbers; blank lines are skipped but keep\n"
        "their number), or JSONL (--jsonl, or a file named *.jsonl): one JSON object per line\n"
        "with \"id\" (string or integer) and \"text\". Output: JSONL lines {\"id\":...,\"embedding\":[...]} on stdout\n"
        "or in -o FILE.jsonl, or with -o FILE.npy a float32 [n][dim] NumPy matrix plus\n"
        "FILE.ids.txt (one id per line, same order). Files are written beside their target\n"
        "and renamed when complete (an interrupted run leaves nothing); -o must name a\n"
        "regular file or a new one (use '-' or no -o for stdout). A text may not contain\n"
        "a NUL byte: such input is refused with its line number.\n"
        "\n"
        "The default model is the sentence-embedding model all-MiniLM-L6-v2 (BERT): its\n"
        "own pooling, normalization and maximum length (256 tokens) come from its files;\n"
        "longer texts are truncated as sentence-transformers does, and the count is printed.\n"
        "A chat (decoder) model also works: its last hidden states, mean-pooled.\n"
        "\n"
        "options:\n"
        "  -m, --model PATH      GGUF file or Hugging Face folder (default: $LLM_EMBED_MODEL,\n"
        "                        else ${LLM_MODELS_DIR:-${XDG_CACHE_HOME:-~/.cache}/llm/models}/\n"
        "                        " EMBED_DEFAULT_MODEL ")\n"
        "  -o, --output PATH     output file: .npy for NumPy, anything else JSONL (default stdout)\n"
        "      --jsonl           input records are JSONL with \"id\" and \"text\" (automatic for\n"
        "                        files named *.jsonl)\n"
        "      --pooling P       model (default: the model's own), mean, cls, last, max or\n"
        "                        mean_sqrt_len\n"
        "      --normalize       unit L2 norm (default: as the model's pipeline says; decoders yes)\n"
        "      --no-normalize    keep raw pooled vectors\n"
        "  -b, --batch N         texts per engine call (default 32)\n"
        "  -t, --threads N       CPU threads, at most the number of cores (default: all)\n"
        "      --backend NAME    cpu, cuda or auto (default auto)\n"
        "  -q, --quiet           no progress bar\n"
        "  -h, --help            this help\n"
        "\n"
        "search mode (ranks the rows of an index made with -o X.npy by cosine similarity;\n"
        "use the same model and --pooling as when building it; default model as above):\n"
        "      --index X.npy     the matrix (ids are read from X.ids.txt)\n"
        "      --query TEXT      the query text\n"
        "  -k N                  how many results (default 5); prints 'score<TAB>id' lines\n"
        "\n"
        "Get the default model with: scripts/setup.sh\n");
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct progress {
    bool on;
    double t0;
    uint64_t total_bytes; /* 0 = unknown (stdin) */
} progress;

static void progress_show(const progress *p, uint64_t done_bytes, uint64_t n) {
    if (!p->on) return;
    double el = now_s() - p->t0;
    double rate = el > 0 ? (double)n / el : 0;
    if (p->total_bytes) {
        double frac = (double)done_bytes / (double)p->total_bytes;
        if (frac > 1) frac = 1;
        int w = 30, fill = (int)(frac * w);
        double eta = frac > 0 ? el * (1 - frac) / frac : 0;
        fprintf(stderr, "\r[%.*s%*s] %3.0f%% %llu texts %.1f/s ETA %.0fs ", fill,
                "##############################", w - fill, "", frac * 100, (unsigned long long)n,
                rate, eta);
    } else {
        fprintf(stderr, "\r%llu texts %.1f/s ", (unsigned long long)n, rate);
    }
}

typedef struct batch {
    embed_rec *recs;
    const char **texts;
    float *vecs; /* [cap][dim] */
    size_t n, cap;
} batch;

static int flush_batch(llm_model *m, batch *b, llm_pooling pool, bool norm, size_t dim,
                       embed_output *out, const char *src) {
    if (!b->n) return 0;
    for (size_t i = 0; i < b->n; i++) b->texts[i] = b->recs[i].text;
    llm_status st = llm_embed(m, b->texts, b->n, pool, norm, b->vecs, dim);
    if (st != LLM_OK) {
        fprintf(stderr, "\nllm-embed: %s (batch starting at %s line %ld): %s\n", llm_status_str(st),
                src, b->recs[0].line, llm_last_error());
        return -1;
    }
    for (size_t i = 0; i < b->n; i++) {
        if (embed_output_write(out, b->recs[i].id_json, b->vecs + i * dim)) return -1;
        embed_rec_free(&b->recs[i]);
    }
    b->n = 0;
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "search") == 0) return embed_search_main(argc - 1, argv + 1);

    const char *model_path = NULL, *out_path = NULL, *backend = "auto";
    bool jsonl = false, quiet = false;
    int normalize = -1; /* -1: the model's pipeline decides */
    llm_pooling pooling = LLM_POOLING_MODEL;
    int32_t batch_n = 32, threads = 0;
    const char **files = calloc((size_t)argc, sizeof *files);
    size_t n_files = 0;
    if (!files) return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV()                                                           \
    do {                                                                  \
        if (!v) {                                                         \
            fprintf(stderr, "llm-embed: option %s needs a value\n", a);   \
            free(files);                                                  \
            return 2;                                                     \
        }                                                                 \
        i++;                                                              \
    } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            free(files);
            return app_finish_stdout("llm-embed");
        } else if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            NEEDV();
            model_path = v;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            NEEDV();
            out_path = v;
        } else if (!strcmp(a, "--backend")) {
            NEEDV();
            backend = v;
        } else if (!strcmp(a, "--jsonl")) {
            jsonl = true;
        } else if (!strcmp(a, "--no-normalize")) {
            normalize = 0;
        } else if (!strcmp(a, "--normalize")) {
            normalize = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (!strcmp(a, "--pooling")) {
            NEEDV();
            if (llm_pooling_from_string(v, &pooling) != LLM_OK) {
                fprintf(stderr, "llm-embed: %s\n", llm_last_error());
                free(files);
                return 2;
            }
        } else if (!strcmp(a, "-b") || !strcmp(a, "--batch")) {
            NEEDV();
            if (app_parse_i32("llm-embed", a, v, 1, 4096, &batch_n)) {
                free(files);
                return 2;
            }
        } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
            NEEDV();
            if (app_parse_threads("llm-embed", a, v, &threads)) {
                free(files);
                return 2;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "llm-embed: unknown option '%s' (try --help)\n", a);
            free(files);
            return 2;
        } else {
            files[n_files++] = a;
        }
#undef NEEDV
    }

    bool npy = false;
    if (out_path) {
        size_t L = strlen(out_path);
        npy = L >= 4 && strcmp(out_path + L - 4, ".npy") == 0;
    }
    if (out_path && app_file_check("llm-embed", out_path)) {
        free(files);
        return 1;
    }
    progress prog = {.on = !quiet && isatty(STDERR_FILENO), .t0 = 0, .total_bytes = 0};
    for (size_t i = 0; i < n_files; i++) {
        struct stat st;
        if (strcmp(files[i], "-") != 0 &&
            (app_check_input_file("llm-embed", files[i]) || stat(files[i], &st) != 0)) {
            free(files);
            return 1;
        }
        if (strcmp(files[i], "-") != 0) prog.total_bytes += (uint64_t)st.st_size;
        else prog.total_bytes = 0;
    }
    if (n_files == 0) files[n_files++] = "-";

    llm_model *m = NULL;
    if (embed_load_model(model_path, backend, (int32_t)threads, &m)) {
        free(files);
        return 1;
    }
    llm_model_info info;
    llm_model_get_info(m, &info);
    size_t dim = (size_t)info.n_embd;
    llm_embed_info ei;
    if (llm_model_embed_info(m, &ei) != LLM_OK && pooling == LLM_POOLING_MODEL) {
        fprintf(stderr, "llm-embed: %s (choose one with --pooling)\n", llm_last_error());
        free(files);
        llm_model_free(m);
        return 1;
    }
    if (pooling == LLM_POOLING_MODEL) pooling = ei.pooling;
    if (normalize < 0) normalize = ei.normalize;
    llm_embed_stats stats0;
    llm_embed_telemetry(m, &stats0);

    batch b = {0};
    b.cap = (size_t)batch_n;
    b.recs = calloc(b.cap, sizeof *b.recs);
    b.texts = calloc(b.cap, sizeof *b.texts);
    b.vecs = malloc(b.cap * dim * sizeof *b.vecs);
    embed_output out;
    int rc = 1;
    if (!b.recs || !b.texts || !b.vecs) {
        fprintf(stderr, "llm-embed: out of memory\n");
        goto done_nout;
    }
    if (embed_output_open(&out, npy ? OUT_NPY : OUT_JSONL, out_path, dim)) goto done_nout;
    bool to_stdout = out.out.f == stdout;

    prog.t0 = now_s();
    uint64_t n_done = 0, bytes_before = 0;
    embed_input in = {0};
    for (size_t fi = 0; fi < n_files; fi++) {
        bool is_stdin = strcmp(files[fi], "-") == 0;
        int64_t next_index = in.next_index;
        memset(&in, 0, sizeof in);
        in.next_index = next_index;
        in.f = is_stdin ? stdin : fopen(files[fi], "rb");
        in.name = is_stdin ? "<stdin>" : files[fi];
        const size_t fl = strlen(files[fi]);
        in.jsonl = jsonl || (fl >= 6 && strcmp(files[fi] + fl - 6, ".jsonl") == 0);
        if (!in.f) {
            fprintf(stderr, "llm-embed: cannot open %s: %s\n", files[fi], strerror(errno));
            goto fail;
        }
        for (;;) {
            embed_rec r;
            int k = embed_input_next(&in, &r);
            if (k < 0) {
                if (!is_stdin) fclose(in.f);
                goto fail;
            }
            if (k == 0) break;
            b.recs[b.n++] = r;
            if (b.n == b.cap) {
                if (flush_batch(m, &b, pooling, normalize, dim, &out, in.name)) {
                    if (!is_stdin) fclose(in.f);
                    goto fail;
                }
                n_done += b.cap;
                progress_show(&prog, bytes_before + in.bytes_read, n_done);
            }
        }
        size_t pending = b.n;
        if (flush_batch(m, &b, pooling, normalize, dim, &out, in.name)) {
            if (!is_stdin) fclose(in.f);
            goto fail;
        }
        n_done += pending;
        bytes_before += in.bytes_read;
        progress_show(&prog, bytes_before, n_done);
        if (!is_stdin) fclose(in.f);
    }
    if (embed_output_commit(&out)) goto done;
    if (to_stdout && app_finish_stdout("llm-embed") != APP_EXIT_OK) goto done;
    if (prog.on) fputc('\n', stderr);
    llm_embed_stats stats1;
    llm_embed_telemetry(m, &stats1);
    if (stats1.truncated_texts > stats0.truncated_texts)
        fprintf(stderr, "llm-embed: %lld texts longer than the model's %d tokens were truncated (%lld tokens dropped)\n",
                (long long)(stats1.truncated_texts - stats0.truncated_texts), ei.max_tokens,
                (long long)(stats1.truncated_tokens - stats0.truncated_tokens));
    fprintf(stderr, "llm-embed: %llu vectors of dim %zu (%s pooling%s) in %.2f s%s%s\n",
            (unsigned long long)n_done, dim,
            pooling == LLM_POOLING_MEAN  ? "mean"
            : pooling == LLM_POOLING_CLS ? "cls"
            : pooling == LLM_POOLING_MAX ? "max"
            : pooling == LLM_POOLING_MEAN_SQRT_LEN ? "mean_sqrt_len"
                                         : "last",
            normalize ? ", normalized" : "", now_s() - prog.t0, to_stdout ? "" : " -> ",
            to_stdout ? "" : out_path);
    rc = 0;
    goto done;
fail:
    embed_output_abort(&out);
done:
done_nout:
    for (size_t i = 0; i < b.n; i++) embed_rec_free(&b.recs[i]);
    free(b.recs);
    free(b.texts);
    free(b.vecs);
    free(files);
    llm_model_free(m);
    return rc;
}
