# Architectures and their forward passes (paths relative to libs/models).
set(LLM_MODELS_ARCH_SOURCES
  src/arch/net.c
  src/arch/llama.c)
