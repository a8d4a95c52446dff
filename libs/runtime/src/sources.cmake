# Sources of the runtime's backend interface, CPU backend and ops
# (paths relative to libs/runtime). The dtype helper lists src/dtype/ itself.
set(LLM_RUNTIME_SOURCES
  src/runtime.c
  src/runtime_error.c
  src/ops.c
  src/ops_encoder.c
  src/ops_ssm.c
  src/cpu/backend_cpu.c
  src/cpu/threadpool.c
  src/cpu/kernels_scalar.c
  src/cpu/kernels_avx2.c
  src/cpu/kernels_avx2_q5.c
  src/cpu/kernels_avx2_kq.c
  src/cpu/kernels_avx2_kq8.c
  src/cpu/kernels_avx2_kq_prep.c
  src/cpu/kernels_avx2_kq_tile.c
  src/cpu/kernels_avx2_q8_0.c
  src/cpu/kernels_avx2_q4_1.c
  src/cpu/attention_avx2.c
  src/cpu/attention_avx512.c
  src/cpu/kernels_avx2_q4_0.c
  src/cpu/kernels_avx2_sgemm.c
  src/cpu/kernels_avx2_q3k.c
  src/cpu/kernels_avx2_q2k.c
  src/cpu/kernels_avx2_tofloat.c
  src/cpu/kernels_avx2_expf.c
  src/cpu/matmul_cpu.c
  src/cpu/gemm_cpu.c
  src/cpu/gemm_avx2.c
  src/cpu/gemm_avx512.c
  src/cpu/ops_cpu.c
  src/cpu/gelu_table.c
  src/cpu/attention_cpu.c
  src/cpu/attention_fa.c
  src/cpu/encoder_cpu.c
  src/cpu/encoder_avx2.c
  src/cpu/ssm_cpu.c
  src/ops_moe.c
  src/cpu/moe_cpu.c)

# Called by libs/runtime/CMakeLists.txt once the target exists. SIMD variants
# are compiled per file with their ISA flags and chosen at run time, so the
# portable build still runs on CPUs without them.
function(llm_runtime_extra)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|i.86)$")
    set_source_files_properties(src/cpu/kernels_avx2.c src/cpu/kernels_avx2_q5.c src/cpu/kernels_avx2_kq.c
      src/cpu/kernels_avx2_kq8.c src/cpu/kernels_avx2_kq_prep.c src/cpu/kernels_avx2_kq_tile.c src/cpu/kernels_avx2_q8_0.c src/cpu/kernels_avx2_q4_1.c src/cpu/kernels_avx2_q4_0.c src/cpu/kernels_avx2_sgemm.c
      src/cpu/kernels_avx2_q3k.c src/cpu/kernels_avx2_q2k.c src/cpu/kernels_avx2_tofloat.c src/cpu/kernels_avx2_expf.c src/cpu/attention_avx2.c src/cpu/encoder_avx2.c PROPERTIES
      COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
    set_source_files_properties(src/cpu/gemm_avx2.c PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
    set_source_files_properties(src/cpu/attention_avx512.c PROPERTIES
      COMPILE_OPTIONS "-mavx512f;-mavx2;-mfma;-mf16c")
    set_source_files_properties(src/cpu/gemm_avx512.c PROPERTIES
      COMPILE_OPTIONS "-mavx512f;-mavx512dq;-mavx2;-mfma;-mf16c")
    target_compile_definitions(llama-runtime PRIVATE LLM_CPU_AVX2_BUILT=1)
  endif()
endfunction()
