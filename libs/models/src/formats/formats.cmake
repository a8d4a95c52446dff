# Model file formats and the model descriptor (owner: models/formats helper).
# Paths are relative to libs/models. Architectures live in src/arch/ (arch.cmake).
set(LLM_MODELS_FORMAT_SOURCES
  src/formats/util.c
  src/formats/safetensors.c
  src/formats/desc.c
  src/formats/desc_gguf.c
  src/formats/desc_hf.c
  src/formats/desc_load.c)
