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

# Called once the llama-runtime target exists.
function(llm_runtime_cuda_extra)
  target_link_libraries(llama-runtime PUBLIC CUDA::cudart CUDA::cublas CUDA::curand)
  target_compile_definitions(llama-runtime PRIVATE LLM_HAVE_CUDA=1)
  set_target_properties(llama-runtime PROPERTIES
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    CUDA_EXTENSIONS OFF
    CUDA_SEPARABLE_COMPILATION OFF
    CUDA_VISIBILITY_PRESET hidden)
  # Host-side warnings through nvcc; -Werror with LLM_WERROR (nvcc's own
  # diagnostics too). No fast math: kernels rely on IEEE division/sqrt and on
  # explicit rounding intrinsics to match the CPU reference.
  set(_w -Wall,-Wextra,-Wshadow)
  set(_cuda_opts -Xcompiler=${_w} --expt-relaxed-constexpr)
  if(LLM_WERROR)
    list(APPEND _cuda_opts -Xcompiler=-Werror --Werror=all-warnings)
  endif()
  target_compile_options(llama-runtime PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${_cuda_opts}>)
endfunction()
