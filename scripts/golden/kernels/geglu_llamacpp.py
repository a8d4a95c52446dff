#!/usr/bin/env python3
"""Golden GEGLU results from llama.cpp's own ggml (ggml_geglu_split, F32).

llama.cpp's CPU computes out = gelu_tanh(gate) * up for F32 rows through an
F16 lookup table (GGML_GELU_FP16 in ggml-cpu/vec.h): gate <= -10 gives 0,
gate >= 10 gives gate * up, anything else the table entry of fp16(gate),
an F16 value built once from the F32 tanh formula, times up. A one-node
graph ggml_geglu_split(gate, up) is computed by ggml_graph_compute_with_ctx
(1 thread) from the libggml-cpu.so that llama-cpp-python 0.3.36 ships.

Cases (tests/runtime/test_geglu.c rebuilds the same inputs):
  all_f16: gate = every F16 bit pattern 0 .. 65535 widened to F32 (so every
           table entry, NaNs and infinities included), up = 1;
  rows:    3 rows of 1000 (xorshift32 seed(7000)): gate uniform in
           [-12, 12) (r / 2^32 * 24 - 12), up in [-2, 2), and gate at
           columns 0..7 of each row forced to -10.5, -10, -9.999, -0, 0,
           9.999, 10, 10.5.
Prints per case the FNV-1a 64 hash of the output floats' bits, the count
and the first values, for the C table in test_geglu.c; with a file name,
also writes all_f16's 65536 output floats there (for diffing by hand).

    /root/.cache/llm/venv/bin/python scripts/golden/kernels/geglu_llamacpp.py [all_f16.bin]
"""
import ctypes
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ggml_golden import Gen, InitParams, fnv1a64, load, seed  # noqa: E402

SPECIAL = [-10.5, -10.0, -9.999, -0.0, 0.0, 9.999, 10.0, 10.5]


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def uniform(g, lo, width):
    # (float)(r / 2^32) * width + lo, rounded to F32 at each step as the C test does
    r = g.next()
    u = f32(r / 4294967296.0)
    return f32(f32(u * width) + lo)


def case_all_f16():
    # widened bit by bit (exact; NaN payloads kept in the top mantissa bits)
    out = []
    for h in range(65536):
        s, e, m = h >> 15, (h >> 10) & 31, h & 1023
        if e == 31:
            bits = (s << 31) | (0xFF << 23) | (m << 13)
        elif e == 0:
            if m == 0:
                bits = s << 31
            else:
                v = m / 1024.0 * 2.0 ** -14
                bits = struct.unpack("<I", struct.pack("<f", -v if s else v))[0]
        else:
            bits = (s << 31) | ((e - 15 + 127) << 23) | (m << 13)
        out.append(struct.pack("<I", bits))
    gate = b"".join(out)
    up = struct.pack("<f", 1.0) * 65536
    return 65536, 1, gate, up


def case_rows():
    g = Gen(seed(7000))
    n, rows = 1000, 3
    gate, up = [], []
    for _ in range(rows):
        for c in range(n):
            gate.append(uniform(g, -12.0, 24.0))
            up.append(uniform(g, -2.0, 4.0))
        for c, v in enumerate(SPECIAL):
            gate[-n + c] = f32(v)
    return n, rows, struct.pack("<%df" % len(gate), *gate), struct.pack("<%df" % len(up), *up)


def geglu(base, n, rows, gate, up):
    ctx = base.ggml_init(InitParams(64 << 20, None, False))
    tg = base.ggml_new_tensor_2d(ctx, 0, n, rows)
    tu = base.ggml_new_tensor_2d(ctx, 0, n, rows)
    ctypes.memmove(base.ggml_get_data(tg), gate, len(gate))
    ctypes.memmove(base.ggml_get_data(tu), up, len(up))
    ty = base.ggml_geglu_split(ctx, tg, tu)
    gr = base.ggml_new_graph(ctx)
    base.ggml_build_forward_expand(gr, ty)
    return ctx, ty, gr


def main():
    base, cpu = load()
    vp = ctypes.c_void_p
    base.ggml_geglu_split.restype = vp
    base.ggml_geglu_split.argtypes = [vp, vp, vp]
    print("/* g_geglu_golden */")
    for name, make in (("all_f16", case_all_f16), ("rows", case_rows)):
        n, rows, gate, up = make()
        ctx, ty, gr = geglu(base, n, rows, gate, up)
        assert cpu.ggml_graph_compute_with_ctx(ctx, gr, 1) == 0
        raw = ctypes.string_at(base.ggml_get_data(ty), 4 * n * rows)
        base.ggml_free(ctx)
        first = struct.unpack("<4I", raw[:16])
        print("    {\"%s\", %d, %d, 0x%016XULL}, /* first %s */" % (
            name, n, rows, fnv1a64(raw), " ".join("0x%08X" % v for v in first)))
        if name == "all_f16" and len(sys.argv) > 1:
            with open(sys.argv[1], "wb") as f:
                f.write(raw)


if __name__ == "__main__":
    main()
