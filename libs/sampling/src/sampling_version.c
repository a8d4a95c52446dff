#include "llama/sampling.h"

const char *llm_sampling_version(void) { return "0.1.0"; }
