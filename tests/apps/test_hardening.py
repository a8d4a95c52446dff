#!/usr/bin/env python3
"""Checks of issue 19 ("hardening the programs"), stdlib only.

usage: test_hardening.py BIN_DIR MODEL
BIN_DIR holds llm-chat, llm-embed, llm-perplexity, llm-inspect, llm-tokenize.
Prints PASS/FAIL/SKIP per check; exit 0 / 1, or 77 (skip) without the model.

Each check names the issue item it covers:
 1  -o never replaces a device node, FIFO or directory; a symlink keeps pointing at its target
 2  a huge context_length in the metadata is refused or capped, never cast negative
 3  write errors on stdout exit 1 with a message (every program)
 4  a NUL byte in the text is refused with a message, never cut silently
 5  -t above the number of CPUs is refused
 6  Ctrl-C on a one-shot answer exits 130
 7  llm-perplexity refuses a model that gives non-finite logits
 8  llm-embed leaves no temporary file after SIGINT/SIGTERM; a failed -o X.npy creates no
    X.ids.txt; a directory as input is an error
 9  SIGTERM at the chat prompt restores the terminal; Ctrl-D ends the prompt line
10  --no-mmap gone; -n 0, --temp nan, --repeat-penalty 0 refused as options; messages name the
    real problem
11  a memory plan above the available memory is refused without --force
"""
import os
import select
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_patch  # noqa: E402

FAILS = []


def check(item, name, cond, detail=""):
    print(("PASS " if cond else "FAIL ") + "[%s] %s" % (item, name) + ("" if cond else ": " + str(detail)[:1200]))
    sys.stdout.flush()
    if not cond:
        FAILS.append(name)


def skip(item, name, why):
    print("SKIP [%s] %s: %s" % (item, name, why))


def run(args, stdin=b"", stdout=subprocess.PIPE, timeout=300):
    try:
        p = subprocess.run(args, input=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, "", "(timed out after %d s)" % timeout
    out = p.stdout.decode("utf-8", "replace") if p.stdout is not None else ""
    return p.returncode, out, p.stderr.decode("utf-8", "replace")


def have_dev_full():
    try:
        return stat.S_ISCHR(os.stat("/dev/full").st_mode)
    except OSError:
        return False


def to_dev_full(args, stdin=b""):
    with open("/dev/full", "wb") as full:
        return run(args, stdin=stdin, stdout=full)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    bindir, model = sys.argv[1], sys.argv[2]
    if not os.path.isfile(model):
        print("SKIP: model not found: %s (run scripts/setup.sh)" % model)
        return 77
    chat, embed, ppl = [os.path.join(bindir, n) for n in ("llm-chat", "llm-embed", "llm-perplexity")]
    inspect, tokz = [os.path.join(bindir, n) for n in ("llm-inspect", "llm-tokenize")]
    src = os.environ.get("LLM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
    text = os.path.join(src, "tests", "apps", "data", "perplexity_text.txt")
    C = [chat, "-m", model, "-t", "1", "--temp", "0"]
    E = [embed, "-m", model, "-t", "1", "-q"]

    with tempfile.TemporaryDirectory() as d:
        lines = os.path.join(d, "lines.txt")
        with open(lines, "w") as f:
            f.write("one line\nanother line\n")

        # ---- 1: output targets ------------------------------------------------
        if os.geteuid() == 0:
            node = os.path.join(d, "null_node")
            os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # like /dev/full, in our temp dir
            rc, out, err = run(E + ["-o", node, lines])
            st = os.lstat(node)
            check(1, "-o on a character device: refused, node untouched",
                  rc != 0 and stat.S_ISCHR(st.st_mode) and "not a regular file" in err, (rc, oct(st.st_mode), err))
        else:
            skip(1, "-o on a character device", "needs root to create a device node")
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        rc, out, err = run(E + ["-o", fifo, lines])
        check(1, "-o on a FIFO: refused, FIFO untouched",
              rc != 0 and stat.S_ISFIFO(os.lstat(fifo).st_mode) and "FIFO" in err, (rc, err))
        real, link = os.path.join(d, "real.jsonl"), os.path.join(d, "link.jsonl")
        with open(real, "w") as f:
            f.write("old\n")
        os.chmod(real, 0o640)
        os.symlink("real.jsonl", link)
        rc, out, err = run(E + ["-o", link, lines])
        ok = rc == 0 and os.path.islink(link) and open(real).read().count('"embedding"') == 2
        check(1, "-o on a symlink: the link stays, its target gets the data", ok, (rc, err))
        check(1, "-o keeps the mode of the file it replaces", stat.S_IMODE(os.stat(real).st_mode) == 0o640,
              oct(os.stat(real).st_mode))
        rc, out, err = run(E + ["-o", "-", lines])
        check(1, "-o - writes the stream to stdout", rc == 0 and out.count('"embedding"') == 2, err)

        # ---- 3: write errors on stdout ------------------------------------------
        if have_dev_full():
            for name, args, stdin in [
                    ("llm-chat -p", C + ["-n", "4", "-p", "hi"], b""),
                    ("llm-embed", E + [lines], b""),
                    ("llm-inspect", [inspect, model], b""),
                    ("llm-perplexity", [ppl, "-m", model, "-f", text, "-c", "128", "-t", "1"], b""),
                    ("llm-tokenize", [tokz, model, "hello world"], b""),
                    ("llm-chat --help", [chat, "--help"], b"")]:
                rc, _, err = to_dev_full(args, stdin)
                check(3, "%s > /dev/full: exit 1 with a message" % name,
                      rc == 1 and "No space left" in err, (rc, err[-400:]))
        else:
            skip(3, "write errors", "no /dev/full")

        # ---- 4: NUL bytes ----------------------------------------------------------
        rc, out, err = run(C + ["--raw", "-n", "3"], stdin=b"hello\0world")
        check(4, "llm-chat: NUL in the stdin prompt refused", rc == 1 and "NUL" in err and out == "", (rc, out, err))
        nul = os.path.join(d, "nul.txt")
        with open(nul, "wb") as f:
            f.write(b"fine\nhello\0world\n")
        rc, out, err = run(E + [nul])
        check(4, "llm-embed: NUL in a line refused, naming the line",
              rc == 1 and "NUL" in err and "line 2" in err and out == "", (rc, err))

        # ---- 5: threads -------------------------------------------------------------
        for name, args in [("llm-chat", [chat, "-m", model, "-t", "1000", "-n", "1", "-p", "hi"]),
                           ("llm-embed", [embed, "-m", model, "-t", "1000", lines]),
                           ("llm-embed search", [embed, "search", "-t", "1000", "--index", "x", "--query", "q"]),
                           ("llm-perplexity", [ppl, "-m", model, "-f", text, "-c", "128", "-t", "1000"])]:
            rc, out, err = run(args, timeout=30)
            check(5, "%s -t 1000 refused" % name, rc == 2 and "more threads than" in err, (rc, err))

        # ---- KV cache types (-ctk / -ctv, issue 20) -----------------------------------
        for name, args in [("llm-chat", C + ["-ctk", "q9_0", "-n", "1", "-p", "hi"]),
                           ("llm-perplexity", [ppl, "-m", model, "-f", text, "-c", "128", "-ctv", "f8"])]:
            rc, out, err = run(args, timeout=30)
            check(20, "%s: an unknown cache type is refused" % name, rc == 2 and "expects f16" in err, (rc, err))
        rc, out, err = run(C + ["-ctk", "q8_0", "-ctv", "q4_0", "-n", "4", "-p", "hi"], timeout=120)
        check(20, "llm-chat -ctk q8_0 -ctv q4_0 answers", rc == 0 and out.strip() != "", (rc, err[-300:]))
        rc, out, err = run([ppl, "-m", model, "-f", text, "-c", "128", "-t", "1", "-ctk", "q8_0", "-ctv", "q8_0",
                            "--kl-ref-cache-type", "f16"], timeout=300)
        kl = [ln for ln in out.splitlines() if ln.startswith("kl-divergence: ")]
        check(20, "llm-perplexity --kl-ref-cache-type f16 prints a small KL divergence",
              rc == 0 and len(kl) == 1 and 0.0 < float(kl[0].split()[1]) < 0.05 and "perplexity: " in out,
              (rc, out, err[-300:]))

        # ---- 6: Ctrl-C on a one-shot answer -----------------------------------------
        p = subprocess.Popen([chat, "-m", model, "-t", "1", "--temp", "0", "--raw", "-c", "2048", "-n", "1500",
                              "-p", "Count from one to one thousand: one, two, three,"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        got = b""
        deadline = time.time() + 120
        while len(got) < 8 and time.time() < deadline and p.poll() is None:
            r, _, _ = select.select([p.stdout], [], [], 1)
            if r:
                got += os.read(p.stdout.fileno(), 64)
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        check(6, "SIGINT during llm-chat -p: exit 130", p.returncode == 130, (p.returncode, err[-300:]))
        rc, out, err = run([chat, "--help"])
        check(6, "--help documents exit status 130", "130" in out, out[-400:])

        # ---- 7 and 2: patched copies of the model ---------------------------------
        g = gguf_patch.Gguf(model)
        off, ttype, dims = g.tensor_offset("output_norm.weight")
        nan_model = os.path.join(d, "nan.gguf")
        if ttype == 0:
            gguf_patch.patched_copy(model, nan_model, [(off, struct.pack("<f", float("nan")) * dims[0])])
            rc, out, err = run([ppl, "-m", nan_model, "-f", text, "-c", "128", "-t", "1"])
            check(7, "llm-perplexity: non-finite logits are an error", rc == 1 and "non-finite" in err
                  and "perplexity:" not in out, (rc, out, err[-300:]))
            os.unlink(nan_model)
        else:
            skip(7, "non-finite logits", "output_norm.weight is not F32 in this model")
        vt, voff = g.kv["llama.context_length"]
        if vt == 4:
            huge = os.path.join(d, "huge_ctx.gguf")
            for value, want in [(0xFFFFFFFF, "refused"), (0x80000000, "refused"), (0x7FFFFFFF, "4096")]:
                gguf_patch.patched_copy(model, huge, [(voff, struct.pack("<I", value))])
                rc, out, err = run([chat, "-m", huge, "-t", "1", "--temp", "0", "-n", "1", "-p", "hi"])
                if want == "refused":
                    check(2, "context_length %#x refused with a clear message" % value,
                          rc == 1 and "context_length" in err and "MiB" not in err.split("context_length")[0][-200:]
                          and "bad max_batch" not in err, (rc, err[-400:]))
                else:
                    check(2, "context_length %#x: default context capped at 4096" % value,
                          rc == 0 and "context: 4096 tokens" in err, (rc, err[-400:]))
            os.unlink(huge)
        else:
            skip(2, "context_length", "not a u32 in this model")

        # ---- 8: llm-embed files and signals --------------------------------------------
        big = os.path.join(d, "big.txt")
        with open(big, "w") as f:
            for i in range(4000):
                f.write("sentence number %d about nothing in particular\n" % i)
        for sig in (signal.SIGINT, signal.SIGTERM):
            sub = os.path.join(d, "sig%d" % sig)
            os.mkdir(sub)
            outp = os.path.join(sub, "out.jsonl")
            p = subprocess.Popen(E + ["-o", outp, big], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.time() + 60
            while time.time() < deadline and not os.listdir(sub) and p.poll() is None:
                time.sleep(0.05)
            time.sleep(0.3)
            started = bool(os.listdir(sub))
            p.send_signal(sig)
            p.communicate(timeout=60)
            check(8, "llm-embed -o after %s: no file left (temporary or final)" % signal.Signals(sig).name,
                  started and os.listdir(sub) == [], (started, os.listdir(sub), p.returncode))
        sub = os.path.join(d, "npydir")
        os.mkdir(sub)
        os.mkdir(os.path.join(sub, "X.npy"))
        rc, out, err = run(E + ["-o", os.path.join(sub, "X.npy"), lines])
        check(8, "-o X.npy on a directory: error, no X.ids.txt", rc == 1 and sorted(os.listdir(sub)) == ["X.npy"],
              (rc, os.listdir(sub), err))
        rc, out, err = run(E + [d])
        check(8, "a directory as input: error", rc == 1 and "directory" in err and out == "", (rc, err))
        rc, out, err = run([ppl, "-m", model, "-f", d])
        check(8, "llm-perplexity: a directory as input: error", rc == 1 and "directory" in err, (rc, err))

        # ---- 9: terminal at the prompt -------------------------------------------------
        pty_checks(chat, model, d)

        # ---- 10: options and messages ---------------------------------------------------
        rc, out, err = run([chat, "--help"])
        check(10, "--no-mmap not offered by --help", rc == 0 and "--no-mmap" not in out, out[:300])
        rc, out, err = run([chat, "--no-mmap", "-p", "x"])
        check(10, "--no-mmap is an unknown option", rc == 2 and "unknown option" in err, (rc, err))
        for args, opt in [(["-n", "0"], "-n"), (["--temp", "nan"], "--temp"), (["--temp", "inf"], "--temp"),
                          (["--repeat-penalty", "0"], "--repeat-penalty"), (["--top-p", "nan"], "--top-p")]:
            rc, out, err = run([chat, "-m", model] + args + ["-p", "x"])
            check(10, "llm-chat %s refused at the option check" % " ".join(args),
                  rc == 2 and err.startswith("llm-chat: " + opt) and "invalid argument" not in err, (rc, err))
        rc, out, err = run([inspect, "--max-array"])
        check(10, "llm-inspect --max-array without a value", rc == 2 and "needs a value" in err, err)
        rc, out, err = run([ppl, "-m", model, "-f", text, "-c", "100000000"])
        check(10, "llm-perplexity -c 100000000 names the range", rc == 2 and "1048576" in err, err)
        rc, out, err = run([inspect, os.path.join(d, "missing.gguf")])
        check(10, "llm-inspect on a missing file says so", rc == 1 and "No such file" in err, err)
        if os.geteuid() != 0:
            unread = os.path.join(d, "unreadable.gguf")
            with open(unread, "wb") as f:
                f.write(b"GGUF")
            os.chmod(unread, 0)
            rc, out, err = run([inspect, unread])
            check(10, "llm-inspect on an unreadable file: permission, not 'not a GGUF file'",
                  rc == 1 and "Permission denied" in err and "not a GGUF" not in err, err)
        else:
            skip(10, "unreadable file", "root reads every file")

        # ---- 11: memory plan above the available memory -----------------------------------
        rc, out, err = run([chat, "-m", model, "-t", "1", "-c", "16000000", "-p", "hi"])
        check(11, "a plan above the available memory is refused without --force",
              rc == 1 and "refusing to load" in err and "--force" in err, (rc, err[-300:]))
        rc, out, err = run([ppl, "-m", model, "-t", "1", "-c", "1048576", "-f", text], timeout=60)
        check(11, "llm-perplexity: a plan above the available memory is refused without --force",
              rc == 1 and "refusing to load" in err and "--force" in err, (rc, err[-300:]))

    print("%d failure(s)" % len(FAILS))
    return 1 if FAILS else 0


def pty_checks(chat, model, d):
    import termios
    try:
        master, slave = os.openpty()
    except OSError as e:
        skip(9, "terminal checks", "no pty: %s" % e)
        return
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(d, "state"), TERM="xterm")

    def start():
        return subprocess.Popen([chat, "-m", model, "-t", "1", "-c", "256"], stdin=slave, stdout=slave,
                                stderr=slave, env=env, start_new_session=True)

    def read_until(p, needle, timeout=120):
        buf = b""
        end = time.time() + timeout
        while time.time() < end:
            r, _, _ = select.select([master], [], [], 0.5)
            if r:
                try:
                    buf += os.read(master, 4096)
                except OSError:
                    break
                if needle in buf:
                    return buf
            elif p.poll() is not None:
                break
        return buf

    def finish(p):
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def wait_raw(p, timeout=60):
        """Waits until the line editor has switched the terminal to raw mode
        (ICANON off): only then does a signal find the terminal changed, and
        only then is a typed byte not flushed away by that switch."""
        end = time.time() + timeout
        while time.time() < end and p.poll() is None:
            if not termios.tcgetattr(slave)[3] & termios.ICANON:
                time.sleep(0.2)
                return True
            time.sleep(0.05)
        return False

    saved = termios.tcgetattr(slave)
    try:
        p = start()
        buf = read_until(p, b"> ")
        raw = wait_raw(p)
        p.send_signal(signal.SIGTERM)
        finish(p)
        after = termios.tcgetattr(slave)[3] & termios.ECHO
        check(9, "SIGTERM at the prompt (terminal in raw mode) leaves the terminal echoing",
              b"> " in buf and raw and after != 0, (buf[-200:], raw, after))
        termios.tcsetattr(slave, termios.TCSANOW, saved)
        p = start()
        buf = read_until(p, b"> ")
        wait_raw(p)
        os.write(master, b"\x04")
        tail = buf + read_until(p, b"\xff", timeout=10)
        finish(p)
        check(9, "Ctrl-D at the prompt ends the line", b"> " in tail and tail.rstrip(b" ").endswith((b"\n", b"\r\n")),
              tail[-80:])
    finally:
        os.close(master)
        os.close(slave)


if __name__ == "__main__":
    sys.exit(main())
