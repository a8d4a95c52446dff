#!/usr/bin/env python3
"""End-to-end test of llm-perplexity (stdlib only).

Usage: test_perplexity.py LLM_PERPLEXITY MODEL GOLDEN_JSON

The figure is checked against llama.cpp's own perplexity of the same text
with the same scoring (golden/perplexity_c128.json, made by
golden/make_perplexity_golden.py with llama-cpp-python), both through our
tokenizer (-f) and on llama.cpp's token ids (--tokens, the forward alone).
The tolerance, 0.2% relative, is far below what a scoring mistake moves the
figure (an off-by-one row, the wrong half of the window or
cache state leaking between windows each change it by several percent) and
above the float rounding by which our kernels may differ from llama.cpp's.
Then the command line: help, argument validation, error exits.
Prints PASS/FAIL per check; exit 0 if all pass, 1 otherwise, 77 = skipped.
"""
import json
import os
import subprocess
import sys
import tempfile

TOL = 2e-3
failures = 0


def check(name, ok, detail=""):
    global failures
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        failures += 1


def run(exe, *args):
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=600)


def figure(res):
    lines = res.stdout.strip().splitlines()
    if res.returncode != 0 or not lines or not lines[-1].startswith("perplexity: "):
        return None
    return float(lines[-1].split(":")[1])


def main():
    exe, model, golden_path = sys.argv[1:4]
    if not model or not os.access(model, os.R_OK):
        print("SKIP: default model not found (LLM_DEFAULT_MODEL)")
        return 77
    golden = json.load(open(golden_path))
    ref, ctx = golden["perplexity"], str(golden["ctx"])

    res = run(exe, "-m", model, "-f", golden["text"], "-c", ctx, "-t", "2")
    got = figure(res)
    check("text: stdout ends with the figure", got is not None, res.stdout + res.stderr)
    if got is not None:
        check("text: perplexity %.4f vs llama.cpp %.4f" % (got, ref), abs(got - ref) <= TOL * ref,
              "relative difference %.2e" % (abs(got - ref) / ref))
    n_win = golden["n_tokens"] // golden["ctx"]
    check("text: progress and tokens/s on stderr",
          "[%d/%d] ppl " % (n_win, n_win) in res.stderr and "tokens/s" in res.stderr, res.stderr)
    check("text: stdout holds only the figure", len(res.stdout.strip().splitlines()) == 1, res.stdout)

    with tempfile.TemporaryDirectory() as tmp:
        ids = os.path.join(tmp, "ids.txt")
        with open(ids, "w") as f:
            f.write(" ".join(map(str, golden["tokens"])) + "\n")
        res = run(exe, "-m", model, "--tokens", ids, "-c", ctx)
        got = figure(res)
        check("tokens: llama.cpp's ids give a figure", got is not None, res.stdout + res.stderr)
        if got is not None:
            check("tokens: perplexity %.4f vs llama.cpp %.4f" % (got, ref), abs(got - ref) <= TOL * ref,
                  "relative difference %.2e" % (abs(got - ref) / ref))

        bad_ids = os.path.join(tmp, "bad.txt")
        with open(bad_ids, "w") as f:
            f.write(" ".join(["1"] * 7 + ["99999999"]) + "\n")
        res = run(exe, "-m", model, "--tokens", bad_ids, "-c", "4")
        check("tokens: an id outside the vocabulary is an error", res.returncode == 1 and
              "token id" in res.stderr and "perplexity:" not in res.stdout, res.stderr)
        junk = os.path.join(tmp, "junk.txt")
        with open(junk, "w") as f:
            f.write("1 2 three 4\n")
        res = run(exe, "-m", model, "--tokens", junk, "-c", "4")
        check("tokens: a non-number is an error", res.returncode == 1 and "token ids" in res.stderr,
              res.stderr)

    res = run(exe, "--help")
    check("--help: usage on stdout, exit 0", res.returncode == 0 and "usage: llm-perplexity" in res.stdout,
          repr(res))
    for args, why in [((), "no arguments"),
                      (("-m", model), "no text"),
                      (("-m", model, "-f", golden["text"], "--tokens", "x"), "both -f and --tokens"),
                      (("-m", model, "-f", golden["text"], "-c", "3"), "-c below 4"),
                      (("-m", model, "-f", golden["text"], "-c", "12x"), "-c not a number"),
                      (("-m", model, "-f", golden["text"], "-t", "-1"), "negative -t"),
                      (("-m", model, "-f", golden["text"], "--frobnicate", "1"), "unknown option"),
                      (("-m", model, "-f"), "missing value")]:
        res = run(exe, *args)
        check("usage error (%s): exit 2, message" % why, res.returncode == 2 and res.stderr.strip() != ""
              and res.stdout == "", repr(res))
    res = run(exe, "-m", model, "-f", "/nonexistent/text.txt")
    check("missing text file: exit 1", res.returncode == 1 and "cannot read" in res.stderr, res.stderr)
    res = run(exe, "-m", "/nonexistent/model.gguf", "-f", golden["text"])
    check("missing model: exit 1", res.returncode == 1 and res.stderr.strip() != "", res.stderr)
    res = run(exe, "-m", model, "-f", golden["text"], "-c", str(golden["n_tokens"] + 1))
    check("text shorter than one window: exit 1", res.returncode == 1 and "need at least" in res.stderr,
          res.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
