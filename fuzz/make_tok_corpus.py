#!/usr/bin/env python3
"""Seed corpora of the tokenizer-side fuzz harnesses (fuzz/corpus/tok_*/).

  /root/.cache/llm/venv/bin/python fuzz/make_tok_corpus.py [testdata_dir]

- tok_json:     the tokenizer.json files of tests/tokenizer/ (copied), plus
                malformed JSON for the tokenizer's own reader (truncated,
                bad escapes, lone surrogates, bad UTF-8, deep nesting,
                duplicate keys, numbers out of range).
- tok_encode:   texts from the llama.cpp conformance inputs (.inp files of
                gpt-2, llama-spm, bert-bge), a few per file, plus bad UTF-8.
- vocab_gguf:   the gpt-2 / llama-spm / bert-bge vocab GGUFs cut to a few
                hundred tokens (merges kept only between kept tokens; special
                ids past the cut re-appended), written with gguf-py's
                GGUFWriter, plus hostile variants of the small gpt-2 one
                (wrong types, short arrays, huge ids, empty vocab, unknown merges).
- chat_template: the template strings of tests/chat/golden/*.json
                (seed = template, NUL, then three message contents).
Files named regress_* are fuzzer findings and are kept by this script.
"""
import glob
import json
import os
import shutil
import sys

import gguf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTDATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "testdata")
VOCAB = os.path.join(TESTDATA, "llama-cpp-vocab")
OUT = os.path.join(ROOT, "fuzz", "corpus")
T = gguf.GGUFValueType


def fresh(name):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if not f.startswith("regress_"):
            os.remove(os.path.join(d, f))
    return d


def tok_json():
    d = fresh("tok_json")
    for p in sorted(glob.glob(os.path.join(ROOT, "tests", "tokenizer", "**", "*tokenizer.json"), recursive=True)):
        rel = os.path.relpath(p, os.path.join(ROOT, "tests", "tokenizer")).replace("/", "_")
        shutil.copy(p, os.path.join(d, rel))
    tiny = open(os.path.join(ROOT, "tests", "tokenizer", "out_of_tree", "tokenizer.json"), "rb").read()
    bad = {
        "truncated": tiny[: len(tiny) // 2],
        "bad_escape": b'{"model":{"type":"BPE","vocab":{"a\\q":0},"merges":[]}}',
        "bad_u_escape": b'{"model":{"type":"BPE","vocab":{"\\u12G4":0},"merges":[]}}',
        "lone_high_surrogate": b'{"model":{"type":"BPE","vocab":{"\\ud800x":0},"merges":[]}}',
        "lone_low_surrogate": b'{"model":{"type":"BPE","vocab":{"\\udc00\\ud800":0},"merges":[]}}',
        "surrogate_pair": b'{"model":{"type":"BPE","vocab":{"\\ud83e\\udd99":0,"\\u0000":1},"merges":[]}}',
        "bad_utf8": b'{"model":{"type":"BPE","vocab":{"\xc0\x80":0,"\xed\xa0\x80":1},"merges":[]}}',
        "deep_array": b"[" * 300 + b"]" * 300,
        "deep_object": b'{"a":' * 200 + b"1" + b"}" * 200,
        "duplicate_key": b'{"model":{"type":"BPE","vocab":{"a":0,"a":1},"merges":[]}}',
        "numbers": b'{"model":{"type":"BPE","vocab":{"a":9223372036854775808,"b":01,"c":1e999},"merges":[]}}',
        "trailing_comma": b'{"model":{"type":"BPE","vocab":{"a":0,},"merges":[]}}',
    }
    for name, body in bad.items():
        with open(os.path.join(d, f"malformed_{name}.json"), "wb") as f:
            f.write(body)


def tok_encode():
    d = fresh("tok_encode")
    n = 0
    for name in ("gpt-2", "llama-spm", "bert-bge"):
        text = open(os.path.join(VOCAB, f"ggml-vocab-{name}.gguf.inp"), encoding="utf-8").read()
        cases = text.split("\n__ggml_vocab_test__\n")
        for c in cases[::3][:14]:
            if not c:
                continue
            with open(os.path.join(d, f"{name}_{n:02d}"), "wb") as f:
                f.write(c.encode("utf-8")[:2048])
            n += 1
    for i, b in enumerate([b"ok \xff", b"\xc0\x80", b"\xed\xa0\x80 surrogate", b"\xf4\x90\x80\x80", b"abc\xe2\x82"]):
        with open(os.path.join(d, f"bad_utf8_{i}"), "wb") as f:
            f.write(b)


def fields(path):
    r = gguf.GGUFReader(path)
    out = {}
    for k, f in r.fields.items():
        if k.startswith("GGUF."):
            continue
        out[k] = (f.types, f.contents())
    return out


def small_vocab(name, n_keep):
    """tokenizer.ggml.* of a vocab GGUF with only n_keep tokens (+ specials)."""
    kv = fields(os.path.join(VOCAB, f"ggml-vocab-{name}.gguf"))
    tokens = kv["tokenizer.ggml.tokens"][1]
    keep = list(range(min(n_keep, len(tokens))))
    remap = {i: i for i in keep}
    for k, (types, v) in kv.items():
        if k.startswith("tokenizer.ggml.") and k.endswith("_token_id") and v not in remap and v < len(tokens):
            remap[v] = len(keep)
            keep.append(v)
    res = {}
    for k, (types, v) in kv.items():
        if not k.startswith("tokenizer.") or k == "tokenizer.chat_template":
            continue
        if k in ("tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"):
            v = [v[i] for i in keep]
        elif k == "tokenizer.ggml.merges":
            kept = set(tokens[i] for i in keep)
            v = [m for m in v if all(p in kept for p in m.split(" ", 1)) and m.replace(" ", "", 1) in kept][:200]
        elif k.endswith("_token_id"):
            v = remap.get(v, v)
        res[k] = (types, v)
    return res


def write(path, kv, arch="llama"):
    w = gguf.GGUFWriter(path, arch)
    for k, (types, v) in kv.items():
        if types[0] == T.ARRAY:
            w.add_key_value(k, v, T.ARRAY, types[1] if len(types) > 1 else None)
        else:
            w.add_key_value(k, v, types[0])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def vocab_gguf():
    d = fresh("vocab_gguf")
    base = {}
    for name, n in (("gpt-2", 300), ("llama-spm", 300), ("bert-bge", 300)):
        base[name] = small_vocab(name, n)
        write(os.path.join(d, f"small_{name}.gguf"), base[name])
    g = base["gpt-2"]
    ntok = len(g["tokenizer.ggml.tokens"][1])
    variants = {
        "scores_short": {"tokenizer.ggml.scores": ([T.ARRAY, T.FLOAT32], [0.0] * (ntok - 5))},
        "token_type_strings": {"tokenizer.ggml.token_type": ([T.ARRAY, T.STRING], ["1"] * ntok)},
        "token_type_short": {"tokenizer.ggml.token_type": ([T.ARRAY, T.INT32], [1] * 3)},
        "token_type_bad": {"tokenizer.ggml.token_type": ([T.ARRAY, T.INT32], [-7, 99] * (ntok // 2) + [0] * (ntok % 2))},
        "bos_huge": {"tokenizer.ggml.bos_token_id": ([T.UINT32], 0xFFFFFFF0)},
        "eos_past_end": {"tokenizer.ggml.eos_token_id": ([T.UINT32], ntok)},
        "bos_negative": {"tokenizer.ggml.bos_token_id": ([T.INT32], -5)},
        "bos_string": {"tokenizer.ggml.bos_token_id": ([T.STRING], "0")},
        # (gguf-py refuses to write empty arrays: the fuzzer makes those)
        "one_empty_token": {"tokenizer.ggml.tokens": ([T.ARRAY, T.STRING], [""]),
                            "tokenizer.ggml.token_type": ([T.ARRAY, T.INT32], [1])},
        "tokens_ints": {"tokenizer.ggml.tokens": ([T.ARRAY, T.INT32], list(range(ntok)))},
        "merges_unknown": {"tokenizer.ggml.merges": ([T.ARRAY, T.STRING], ["zz qq", "a", " ", "Ġ Ġ", "a b c", ""])},
        "merges_ints": {"tokenizer.ggml.merges": ([T.ARRAY, T.INT32], [1, 2, 3])},
        "model_unknown": {"tokenizer.ggml.model": ([T.STRING], "rwkv")},
        "model_llama_on_bpe": {"tokenizer.ggml.model": ([T.STRING], "llama")},
        "model_bert_on_bpe": {"tokenizer.ggml.model": ([T.STRING], "bert")},
        "pre_unknown": {"tokenizer.ggml.pre": ([T.STRING], "no-such-pre")},
        "add_bos_int": {"tokenizer.ggml.add_bos_token": ([T.INT32], 1)},
        "dup_tokens": {"tokenizer.ggml.tokens": ([T.ARRAY, T.STRING], ["a"] * ntok)},
        "empty_strings": {"tokenizer.ggml.tokens": ([T.ARRAY, T.STRING], [""] * ntok)},
    }
    for vname, change in variants.items():
        kv = dict(g)
        kv.update(change)
        write(os.path.join(d, f"gpt2_{vname}.gguf"), kv)


def chat_template():
    d = fresh("chat_template")
    gold = os.path.join(ROOT, "tests", "chat", "golden")
    n = 0
    for fn in ("chat_golden.json", "jinja_golden.json"):
        data = json.load(open(os.path.join(gold, fn), encoding="utf-8"))
        for t in data["templates"] + data.get("syntax_errors", []):
            body = t["template"].encode("utf-8") + b"\0Be brief.\0Hi {{ x }}\0 Hello.  "
            with open(os.path.join(d, f"{fn.split('_')[0]}_{t['name']}"), "wb") as f:
                f.write(body)
            n += 1


if __name__ == "__main__":
    tok_json()
    tok_encode()
    vocab_gguf()
    chat_template()
