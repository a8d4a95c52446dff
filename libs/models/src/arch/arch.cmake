# Architectures and their forward passes (paths relative to libs/models).
# One architecture = one src/arch/<tag>.c + one line in registry.c + one line here.
set(LLM_MODELS_ARCH_SOURCES
  src/arch/registry.c
  src/arch/hparams.c
  src/arch/tensor_table.c
  src/arch/net.c
  src/arch/llama.c
  src/arch/qwen2.c
  src/arch/qwen3.c
  src/arch/gemma3.c
  src/arch/phi3.c
  src/arch/bert.c
  src/arch/nomic_bert.c
  src/arch/qwen35.c
  src/arch/qwen3moe.c)
