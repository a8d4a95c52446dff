#!/usr/bin/env python3
"""Golden Q3_K x Q8_K dot products from llama.cpp's own ggml_vec_dot_q3_K_q8_K
(the libggml-cpu.so llama-cpp-python 0.3.36 ships, AVX2 build).

Per case: one Q3_K weight row and one Q8_K activation row of n elements from a
xorshift32 stream (tests/runtime/test_kernels_q4_0.c rebuilds the same bytes,
q3k_* there): weight blocks are 108 random bytes (hmask, qs, scales) then an
fp16 d (exponent 2^-7 .. 2^-1, random sign); activation blocks a float d
(2^-10 .. 2^-5), 256 random int8 quants, and their 16 per-16 sums. Prints each
result's float bits for the C table g_q3k_golden.

Tiled: 8 Q3_K weight rows (weights() of 8 n) by 8 float activation rows
(q4_0_llamacpp.py's floats()), multiplied by llama.cpp's own ggml_mul_mat in a
one-node graph (plain CPU context, never repacked; 1 thread), which takes its
tiled K-quant kernel for 8 or more rows. Prints the FNV-1a 64 hash of the 64
outputs' float bits in [activation row][weight row] order and the first one,
for the C table g_q3k_tiled_golden.

    /root/.cache/llm/venv/bin/python scripts/golden/kernels/q3k_llamacpp.py
"""
import ctypes
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ggml_golden import VEC_DOT_ARGS, Gen, InitParams, fnv1a64, load, seed  # noqa: E402
from q4_0_llamacpp import floats  # noqa: E402

CASES = [256, 512, 1536, 4096]
TILED_CASES = [256, 1536]


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


def run_dots(cpu, table, fn_name, weights_fn, cases, seed0):
    """Print the C table `table`: per case n, llama.cpp's vec_dot fn_name of
    one weight row (weights_fn) by one Q8_K row (acts), from the stream seeded
    by seed(seed0 + i)."""
    f = getattr(cpu, fn_name)
    f.restype = None
    f.argtypes = VEC_DOT_ARGS
    print("/* %s */" % table)
    for i, n in enumerate(cases):
        g = Gen(seed(seed0 + i))
        w = weights_fn(n, g)
        a = acts(n, g)
        s = ctypes.c_float(0)
        f(n, ctypes.byref(s), 0, w, 0, a, 0, 1)
        print("    {%d, 0x%08Xu}, /* %.9g */" % (n, struct.unpack("<I", struct.pack("<f", s.value))[0], s.value))


def main():
    base, cpu = load()
    run_dots(cpu, "g_q3k_golden", "ggml_vec_dot_q3_K_q8_K", weights, CASES, 7000)
    tiled(base, cpu)


def run_tiled(base, cpu, table, type_id, weights_fn, cases, seed0):
    """Print the C table `table`: per (n, absx) case, llama.cpp's ggml_mul_mat
    of 8 weight rows (weights_fn, ggml type type_id) by 8 float activation rows
    (their magnitudes if absx), from the stream seeded by seed(seed0 + i)."""
    assert os.environ.get("GGML_CPU_TILED_MM") is None  # the default: tiled path on
    print("/* %s */" % table)
    for i, (n, absx) in enumerate(cases):
        g = Gen(seed(seed0 + i))
        w = weights_fn(8 * n, g)  # 8 weight rows of n
        x = floats(8 * n, g)      # 8 activation rows of n
        if absx:
            x = [abs(v) for v in x]
        ctx = base.ggml_init(InitParams(64 << 20, None, False))
        tw = base.ggml_new_tensor_2d(ctx, type_id, n, 8)
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


def tiled(base, cpu):
    run_tiled(base, cpu, "g_q3k_tiled_golden", 11, weights, [(n, False) for n in TILED_CASES], 7100)  # GGML_TYPE_Q3_K


if __name__ == "__main__":
    main()
