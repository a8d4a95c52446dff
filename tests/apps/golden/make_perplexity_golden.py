#!/usr/bin/env python3
"""Makes perplexity_c128.json: llama.cpp's perplexity (through llama-cpp-python,
via scripts/golden/logits/llamacpp_perplexity.py, which scores exactly as
llm-perplexity and llama.cpp's perplexity tool do) of
tests/apps/data/perplexity_text.txt at CTX 128, and llama.cpp's token ids of
that text (for llm-perplexity --tokens, which compares the forward alone).

Usage (from the source root, with the project's venv):
    /root/.cache/llm/venv/bin/python tests/apps/golden/make_perplexity_golden.py MODEL.gguf
"""
import json
import os
import subprocess
import sys
import tempfile

CTX = 128
TEXT = "tests/apps/data/perplexity_text.txt"
OUT = "tests/apps/golden/perplexity_c128.json"


def main():
    model = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        ids_path = os.path.join(tmp, "ids.txt")
        res = subprocess.run([sys.executable, "scripts/golden/logits/llamacpp_perplexity.py", model, TEXT,
                              str(CTX), "2", "--dump-tokens", ids_path],
                             check=True, capture_output=True, text=True)
        ppl = float(res.stdout.strip().splitlines()[-1].split(":")[1])
        ids = [int(t) for t in open(ids_path).read().split()]
    import llama_cpp
    golden = {
        "source": "llama-cpp-python %s via scripts/golden/logits/llamacpp_perplexity.py" % llama_cpp.__version__,
        "model": os.path.basename(model),
        "text": TEXT,
        "ctx": CTX,
        "perplexity": ppl,
        "n_tokens": len(ids),
        "tokens": ids,
    }
    with open(OUT, "w") as f:
        json.dump(golden, f)
        f.write("\n")
    print(f"{OUT}: perplexity {ppl}, {len(ids)} tokens")


if __name__ == "__main__":
    main()
