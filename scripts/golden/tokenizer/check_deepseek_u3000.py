#!/usr/bin/env python3
"""Evidence for the 13 deepseek-llm corpus documents where we differ from
llama.cpp (test_tok_conformance.c, README.md): which side HF tokenizers
takes on deepseek-llm's real pre-tokenizer rules. Not a test; prints.

HF side: a tokenizers.Tokenizer with deepseek-llm's tokenizer.json pipeline
(Sequence of Split(Isolated) on the five regexes of its tokenizer.json, as
llama.cpp and tok_pretok.c transcribe them, then ByteLevel without regex),
BPE vocabulary and merges from the vocab GGUF, control tokens special and
user-defined tokens added. It is first checked on llama.cpp's own
HF-made ggml-vocab-deepseek-llm.gguf.inp/.out (47/47).

Result when written (tokenizers 0.23.3, llama-cpp-python 0.3.36): ours ==
HF on 13/13 documents, llama.cpp == HF on 0/13; e.g. "\n   \u3000": HF
and we "\n" "  " " " "\u3000", llama.cpp "\n" "   " "\u3000".

Usage (two environments: llama-cpp-python and tokenizers are not in one):
  ~/.cache/llm/venv-avx2/bin/python check_deepseek_u3000.py --llamacpp /tmp/ll.json
  VENV_WITH_TOKENIZERS/bin/python check_deepseek_u3000.py /tmp/ll.json BUILD/bin/llm-tokenize
"""
import sys

import json
import os
import subprocess
import tempfile


def llamacpp_side():
    from llama_cpp import Llama
    V = os.environ.get("LLM_TESTDATA_DIR", "/work/shared/testdata") + "/llama-cpp-vocab/ggml-vocab-deepseek-llm.gguf"
    llm = Llama(model_path=V, vocab_only=True, verbose=False)
    corpus = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.txt"), encoding="utf-8").read().split("\n\x1d=== llm golden document ===\x1d\n")
    docs = [127, 156, 158, 167, 192, 234, 237, 248, 259, 269, 275, 279, 301]
    out = {str(d): llm.tokenize(corpus[d].encode(), add_bos=False, special=False) for d in docs}
    out["s"] = llm.tokenize("a   \u3000b".encode(), add_bos=False, special=False)
    json.dump(out, open(sys.argv[2], "w"))


def hf_side():
    from gguf import GGUFReader
    from tokenizers import Tokenizer, models, pre_tokenizers, Regex, AddedToken
    import json
    V = os.environ.get("LLM_TESTDATA_DIR", "/work/shared/testdata") + "/llama-cpp-vocab/ggml-vocab-deepseek-llm.gguf"
    LL = "/root/.cache/llm/src/llama_cpp_python-0.3.36/vendor/llama.cpp/models/ggml-vocab-deepseek-llm.gguf"
    r = GGUFReader(V)
    def strs(k):
        f = r.fields[k]; return [bytes(f.parts[i]).decode("utf-8", errors="surrogateescape") for i in f.data]
    tokens = strs("tokenizer.ggml.tokens"); merges = strs("tokenizer.ggml.merges")
    tt = r.fields["tokenizer.ggml.token_type"]; types = [int(tt.parts[i][0]) for i in tt.data]
    RX = ['[\\r\\n]', '\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+', '\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+', '\\s+$', '[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+', '\\p{N}+']
    def hf(digits_mode):
        tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=[tuple(m.split(" ", 1)) for m in merges], fuse_unk=False))
        seq = [pre_tokenizers.Split(Regex(x), behavior="isolated") for x in (RX if digits_mode == "pN" else RX[:-1])]
        if digits_mode == "digits": seq.append(pre_tokenizers.Digits(individual_digits=True))
        seq.append(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False))
        tok.pre_tokenizer = pre_tokenizers.Sequence(seq)
        tok.add_special_tokens([AddedToken(tokens[i], special=True, normalized=False) for i, ty in enumerate(types) if ty == 3])
        tok.add_tokens([AddedToken(tokens[i], special=False, normalized=False) for i, ty in enumerate(types) if ty == 4])
        return tok
    LLJ = json.load(open(sys.argv[1]))
    # 1) validate the HF pipeline on llama.cpp's own HF-made .inp/.out
    inp = open(LL + ".inp", encoding="utf-8").read().split("\n__ggml_vocab_test__\n")
    out = open(LL + ".out").read().split("\n")
    for mode in ("pN", "digits"):
        h = hf(mode); ok = 0
        for s, o in zip(inp, out):
            want = [int(x) for x in o.split()]
            ok += h.encode(s, add_special_tokens=False).ids == want
        print("HF pipeline (%s) on llama.cpp's .inp/.out: %d/%d" % (mode, ok, min(len(inp), len(out))))
    h = hf("pN")
    corpus = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.txt"), encoding="utf-8").read().split("\n\x1d=== llm golden document ===\x1d\n")
    BIN = sys.argv[2]
    docs = [127, 156, 158, 167, 192, 234, 237, 248, 259, 269, 275, 279, 301]
    agree_ours = agree_ll = 0
    for d in docs:
        text = corpus[d]
        with tempfile.NamedTemporaryFile("wb", delete=False) as f: f.write(text.encode())
        ours = [int(x) for x in subprocess.run([BIN, V, "-f", f.name], capture_output=True, text=True).stdout.split()]
        os.unlink(f.name)
        ref = h.encode(text, add_special_tokens=False).ids
        ll = LLJ[str(d)]
        agree_ours += ours == ref; agree_ll += ll == ref
        print("doc", d, "ours==HF", ours == ref, "llama.cpp==HF", ll == ref)
    print("ours == HF on %d/13, llama.cpp == HF on %d/13" % (agree_ours, agree_ll))
    s = "a   \u3000b"
    print("pieces HF:", h.pre_tokenizer.pre_tokenize_str(s))
    print("ids HF", h.encode(s, add_special_tokens=False).ids, "llama.cpp", LLJ["s"])
    d=127; text=corpus[d]; ref = h.encode(text, add_special_tokens=False); ll = LLJ[str(d)]
    k=0
    while k < min(len(ll), len(ref.ids)) and ref.ids[k]==ll[k]: k+=1
    print(len(ll), len(ref.ids), k)
    o=ref.offsets[k]; print("doc127 first diff", repr(text[max(0,o[0]-12):o[1]+8]), "HF", [tokens[i] for i in ref.ids[k-1:k+3]], "llama.cpp", [tokens[i] for i in ll[k-1:k+3]])
    print("pieces", h.pre_tokenizer.pre_tokenize_str(text[max(0,o[0]-12):o[1]+8]))


if __name__ == "__main__":
    llamacpp_side() if sys.argv[1] == "--llamacpp" else hf_side()
