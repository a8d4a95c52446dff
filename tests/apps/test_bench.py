#!/usr/bin/env python3
"""Smoke test of llm-bench (stdlib only): its JSON carries llama-bench's field
names with values that agree with the options asked for, the markdown table
has a row per test, --peak prints figures, and bad options are usage errors.
Speed itself is never judged here (benchmarks print figures; tests do not
time anything).

Usage: test_bench.py LLM_BENCH MODEL
Prints PASS/FAIL per check; exit 0 if all pass, 1 otherwise, 77 = skipped."""
import json
import os
import subprocess
import sys

failures = 0


def check(name, ok, detail=""):
    global failures
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + str(detail)[:2000]))
    if not ok:
        failures += 1


def run(*args, timeout=600):
    return subprocess.run([BENCH, *args], capture_output=True, text=True, timeout=timeout)


BENCH, MODEL = sys.argv[1], sys.argv[2]
if not MODEL or not os.path.exists(MODEL):
    print("SKIP: default model not found (scripts/setup.sh fetches it)")
    sys.exit(77)

# JSON: pp and tg at two depths, 2 runs each, one thread.
r = run("-m", MODEL, "-p", "8", "-n", "3", "-d", "0,5", "-r", "2", "-t", "1", "--no-warmup", "-o", "json")
check("json exit 0", r.returncode == 0, r.stderr)
try:
    rows = json.loads(r.stdout)
except ValueError as e:
    rows = []
    check("json parses", False, e)
check("json: one row per test and depth", len(rows) == 4, len(rows))
want = {"model_filename", "model_type", "model_size", "model_n_params", "backends", "n_batch", "n_ubatch",
        "n_threads", "type_k", "type_v", "n_prompt", "n_gen", "n_depth", "test_time", "avg_ns", "stddev_ns",
        "avg_ts", "stddev_ts", "samples_ns", "samples_ts"}
for row in rows:
    tag = f"pp{row.get('n_prompt')}/tg{row.get('n_gen')}@d{row.get('n_depth')}"
    check(f"json {tag}: llama-bench fields", want <= set(row), sorted(want - set(row)))
    check(f"json {tag}: file and threads", row.get("model_filename") == MODEL and row.get("n_threads") == 1,
          (row.get("model_filename"), row.get("n_threads")))
    check(f"json {tag}: 2 samples", len(row.get("samples_ns", [])) == 2 and len(row.get("samples_ts", [])) == 2,
          row.get("samples_ns"))
    check(f"json {tag}: kernels named", isinstance(row.get("kernels"), str) and row.get("kernels") != "",
          row.get("kernels"))
    n = row.get("n_prompt", 0) + row.get("n_gen", 0)
    ok = all(ns > 0 for ns in row.get("samples_ns", [0])) and all(
        abs(ts - n * 1e9 / ns) <= 1e-3 * ts for ts, ns in zip(row.get("samples_ts", []), row.get("samples_ns", [])))
    check(f"json {tag}: tokens/s = tokens / time of each sample", ok, (row.get("samples_ts"), row.get("samples_ns")))
    check(f"json {tag}: model size is the file's", row.get("model_size", 0) > 0 and
          row.get("model_size") <= os.path.getsize(MODEL), row.get("model_size"))
got = sorted((x.get("n_prompt"), x.get("n_gen"), x.get("n_depth")) for x in rows)
check("json: the tests asked for", got == [(0, 3, 0), (0, 3, 5), (8, 0, 0), (8, 0, 5)], got)
tg = [x for x in rows if x.get("n_gen")]
check("json: decode reports bytes read per token",
      all(x.get("bytes_per_token", 0) > 0.5 * x.get("model_size", 1) for x in tg), [x.get("bytes_per_token") for x in tg])

# --sessions: N requests through the scheduler; all their tokens are counted
# (tg: N x n_gen decoded tokens each sample, at a depth too; pp: N prompts).
rows = []
for args in (["-p", "6", "-n", "4", "-pg", "5,2"], ["-p", "0", "-n", "4", "-d", "3"]):
    r = run("-m", MODEL, *args, "-r", "2", "-t", "1", "--sessions", "3", "--no-warmup", "-o", "json")
    check(f"--sessions 3 {' '.join(args)}: exit 0", r.returncode == 0, r.stderr)
    try:
        rows += json.loads(r.stdout)
    except ValueError as e:
        check("--sessions json parses", False, e)
got = sorted((x.get("n_prompt"), x.get("n_gen"), x.get("n_depth")) for x in rows)
check("--sessions: the tests asked for", got == [(0, 4, 0), (0, 4, 3), (5, 2, 0), (6, 0, 0)], got)
r = run("-m", MODEL, "-p", "6", "-d", "3", "--sessions", "2")
check("--sessions with a depth and a prompt test: usage error", r.returncode == 2 and "-d" in r.stderr,
      (r.returncode, r.stderr))
for row in rows:
    tag = f"x3 pp{row.get('n_prompt')}/tg{row.get('n_gen')}@d{row.get('n_depth')}"
    n = 3 * (row.get("n_prompt", 0) + row.get("n_gen", 0))
    ok = row.get("n_sessions") == 3 and len(row.get("samples_ns", [])) == 2 and all(
        ns > 0 and abs(ts - n * 1e9 / ns) <= 1e-3 * ts
        for ts, ns in zip(row.get("samples_ts", []), row.get("samples_ns", [])))
    check(f"--sessions {tag}: 3 requests' tokens / time of each sample", ok, row)

# Markdown: a header and one row per test (pp, tg, pg).
r = run("-m", MODEL, "-p", "4", "-n", "2", "-pg", "4,2", "-r", "1", "-t", "1", "--no-warmup")
lines = [ln for ln in r.stdout.splitlines() if ln.startswith("|")]
check("md exit 0", r.returncode == 0, r.stderr)
check("md: header, rule and 3 rows", len(lines) == 5, r.stdout)
check("md: tests named as llama-bench does", any("pp4" in ln for ln in lines) and any("tg2" in ln for ln in lines)
      and any("pp4+tg2" in ln for ln in lines), r.stdout)

# --peak: the machine's own limits, as figures.
r = run("--peak", "--peak-mib", "16", "-p", "0", "-n", "0", "-t", "1")
check("--peak exit 0 with GB/s and GFLOP/s", r.returncode == 0 and "GB/s" in r.stdout + r.stderr
      and "GFLOP/s" in r.stdout + r.stderr, r.stdout + r.stderr)
r = run("--peak", "--peak-mib", "16", "-p", "0", "-n", "0", "-t", "1", "-o", "json")
try:
    pk = json.loads(r.stdout)[0]
except (ValueError, IndexError, KeyError) as e:
    pk = {"error": str(e)}
check("--peak -o json: every figure named, the int8 ones positive where measured",
      all(k in pk for k in ("read_gbs", "int8_avx2_gops", "int8_vnni_gops", "int8_avx512_gops", "fp32_gflops",
                            "fp32_avx512_gflops")) and pk.get("int8_avx2_gops", 0) > 0 and pk.get("read_gbs", 0) > 0,
      r.stdout + r.stderr)

# Usage errors: exit 2 with the option named; a missing file is exit 1.
for args, opt in ((["-p", "abc"], "-p"), (["-t", "-3"], "-t"), (["-r", "0"], "-r"), (["-o", "xml"], "-o"),
                  (["--bogus"], "--bogus")):
    r = run("-m", MODEL, *args)
    check(f"usage error {' '.join(args)}", r.returncode == 2 and opt in r.stderr, (r.returncode, r.stderr))
r = run("-m", "/nonexistent/model.gguf", "-p", "4", "-n", "0", "-r", "1")
check("missing model: exit 1 naming it", r.returncode == 1 and "/nonexistent/model.gguf" in r.stderr,
      (r.returncode, r.stderr))
r = run("--help")
check("--help exit 0", r.returncode == 0 and "usage: llm-bench" in r.stdout, r.stdout)

print(f"{'FAILED' if failures else 'OK'}: {failures} failure(s)")
sys.exit(1 if failures else 0)
