/* chat_internal.h -- private helpers shared by the chat-template sources. */
#ifndef LLM_CHAT_INTERNAL_H
#define LLM_CHAT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "llama/chat.h"

/* A growable byte string. After any allocation failure `failed` is set and
 * further appends are ignored, so renderers check once at the end. */
typedef struct llm__sb {
    char *data; /* [cap] bytes, NUL-terminated at [len] while !failed */
    size_t len;
    size_t cap;
    bool failed;
} llm__sb;

void llm__sb_put(llm__sb *sb, const char *s, size_t n);
void llm__sb_puts(llm__sb *sb, const char *s);
void llm__sb_free(llm__sb *sb);

/* Python's str.strip() with no argument (which is also jinja's `trim`):
 * returns the sub-range of s[0..n) without leading and trailing characters
 * for which str.isspace() is true, Unicode ones included. s is valid UTF-8. */
void llm__py_strip(const char *s, size_t n, size_t *begin, size_t *end);
/* Append s stripped as above. */
void llm__sb_put_stripped(llm__sb *sb, const char *s);

/* True when s (NUL-terminated) is valid UTF-8 (no overlongs, surrogates or
 * code points above U+10FFFF). */
bool llm__chat_utf8_valid(const char *s);

/* Record the thread's last error (printf-style) and return st. */
llm_status llm__chat_fail(llm_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void llm__chat_clear_error(void);

struct json_t; /* jansson */

/* What a renderer gets: validated messages and resolved parameters. */
typedef struct llm__chat_ctx {
    const llm_chat_message *msgs; /* [n] */
    size_t n;
    const char *bos;    /* never NULL */
    const char *eos;    /* never NULL */
    bool add_gen;
    const char *date;   /* "YYYY-MM-DD", never NULL */
    /* Jinja only: a JSON object whose every key becomes a template variable
     * (after, hence overriding, the ones above), or NULL. */
    const struct json_t *vars;
} llm__chat_ctx;

/* Render family tmpl into sb (appending). Returns LLM_OK or the error the
 * model's template would raise (LLM_ERR_INVALID_ARG with a message). */
llm_status llm__chat_render_family(llm_chat_template tmpl, const llm__chat_ctx *ctx, llm__sb *sb);

#endif /* LLM_CHAT_INTERNAL_H */
