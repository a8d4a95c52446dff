#!/usr/bin/env python3
"""Random-string goldens for the SPM and WordPiece vocab GGUFs of the
conformance snapshot, from independent references:

  - llama-spm, baichuan: the SentencePiece library itself (a BPE ModelProto
    assembled from the GGUF's tokens/scores/types: byte fallback, dummy
    prefix, no whitespace folding, identity normalizer);
  - bert-bge: HF `tokenizers` WordPiece + BertNormalizer + BertPreTokenizer
    over the GGUF vocabulary (phantom-space pieces mapped back to "##").

Writes tests/tokenizer/data/random_expected.txt:
  VOCAB<TAB>hex(utf-8 text)<TAB>ids   (no BOS/EOS, special text as plain text)

Usage: make_random_golden.py REPO_ROOT [N_PER_VOCAB]
"""
import os
import random
import struct
import sys

import sentencepiece as spm
from gguf import GGUFReader
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

VOCAB_DIR = "/work/shared/testdata/llama-cpp-vocab"
POOLS = ["abc", "Hello", " world", "  ", "\t", "\n", "\r\n", "123", "4567", "'s", "'LL", "é", "e\u0301", "ñ",
         "中文", "日本", "한국", "مرحبا", "🦙", "👍🏽", "👨\u200d👩\u200d👧", "\u00a0", "\u3000", "½", "٣", "...", "!!",
         "<s>", "[CLS]", "  \n  ", "ÄÖÜ", "ﬁ", "ǅ", "ſt", "Ⅻ", "\u200b", "x" * 30, "İstanbul", "ΣΑΣ", " ", "   ",
         "naïve", "Ω", "\u0301", "\x7f", "a\u0000b"]


def gguf_vocab(path):
    r = GGUFReader(path)
    f = r.fields["tokenizer.ggml.tokens"]
    toks = [bytes(f.parts[i]).decode("utf-8") for i in f.data]
    sc = r.fields.get("tokenizer.ggml.scores")
    scores = [float(sc.parts[i][0]) for i in sc.data] if sc else [0.0] * len(toks)
    tt = r.fields["tokenizer.ggml.token_type"]
    types = [int(tt.parts[i][0]) for i in tt.data]
    return toks, scores, types


def varint(n):
    n &= (1 << 64) - 1
    out = b""
    while True:
        x = n & 0x7F
        n >>= 7
        if n:
            out += bytes([x | 0x80])
        else:
            return out + bytes([x])


def field(num, wire, payload):
    return varint((num << 3) | wire) + payload


def ldelim(num, data):
    return field(num, 2, varint(len(data)) + data)


def vint(num, v):
    return field(num, 0, varint(v))


def spm_processor(path):
    """ModelProto by hand (sentencepiece_model.proto field numbers): pieces=1
    {piece=1, score=2, type=3}, trainer_spec=2 {model_type=3 (BPE=2),
    byte_fallback=35, unk/bos/eos/pad_id=40..43}, normalizer_spec=3 {name=1,
    add_dummy_prefix=3, remove_extra_whitespaces=4, escape_whitespaces=5}."""
    toks, scores, types = gguf_vocab(path)
    proto = b""
    for t, s, ty in zip(toks, scores, types):
        proto += ldelim(1, ldelim(1, t.encode("utf-8")) + field(2, 5, struct.pack("<f", s)) + vint(3, ty or 1))
    proto += ldelim(2, vint(3, 2) + vint(35, 1) + vint(40, 0) + vint(41, 1) + vint(42, 2) + vint(43, -1))
    proto += ldelim(3, ldelim(1, b"identity") + vint(3, 1) + vint(4, 0) + vint(5, 1))
    sp = spm.SentencePieceProcessor(model_proto=proto)
    return lambda s: sp.encode(s)


def bert_tokenizer(path):
    toks, _, _ = gguf_vocab(path)
    vocab = {}
    for i, t in enumerate(toks):
        if t.startswith("[") and t.endswith("]"):
            key = t
        elif t.startswith("\u2581"):
            key = t[1:]
        else:
            key = "##" + t
        vocab.setdefault(key, i)
    tok = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None,
                                                lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return lambda s: tok.encode(s, add_special_tokens=False).ids


def main():
    root = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 250
    refs = {"llama-spm": spm_processor, "baichuan": spm_processor, "bert-bge": bert_tokenizer}
    lines = ["# VOCAB<TAB>hex(text)<TAB>ids -- made by scripts/golden/tokenizer/make_random_golden.py"]
    for name, make in refs.items():
        enc = make(os.path.join(VOCAB_DIR, "ggml-vocab-%s.gguf" % name))
        rng = random.Random(name)
        for _ in range(n):
            s = "".join(rng.choice(POOLS) for _ in range(rng.randrange(0, 12)))
            lines.append("%s\t%s\t%s" % (name, s.encode("utf-8").hex(), " ".join(map(str, enc(s)))))
    with open(os.path.join(root, "tests/tokenizer/data/random_expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
