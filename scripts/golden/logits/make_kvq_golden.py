#!/usr/bin/env python3
"""llama.cpp's logits with a quantized KV cache, for tests/runtime/test_kv_quant.c.

Usage: make_kvq_golden.py MODEL.gguf TYPE OUTDIR
       (run with the AVX2 reference environment, scripts/golden/reference-venv.sh;
       TYPE: q8_0, q4_0, ... for both the K and the V cache)

Writes OUTDIR/kvq_<TYPE>_golden.bin in make_logits_golden.py's format: llama.cpp
(llama-cpp-python 0.3.36) run with type_k = type_v = TYPE and flash attention on
(llama.cpp refuses a quantized V cache without it), on four of prompts.json's
prompts (the long one cut to 300 tokens), top-10 logits at every position and a
16-token greedy continuation, no full-vocabulary rows (kept small).

Goldens made with it (default model, SmolLM2-135M-Instruct.Q4_1.gguf):
tests/runtime/data/kvq_q8_0_golden.bin, tests/runtime/data/kvq_q4_0_golden.bin.
"""
import json
import os
import sys

from make_logits_golden import make_golden

# ggml_type numbers (ggml.h)
GGML_TYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8, "bf16": 30}
PROMPTS = {"short": None, "code": None, "chatml": None, "long": 300}


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in GGML_TYPES:
        sys.exit(__doc__)
    model, tname, outdir = sys.argv[1:]
    here = os.path.dirname(os.path.abspath(__file__))
    prompts = []
    for p in json.load(open(os.path.join(here, "prompts.json"), encoding="utf-8")):
        if p["name"] in PROMPTS:
            if PROMPTS[p["name"]]:
                p["max_tokens"] = PROMPTS[p["name"]]
            prompts.append(p)
    t = GGML_TYPES[tname]
    blob = make_golden(model, prompts, n_cont=16, full_rows="none", type_k=t, type_v=t, flash_attn=True)
    out = os.path.join(outdir, f"kvq_{tname}_golden.bin")
    with open(out, "wb") as f:
        f.write(blob)
    print(f"wrote {out}: {len(blob)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
