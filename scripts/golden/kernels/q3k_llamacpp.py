#!/usr/bin/env python3
"""Golden Q3_K x Q8_K dot products from llama.cpp's own ggml_vec_dot_q3_K_q8_K
(the libggml-cpu.so llama-cpp-python 0.3.36 ships, AVX2 build).

Per case: one Q3_K weight row and one Q8_K activation row of n elements from a
xorshift32 stream (tests/runtime/test_kernels_q4_0.c rebuilds the same bytes,
q3k_* there): weight blocks are 108 random bytes (hmask, qs, scales) then an
fp16 d (exponent 2^-7 .. 2^-1, random sign); activation blocks a float d
(2^-10 .. 2^-5), 256 random int8 quants, and their 16 per-16 sums. Prints each
result's float bits for the C table g_q3k_golden.

    /root/.cache/llm/venv/bin/python scripts/golden/kernels/q3k_llamacpp.py
"""
import ctypes
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from q4_0_llamacpp import LIB, Gen  # noqa: E402

CASES = [256, 512, 1536, 4096]


def weights(n, g):
    out = bytearray()
    for _ in range(n // 256):
        out += bytes(g.next() >> 24 for _ in range(108))
        r = g.next()
        out += struct.pack("<H", ((8 + r % 7) << 10) | ((r >> 8) & 0x3FF) | (0x8000 if (r >> 20) & 1 else 0))
    return bytes(out)


def acts(n, g):
    out = bytearray()
    for _ in range(n // 256):
        r = g.next()
        d = struct.unpack("<f", struct.pack("<I", ((117 + r % 6) << 23) | ((r >> 3) & 0x7FFFFF)))[0]
        q = [(g.next() >> 24) for _ in range(256)]
        q = [v - 256 if v >= 128 else v for v in q]
        out += struct.pack("<f", d) + struct.pack("<256b", *q) + \
            struct.pack("<16h", *[sum(q[16 * j:16 * j + 16]) for j in range(16)])
    return bytes(out)


def main():
    ctypes.CDLL(os.path.join(LIB, "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
    cpu = ctypes.CDLL(os.path.join(LIB, "libggml-cpu.so"), mode=ctypes.RTLD_GLOBAL)
    cpu.ggml_cpu_init()
    f = cpu.ggml_vec_dot_q3_K_q8_K
    f.restype = None
    f.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_float), ctypes.c_size_t, ctypes.c_char_p,
                  ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
    print("/* g_q3k_golden */")
    for i, n in enumerate(CASES):
        g = Gen(0x9E3779B9 ^ ((7000 + i) * 0x85EBCA6B & 0xFFFFFFFF) or 1)
        w = weights(n, g)
        a = acts(n, g)
        s = ctypes.c_float(0)
        f(n, ctypes.byref(s), 0, w, 0, a, 0, 1)
        print("    {%d, 0x%08Xu}, /* %.9g */" % (n, struct.unpack("<I", struct.pack("<f", s.value))[0], s.value))


if __name__ == "__main__":
    main()
