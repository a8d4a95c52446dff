/* The public header compiles alone as strict C11 (this file includes nothing else first). */
#include "llama/json_schema.h"

size_t schema_header_c11_probe(void);
size_t schema_header_c11_probe(void) { return llm_json_schema_default_params().max_grammar_bytes; }
