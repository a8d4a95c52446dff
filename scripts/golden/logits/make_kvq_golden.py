#!/usr/bin/env python3
"""llama.cpp's logits with a quantized KV cache, for tests/runtime/test_kv_quant.c.

Usage: make_kvq_golden.py MODEL.gguf TYPE_K[,TYPE_V] OUTDIR [--small] [--tag NAME]
       (run with the AVX2 reference environment, scripts/golden/reference-venv.sh;
       TYPE: f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1; TYPE_V defaults to TYPE_K)

Writes OUTDIR/kvq_<TYPE_K>[_<TYPE_V>]_golden.bin in make_logits_golden.py's
format: llama.cpp (llama-cpp-python 0.3.36) run with those type_k, type_v and
flash attention on (llama.cpp refuses a quantized V cache without it), on four
of prompts.json's prompts (the long one cut to 300 tokens), top-10 logits at
every position and a 16-token greedy continuation, no full-vocabulary rows
(kept small). --small: two prompts (code, and long cut to 128 tokens), 8 steps.

Goldens made with it (default model, SmolLM2-135M-Instruct.Q4_1.gguf), in
tests/runtime/data: kvq_q8_0_golden.bin, kvq_q4_0_golden.bin; with --small
kvq_q4_1, kvq_q5_0, kvq_q5_1, kvq_bf16, kvq_q8_0_f16, kvq_f16_q5_1. --tag NAME
names the file kvq_NAME_<types>_golden.bin: with --tag llama3 --small on the
synthetic llama3 family model (scripts/golden/families/make_synthetic.py
llama3: Llama 3.2 1B's heads, 32 query and 8 KV heads of 64),
kvq_llama3_q8_0_golden.bin and kvq_llama3_q4_0_golden.bin.
"""
import json
import os
import sys

from make_logits_golden import make_golden

# ggml_type numbers (ggml.h)
GGML_TYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8, "bf16": 30}
PROMPTS = {"short": None, "code": None, "chatml": None, "long": 300}


def main():
    argv = sys.argv[1:]
    tag = ""
    if "--tag" in argv:
        i = argv.index("--tag")
        if i + 1 >= len(argv):
            sys.exit(__doc__)
        tag = argv[i + 1] + "_"
        del argv[i:i + 2]
    args = [a for a in argv if a != "--small"]
    small = "--small" in argv
    if len(args) != 3:
        sys.exit(__doc__)
    model, tname, outdir = args
    names = tname.split(",")
    if len(names) > 2 or any(n not in GGML_TYPES for n in names):
        sys.exit(__doc__)
    tk, tv = GGML_TYPES[names[0]], GGML_TYPES[names[-1]]
    want = {"code": None, "long": 128} if small else PROMPTS
    here = os.path.dirname(os.path.abspath(__file__))
    prompts = []
    for p in json.load(open(os.path.join(here, "prompts.json"), encoding="utf-8")):
        if p["name"] in want:
            if want[p["name"]]:
                p["max_tokens"] = want[p["name"]]
            prompts.append(p)
    blob = make_golden(model, prompts, n_cont=8 if small else 16, full_rows="none", type_k=tk, type_v=tv,
                       flash_attn=True)
    tname = "_".join(names)
    out = os.path.join(outdir, f"kvq_{tag}{tname}_golden.bin")
    with open(out, "wb") as f:
        f.write(blob)
    print(f"wrote {out}: {len(blob)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
