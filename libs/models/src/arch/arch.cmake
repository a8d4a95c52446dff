# Architectures and their forward passes (paths relative to libs/models).
# The shared files are listed here; the families come from arch/archs.def,
# whose every LLM_ARCH("tag", name) line names src/arch/<name>.c, so that
# adding a family is its file plus one line there.
set(LLM_MODELS_ARCH_SOURCES
  src/arch/registry.c
  src/arch/hparams.c
  src/arch/tensor_table.c
  src/arch/net.c
  src/arch/net_error.c
  src/arch/net_weights.c
  src/arch/net_plan.c
  src/arch/net_kv.c
  src/arch/net_state.c
  src/arch/net_forward.c
  src/arch/decoder.c)
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/archs.def _llm_arch_lines REGEX "^LLM_ARCH\\(")
foreach(_llm_arch_line IN LISTS _llm_arch_lines)
  string(REGEX REPLACE "^LLM_ARCH\\(\"[^\"]+\", *([A-Za-z0-9_]+)\\).*$" "\\1" _llm_arch_name "${_llm_arch_line}")
  list(APPEND LLM_MODELS_ARCH_SOURCES src/arch/${_llm_arch_name}.c)
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/archs.def)
