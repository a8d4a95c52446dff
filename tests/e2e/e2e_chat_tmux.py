#!/usr/bin/env python3
"""llm-chat in a real terminal (tmux): two turns with KV reuse, Ctrl-C in the
middle of an answer, /reset, /stats, and Ctrl-C twice at the prompt to quit.

usage: e2e_chat_tmux.py LLM_CHAT MODEL
Prints PASS/FAIL per check; exit 0 / 1, or 77 (skip) without tmux or model.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

FAILS = []
SESSION = "llmchat%d" % os.getpid()


def check(name, cond, detail=""):
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + detail))
    if not cond:
        FAILS.append(name)


def tmux(*args):
    return subprocess.run(["tmux"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=30).stdout.decode("utf-8", "replace")


def pane():
    return tmux("capture-pane", "-p", "-J", "-S", "-2000", "-t", SESSION)


def alive():
    return subprocess.run(["tmux", "has-session", "-t", SESSION], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def wait_for(pred, timeout):
    t0 = time.time()
    while time.time() - t0 < timeout:
        text = pane() if alive() else ""
        if pred(text):
            return True
        time.sleep(0.3)
    return False


def prompts(text):
    return len(re.findall(r"^>(?: |$)", text, re.M))


def send_line(line):
    tmux("send-keys", "-t", SESSION, "-l", line)
    tmux("send-keys", "-t", SESSION, "Enter")


def main():
    chat, model = sys.argv[1], sys.argv[2]
    if not shutil.which("tmux"):
        print("SKIP: tmux not installed")
        return 77
    if not os.path.exists(model):
        print("SKIP: model not found: " + model)
        return 77
    state = tempfile.mkdtemp(prefix="llm_chat_state_")
    cmd = "XDG_STATE_HOME=%s %s -m %s -t 1 -c 1024 --temp 0 -n 120 --repeat-penalty 1.2; echo EXITED $?; sleep 30" % (state, chat, model)
    tmux("new-session", "-d", "-s", SESSION, "-x", "160", "-y", "50", cmd)
    try:
        check("prompt appears", wait_for(lambda t: prompts(t) >= 1, 60), pane())
        send_line("What is 2 + 2?")
        ok = wait_for(lambda t: prompts(t) >= 2, 180)
        check("turn 1 answered", ok and "4" in pane(), pane()[-800:])
        send_line("/stats")
        wait_for(lambda t: "[stats]" in t, 20)
        send_line("Now add 3 to it.")
        ok = wait_for(lambda t: prompts(t) >= 4, 180)
        check("turn 2 answered", ok, pane()[-800:])
        send_line("/stats")
        wait_for(lambda t: len(re.findall(r"\[stats\]", t)) >= 2, 20)
        stats = re.findall(r"prefill (\d+) tok \((\d+) reused", pane())
        check("two /stats lines", len(stats) >= 2, pane()[-800:])
        if len(stats) >= 2:
            p2, r2 = int(stats[1][0]), int(stats[1][1])
            p1 = int(stats[0][0])
            check("turn 2 reuses turn 1's KV (prefill %d new, %d reused; turn 1 prefilled %d)" % (p2, r2, p1),
                  r2 >= p1 and p2 < r2, str(stats))
        # Ctrl-C in the middle of a long answer stops it and returns to the prompt.
        n_before = prompts(pane())
        send_line("Write a long story about a dragon and a knight.")
        started = wait_for(lambda t: len(t.split("Write a long story")[-1].strip()) > 40, 120)
        tmux("send-keys", "-t", SESSION, "C-c")
        ok = wait_for(lambda t: "[stopped]" in t and prompts(t) > n_before, 60)
        check("Ctrl-C stops the answer", started and ok, pane()[-800:])
        check("still running after Ctrl-C", alive() and "EXITED" not in pane(), pane()[-300:])
        send_line("/reset")
        check("/reset", wait_for(lambda t: "[conversation reset]" in t, 20), pane()[-300:])
        n_before = prompts(pane())
        send_line("What is 2 + 2?")
        check("answers after reset", wait_for(lambda t: prompts(t) > n_before, 180), pane()[-500:])
        send_line("/help")
        check("/help", wait_for(lambda t: "/system TEXT" in t, 20), pane()[-300:])
        # Ctrl-C twice at the prompt quits with status 0.
        tmux("send-keys", "-t", SESSION, "C-c")
        check("first Ctrl-C at the prompt warns", wait_for(lambda t: "Ctrl-C again" in t, 10), pane()[-300:])
        tmux("send-keys", "-t", SESSION, "C-c")
        check("second Ctrl-C quits", wait_for(lambda t: "EXITED 0" in t, 20), pane()[-300:])
        hist = os.path.join(state, "llm", "chat_history")
        check("input history saved", os.path.exists(hist) and "/reset" in open(hist, errors="replace").read(),
              hist)
    finally:
        tmux("kill-session", "-t", SESSION)
    print("%d checks failed" % len(FAILS) if FAILS else "all checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
