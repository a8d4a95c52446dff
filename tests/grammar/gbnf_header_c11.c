/* The public header compiles alone as strict C11 (this file includes nothing else first). */
#include "llama/grammar.h"

const char *grammar_header_c11_probe(void);
const char *grammar_header_c11_probe(void) { return llm_grammar_version(); }
