/* llm-grammar's parts: input.c reads files with limits and builds the
 * grammar and the vocabulary; check.c matches whole texts; mask_bench.c
 * walks a tokenized text through the matcher and times its masks. Each
 * function prints its own message ("llm-grammar: ...") on stderr and returns
 * an APP_EXIT_* code, so main only dispatches. */
#ifndef LLM_GRAMMAR_TOOL_H
#define LLM_GRAMMAR_TOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "llama/grammar.h"
#include "llama/tokenizer.h"

#define GT_PROG "llm-grammar"

/* Default byte limits of what is read: a grammar or schema, and a text to
 * check or tokenize (--max-bytes changes the latter). */
#define GT_MAX_GRAMMAR_BYTES ((size_t)16 << 20)
#define GT_MAX_TEXT_BYTES ((size_t)256 << 20)

/* Reads path ("-": stdin) whole into a malloc'd NUL-terminated buffer, *len
 * its length without the NUL. Refuses directories, missing files and files
 * longer than max bytes (reading stops there: a huge file or an endless
 * pipe costs max + 1 bytes of memory, no more). NULL after printing why. */
char *gt_read_limited(const char *what, const char *path, size_t max, size_t *len);

/* Where a grammar comes from: exactly one of the four options. */
typedef struct gt_source {
    const char *grammar_file, *grammar_text; /* GBNF */
    const char *schema_file, *schema_text;   /* JSON Schema */
} gt_source;

/* The GBNF text of src (a schema converted) into *out, malloc'd and
 * NUL-terminated, *len its length; *name receives a printable name of the
 * source for messages. Returns APP_EXIT_OK; else, after printing why and
 * with *out NULL, APP_EXIT_FAIL (a file that cannot be read, no memory) or
 * APP_EXIT_USAGE (a schema that does not convert). */
int gt_source_gbnf(const gt_source *src, const char **name, char **out, size_t *len);

/* A grammar vocabulary from a tokenizer: each token's bytes, EOG tokens
 * flagged EOG, control/unused/unknown tokens flagged special. NULL after
 * printing why. */
llm_grammar_vocab *gt_vocab_from_tokenizer(const llm_tokenizer *tok);

/* --check: 0 when every file is in the language, 1 at the first file that
 * is not (offset, line:column or "incomplete" on stderr), 1 on read errors. */
int gt_check_files(const llm_grammar *g, const llm_grammar_vocab *v, char **files, int n_files,
                   size_t max_bytes, int quiet);

/* Length of the UTF-8 sequence at s[0..n) when it is valid (1..4: no
 * overlong form, surrogate or code point past U+10FFFF), else 0. */
size_t gt_utf8_len(const unsigned char *s, size_t n);

/* Writes buf[0..n) to f as a quoted string with C escapes (\\xHH for a byte
 * that is not UTF-8), at most about max bytes of it (then "..."). */
void gt_put_quoted(FILE *f, const char *buf, size_t n, size_t max);

/* --mask-bench: tokenizes the file with tok and times the masks of a cold
 * and a warm pass; verbose prints one line per step. */
int gt_mask_bench(const llm_grammar *g, const llm_grammar_vocab *v, const llm_tokenizer *tok,
                  const char *file, size_t max_bytes, int verbose);

#endif
