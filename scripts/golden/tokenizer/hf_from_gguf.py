#!/usr/bin/env python3
"""Build a Hugging Face `tokenizers.Tokenizer` from a byte-level BPE GGUF's
tokenizer.ggml.* metadata (independent of our C code), the same pipeline as
the published SmolLM2 tokenizer.json: BPE(vocab, merges), pre-tokenizer
Sequence[Digits(individual_digits), ByteLevel(no prefix space, GPT-2 regex)],
ByteLevel decoder, control tokens as special added tokens.

Usage: hf_from_gguf.py MODEL.gguf OUT_tokenizer.json
"""
import sys

from gguf import GGUFReader
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

# pre-tokenizer name -> HF pre-tokenizer, for the names this script supports.
PRE = {
    "smollm": lambda: pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]),
    "starcoder": lambda: pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]),
    "gpt-2": lambda: pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
}


def field_str(r, key):
    f = r.fields.get(key)
    return None if f is None else bytes(f.parts[f.data[0]]).decode("utf-8")


def field_strs(r, key):
    f = r.fields[key]
    return [bytes(f.parts[i]).decode("utf-8", errors="surrogateescape") for i in f.data]


def build(path):
    r = GGUFReader(path)
    assert field_str(r, "tokenizer.ggml.model") == "gpt2", "byte-level BPE GGUF expected"
    pre = field_str(r, "tokenizer.ggml.pre") or "gpt-2"
    tokens = field_strs(r, "tokenizer.ggml.tokens")
    merges = field_strs(r, "tokenizer.ggml.merges")
    tt = r.fields["tokenizer.ggml.token_type"]
    types = [int(tt.parts[i][0]) for i in tt.data]
    vocab = {t: i for i, t in enumerate(tokens)}
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=pairs, fuse_unk=False, byte_fallback=False))
    tok.pre_tokenizer = PRE[pre]()
    tok.decoder = decoders.ByteLevel()
    special = [AddedToken(tokens[i], special=True, normalized=False) for i, ty in enumerate(types) if ty == 3]
    tok.add_special_tokens(special)
    return tok


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    build(sys.argv[1]).save(sys.argv[2])
