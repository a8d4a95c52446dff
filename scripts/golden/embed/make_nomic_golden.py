#!/usr/bin/env python3
"""llama.cpp's token ids and embeddings on the synthetic nomic-bert GGUF
(make_nomic_synthetic.py), for test_embed_bert. Run with the AVX2 reference
build of llama-cpp-python, never in CI:

    python3 scripts/golden/embed/make_nomic_synthetic.py /tmp/nomic.gguf
    /root/.cache/llm/venv-avx2/bin/python scripts/golden/embed/make_nomic_golden.py /tmp/nomic.gguf

Writes nomic_llamacpp.json: per text its llama.cpp token ids (with [CLS] /
[SEP]) and its embedding (mean pooling as the GGUF says, L2-normalized),
floats with 9 significant digits.
"""
import json
import os
import sys

from llama_cpp import Llama

here = os.path.dirname(os.path.abspath(__file__))
TEXTS = [
    "The cat sat on the mat.",
    "A quick brown fox jumps over the lazy dog!",
    "River bank, money bank.",
    "the bird sings a song",
    "Running fast; playing slowly.",
    "fish",
    "The model eats data and plays music in the city while the tree sleeps by the river.",
    "Blue green red house bridge water energy light sound " * 6,
]


def main():
    llm = Llama(model_path=sys.argv[1], embedding=True, n_ctx=128, n_batch=128, n_ubatch=128, n_threads=2,
                verbose=False)
    out = []
    for t in TEXTS:
        ids = llm.tokenize(t.encode("utf-8"), add_bos=True, special=False)
        emb = llm.embed(t, normalize=True)
        out.append({"text": t, "ids": ids, "embedding": [float("%.9g" % x) for x in emb]})
    json.dump(out, open(os.path.join(here, "nomic_llamacpp.json"), "w"))
    print(len(out), "texts; token counts", [len(o["ids"]) for o in out])


if __name__ == "__main__":
    main()
