#!/usr/bin/env python3
"""Goldens for the Unigram (SentencePiece "t5") vocabulary of the conformance
snapshot, ggml-vocab-nomic-bert-moe.gguf (XLM-RoBERTa's 250k pieces, its
precompiled charsmap, add_space_prefix and remove_extra_whitespaces set),
which has no .inp/.out pair. Two independent references:

  - llama.cpp (llama-cpp-python, vocab_only, add_bos=False, special=False):
    SentencePiece's algorithm as llama.cpp implements it;
  - HF tokenizers, built here from the GGUF alone, as transformers'
    SpmConverter (convert_slow_tokenizer.py, which XLM-R's converter keeps)
    builds a tokenizer.json: models.Unigram(pieces and scores, unk_id),
    normalizers Precompiled(charsmap), Strip(right), Replace(" {2,}", U+2581),
    pre-tokenizer Metaspace(prepend_scheme "always", split); no added tokens
    (so special-token text is plain text, as with llama.cpp's special=False).

Texts: the classes of make_class_golden.py (many scripts, special-token
look-alikes, decomposed letters) plus Unigram-specific ones (whitespace runs,
leading/trailing blanks, NFKC-folded characters, characters no piece covers),
and the mixed corpus (corpus.txt, 330 documents).

Writes tests/tokenizer/data/unigram_expected.txt:
  nomic-bert-moe<TAB>hex(utf-8 text)<TAB>llama.cpp ids     (no BOS/EOS)
and, as comment lines, every text and corpus document where HF's ids differ
from llama.cpp's, with both. Our tokenizer follows llama.cpp for GGUF
vocabularies (the mixed-corpus hashes of llama.cpp are in
vocab_corpus_hashes.txt, made by make_vocab_corpus_golden.py).

Usage (the AVX2 reference venv, with `tokenizers` installed):
  /root/.cache/llm/venv-avx2/bin/python make_unigram_golden.py REPO_ROOT
"""
import os
import sys

from gguf import GGUFReader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_class_golden import (DECOMPOSED, SPECIAL_LOOKALIKES, VOCAB_DIR,  # noqa: E402
                               WPM_TEXTS, llama_tokenizer)

DOC_SEP = "\n\x1d=== llm golden document ===\x1d\n"
NAME = "nomic-bert-moe"

UGM_TEXTS = [
    "", " ", "   ", "\t", "\n", " \n ", "Hello world", " Hello world", "Hello world ", "  Hello   world  ",
    "Hello\tworld\nagain\r\nand\u3000more", "a  b   c    d", "\u00a0x\u2002y\u200bz",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３", "ﬁ ﬂ ﬀ Ⅻ ½ ① ㍿ ™ ℃", "“quotes” ‘single’ ``tex'' --- …",
    "Straße ǅ İstanbul ΣΊΣΥΦΟΣ", "한국어 ᄒ ᅡ ᆫ 한", "카타카나 ｶﾀｶﾅ ﾃﾞ",
    "emoji 😀🙈 👩‍👩‍👧 🇫🇷 ❤️", "\U0001f9ff \U00010000 \ue000 \U000e0001", "x\u0378y \ufffd",
    "def f(x):\n    return x**2  # comment", "1,234.56 €, 7 % off!!", "<s>x</s> <unk> <pad> <mask>",
    "[PAD250001] [PAD250001]x", "ᐊᐃᑦ ᚠᚢᚦ ꦗꦮ", "e\u0301\u0327 a\u030a\u0301 \u0915\u094d\u0937",
]


def hf_unigram_tokenizer(path):
    """The HF tokenizers.Tokenizer described in the module docstring."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers
    r = GGUFReader(path)
    f = r.fields["tokenizer.ggml.tokens"]
    toks = [bytes(f.parts[i]).decode("utf-8") for i in f.data]
    sc = r.fields["tokenizer.ggml.scores"]
    scores = [float(sc.parts[i][0]) for i in sc.data]
    unk = int(r.fields["tokenizer.ggml.unknown_token_id"].parts[-1][0])
    cm = r.fields["tokenizer.ggml.precompiled_charsmap"]
    charsmap = bytes(int(cm.parts[i][0]) & 0xFF for i in cm.data)
    tok = Tokenizer(models.Unigram(list(zip(toks, scores)), unk_id=unk, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(charsmap),
                                           normalizers.Strip(left=False, right=True),
                                           normalizers.Replace(Regex(" {2,}"), "\u2581")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    return tok


def hf_unigram(path):
    tok = hf_unigram_tokenizer(path)
    return lambda s: tok.encode(s, add_special_tokens=False).ids


def main():
    root = sys.argv[1]
    path = os.path.join(VOCAB_DIR, "ggml-vocab-%s.gguf" % NAME)
    lc, hf = llama_tokenizer(path), hf_unigram(path)
    lines = ["# VOCAB<TAB>hex(text)<TAB>llama.cpp ids -- made by scripts/golden/tokenizer/make_unigram_golden.py"]
    diffs = []
    seen = set()
    for s in UGM_TEXTS + WPM_TEXTS + SPECIAL_LOOKALIKES + DECOMPOSED:
        if s in seen:
            continue
        seen.add(s)
        a, b = lc(s), hf(s)
        lines.append("%s\t%s\t%s" % (NAME, s.encode("utf-8").hex(), " ".join(map(str, a))))
        if a != b:
            diffs.append("# text %s: llama.cpp %s | HF %s" % (s.encode("utf-8").hex(), a, b))
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "corpus.txt"), encoding="utf-8", newline="") as fh:  # keep \r
        docs = fh.read().split(DOC_SEP)
    n_doc_diff = 0
    for i, d in enumerate(docs):
        a, b = (lc(d), hf(d)) if d else ([], [])
        if a != b:
            n_doc_diff += 1
            k = next(j for j in range(min(len(a), len(b)) + 1) if j >= len(a) or j >= len(b) or a[j] != b[j])
            diffs.append("# corpus doc %d: first difference at id %d: llama.cpp %s | HF %s" %
                         (i, k, a[max(0, k - 2):k + 4], b[max(0, k - 2):k + 4]))
    lines.insert(1, "# HF tokenizers differs from llama.cpp on %d of %d texts and %d of %d corpus documents:" %
                 (len(diffs) - n_doc_diff, len(seen), n_doc_diff, len(docs)))
    lines[2:2] = diffs
    with open(os.path.join(root, "tests/tokenizer/data/unigram_expected.txt"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines[1:2 + len(diffs)]))


if __name__ == "__main__":
    main()
