/*
 * fuzz_chat_template_entry.c -- renders a fuzz-provided chat template with
 * the sandboxed Jinja interpreter (and the AUTO family fallback).
 *
 * Input layout: template bytes, then optionally a NUL and up to three message
 * contents separated by NULs (they replace the fixed conversation's texts).
 * The render must return OK or an error with a message, never hang (the
 * interpreter's step/output/memory bounds), and on OK the text must match
 * between the allocating and the caller-buffer variants.
 */
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "fuzz_entries.h"
#include "llama/chat.h"

/* Harness code: a broken invariant aborts with a message on stderr. */
#define FZ_CHECK(c)                                                                     \
    do {                                                                                \
        if (!(c)) {                                                                     \
            fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
            abort();                                                                    \
        }                                                                               \
    } while (0)

int llm_fuzz_chat_template_one(const uint8_t *data, size_t size) {
    /* NUL-terminated copies of the pieces. */
    char *buf = malloc(size + 1);
    FZ_CHECK(buf);
    memcpy(buf, data, size);
    buf[size] = '\0';
    const char *pieces[4] = {buf, NULL, NULL, NULL};
    size_t np = 1;
    for (size_t i = 0; i < size && np < 4; i++)
        if (buf[i] == '\0') pieces[np++] = buf + i + 1;

    llm_chat_message msgs[4] = {
        {"system", pieces[1] ? pieces[1] : "You are terse."},
        {"user", pieces[2] ? pieces[2] : "Hello! {{ not a template }}"},
        {"assistant", pieces[3] ? pieces[3] : "  Hi.\nHow can I help?  "},
        {"user", "What's 2+2?"},
    };
    static const llm_chat_engine engines[2] = {LLM_CHAT_ENGINE_JINJA, LLM_CHAT_ENGINE_AUTO};
    for (int e = 0; e < 2; e++) {
        llm_chat_params p = llm_chat_default_params();
        p.bos_token = "<s>";
        p.eos_token = "</s>";
        p.date = "2026-11-21"; /* reproducible */
        p.add_generation_prompt = e == 1;
        p.engine = engines[e];
        char *out = NULL;
        size_t len = 7;
        llm_status st = llm_chat_render_template_alloc(pieces[0], msgs, 4, &p, &out, &len);
        if (st != LLM_OK) {
            FZ_CHECK(st < 0);
            FZ_CHECK(out == NULL && len == 0);
            FZ_CHECK(llm_chat_last_error()[0] != '\0');
            continue;
        }
        FZ_CHECK(out != NULL && out[len] == '\0');
        /* The caller-buffer variant agrees, including the too-small contract
         * (the template is rendered again: it must be deterministic). */
        char *again = malloc(len + 1);
        FZ_CHECK(again);
        size_t need = 0;
        if (len > 0) {
            FZ_CHECK(llm_chat_render_template(pieces[0], msgs, 4, &p, again, len, &need) ==
                     LLM_ERR_BUFFER_TOO_SMALL);
            FZ_CHECK(need == len && again[0] == '\0');
        }
        FZ_CHECK(llm_chat_render_template(pieces[0], msgs, 4, &p, again, len + 1, &need) == LLM_OK);
        FZ_CHECK(need == len && memcmp(again, out, len + 1) == 0);
        free(again);
        free(out);
    }
    llm_chat_template t;
    (void)llm_chat_template_detect(pieces[0], &t);
    free(buf);
    return 0;
}
