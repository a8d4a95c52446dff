/*
 * llama/types.h -- the few value types more than one public header needs.
 *
 * A token id and a chat message mean the same thing to the tokenizer, the
 * chat templates and the engine, so they are defined once, here, and every
 * header that uses them includes this one. A program may therefore include
 * llama/engine.h and llama/chat.h (or llama/tokenizer.h) in one file:
 *
 *     #include "llama/engine.h"
 *     #include "llama/chat.h"
 *     llm_chat_message m = {"user", "Hi"};   // one type for both APIs
 *
 * This header includes only standard C headers and is safe to include from
 * C11 and C++.
 */
#ifndef LLAMA_TYPES_H
#define LLAMA_TYPES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A token id: an index into a vocabulary, 0 <= id < n_vocab. */
typedef int32_t llm_token;

/* The one "no such token" value (an absent special token, no token yet). */
#define LLM_TOKEN_NULL ((llm_token)-1)

/* One message of a conversation. Both strings are NUL-terminated UTF-8 and
 * are only read during the call that takes them. Roles are free text: the
 * usual ones are "system", "user" and "assistant"; what a template does with
 * another role ("tool", ...) is what the model's template does (often an
 * error). */
typedef struct llm_chat_message {
    const char *role;
    const char *content;
} llm_chat_message;

#ifdef __cplusplus
}
#endif
#endif /* LLAMA_TYPES_H */
