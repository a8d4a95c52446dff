/*
 * fuzz_app_entry.c -- entry points over the programs' parsing functions
 * (issue 19): llm-chat's command line (chat_parse_args, and through it the
 * shared option parsers of apps/common) and llm-embed's input records
 * (embed_input_next, plain lines and JSONL). Shared by the libFuzzer
 * harnesses (fuzz_chat_args.c, fuzz_embed_input.c) and the corpus replay test
 * (tests/fuzz/test_fuzz_app_corpus.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat.h"
#include "embed.h"
#include "fuzz_app_entries.h"

#define CHECK(c)                                                                 \
    do {                                                                         \
        if (!(c)) {                                                              \
            fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
            abort();                                                             \
        }                                                                        \
    } while (0)

int llm_fuzz_chat_args_one(const uint8_t *data, size_t size) {
    /* argv: the input split at NUL bytes, after "llm-chat". */
    char *buf = malloc(size + 1);
    char *argv[66];
    int argc = 0;
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    argv[argc++] = (char *)"llm-chat";
    for (size_t i = 0; i <= size && argc < 65;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    chat_opts o;
    int r = chat_parse_args(argc, argv, &o);
    CHECK(r == -1 || r == 0 || r == 1);
    if (r == 0) {
        /* What the parser accepted is what the engine accepts. */
        CHECK(o.n_predict == -1 || o.n_predict >= 1);
        CHECK(o.n_ctx >= 0 && o.n_threads >= 0 && o.n_batch >= 0);
        CHECK(o.sp.temperature >= 0.0f && o.sp.temperature <= 100.0f);
        CHECK(o.sp.top_p >= 0.0f && o.sp.top_p <= 1.0f && o.sp.min_p >= 0.0f && o.sp.min_p <= 1.0f);
        CHECK(o.sp.repeat_penalty > 0.0f && o.sp.repeat_penalty <= 100.0f);
        CHECK(o.sp.top_k >= 0 && o.sp.repeat_last_n >= 0);
        CHECK(!o.prompt || *o.prompt);
    }
    free(buf);
    return 0;
}

int llm_fuzz_embed_input_one(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    bool jsonl = data[0] & 1;
    /* fmemopen needs a non-empty buffer: an empty input is one NUL-free byte
     * short of a line, so give it a lone newline instead. */
    const void *text = size > 1 ? (const void *)(data + 1) : "\n";
    size_t len = size > 1 ? size - 1 : 1;
    void *copy = malloc(len);
    if (!copy) return 0;
    memcpy(copy, text, len);
    FILE *f = fmemopen(copy, len, "rb");
    if (!f) {
        free(copy);
        return 0;
    }
    embed_input in;
    memset(&in, 0, sizeof in);
    in.f = f;
    in.name = "<fuzz>";
    in.jsonl = jsonl;
    for (int guard = 0; guard < 100000; guard++) {
        embed_rec r;
        int k = embed_input_next(&in, &r);
        CHECK(k == -1 || k == 0 || k == 1);
        if (k != 1) break;
        CHECK(r.id_json && r.text && *r.text && r.line >= 1);
        if (!jsonl) CHECK(!strchr(r.text, '\n'));
        embed_rec_free(&r);
    }
    CHECK((uint64_t)in.bytes_read <= (uint64_t)len);
    fclose(f);
    free(copy);
    return 0;
}
