#!/usr/bin/env python3
"""Small tokenizer.json files for the tokenizer.json loader tests and the
out-of-tree example, trained with HF `tokenizers` on the golden corpus, plus
the ids HF gives for a list of test strings (the reference our loader must
reproduce):

  tests/tokenizer/out_of_tree/tokenizer.json   byte-level BPE (Digits + ByteLevel), 1000 tokens
  tests/tokenizer/data/spm_bpe.tokenizer.json  Llama-2 style: Prepend/Replace U+2581, BPE
                                               with byte fallback <0xXX>, 600 tokens
  tests/tokenizer/data/wordpiece.tokenizer.json BERT style WordPiece, 800 tokens
  tests/tokenizer/data/metaspace_{split,nosplit}.tokenizer.json  Metaspace pre-tokenizer
                                               (prepend_scheme "first"), BPE + byte fallback
  tests/tokenizer/data/tiny_expected.txt       per line: file<TAB>add_special<TAB>hex(utf-8 text)<TAB>ids
                                               <TAB>hex(HF decode of those ids, specials kept)

Usage: make_tiny_json.py REPO_ROOT
"""
import json
import os
import sys

from tokenizers import (AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors,
                        trainers)

DOC_SEP = "\n\x1d=== llm golden document ===\x1d\n"

TESTS = [
    "", " ", "Hello world", " Hello world", "Hello  world\n\n  tabs\tand spaces   ",
    "The year 2026 had 365 days; 3.14159!", "don't can't WON'T it's",
    "Führer naïve café — “quotes” …", "中文分词测试，日本語のテキスト", "مرحبا بالعالم",
    "emoji 🦙🙂👍🏽 and ZWJ 👨‍👩‍👧", "e\u0301 combining", "<|im_start|>user\nhi<|im_end|>",
    "[CLS] unaffable [SEP] [MASK]", "x" * 120, "a.b,c!d?e", "    def f(x):\n        return x**2\n",
    "a  <mask> b", "x <|sep|> \t  y\n", "\u3000<mask>\u3000", "my_word here, my_words", "<|sep|>",
]


def corpus_docs(root):
    text = open(os.path.join(root, "scripts/golden/tokenizer/corpus.txt"), encoding="utf-8", newline="").read()
    return text.split(DOC_SEP)


def byte_level(docs):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    tr = trainers.BpeTrainer(vocab_size=1000, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(docs, tr)
    # Added tokens with whitespace stripping, and a non-special added token.
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True),
                            AddedToken("<|sep|>", rstrip=True, special=True)])
    tok.add_tokens([AddedToken("my_word", special=False, normalized=False)])
    return tok


def spm_bpe(docs):
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tr = trainers.BpeTrainer(vocab_size=600, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False,
                             limit_alphabet=200)
    tok.train_from_iterator([d[:4000] for d in docs], tr)
    # Byte fallback pieces are ordinary vocabulary entries in Llama's files.
    d = json.loads(tok.to_str())
    n = max(d["model"]["vocab"].values()) + 1
    for b in range(256):
        d["model"]["vocab"]["<0x%02X>" % b] = n + b
    tok = Tokenizer.from_str(json.dumps(d))
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    return tok


def metaspace_bpe(docs, split):
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=split)
    # The decoder Mistral/Llama files ship with Metaspace "first".
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tr = trainers.BpeTrainer(vocab_size=500, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False,
                             limit_alphabet=150)
    tok.train_from_iterator([d[:3000] for d in docs], tr)
    d = json.loads(tok.to_str())
    n = max(d["model"]["vocab"].values()) + 1
    for b in range(256):
        d["model"]["vocab"]["<0x%02X>" % b] = n + b
    return Tokenizer.from_str(json.dumps(d))


def wordpiece(docs):
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tr = trainers.WordPieceTrainer(vocab_size=800, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
                                   show_progress=False)
    tok.train_from_iterator(docs, tr)
    tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")),
                                                   ("[CLS]", tok.token_to_id("[CLS]")))
    return tok


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    docs = corpus_docs(root)
    files = {
        "tests/tokenizer/out_of_tree/tokenizer.json": byte_level(docs),
        "tests/tokenizer/data/spm_bpe.tokenizer.json": spm_bpe(docs),
        "tests/tokenizer/data/wordpiece.tokenizer.json": wordpiece(docs),
        "tests/tokenizer/data/metaspace_split.tokenizer.json": metaspace_bpe(docs, True),
        "tests/tokenizer/data/metaspace_nosplit.tokenizer.json": metaspace_bpe(docs, False),
    }
    lines = []
    for rel, tok in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        tok.save(os.path.join(root, rel), pretty=False)
        for t in TESTS:
            for special in (False, True):
                ids = tok.encode(t, add_special_tokens=special).ids
                dec = tok.decode(ids, skip_special_tokens=False)
                lines.append("%s\t%d\t%s\t%s\t%s" % (os.path.basename(rel), int(special), t.encode("utf-8").hex(),
                                                      " ".join(map(str, ids)), dec.encode("utf-8").hex()))
    with open(os.path.join(root, "tests/tokenizer/data/tiny_expected.txt"), "w") as f:
        f.write("# file<TAB>add_special<TAB>hex(text)<TAB>ids<TAB>hex(decoded) -- made by scripts/golden/tokenizer/make_tiny_json.py\n")
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
