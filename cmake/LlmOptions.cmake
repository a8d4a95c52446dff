# Build options: warnings, -Werror, sanitizers, native code generation.
option(LLM_WERROR "Treat compiler warnings as errors" OFF)
set(LLM_SANITIZE "" CACHE STRING "Sanitizers to build with, comma-separated (address,undefined)")
option(LLM_NATIVE "Compile with -march=native (OFF: portable baseline + run-time dispatch)" OFF)
option(LLM_FUZZ "Build libFuzzer harnesses (needs clang)" OFF)

set(LLM_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    -Wstrict-prototypes -Wmissing-prototypes -Wvla)
if(LLM_WERROR)
  list(APPEND LLM_WARNINGS -Werror)
endif()

# Applied to our own targets only (never to imported code).
function(llm_target_warnings target)
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY")
    return()
  endif()
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:${LLM_WARNINGS}>)
endfunction()

if(LLM_SANITIZE)
  string(REPLACE "," ";" _san_list "${LLM_SANITIZE}")
  foreach(_s IN LISTS _san_list)
    if(NOT _s MATCHES "^(address|undefined|leak|thread)$")
      message(FATAL_ERROR "LLM_SANITIZE: unknown sanitizer '${_s}'")
    endif()
  endforeach()
  # C and C++ only: nvcc would split the comma list (the CUDA sources get host
  # flags through their own cuda.cmake).
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${LLM_SANITIZE};-fno-omit-frame-pointer;-fno-sanitize-recover=all>")
  add_link_options(-fsanitize=${LLM_SANITIZE})
endif()

if(LLM_NATIVE)
  add_compile_options(-march=native)
endif()

if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  add_compile_options($<$<CONFIG:Release>:-O3>)
  # No silent fused multiply-adds: the kernels write every fma they want
  # (fmaf, _mm256_fmadd_ps) because the forward reproduces llama.cpp's
  # rounding bit for bit. gcc in -std=c11 already contracts nothing; clang
  # contracts within expressions by default, so say it for both.
  add_compile_options($<$<COMPILE_LANGUAGE:C>:-ffp-contract=off>)
endif()
