#!/usr/bin/env python3
"""Serving benchmark: llm-server against llama.cpp's llama-server, same model,
threads and parallel slots, in the same run (never in CI).

For each concurrency C (default 1, 4, 16) each server is started fresh with
C parallel slots (-np C; llama-server gets -c C*ctx, since it splits its
context between slots), then C asyncio clients on loopback each stream R chat
completions one after another. Every request generates exactly --max-tokens
tokens (end-of-generation tokens are banned with logit_bias, which both
servers honour). Prompts differ per request after a shared system prompt.

Reported per server and C: aggregate generated tok/s (all tokens / wall time
of the level), p50/p99 time to first token and inter-token latency (client
side, from SSE events), and the ratios the issue asks for.

Usage: serve.py [--ours BUILD/bin/llm-server] [--llama PATH/llama-server] [-m MODEL]
                [-t 2] [-c 1,4,16] [-r REQUESTS_PER_STREAM] [-n MAX_TOKENS] [--ctx 1024]
                [--llama-args '--poll 0']
"""
import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time

SYSTEM = "You are a helpful assistant. Answer in full sentences and give details."
TOPICS = ["the sea", "a robot", "mountains", "coffee", "a library", "trains", "the moon", "gardens",
          "music", "bridges", "winter", "a market", "clocks", "rivers", "birds", "a lighthouse"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start(cmd, port, timeout=120):
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited: " + " ".join(cmd))
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=1)
            c.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            if b" 200 " in c.recv(100):
                c.close()
                return proc
            c.close()
        except OSError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server not ready: " + " ".join(cmd))


async def one_request(port, body):
    """Streams one chat completion; returns (ttft, [inter-token gaps], tokens)."""
    r, w = await asyncio.open_connection("127.0.0.1", port)
    data = json.dumps(body).encode()
    t0 = time.perf_counter()
    w.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            b"Content-Type: application/json\r\nContent-Length: " + str(len(data)).encode() + b"\r\n\r\n" + data)
    await w.drain()
    head = await r.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if status != 200:
        raise RuntimeError(f"HTTP {status}: {(await r.read())[:200]!r}")
    chunked = b"transfer-encoding: chunked" in head.lower()
    buf = b""
    times = []
    usage = None

    async def body_bytes():
        if not chunked:
            while True:
                b = await r.read(65536)
                if not b:
                    return
                yield b
        while True:
            line = await r.readuntil(b"\r\n")
            n = int(line.split(b";")[0], 16)
            if n == 0:
                return
            b = await r.readexactly(n + 2)
            yield b[:-2]

    async for b in body_bytes():
        buf += b
        while b"\n\n" in buf:
            ev, buf = buf.split(b"\n\n", 1)
            for line in ev.split(b"\n"):
                if not line.startswith(b"data: ") or line == b"data: [DONE]":
                    continue
                j = json.loads(line[6:])
                if j.get("usage"):
                    usage = j["usage"]
                for ch in j.get("choices") or []:
                    if (ch.get("delta") or {}).get("content"):
                        times.append(time.perf_counter())
    w.close()
    if not times:
        raise RuntimeError("no tokens")
    n = usage["completion_tokens"] if usage else len(times)
    return times[0] - t0, [b - a for a, b in zip(times, times[1:])], n


async def level(port, conc, reqs, max_tokens):
    ttft, itl, tokens = [], [], [0]

    async def stream(i):
        for k in range(reqs):
            topic = TOPICS[(i * reqs + k) % len(TOPICS)]
            body = {"messages": [{"role": "system", "content": SYSTEM},
                                 {"role": "user", "content": f"Write about {topic} (request {i}.{k})."}],
                    "max_tokens": max_tokens, "temperature": 0.8, "seed": i * 1000 + k, "stream": True,
                    "stream_options": {"include_usage": True}, "logit_bias": {"0": -100, "2": -100}}
            a, gaps, n = await one_request(port, body)
            ttft.append(a)
            itl.extend(gaps)
            tokens[0] += n
    t0 = time.perf_counter()
    await asyncio.gather(*(stream(i) for i in range(conc)))
    wall = time.perf_counter() - t0
    return tokens[0] / wall, ttft, itl


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] * 1e3


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ours", default=os.path.join(root, "build-test/bin/llm-server"))
    ap.add_argument("--llama", default="/root/.cache/llm/llamacpp-tools/avx2/bin/llama-server")
    ap.add_argument("-m", "--model", default=os.path.expanduser("~/.cache/llm/models/SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-c", "--concurrency", default="1,4,16")
    ap.add_argument("-r", "--requests", type=int, default=2, help="requests per stream")
    ap.add_argument("-n", "--max-tokens", type=int, default=48)
    ap.add_argument("--ctx", type=int, default=1024, help="context per slot")
    ap.add_argument("--llama-args", default="", help="extra llama-server arguments, e.g. '--poll 0'")
    a = ap.parse_args()
    levels = [int(x) for x in a.concurrency.split(",")]
    servers = [("llm-server", a.ours)]
    if os.access(a.llama, os.X_OK):
        servers.append(("llama-server", a.llama))
    else:
        print(f"note: {a.llama} not found: llm-server only", file=sys.stderr)
    rows = {}
    for conc in levels:
        for name, binary in servers:
            port = free_port()
            if name == "llm-server":
                cmd = [binary, "-m", a.model, "-t", str(a.threads), "-np", str(conc), "-c", str(a.ctx),
                       "--port", str(port), "--queue", "256"]
            else:
                cmd = [binary, "-m", a.model, "-t", str(a.threads), "-tb", str(a.threads), "-np", str(conc),
                       "-c", str(a.ctx * conc), "--port", str(port), "--host", "127.0.0.1"] + a.llama_args.split()
            proc = start(cmd, port)
            try:
                # one warm-up request (page in the weights)
                asyncio.run(level(port, 1, 1, 4))
                tps, ttft, itl = asyncio.run(level(port, conc, a.requests, a.max_tokens))
            finally:
                proc.terminate()
                proc.wait(timeout=60)
            rows[(name, conc)] = (tps, pct(ttft, 50), pct(ttft, 99), pct(itl, 50), pct(itl, 99))
            print(f"{name:13s} C={conc:<3d} {tps:8.1f} tok/s  TTFT p50 {rows[(name, conc)][1]:8.1f} ms "
                  f"p99 {rows[(name, conc)][2]:8.1f} ms  ITL p50 {rows[(name, conc)][3]:7.1f} ms "
                  f"p99 {rows[(name, conc)][4]:7.1f} ms", flush=True)
    print("\n| server | streams | gen tok/s | TTFT p50 ms | TTFT p99 ms | ITL p50 ms | ITL p99 ms |")
    print("|---|---|---|---|---|---|---|")
    for (name, conc), v in rows.items():
        print(f"| {name} | {conc} | {v[0]:.1f} | {v[1]:.0f} | {v[2]:.0f} | {v[3]:.1f} | {v[4]:.1f} |")
    top, one = max(levels), min(levels)
    if ("llm-server", top) in rows and ("llm-server", one) in rows:
        print(f"\nllm-server: {top} streams / {one} stream aggregate = "
              f"{rows[('llm-server', top)][0] / rows[('llm-server', one)][0]:.2f}x (goal >= 4x)")
    if ("llama-server", top) in rows:
        print(f"llm-server / llama-server aggregate at {top}: "
              f"{rows[('llm-server', top)][0] / rows[('llama-server', top)][0]:.2f}x (goal >= 1); "
              f"p99 TTFT {rows[('llm-server', top)][2]:.0f} vs {rows[('llama-server', top)][2]:.0f} ms (goal lower)")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end (shared machine)")


if __name__ == "__main__":
    main()
