# llm_add_test(<name> SOURCES ... LIBS ... [TIMEOUT s] [LABELS ...])
# A Criterion test executable registered with CTest. Tests find the default
# model through LLM_DEFAULT_MODEL and shared test data through LLM_TESTDATA_DIR.
if(NOT CRITERION_FOUND)
  message(FATAL_ERROR "Criterion not found: install libcriterion-dev (scripts/setup.sh does)")
endif()

set(LLM_MODELS_DIR "$ENV{LLM_MODELS_DIR}" CACHE PATH "Where setup puts models")
if(NOT LLM_MODELS_DIR)
  if(DEFINED ENV{XDG_CACHE_HOME})
    set(LLM_MODELS_DIR "$ENV{XDG_CACHE_HOME}/llm/models")
  else()
    set(LLM_MODELS_DIR "$ENV{HOME}/.cache/llm/models")
  endif()
endif()
set(LLM_DEFAULT_MODEL "${LLM_MODELS_DIR}/SmolLM2-135M-Instruct.Q4_1.gguf")
if(NOT LLM_TESTDATA_DIR) # -DLLM_TESTDATA_DIR=... for a checkout (e.g. a git worktree) without shared/ beside it
  get_filename_component(LLM_TESTDATA_DIR "${PROJECT_SOURCE_DIR}/../shared/testdata" ABSOLUTE)
endif()

function(llm_add_test name)
  cmake_parse_arguments(A "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE ${A_LIBS} PkgConfig::CRITERION)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
  llm_target_warnings(${name})
  add_test(NAME ${name} COMMAND ${name} --jobs 1 WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 600)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${A_TIMEOUT}
    LABELS "${A_LABELS}"
    ENVIRONMENT "LLM_DEFAULT_MODEL=${LLM_DEFAULT_MODEL};LLM_TESTDATA_DIR=${LLM_TESTDATA_DIR};LLM_SOURCE_DIR=${PROJECT_SOURCE_DIR};LLM_BINARY_DIR=${PROJECT_BINARY_DIR}")
endfunction()
