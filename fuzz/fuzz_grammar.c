/*
 * fuzz_grammar.c -- libFuzzer harness of llama-grammar's GBNF side: the
 * input up to the first NUL is a grammar; when it parses, the bytes after
 * the NUL are fed to a matcher one call per byte, with a rollback and a
 * clone on the way, and the grammar is printed and parsed again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llama/grammar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *nul = memchr(data, 0, size);
    size_t glen = nul ? (size_t)(nul - data) : size;
    llm_grammar *g = NULL;
    if (llm_grammar_parse((const char *)data, glen, NULL, &g) != LLM_OK) return 0;
    llm_grammar_matcher_params p = llm_grammar_matcher_default_params();
    p.max_stacks = 256;
    llm_grammar_matcher *m = NULL, *c = NULL;
    if (llm_grammar_matcher_create(g, NULL, &p, &m) == LLM_OK) {
        for (size_t i = glen + 1; i < size; i++) llm_grammar_matcher_accept_bytes(m, data + i, 1);
        llm_grammar_matcher_can_end(m);
        if (llm_grammar_matcher_clone(m, &c) == LLM_OK)
            llm_grammar_matcher_rollback(c, llm_grammar_matcher_n_steps(c) / 2);
    }
    size_t need = 0;
    llm_grammar_print(g, NULL, 0, &need);
    char *text = malloc(need + 1);
    if (text && llm_grammar_print(g, text, need + 1, NULL) == LLM_OK) {
        llm_grammar *g2 = NULL;
        if (llm_grammar_parse(text, need, NULL, &g2) != LLM_OK) abort(); /* printed text must parse */
        llm_grammar_free(g2);
    }
    free(text);
    llm_grammar_matcher_free(c);
    llm_grammar_matcher_free(m);
    llm_grammar_free(g);
    return 0;
}
