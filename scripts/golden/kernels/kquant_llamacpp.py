#!/usr/bin/env python3
"""Golden Q4_K / Q6_K dot products and Q8_K quantizations from llama.cpp's own
CPU kernels.

Dots: builds deterministic Q4_K / Q6_K weight rows and Q8_K activation rows
from a xorshift32 stream (the same generator as q5_dots_llamacpp.py;
tests/runtime/test_kernels_kquant.c rebuilds the same bytes with golden_gen.h), calls
ggml_vec_dot_q4_K_q8_K and ggml_vec_dot_q6_K_q8_K from the libggml-cpu.so that
llama-cpp-python 0.3.36 ships (AVX2 build) and prints each result as a float
bit pattern for the C table g_kq_golden.

Quantizer: builds float rows (random magnitudes, exact half-way ties,
opposite-sign maxima, zero / NaN / inf blocks), runs quantize_row_q8_K (the
symbol libggml-cpu.so exports for Q8_K's from_float; on x86 it jumps to
libggml-base.so's quantize_row_q8_K_ref) into a zero-filled buffer and prints
the FNV-1a 64 hash of the output bytes and the first block's d for the C
table g_q8k_golden.

    /root/.cache/llm/venv/bin/python scripts/golden/kernels/kquant_llamacpp.py
"""
import ctypes
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ggml_golden import VEC_DOT_ARGS, Gen, InitParams, fnv1a64, load, seed  # noqa: E402


def weights(t, n, g):
    out = bytearray()
    for _ in range(n // 256):
        if t == "q4_K":  # d, dmin, 12 scale bytes, 128 qs
            out += struct.pack("<HH", g.half(False), g.half(False)) + bytes(g.byte() for _ in range(140))
        elif t == "q5_K":  # d, dmin, 12 scale bytes, 32 qh, 128 qs
            out += struct.pack("<HH", g.half(False), g.half(False)) + bytes(g.byte() for _ in range(172))
        else:  # q6_K: 128 ql, 64 qh, 16 signed scales, then d (signed)
            out += bytes(g.byte() for _ in range(208)) + struct.pack("<H", g.half(True))
    return bytes(out)


def acts(n, g):
    """Q8_K: float d, 256 quants (-128 allowed), 16 consistent bsums."""
    out = bytearray()
    for _ in range(n // 256):
        d = g.f32()
        q = [g.byte() for _ in range(256)]
        q = [v - 256 if v >= 128 else v for v in q]
        bs = [sum(q[16 * j:16 * j + 16]) for j in range(16)]
        out += struct.pack("<f", d) + struct.pack("<256b", *q) + struct.pack("<16h", *bs)
    return bytes(out)


DOT_CASES = [("q4_K", n) for n in (256, 512, 768, 1024, 1536, 2048, 2816, 3072, 4096, 5632, 6144, 8192)] + \
            [("q6_K", n) for n in (256, 512, 768, 1024, 1536, 2048, 2816, 3072, 4096, 5632, 6144, 8192)]


def f32_from_bits(u):
    return struct.unpack("<f", struct.pack("<I", u & 0xFFFFFFFF))[0]


def quant_row(kind, n, g):
    """Float row of quantizer case `kind` (the C test's kqg_floats mirrors this).

    0: random values, per-block magnitude 2^-20 .. 2^-9 times a 24-bit integer;
    1: ties: element 0 is +-127 * 2^s, the rest (k + 1/2) * 2^s, so the scaled
       values are exact half-way cases (round half to even);
    2: opposite-sign maxima: -A at 5 and +A at 100 (the first one sets the sign);
    3: a zero block (+0 and -0) between random blocks;
    4: NaNs (default and with a payload) and an infinity in different blocks.
    """
    x = []
    for b in range(n // 256):
        e = 20 + g.next() % 12
        blk = []
        for _ in range(256):
            r = g.next()
            blk.append(float((r >> 8) - (1 << 23)) * 2.0 ** -e)
        s = g.next() % 8
        if kind == 1:
            for i in range(256):
                k = g.next() % 201 - 100
                blk[i] = (k + 0.5) * 2.0 ** -s
            blk[0] = (127.0 if g.next() & 1 else -127.0) * 2.0 ** -s
        elif kind == 2:
            a = abs(blk[0]) * 4.0
            blk[5], blk[100] = -a, a
        elif kind == 3 and b == 1:
            blk = [(-0.0 if i & 1 else 0.0) for i in range(256)]
        elif kind == 4:
            if b == 0:
                blk[7] = f32_from_bits(0x7FC00000)
                blk[200] = f32_from_bits(0xFFC01234)
            elif b == 1:
                blk[33] = math.inf
            elif b == 2:
                blk = [f32_from_bits(0x7FC00000)] * 256
        x += blk
    return x


Q8K_CASES = [(0, 256), (0, 512), (0, 2048), (1, 256), (1, 1024), (2, 768), (3, 768), (4, 1024)]


def main():
    base, cpu = load()
    fns = {"q4_K": cpu.ggml_vec_dot_q4_K_q8_K, "q6_K": cpu.ggml_vec_dot_q6_K_q8_K}
    for f in fns.values():
        f.restype = None
        f.argtypes = VEC_DOT_ARGS
    print("/* g_kq_golden */")
    for i, (t, n) in enumerate(DOT_CASES):
        g = Gen(seed(1000 + i))
        w = weights(t, n, g)
        a = acts(n, g)
        s = ctypes.c_float(0)
        fns[t](n, ctypes.byref(s), 0, w, 0, a, 0, 1)
        bits = struct.unpack("<I", struct.pack("<f", s.value))[0]
        print("    {LLM_DTYPE_%s, %d, 0x%08Xu}, /* %.9g */" % (t.upper(), n, bits, s.value))

    q = cpu.quantize_row_q8_K
    q.restype = None
    q.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64]
    print("/* g_q8k_golden */")
    for i, (kind, n) in enumerate(Q8K_CASES):
        g = Gen(seed(2000 + i))
        x = quant_row(kind, n, g)
        src = b"".join(struct.pack("<f", v) for v in x)
        dst = ctypes.create_string_buffer(292 * (n // 256))  # zero-filled
        q(src, dst, n)
        out = dst.raw
        d0 = struct.unpack("<I", out[:4])[0]
        print("    {%d, %d, 0x%016XULL, 0x%08Xu}," % (kind, n, fnv1a64(out), d0))

    repack_golden(base, cpu)
    tiled_golden(base, cpu)


# Q4_K weight types llama.cpp repacks on AVX2 (CPU_REPACK buffer, q4_K_8x8):
# each case is 8 weight rows x 4 float activation rows of n elements.
REPACK_CASES = [256, 1536, 4096]


def repack_golden(base, cpu):
    """Results of llama.cpp's repacked Q4_K kernels, the ones a llama model
    loaded with default parameters uses for Q4_K matmuls on an AVX2 CPU:
    ggml_gemv_q4_K_8x8_q8_K (a lone activation row, quantized by
    quantize_row_q8_K) and ggml_gemm_q4_K_8x8_q8_K (four rows, quantized
    together by ggml_quantize_mat_q8_K_4x8). The weights are interleaved by
    llama.cpp's own repack<block_q4_K, 8, 8>. Prints, per case, the FNV-1a 64
    hash of the 32 gemv outputs (gemv run once per activation row) and of the
    32 gemm outputs, as float bits in [activation row][weight row] order, and
    the first of each, for the C table g_q4k_repack_golden."""
    repack = getattr(cpu, "_ZN4ggml3cpu6repack6repackI10block_q4_KLl8ELl8EEEiP11ggml_tensorPKvm")
    repack.restype = ctypes.c_int
    repack.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    kern = {}
    for name in ("ggml_gemv_q4_K_8x8_q8_K", "ggml_gemm_q4_K_8x8_q8_K"):
        f = getattr(cpu, name)
        f.restype = None
        f.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_float), ctypes.c_size_t, ctypes.c_void_p,
                      ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        kern[name] = f
    qrow = cpu.quantize_row_q8_K
    qmat = cpu.ggml_quantize_mat_q8_K_4x8
    qmat.restype = None
    qmat.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64]
    print("/* g_q4k_repack_golden */")
    for i, n in enumerate(REPACK_CASES):
        g = Gen(seed(3000 + i))
        w = weights("q4_K", 8 * n, g)  # 8 rows of n, one after the other
        x = quant_row(0, 4 * n, g)     # 4 activation rows of n
        ctx = base.ggml_init(InitParams(len(w) + 4096, None, False))
        t = base.ggml_new_tensor_2d(ctx, 12, n, 8)  # GGML_TYPE_Q4_K, ne = [n, 8]
        assert repack(t, w, len(w)) == 0
        vx = base.ggml_get_data(t)
        out = {}
        gv = []
        for r in range(4):
            a = ctypes.create_string_buffer(292 * (n // 256))
            qrow(b"".join(struct.pack("<f", v) for v in x[r * n:(r + 1) * n]), a, n)
            s = (ctypes.c_float * 8)()
            kern["ggml_gemv_q4_K_8x8_q8_K"](n, s, 8, vx, a.raw, 1, 8)
            gv += list(s)
        out["gemv"] = gv
        a4 = ctypes.create_string_buffer((16 + 1024 + 128) * (n // 256))
        qmat(b"".join(struct.pack("<f", v) for v in x), a4, n)
        s = (ctypes.c_float * 32)()
        kern["ggml_gemm_q4_K_8x8_q8_K"](n, s, 8, vx, a4.raw, 4, 8)
        out["gemm"] = list(s)
        base.ggml_free(ctx)
        for k in ("gemv", "gemm"):
            raw = b"".join(struct.pack("<f", v) for v in out[k])
            print("    {%d, %d, 0x%016XULL, 0x%08Xu}, /* %s, first %.9g */" % (
                n, k == "gemm", fnv1a64(raw), struct.unpack("<I", raw[:4])[0], k, out[k][0]))


# (type, ggml type id, n): weights not repacked, as llama.cpp holds Q6_K on x86.
TILED_CASES = [("q6_K", 14, 256), ("q6_K", 14, 1536), ("q6_K", 14, 4096),
               ("q4_K", 12, 256), ("q4_K", 12, 1536), ("q4_K", 12, 4096),
               ("q5_K", 13, 256), ("q5_K", 13, 1536), ("q5_K", 13, 4096)]


def tiled_golden(base, cpu):
    """Results of llama.cpp's own ggml_mul_mat (a one-node graph computed by
    ggml_graph_compute_with_ctx, 1 thread) of 8 weight rows in a plain CPU
    context (never repacked) by 8 float activation rows, which takes
    ggml-cpu's tiled K-quant path (8 or more rows), and by the first 4
    activation rows alone, which takes the stock vec_dot path. Prints, per
    case, the FNV-1a 64 hash of each result's float bits in [activation
    row][weight row] order and its first value, for the C table
    g_kq_tiled_golden."""
    assert os.environ.get("GGML_CPU_TILED_MM") is None  # the default: tiled path on
    print("/* g_kq_tiled_golden */")
    for i, (t, gt, n) in enumerate(TILED_CASES):
        g = Gen(seed(4000 + i))
        w = weights(t, 8 * n, g)        # 8 weight rows of n
        x = quant_row(0, 8 * n, g)      # 8 activation rows of n
        for rows in (8, 4):
            ctx = base.ggml_init(InitParams(64 << 20, None, False))
            tw = base.ggml_new_tensor_2d(ctx, gt, n, 8)
            ctypes.memmove(base.ggml_get_data(tw), w, len(w))
            tx = base.ggml_new_tensor_2d(ctx, 0, n, rows)  # GGML_TYPE_F32
            src = b"".join(struct.pack("<f", v) for v in x[:rows * n])
            ctypes.memmove(base.ggml_get_data(tx), src, len(src))
            ty = base.ggml_mul_mat(ctx, tw, tx)
            gr = base.ggml_new_graph(ctx)
            base.ggml_build_forward_expand(gr, ty)
            assert cpu.ggml_graph_compute_with_ctx(ctx, gr, 1) == 0
            raw = ctypes.string_at(base.ggml_get_data(ty), 4 * 8 * rows)
            base.ggml_free(ctx)
            print("    {LLM_DTYPE_%s, %d, %d, 0x%016XULL, 0x%08Xu}, /* %s, first %.9g */" % (
                t.upper(), n, rows, fnv1a64(raw), struct.unpack("<I", raw[:4])[0],
                "tiled" if rows >= 8 else "vec_dot", struct.unpack("<f", raw[:4])[0]))


if __name__ == "__main__":
    main()
