/* inspect.h -- llm-inspect's printing helpers (print.c). */
#ifndef LLM_APPS_INSPECT_H
#define LLM_APPS_INSPECT_H

#include <stdio.h>

#include "llama/models.h"

typedef struct inspect_opts {
    unsigned max_array; /* array elements shown before "..." */
    int show_tensors;
} inspect_opts;

void inspect_print_gguf(FILE *out, const llm_gguf *g, const inspect_opts *o);
void inspect_print_safetensors(FILE *out, const llm_safetensors *st, const inspect_opts *o);
void inspect_print_desc(FILE *out, const llm_model_desc *d, const inspect_opts *o);

#endif
