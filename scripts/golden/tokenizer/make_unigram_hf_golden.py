#!/usr/bin/env python3
"""HF tokenizers' ids for a Unigram tokenizer.json: the nomic-bert-moe vocab
GGUF (XLM-RoBERTa's 250k pieces) as transformers' SpmConverter would write
it (make_unigram_golden.hf_unigram_tokenizer). The test regenerates the
tokenizer.json itself with ugm_tokenizer_json.py (standard library only);
this script checks that HF reads that file to exactly the ids of its own
pipeline, then records HF's ids.

Texts: the 75 texts of make_unigram_golden.py (whitespace runs, NFKC folding,
uncovered characters, control-piece text, decomposed letters, many scripts),
full ids; and every document of corpus.txt, as n:fnv1a32 of the ids.

Writes tests/tokenizer/data/unigram_hf_expected.txt:
  text<TAB>hex(utf-8 text)<TAB>ids
  corpus<TAB>n:hash n:hash ...           (one pair per document)

Usage (a venv with `tokenizers` and `gguf`, e.g. ~/.cache/llm/venv-tpl):
  python make_unigram_hf_golden.py REPO_ROOT
"""
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_class_golden import DECOMPOSED, SPECIAL_LOOKALIKES, VOCAB_DIR, WPM_TEXTS  # noqa: E402
from make_unigram_golden import DOC_SEP, NAME, UGM_TEXTS, hf_unigram_tokenizer  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402


def fnv32(ids):
    """FNV-1a of the ids, each 4 bytes little endian (as make_vocab_corpus_golden.py)."""
    h = 0x811C9DC5
    for b in b"".join(struct.pack("<I", i & 0xFFFFFFFF) for i in ids):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def main():
    root = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    gguf = os.path.join(VOCAB_DIR, "ggml-vocab-%s.gguf" % NAME)
    ref = hf_unigram_tokenizer(gguf)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "tokenizer.json")
        subprocess.check_call([sys.executable, os.path.join(here, "ugm_tokenizer_json.py"), gguf, path])
        tok = Tokenizer.from_file(path)

    def enc(s):
        a = tok.encode(s, add_special_tokens=False).ids
        b = ref.encode(s, add_special_tokens=False).ids
        assert a == b, (s, a, b)
        return a

    lines = ["# hf-tokenizers ids for ugm_tokenizer_json.py's tokenizer.json of ggml-vocab-%s.gguf"
             " -- made by scripts/golden/tokenizer/make_unigram_hf_golden.py" % NAME]
    seen = set()
    for s in UGM_TEXTS + WPM_TEXTS + SPECIAL_LOOKALIKES + DECOMPOSED:
        if s in seen:
            continue
        seen.add(s)
        lines.append("text\t%s\t%s" % (s.encode("utf-8").hex(), " ".join(map(str, enc(s)))))
    with open(os.path.join(here, "corpus.txt"), encoding="utf-8", newline="") as fh:  # keep \r
        docs = fh.read().split(DOC_SEP)
    ids = [enc(d) if d else [] for d in docs]
    lines.append("corpus\t" + " ".join("%d:%08x" % (len(x), fnv32(x)) for x in ids))
    with open(os.path.join(root, "tests/tokenizer/data/unigram_hf_expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
