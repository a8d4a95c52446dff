#!/usr/bin/env python3
"""End-to-end checks of llm-chat in non-interactive mode (stdlib only).

usage: e2e_chat.py LLM_CHAT MODEL GOLDEN_JSON
Prints PASS/FAIL per check; exit 0 if all pass, 1 if any fails, 77 (skip)
when the model is missing.

- `-p TEXT --temp 0` and the same text on stdin print llama.cpp's greedy
  answer (tests/e2e/golden/greedy_chat.json, up to its first near-tie) alone
  on stdout; logs and [stats] go to stderr.
- bad usage, missing / corrupt model, empty prompt, non-UTF-8 input, prompt
  longer than the context: clear message, non-zero exit, never a crash.
"""
import json
import os
import subprocess
import sys
import tempfile

FAILS = []


def check(name, cond, detail=""):
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + detail))
    if not cond:
        FAILS.append(name)


def run(args, stdin=b"", env=None, timeout=240):
    p = subprocess.run(args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def main():
    chat, model, golden = sys.argv[1], sys.argv[2], sys.argv[3]
    if not os.path.exists(model):
        print("SKIP: model not found: " + model + " (run scripts/setup.sh)")
        return 77
    base = [chat, "-m", model, "-t", "1", "-c", "512"]
    cases = json.load(open(golden, encoding="utf-8"))["cases"]
    # Free-running answers equal llama.cpp's up to its first near-tie (top-2
    # gap < 0.3, see make_greedy_golden.py); cases with a long safe prefix.
    cases = [c for c in cases if c["safe_steps"] >= 8]
    for i, c in enumerate(cases):
        n = max(c["safe_steps"], 1)
        rc, out, err = run(base + ["-p", c["user"], "--temp", "0", "-n", str(n)])
        check("golden %d exit 0" % i, rc == 0, err[-500:])
        want = c["safe_text"]
        check("golden %d answer == llama.cpp" % i, out.rstrip("\n") == want.rstrip("\n"),
              "got %r want %r" % (out, want))
        check("golden %d stats on stderr only" % i, "[stats]" in err and "[stats]" not in out, err[-300:])
    c = cases[0]
    rc, out, err = run(base + ["--temp", "0", "-n", str(c["safe_steps"])], stdin=(c["user"] + "\n").encode())
    check("stdin prompt answers once", rc == 0 and out.rstrip("\n") == c["safe_text"].rstrip("\n"),
          "rc %d out %r err %r" % (rc, out, err[-300:]))
    check("startup info on stderr", "backend:" in err and "context:" in err and "threads:" in err, err[:400])

    rc, out, err = run([chat, "--no-such-option"])
    check("unknown option", rc != 0 and "unknown option" in err and out == "", err)
    rc, out, err = run([chat, "-m", "/nonexistent.gguf", "-p", "hi"])
    check("missing model", rc != 0 and "not found" in err, err)
    env = dict(os.environ, LLM_MODEL="", LLM_MODELS_DIR="/nonexistent-dir")
    rc, out, err = run([chat, "-p", "hi"], env=env)
    check("missing default model says how to get it", rc != 0 and "scripts/setup.sh" in err, err)
    with tempfile.NamedTemporaryFile(suffix=".gguf", delete=False) as f:
        f.write(b"GGUF\x03\x00\x00\x00" + b"\xff" * 64)
        bad = f.name
    rc, out, err = run([chat, "-m", bad, "-p", "hi"])
    os.unlink(bad)
    check("corrupt model", rc not in (0,) and rc > 0 and "cannot load" in err, "rc %d %s" % (rc, err))
    rc, out, err = run(base + ["-p", ""])
    check("empty -p", rc != 0 and "empty" in err, err)
    rc, out, err = run(base, stdin=b"  \n\n")
    check("empty stdin", rc != 0 and "empty" in err, err)
    rc, out, err = run(base + ["-n", "4"], stdin=b"caf\xe9 au lait\n")
    check("non-UTF-8 input", rc != 0 and "UTF-8" in err and rc < 128, "rc %d %s" % (rc, err))
    rc, out, err = run([chat, "-m", model, "-t", "1", "-c", "32", "-p", "word " * 100])
    check("prompt longer than context", rc != 0 and "does not fit" in err and rc < 128, "rc %d %s" % (rc, err))
    rc, out, err = run([chat, "--help"])
    check("--help", rc == 0 and "--temp" in out and "/reset" in out and "--raw" in out, out[:200])
    rc, out, err = run(base + ["--raw", "-p", "The capital of France is", "-n", "4", "--temp", "0"])
    check("--raw continues text", rc == 0 and len(out.strip()) > 0, "rc %d %r %s" % (rc, out, err[-200:]))
    print("%d checks failed" % len(FAILS) if FAILS else "all checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
