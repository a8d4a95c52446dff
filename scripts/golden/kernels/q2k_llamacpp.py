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
import ctypes
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ggml_golden import VEC_DOT_ARGS, Gen, InitParams, fnv1a64, load, seed  # noqa: E402
from q4_0_llamacpp import floats  # noqa: E402

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
    base, cpu = load()
    f = cpu.ggml_vec_dot_q2_K_q8_K
    f.restype = None
    f.argtypes = VEC_DOT_ARGS
    print("/* g_q2k_golden */")
    for i, n in enumerate(CASES):
        g = Gen(seed(7200 + i))
        w = weights(n, g)
        a = acts(n, g)
        s = ctypes.c_float(0)
        f(n, ctypes.byref(s), 0, w, 0, a, 0, 1)
        print("    {%d, 0x%08Xu}, /* %.9g */" % (n, struct.unpack("<I", struct.pack("<f", s.value))[0], s.value))
    tiled(base, cpu)


def tiled(base, cpu):
    assert os.environ.get("GGML_CPU_TILED_MM") is None  # the default: tiled path on
    print("/* g_q2k_tiled_golden */")
    for i, (n, absx) in enumerate(TILED_CASES):
        g = Gen(seed(7300 + i))
        w = weights(8 * n, g)  # 8 weight rows of n
        x = floats(8 * n, g)   # 8 activation rows of n
        if absx:
            x = [abs(v) for v in x]
        ctx = base.ggml_init(InitParams(64 << 20, None, False))
        tw = base.ggml_new_tensor_2d(ctx, 10, n, 8)  # GGML_TYPE_Q2_K
        ctypes.memmove(base.ggml_get_data(tw), w, len(w))
        tx = base.ggml_new_tensor_2d(ctx, 0, n, 8)
        src = b"".join(struct.pack("<f", v) for v in x)
        ctypes.memmove(base.ggml_get_data(tx), src, len(src))
        ty = base.ggml_mul_mat(ctx, tw, tx)
        gr = base.ggml_new_graph(ctx)
        base.ggml_build_forward_expand(gr, ty)
        assert cpu.ggml_graph_compute_with_ctx(ctx, gr, 1) == 0
        raw = ctypes.string_at(base.ggml_get_data(ty), 4 * 64)
        base.ggml_free(ctx)
        print("    {%d, 0x%016XULL, 0x%08Xu, %d}, /* first %.9g */" % (
            n, fnv1a64(raw), struct.unpack("<I", raw[:4])[0], int(absx), struct.unpack("<f", raw[:4])[0]))


if __name__ == "__main__":
    main()
