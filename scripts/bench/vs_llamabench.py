#!/usr/bin/env python3
"""llm-bench against llama.cpp's llama-bench on the same files, threads and sizes, interleaved.

Usage: vs_llamabench.py [-m MODEL]... [-t 2] [-p 256,512] [-n 64,128] [-d 0] [-b 512]
                        [-r 3] [--rounds 3] [--peak] [-o md|json]
                        [--llm-bench BUILD/bin/llm-bench] [--llamacpp DIR]...

For every round, model and test (ppP, tgN), runs llm-bench and each llama-bench
(default: the AVX2 build and the native build under /root/.cache/llm/llamacpp-tools,
the ones present) one after the other, -r runs each, and keeps every sample;
the figures are the medians over all rounds, and the ratios are llm / llama.cpp
of those medians. Interleaving spreads the load of a shared machine over all
tools alike; read the spread too (printed as min..max of llm's samples).
llama-bench gets -ub equal to -b (one forward pass of -b prompt tokens, as
llm-bench does), everything else at its defaults (flash attention auto, repack on).
--peak also runs `llm-bench --peak` first and shows tg bandwidth as a share of it.

On a machine whose memory bandwidth drifts (a shared VM: the Zen 5 VM of
docs/PERFORMANCE.md saw 42-82 GB/s within an hour), the ratio of medians can
pair a fast phase of one tool with a slow phase of the other. So each round also gets its own ratio
(llm's median over llama-bench's median of that round, measured minutes
apart at most), printed as the range over rounds, and with --peak a tg test
measures the read bandwidth again right before llm-bench runs, so its share
of peak is the median of per-round shares, each against the bandwidth of
its own moment.

Never part of CI: it needs the llama.cpp binaries and takes minutes.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TOOLS = "/root/.cache/llm/llamacpp-tools"


def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-2000:]}\n")
        return []
    return json.loads(r.stdout)


def ints(s):
    return [int(x) for x in s.split(",") if x != ""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-m", action="append", default=[])
    ap.add_argument("-t", default="2")
    ap.add_argument("-p", default="256,512")
    ap.add_argument("-n", default="64,128")
    ap.add_argument("-d", default="0")
    ap.add_argument("-b", type=int, default=512)
    ap.add_argument("-r", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--peak", action="store_true")
    ap.add_argument("-o", default="md", choices=["md", "json"])
    default_bench = os.path.join(ROOT, "build-test", "bin", "llm-bench")
    if not os.path.exists(default_bench):
        default_bench = os.path.join(ROOT, "build", "bin", "llm-bench")
    ap.add_argument("--llm-bench", default=default_bench)
    ap.add_argument("--llamacpp", action="append", default=None,
                    help="a llama.cpp bin directory holding llama-bench (repeatable)")
    a = ap.parse_args()
    models = a.m or [os.path.expanduser("~/.cache/llm/models/SmolLM2-135M-Instruct.Q4_1.gguf")]
    dirs = a.llamacpp or [os.path.join(TOOLS, k, "bin") for k in ("avx2", "native")]
    refs = [(os.path.basename(os.path.dirname(d)) or d, os.path.join(d, "llama-bench")) for d in dirs
            if os.path.exists(os.path.join(d, "llama-bench"))]
    if not refs:
        sys.exit("no llama-bench found (give --llamacpp DIR)")
    threads = ints(a.t)
    tests = [(p, 0) for p in ints(a.p) if p > 0] + [(0, n) for n in ints(a.n) if n > 0]
    depths = ints(a.d)

    peak = {}
    if a.peak:
        for e in run_json([a.llm_bench, "--peak", "-t", a.t, "-o", "json"]):
            peak[e["n_threads"]] = e

    samples = {}  # (model, t, d, p, n, tool) -> [t/s]
    per_round = {}  # (model, t, d, p, n, tool) -> [median t/s of each round]
    round_peak = {}  # (model, t, d, p, n) -> [read GB/s right before each round's llm-bench run]
    extra = {}    # (model, t, d, p, n) -> llm-bench's bytes_per_token
    for rnd in range(a.rounds):
        for m in models:
            for t in threads:
                for d in depths:
                    for p, n in tests:
                        key = (m, t, d, p, n)
                        if a.peak and n:
                            for e in run_json([a.llm_bench, "--peak", "-t", str(t), "-o", "json"]):
                                round_peak.setdefault(key, []).append(e["read_gbs"])
                        llm = run_json([a.llm_bench, "-m", m, "-t", str(t), "-p", str(p), "-n", str(n),
                                        "-d", str(d), "-b", str(a.b), "-r", str(a.r), "-o", "json"])
                        for e in llm:
                            samples.setdefault(key + ("llm",), []).extend(e["samples_ts"])
                            per_round.setdefault(key + ("llm",), []).append(statistics.median(e["samples_ts"]))
                            extra[key] = e.get("bytes_per_token", 0)
                        for name, exe in refs:
                            ref = run_json([exe, "-m", m, "-t", str(t), "-p", str(p), "-n", str(n), "-d", str(d),
                                            "-b", str(a.b), "-ub", str(a.b), "-r", str(a.r), "-o", "json"])
                            for e in ref:
                                samples.setdefault(key + (name,), []).extend(e["samples_ts"])
                                per_round.setdefault(key + (name,), []).append(statistics.median(e["samples_ts"]))
                        print(f"round {rnd + 1}/{a.rounds} {os.path.basename(m)} t{t} d{d} "
                              f"{'pp%d' % p if p else 'tg%d' % n} done", file=sys.stderr)

    rows = []
    for m in models:
        for t in threads:
            for d in depths:
                for p, n in tests:
                    key = (m, t, d, p, n)
                    ours = samples.get(key + ("llm",), [])
                    if not ours:
                        continue
                    row = dict(model=os.path.basename(m), n_threads=t, n_depth=d, n_prompt=p, n_gen=n,
                               llm_ts=statistics.median(ours), llm_min=min(ours), llm_max=max(ours),
                               llm_n=len(ours))
                    for name, _ in refs:
                        s = samples.get(key + (name,), [])
                        row[name + "_ts"] = statistics.median(s) if s else None
                        row[name + "_ratio"] = row["llm_ts"] / row[name + "_ts"] if s else None
                        ro, rr = per_round.get(key + ("llm",), []), per_round.get(key + (name,), [])
                        pairs = [x / y for x, y in zip(ro, rr) if y > 0]
                        row[name + "_round_ratios"] = pairs
                    if n and extra.get(key):
                        row["llm_gbs"] = extra[key] * row["llm_ts"] / 1e9
                        if t in peak:
                            row["peak_read_gbs"] = peak[t]["read_gbs"]
                        ro, pk = per_round.get(key + ("llm",), []), round_peak.get(key, [])
                        shares = [extra[key] * x / 1e9 / g for x, g in zip(ro, pk) if g > 0]
                        if shares:
                            row["round_peak_gbs"] = pk
                            row["peak_share"] = statistics.median(shares)
                            row["peak_share_min"], row["peak_share_max"] = min(shares), max(shares)
                    rows.append(row)
    if a.o == "json":
        print(json.dumps(dict(peak=list(peak.values()), rows=rows), indent=2))
        return 0
    for t, e in sorted(peak.items()):
        line = (f"peak, {t} threads: memory read {e['read_gbs']:.2f} GB/s, int8 {e['int8_avx2_gops']:.0f} G/s "
                f"(AVX2), {e['int8_vnni_gops']:.0f} G/s (AVX-VNNI)")
        if e.get("int8_avx512_gops"):
            line += f", {e['int8_avx512_gops']:.0f} G/s (AVX-512 VNNI)"
        line += f", fp32 {e['fp32_gflops']:.0f} GFLOP/s"
        if e.get("fp32_avx512_gflops"):
            line += f", {e['fp32_avx512_gflops']:.0f} GFLOP/s (AVX-512)"
        print(line)
    head = "| model | threads | test | llm t/s (min..max) |"
    sep = "| --- | ---: | --- | ---: |"
    for name, _ in refs:
        head += f" llama-bench {name} | ratio | per round |"
        sep += " ---: | ---: | ---: |"
    head += " llm GB/s |"
    sep += " ---: |"
    print(f"medians of {a.rounds} interleaved rounds x {a.r} runs; ratio = llm / llama.cpp; per round: the range "
          f"of each round's own ratio" + ("; share of peak: median of each round's share of the bandwidth read "
                                          "just before it" if a.peak else ""))
    print(head)
    print(sep)
    for r in rows:
        test = f"pp{r['n_prompt']}" if r["n_prompt"] else f"tg{r['n_gen']}"
        if r["n_depth"]:
            test += f" @ d{r['n_depth']}"
        line = f"| {r['model']} | {r['n_threads']} | {test} | {r['llm_ts']:.2f} ({r['llm_min']:.1f}..{r['llm_max']:.1f}) |"
        for name, _ in refs:
            if r[name + "_ts"] is None:
                line += " - | - | - |"
            else:
                rr = r[name + "_round_ratios"]
                span = f"{min(rr):.2f}..{max(rr):.2f}" if rr else "-"
                line += f" {r[name + '_ts']:.2f} | **{r[name + '_ratio']:.2f}x** | {span} |"
        if "llm_gbs" in r:
            if "peak_share" in r:
                pk = (f" ({100 * r['peak_share']:.0f}% of peak, rounds {100 * r['peak_share_min']:.0f}.."
                      f"{100 * r['peak_share_max']:.0f}%)")
            else:
                pk = f" ({100 * r['llm_gbs'] / r['peak_read_gbs']:.0f}% of peak)" if "peak_read_gbs" in r else ""
            line += f" {r['llm_gbs']:.2f}{pk} |"
        else:
            line += " - |"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
