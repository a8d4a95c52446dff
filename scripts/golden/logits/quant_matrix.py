#!/usr/bin/env python3
"""Quantize the default model to many types with llama.cpp, and compare our forward with llama.cpp's on each.

Usage (project venv, /root/.cache/llm/venv/bin/python), from the source root:
  quant_matrix.py BUILD_DIR [--model M.gguf] [--out /tmp/qe2e] [--types Q4_0,Q8_0]
                  [--prompts chatml,long] [--md QUANTS.md] [--keep]

1. Quantizes MODEL (default: the project's default model, SmolLM2-135M-Instruct
   Q4_1) with llama.cpp's own quantizer (llama_cpp.llama_model_quantize,
   allow_requantize, default params otherwise) into OUT/smol-<type>.gguf
   (skipped when the file exists). n_embd 576 is not a multiple of 256, so for
   the K-quant types llama.cpp falls back to other types for many tensors: the
   actual tensor types of each file are read back with the gguf package.
2. For each file and prompt (entries of prompts.json): llamacpp_tap.py
   (llama.cpp's tensors, --decode-from -3 --logits --no-attn-probs: the prefill
   of all but the last 3 tokens, then 3 one-token decodes), then
   BUILD_DIR/bin/llm-tap-dump on the same tokens, then compare_taps.py, whose
   first non-identical tensor (step, layer, name, max|diff|) is recorded, or
   "identical", or our loader's error when llm-tap-dump fails.
3. Prints the table and, with --md, writes it as markdown.

The tap directories are large (about 0.5 GB per side for the long prompt) and
are deleted after each comparison unless --keep.
"""
import argparse
import collections
import ctypes
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODEL = "/root/.cache/llm/models/SmolLM2-135M-Instruct.Q4_1.gguf"
MD_HEAD = """# Our CPU forward against llama.cpp on llama.cpp's own quantizations

Made by `scripts/golden/logits/quant_matrix.py` (rerun:
`/root/.cache/llm/venv/bin/python scripts/golden/logits/quant_matrix.py BUILD_DIR --md scripts/golden/logits/QUANTS.md`).
Each type is made from %s by llama.cpp's quantizer (llama-cpp-python 0.3.36,
`llama_model_quantize`, allow_requantize, default parameters otherwise). n_embd 576 is
not a multiple of 256, so for the K-quant types llama.cpp falls back to other types for
most tensors: the tensor types are those the file really holds (gguf package).

Each prompt (prompts.json) runs as llama.cpp's tap (llamacpp_tap.py) and ours
(llm-tap-dump, build `%s`) do: prefill of all tokens but the last 3 in one batch, then 3
one-token decodes, F16 KV cache, 2 threads, every token an output, logits included.
"identical": every tapped tensor of every step (per-layer intermediates, result_norm,
logits) is bit-identical to llama.cpp's. Otherwise the first tensor that is not, in
forward order, and its max|diff|. "ours fails": our loader or backend refused the file.

"""
TYPES = ["F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K_S", "Q4_K_M", "Q5_K_M", "Q6_K",
         "Q2_K", "Q3_K_M"]


def quantize(src, out, t):
    import llama_cpp as L
    if os.path.exists(out):
        return None
    p = L.llama_model_quantize_default_params()
    p.ftype = getattr(L, "LLAMA_FTYPE_MOSTLY_" + t)
    p.allow_requantize = True
    p.nthread = 2
    r = L.llama_model_quantize(src.encode(), out.encode(), ctypes.byref(p))
    return None if r == 0 else "quantizer returned %d" % r


def tensor_types(path):
    import gguf
    r = gguf.GGUFReader(path)
    c = collections.Counter(t.tensor_type.name for t in r.tensors)
    emb = [t.tensor_type.name for t in r.tensors if t.name == "token_embd.weight"]
    s = ", ".join("%s %d" % kv for kv in sorted(c.items(), key=lambda kv: -kv[1]))
    return s + ("; token_embd %s" % emb[0] if emb else "")


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def compare(build, model, prompt, work, keep):
    lc, ours = os.path.join(work, "lc"), os.path.join(work, "ours")
    for d in (lc, ours):
        shutil.rmtree(d, ignore_errors=True)
    try:
        rc, out = run([sys.executable, os.path.join(HERE, "llamacpp_tap.py"), model, lc, "--prompt", prompt,
                       "--decode-from", "-3", "--logits", "--no-attn-probs"])
        if rc != 0:
            return "llama.cpp tap failed: " + out.strip().splitlines()[-1]
        rc, out = run([os.path.join(build, "bin", "llm-tap-dump"), model, os.path.join(lc, "tokens.txt"), ours,
                       "--decode-from", "-3", "--logits"])
        if rc != 0:
            last = out.strip().splitlines()[-1] if out.strip() else "exit %d" % rc
            return "ours fails: " + last
        rc, out = run([sys.executable, os.path.join(HERE, "compare_taps.py"), ours, lc, "--after", "0"])
        if rc != 0:
            return "compare failed: " + out.strip().splitlines()[-1]
        if re.search(r"^all \d+ compared tensors are bit-identical", out, re.M):
            return "identical"
        m = re.search(r"^>>> (\d+)\s+(-?\d+)\s+(\S+)\s+(\S+)\s+(\S+)", out, re.M)
        if not m:
            return "unparsed: " + out.strip().splitlines()[-1]
        step, layer, name, _shape, md = m.groups()
        where = "prefill" if step == "0" else "decode %s" % step
        return "%s, layer %s, %s (max|diff| %s)" % (where, layer, name, md)
    finally:
        if not keep:
            for d in (lc, ours):
                shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--out", default="/tmp/qe2e")
    ap.add_argument("--types", default=",".join(TYPES))
    ap.add_argument("--prompts", default="chatml,long")
    ap.add_argument("--md", default="")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    prompts = args.prompts.split(",")
    rows = []
    for t in args.types.split(","):
        path = os.path.join(args.out, "smol-%s.gguf" % t.lower())
        err = quantize(args.model, path, t)
        if err:
            rows.append((t, err, ["-"] * len(prompts)))
            print(rows[-1], flush=True)
            continue
        res = [compare(args.build, path, p, os.path.join(args.out, "tap-%s-%s" % (t.lower(), p)), args.keep)
               for p in prompts]
        rows.append((t, tensor_types(path), res))
        print("%-7s | %s | %s" % (t, rows[-1][1], " | ".join(res)), flush=True)
    if args.md:
        with open(args.md, "w", encoding="utf-8") as f:
            f.write(MD_HEAD % (os.path.basename(args.model), args.build))
            f.write("| type | tensor types (count) | %s |\n" % " | ".join(
                "%s: prefill + 3 decodes" % p for p in prompts))
            f.write("|---|---|%s\n" % ("---|" * len(prompts)))
            for t, tt, res in rows:
                f.write("| %s | %s | %s |\n" % (t, tt, " | ".join(res)))


if __name__ == "__main__":
    main()
