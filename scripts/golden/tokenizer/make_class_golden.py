#!/usr/bin/env python3
"""Goldens for the three behaviour classes of issue 15, from independent
references, over the vocab GGUFs of the conformance snapshot:

  - WordPiece (bert-bge) on many scripts: Thai vowel and tone marks, Hangul
    syllables and jamo, Devanagari spacing marks (Mc), Arabic harakat, Hebrew
    points, Latin/Greek/Cyrillic accents, unassigned code points, format and
    private-use characters. Reference: HF `tokenizers` (BertNormalizer with
    lowercase and strip_accents following it, BertPreTokenizer, WordPiece)
    over the GGUF vocabulary, since llama.cpp's BERT normalization is an
    approximation of it (see README.md).
  - Special-token look-alikes in ordinary text (special parsing off) and
  - decomposed letters (a letter followed by combining marks), for the BPE and
    SPM vocabularies. Reference: llama.cpp (llama-cpp-python, vocab_only,
    add_bos=False, special=False).

Writes tests/tokenizer/data/classes_expected.txt:
  VOCAB<TAB>hex(utf-8 text)<TAB>ids   (no BOS/EOS)

Usage: make_class_golden.py REPO_ROOT
"""
import os
import sys

from gguf import GGUFReader

VOCAB_DIR = os.environ.get("LLM_TESTDATA_DIR", "/work/shared/testdata") + "/llama-cpp-vocab"

WPM_TEXTS = [
    "สวัสดีครับ ภาษาไทย", "น้ำ ที่ ก่ ก้ ก๊ ก๋ กิ กี กึ กื กุ กู กั ก็ ก์ ำ", "ก ่ ้ ั ิ", "เก่ง แก้ว ไม้",
    "안녕하세요 세계", "가 각 힣 ㄱ ㅏ", "ᄀ ᅡ ᆨ", "한국어 텍스트입니다",
    "हिन्दी ज़िन्दगी किताब", "कि की कु", "বাংলা", "தமிழ்",
    "مَرْحَبًا بِالْعَالَمِ", "שָׁלוֹם עוֹלָם", "Tiếng Việt có dấu", "Ἀθῆναι ἐστί", "Ёлка йод",
    "café naïve résumé Ångström", "e\u0301 a\u0308 o\u0302\u0323", "ǅ ǈ ß ẞ İ ﬁ Å Ω K",
    "a\u0e7eb \u0378 \ufffe x", "a\u200bb a\ufeffb a\u00adb a\u2066b", "a\ue000b a\U0010fffdb", "a\u0085b a\u007fb",
    "ٞؽ", "日本語の文章とカタカナ", "Ⅻ ½ ٣ ①",
]

SPECIAL_LOOKALIKES = [
    "Hello </s> world", "<s>text</s>", "a <|end|> b <|endoftext|> c", "<|im_start|>user\nhi<|im_end|>",
    "<|eot_id|><|start_header_id|>", "[CLS] x [SEP] [MASK] [PAD]", "<unk> <pad> <mask>",
    "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>hi<|END_OF_TURN_TOKEN|>", "<|user|>\nq<|end|>\n<|assistant|>",
    "<|system|> </s></s> <|placeholder1|>", "<end_of_turn><eos>", "<|fim_prefix|>x<|fim_suffix|>",
]

DECOMPOSED = [
    "cafe\u0301 e\u0301", "a\u0308o\u0308u\u0308", "n\u0303 N\u0303", "o\u0302\u0323 \u1ed9",
    "A\u030a \u212b \u00c5", "\u1100\u1161\u11a8 \uac01", "e\u0301\u0301\u0301", "\u0301 leading mark",
]

LLAMA_VOCABS = ["gemma-4", "phi-3", "llama-spm", "qwen2", "qwen35", "llama-bpe", "command-r", "mpt", "deepseek-llm",
                "starcoder", "gpt-2"]


def bert_tokenizer(path):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    r = GGUFReader(path)
    f = r.fields["tokenizer.ggml.tokens"]
    toks = [bytes(f.parts[i]).decode("utf-8") for i in f.data]
    tt = r.fields["tokenizer.ggml.token_type"]
    types = [int(tt.parts[i][0]) for i in tt.data]
    vocab = {}
    for i, (t, ty) in enumerate(zip(toks, types)):
        if ty == 1:
            t = t[1:] if t.startswith("\u2581") else "##" + t
        vocab.setdefault(t, i)
    tok = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None,
                                                lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return lambda s: tok.encode(s, add_special_tokens=False).ids


def llama_tokenizer(path):
    from llama_cpp import Llama
    llm = Llama(model_path=path, vocab_only=True, verbose=False)
    return lambda s: llm.tokenize(s.encode("utf-8"), add_bos=False, special=False)


def main():
    root = sys.argv[1]
    # Not included: code points whose category changed after the Unicode version of HF's tables
    # (e.g. U+0ECE, Cn there, Mn in Unicode 15 as in utf8proc and llama.cpp).
    lines = ["# VOCAB<TAB>hex(text)<TAB>ids -- made by scripts/golden/tokenizer/make_class_golden.py"]
    enc = bert_tokenizer(os.path.join(VOCAB_DIR, "ggml-vocab-bert-bge.gguf"))
    for s in WPM_TEXTS + SPECIAL_LOOKALIKES + DECOMPOSED:
        lines.append("bert-bge\t%s\t%s" % (s.encode("utf-8").hex(), " ".join(map(str, enc(s)))))
    for name in LLAMA_VOCABS:
        enc = llama_tokenizer(os.path.join(VOCAB_DIR, "ggml-vocab-%s.gguf" % name))
        for s in SPECIAL_LOOKALIKES + DECOMPOSED:
            lines.append("%s\t%s\t%s" % (name, s.encode("utf-8").hex(), " ".join(map(str, enc(s)))))
    with open(os.path.join(root, "tests/tokenizer/data/classes_expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
