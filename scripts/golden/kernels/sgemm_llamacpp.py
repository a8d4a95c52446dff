#!/usr/bin/env python3
"""Golden F16 / BF16 matmul results from llama.cpp's own ggml_mul_mat.

Per case: 8 weight rows of n elements (F16 or BF16) and 4 float activation
rows, built from a xorshift32 stream (tests/runtime/test_kernels_q4_0.c
rebuilds the same values: q40_next, sg_weights and q40_floats there; floats()
is q4_0_llamacpp.py's). A one-node graph ggml_mul_mat(w, x) in a plain CPU
context (weights never repacked) is computed by ggml_graph_compute_with_ctx
(1 thread) from the libggml-cpu.so that llama-cpp-python 0.3.36 ships:
  - with all 4 activation rows: llama.cpp converts them to the weight type
    and runs its llamafile sgemm (tinyBLAS; 2 or more rows);
  - with the first row alone: its vec_dot (ggml_vec_dot_f16 / _bf16).
Prints, per case, the FNV-1a 64 hash of each result's float bits in
[activation row][weight row] order and its first value, for the C table
g_sgemm_golden.

    /root/.cache/llm/venv/bin/python scripts/golden/kernels/sgemm_llamacpp.py
"""
import ctypes
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ggml_golden import Gen, InitParams, fnv1a64, load, seed  # noqa: E402
from q4_0_llamacpp import floats  # noqa: E402

# (type, ggml type id, n)
CASES = [("F16", 1, 64), ("F16", 1, 576), ("F16", 1, 1536), ("BF16", 30, 64), ("BF16", 30, 576),
         ("BF16", 30, 1544)]


def weights(t, count, g):
    """Finite values: F16 exponent 10..20 (2^-5 .. 2^5), BF16 exponent 122..132, random sign/mantissa."""
    out = []
    for _ in range(count):
        r = g.next()
        if t == "F16":
            out.append(((10 + r % 11) << 10) | ((r >> 8) & 0x3FF) | (0x8000 if (r >> 20) & 1 else 0))
        else:
            out.append(((122 + r % 11) << 7) | ((r >> 8) & 0x7F) | (0x8000 if (r >> 20) & 1 else 0))
    return struct.pack("<%dH" % count, *out)


def main():
    base, cpu = load()
    print("/* g_sgemm_golden */")
    for i, (t, gt, n) in enumerate(CASES):
        g = Gen(seed(6000 + i))
        w = weights(t, 8 * n, g)  # 8 weight rows of n
        x = floats(4 * n, g)      # 4 activation rows of n
        for rows in (4, 1):
            ctx = base.ggml_init(InitParams(16 << 20, None, False))
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
                t, n, rows, fnv1a64(raw), struct.unpack("<I", raw[:4])[0],
                "sgemm" if rows >= 2 else "vec_dot", struct.unpack("<f", raw[:4])[0]))


if __name__ == "__main__":
    main()
