#!/usr/bin/env python3
"""Make the tokenizer golden files for the default model (SmolLM2, byte-level
BPE, pre-tokenizer "smollm"):

  corpus.txt      >= 200 KB of documents separated by DOC_SEP: GNU licence
                  texts, Python stdlib sources, hand-written multilingual lines
                  (CJK, Arabic, Hebrew, Devanagari, Cyrillic, Greek), emoji (ZWJ,
                  skin tones, flags), combining marks, whitespace runs, numbers,
                  special-token strings, and random mixes of these (fixed seed).
  golden_ids.bin  the ids HF `tokenizers` gives for each document, built from
                  the model GGUF by hf_from_gguf.py (independent of our code).

golden_ids.bin layout (little endian): b"LTKG", u32 version (1), u32 n_docs,
then per document: u32 n, n x u16 ids with special tokens parsed (HF default),
then u32 m, m x u16 ids with special tokens split as text
(encode_special_tokens=True), or m = 0xFFFFFFFF when identical to the first.

Usage: make_golden.py MODEL.gguf OUT_DIR   (OUT_DIR = this folder to refresh)
"""
import glob
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_from_gguf import build  # noqa: E402

DOC_SEP = "\n\x1d=== llm golden document ===\x1d\n"
SEED = 20261121

HAND = [
    "Hello world! How's it going? I'm fine, they're here, we've won, you'll see, he'd go.",
    "HELLO WORLD'S END 'S 'T 'RE 'VE 'M 'LL 'D",
    "The quick brown fox jumps over the lazy dog. 1234567890 3.14159 1,000,000 -42 +7e-10 0x1F",
    "Phone: +1 (555) 123-4567, ISBN 978-3-16-148410-0, 2026-11-21T21:35:00Z, v1.2.3-rc4",
    "中文分词测试：我爱北京天安门，天安门上太阳升。",
    "日本語のテキスト、ひらがなとカタカナ、漢字も含む。東京は晴れです。",
    "한국어 문장입니다. 안녕하세요, 세계!",
    "مرحبا بالعالم! هذه جملة عربية مع أرقام ١٢٣٤٥ وعلامات ترقيم؟",
    "שלום עולם, זה משפט בעברית.",
    "नमस्ते दुनिया, यह हिंदी में एक वाक्य है। १२३",
    "Привет, мир! Это русский текст с цифрами 2026 и ёжиком.",
    "Γειά σου Κόσμε! Ελληνικά με τόνους: άέήίόύώ ΐΰ",
    "Emoji: 🦙🙂👍🏽👨‍👩‍👧‍👦 🏳️‍🌈 🇫🇷🇯🇵 ❤️ ✨🎉 😀😃😄😁",
    "Combining: e\u0301 a\u0300 o\u0308 n\u0303 Z\u0351\u0352\u0353a\u0354\u0355l\u0356g\u0357o\u0358 \u1e9b\u0323",
    "Whitespace:\t\ttabs,   spaces,\u00a0nbsp,\u3000ideographic,\u2028line sep,\r\nCRLF\n\n\n   \n\t \n",
    "Specials: <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|><|endoftext|>",
    "Partial specials: <|im_start <|im_end| <|endoftext| <repo_name> <reponame><filename> <gh_stars>10",
    "Numbers: ０１２３４５ ²³¹ ½ ¼ Ⅻ ⅷ ٣ ๓ ൬ 𝟘𝟙𝟚 1️⃣",
    "Symbols: → ← ↑ ↓ ∀ ∃ ∑ ∫ √ ∞ ≠ ≤ ≥ © ® ™ € £ ¥ ₹ § ¶ • … — – «» „“ ‘’",
    "Code: for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; } // dot\n\tif x != None and y >= 3:\n\t\treturn x**2",
    "URL https://example.com/path?query=1&x=y#frag and mail a.b+c@example.org",
    "    leading spaces and trailing spaces    ",
    "ied 4 ½ months",
    "Führer Straße Ærøskøbing Œuvre naïve café résumé coöperate",
    "\u200b\u200c\u200d\ufeff zero-width and BOM, soft\u00adhyphen",
    "Mixed: abc123def 456ghi 7_8_9 foo.bar_baz-qux",
    "'''docstring''' \"\"\"triple\"\"\" `backticks` ~tilde~ ^caret^ |pipe|",
]

EMOJI = ["🦙", "🙂", "👍🏿", "🧑‍💻", "🇩🇪", "🤖", "💡", "🔥", "🌍", "😂"]
WORDS = ["the", "of", "and", "tokenizer", "Hugging", "Face", "llama", "数据", "模型", "النص", "κείμενο",
         "текст", "テスト", "données", "Straße", "naïve", "x", "I", "a", "don't", "it's", "CAN'T"]
WS = [" ", "  ", "   ", "\t", "\n", "\n\n", " \n ", "\r\n", "    ", "\u00a0", "\u3000", " \t "]
NUMS = ["0", "7", "42", "123", "2026", "3.14", "1e10", "100000000", "١٢٣", "½", "2²"]
SPECIALS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<file_sep>", "<jupyter_code>", "<|im_"]


def licence_docs(rng):
    docs = []
    for p in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isdir(p) or os.path.islink(p):
            continue
        text = open(p, encoding="utf-8", errors="replace").read()
        # A few slices of each licence, whole paragraphs where possible.
        for _ in range(3):
            a = rng.randrange(0, max(1, len(text) - 3000))
            docs.append(text[a:a + rng.randrange(800, 3000)])
    return docs


def python_docs(rng):
    docs = []
    files = sorted(glob.glob("/usr/lib/python3*/*.py"))
    for p in rng.sample(files, min(40, len(files))):
        text = open(p, encoding="utf-8", errors="replace").read()
        a = rng.randrange(0, max(1, len(text) - 2500))
        docs.append(text[a:a + rng.randrange(500, 2500)])
    return docs


def random_docs(rng, n):
    pools = [WORDS, WS, NUMS, EMOJI, SPECIALS, HAND]
    weights = [40, 25, 12, 8, 4, 3]
    docs = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randrange(5, 120)):
            pool = rng.choices(pools, weights)[0]
            s = rng.choice(pool)
            if pool is HAND:
                a = rng.randrange(len(s))
                s = s[a:a + rng.randrange(1, 40)]
            parts.append(s)
        docs.append("".join(parts))
    return docs


def make_corpus():
    rng = random.Random(SEED)
    docs = list(HAND) + licence_docs(rng) + python_docs(rng) + random_docs(rng, 220)
    docs.append("")  # the empty document
    docs = [d for d in docs if DOC_SEP not in d]
    return docs


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model, out_dir = sys.argv[1], sys.argv[2]
    tok = build(model)
    docs = make_corpus()
    corpus = DOC_SEP.join(docs)
    assert len(corpus.encode("utf-8")) >= 200 * 1024, len(corpus.encode("utf-8"))
    with open(os.path.join(out_dir, "corpus.txt"), "w", encoding="utf-8", newline="") as f:
        f.write(corpus)
    out = bytearray(b"LTKG" + struct.pack("<II", 1, len(docs)))
    total = 0
    for d in docs:
        tok.encode_special_tokens = False
        a = tok.encode(d, add_special_tokens=False).ids
        tok.encode_special_tokens = True
        b = tok.encode(d, add_special_tokens=False).ids
        assert max(a + b + [0]) < 65536
        out += struct.pack("<I", len(a)) + struct.pack("<%dH" % len(a), *a)
        if a == b:
            out += struct.pack("<I", 0xFFFFFFFF)
        else:
            out += struct.pack("<I", len(b)) + struct.pack("<%dH" % len(b), *b)
        total += len(a)
    with open(os.path.join(out_dir, "golden_ids.bin"), "wb") as f:
        f.write(out)
    print("docs %d, corpus %d bytes, %d tokens" % (len(docs), len(corpus.encode("utf-8")), total))


if __name__ == "__main__":
    main()
