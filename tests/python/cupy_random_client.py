"""CuPy for ROCm 7 (cupy-rocm-7-0 from PyPI): its AMD-built gfx1030 random-number kernels as a
client of rocload.

Run by tests/python_clients.rs as `rocload run --hip 7 <venv>/bin/python this.py`. CuPy's
`cupy/random/_generator_api*.so` carries the kernels of `cupy/random/cupy_distributions.cu`
(shipped in the wheel) for gfx1030, built by AMD's toolchain against hipRAND/rocRAND's device
headers, and exports the host launchers as C++ functions (`nm -D`):

    void init_curand_generator(int generator, intptr_t state, uint64_t seed, ssize_t size, intptr_t stream)
    void raw(int generator, intptr_t state, ssize_t state_size, intptr_t out, ssize_t size, intptr_t stream)
    void random_uniform(...), random_uniform_float(...), standard_normal(...), standard_normal_float(...)

with generator 0 = XORWOW, 1 = MRG32k3a, 2 = Philox4x32-10. Initialisation gives state `id` the
seed, subsequence `id` and offset 0 (hiprand_init); a generation kernel runs one thread per
state, thread `id` writing out[id], out[id + state_size], ... from its own state. Both kernels
touch one state per thread of a 256-thread block, so the state count is a multiple of 256.

This calls them through ctypes (no `import cupy`: that needs ROCm libraries no package here
provides, see cupy_import.py) with device memory from the bare libamdhip64.so. Philox's raw
output is checked exactly against the Philox4x32-10 below (Salmon et al., SC'11, with the
counter layout hipRAND/rocRAND give a subsequence: the upper 64 counter bits); the other
generators and the distributions statistically (mean, variance, Kolmogorov-Smirnov distance).
"""

import array
import ctypes
import glob
import importlib.util
import math
import os
import struct

XORWOW, MRG32K3A, PHILOX = 0, 1, 2
NAMES = {XORWOW: "XORWOW", MRG32K3A: "MRG32k3a", PHILOX: "Philox4x32-10"}
STATES = 256        # one block of the launchers' 256 threads
PER_STATE = 128     # outputs per state: 32,768 samples per distribution
STATE_BYTES = 128   # room per state: hipRAND's states are at most 64 bytes
SEED = 0x0123_4567_89AB_CDEF

hip = ctypes.CDLL("libamdhip64.so")
hip.hipMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
hip.hipFree.argtypes = [ctypes.c_void_p]
hip.hipMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
hip.hipMemset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
hip.hipStreamCreate.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
hip.hipStreamSynchronize.argtypes = [ctypes.c_void_p]
hip.hipStreamDestroy.argtypes = [ctypes.c_void_p]
hip.hipGetErrorName.restype = ctypes.c_char_p
HOST_TO_DEVICE, DEVICE_TO_HOST = 1, 2


def check(status, what):
    if status != 0:
        raise RuntimeError(f"{what}: {hip.hipGetErrorName(status).decode()} ({status})")


def last_error(what):
    # The launchers return nothing: a refused launch shows only here.
    check(hip.hipGetLastError(), what)


def malloc(nbytes):
    p = ctypes.c_void_p()
    check(hip.hipMalloc(ctypes.byref(p), nbytes), "hipMalloc")
    return p.value


def generator_api():
    spec = importlib.util.find_spec("cupy")  # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("cupy (cupy-rocm-7-0) is not installed in this python")
    found = glob.glob(os.path.join(spec.submodule_search_locations[0], "random", "_generator_api*.so"))
    if len(found) != 1:
        raise RuntimeError(f"expected one cupy/random/_generator_api*.so, found {found}")
    lib = ctypes.CDLL(found[0])
    launch = ctypes.c_int, ctypes.c_ssize_t, ctypes.c_ssize_t, ctypes.c_ssize_t, ctypes.c_ssize_t, ctypes.c_ssize_t
    fns = {
        # Itanium-mangled names of the functions in cupy_distributions.cuh
        "init": ("_Z21init_curand_generatorilmll",
                 (ctypes.c_int, ctypes.c_ssize_t, ctypes.c_uint64, ctypes.c_ssize_t, ctypes.c_ssize_t)),
        "raw": ("_Z3rawilllll", launch),
        "uniform": ("_Z14random_uniformilllll", launch),
        "uniform_float": ("_Z20random_uniform_floatilllll", launch),
        "normal": ("_Z15standard_normalilllll", launch),
        "normal_float": ("_Z21standard_normal_floatilllll", launch),
    }
    out = {}
    for key, (symbol, argtypes) in fns.items():
        f = getattr(lib, symbol)
        f.argtypes = argtypes
        f.restype = None
        out[key] = f
    return found[0], out


# --- Philox4x32-10 on the host ---------------------------------------------------------------

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK = 0xFFFF_FFFF


def philox_block(counter, key):
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0 = M0 * c0
        p1 = M1 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & MASK, p1 & MASK, ((p0 >> 32) ^ c3 ^ k1) & MASK, p0 & MASK
        k0, k1 = (k0 + W0) & MASK, (k1 + W1) & MASK
    return c0, c1, c2, c3


def philox_stream(seed, subsequence, count):
    """The first `count` 32-bit outputs of subsequence `subsequence` (offset 0)."""
    key = (seed & MASK, (seed >> 32) & MASK)
    counter = subsequence << 64  # 128-bit counter, word 0 lowest
    out = []
    while len(out) < count:
        words = tuple((counter >> (32 * i)) & MASK for i in range(4))
        out.extend(philox_block(words, key))
        counter = (counter + 1) & ((1 << 128) - 1)
    return out[:count]


def philox_known_answer():
    # Random123's known-answer vectors for philox4x32_10 (kat_vectors).
    cases = [
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((MASK, MASK, MASK, MASK), (MASK, MASK), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
         (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
    ]
    for counter, key, want in cases:
        got = philox_block(counter, key)
        if got != want:
            raise AssertionError(f"host Philox4x32-10 fails its known answer: {[hex(v) for v in got]}")


def f32(x):
    """x rounded to float32 (round to nearest even)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def uniform_from(u):
    """CuPy's float uniform from one 32-bit output: f32(f32(u) * 2^-32 + 2^-32), 1.0 -> 0.0."""
    r = f32(f32(float(u)) * 2.0 ** -32 + 2.0 ** -32)
    return 0.0 if r >= 1.0 else r


# --- statistics ------------------------------------------------------------------------------

def ks_distance(samples, cdf):
    xs = sorted(samples)
    n = len(xs)
    d = 0.0
    for i, x in enumerate(xs):
        f = cdf(x)
        d = max(d, f - i / n, (i + 1) / n - f)
    return d


def normal_cdf(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def uniform_cdf(x):
    return min(max(x, 0.0), 1.0)


def check_distribution(what, xs, mean, var, cdf):
    n = len(xs)
    m = sum(xs) / n
    v = sum((x - m) ** 2 for x in xs) / (n - 1)
    d = ks_distance(xs, cdf)
    # 6 standard errors for the mean; the variance within 5%; KS at p = 0.001 is 1.95 / sqrt(n).
    if abs(m - mean) > 6.0 * math.sqrt(var / n):
        raise AssertionError(f"{what}: mean {m} is too far from {mean} for {n} samples")
    if abs(v - var) > 0.05 * var:
        raise AssertionError(f"{what}: variance {v} is too far from {var}")
    if d > 1.95 / math.sqrt(n):
        raise AssertionError(f"{what}: Kolmogorov-Smirnov distance {d:.5f} > {1.95 / math.sqrt(n):.5f}")
    return f"mean {m:+.4f} var {v:.4f} KS {d:.4f}"


# --- the client ------------------------------------------------------------------------------

class Run:
    def __init__(self, fns, stream):
        self.fns = fns
        self.stream = stream
        self.n = STATES * PER_STATE
        self.state = malloc(STATES * STATE_BYTES)
        self.out = malloc(8 * self.n)

    def init(self, generator, seed):
        check(hip.hipMemset(self.state, 0, STATES * STATE_BYTES), "hipMemset")
        self.fns["init"](generator, self.state, seed, STATES, self.stream)
        last_error(f"init_curand_generator({NAMES[generator]})")

    def generate(self, name, generator, typecode):
        self.fns[name](generator, self.state, STATES, self.out, self.n, self.stream)
        last_error(f"{name}({NAMES[generator]})")
        check(hip.hipStreamSynchronize(self.stream), "hipStreamSynchronize")
        host = array.array(typecode, bytes(array.array(typecode).itemsize * self.n))
        addr, _ = host.buffer_info()
        check(hip.hipMemcpy(addr, self.out, host.itemsize * self.n, DEVICE_TO_HOST), "hipMemcpy")
        return host

    def free(self):
        check(hip.hipFree(self.state), "hipFree")
        check(hip.hipFree(self.out), "hipFree")


def per_state(values, state):
    """Thread `state`'s outputs in order: out[state], out[state + STATES], ..."""
    return [values[state + k * STATES] for k in range(PER_STATE)]


def main():
    philox_known_answer()
    path, fns = generator_api()
    print(f"ok loaded {os.path.relpath(path, os.path.dirname(os.path.dirname(os.path.dirname(path))))}", flush=True)
    stream = ctypes.c_void_p()
    check(hip.hipStreamCreate(ctypes.byref(stream)), "hipStreamCreate")
    run = Run(fns, stream.value)

    # Philox: exact. Raw outputs, then uniforms from the outputs that follow in each
    # subsequence: hipRAND's uniform is (u + 1) / 2^32 in float, in (0, 1], which CuPy maps to
    # [0, 1) by turning 1.0 into 0.0; CuPy's HIP build makes its double uniforms from that
    # float too (cupy_distributions.cu, rk_double under CUPY_USE_HIP).
    run.init(PHILOX, SEED)
    raw = run.generate("raw", PHILOX, "I")
    uniform_float = run.generate("uniform_float", PHILOX, "f")
    uniform = run.generate("uniform", PHILOX, "d")
    for state in range(STATES):
        want = philox_stream(SEED, state, 3 * PER_STATE)
        for what, got, expected in (
            ("raw", per_state(raw, state), want[:PER_STATE]),
            ("uniform_float", per_state(uniform_float, state), [uniform_from(u) for u in want[PER_STATE:2 * PER_STATE]]),
            ("uniform", per_state(uniform, state), [uniform_from(u) for u in want[2 * PER_STATE:]]),
        ):
            if got != expected:
                k = next(k for k in range(PER_STATE) if got[k] != expected[k])
                raise AssertionError(f"Philox {what}, subsequence {state}, output {k}: got {got[k]!r}, "
                                     f"the host's Philox4x32-10 gives {expected[k]!r}")
    print(f"ok Philox4x32-10: {3 * STATES * PER_STATE} outputs of {STATES} subsequences (raw, uniform_float, "
          "uniform) equal the host's exactly", flush=True)

    for generator in (XORWOW, MRG32K3A, PHILOX):
        name = NAMES[generator]
        run.init(generator, SEED)
        raw = run.generate("raw", generator, "I")
        # Distinct subsequences must not repeat each other.
        firsts = {tuple(per_state(raw, s)[:4]) for s in range(STATES)}
        if len(firsts) != STATES:
            raise AssertionError(f"{name}: {STATES - len(firsts)} subsequences start alike")
        stats = check_distribution(f"{name} raw / 2^32", [r / 2.0 ** 32 for r in raw], 0.5, 1 / 12, uniform_cdf)
        print(f"ok {name} raw: {stats}", flush=True)

        # Each generation continues from the states the previous one left.
        for dist, typecode in (("uniform_float", "f"), ("uniform", "d")):
            xs = run.generate(dist, generator, typecode)
            bad = [x for x in xs if not 0.0 <= x < 1.0]
            if bad:
                raise AssertionError(f"{name} {dist}: {len(bad)} values outside [0, 1), e.g. {bad[0]}")
            stats = check_distribution(f"{name} {dist}", xs, 0.5, 1 / 12, uniform_cdf)
            print(f"ok {name} {dist}: {stats}", flush=True)
        for dist, typecode in (("normal_float", "f"), ("normal", "d")):
            xs = run.generate(dist, generator, typecode)
            if not all(math.isfinite(x) for x in xs):
                raise AssertionError(f"{name} {dist}: a value is not finite")
            stats = check_distribution(f"{name} {dist}", xs, 0.0, 1.0, normal_cdf)
            print(f"ok {name} {dist}: {stats}", flush=True)

    run.free()
    check(hip.hipStreamDestroy(stream.value), "hipStreamDestroy")
    print("PASS", flush=True)


if __name__ == "__main__":
    main()
