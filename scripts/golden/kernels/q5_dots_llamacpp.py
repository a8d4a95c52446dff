#!/usr/bin/env python3
"""Golden Q5 dot products from llama.cpp's own CPU kernels.

Builds deterministic Q5_0/Q5_1/Q5_K weight rows and Q8_0/Q8_1/Q8_K activation
rows from a xorshift32 stream (tests/runtime/test_kernels_q5.c rebuilds the same
bytes with the same generator, golden_gen.h), calls ggml_vec_dot_q5_0_q8_0,
ggml_vec_dot_q5_1_q8_1 and ggml_vec_dot_q5_K_q8_K from the libggml-cpu.so
that llama-cpp-python 0.3.36 ships (AVX2 build, the one the project's logits
are checked against) and prints the results as float bit patterns for the C
table g_q5_golden in test_kernels_q5.c.

    /root/.cache/llm/venv/bin/python scripts/golden/kernels/q5_dots_llamacpp.py
"""
import ctypes
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ggml_golden import VEC_DOT_ARGS, Gen, load, seed  # noqa: E402


def weights(t, n, g):
    out = bytearray()
    if t == "q5_0":
        for _ in range(n // 32):
            out += struct.pack("<H", g.half(False)) + bytes(g.byte() for _ in range(20))
    elif t == "q5_1":
        for _ in range(n // 32):
            out += struct.pack("<HH", g.half(False), g.half(True)) + bytes(g.byte() for _ in range(20))
    else:  # q5_K: d, dmin, 12 scale bytes, 32 qh, 128 qs
        for _ in range(n // 256):
            out += struct.pack("<HH", g.half(False), g.half(False)) + bytes(g.byte() for _ in range(172))
    return bytes(out)


def acts(t, n, g):
    out = bytearray()
    if t == "q5_0":  # Q8_0
        for _ in range(n // 32):
            out += struct.pack("<H", g.half(False)) + struct.pack("<32b", *[g.q8() for _ in range(32)])
    elif t == "q5_1":  # Q8_1 (s need not equal d * sum for a dot comparison)
        for _ in range(n // 32):
            out += struct.pack("<HH", g.half(False), g.half(True)) + struct.pack("<32b", *[g.q8() for _ in range(32)])
    else:  # Q8_K: float d, 256 quants (-128 allowed), 16 consistent bsums
        for _ in range(n // 256):
            d = g.f32()
            q = [g.byte() for _ in range(256)]
            q = [v - 256 if v >= 128 else v for v in q]
            bs = [sum(q[16 * j:16 * j + 16]) for j in range(16)]
            out += struct.pack("<f", d) + struct.pack("<256b", *q) + struct.pack("<16h", *bs)
    return bytes(out)


# (type, n) cases; the C table lists them in this order.
CASES = [("q5_0", n) for n in (32, 64, 96, 352, 2048, 4096)] + \
        [("q5_1", n) for n in (32, 64, 96, 352, 2048, 4096)] + \
        [("q5_K", n) for n in (256, 512, 768, 1280, 2048, 2816, 3328, 4096, 5120, 6144)]


def main():
    _, cpu = load()
    fns = {"q5_0": cpu.ggml_vec_dot_q5_0_q8_0, "q5_1": cpu.ggml_vec_dot_q5_1_q8_1,
           "q5_K": cpu.ggml_vec_dot_q5_K_q8_K}
    for f in fns.values():
        f.restype = None
        f.argtypes = VEC_DOT_ARGS
    for i, (t, n) in enumerate(CASES):
        g = Gen(seed(i))
        w = weights(t, n, g)
        a = acts(t, n, g)
        s = ctypes.c_float(0)
        fns[t](n, ctypes.byref(s), 0, w, 0, a, 0, 1)
        bits = struct.unpack("<I", struct.pack("<f", s.value))[0]
        print("    {LLM_DTYPE_%s, %d, 0x%08Xu}, /* %.9g */" % (t.upper(), n, bits, s.value))


if __name__ == "__main__":
    main()
