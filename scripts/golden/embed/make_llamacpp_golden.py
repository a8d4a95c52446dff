#!/usr/bin/env python3
"""llama.cpp's embeddings of the goldens' texts on the bert GGUF, for the
GGUF comparison in test_embed_bert. Run with the AVX2 reference build of
llama-cpp-python (scripts/golden/reference-venv.sh), never in CI:

    python3 scripts/golden/embed/bert_to_gguf.py ~/.cache/llm/models/all-MiniLM-L6-v2 /tmp/minilm.gguf
    /root/.cache/llm/venv-avx2/bin/python scripts/golden/embed/make_llamacpp_golden.py /tmp/minilm.gguf

Writes llamacpp_embeddings.npy: float32 [n][384], the texts of
sentences.jsonl whose HF token count (tokens.txt) is at most 256 and that
are not blank, in file order, and llamacpp_meta.json: their indices, and
the indices among them where llama.cpp's own token ids differ from HF
tokenizers' (tokens.txt), which a vector comparison must leave out (llama.cpp
tokenizes some scripts, e.g. Hangul and Devanagari, otherwise than HF).
Pooling is the GGUF's (mean); vectors L2-normalized (llama.cpp's default
for embeddings). One text per call, n_ctx = n_batch = n_ubatch = 512.
"""
import json
import os
import sys

import numpy as np
from llama_cpp import Llama

here = os.path.dirname(os.path.abspath(__file__))


def main():
    gguf_path = sys.argv[1]
    texts = [json.loads(l)["text"] for l in open(os.path.join(here, "sentences.jsonl"), encoding="utf-8")]
    counts = [len(l.split()) for l in open(os.path.join(here, "tokens.txt"))]
    keep = [i for i, t in enumerate(texts) if counts[i] <= 256 and t.strip()]
    llm = Llama(model_path=gguf_path, embedding=True, n_ctx=512, n_batch=512, n_ubatch=512, n_threads=2,
                verbose=False)
    hf = [[int(x) for x in l.split()] for l in open(os.path.join(here, "tokens.txt"))]
    out = np.zeros((len(keep), 384), dtype=np.float32)
    differ = []
    for r, i in enumerate(keep):
        if llm.tokenize(texts[i].encode("utf-8"), add_bos=True, special=False) != hf[i]:
            differ.append(i)
        out[r] = np.asarray(llm.embed(texts[i], normalize=True), dtype=np.float32)
    np.save(os.path.join(here, "llamacpp_embeddings.npy"), out)
    import llama_cpp
    json.dump({"llama_cpp_python": llama_cpp.__version__, "index": keep, "tokens_differ": differ},
              open(os.path.join(here, "llamacpp_meta.json"), "w"))
    print(len(keep), "texts; llama.cpp's tokens differ from HF on", differ)


if __name__ == "__main__":
    main()
