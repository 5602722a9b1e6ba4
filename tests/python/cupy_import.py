"""How far CuPy for ROCm 7 (cupy-rocm-7-0) gets under rocload.

Run by tests/python_clients.rs as `rocload run --hip 7 <venv>/bin/python this.py`. Three
findings, printed one per line for the test to record:

1. `import cupy`: its outcome, and the first library it could not open when it fails;
2. every shared library CuPy's extension modules need (DT_NEEDED) beyond libc and the C++
   runtime, whether it loads in this process (rocload provides libamdhip64.so.7) and which
   modules need it;
3. every symbol those modules import from libamdhip64.so.7, at its version (hip_4.2 ...), and
   whether rocload's libamdhip64.so.7 exports it at that version (dlvsym): `not exported:`
   lines, which tests/python_clients.rs compares with the gaps it knows.

Exit status 0 when rocload's part holds: libamdhip64.so.7 loads, and `import cupy` either
works or stops at a library other than rocload's.
The ELF reading below is bounded by the file's size and checks every offset it follows.
"""

import ctypes
import glob
import importlib.util
import os
import struct
import sys

SYSTEM = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
          "libstdc++.so.6", "libgcc_s.so.1"}
ROCLOAD = {"libamdhip64.so.7", "libhiprtc.so.7"}


class Elf:
    """The dynamic facts of an x86-64 ELF shared object: DT_NEEDED and versioned imports."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise ValueError(f"{path}: not a little-endian ELF64 file")
        shoff, = struct.unpack_from("<Q", d, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", d, 0x3A)
        if shentsize != 64 or shoff + shnum * 64 > len(d):
            raise ValueError(f"{path}: section headers out of bounds")
        self.sections = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * 64) for i in range(shnum)]
        self.path = path

    def _section(self, kind):
        for s in self.sections:
            if s[1] == kind:
                return s
        return None

    def _bytes(self, s):
        offset, size = s[4], s[5]
        if offset + size > len(self.data):
            raise ValueError(f"{self.path}: section at {offset:#x} runs past the end")
        return self.data[offset:offset + size]

    def _string(self, table, offset):
        end = table.find(b"\0", offset)
        if offset >= len(table) or end < 0:
            raise ValueError(f"{self.path}: string offset {offset:#x} out of bounds")
        return table[offset:end].decode()

    def needed(self):
        dynamic = self._section(6)  # SHT_DYNAMIC
        if dynamic is None:
            return []
        strtab = self._bytes(self.sections[dynamic[6]])
        body = self._bytes(dynamic)
        out = []
        for i in range(0, len(body) - 15, 16):
            tag, value = struct.unpack_from("<qQ", body, i)
            if tag == 0:
                break
            if tag == 1:  # DT_NEEDED
                out.append(self._string(strtab, value))
        return out

    def imports(self):
        """(name, version, file) of every undefined symbol with a version requirement."""
        dynsym = self._section(11)  # SHT_DYNSYM
        versym = self._section(0x6FFFFFFF)  # SHT_GNU_versym
        verneed = self._section(0x6FFFFFFE)  # SHT_GNU_verneed
        if dynsym is None or versym is None or verneed is None:
            return []
        strtab = self._bytes(self.sections[dynsym[6]])
        versions = {}
        body = self._bytes(verneed)
        at = 0
        for _ in range(verneed[9] or 1 << 16):  # sh_info: the number of entries
            if at + 16 > len(body):
                raise ValueError(f"{self.path}: verneed entry past the end")
            _, count, file_off, aux, nxt = struct.unpack_from("<HHIII", body, at)
            file = self._string(strtab, file_off)
            a = at + aux
            for _ in range(count):
                if a + 16 > len(body):
                    raise ValueError(f"{self.path}: vernaux entry past the end")
                _, _, other, name_off, anext = struct.unpack_from("<IHHII", body, a)
                versions[other] = (self._string(strtab, name_off), file)
                if anext == 0:
                    break
                a += anext
            if nxt == 0:
                break
            at += nxt
        syms = self._bytes(dynsym)
        vers = self._bytes(versym)
        out = []
        for i in range(len(syms) // 24):
            name_off, info, _, shndx, _, _ = struct.unpack_from("<IBBHQQ", syms, i * 24)
            if shndx != 0 or name_off == 0 or 2 * i + 2 > len(vers):
                continue
            index, = struct.unpack_from("<H", vers, 2 * i)
            index &= 0x7FFF
            if index in versions:
                version, file = versions[index]
                out.append((self._string(strtab, name_off), version, file))
        return out


def loads(name):
    try:
        ctypes.CDLL(name)
        return None
    except OSError as e:
        return str(e)


def main():
    spec = importlib.util.find_spec("cupy")
    if spec is None or not spec.submodule_search_locations:
        print("cupy (cupy-rocm-7-0) is not installed in this python", file=sys.stderr)
        return 1
    site = os.path.dirname(spec.submodule_search_locations[0])
    modules = sorted(glob.glob(os.path.join(site, "cupy*", "**", "*.so"), recursive=True))

    # 1. import cupy
    first_missing = None
    other_failure = None
    try:
        import cupy  # noqa: F401
        print(f"import cupy: works ({cupy.__version__})")
    except Exception as e:  # CuPy wraps the loader's ImportError in its own text
        lines = [l.strip() for l in str(e).splitlines() if l.strip() and not l.startswith("=")]
        cause = next((l for l in lines if "ImportError:" in l or "cannot open" in l or "undefined symbol" in l),
                     lines[-1] if lines else type(e).__name__)
        if "cannot open shared object file" in cause:
            first_missing = cause.split("ImportError: ")[-1].split(":")[0]
        else:
            other_failure = cause
        print(f"import cupy: {cause}" if "Error" in cause else f"import cupy: {type(e).__name__}: {cause}")

    # 2. what the modules need
    needed = {}
    imports = {}
    for m in modules:
        elf = Elf(m)
        rel = os.path.relpath(m, site)
        for lib in elf.needed():
            if lib not in SYSTEM:
                needed.setdefault(lib, []).append(rel)
        for name, version, file in elf.imports():
            if file in ROCLOAD:
                imports.setdefault((file, name, version), []).append(rel)
    print(f"extension modules: {len(modules)}")
    failed = []
    for lib in sorted(needed):
        error = loads(lib)
        users = needed[lib]
        state = "loads" + (" (rocload)" if lib in ROCLOAD else "") if error is None else "missing"
        if error is not None and lib in ROCLOAD:
            failed.append(f"{lib} does not load: {error}")
        short = ", ".join(u.split(".cpython")[0] for u in users[:3]) + (f" and {len(users) - 3} more" if len(users) > 3 else "")
        print(f"needs {lib}: {state}; {len(users)} module(s): {short}")

    # 3. the HIP symbols they import, against rocload's exports
    libc = ctypes.CDLL(None)
    libc.dlvsym.restype = ctypes.c_void_p
    libc.dlvsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    missing = []
    for file in sorted({f for f, _, _ in imports}):
        handle = ctypes.CDLL(file)._handle
        names = sorted((n, v) for f, n, v in imports if f == file)
        absent = [(n, v) for n, v in names if not libc.dlvsym(handle, n.encode(), v.encode())]
        print(f"imports from {file}: {len(names)} symbols, {len(names) - len(absent)} exported by rocload at their version")
        for name, version in absent:
            users = sorted({u.split(".cpython")[0] for u in imports[(file, name, version)]})
            print(f"not exported: {name}@{version} (imported by {', '.join(users)})")
            missing.append(f"{name}@{version}")
    if first_missing is not None:
        print(f"import cupy stops at: {first_missing}")
        if first_missing in ROCLOAD:
            failed.append(f"import cupy fails on rocload's {first_missing}")
    if other_failure is not None:
        failed.append(f"import cupy fails for another reason than a missing library: {other_failure}")
    for f in failed:
        print(f"FAIL: {f}", file=sys.stderr)
    print("FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
