"""Shared pieces of the kernel golden scripts in this folder: the path of the
libggml that llama-cpp-python 0.3.36 ships, the xorshift32 generator whose
steps the C tests repeat (tests/runtime/golden_gen.h and test_kernels_q4_0.c),
case seeds, the FNV-1a 64 hash the C tables store, and the ggml graph API set
up through ctypes."""
import ctypes
import os
import struct

import llama_cpp

LIB = os.path.join(os.path.dirname(llama_cpp.__file__), "lib")

# ggml_vec_dot_*(n, s, bs, x, bx, y, by, nrc)
VEC_DOT_ARGS = [ctypes.c_int, ctypes.POINTER(ctypes.c_float), ctypes.c_size_t, ctypes.c_char_p,
                ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]


class Gen:
    """xorshift32; the C tests use the same steps and seeds."""

    def __init__(self, seed):
        self.x = seed

    def next(self):
        x = self.x
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self.x = x
        return x

    def byte(self):
        return self.next() >> 24

    def half(self, signed):
        # exponent 8..14 (2^-7 .. 2^-1), random mantissa, random sign if signed
        r = self.next()
        h = ((8 + r % 7) << 10) | ((r >> 8) & 0x3FF)
        if signed and (r >> 20) & 1:
            h |= 0x8000
        return h

    def f32(self):
        # 2^-10 .. 2^-5, random mantissa
        r = self.next()
        return struct.unpack("<f", struct.pack("<I", ((117 + r % 6) << 23) | ((r >> 3) & 0x7FFFFF)))[0]

    def q8(self):
        v = self.byte()
        v = v - 256 if v >= 128 else v
        return -127 if v == -128 else v


def seed(i):
    """Seed of case i (never 0, which xorshift would keep)."""
    s = 0x9E3779B9 ^ ((i * 0x85EBCA6B) & 0xFFFFFFFF)
    return s or 1


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for c in data:
        h ^= c
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


class InitParams(ctypes.Structure):
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]


def load():
    """(base, cpu): libggml-base and libggml-cpu, loaded globally, ggml_cpu_init
    done (it fills the fp16 -> fp32 table the kernels read), and the graph
    calls the scripts use typed."""
    base = ctypes.CDLL(os.path.join(LIB, "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
    cpu = ctypes.CDLL(os.path.join(LIB, "libggml-cpu.so"), mode=ctypes.RTLD_GLOBAL)
    cpu.ggml_cpu_init()
    vp = ctypes.c_void_p
    base.ggml_init.restype = vp
    base.ggml_init.argtypes = [InitParams]
    base.ggml_new_tensor_2d.restype = vp
    base.ggml_new_tensor_2d.argtypes = [vp, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    base.ggml_get_data.restype = vp
    base.ggml_get_data.argtypes = [vp]
    base.ggml_mul_mat.restype = vp
    base.ggml_mul_mat.argtypes = [vp, vp, vp]
    base.ggml_new_graph.restype = vp
    base.ggml_new_graph.argtypes = [vp]
    base.ggml_build_forward_expand.restype = None
    base.ggml_build_forward_expand.argtypes = [vp, vp]
    base.ggml_free.argtypes = [vp]
    cpu.ggml_graph_compute_with_ctx.restype = ctypes.c_int
    cpu.ggml_graph_compute_with_ctx.argtypes = [vp, vp, ctypes.c_int]
    return base, cpu
