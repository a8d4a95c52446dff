#!/usr/bin/env python3
"""Write a Hugging Face tokenizer.json for a Unigram ("t5") vocab GGUF, with
the Python standard library only (run at test time; no HF package).

The pipeline is the one transformers' SpmConverter builds (and
make_unigram_golden.py builds through the tokenizers API):
models.Unigram(pieces and scores, unk_id), normalizers Sequence[
Precompiled(charsmap), Strip(right), Replace(" {2,}", U+2581)], pre-tokenizer
Metaspace(U+2581, prepend_scheme "always", split), decoder Metaspace; no
added tokens. make_unigram_hf_golden.py checks that HF tokenizers reads this
file to the same ids as its own pipeline.

Usage: ugm_tokenizer_json.py VOCAB.gguf OUT.json
"""
import base64
import json
import struct
import sys

SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def read_kv(path):
    """The GGUF's metadata as a dict (arrays as lists, strings as bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"GGUF":
        raise SystemExit("%s: not a GGUF file" % path)
    pos = 4

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, data, pos)[0]
        pos += struct.calcsize(fmt)
        return v

    def string():
        nonlocal pos
        n = take("<Q")
        s = data[pos:pos + n]
        pos += n
        return s

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("<I"), take("<Q")
            return [value(et) for _ in range(n)]
        return take(SCALAR[t])

    take("<I")  # version
    take("<Q")  # tensor count
    kv = {}
    for _ in range(take("<Q")):
        k = string().decode("utf-8")
        kv[k] = value(take("<I"))
    return kv


def main():
    src, out = sys.argv[1], sys.argv[2]
    kv = read_kv(src)
    if kv["tokenizer.ggml.model"] != b"t5":
        raise SystemExit("%s: not a Unigram (t5) vocabulary" % src)
    toks = [t.decode("utf-8") for t in kv["tokenizer.ggml.tokens"]]
    scores = kv["tokenizer.ggml.scores"]
    charsmap = bytes(b & 0xFF for b in kv["tokenizer.ggml.precompiled_charsmap"])
    doc = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode("ascii")},
            {"type": "Strip", "strip_left": False, "strip_right": True},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"}]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": None,
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": int(kv["tokenizer.ggml.unknown_token_id"]),
                  "vocab": [[t, float(s)] for t, s in zip(toks, scores)], "byte_fallback": False},
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
