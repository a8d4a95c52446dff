#include "llama/models.h"

const char *llm_models_version(void) { return "0.1.0"; }
