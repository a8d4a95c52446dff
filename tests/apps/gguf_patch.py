"""A minimal GGUF reader (stdlib only) that finds where a metadata value or a
tensor's data lies in a file, so a test can copy a real model and overwrite
those bytes: a huge context_length, NaN weights. Follows the GGUF v2/v3 layout
of ggml's docs/gguf.md: header, key/value pairs, tensor infos, aligned data."""
import struct

# value type -> struct format of a scalar (8 = string, 9 = array)
_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<B", 10: "<Q", 11: "<q", 12: "<d"}


class Gguf:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.buf = f.read()
        self.pos = 0
        if self.buf[:4] != b"GGUF":
            raise ValueError("not a GGUF file")
        self.version, n_tensors, n_kv = struct.unpack_from("<IQQ", self.buf, 4)
        self.pos = 24
        self.kv = {}  # key -> (type, offset of the value)
        for _ in range(n_kv):
            key = self._str()
            vtype = self._u32()
            self.kv[key] = (vtype, self.pos)
            self._skip(vtype)
        self.tensors = {}  # name -> (ggml type, dims, offset relative to the data section)
        for _ in range(n_tensors):
            name = self._str()
            n_dims = self._u32()
            dims = struct.unpack_from("<%dQ" % n_dims, self.buf, self.pos)
            self.pos += 8 * n_dims
            ttype = self._u32()
            off = struct.unpack_from("<Q", self.buf, self.pos)[0]
            self.pos += 8
            self.tensors[name] = (ttype, dims, off)
        align = 32
        if "general.alignment" in self.kv:
            align = struct.unpack_from("<I", self.buf, self.kv["general.alignment"][1])[0]
        self.data_start = (self.pos + align - 1) // align * align

    def _u32(self):
        v = struct.unpack_from("<I", self.buf, self.pos)[0]
        self.pos += 4
        return v

    def _str(self):
        n = struct.unpack_from("<Q", self.buf, self.pos)[0]
        s = self.buf[self.pos + 8:self.pos + 8 + n].decode("utf-8")
        self.pos += 8 + n
        return s

    def _skip(self, vtype):
        if vtype in _SCALAR:
            self.pos += struct.calcsize(_SCALAR[vtype])
        elif vtype == 8:
            self._str()
        elif vtype == 9:
            etype = self._u32()
            n = struct.unpack_from("<Q", self.buf, self.pos)[0]
            self.pos += 8
            for _ in range(n):
                self._skip(etype)
        else:
            raise ValueError("unknown GGUF value type %d" % vtype)

    def tensor_offset(self, name):
        """Absolute file offset of a tensor's data, with its type and dims."""
        ttype, dims, off = self.tensors[name]
        return self.data_start + off, ttype, dims


def patched_copy(src, dst, patches):
    """Copies src to dst, then writes each (offset, bytes) of patches."""
    with open(src, "rb") as f, open(dst, "wb") as g:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            g.write(b)
    with open(dst, "r+b") as g:
        for off, data in patches:
            g.seek(off)
            g.write(data)
