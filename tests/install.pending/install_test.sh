#!/usr/bin/env bash
# install_test.sh BUILD_DIR CONSUMER_DIR CC
# CONSUMER_DIR holds a CMakeLists.txt (find_package(llama CONFIG), llama::tokenizer),
# main.c, and run.args: the program's arguments, relative to CONSUMER_DIR, and
# expected.txt: what the program must print.
set -euo pipefail
build="$1" consumer="$2" cc="$3"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

echo "-- installing into $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

# Only the tokenizer's library may be needed: prove it by removing the others.
for lib in kv sampling runtime models engine; do rm -f "$prefix"/lib*/libllama-$lib.a; done

read -r -a args < "$consumer/run.args"
abs_args=()
for a in "${args[@]}"; do
  if [ -e "$consumer/$a" ]; then abs_args+=("$consumer/$a"); else abs_args+=("$a"); fi
done

echo "-- consumer through find_package(llama CONFIG)"
cmake -S "$consumer" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" >/dev/null
cmake --build "$tmp/cm" >/dev/null
exe="$(find "$tmp/cm" -maxdepth 1 -type f -perm -u+x | head -n 1)"
"$exe" "${abs_args[@]}" > "$tmp/out_cmake.txt"
diff -u "$consumer/expected.txt" "$tmp/out_cmake.txt"

echo "-- consumer through pkg-config"
libdir="$(ls -d "$prefix"/lib*/pkgconfig | head -n 1)"
# shellcheck disable=SC2046
"$cc" -std=c11 -o "$tmp/pc_consumer" "$consumer/main.c" \
  $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs llama-tokenizer)
"$tmp/pc_consumer" "${abs_args[@]}" > "$tmp/out_pc.txt"
diff -u "$consumer/expected.txt" "$tmp/out_pc.txt"
echo "install test: 2 passed, 0 failed"
