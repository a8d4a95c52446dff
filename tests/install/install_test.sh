#!/usr/bin/env bash
# install_test.sh BUILD_DIR SOURCE_DIR CC [EXTRA_FLAGS]
# Installs the build into a temporary prefix, then builds two small
# out-of-tree programs against it, each through CMake's
# find_package(llama CONFIG) and through pkg-config:
#   - tests/tokenizer/out_of_tree (llama-tokenizer alone): tokenizes with a
#     tokenizer.json and must print the ids Hugging Face tokenizers gives
#     (tests/tokenizer/data/tiny_expected.txt); its link line may hold only
#     llama-tokenizer, llama-gguf and llama-common of ours, and no JSON
#     library (the tokenizer reads JSON itself);
#   - tests/chat/out_of_tree (llama-chat alone): renders a conversation with
#     the chatml family; only llama-chat and llama-common of ours.
set -euo pipefail
build="$1" src="$2" cc="$3" extra="${4:-}"   # extra: e.g. -fsanitize=... of the build
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

echo "-- installing into $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
pcdir="$(ls -d "$prefix"/lib*/pkgconfig | head -n 1)"

fail=0 pass=0
ok() { pass=$((pass+1)); echo "ok: $1"; }
bad() { fail=$((fail+1)); echo "FAIL: $1"; }
check() { # name output expected
  if [ "$2" = "$3" ]; then ok "$1"; else bad "$1 printed '$2', expected '$3'"; fi
}
# only_ours NAME TEXT ALLOWED_RE: every libllama-*.a / -lllama-* in TEXT matches ALLOWED_RE.
only_ours() {
  local others
  others="$(printf '%s\n' "$2" | grep -o -e 'libllama-[a-z]*\.a' -e '-lllama-[a-z]*' | sed 's/^-l/lib/; s/\.a$//' |
            sort -u | grep -v -E "^lib($3)\$" || true)"
  if [ -z "$others" ]; then ok "$1 links only $3 of ours"; else bad "$1 linked more of ours: $others"; fi
}
# llama/error.h is internal (llm__ names): installed headers neither ship nor include it.
if [ -e "$prefix/include/llama/error.h" ] || grep -rqs 'llama/error\.h' "$prefix/include"; then
  bad "llama/error.h (internal) is installed or included by an installed header"
else
  ok "llama/error.h is not installed"
fi
no_jansson() { # NAME TEXT
  if printf '%s' "$2" | grep -q -i jansson; then bad "$1 pulls in jansson"; else ok "$1 has no jansson"; fi
}

# --- llama-tokenizer alone --------------------------------------------------
consumer="$src/tests/tokenizer/out_of_tree"
text="Hello world"
hex="$(printf '%s' "$text" | od -An -tx1 | tr -d ' \n')"
expected="$(awk -F'\t' -v h="$hex" '$1=="tokenizer.json" && $2=="0" && $3==h {print $4}' \
            "$src/tests/tokenizer/data/tiny_expected.txt")"
[ -n "$expected" ] || { echo "no expected ids for '$text' in tiny_expected.txt"; exit 1; }

echo "-- tokenizer consumer through find_package(llama CONFIG)"
cmake -S "$consumer" -B "$tmp/tok-cm" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$extra" >/dev/null
cmake --build "$tmp/tok-cm" --verbose > "$tmp/tok-cm.log"
link="$(grep -e '-o tokenize_json' "$tmp/tok-cm.log" || true)"
[ -n "$link" ] || bad "no link line for tokenize_json in the build log"
only_ours "tokenizer (CMake)" "$link" "llama-tokenizer|llama-gguf|llama-common"
no_jansson "tokenizer (CMake)" "$link"
check "tokenizer (CMake)" "$("$tmp/tok-cm/tokenize_json" "$consumer/tokenizer.json" "$text")" "$expected"

echo "-- tokenizer consumer through pkg-config"
pcflags="$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs --static llama-tokenizer)"
echo "pkg-config --libs --static llama-tokenizer: $pcflags"
only_ours "tokenizer (pkg-config)" "$pcflags" "llama-tokenizer|llama-gguf|llama-common"
no_jansson "tokenizer (pkg-config)" "$pcflags"
# shellcheck disable=SC2086
"$cc" -std=c11 $extra "$consumer/main.c" -o "$tmp/tok_pc" $pcflags
check "tokenizer (pkg-config)" "$("$tmp/tok_pc" "$consumer/tokenizer.json" "$text")" "$expected"

# --- llama-chat alone -------------------------------------------------------
consumer="$src/tests/chat/out_of_tree"
# ChatML as its published template writes it (and the chat goldens hold).
expected="$(printf '<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n')"

echo "-- chat consumer through find_package(llama CONFIG)"
cmake -S "$consumer" -B "$tmp/chat-cm" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$extra" >/dev/null
cmake --build "$tmp/chat-cm" --verbose > "$tmp/chat-cm.log"
link="$(grep -e '-o render_chat' "$tmp/chat-cm.log" || true)"
[ -n "$link" ] || bad "no link line for render_chat in the build log"
only_ours "chat (CMake)" "$link" "llama-chat|llama-common"
check "chat (CMake)" "$("$tmp/chat-cm/render_chat" chatml)" "$expected"

echo "-- chat consumer through pkg-config"
pcflags="$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs --static llama-chat)"
echo "pkg-config --libs --static llama-chat: $pcflags"
only_ours "chat (pkg-config)" "$pcflags" "llama-chat|llama-common"
# shellcheck disable=SC2086
"$cc" -std=c11 $extra "$consumer/main.c" -o "$tmp/chat_pc" $pcflags
check "chat (pkg-config)" "$("$tmp/chat_pc" chatml)" "$expected"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
