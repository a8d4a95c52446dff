#include "llama/runtime.h"

const char *llm_runtime_version(void) { return "0.1.0"; }
