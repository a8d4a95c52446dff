#!/usr/bin/env python3
"""Differential check (not a test): our llm-tokenize against llama.cpp
(llama-cpp-python, vocab_only) on random strings, for every vocab GGUF of
the conformance snapshot and the default model. Prints the disagreements.

Usage: diff_llamacpp.py LLM_TOKENIZE_BINARY [N_STRINGS] [SEED]
"""
import glob
import os
import random
import subprocess
import sys
import tempfile

from llama_cpp import Llama

POOLS = ["abc", "Hello", " world", "  ", "\t", "\n", "\r\n", "123", "4567", "'s", "'LL", "é", "e\u0301",
         "ñ", "中文", "日本", "한국", "مرحبا", "🦙", "👍🏽", "👨‍👩‍👧", "\u00a0", "\u3000", "½", "٣", "...",
         "!!", "<|im_end|>", "<s>", "[CLS]", "  \n  ", "ÄÖÜ", "ﬁ", "ǅ", "ſt", "Ⅻ", "\u200b", "x" * 30]


def ours(binary, model, text):
    with tempfile.NamedTemporaryFile("wb", delete=False) as f:
        f.write(text.encode("utf-8"))
    try:
        out = subprocess.run([binary, model, "-f", f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if out.returncode != 0:
        return "ERROR " + out.stderr.strip()
    return [int(x) for x in out.stdout.split()]


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 7)
    models = sorted(glob.glob("/work/shared/testdata/llama-cpp-vocab/*.gguf"))
    models.append(os.environ.get("LLM_DEFAULT_MODEL", "/root/.cache/llm/models/SmolLM2-135M-Instruct.Q4_1.gguf"))
    for m in models:
        try:
            llm = Llama(model_path=m, vocab_only=True, verbose=False)
        except Exception as e:  # noqa: BLE001
            print("%s: llama.cpp cannot load (%s)" % (os.path.basename(m), e))
            continue
        bad = 0
        for _ in range(n):
            s = "".join(rng.choice(POOLS) for _ in range(rng.randrange(1, 12)))
            ref = llm.tokenize(s.encode("utf-8"), add_bos=False, special=False)
            got = ours(binary, m, s)
            if got != ref:
                bad += 1
                if bad <= 3:
                    print("  %s: %r\n    llama.cpp %s\n    ours      %s" % (os.path.basename(m), s, ref, got))
        print("%s: %d/%d differ" % (os.path.basename(m), bad, n))


if __name__ == "__main__":
    main()
