#!/usr/bin/env python3
"""Pre-tokenizer splits from HF `tokenizers` for the pre-tokenizer names whose
vocab GGUFs are missing from the conformance snapshot (llama-bpe/llama3, qwen2,
qwen35): the Split regex of each model's published tokenizer.json followed by
ByteLevel(use_regex=False), as those files define them. Input: every 6th
document of corpus.txt. Output tests/tokenizer/data/pretok_expected.txt:

  # comment lines
  PRE<TAB>DOC_INDEX<TAB>byte lengths of the pieces, space separated

Usage: make_pretok_golden.py REPO_ROOT
"""
import os
import sys

from tokenizers import Regex, pre_tokenizers

DOC_SEP = "\n\x1d=== llm golden document ===\x1d\n"

PATTERNS = {
    # meta-llama/Meta-Llama-3-8B tokenizer.json
    "llama-bpe": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    # Qwen/Qwen2.5 tokenizer.json
    "qwen2": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    # Qwen3.5 tokenizer.json
    "qwen35": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    docs = open(os.path.join(root, "scripts/golden/tokenizer/corpus.txt"), encoding="utf-8",
                newline="").read().split(DOC_SEP)
    lines = ["# PRE<TAB>DOC_INDEX<TAB>piece byte lengths -- made by scripts/golden/tokenizer/make_pretok_golden.py"]
    for name, pat in PATTERNS.items():
        pre = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(pat), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        for i in range(0, len(docs), 6):
            d = docs[i]
            pieces = pre.pre_tokenize_str(d)
            lens = [len(d[a:b].encode("utf-8")) for _, (a, b) in pieces]
            assert sum(lens) == len(d.encode("utf-8"))
            lines.append("%s\t%d\t%s" % (name, i, " ".join(map(str, lens))))
    with open(os.path.join(root, "tests/tokenizer/data/pretok_expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
