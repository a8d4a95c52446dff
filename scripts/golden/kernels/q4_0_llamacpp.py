#!/usr/bin/env python3
"""Golden Q4_0 x Q8_0 results of llama.cpp's repacked Q4_0 kernels (CPU_REPACK,
q4_0_8x8), the ones a llama model loaded with default parameters uses on an
AVX2 CPU for every Q4_0 weight whose row count is a multiple of 8.

Per case: 8 Q4_0 weight rows of n elements and 4 float activation rows, built
from a xorshift32 stream (tests/runtime/test_kernels_q4_0.c rebuilds the same
bytes, see q40_* there). The weights are interleaved by llama.cpp's own
repack<block_q4_0, 8, 8> (from the libggml-cpu.so that llama-cpp-python 0.3.36
ships, AVX2 build); then
  gemv: each activation row quantized by quantize_row_q8_0, multiplied by
        ggml_gemv_q4_0_8x8_q8_0 (8 outputs);
  gemm: the 4 rows quantized together by ggml_quantize_mat_q8_0_4x8,
        multiplied by ggml_gemm_q4_0_8x8_q8_0 (32 outputs).
Prints, per case, the FNV-1a 64 hash of the 4 rows' quantize_row_q8_0 bytes,
and of the 32 gemv / gemm outputs as float bits in [activation row][weight
row] order with the first output, for the C table g_q40_golden.

    /root/.cache/llm/venv/bin/python scripts/golden/kernels/q4_0_llamacpp.py
"""
import ctypes
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ggml_golden import Gen, InitParams, fnv1a64, load, seed  # noqa: E402
CASES = [32, 576, 1536, 4096]


def weights(n_blocks, g):
    """Q4_0 blocks: fp16 d (exponent 2^-7 .. 2^-1, random sign), 16 random bytes."""
    out = bytearray()
    for _ in range(n_blocks):
        r = g.next()
        h = ((8 + r % 7) << 10) | ((r >> 8) & 0x3FF) | (0x8000 if (r >> 20) & 1 else 0)
        out += struct.pack("<H", h) + bytes(g.next() >> 24 for _ in range(16))
    return bytes(out)


def floats(n, g):
    """Per 32-element block a scale 2^-(20..27); elements (24-bit int - 2^23) * scale (exact)."""
    x = []
    for _ in range(n // 32):
        e = 20 + g.next() % 8
        for _ in range(32):
            x.append(float((g.next() >> 8) - (1 << 23)) * 2.0 ** -e)
    return x


def main():
    base, cpu = load()
    repack = getattr(cpu, "_ZN4ggml3cpu6repack6repackI10block_q4_0Ll8ELl8EEEiP11ggml_tensorPKvm")
    repack.restype = ctypes.c_int
    repack.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    kern = {}
    for name in ("ggml_gemv_q4_0_8x8_q8_0", "ggml_gemm_q4_0_8x8_q8_0"):
        f = getattr(cpu, name)
        f.restype = None
        f.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_float), ctypes.c_size_t, ctypes.c_void_p,
                      ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        kern[name] = f
    qrow = cpu.quantize_row_q8_0
    qrow.restype = None
    qrow.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64]
    qmat = cpu.ggml_quantize_mat_q8_0_4x8
    qmat.restype = None
    qmat.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64]
    print("/* g_q40_golden */")
    for i, n in enumerate(CASES):
        g = Gen(seed(5000 + i))
        w = weights(8 * n // 32, g)   # 8 rows of n, one after the other
        x = floats(4 * n, g)          # 4 activation rows of n
        ctx = base.ggml_init(InitParams(len(w) + 4096, None, False))
        t = base.ggml_new_tensor_2d(ctx, 2, n, 8)  # GGML_TYPE_Q4_0, ne = [n, 8]
        assert repack(t, w, len(w)) == 0
        vx = base.ggml_get_data(t)
        acts, gv = b"", []
        for r in range(4):
            a = ctypes.create_string_buffer(34 * (n // 32))
            qrow(b"".join(struct.pack("<f", v) for v in x[r * n:(r + 1) * n]), a, n)
            acts += a.raw
            s = (ctypes.c_float * 8)()
            kern["ggml_gemv_q4_0_8x8_q8_0"](n, s, 8, vx, a.raw, 1, 8)
            gv += list(s)
        a4 = ctypes.create_string_buffer(4 * 34 * (n // 32))
        qmat(b"".join(struct.pack("<f", v) for v in x), a4, n)
        s = (ctypes.c_float * 32)()
        kern["ggml_gemm_q4_0_8x8_q8_0"](n, s, 8, vx, a4.raw, 4, 8)
        base.ggml_free(ctx)
        raws = [b"".join(struct.pack("<f", v) for v in o) for o in (gv, list(s))]
        print("    {%d, 0x%016XULL, {0x%016XULL, 0x%016XULL}, {0x%08Xu, 0x%08Xu}}, /* first %.9g, %.9g */" % (
            n, fnv1a64(acts), fnv1a64(raws[0]), fnv1a64(raws[1]), struct.unpack("<I", raws[0][:4])[0],
            struct.unpack("<I", raws[1][:4])[0], gv[0], s[0]))


if __name__ == "__main__":
    main()
