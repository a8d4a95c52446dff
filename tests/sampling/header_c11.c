/* The public header compiles alone as strict C11 (this file includes nothing else first). */
#include "llama/sampling.h"

const char *sampling_header_c11_probe(void);
const char *sampling_header_c11_probe(void) { return llm_sampling_version(); }
