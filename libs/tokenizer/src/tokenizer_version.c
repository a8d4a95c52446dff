#include "llama/tokenizer.h"

const char *llm_tokenizer_version(void) { return "0.1.0"; }
