#!/usr/bin/env bash
# install_test.sh BUILD_DIR SOURCE_DIR CC [EXTRA_FLAGS]
# Installs the build into a temporary prefix, then builds tests/tokenizer/out_of_tree (a small program
# that tokenizes with a tokenizer.json) against it twice: through CMake's
# find_package(llama CONFIG) and through pkg-config. Both must print the ids
# Hugging Face tokenizers gives (tests/tokenizer/data/tiny_expected.txt).
set -euo pipefail
build="$1" src="$2" cc="$3" extra="${4:-}"   # extra: e.g. -fsanitize=... of the build
consumer="$src/tests/tokenizer/out_of_tree"
text="Hello world"
hex="$(printf '%s' "$text" | od -An -tx1 | tr -d ' \n')"
expected="$(awk -F'\t' -v h="$hex" '$1=="tokenizer.json" && $2=="0" && $3==h {print $4}' \
            "$src/tests/tokenizer/data/tiny_expected.txt")"
[ -n "$expected" ] || { echo "no expected ids for '$text' in tiny_expected.txt"; exit 1; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

echo "-- installing into $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

fail=0 pass=0
# llama/error.h is internal (llm__ names): installed headers neither ship nor include it.
if [ -e "$prefix/include/llama/error.h" ] || grep -rqs 'llama/error\.h' "$prefix/include"; then
  echo "FAIL: llama/error.h (internal) is installed or included by an installed header"; fail=$((fail+1))
fi
check() { # name output
  if [ "$2" = "$expected" ]; then pass=$((pass+1)); echo "ok: $1 -> $2"
  else fail=$((fail+1)); echo "FAIL: $1 printed '$2', expected '$expected'"; fi
}

echo "-- consumer through find_package(llama CONFIG)"
cmake -S "$consumer" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$extra" >/dev/null
cmake --build "$tmp/cm" --verbose > "$tmp/cm.log"
# Only the tokenizer (and llama-common, which every library links) of our
# libraries may reach the link line.
others="$(grep -o 'libllama-[a-z]*\.a' "$tmp/cm.log" | sort -u | grep -v -e '^libllama-tokenizer\.a$' -e '^libllama-common\.a$' || true)"
[ -z "$others" ] || { echo "FAIL: the CMake consumer linked more than the tokenizer: $others"; fail=$((fail+1)); }
check cmake "$("$tmp/cm/tokenize_json" "$consumer/tokenizer.json" "$text")"

echo "-- consumer through pkg-config"
pcdir="$(ls -d "$prefix"/lib*/pkgconfig | head -n 1)"
pcflags="$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs --static llama-tokenizer)"
case "$(printf '%s' "$pcflags" | sed 's/-lllama-common\b//g')" in
  *-lllama-[!t]*) echo "FAIL: pkg-config pulls in more than the tokenizer: $pcflags"; fail=$((fail+1));; esac
# shellcheck disable=SC2086
"$cc" -std=c11 $extra "$consumer/main.c" -o "$tmp/pc_consumer" \
  $pcflags
check pkg-config "$("$tmp/pc_consumer" "$consumer/tokenizer.json" "$text")"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
