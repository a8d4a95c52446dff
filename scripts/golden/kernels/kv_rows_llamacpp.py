#!/usr/bin/env python3
"""How llama.cpp stores a K/V row in a cache of each type, for
tests/runtime/test_kv_rows.c (golden: tests/runtime/data/kv_rows_golden.bin).

llama.cpp's CPU backend writes a new cache row with the CPU type traits'
from_float of the cache type (ggml-cpu set_rows). This script calls exactly
that function pointer (ggml_get_type_traits_cpu(type)->from_float) in the
libggml-cpu that llama-cpp-python 0.3.36 ships (the AVX2 reference build,
scripts/golden/reference-venv.sh) on seeded rows, with edge blocks: all zero,
exact .5 ties of x * 127 / amax (Q8_0's x86 quantizer rounds them to even, its
_ref one away from zero), one spike, equal magnitudes of both signs.

Usage: ~/.cache/llm/venv-avx2/bin/python kv_rows_llamacpp.py OUT.bin

Format (little-endian): "LLMKVROW", u32 version 1, u32 n_types, then per type:
u32 ggml type, u32 n (floats), f32 x[n], u32 n_bytes, u8 raw[n_bytes].
"""
import ctypes
import struct
import sys

import numpy as np

from ggml_golden import load

TYPES = [(1, "f16", 2, 1), (30, "bf16", 2, 1), (8, "q8_0", 34, 32), (2, "q4_0", 18, 32), (3, "q4_1", 20, 32),
         (6, "q5_0", 22, 32), (7, "q5_1", 24, 32)]
N = 512  # 16 blocks of 32


class TraitsCPU(ctypes.Structure):
    _fields_ = [("from_float", ctypes.c_void_p), ("vec_dot", ctypes.c_void_p), ("vec_dot_type", ctypes.c_int),
                ("nrows", ctypes.c_int64)]


def rows():
    rng = np.random.default_rng(20261126)
    x = rng.standard_normal(N).astype(np.float32).reshape(-1, 32)
    x *= rng.choice([1e-3, 0.05, 1.0, 40.0], size=(x.shape[0], 1)).astype(np.float32)
    x[0] = 0.0
    x[1] = (np.arange(32, dtype=np.float32) - 16.0) + 0.5  # ties: amax 127 below
    x[1, 0] = 127.0
    x[2] = 0.0
    x[2, 5] = -3.0
    x[3, 3] = 2.5
    x[3, 9] = -2.5
    x[4] = np.linspace(-1, 1, 32, dtype=np.float32)
    return x.reshape(-1)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    _, cpu = load()
    cpu.ggml_get_type_traits_cpu.restype = ctypes.POINTER(TraitsCPU)
    cpu.ggml_get_type_traits_cpu.argtypes = [ctypes.c_int]
    fn_t = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    x = rows()
    blob = bytearray(b"LLMKVROW") + struct.pack("<II", 1, len(TYPES))
    for t, name, bb, bs in TYPES:
        from_float = fn_t(cpu.ggml_get_type_traits_cpu(t).contents.from_float)
        nbytes = N // bs * bb
        out = (ctypes.c_uint8 * nbytes)()
        xin = np.ascontiguousarray(x, dtype=np.float32)
        from_float(xin.ctypes.data, ctypes.addressof(out), N)
        blob += struct.pack("<II", t, N) + xin.tobytes() + struct.pack("<I", nbytes) + bytes(out)
        print(f"{name}: {nbytes} bytes", file=sys.stderr)
    with open(sys.argv[1], "wb") as f:
        f.write(blob)


if __name__ == "__main__":
    main()
