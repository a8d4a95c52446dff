#!/usr/bin/env bash
# reference-venv.sh [DIR]: the Python environment that makes the goldens:
# llama-cpp-python 0.3.36 built from source for x86-64 with AVX2, FMA, F16C
# and BMI2 and nothing wider (no AVX-512, no AMX, no AVX-VNNI), plus numpy,
# gguf and jinja2. Default DIR: ~/.cache/llm/venv-avx2. Never run in CI.
#
# Why pinned to AVX2: llama.cpp's CPU kernels sum in an order that depends on
# the instruction set it was compiled for (AVX2 dot products and tiled
# matmuls; AVX-512 and AMX change the order, and AMX crashed on some shapes
# here). Our AVX2 kernels follow its AVX2 order, so the goldens must come
# from an AVX2 build on any machine. Check: this environment reproduces
# tests/runtime/data/logits_golden.bin byte for byte:
#   DIR/bin/python scripts/golden/logits/make_logits_golden.py MODEL /tmp/g.bin
#   cmp /tmp/g.bin tests/runtime/data/logits_golden.bin
# Building takes 10-30 minutes on 2 cores.
set -euo pipefail
dir="${1:-$HOME/.cache/llm/venv-avx2}"
python3 -m venv "$dir"
"$dir/bin/pip" install --quiet --upgrade pip
CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
 -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AVX_VNNI=OFF \
 -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_OPENMP=ON" \
CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
  "$dir/bin/pip" install --no-cache-dir llama-cpp-python==0.3.36 numpy gguf jinja2
echo "reference environment ready: $dir/bin/python"
