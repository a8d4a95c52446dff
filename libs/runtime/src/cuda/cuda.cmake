# CUDA backend sources (paths relative to libs/runtime), included by
# libs/runtime/CMakeLists.txt only when LLM_CUDA_ENABLED (cmake/LlmCuda.cmake).
# One kernel family per file; the .cu files export plain C entry points.
set(LLM_RUNTIME_CUDA_SOURCES
  src/cuda/backend_cuda.cu
  src/cuda/get_rows_cuda.cu
  src/cuda/matmul_cuda.cu
  src/cuda/norm_cuda.cu
  src/cuda/rope_cuda.cu
  src/cuda/elementwise_cuda.cu
  src/cuda/softmax_cuda.cu
  src/cuda/attention_cuda.cu
  src/cuda/argmax_cuda.cu
  src/cuda/random_cuda.cu)

# Called once the llama-runtime target exists: builds the CUDA backend as the
# run-time module libllm-cuda.so (cuda_module.h), the only binary that links
# the CUDA libraries. It sits beside the programs in the build tree (bin/) and
# in LIBDIR/llm when installed; llama-runtime (cuda_loader.c) dlopen()s it.
function(llm_runtime_cuda_extra)
  set(_rt ${PROJECT_SOURCE_DIR}/libs/runtime)
  set(_src "")
  foreach(f IN LISTS LLM_RUNTIME_CUDA_SOURCES LLM_RUNTIME_DTYPE_SOURCES)
    list(APPEND _src ${_rt}/${f})
  endforeach()
  add_library(llm-cuda MODULE ${_src} ${_rt}/src/cuda/cuda_module.c)
  # (dtype.cmake's -ffp-contract=off on dequant.c/quant.c is a source property
  # of this directory, so it holds here too.)
  target_include_directories(llm-cuda PRIVATE ${_rt}/include ${_rt}/src
    ${PROJECT_SOURCE_DIR}/libs/common/include)
  target_link_libraries(llm-cuda PRIVATE CUDA::cudart CUDA::cublas CUDA::curand ${LLM_LIBM})
  target_compile_definitions(llm-cuda PRIVATE LLM_HAVE_CUDA=1)
  target_compile_definitions(llama-runtime PRIVATE LLM_CUDA_MODULE_BUILT=1)
  set_target_properties(llm-cuda PROPERTIES
    OUTPUT_NAME llm-cuda
    PREFIX lib
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    CUDA_EXTENSIONS OFF
    CUDA_SEPARABLE_COMPILATION OFF
    CUDA_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden)
  # Host-side warnings through nvcc; -Werror with LLM_WERROR (nvcc's own
  # diagnostics too). No fast math: kernels rely on IEEE division/sqrt and on
  # explicit rounding intrinsics to match the CPU reference.
  set(_w -Wall,-Wextra,-Wshadow)
  set(_cuda_opts -Xcompiler=${_w} --expt-relaxed-constexpr)
  if(LLM_WERROR)
    list(APPEND _cuda_opts -Xcompiler=-Werror --Werror=all-warnings)
  endif()
  target_compile_options(llm-cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${_cuda_opts}>)
  llm_target_warnings(llm-cuda)
  # Every program that may use the backend is built with the module beside it.
  add_dependencies(llama-runtime llm-cuda)
  install(TARGETS llm-cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/llm)
endfunction()
