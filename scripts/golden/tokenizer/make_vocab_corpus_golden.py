#!/usr/bin/env python3
"""Reference ids of every vocab GGUF of the conformance snapshot on the mixed
corpus (corpus.txt next to this script: 330 documents, 210 KB of code,
licence text, many scripts, emoji, whitespace runs, special-token
look-alikes), so that the vocabularies without .inp/.out pairs are checked
too. Reference: llama.cpp (llama-cpp-python, vocab_only, add_bos=False,
special=False), except bert-bge, whose reference is HF's WordPiece (see
README.md: llama.cpp approximates BERT's normalizer; the number of documents
where llama.cpp and HF differ is printed).

To stay small the file holds, per document, the id count and a 32-bit
FNV-1a hash of the ids (each id as 4 bytes little endian), not the ids;
diff_llamacpp.py shows the ids of a differing document.

Writes tests/tokenizer/data/vocab_corpus_hashes.txt:
  VOCAB<TAB>REFERENCE<TAB>n:hash n:hash ...   (one pair per document, hex hash)

Usage: make_vocab_corpus_golden.py REPO_ROOT
"""
import glob
import os
import struct
import sys

from llama_cpp import Llama

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_class_golden import VOCAB_DIR, bert_tokenizer  # noqa: E402

DOC_SEP = "\n\x1d=== llm golden document ===\x1d\n"


def fnv32(ids):
    h = 0x811C9DC5
    for b in b"".join(struct.pack("<I", i & 0xFFFFFFFF) for i in ids):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def main():
    root = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "corpus.txt"), encoding="utf-8", newline="") as f:  # keep \r
        docs = f.read().split(DOC_SEP)
    lines = ["# VOCAB<TAB>REFERENCE<TAB>n:fnv1a32 per document of scripts/golden/tokenizer/corpus.txt"
             " -- made by scripts/golden/tokenizer/make_vocab_corpus_golden.py"]
    for path in sorted(glob.glob(os.path.join(VOCAB_DIR, "ggml-vocab-*.gguf"))):
        name = os.path.basename(path)[len("ggml-vocab-"):-len(".gguf")]
        llm = Llama(model_path=path, vocab_only=True, verbose=False)
        lc = [llm.tokenize(d.encode("utf-8"), add_bos=False, special=False) if d else [] for d in docs]
        ref, ids = "llama.cpp", lc
        if name == "bert-bge":
            enc = bert_tokenizer(path)
            ids = [enc(d) for d in docs]
            ref = "hf-tokenizers"
            print("bert-bge: llama.cpp differs from HF on %d of %d documents" %
                  (sum(a != b for a, b in zip(lc, ids)), len(docs)))
        lines.append("%s\t%s\t%s" % (name, ref, " ".join("%d:%08x" % (len(x), fnv32(x)) for x in ids)))
        print(name, sum(len(x) for x in ids), "tokens")
    with open(os.path.join(root, "tests/tokenizer/data/vocab_corpus_hashes.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
