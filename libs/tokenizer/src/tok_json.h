/*
 * tok_json.h -- PRIVATE to llama-tokenizer: a small, strict, read-only JSON
 * reader (RFC 8259), so that reading tokenizer.json needs no JSON library.
 *
 * llm__tj_parse() reads the whole text once, in time and memory linear in
 * its size (tokenizer.json files reach 10+ MB), into a tree of tj nodes
 * allocated from one arena; llm__tj_free() releases all of it. Nothing
 * points into the caller's text afterwards.
 *
 * Strict: exactly one value (any type) with optional white space around it;
 * no comments, trailing commas, single quotes, NaN or leading zeros; strings
 * must be valid UTF-8 without raw control characters, \u escapes must pair
 * surrogates correctly (\u0000 is allowed: such a string holds a NUL, so
 * NUL-terminated readers see it cut there); an object may not repeat a key;
 * integers (no fraction, no exponent) must fit int64_t and other numbers a
 * finite double; containers nest at most LLM__TJ_MAX_DEPTH deep. Anything
 * else is LLM_ERR_BAD_FORMAT with a message naming the problem, its line,
 * column and byte offset.
 *
 * Lookups are by linear scan of an object's members (tokenizer.json looks
 * keys up only in small objects and iterates the big ones).
 */
#ifndef LLM_TOK_JSON_H
#define LLM_TOK_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "llama/status.h"

/* Containers deeper than this are rejected (tokenizer.json nests < 10). */
#define LLM__TJ_MAX_DEPTH 128

typedef enum llm__tj_type {
    LLM__TJ_NULL,
    LLM__TJ_FALSE,
    LLM__TJ_TRUE,
    LLM__TJ_INT,    /* a number without fraction or exponent: num.i */
    LLM__TJ_REAL,   /* any other number: num.d */
    LLM__TJ_STRING,
    LLM__TJ_ARRAY,
    LLM__TJ_OBJECT
} llm__tj_type;

typedef struct llm__tj llm__tj;
struct llm__tj {
    const char *key;      /* a member of an object: its key (decoded, NUL-terminated); else NULL */
    const llm__tj *next;  /* the parent's next element or member; NULL after the last */
    union {
        const char *s;        /* STRING: decoded bytes [n], NUL-terminated */
        const llm__tj *first; /* ARRAY, OBJECT: first element or member; NULL when empty */
    } u;
    union {
        int64_t i;            /* INT */
        double d;             /* REAL */
    } num;
    size_t n;             /* STRING: length in bytes; ARRAY, OBJECT: number of children */
    size_t key_len;       /* bytes of key */
    llm__tj_type type;
};

typedef struct llm__tj_doc llm__tj_doc;

/* Parses text[0..len) (need not be NUL-terminated). On success *doc owns
 * every node and *root is the top-level value. On failure *doc and *root are
 * NULL, and the tokenizer's thread message (llm_tokenizer_last_error()) is
 * "<name>: <problem> at line L column C (byte B)". Returns LLM_OK,
 * LLM_ERR_BAD_FORMAT, LLM_ERR_NO_MEMORY. */
llm_status llm__tj_parse(const char *text, size_t len, const char *name, llm__tj_doc **doc, const llm__tj **root);

/* Frees a document and all its nodes. NULL is harmless. */
void llm__tj_free(llm__tj_doc *doc);

/* Accessors. Every one accepts NULL (a missing value) and answers "no". */

/* Member `key` of an object, or NULL (not an object, or no such key). */
const llm__tj *llm__tj_get(const llm__tj *obj, const char *key);
/* Element i of an array (O(i)), or NULL. */
const llm__tj *llm__tj_at(const llm__tj *arr, size_t i);
/* A string's bytes (NUL-terminated), or NULL when v is not a string. */
static inline const char *llm__tj_str(const llm__tj *v) {
    return v && v->type == LLM__TJ_STRING ? v->u.s : NULL;
}
static inline int llm__tj_is(const llm__tj *v, llm__tj_type t) { return v && v->type == t; }
static inline int llm__tj_is_bool(const llm__tj *v) {
    return v && (v->type == LLM__TJ_TRUE || v->type == LLM__TJ_FALSE);
}
static inline int llm__tj_is_number(const llm__tj *v) {
    return v && (v->type == LLM__TJ_INT || v->type == LLM__TJ_REAL);
}
/* A number as double (an INT converted), 0 for anything else. */
static inline double llm__tj_num(const llm__tj *v) {
    return !v ? 0.0 : v->type == LLM__TJ_INT ? (double)v->num.i : v->type == LLM__TJ_REAL ? v->num.d : 0.0;
}
/* Children of an array or object (0 for anything else). */
static inline size_t llm__tj_size(const llm__tj *v) {
    return v && (v->type == LLM__TJ_ARRAY || v->type == LLM__TJ_OBJECT) ? v->n : 0;
}
/* First child of an array or object, NULL when empty or not a container;
 * the rest follow through ->next. */
static inline const llm__tj *llm__tj_first(const llm__tj *v) {
    return v && (v->type == LLM__TJ_ARRAY || v->type == LLM__TJ_OBJECT) ? v->u.first : NULL;
}

#endif
