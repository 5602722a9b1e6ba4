"""AMD's hip-python (ROCm 7.1.1 bindings, from PyPI) as a client of rocload.

Run by tests/python_clients.rs as `rocload run --hip 7 <venv>/bin/python this.py`: hip-python
dlopens the bare libamdhip64.so and libhiprtc.so, which rocload run points at its HIP 7 thin
libraries. Every check compares with something outside the call it checks: the host's own
facts, the values the test passes in (from `rocload agents --json` and Rust's view of the
host), another entry point, or a computation done here on the host. Prints one line per check
and PASS at the end; any failure raises (non-zero exit status).

Expected values come from the environment:
  EXPECT_ARCH      the agent's processor (`rocload agents --json`, after the `--`)
  EXPECT_DEVICES   the number of agents `rocload agents --json` lists
  EXPECT_CUS       the host threads the software agent reports as compute units
  EXPECT_NAME      the software agent's name
"""

import array
import ctypes
import os
import struct

from hip import hip, hiprtc
import hip as hip_package


def check(result):
    """hip-python returns (status, values...): raise on a failure, return the values."""
    status, values = result[0], result[1:]
    if isinstance(status, hip.hipError_t) and status != hip.hipError_t.hipSuccess:
        raise RuntimeError(f"HIP call failed: {status}")
    if isinstance(status, hiprtc.hiprtcResult) and status != hiprtc.hiprtcResult.HIPRTC_SUCCESS:
        raise RuntimeError(f"hiprtc call failed: {status}")
    if len(values) == 1:
        return values[0]
    return values


def expect(what, got, want):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, expected {want!r}")


def ok(what):
    print(f"ok {what}", flush=True)


def attribute(name, device=0):
    return check(hip.hipDeviceGetAttribute(getattr(hip.hipDeviceAttribute_t, name), device))


def c_str(value):
    """A bytes or char-array field as str, up to its first NUL."""
    if isinstance(value, str):
        return value
    return bytes(value).split(b"\0", 1)[0].decode()


def test_versions():
    # hip-python's constants are those of the ROCm 7.1.1 headers it was generated from.
    runtime = check(hip.hipRuntimeGetVersion())
    expect("hipRuntimeGetVersion", runtime, hip_package.HIP_VERSION)
    driver = check(hip.hipDriverGetVersion())
    if driver <= 0:
        raise AssertionError(f"hipDriverGetVersion: {driver}")
    ok(f"versions: runtime {runtime} (hip-python built for {hip_package.HIP_VERSION_NAME}), driver {driver}")


def test_device_properties():
    count = check(hip.hipGetDeviceCount())
    expect("hipGetDeviceCount", count, int(os.environ["EXPECT_DEVICES"]))
    check(hip.hipSetDevice(0))
    expect("hipGetDevice", check(hip.hipGetDevice()), 0)

    # hip-python's hipGetDeviceProperties calls hipGetDevicePropertiesR0600 (HIP 6/7 layout).
    props = hip.hipDeviceProp_t()
    check(hip.hipGetDeviceProperties(props, 0))
    name = c_str(props.name)
    expect("name", name, os.environ["EXPECT_NAME"])
    expect("name vs hipDeviceGetName", c_str(check(hip.hipDeviceGetName(256, 0))), name)
    arch = c_str(props.gcnArchName)
    expect("gcnArchName", arch.split(":")[0], os.environ["EXPECT_ARCH"])
    processor = os.environ["EXPECT_ARCH"]
    # gfx1030 -> major 10, minor 3 (the hex digit before the stepping)
    expect("major", props.major, int(processor[3:-2]))
    expect("minor", props.minor, int(processor[-2], 16))
    total = int(os.environ["EXPECT_MEMORY"])
    expect("totalGlobalMem (ROCLOAD_DEVICE_MEMORY)", props.totalGlobalMem, total)
    expect("hipDeviceTotalMem", check(hip.hipDeviceTotalMem(0)), total)
    cus = int(os.environ["EXPECT_CUS"])
    expect("multiProcessorCount", props.multiProcessorCount, cus)
    expect("attribute MultiprocessorCount", attribute("hipDeviceAttributeMultiprocessorCount"), cus)
    # Fields spread over the 1,472-byte struct, each against its attribute: a layout shift
    # anywhere before a field shows up as a mismatch.
    pairs = [
        ("warpSize", "hipDeviceAttributeWarpSize"),
        ("maxThreadsPerBlock", "hipDeviceAttributeMaxThreadsPerBlock"),
        ("clockRate", "hipDeviceAttributeClockRate"),
        ("memoryBusWidth", "hipDeviceAttributeMemoryBusWidth"),
        ("l2CacheSize", "hipDeviceAttributeL2CacheSize"),
        ("maxThreadsPerMultiProcessor", "hipDeviceAttributeMaxThreadsPerMultiProcessor"),
        ("computeMode", "hipDeviceAttributeComputeMode"),
        ("concurrentKernels", "hipDeviceAttributeConcurrentKernels"),
        ("integrated", "hipDeviceAttributeIntegrated"),
        ("cooperativeLaunch", "hipDeviceAttributeCooperativeLaunch"),
        ("managedMemory", "hipDeviceAttributeManagedMemory"),
        ("maxSharedMemoryPerMultiProcessor", "hipDeviceAttributeMaxSharedMemoryPerMultiprocessor"),
        ("maxBlocksPerMultiProcessor", "hipDeviceAttributeMaxBlocksPerMultiProcessor"),
        ("asyncEngineCount", "hipDeviceAttributeAsyncEngineCount"),
        ("pageableMemoryAccess", "hipDeviceAttributePageableMemoryAccess"),
    ]
    for field, attr in pairs:
        expect(f"{field} vs {attr}", getattr(props, field), attribute(attr))
    expect("warpSize (gfx10 wave32)", props.warpSize, 32)
    expect("maxThreadsDim", list(props.maxThreadsDim)[:3], [attribute(f"hipDeviceAttributeMaxBlockDim{a}") for a in "XYZ"])
    expect("maxGridSize", list(props.maxGridSize)[:3], [attribute(f"hipDeviceAttributeMaxGridDim{a}") for a in "XYZ"])
    ok(f"device: {count} device(s), {name!r} {arch}, {props.multiProcessorCount} CUs, "
       f"{props.totalGlobalMem >> 20} MiB, wave{props.warpSize}, the HIP 7 layout agrees with the attributes")


def test_memory():
    n = 1 << 16
    nbytes = 4 * n
    host = array.array("f", (float(i) * 0.5 - 7.0 for i in range(n)))
    d = check(hip.hipMalloc(nbytes))
    check(hip.hipMemcpy(d, host, nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    back = array.array("f", bytes(nbytes))
    check(hip.hipMemcpy(back, d, nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    expect("hipMemcpy round trip", back == host, True)

    # device to device, then a fill of the middle half
    d2 = check(hip.hipMalloc(nbytes))
    check(hip.hipMemcpy(d2, d, nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToDevice))
    quarter = nbytes // 4
    check(hip.hipMemset(int(d2) + quarter, 0xA5, 2 * quarter))
    raw = bytearray(nbytes)
    check(hip.hipMemcpy(raw, d2, nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    want = bytearray(host.tobytes())
    want[quarter:3 * quarter] = b"\xa5" * (2 * quarter)
    expect("hipMemset of the middle half", raw == want, True)

    attrs = hip.hipPointerAttribute_t()
    check(hip.hipPointerGetAttributes(attrs, d))
    # ROCm 7's numbering (hipMemoryTypeDevice = 2), which HIP 5 numbered 1.
    expect("hipPointerGetAttributes type", attrs.type, hip.hipMemoryType.hipMemoryTypeDevice)
    free, total = check(hip.hipMemGetInfo())
    if not 0 < free <= total:
        raise AssertionError(f"hipMemGetInfo: free {free}, total {total}")
    check(hip.hipFree(d2))
    check(hip.hipFree(d))
    ok(f"memory: {nbytes} bytes round trip, device copy, hipMemset, pointer type {attrs.type.name}")


def test_last_error():
    # From HIP 7.0, hipGetLastError returns the last failure even after successful calls.
    status = hip.hipSetDevice(99)[0]
    expect("hipSetDevice(99)", status, hip.hipError_t.hipErrorInvalidDevice)
    check(hip.hipGetDeviceCount())
    expect("hipGetLastError after a later success", hip.hipGetLastError()[0], hip.hipError_t.hipErrorInvalidDevice)
    expect("hipGetLastError once read", hip.hipGetLastError()[0], hip.hipError_t.hipSuccess)
    ok("hipGetLastError: HIP 7 semantics (the last failure survives a later success, cleared once read)")


SAXPY = rb"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def compile_saxpy(arch):
    prog = check(hiprtc.hiprtcCreateProgram(SAXPY, b"saxpy.hip", 0, [], []))
    options = [b"--offload-arch=" + arch.encode()]
    status = hiprtc.hiprtcCompileProgram(prog, len(options), options)[0]
    if status != hiprtc.hiprtcResult.HIPRTC_SUCCESS:
        size = check(hiprtc.hiprtcGetProgramLogSize(prog))
        log = bytearray(size)
        check(hiprtc.hiprtcGetProgramLog(prog, log))
        raise RuntimeError(f"hiprtcCompileProgram: {status}\n{log.decode(errors='replace')}")
    size = check(hiprtc.hiprtcGetCodeSize(prog))
    code = bytearray(size)
    check(hiprtc.hiprtcGetCode(prog, code))
    check(hiprtc.hiprtcDestroyProgram(prog.createRef()))
    return code


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def close_f32(got, want):
    """Within 2 float32 ulps: the device may fuse a*x+y into one FMA, the host rounds twice."""
    return abs(got - want) <= 2 * 2.0 ** -23 * max(abs(want), 2.0 ** -126)


def test_hiprtc_streams_events():
    props = hip.hipDeviceProp_t()
    check(hip.hipGetDeviceProperties(props, 0))
    arch = c_str(props.gcnArchName)
    code = compile_saxpy(arch)
    expect("code object magic", bytes(code[:4]), b"\x7fELF")
    module = check(hip.hipModuleLoadData(code))
    kernel = check(hip.hipModuleGetFunction(module, b"saxpy"))

    n = 5000  # not a multiple of the block: the guard matters
    a = f32(2.5)
    x = array.array("f", (f32((i % 97) * 0.25 - 3.0) for i in range(n)))
    y = array.array("f", (f32(1.0 / (1 + i % 13)) for i in range(n)))
    nbytes = 4 * n
    stream = check(hip.hipStreamCreate())
    start = check(hip.hipEventCreate())
    stop = check(hip.hipEventCreate())
    dx = check(hip.hipMalloc(nbytes))
    dy = check(hip.hipMalloc(nbytes))
    check(hip.hipMemcpyAsync(dx, x, nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice, stream))
    check(hip.hipMemcpyAsync(dy, y, nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice, stream))
    block = 256
    grid = (n + block - 1) // block
    check(hip.hipEventRecord(start, stream))
    # arguments through the `extra` buffer (hip-python packs them with C alignment)
    check(hip.hipModuleLaunchKernel(kernel, grid, 1, 1, block, 1, 1, 0, stream, None,
                                    (ctypes.c_float(a), dx, dy, ctypes.c_int(n))))
    check(hip.hipEventRecord(stop, stream))
    out = array.array("f", bytes(nbytes))
    check(hip.hipMemcpyAsync(out, dy, nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost, stream))
    check(hip.hipStreamSynchronize(stream))
    expect("hipStreamQuery after synchronize", hip.hipStreamQuery(stream)[0], hip.hipError_t.hipSuccess)
    check(hip.hipEventSynchronize(stop))
    expect("hipEventQuery(stop)", hip.hipEventQuery(stop)[0], hip.hipError_t.hipSuccess)
    ms = check(hip.hipEventElapsedTime(start, stop))
    if not ms >= 0.0:
        raise AssertionError(f"hipEventElapsedTime: {ms}")
    want = [a * xi + yi for xi, yi in zip(x, y)]
    bad = [i for i in range(n) if not close_f32(out[i], want[i])]
    if bad:
        i = bad[0]
        raise AssertionError(f"saxpy: {len(bad)} wrong, first y[{i}] = {out[i]} expected {want[i]}")

    # Again through kernelParams (an array of pointers to each argument), on the null stream,
    # with a memset in between: y = a * x + 0.
    check(hip.hipMemsetAsync(dy, 0, nbytes, stream))
    check(hip.hipStreamSynchronize(stream))
    args = [ctypes.c_float(a), ctypes.c_void_p(int(dx)), ctypes.c_void_p(int(dy)), ctypes.c_int(n)]
    params = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in args])
    check(hip.hipModuleLaunchKernel(kernel, grid, 1, 1, block, 1, 1, 0, None, ctypes.addressof(params), None))
    check(hip.hipDeviceSynchronize())
    check(hip.hipMemcpy(out, dy, nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    bad = [i for i in range(n) if not close_f32(out[i], a * x[i])]
    if bad:
        i = bad[0]
        raise AssertionError(f"saxpy (kernelParams): {len(bad)} wrong, first y[{i}] = {out[i]} expected {a * x[i]}")

    for p in (dx, dy):
        check(hip.hipFree(p))
    check(hip.hipEventDestroy(start))
    check(hip.hipEventDestroy(stop))
    check(hip.hipStreamDestroy(stream))
    check(hip.hipModuleUnload(module))
    ok(f"hiprtc: saxpy compiled for {arch} ({len(code)} bytes), hipModuleLoadData, "
       f"hipModuleLaunchKernel via extra and kernelParams, {n} results checked; stream, events ({ms:.3f} ms)")


def main():
    test_versions()
    test_device_properties()
    test_memory()
    test_last_error()
    test_hiprtc_streams_events()
    print("PASS", flush=True)


if __name__ == "__main__":
    main()
