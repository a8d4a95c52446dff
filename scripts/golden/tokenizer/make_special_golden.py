#!/usr/bin/env python3
"""Goldens for llama.cpp's special-token partition (tokenizer_st_partition)
on the vocab GGUFs where the rules meet text (VOCABS below), with special
parsing on and off. Reference: llama.cpp (llama-cpp-python, vocab_only, add_bos=False).

It exercises the two places where llama.cpp's rule is not HF's (see
README.md, "Special-token text"):
  - overlapping special-token texts: llama.cpp takes special tokens longest
    first over the whole text, HF the leftmost match (falcon:
    ">>ABSTRACT<<|endoftext|>" -> "<|endoftext|>" for llama.cpp). The texts
    are built from every pair of special tokens where a suffix of one is a
    prefix of a longer one;
  - LSTRIP/RSTRIP attributes (phi-3's RSTRIP on its special tokens,
    nomic-bert-moe's LSTRIP on <mask>): llama.cpp strips ASCII whitespace
    only (isspace), HF Unicode whitespace. The texts put ASCII and non-ASCII
    spaces (U+00A0, U+2003, U+2028, U+3000) around special tokens.

Writes tests/tokenizer/data/special_expected.txt:
  VOCAB[@special]<TAB>hex(utf-8 text)<TAB>ids   (no BOS/EOS)

Usage: make_special_golden.py REPO_ROOT   (with ~/.cache/llm/venv-avx2/bin/python)
"""
import os
import sys

from gguf import GGUFReader
from llama_cpp import Llama

VOCAB_DIR = os.environ.get("LLM_TESTDATA_DIR", "/work/shared/testdata") + "/llama-cpp-vocab"
# The vocabularies where the two rules meet text: overlapping special tokens
# (falcon), stripping attributes (phi-3, nomic-bert-moe), and a few others
# with many added tokens (kept small: GGUFReader is slow on huge vocabularies).
VOCABS = ["falcon", "phi-3", "nomic-bert-moe", "llama-bpe", "qwen2", "mpt", "starcoder", "command-r"]
SPACES = ["a \u00a0{}\u3000\u00a0 b", "a\u2003{}\u2028b", "a  \t{} \n b", "{}  {}\u00a0x", " \u3000{}"]


def special_texts(path):
    r = GGUFReader(path)
    f = r.fields["tokenizer.ggml.tokens"]
    toks = [bytes(f.parts[i]).decode("utf-8", "replace") for i in f.data]
    tt = r.fields.get("tokenizer.ggml.token_type")
    types = [int(tt.parts[i][0]) for i in tt.data] if tt else [1] * len(toks)
    return [t for t, ty in zip(toks, types) if ty in (2, 3, 4) and 1 < len(t) < 40]  # unknown, control, user


def texts_for(path):
    sp = special_texts(path)
    out = []
    by_prefix = {}  # proper prefix -> the special tokens starting with it
    for b in sp:
        for k in range(1, len(b)):
            by_prefix.setdefault(b[:k], []).append(b)
    overlaps = 0
    for a in sp:
        if overlaps >= 8:
            break
        for k in range(1, len(a)):
            b = next((b for b in by_prefix.get(a[-k:], ()) if len(b) > len(a)), None)
            if b:
                out.append("x " + a + b[k:] + " y")
                out.append(a + b[k:] + a)
                overlaps += 1
                break
    # the special tokens that carry strip attributes in llama.cpp first
    picks = [t for t in sp if t in ("<mask>", "</s>", "<|end|>", "<|user|>", "<|assistant|>", "<|placeholder1|>")]
    picks += [t for t in sp if t not in picks][:4]
    for t in picks:
        for pat in SPACES:
            out.append(pat.format(t, t))
    return out


def main():
    root = sys.argv[1]
    lines = ["# VOCAB[@special]<TAB>hex(text)<TAB>ids -- made by scripts/golden/tokenizer/make_special_golden.py"]
    for name in VOCABS:
        path = "%s/ggml-vocab-%s.gguf" % (VOCAB_DIR, name)
        llm = Llama(model_path=path, vocab_only=True, verbose=False)
        for special in (False, True):
            for text in texts_for(path):
                ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)
                lines.append("%s%s\t%s\t%s" % (name, "@special" if special else "", text.encode("utf-8").hex(),
                                               " ".join(map(str, ids))))
    out = os.path.join(root, "tests", "tokenizer", "data", "special_expected.txt")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s: %d cases" % (out, len(lines) - 1))


if __name__ == "__main__":
    main()
