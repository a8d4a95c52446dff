#!/usr/bin/env python3
"""The KV cache types' table: per type (K = V), bytes per token, perplexity on
a text at -c 2048, the mean KL divergence of the token distributions against
the F16 cache, and decode tokens/s at depth 4096 (ours, and llama.cpp's
llama-bench with the same cache types, interleaved type by type).

Usage: kv_cache_types.py [-m MODEL] [-f TEXT] [-t 2] [--types f16,q8_0,...]
                         [--no-speed] [--llama-bench PATH] [--build build-test]

Perplexity and KL are deterministic (same bits as llama.cpp for every type,
tests/runtime/test_kv_quant.c); the tokens/s are wall-clock medians of -r runs
on whatever the machine is doing (the load average is printed). llama-bench
runs with -fa on (llama.cpp needs flash attention for a quantized V cache).
Never part of CI.
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-m", default=os.path.expanduser("~/.cache/llm/models/SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("-f", default="/usr/share/common-licenses/GPL-3")
    ap.add_argument("-t", default="2")
    ap.add_argument("-r", default="3")
    ap.add_argument("--types", default="f16,bf16,q8_0,q5_1,q5_0,q4_1,q4_0")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--llama-bench", default=os.path.expanduser("~/.cache/llm/llamacpp-tools/avx2/bin/llama-bench"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build-test"))
    a = ap.parse_args()
    ppl_bin = os.path.join(a.build, "bin", "llm-perplexity")
    bench_bin = os.path.join(a.build, "bin", "llm-bench")
    rows = []
    for t in a.types.split(","):
        row = {"type": t}
        if not a.no_quality:
            cmd = [ppl_bin, "-m", a.m, "-f", a.f, "-c", "2048", "-t", a.t, "-ctk", t, "-ctv", t]
            if t != "f16":
                cmd += ["--kl-ref-cache-type", "f16"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            out = r.stdout + r.stderr
            m = re.search(r"perplexity: ([0-9.]+)", out)
            row["ppl"] = m.group(1) if m else "error"
            m = re.search(r"kl-divergence: ([0-9.eE+-]+)", out)
            row["kl"] = "0" if t == "f16" else (m.group(1) if m else "error")
            if r.returncode != 0:
                sys.stderr.write(out[-2000:])
        if not a.no_speed:
            r = subprocess.run([bench_bin, "-m", a.m, "-p", "0", "-n", "32", "-d", "4096", "-r", a.r, "-t", a.t,
                                "-ctk", t, "-ctv", t, "-o", "json"], capture_output=True, text=True)
            try:
                j = json.loads(r.stdout)[0]
                row["ours"] = j["median_ts"] if "median_ts" in j else j["avg_ts"]
                row["kv_bytes"] = j.get("kv_bytes_per_token")
            except (ValueError, IndexError, KeyError):
                row["ours"] = None
                sys.stderr.write(r.stderr[-2000:])
            if os.access(a.llama_bench, os.X_OK):
                r = subprocess.run([a.llama_bench, "-m", a.m, "-p", "0", "-n", "32", "-d", "4096", "-r", a.r,
                                    "-t", a.t, "-ctk", t, "-ctv", t, "-fa", "1", "-o", "json"],
                                   capture_output=True, text=True)
                try:
                    row["llama"] = json.loads(r.stdout)[0]["avg_ts"]
                except (ValueError, IndexError, KeyError):
                    row["llama"] = None
                    sys.stderr.write(r.stderr[-2000:])
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    print(f"model {os.path.basename(a.m)}, text {a.f}, -t {a.t}, load average {os.getloadavg()[0]:.1f} at the end")
    print("| cache (K = V) | perplexity -c 2048 | KL vs F16 | decode tok/s d4096 (ours) | llama-bench -fa 1 | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        o, l = r.get("ours"), r.get("llama")
        ratio = f"{o / l:.2f}x" if o and l else "-"
        fo = f"{o:.1f}" if o else "-"
        fl = f"{l:.1f}" if l else "-"
        print(f"| {r['type']} | {r.get('ppl', '-')} | {r.get('kl', '-')} | {fo} | {fl} | {ratio} |")


if __name__ == "__main__":
    main()
