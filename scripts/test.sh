#!/usr/bin/env bash
# test.sh: build the project and run the whole test suite with CTest.
#
#   scripts/test.sh              Release build in build-test/ with -Werror, all tests
#   scripts/test.sh --sanitize   optimised (-O2 -g) build in build-asan/ with AddressSanitizer +
#                                UndefinedBehaviorSanitizer, all tests
#   scripts/test.sh -R REGEX     only the tests whose names match (passed to ctest)
#
# Tests that need the default model find it where scripts/setup.sh put it
# (LLM_MODELS_DIR). Environment: LLM_CMAKE_ARGS adds cmake configure arguments.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models_dir="${LLM_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/llm/models}"
mode=werror ctest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) mode=sanitize ;;
    -R|-E|-L) ctest_args+=("$1" "$2"); shift ;;
    -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ "$mode" = sanitize ]; then
  dir="${LLM_TEST_BUILD_DIR:-$root/build-asan}"
  cfg=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DLLM_SANITIZE=address,undefined -DLLM_CUDA=OFF -DLLM_WERROR=ON)
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
else
  dir="${LLM_TEST_BUILD_DIR:-$root/build-test}"
  cfg=(-DCMAKE_BUILD_TYPE=Release -DLLM_WERROR=ON)
fi
gen=(); command -v ninja >/dev/null && [ ! -f "$dir/CMakeCache.txt" ] && gen=(-G Ninja)

echo "== configure ($mode) in $dir" >&2
# shellcheck disable=SC2086
cmake -S "$root" -B "$dir" "${gen[@]}" "${cfg[@]}" -DLLM_MODELS_DIR="$models_dir" ${LLM_CMAKE_ARGS:-} >/dev/null
echo "== build" >&2
cmake --build "$dir" -j "$(nproc)"
echo "== test" >&2
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" "${ctest_args[@]+"${ctest_args[@]}"}"
