#!/usr/bin/env python3
"""Side-by-side tokenizer speed: our bench-tokenizer and HF `tokenizers` on
the same text, single thread, in the same run, with the ratio.

Usage: bench_hf.py BENCH_BINARY MODEL.gguf TEXT_FILE [MIN_MB]
The HF tokenizer is built from the same GGUF (scripts/golden/tokenizer/hf_from_gguf.py;
make_unigram_golden.py for a Unigram "t5" vocabulary).
The text is repeated to >= MIN_MB (default 1) MB exactly as bench-tokenizer does.
Figures are the best of 5 runs, in process CPU time (robust on a shared machine). RAYON_NUM_THREADS=1 keeps HF single-threaded
(encode of one string is single-threaded anyway)."""
import os
import subprocess
import tempfile
import sys
import time

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts/golden/tokenizer"))
from hf_from_gguf import build as build_bpe  # noqa: E402
from make_unigram_golden import hf_unigram_tokenizer  # noqa: E402


def build(model):
    """HF's tokenizer for the GGUF: byte-level BPE, or Unigram for a "t5" vocabulary."""
    from gguf import GGUFReader
    f = GGUFReader(model).fields["tokenizer.ggml.model"]
    return hf_unigram_tokenizer(model) if bytes(f.parts[f.data[0]]) == b"t5" else build_bpe(model)

DOC_SEP = "\n\x1d=== llm golden document ===\x1d\n"


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    binary, model, text_file = sys.argv[1:4]
    min_mb = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    # The golden corpus separates documents with a line holding 0x1D, a byte
    # SmolLM2 has no token for: use a blank line instead so both round-trip.
    raw = open(text_file, encoding="utf-8").read().replace(DOC_SEP, "\n\n")
    tmp = tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False)
    tmp.write(raw)
    tmp.close()
    text_file_in = text_file
    text_file = tmp.name
    ours = subprocess.run([binary, model, text_file, str(min_mb)], check=True, capture_output=True, text=True).stdout
    figs = dict(line.split(" ", 1) for line in ours.strip().splitlines())

    base = open(text_file, "rb").read()
    reps = 1
    while len(base) * reps < min_mb * 1e6:
        reps += 1
    data = base * reps
    text = data.decode("utf-8")
    tok = build(model)
    best_enc = best_dec = best_par = 1e30
    paras = []
    p = 0
    while p < len(text):
        q = text.find("\n\n", p)
        q = len(text) if q < 0 else q + 2
        paras.append(text[p:q])
        p = q
    for _ in range(5):
        t0 = time.process_time()
        tok.encode_batch(paras, add_special_tokens=False)
        best_par = min(best_par, time.process_time() - t0)
        t0 = time.process_time()
        ids = tok.encode(text, add_special_tokens=False).ids
        t1 = time.process_time()
        back = tok.decode(ids, skip_special_tokens=False)
        t2 = time.process_time()
        best_enc = min(best_enc, t1 - t0)
        best_dec = min(best_dec, t2 - t1)
    hf_enc = len(data) / best_enc / 1e6
    hf_dec = len(data) / best_dec / 1e6
    our_enc = float(figs["encode_MBps"])
    our_dec = float(figs["decode_MBps"])
    our_par = float(figs["encode_paragraphs_MBps"])
    hf_par = len(data) / best_par / 1e6
    os.unlink(text_file)
    print("text: %d bytes (%s x%d), ours %s tokens, HF %d tokens, our round trip %s, HF round trip %s"
          % (len(data), text_file_in, reps, figs["tokens"], len(ids), figs["roundtrip"], "ok" if back == text else "DIFFERS"))
    print("%-8s %12s %12s %8s" % ("", "llm MB/s", "HF MB/s", "llm/HF"))
    print("%-8s %12.2f %12.2f %8.2f" % ("encode", our_enc, hf_enc, our_enc / hf_enc))
    print("%-8s %12.2f %12.2f %8.2f" % ("decode", our_dec, hf_dec, our_dec / hf_dec))
    print("%-8s %12.2f %12.2f %8.2f   (%d paragraphs, one call each; HF encode_batch)"
          % ("enc-para", our_par, hf_par, our_par / hf_par, len(paras)))


if __name__ == "__main__":
    main()
