/* Out-of-tree example: tokenize TEXT with a Hugging Face tokenizer.json (or a
 * GGUF vocabulary, or a HF folder) using only the installed llama-tokenizer
 * library (it pulls in llama-gguf and llama-common, no JSON library), and
 * print the ids.
 * usage: tokenize_json TOKENIZER_JSON TEXT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llama/tokenizer.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s TOKENIZER_JSON TEXT\n", argv[0]);
        return 2;
    }
    llm_tokenizer *tok = NULL;
    if (llm_tokenizer_load(argv[1], &tok) != LLM_OK) {
        fprintf(stderr, "%s\n", llm_tokenizer_last_error());
        return 1;
    }
    int32_t n = 0;
    llm_status st = llm_tokenizer_encode(tok, argv[2], strlen(argv[2]), LLM_TOKENIZE_PARSE_SPECIAL, NULL, 0, &n);
    llm_token *ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
    if (ids && (st == LLM_OK || st == LLM_ERR_BUFFER_TOO_SMALL))
        st = llm_tokenizer_encode(tok, argv[2], strlen(argv[2]), LLM_TOKENIZE_PARSE_SPECIAL, ids, n, &n);
    if (st != LLM_OK) {
        fprintf(stderr, "%s\n", llm_tokenizer_last_error());
        free(ids);
        llm_tokenizer_free(tok);
        return 1;
    }
    for (int32_t i = 0; i < n; i++) printf(i ? " %d" : "%d", (int)ids[i]);
    printf("\n");
    free(ids);
    llm_tokenizer_free(tok);
    return 0;
}
