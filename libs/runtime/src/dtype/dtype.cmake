# Weight and activation types (owner: models/formats helper). Paths are
# relative to libs/runtime. The reference (de)quantizers must not fuse
# multiply-adds: bit-exactness with gguf.quants depends on it.
set(LLM_RUNTIME_DTYPE_SOURCES
  src/dtype/dtype.c
  src/dtype/dequant.c
  src/dtype/quant.c)
set_source_files_properties(src/dtype/dequant.c src/dtype/quant.c
  PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
