#!/usr/bin/env bash
# build-llamacpp-tools.sh [avx2|native]...: llama.cpp's own C++ tools (llama-bench,
# llama-server, llama-quantize), the comparison anchors of scripts/bench/vs_llamabench.py,
# serve.py and make_llama1b.py, built from the llama.cpp that the llama-cpp-python
# 0.3.36 source package vendors (the same version as the goldens).
# Installs into ~/.cache/llm/llamacpp-tools/<variant>/bin. Never run in CI; ~10-15
# minutes per variant on 2 cores. Default variant: avx2 (the instruction set of the
# goldens; see scripts/golden/reference-venv.sh). "native" uses -march=native
# (AVX-512/AMX where present).
set -euo pipefail
root="${LLM_TOOLS_DIR:-$HOME/.cache/llm/llamacpp-tools}"
src_root="$HOME/.cache/llm/src"
ver=0.3.36
variants=("$@"); [ ${#variants[@]} -eq 0 ] && variants=(avx2)
mkdir -p "$src_root" "$root"
src="$src_root/llama_cpp_python-$ver/vendor/llama.cpp"
if [ ! -f "$src/CMakeLists.txt" ]; then
  python3 -m pip download --no-deps --no-binary :all: "llama-cpp-python==$ver" -d "$src_root"
  tar xzf "$src_root/llama_cpp_python-$ver.tar.gz" -C "$src_root"
fi
for v in "${variants[@]}"; do
  case "$v" in
    avx2) flags=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
                 -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF
                 -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF) ;;
    native) flags=(-DGGML_NATIVE=ON) ;;
    *) echo "unknown variant: $v (avx2 | native)" >&2; exit 2 ;;
  esac
  b="$root/build-$v"
  cmake -S "$src" -B "$b" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
        -DGGML_OPENMP=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF "${flags[@]}"
  cmake --build "$b" -j "$(nproc)" --target llama-bench llama-server llama-quantize
  mkdir -p "$root/$v/bin"
  cp "$b/bin/llama-bench" "$b/bin/llama-server" "$b/bin/llama-quantize" "$root/$v/bin/"
  echo "built: $root/$v/bin"
done
