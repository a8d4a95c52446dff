#!/bin/sh
# Build the out-of-tree example with pkg-config only (no CMake, no Makefile).
#   PKG_CONFIG_PATH=<prefix>/lib/pkgconfig sh build_pkgconfig.sh OUT_BINARY
# Static library: --static pulls in the private system dependencies too.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-./tokenize_json}
cc -std=c11 -O2 "$here/main.c" -o "$out" $(pkg-config --cflags --libs --static llama-tokenizer)
echo "built $out"
