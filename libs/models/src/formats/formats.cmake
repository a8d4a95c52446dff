# Model file formats and the model descriptor (owner: models/formats helper).
# Paths are relative to libs/models.
set(LLM_MODELS_FORMAT_SOURCES
  src/formats/util.c
  src/formats/gguf.c
  src/formats/gguf_values.c)
