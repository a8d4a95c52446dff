#include "llama/engine.h"

const char *llm_engine_version(void) { return "0.1.0"; }
