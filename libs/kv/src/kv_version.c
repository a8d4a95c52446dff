#include "llama/kv.h"

const char *llm_kv_version(void) { return "0.1.0"; }
