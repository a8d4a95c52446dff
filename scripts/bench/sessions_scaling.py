#!/usr/bin/env python3
"""Aggregate decode rate of N sessions against one session, same model, interleaved rounds.

Usage: sessions_scaling.py -m MODEL [-m MODEL]... [--sessions 8] [-t 2] [-n 32] [-r 2] [--rounds 4]
                           [--llm-bench BUILD/bin/llm-bench]

Each round runs `llm-bench --sessions 1` then `--sessions N` on the same
model, back to back, and takes that round's ratio (median t/s of N sessions
over median t/s of one). On a machine whose memory bandwidth drifts (a shared
VM), one session follows the bandwidth and N sessions mostly do not, so a
ratio of two runs minutes apart can say 3.4x or 4.8x for the same binary;
pairs taken seconds apart, and their median and range over rounds, are the
honest figure. Never part of CI (minutes of timing).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def median_ts(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-2000:]}")
    rows = json.loads(r.stdout)
    return statistics.median(rows[0]["samples_ts"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-m", action="append", required=True)
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("-t", default="2")
    ap.add_argument("-n", type=int, default=32)
    ap.add_argument("-r", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--llm-bench", default=os.path.join(ROOT, "build-test", "bin", "llm-bench"))
    a = ap.parse_args()
    print(f"| model | 1 session t/s | {a.sessions} sessions t/s | ratio per round | median ratio |")
    print("| --- | ---: | ---: | --- | ---: |")
    for m in a.m:
        one, many, ratios = [], [], []
        for rnd in range(a.rounds):
            base = [a.llm_bench, "-m", m, "-t", a.t, "-p", "0", "-n", str(a.n), "-r", str(a.r), "-o", "json"]
            x = median_ts(base + ["--sessions", "1"])
            y = median_ts(base + ["--sessions", str(a.sessions)])
            one.append(x)
            many.append(y)
            ratios.append(y / x)
            print(f"round {rnd + 1}/{a.rounds} {os.path.basename(m)}: {x:.1f} / {y:.1f} t/s", file=sys.stderr)
        print(f"| {os.path.basename(m)} | {statistics.median(one):.1f} | {statistics.median(many):.1f} | "
              f"{', '.join(f'{r:.2f}' for r in ratios)} | **{statistics.median(ratios):.2f}x** |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
