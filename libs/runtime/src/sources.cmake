# Sources of the runtime's backend interface, CPU backend and ops
# (paths relative to libs/runtime). The dtype helper lists src/dtype/ itself.
#
# CPU kernels are named for the instruction set they hold: *_x86_256.c are
# 256-bit (AVX2 + FMA + F16C, some functions AVX-VNNI by target attribute),
# *_x86_512.c AVX-512; each list below gets its compile flags in
# llm_runtime_extra().
set(LLM_RUNTIME_CPU_X86_256_SOURCES
  src/cpu/kernels/x86_256.c
  src/cpu/kernels/q4_0_x86_256.c
  src/cpu/kernels/q5_x86_256.c
  src/cpu/kernels/q8_0_x86_256.c
  src/cpu/kernels/kquant_x86_256.c
  src/cpu/kernels/kquant_rows8_x86_256.c
  src/cpu/kernels/kquant_tile_x86_256.c
  src/cpu/kernels/q3_k_x86_256.c
  src/cpu/kernels/q2_k_x86_256.c
  src/cpu/kernels/sgemm_x86_256.c
  src/cpu/kernels/tofloat_x86_256.c
  src/cpu/kernels/expf_x86_256.c
  src/cpu/attention_x86_256.c
  src/cpu/encoder_x86_256.c
  src/cpu/gemm_x86_256.c
  src/cpu/kernels/prep_kquant_x86_256.c)
# AVX-512 F, BW, DQ, VL and VNNI (prep_q5_k_x86_512.c: and GFNI).
set(LLM_RUNTIME_CPU_X86_512_VNNI_SOURCES
  src/cpu/kernels/q4_1_x86_512.c
  src/cpu/kernels/q5_0_x86_512.c
  src/cpu/kernels/q8_0_x86_512.c
  src/cpu/kernels/q4_0_x86_512.c
  src/cpu/kernels/kquant_rows8_x86_512.c
  src/cpu/kernels/kquant_tile_x86_512.c
  src/cpu/kernels/prep_q4_k_x86_512.c
  src/cpu/kernels/prep_q6_k_x86_512.c
  src/cpu/kernels/prep_q5_k_x86_512.c
  src/cpu/kernels/prep_q3_k_x86_512.c
  src/cpu/kernels/prep_q2_k_x86_512.c)
# AVX-512F (attention), F and DQ (gemm).
set(LLM_RUNTIME_CPU_X86_512_SOURCES
  ${LLM_RUNTIME_CPU_X86_512_VNNI_SOURCES}
  src/cpu/attention_x86_512.c
  src/cpu/gemm_x86_512.c)
set(LLM_RUNTIME_SOURCES
  src/runtime.c
  src/runtime_error.c
  src/ops.c
  src/ops_encoder.c
  src/ops_ssm.c
  src/ops_moe.c
  src/cpu/backend_cpu.c
  src/cpu/threadpool.c
  src/cpu/cpu_features.c
  src/cpu/scratch_cpu.c
  src/cpu/kernels/ref.c
  ${LLM_RUNTIME_CPU_X86_256_SOURCES}
  ${LLM_RUNTIME_CPU_X86_512_SOURCES}
  src/cpu/matmul_cpu.c
  src/cpu/gemm_cpu.c
  src/cpu/ops_cpu.c
  src/cpu/gelu_table.c
  src/cpu/attention_cpu.c
  src/cpu/attention_fa.c
  src/cpu/encoder_cpu.c
  src/cpu/ssm_cpu.c
  src/cpu/moe_cpu.c)

# Called by libs/runtime/CMakeLists.txt once the target exists. SIMD variants
# are compiled per file with their ISA flags and chosen at run time
# (cpu_features.c), so the portable build still runs on CPUs without them.
function(llm_runtime_extra)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|i.86)$")
    set_source_files_properties(${LLM_RUNTIME_CPU_X86_256_SOURCES} PROPERTIES
      COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
    set_source_files_properties(${LLM_RUNTIME_CPU_X86_512_VNNI_SOURCES} PROPERTIES
      COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512dq;-mavx512vl;-mavx512vnni;-mavx2;-mfma;-mf16c")
    set_source_files_properties(src/cpu/kernels/prep_q5_k_x86_512.c PROPERTIES
      COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512dq;-mavx512vl;-mavx512vnni;-mgfni;-mavx2;-mfma;-mf16c")
    set_source_files_properties(src/cpu/attention_x86_512.c PROPERTIES
      COMPILE_OPTIONS "-mavx512f;-mavx2;-mfma;-mf16c")
    set_source_files_properties(src/cpu/gemm_x86_512.c PROPERTIES
      COMPILE_OPTIONS "-mavx512f;-mavx512dq;-mavx2;-mfma;-mf16c")
    target_compile_definitions(llama-runtime PRIVATE LLM_CPU_AVX2_BUILT=1)
  endif()
endfunction()
