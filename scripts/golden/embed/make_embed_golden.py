#!/usr/bin/env python3
"""Goldens for the bert architecture on all-MiniLM-L6-v2 (Hugging Face folder).

Run in a venv with sentence-transformers and tokenizers (never in CI):

    HF_HUB_OFFLINE=1 /root/.cache/llm/venv-st/bin/python \\
        scripts/golden/embed/make_embed_golden.py ~/.cache/llm/models/all-MiniLM-L6-v2

Reads sentences.jsonl (200 texts written for this test: short, long past
256 tokens, non-English, code, empty-ish) and writes next to it:

  tokens.txt          one line per text: the HF tokenizers ids of
                      tokenizer.json with special tokens, no truncation, no
                      padding (space-separated)
  st_embeddings.npy   float32 [200][384]: SentenceTransformer(folder).encode
                      (its own pipeline: max_seq_length 256 truncation, mean
                      pooling, Normalize)
  st_meta.json        versions and the model's max_seq_length
"""
import json
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/.cache/llm/models/all-MiniLM-L6-v2")
    texts = [json.loads(l)["text"] for l in open(os.path.join(here, "sentences.jsonl"), encoding="utf-8")]
    import sentence_transformers
    import tokenizers
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    with open(os.path.join(here, "tokens.txt"), "w") as f:
        for t in texts:
            f.write(" ".join(str(i) for i in tok.encode(t).ids) + "\n")
    model = SentenceTransformer(folder, device="cpu")
    emb = model.encode(texts, batch_size=16, convert_to_numpy=True).astype(np.float32)
    np.save(os.path.join(here, "st_embeddings.npy"), emb)
    meta = {
        "model": os.path.basename(folder.rstrip("/")),
        "sentence_transformers": sentence_transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "max_seq_length": model.max_seq_length,
        "n": len(texts),
        "dim": int(emb.shape[1]),
    }
    json.dump(meta, open(os.path.join(here, "st_meta.json"), "w"), indent=1)
    print(meta)


if __name__ == "__main__":
    main()
