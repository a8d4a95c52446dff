#!/usr/bin/env python3
"""Golden Q2_K x Q8_K dot products from llama.cpp's own ggml_vec_dot_q2_K_q8_K
(the libggml-cpu.so llama-cpp-python 0.3.36 ships, AVX2 build).

Per case: one Q2_K weight row and one Q8_K activation row of n elements from a
xorshift32 stream (tests/runtime/test_kernels_q4_0.c rebuilds the same bytes,
q2k_* there): weight blocks are 80 random bytes (scales, qs) then an fp16 d
(exponent 2^-7 .. 2^-1, random sign) and an fp16 dmin (2^-7 .. 2^-1, positive,
as llama.cpp's quantizer writes it); activation blocks a float d
(2^-10 .. 2^-5), 256 random int8 quants, and their 16 per-16 sums. Prints each
result's float bits for the C table g_q2k_golden.

Tiled: 8 Q2_K weight rows (weights() of 8 n) by 8 float activation rows
(q4_0_llamacpp.py's floats()), multiplied by llama.cpp's own ggml_mul_mat in a
one-node graph (plain CPU context, never repacked; 1 thread), which takes its
tiled K-quant kernel for 8 or more rows. Prints the FNV-1a 64 hash of the 64
outputs' float bits in [activation row][weight row] order and the first one,
for the C table g_q2k_tiled_golden.

    /root/.cache/llm/venv/bin/python scripts/golden/kernels/q2k_llamacpp.py
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ggml_golden import load  # noqa: E402
from q3k_llamacpp import run_dots, run_tiled  # noqa: E402

CASES = [256, 512, 1536, 4096]
# (n, |x|): the third case takes the activations' magnitudes, so that the
# mins' total S2 is large enough for the epilogue's rounding to show
TILED_CASES = [(256, False), (1536, False), (1536, True)]


def weights(n, g):
    out = bytearray()
    for _ in range(n // 256):
        out += bytes(g.next() >> 24 for _ in range(80))
        r = g.next()
        out += struct.pack("<H", ((8 + r % 7) << 10) | ((r >> 8) & 0x3FF) | (0x8000 if (r >> 20) & 1 else 0))
        r = g.next()
        out += struct.pack("<H", ((8 + r % 7) << 10) | ((r >> 8) & 0x3FF))
    return bytes(out)


def main():
    base, cpu = load()
    run_dots(cpu, "g_q2k_golden", "ggml_vec_dot_q2_K_q8_K", weights, CASES, 7200)
    tiled(base, cpu)


def tiled(base, cpu):
    run_tiled(base, cpu, "g_q2k_tiled_golden", 10, weights, TILED_CASES, 7300)  # GGML_TYPE_Q2_K


if __name__ == "__main__":
    main()
