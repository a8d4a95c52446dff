#!/usr/bin/env python3
"""The synthetic qwen3moe model requantized by llama.cpp's own llama-quantize
(Q4_K_M: Q4_K experts, which llama.cpp repacks on AVX2; Q5_K_M: Q5_K experts,
its tiled kernel from 8 rows per expert; Q4_0: repacked), each against a
llama.cpp golden made here, through the test of tests/runtime/test_families.c
(families/qwen3moe_logits and _greedy). A check run by hand, not in CI: CI has
no llama-quantize, and gguf-py cannot write K-quants.

Usage (the venv with llama-cpp-python 0.3.36 built for AVX2):
    ~/.cache/llm/venv-avx2/bin/python moe_quant_check.py [BUILD_DIR] [TYPE ...]
BUILD_DIR (default ./build) must hold bin/runtime_families and
synthetic/qwen3moe.gguf (the runtime_families_generate_qwen3moe test writes it);
LLAMA_QUANTIZE may name llama-quantize (default
~/.cache/llm/llamacpp-tools/avx2/bin/llama-quantize). Work files go to
$TMPDIR/llm-moe-quant-check/TYPE/. Exit status: the number of failing types.

Result on the s6-moe branch (AVX2): Q4_K_M, Q5_K_M and Q4_0 each bit-identical
on 1315 positions, greedy 160 / 160.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "logits"))
from make_logits_golden import make_golden  # noqa: E402

N_CONT = 32


def prompts():
    """make_family_golden.py's prompts for a MoE family (the chat text from its golden)."""
    with open(os.path.join(HERE, "golden", "qwen3moe.chat.json"), encoding="utf-8") as f:
        chat = json.load(f)["text"]
    return [
        {"name": "short", "text": "The capital of France is"},
        {"name": "non_english", "text": "La Tour Eiffel est une tour de fer puddlé de 330 mètres. "
                                        "東京は日本の首都です。Москва — столица России."},
        {"name": "chat", "text": chat},
        {"name": "long", "file": "/usr/share/common-licenses/GPL-3", "max_tokens": 500},
        {"name": "longer", "file": "/usr/share/common-licenses/GPL-3", "max_tokens": 700},
    ]


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
    types = sys.argv[2:] or ["Q4_K_M", "Q5_K_M", "Q4_0"]
    quantize = os.environ.get("LLAMA_QUANTIZE",
                              os.path.expanduser("~/.cache/llm/llamacpp-tools/avx2/bin/llama-quantize"))
    src = os.path.join(build, "synthetic", "qwen3moe.gguf")
    work = os.path.join(tempfile.gettempdir(), "llm-moe-quant-check")
    fails = 0
    for t in types:
        d = os.path.join(work, t)
        os.makedirs(os.path.join(d, "synthetic"), exist_ok=True)
        os.makedirs(os.path.join(d, "scripts", "golden", "families", "golden"), exist_ok=True)
        model = os.path.join(d, "synthetic", "qwen3moe.gguf")
        subprocess.run([quantize, "--allow-requantize", src, model, t, "2"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(d, "scripts", "golden", "families", "golden", "qwen3moe.bin"), "wb") as f:
            f.write(make_golden(model, prompts(), n_cont=N_CONT, full_rows="last-of-first"))
        env = dict(os.environ, LLM_BINARY_DIR=d, LLM_SOURCE_DIR=d)
        r = subprocess.run([os.path.join(build, "bin", "runtime_families"), "--filter", "families/qwen3moe*"],
                           env=env, capture_output=True, text=True)
        lines = [ln for ln in r.stderr.splitlines() if "pos:" in ln or "greedy continuation:" in ln
                 or "argmax equal" in ln or "Synthesis" in ln]
        print(f"== {t}: {'ok' if r.returncode == 0 else 'FAIL'}\n" + "\n".join(lines), flush=True)
        fails += r.returncode != 0
    return fails


if __name__ == "__main__":
    sys.exit(main())
