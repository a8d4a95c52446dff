#!/usr/bin/env bash
# symbols_test.sh NM LIB.a...
# Every defined global symbol of our static libraries must start with llm_
# (public) or llm__ (internal), so a program can link llm next to llama.cpp,
# ggml or anything else. Lists each offender with its library and fails.
set -euo pipefail
nm_tool="$1"; shift

# Made by the toolchain, not by our code: C++ exception-handling glue that
# g++/nvcc emit for the CUDA backend's host code (a weak, hidden reference),
# and AddressSanitizer's one-definition-rule indicator for each global
# variable (__odr_asan.<our global>; sanitizer builds only).
toolchain_re='^(DW\.ref\.__gxx_personality_v0|__odr_asan[._]llm_.*)$'

fail=0 checked=0
for lib in "$@"; do
  [ -f "$lib" ] || { echo "FAIL: $lib does not exist"; fail=1; continue; }
  # "nm -g --defined-only": defined external symbols; lines are "ADDR TYPE NAME".
  while read -r _addr type name; do
    [ -n "${name:-}" ] || continue
    checked=$((checked+1))
    case "$name" in llm_*) continue ;; esac
    [[ "$name" =~ $toolchain_re ]] && continue
    echo "FAIL: $(basename "$lib"): $type $name"
    fail=1
  done < <("$nm_tool" -g --defined-only "$lib" 2>/dev/null | grep -v -e ':$' -e '^$')
done
echo "$# libraries, $checked defined global symbols checked"
[ "$checked" -gt 0 ] || { echo "FAIL: no symbol found (is NM right?)"; exit 1; }
exit "$fail"
