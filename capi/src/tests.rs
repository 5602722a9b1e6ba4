//! The C ABI called in-process (the functions librocload.so exports): NULL pointers and
//! bad handles give errors and never crash, error state is per thread, error names match the
//! HIP header, and the module API works on committed clang-19 code objects and bundles.
//!
//! All tests share the process-wide runtime (software agent from the environment, gfx1030 by
//! default), as a HIP program would.
// Test code: every unsafe call passes pointers and buffers the test itself owns.
#![allow(clippy::undocumented_unsafe_blocks)]

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::process::Command;
use std::ptr::{null, null_mut};

use super::array::{hipMemset2D, hipMemset2DAsync};
use super::types::*;
use super::*;
use super::{
    device::*, gl_interop::*, launch::*, memory::*, module::*, register::*, rocload_api::*,
    stream::*, symbol::*,
};
use rocload_lib::code_object::CodeObject;

/// `hipError_t` values from Debian's HIP header: (name, value) for every one-line enumerator.
fn header_errors() -> Vec<(String, i32)> {
    let Ok(header) = std::fs::read_to_string("/usr/include/hip/hip_runtime_api.h") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "HIP headers missing but CI is set"
        );
        eprintln!("skipped: /usr/include/hip/hip_runtime_api.h missing (libamdhip64-dev)");
        return Vec::new();
    };
    let start = header
        .find("typedef enum __HIP_NODISCARD hipError_t")
        .expect("hipError_t enum");
    let end = start + header[start..].find("} hipError_t;").unwrap();
    header[start..end]
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.trim().split_once(" = ")?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            Some((name.to_string(), digits.parse().ok()?))
        })
        .collect()
}

fn hip(name: &str) -> i32 {
    header_errors()
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| match name {
            // Without the header (local run), fall back to our constants.
            "hipErrorInvalidValue" => hipErrorInvalidValue,
            "hipErrorInvalidHandle" => hipErrorInvalidHandle,
            "hipErrorInvalidImage" => hipErrorInvalidImage,
            "hipErrorInvalidDeviceFunction" => hipErrorInvalidDeviceFunction,
            "hipErrorInvalidSymbol" => hipErrorInvalidSymbol,
            "hipErrorNotFound" => hipErrorNotFound,
            "hipErrorMissingConfiguration" => hipErrorMissingConfiguration,
            "hipErrorInvalidDevice" => hipErrorInvalidDevice,
            "hipErrorNoDevice" => hipErrorNoDevice,
            other => panic!("{other}: the HIP header is needed"),
        })
}

fn last_message() -> String {
    let mut buf = vec![0 as c_char; 4096];
    let n = unsafe { rocload_last_error_message(buf.as_mut_ptr(), buf.len()) };
    let s = unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .to_string();
    assert_eq!(n, s.len());
    s
}

#[test]
fn error_names_and_strings_match_the_header() {
    for (name, value) in header_errors() {
        let got = unsafe { CStr::from_ptr(hipGetErrorName(value)) }
            .to_str()
            .unwrap()
            .to_string();
        // Aliases share a value (hipErrorOutOfMemory = hipErrorMemoryAllocation = 2): the name
        // returned must be one of the header's names for that value.
        let names: Vec<String> = header_errors()
            .into_iter()
            .filter(|(_, v)| *v == value)
            .map(|(n, _)| n)
            .collect();
        assert!(
            names.contains(&got),
            "{value}: got {got}, header has {names:?} ({name})"
        );
        assert!(!unsafe { CStr::from_ptr(hipGetErrorString(value)) }
            .to_bytes()
            .is_empty());
    }
    assert_eq!(
        unsafe { CStr::from_ptr(hipGetErrorName(123456)) }
            .to_str()
            .unwrap(),
        "hipErrorUnknown"
    );
}

#[test]
fn null_pointers_and_bad_handles_are_errors_not_crashes() {
    unsafe {
        let inv = hip("hipErrorInvalidValue");
        let handle = hip("hipErrorInvalidHandle");
        let mut attr = hipFuncAttributes::default();
        assert_eq!(hipFuncGetAttributes(null_mut(), null()), inv);
        assert_eq!(
            hipFuncGetAttributes(&mut attr, null()),
            hip("hipErrorInvalidDeviceFunction")
        );
        assert_eq!(
            hipFuncGetAttributes(&mut attr, 0x1234 as *const c_void),
            hip("hipErrorInvalidDeviceFunction")
        );
        assert_eq!(hipGetSymbolAddress(null_mut(), null()), inv);
        let mut p: *mut c_void = null_mut();
        assert_eq!(
            hipGetSymbolAddress(&mut p, null()),
            hip("hipErrorInvalidSymbol")
        );
        assert_eq!(
            hipGetSymbolAddress(&mut p, 0x5678 as *const c_void),
            hip("hipErrorInvalidSymbol")
        );
        assert_eq!(hipGetSymbolSize(null_mut(), null()), inv);
        assert_eq!(hipModuleLoadData(null_mut(), null()), inv);
        let mut m: hipModule_t = null_mut();
        assert_eq!(hipModuleLoadData(&mut m, null()), inv);
        assert_eq!(
            hipModuleLoadData(&mut m, 16 as *const c_void),
            hip("hipErrorInvalidImage"),
            "unmapped image"
        );
        let junk = b"this is not a code object, nor a bundle".to_vec();
        assert_eq!(
            hipModuleLoadData(&mut m, junk.as_ptr().cast()),
            hip("hipErrorInvalidImage")
        );
        assert_eq!(hipModuleLoad(&mut m, null()), inv);
        let missing = CString::new("/nonexistent/rocload.co").unwrap();
        assert_eq!(
            hipModuleLoad(&mut m, missing.as_ptr()),
            hipErrorFileNotFound
        );
        let mut f: hipFunction_t = null_mut();
        let name = CString::new("vadd").unwrap();
        assert_eq!(
            hipModuleGetFunction(&mut f, 0x42 as hipModule_t, name.as_ptr()),
            handle
        );
        assert_eq!(hipModuleGetFunction(null_mut(), null_mut(), null()), inv);
        assert_eq!(
            hipModuleGetGlobal(null_mut(), null_mut(), 0x42 as hipModule_t, name.as_ptr()),
            handle
        );
        assert_eq!(hipModuleUnload(0x42 as hipModule_t), handle);
        assert_eq!(hipModuleUnload(null_mut()), handle);
        let mut v = 0;
        assert_eq!(
            hipFuncGetAttribute(&mut v, 0, 0x42 as hipFunction_t),
            handle
        );
        assert_eq!(hipFuncGetAttribute(null_mut(), 0, null_mut()), inv);
        assert_eq!(hipGetDeviceCount(null_mut()), inv);
        assert_eq!(hipGetDeviceProperties(null_mut(), 0), inv);
        assert_eq!(hipGetDevice(null_mut()), inv);
        assert_eq!(
            rocload_device_function(null(), 0, null_mut(), null_mut()),
            inv
        );
        assert_eq!(rocload_kernel_info(null(), 0, null_mut()), inv);
        assert_eq!(rocload_function_info(null_mut(), null_mut()), inv);
        assert_eq!(rocload_stats(null_mut()), inv);
        // Registration entry points return nothing; bad arguments are recorded, not fatal.
        __hipUnregisterFatBinary(null_mut());
        __hipUnregisterFatBinary(0x99 as *mut *mut c_void);
        __hipRegisterFunction(
            0x99 as *mut *mut c_void,
            0x98 as *const c_void,
            null_mut(),
            null(),
            0,
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
        );
        assert_eq!(hipGetLastError(), inv, "NULL names are rejected first");
        __hipRegisterVar(
            0x99 as *mut *mut c_void,
            null_mut(),
            null_mut(),
            null(),
            0,
            4,
            0,
            0,
        );
        __hipRegisterManagedVar(0x99 as *mut c_void, null_mut(), null_mut(), null(), 4, 4);
        assert_eq!(hipGetLastError(), inv);
        assert_eq!(
            rocload_last_selection_error(null_mut(), 0),
            0,
            "no selection failed on this thread"
        );
    }
}

#[test]
fn a_bad_fat_binary_registers_and_fails_at_first_use() {
    unsafe {
        // A wrapper with the wrong magic: registration still returns a handle.
        let wrapper: &'static [u32; 6] = Box::leak(Box::new([0xdead_beef, 1, 0, 0, 0, 0]));
        let h = __hipRegisterFatBinary(wrapper.as_ptr().cast());
        assert!(!h.is_null());
        let null_handle = __hipRegisterFatBinary(null());
        assert!(!null_handle.is_null());
        assert_ne!(h, null_handle);
        let stub: &'static u8 = Box::leak(Box::new(0u8));
        let name = CString::new("k").unwrap();
        __hipRegisterFunction(
            h,
            (stub as *const u8).cast(),
            name.as_ptr() as *mut c_char,
            name.as_ptr(),
            u32::MAX,
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
        );
        assert_eq!(hipGetLastError(), hipSuccess);
        let mut attr = hipFuncAttributes::default();
        assert_eq!(
            hipFuncGetAttributes(&mut attr, (stub as *const u8).cast()),
            hip("hipErrorInvalidImage")
        );
        assert!(last_message().contains("HIPF"), "{}", last_message());
        // hipGetLastError returns, then resets; the state is per thread.
        assert_eq!(
            std::thread::spawn(|| hipPeekAtLastError()).join().unwrap(),
            hipSuccess
        );
        assert_eq!(hipPeekAtLastError(), hip("hipErrorInvalidImage"));
        assert_eq!(hipGetLastError(), hip("hipErrorInvalidImage"));
        assert_eq!(hipGetLastError(), hipSuccess);
        __hipUnregisterFatBinary(h);
        __hipUnregisterFatBinary(null_handle);
        assert_eq!(hipGetLastError(), hipSuccess);
        assert_eq!(
            hipFuncGetAttributes(&mut attr, (stub as *const u8).cast()),
            hip("hipErrorInvalidDeviceFunction")
        );
        // Twice is an error, not a crash.
        __hipUnregisterFatBinary(h);
        assert_eq!(hipGetLastError(), hip("hipErrorInvalidHandle"));
    }
}

#[test]
fn call_configuration_is_a_per_thread_stack() {
    unsafe {
        let (mut g, mut b, mut s, mut st) = (dim3::default(), dim3::default(), 0usize, null_mut());
        assert_eq!(
            __hipPopCallConfiguration(&mut g, &mut b, &mut s, &mut st),
            hip("hipErrorMissingConfiguration")
        );
        assert_eq!(
            __hipPushCallConfiguration(
                dim3 { x: 1, y: 2, z: 3 },
                dim3 { x: 4, y: 5, z: 6 },
                7,
                8 as hipStream_t
            ),
            hipSuccess
        );
        assert_eq!(
            __hipPushCallConfiguration(
                dim3 { x: 9, y: 1, z: 1 },
                dim3 { x: 1, y: 1, z: 1 },
                0,
                null_mut()
            ),
            hipSuccess
        );
        assert_eq!(
            __hipPopCallConfiguration(&mut g, &mut b, &mut s, &mut st),
            hipSuccess
        );
        assert_eq!(g.x, 9);
        assert_eq!(
            __hipPopCallConfiguration(&mut g, &mut b, &mut s, &mut st),
            hipSuccess
        );
        assert_eq!(
            (g, b, s, st as usize),
            (dim3 { x: 1, y: 2, z: 3 }, dim3 { x: 4, y: 5, z: 6 }, 7, 8)
        );
        assert_eq!(
            __hipPopCallConfiguration(null_mut(), null_mut(), null_mut(), null_mut()),
            hip("hipErrorMissingConfiguration")
        );
    }
}

#[test]
fn module_api_on_a_code_object_and_a_compressed_bundle() {
    unsafe {
        let co_bytes = fixture("codeobj/kernels_static.co");
        let mut m: hipModule_t = null_mut();
        assert_eq!(
            hipModuleLoadData(&mut m, co_bytes.as_ptr().cast()),
            hipSuccess,
            "{}",
            last_message()
        );
        let co = CodeObject::parse(&co_bytes).unwrap();
        for k in co.kernels() {
            let md = co.kernel_metadata(k).unwrap();
            let name = CString::new(k.name).unwrap();
            let mut f: hipFunction_t = null_mut();
            assert_eq!(hipModuleGetFunction(&mut f, m, name.as_ptr()), hipSuccess);
            let mut again: hipFunction_t = null_mut();
            assert_eq!(
                hipModuleGetFunction(&mut again, m, name.as_ptr()),
                hipSuccess
            );
            assert_eq!(f, again, "one handle per kernel");
            let mut info = rocload_kernel_info_t::default();
            assert_eq!(rocload_function_info(f, &mut info), hipSuccess);
            assert_eq!(info.kernarg_segment_size, md.kernarg_segment_size);
            assert_eq!(info.group_segment_fixed_size, md.group_segment_fixed_size);
            let mut v = 0;
            assert_eq!(
                hipFuncGetAttribute(&mut v, func_attribute::SHARED_SIZE_BYTES, f),
                hipSuccess
            );
            assert_eq!(v as u64, md.group_segment_fixed_size);
            assert_eq!(
                hipFuncGetAttribute(&mut v, func_attribute::MAX_THREADS_PER_BLOCK, f),
                hipSuccess
            );
            assert_eq!(Some(v as u64), md.max_flat_workgroup_size);
            assert_eq!(
                hipFuncGetAttribute(&mut v, 77, f),
                hip("hipErrorInvalidValue")
            );
            // Neither kernelParams nor extra for a kernel that takes arguments: refused.
            if md
                .args
                .iter()
                .any(|a| !a.value_kind.as_str().starts_with("hidden_"))
            {
                assert_eq!(
                    hipModuleLaunchKernel(
                        f,
                        1,
                        1,
                        1,
                        1,
                        1,
                        1,
                        0,
                        null_mut(),
                        null_mut(),
                        null_mut()
                    ),
                    hipErrorInvalidValue
                );
            }
        }
        let var = co
            .variables()
            .iter()
            .find(|v| v.size > 0)
            .expect("a variable");
        let name = CString::new(var.name).unwrap();
        let (mut dptr, mut size): (hipDeviceptr_t, usize) = (null_mut(), 0);
        assert_eq!(
            hipModuleGetGlobal(&mut dptr, &mut size, m, name.as_ptr()),
            hipSuccess
        );
        assert_eq!(size as u64, var.size);
        assert!(!dptr.is_null());
        let missing = CString::new("no_such_symbol").unwrap();
        assert_eq!(
            hipModuleGetGlobal(&mut dptr, &mut size, m, missing.as_ptr()),
            hip("hipErrorNotFound")
        );
        let mut f: hipFunction_t = null_mut();
        assert_eq!(
            hipModuleGetFunction(&mut f, m, missing.as_ptr()),
            hip("hipErrorNotFound")
        );
        let first = CString::new(co.kernels()[0].name).unwrap();
        assert_eq!(hipModuleGetFunction(&mut f, m, first.as_ptr()), hipSuccess);
        assert_eq!(hipModuleUnload(m), hipSuccess);
        // Unloading invalidates the module and its function handles.
        assert_eq!(hipModuleUnload(m), hip("hipErrorInvalidHandle"));
        let mut info = rocload_kernel_info_t::default();
        assert_eq!(
            rocload_function_info(f, &mut info),
            hip("hipErrorInvalidHandle")
        );

        // A compressed device bundle: the gfx1030 entry is chosen (software agent default).
        let ccob = fixture("hip/vadd.device.ccob");
        assert_eq!(
            hipModuleLoadData(&mut m, ccob.as_ptr().cast()),
            hipSuccess,
            "{}",
            last_message()
        );
        let vadd = CString::new("vadd").unwrap();
        assert_eq!(hipModuleGetFunction(&mut f, m, vadd.as_ptr()), hipSuccess);
        assert_eq!(hipModuleUnload(m), hipSuccess);
    }
}

#[test]
fn devices_are_the_runtime_agents() {
    unsafe {
        let mut n = 0;
        assert_eq!(hipGetDeviceCount(&mut n), hipSuccess);
        assert_eq!(
            n,
            rocload_lib::runtime::Runtime::global().agents().len() as i32
        );
        let mut prop = hipDeviceProp_t::default();
        assert_eq!(hipGetDeviceProperties(&mut prop, 0), hipSuccess);
        let arch = CStr::from_ptr(prop.gcnArchName.as_ptr()).to_str().unwrap();
        assert_eq!(
            arch,
            rocload_lib::runtime::Runtime::global().agents()[0]
                .isa()
                .target_id()
                .to_string()
        );
        assert_eq!(
            hipGetDeviceProperties(&mut prop, n),
            hip("hipErrorInvalidDevice")
        );
        assert_eq!(hipSetDevice(n), hip("hipErrorInvalidDevice"));
        assert_eq!(hipSetDevice(0), hipSuccess);
        let mut d = -1;
        assert_eq!(hipGetDevice(&mut d), hipSuccess);
        assert_eq!(d, 0);
    }
}

/// `hipSetValidDevices` checks its list before keeping it, and never copies more entries than
/// the node has devices, whatever `len` the caller passes.
#[test]
fn valid_devices_are_checked_and_bounded_by_the_node() {
    unsafe {
        let mut n = 0;
        assert_eq!(hipGetDeviceCount(&mut n), hipSuccess);
        let mut list = [0 as c_int; 1];
        // A length past the node's device count is refused before the array is read (reading
        // `i32::MAX` entries from a one-entry array would run off it).
        assert_eq!(
            hipSetValidDevices(list.as_mut_ptr(), i32::MAX),
            hip("hipErrorInvalidValue")
        );
        assert_eq!(
            hipSetValidDevices(list.as_mut_ptr(), -1),
            hip("hipErrorInvalidValue")
        );
        assert_eq!(
            hipSetValidDevices(null_mut(), 1),
            hip("hipErrorInvalidValue")
        );
        list[0] = n;
        assert_eq!(
            hipSetValidDevices(list.as_mut_ptr(), 1),
            hip("hipErrorInvalidDevice")
        );
        list[0] = 0;
        assert_eq!(hipSetValidDevices(list.as_mut_ptr(), 1), hipSuccess);
        assert_eq!(super::device::default_device(), 0);
        assert_eq!(hipSetValidDevices(null_mut(), 0), hipSuccess);
    }
}

/// `hipDeviceAttribute_t` values from Debian's HIP header: (name, value) of every enumerator
/// but the range markers (`...Begin`, `...End`). Empty without the header.
fn header_device_attributes() -> Vec<(String, i32)> {
    let Ok(header) = std::fs::read_to_string("/usr/include/hip/hip_runtime_api.h") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "HIP headers missing but CI is set"
        );
        eprintln!("skipped: /usr/include/hip/hip_runtime_api.h missing (libamdhip64-dev)");
        return Vec::new();
    };
    let start = header
        .find("typedef enum hipDeviceAttribute_t {")
        .expect("hipDeviceAttribute_t enum");
    let end = start + header[start..].find("} hipDeviceAttribute_t;").unwrap();
    let body = &header[start..end];
    let mut seen: Vec<(String, i32)> = Vec::new();
    let mut next = 0;
    for line in body.lines().skip(1) {
        let code = line.split("//").next().unwrap_or("").trim();
        let Some(entry) = code
            .strip_suffix(',')
            .or(Some(code))
            .filter(|e| !e.is_empty())
        else {
            continue;
        };
        let (name, value) = match entry.split_once('=') {
            Some((n, v)) => {
                let v = v.trim();
                let value = v.parse().unwrap_or_else(|_| {
                    seen.iter()
                        .find(|(n, _)| n == v)
                        .map(|(_, x)| *x)
                        .unwrap_or_else(|| panic!("enumerator value {v}"))
                });
                (n.trim().to_owned(), value)
            }
            None => (entry.to_owned(), next),
        };
        next = value + 1;
        seen.push((name, value));
    }
    seen.retain(|(n, _)| !n.ends_with("Begin") && !n.ends_with("End"));
    seen
}

/// Every attribute HIP 5.2's header defines has a value, read from the properties the
/// attribute is named after; the four that are not an `int` (name, UUID, LUID, gcnArch name)
/// are `hipErrorInvalidValue`, and the HDP register addresses are written as pointers.
#[test]
fn every_device_attribute_of_the_header_has_a_value() {
    let attributes = header_device_attributes();
    if attributes.is_empty() {
        return;
    }
    assert!(attributes.len() > 100, "{} attributes", attributes.len());
    let mut p = hipDeviceProp_t::default();
    unsafe {
        assert_eq!(hipGetDeviceProperties(&mut p, 0), hipSuccess);
        for (name, value) in &attributes {
            let not_int = [
                "hipDeviceAttributeName",
                "hipDeviceAttributeUuid",
                "hipDeviceAttributeLuid",
                "hipDeviceAttributeGcnArchName",
            ];
            if name.ends_with("FlushCntl") {
                let mut slot: *mut u32 = 8 as *mut u32;
                assert_eq!(
                    hipDeviceGetAttribute((&raw mut slot).cast(), *value, 0),
                    hipSuccess,
                    "{name}"
                );
                assert!(slot.is_null(), "{name}: no HDP register here");
                continue;
            }
            let mut v = -7;
            let e = hipDeviceGetAttribute(&mut v, *value, 0);
            if not_int.contains(&name.as_str()) {
                assert_eq!(e, hipErrorInvalidValue, "{name}");
            } else {
                assert_eq!(e, hipSuccess, "{name} ({value}): {}", last_message());
            }
        }
        let attr = |name: &str| {
            let (_, value) = attributes.iter().find(|(n, _)| n == name).unwrap();
            let mut v = -7;
            assert_eq!(hipDeviceGetAttribute(&mut v, *value, 0), hipSuccess);
            v
        };
        // Attributes and the properties they are named after agree (textures included).
        assert_eq!(attr("hipDeviceAttributeMaxTexture1DWidth"), p.maxTexture1D);
        assert_eq!(
            attr("hipDeviceAttributeMaxTexture2DWidth"),
            p.maxTexture2D[0]
        );
        assert_eq!(
            attr("hipDeviceAttributeMaxTexture2DHeight"),
            p.maxTexture2D[1]
        );
        assert_eq!(
            attr("hipDeviceAttributeMaxTexture3DDepth"),
            p.maxTexture3D[2]
        );
        assert_eq!(
            attr("hipDeviceAttributeMaxTexture1DLinear"),
            p.maxTexture1DLinear
        );
        assert_eq!(attr("hipDeviceAttributeMaxThreadsDim"), p.maxThreadsDim[0]);
        assert_eq!(attr("hipDeviceAttributeGcnArch"), p.gcnArch);
        assert_eq!(attr("hipDeviceAttributeArch") as u32, p.arch);
        assert_eq!(attr("hipDeviceAttributeEccEnabled"), p.ECCEnabled);
        // Outside the enumeration: refused.
        let mut v = 0;
        assert_eq!(hipDeviceGetAttribute(&mut v, 9999, 0), hipErrorInvalidValue);
        assert_eq!(hipDeviceGetAttribute(&mut v, 777, 0), hipErrorInvalidValue);
    }
}

/// `tests/fixtures/<rel>` of the repository.
fn fixture(rel: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn hip_struct_layouts_match_the_headers() {
    let Some(clang) = llvm_tool("clang++") else {
        return;
    };
    use std::mem::{offset_of, size_of};
    let probe = r#"
#include <hip/hip_runtime_api.h>
#include <cstdio>
#include <cstddef>
#define P(f) printf("prop." #f " %zu\n", offsetof(hipDeviceProp_t, f));
#define F(f) printf("attr." #f " %zu\n", offsetof(hipFuncAttributes, f));
int main() {
  printf("prop.size %zu\nattr.size %zu\ndim3.size %zu\n", sizeof(hipDeviceProp_t), sizeof(hipFuncAttributes), sizeof(dim3));
  P(name) P(totalGlobalMem) P(warpSize) P(maxThreadsPerBlock) P(maxGridSize) P(major) P(minor) P(arch)
  P(gcnArch) P(gcnArchName) P(integrated) P(hdpMemFlushCntl) P(memPitch) P(pageableMemoryAccessUsesHostPageTables)
  F(binaryVersion) F(constSizeBytes) F(localSizeBytes) F(maxThreadsPerBlock) F(numRegs) F(ptxVersion) F(sharedSizeBytes)
}
"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("probe.cpp"), probe).unwrap();
    let status = Command::new(&clang)
        .args(["-D__HIP_PLATFORM_AMD__", "probe.cpp", "-o", "probe"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let out = String::from_utf8(
        Command::new(dir.path().join("probe"))
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let c: HashMap<&str, usize> = out
        .lines()
        .map(|l| l.split_once(' ').unwrap())
        .map(|(k, v)| (k, v.parse().unwrap()))
        .collect();
    let rust: Vec<(&str, usize)> = vec![
        ("prop.size", size_of::<hipDeviceProp_t>()),
        ("attr.size", size_of::<hipFuncAttributes>()),
        ("dim3.size", size_of::<dim3>()),
        ("prop.name", offset_of!(hipDeviceProp_t, name)),
        (
            "prop.totalGlobalMem",
            offset_of!(hipDeviceProp_t, totalGlobalMem),
        ),
        ("prop.warpSize", offset_of!(hipDeviceProp_t, warpSize)),
        (
            "prop.maxThreadsPerBlock",
            offset_of!(hipDeviceProp_t, maxThreadsPerBlock),
        ),
        ("prop.maxGridSize", offset_of!(hipDeviceProp_t, maxGridSize)),
        ("prop.major", offset_of!(hipDeviceProp_t, major)),
        ("prop.minor", offset_of!(hipDeviceProp_t, minor)),
        ("prop.arch", offset_of!(hipDeviceProp_t, arch)),
        ("prop.gcnArch", offset_of!(hipDeviceProp_t, gcnArch)),
        ("prop.gcnArchName", offset_of!(hipDeviceProp_t, gcnArchName)),
        ("prop.integrated", offset_of!(hipDeviceProp_t, integrated)),
        (
            "prop.hdpMemFlushCntl",
            offset_of!(hipDeviceProp_t, hdpMemFlushCntl),
        ),
        ("prop.memPitch", offset_of!(hipDeviceProp_t, memPitch)),
        (
            "prop.pageableMemoryAccessUsesHostPageTables",
            offset_of!(hipDeviceProp_t, pageableMemoryAccessUsesHostPageTables),
        ),
        (
            "attr.binaryVersion",
            offset_of!(hipFuncAttributes, binaryVersion),
        ),
        (
            "attr.constSizeBytes",
            offset_of!(hipFuncAttributes, constSizeBytes),
        ),
        (
            "attr.localSizeBytes",
            offset_of!(hipFuncAttributes, localSizeBytes),
        ),
        (
            "attr.maxThreadsPerBlock",
            offset_of!(hipFuncAttributes, maxThreadsPerBlock),
        ),
        ("attr.numRegs", offset_of!(hipFuncAttributes, numRegs)),
        ("attr.ptxVersion", offset_of!(hipFuncAttributes, ptxVersion)),
        (
            "attr.sharedSizeBytes",
            offset_of!(hipFuncAttributes, sharedSizeBytes),
        ),
    ];
    for (key, value) in rust {
        assert_eq!(Some(&value), c.get(key), "{key}");
    }
}

/// An LLVM 19 tool, or `None` (printing why) when it is missing outside CI; under CI a
/// missing tool fails the test.
fn llvm_tool(name: &str) -> Option<std::path::PathBuf> {
    let path = std::path::Path::new("/usr/lib/llvm-19/bin").join(name);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{name} is missing but CI is set: run scripts/setup.sh"
    );
    eprintln!(
        "skipped: {} not installed (scripts/setup.sh installs it)",
        path.display()
    );
    None
}

/// The module API launches a real kernel three ways: `kernelParams`, the packed `extra` buffer
/// (arguments at their metadata offsets) and the C++-mangled `hipExtModuleLaunchKernel` (grid
/// in work-items, events around it, and a last partial work-group); every result is compared
/// with the host's sum.
#[test]
fn module_launches_with_params_extra_and_the_ext_form() {
    unsafe {
        let bytes = fixture("hip/vadd.device.ccob");
        let mut m: hipModule_t = null_mut();
        assert_eq!(
            hipModuleLoadData(&mut m, bytes.as_ptr().cast()),
            hipSuccess,
            "{}",
            last_message()
        );
        let mut f: hipFunction_t = null_mut();
        assert_eq!(
            hipModuleGetFunction(&mut f, m, c"vadd".as_ptr()),
            hipSuccess
        );
        const N: usize = 100;
        let a: Vec<f32> = (0..N).map(|i| i as f32 * 1.5).collect();
        let b: Vec<f32> = (0..N).map(|i| 7.0 - i as f32).collect();
        let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        let (mut da, mut db, mut dc): (*mut c_void, *mut c_void, *mut c_void) =
            (null_mut(), null_mut(), null_mut());
        for p in [&mut da, &mut db, &mut dc] {
            assert_eq!(hipMalloc(p, N * 4), hipSuccess);
        }
        assert_eq!(hipMemcpy(da, a.as_ptr().cast(), N * 4, 1), hipSuccess);
        assert_eq!(hipMemcpy(db, b.as_ptr().cast(), N * 4, 1), hipSuccess);
        let n = N as i32;
        let out = dc;
        let check = move |how: &str| {
            let mut c = vec![0f32; N];
            assert_eq!(
                hipDeviceSynchronize(),
                hipSuccess,
                "{how}: {}",
                last_message()
            );
            assert_eq!(hipMemcpy(c.as_mut_ptr().cast(), out, N * 4, 2), hipSuccess);
            assert_eq!(c, expected, "{how}");
            assert_eq!(hipMemset(out, 0, N * 4), hipSuccess);
        };
        // kernelParams: one pointer per argument.
        let mut params: [*mut c_void; 4] = [
            (&mut da as *mut *mut c_void).cast(),
            (&mut db as *mut *mut c_void).cast(),
            (&mut dc as *mut *mut c_void).cast(),
            (&n as *const i32).cast_mut().cast(),
        ];
        let launched = hipModuleLaunchKernel(
            f,
            4,
            1,
            1,
            32,
            1,
            1,
            0,
            null_mut(),
            params.as_mut_ptr(),
            null_mut(),
        );
        assert_eq!(launched, hipSuccess, "{}", last_message());
        check("kernelParams");
        // extra: the arguments packed at their offsets (0, 8, 16, 24).
        let mut packed = [0u8; 28];
        packed[0..8].copy_from_slice(&(da as u64).to_le_bytes());
        packed[8..16].copy_from_slice(&(db as u64).to_le_bytes());
        packed[16..24].copy_from_slice(&(dc as u64).to_le_bytes());
        packed[24..28].copy_from_slice(&n.to_le_bytes());
        let mut size = packed.len();
        let mut extra: [*mut c_void; 5] = [
            std::ptr::without_provenance_mut(1),
            packed.as_mut_ptr().cast(),
            std::ptr::without_provenance_mut(2),
            (&mut size as *mut usize).cast(),
            std::ptr::without_provenance_mut(3),
        ];
        let launched = hipModuleLaunchKernel(
            f,
            4,
            1,
            1,
            32,
            1,
            1,
            0,
            null_mut(),
            null_mut(),
            extra.as_mut_ptr(),
        );
        assert_eq!(launched, hipSuccess, "{}", last_message());
        check("extra");
        // Both forms at once are refused; an unterminated extra array too.
        assert_eq!(
            hipModuleLaunchKernel(
                f,
                4,
                1,
                1,
                32,
                1,
                1,
                0,
                null_mut(),
                params.as_mut_ptr(),
                extra.as_mut_ptr()
            ),
            hipErrorInvalidValue
        );
        let mut bad: [*mut c_void; 2] = [std::ptr::without_provenance_mut(9), null_mut()];
        assert_eq!(
            hipModuleLaunchKernel(
                f,
                4,
                1,
                1,
                32,
                1,
                1,
                0,
                null_mut(),
                null_mut(),
                bad.as_mut_ptr()
            ),
            hipErrorInvalidValue
        );
        // hipExtModuleLaunchKernel: 128 work-items in groups of 32, timed by two events.
        let (mut start, mut stop): (hipEvent_t, hipEvent_t) = (null_mut(), null_mut());
        assert_eq!(hipEventCreate(&mut start), hipSuccess);
        assert_eq!(hipEventCreate(&mut stop), hipSuccess);
        let launched = hipExtModuleLaunchKernel(
            f,
            128,
            1,
            1,
            32,
            1,
            1,
            0,
            null_mut(),
            params.as_mut_ptr(),
            null_mut(),
            start,
            stop,
            0,
        );
        assert_eq!(launched, hipSuccess, "{}", last_message());
        check("hipExtModuleLaunchKernel");
        let mut ms = -1.0f32;
        assert_eq!(hipEventElapsedTime(&mut ms, start, stop), hipSuccess);
        assert!(ms >= 0.0);
        // A global size that is not whole work-groups: 90 work-items are 2 groups of 32 and a
        // partial one of 26; the kernel (guarded by n = 100) must write exactly c[0..90].
        let launched = hipExtModuleLaunchKernel(
            f,
            90,
            1,
            1,
            32,
            1,
            1,
            0,
            null_mut(),
            params.as_mut_ptr(),
            null_mut(),
            null_mut(),
            null_mut(),
            0,
        );
        assert_eq!(launched, hipSuccess, "{}", last_message());
        assert_eq!(hipDeviceSynchronize(), hipSuccess, "{}", last_message());
        let mut c = vec![-1f32; N];
        assert_eq!(hipMemcpy(c.as_mut_ptr().cast(), dc, N * 4, 2), hipSuccess);
        let want: Vec<f32> = (0..N)
            .map(|i| if i < 90 { a[i] + b[i] } else { 0.0 })
            .collect();
        assert_eq!(c, want, "partial work-group");
        // An empty local size is refused.
        assert_eq!(
            hipExtModuleLaunchKernel(
                f,
                90,
                1,
                1,
                0,
                1,
                1,
                0,
                null_mut(),
                params.as_mut_ptr(),
                null_mut(),
                null_mut(),
                null_mut(),
                0
            ),
            hipErrorInvalidConfiguration
        );
        for p in [da, db, dc] {
            assert_eq!(hipFree(p), hipSuccess);
        }
        assert_eq!(hipModuleUnload(m), hipSuccess);
    }
}

/// `target/<profile>/libhsa_soft.so`, built by `cargo build --workspace` beside this test.
fn software_hsa_library() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.parent()?.parent()?.join("libhsa_soft.so");
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} missing but CI is set (cargo build --workspace builds it)",
        path.display()
    );
    eprintln!(
        "skipped: {} missing (cargo build --workspace)",
        path.display()
    );
    None
}

/// Every API that reports a device fact answers from the same properties: HIP's properties
/// struct, its attributes, hipDeviceTotalMem and hipMemGetInfo, the runtime's Rust view, and
/// the software HSA library's agent and pool queries for the same kind of agent.
#[test]
fn every_api_reports_the_same_device_facts() {
    use hsa_sys::*;
    let mut p = hipDeviceProp_t::default();
    let attr = |a: c_int| {
        let mut v = -1;
        assert_eq!(
            unsafe { hipDeviceGetAttribute(&mut v, a, 0) },
            hipSuccess,
            "attribute {a}"
        );
        v
    };
    unsafe {
        assert_eq!(hipSetDevice(0), hipSuccess);
        assert_eq!(hipGetDeviceProperties(&mut p, 0), hipSuccess);
    }
    let props = rocload_lib::runtime::Runtime::global()
        .device(0)
        .unwrap()
        .device()
        .properties()
        .clone();
    let name = unsafe { CStr::from_ptr(p.name.as_ptr()) }
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(name, props.name);
    assert_eq!(p.totalGlobalMem as u64, props.total_memory);
    assert_eq!(p.clockRate as u32, props.clock_khz);
    assert_eq!(p.l2CacheSize as u32, props.l2_cache());
    assert_eq!(p.multiProcessorCount as u32, props.compute_units);
    assert_eq!(p.maxSharedMemoryPerMultiProcessor as u32, props.lds_per_cu);
    // hipDeviceAttribute_t of HIP 5.2.3: clock, L2, multiprocessors, total memory (clamped to
    // an int), memory clock and bus width.
    assert_eq!(attr(5), p.clockRate);
    assert_eq!(attr(19), p.l2CacheSize);
    assert_eq!(attr(63), p.multiProcessorCount);
    assert_eq!(
        attr(84),
        c_int::try_from(p.totalGlobalMem).unwrap_or(c_int::MAX)
    );
    assert_eq!(attr(60), p.memoryClockRate);
    assert_eq!(attr(59), p.memoryBusWidth);
    let mut total = 0usize;
    let (mut free, mut mem_total) = (0usize, 0usize);
    unsafe {
        assert_eq!(hipDeviceTotalMem(&mut total, 0), hipSuccess);
        assert_eq!(hipMemGetInfo(&mut free, &mut mem_total), hipSuccess);
    }
    assert_eq!(total, p.totalGlobalMem);
    assert_eq!(mem_total, p.totalGlobalMem);
    assert!(free <= mem_total);

    // The software HSA library over the same kind of agent.
    if rocload_lib::runtime::Runtime::global().agents()[0].backend()
        != rocload_lib::loader::BackendKind::Soft
    {
        return;
    }
    let Some(path) = software_hsa_library() else {
        return;
    };
    let lib = std::sync::Arc::new(HsaLibrary::load_from(path).unwrap());
    let hsa = Hsa::init(lib.clone()).unwrap();
    let gpu = hsa
        .agents()
        .unwrap()
        .into_iter()
        .find(|a| a.device_type == DeviceType::Gpu)
        .expect("a GPU agent");
    let info =
        |attribute| unsafe { result::agent_get_info::<u32>(&lib, gpu.handle, attribute) }.unwrap();
    assert_eq!(
        info(HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT),
        props.compute_units
    );
    assert_eq!(
        info(HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY),
        props.clock_khz / 1000
    );
    assert_eq!(
        info(HSA_AMD_AGENT_INFO_MEMORY_WIDTH),
        props.memory_bus_width
    );
    let caches: [u8; 16] =
        unsafe { result::agent_get_info(&lib, gpu.handle, HSA_AGENT_INFO_CACHE_SIZE) }.unwrap();
    assert_eq!(
        u32::from_le_bytes(caches[4..8].try_into().unwrap()),
        props.l2_cache()
    );
    let product: [u8; 64] =
        unsafe { result::agent_get_info(&lib, gpu.handle, HSA_AMD_AGENT_INFO_PRODUCT_NAME) }
            .unwrap();
    let end = product.iter().position(|&b| b == 0).unwrap();
    assert_eq!(std::str::from_utf8(&product[..end]).unwrap(), props.name);
    let pools = unsafe { result::agent_memory_pools(&lib, gpu.handle) }.unwrap();
    let size = pools
        .iter()
        .find(|&&pool| {
            unsafe { result::memory_pool_segment(&lib, pool) }.unwrap() == HSA_AMD_SEGMENT_GLOBAL
        })
        .map(|&pool| unsafe {
            result::memory_pool_get_info::<usize>(&lib, pool, HSA_AMD_MEMORY_POOL_INFO_SIZE)
        })
        .expect("a global pool")
        .unwrap();
    assert_eq!(size as u64, props.total_memory);
}

/// The one mapping of ROCr's statuses to HIP codes: queue failures are launch errors, a
/// memory violation an illegal address, unknown statuses hipErrorUnknown.
#[test]
fn hsa_statuses_map_to_hip_codes() {
    use hsa_sys::*;
    assert_eq!(hip_error_for_status(HSA_STATUS_SUCCESS), hipSuccess);
    assert_eq!(
        hip_error_for_status(HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION),
        hipErrorIllegalAddress
    );
    assert_eq!(
        hip_error_for_status(HSA_STATUS_ERROR_EXCEPTION),
        hipErrorLaunchFailure
    );
    assert_eq!(
        hip_error_for_status(HSA_STATUS_ERROR_INVALID_ALLOCATION),
        hipErrorOutOfMemory
    );
    assert_eq!(
        hip_error_for_status(HSA_STATUS_ERROR_INVALID_ISA_NAME),
        hipErrorNoBinaryForGpu
    );
    assert_eq!(hip_error_for_status(0x7777), hipErrorUnknown);
}

/// Every typed runtime error maps to the code HIP gives for it: the argument errors that were
/// one `InvalidValue` before are still `hipErrorInvalidValue`, launch shapes
/// `hipErrorInvalidConfiguration`.
#[test]
fn runtime_errors_map_to_hip_codes() {
    use rocload_lib::device::memory::{Allocation, MemoryKind};
    use rocload_lib::device::KernargError;
    use rocload_lib::runtime::LaunchConfigError;
    let invalid_value = [
        RuntimeError::NullPointer {
            what: "host memory",
        },
        RuntimeError::ZeroSize {
            what: "host memory",
        },
        RuntimeError::BadAlignment {
            what: "v".into(),
            alignment: 3,
        },
        RuntimeError::TooLarge {
            what: "v".into(),
            size: u64::MAX,
            limit: 1,
        },
        RuntimeError::HostOutOfMemory {
            what: "v".into(),
            size: 1,
        },
        RuntimeError::LengthMismatch { host: 1, buffer: 2 },
        RuntimeError::PitchTooSmall {
            side: "source",
            pitch: 1,
            width: 2,
        },
        RuntimeError::ExtentOverflow {
            pitch: u64::MAX,
            width: 1,
            height: 3,
        },
        RuntimeError::AddressWraps {
            address: u64::MAX,
            size: 2,
        },
        RuntimeError::StreamDeviceGone { stream: 1 },
        RuntimeError::HostMemory {
            what: "copy source",
            error: rocload_lib::device::host_memory::HostRangeError::Unmapped {
                address: 0x1000,
                len: 8,
                at: 0x1000,
            },
        },
        RuntimeError::NotDeviceMemory {
            what: "fill destination",
            address: 0x1000,
            detail: None,
        },
        RuntimeError::EventWithoutTiming,
        RuntimeError::EventNotRecorded,
        RuntimeError::from(KernargError::Count {
            kernel: "k".into(),
            expected: 1,
            given: 0,
        }),
        RuntimeError::Device {
            device: 0,
            what: "freeing".into(),
            error: Box::new(DeviceError::AlreadyFreed {
                address: 0x1000,
                allocation: Allocation {
                    id: 1,
                    base: 0x1000,
                    size: 16,
                    kind: MemoryKind::Device,
                    writable: true,
                    segments: None,
                    host: None,
                },
            }),
        },
    ];
    for e in &invalid_value {
        assert_eq!(code_of(e), hipErrorInvalidValue, "{e}");
    }
    let e = RuntimeError::InvalidConfiguration(LaunchConfigError::ZeroDimension {
        what: "block",
        sizes: [0, 1, 1],
        dimension: 0,
    });
    assert_eq!(code_of(&e), hipErrorInvalidConfiguration);
    let e = RuntimeError::WrongDevice {
        kernel: "k".into(),
        kernel_device: 0,
        stream_device: 0,
    };
    assert_eq!(code_of(&e), hipErrorInvalidDevice);
}

/// `hipEventElapsedTime` on an event never recorded, or created without timing, is
/// `hipErrorInvalidHandle`, as in HIP, even when the other event is recorded and not reached
/// yet (which alone would be `hipErrorNotReady`).
#[test]
fn elapsed_time_of_an_unrecorded_or_untimed_event_is_an_invalid_handle() {
    use std::sync::atomic::{AtomicBool, Ordering};
    static RELEASE: AtomicBool = AtomicBool::new(false);
    unsafe extern "C" fn hold(_: *mut c_void) {
        let start = std::time::Instant::now();
        while !RELEASE.load(Ordering::Acquire) && start.elapsed().as_secs() < 60 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    unsafe {
        // A start event recorded behind host work that waits for the test: pending.
        let mut stream: hipStream_t = null_mut();
        assert_eq!(hipStreamCreate(&mut stream), hipSuccess);
        let (mut pending, mut never): (hipEvent_t, hipEvent_t) = (null_mut(), null_mut());
        assert_eq!(hipEventCreate(&mut pending), hipSuccess);
        assert_eq!(hipEventCreate(&mut never), hipSuccess);
        assert_eq!(
            hipLaunchHostFunc(stream, Some(hold), null_mut()),
            hipSuccess
        );
        assert_eq!(hipEventRecord(pending, stream), hipSuccess);
        let mut ms = 0f32;
        assert_eq!(
            hipEventElapsedTime(&mut ms, pending, pending),
            hipErrorNotReady
        );
        assert_eq!(
            hipEventElapsedTime(&mut ms, pending, never),
            hipErrorInvalidHandle
        );
        assert_eq!(
            hipEventElapsedTime(&mut ms, never, pending),
            hipErrorInvalidHandle
        );
        RELEASE.store(true, Ordering::Release);
        assert_eq!(hipStreamSynchronize(stream), hipSuccess);
        assert_eq!(hipEventElapsedTime(&mut ms, pending, pending), hipSuccess);
        for e in [pending, never] {
            assert_eq!(hipEventDestroy(e), hipSuccess);
        }
        assert_eq!(hipStreamDestroy(stream), hipSuccess);

        let (mut a, mut b, mut untimed): (hipEvent_t, hipEvent_t, hipEvent_t) =
            (null_mut(), null_mut(), null_mut());
        assert_eq!(hipEventCreate(&mut a), hipSuccess);
        assert_eq!(hipEventCreate(&mut b), hipSuccess);
        assert_eq!(hipEventCreateWithFlags(&mut untimed, 2), hipSuccess);
        let mut ms = 0f32;
        assert_eq!(hipEventElapsedTime(&mut ms, a, b), hipErrorInvalidHandle);
        assert_eq!(hipEventRecord(a, null_mut()), hipSuccess);
        assert_eq!(hipEventRecord(untimed, null_mut()), hipSuccess);
        assert_eq!(hipEventSynchronize(untimed), hipSuccess);
        assert_eq!(
            hipEventElapsedTime(&mut ms, a, untimed),
            hipErrorInvalidHandle
        );
        for e in [a, b, untimed] {
            assert_eq!(hipEventDestroy(e), hipSuccess);
        }
    }
}

/// Pointers and ranges are checked at the call, before anything is read or written or queued:
/// fills of memory no device knows (NULL for the 2D form, which the queue thread once wrote),
/// copies whose kind says a side is the device's when it is not, host sides that are not
/// mapped, registrations of unmapped, PROT_NONE or wrapping ranges. Each is
/// hipErrorInvalidValue (or the registration's own codes), and the device stays usable.
#[test]
fn pointers_and_ranges_are_checked_before_anything_is_touched() {
    unsafe {
        let inv = hip("hipErrorInvalidValue");
        let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
        let map = |prot| {
            let p = libc::mmap(
                null_mut(),
                2 * page,
                prot,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            p.cast::<u8>()
        };
        let none = map(libc::PROT_NONE);
        let ro = map(libc::PROT_READ);
        let rw = map(libc::PROT_READ | libc::PROT_WRITE);
        // `rw`'s second page is unmapped; `gone` is unmapped altogether.
        assert_eq!(libc::munmap(rw.add(page).cast(), page), 0);
        let gone = map(libc::PROT_READ | libc::PROT_WRITE);
        assert_eq!(libc::munmap(gone.cast(), 2 * page), 0);
        let bogus = gone.cast::<c_void>();
        let mut dev: *mut c_void = null_mut();
        assert_eq!(hipMalloc(&mut dev, 256), hipSuccess);
        let mut host = [0u8; 256];
        let h = host.as_mut_ptr().cast::<c_void>();

        // Fills.
        assert_eq!(hipMemset(bogus, 0, 64), inv);
        assert!(
            last_message().contains("not memory of any device"),
            "{}",
            last_message()
        );
        assert_eq!(hipMemset(h, 0, 64), inv, "pageable host memory");
        assert_eq!(hipMemsetAsync(bogus, 0, 64, null_mut()), inv);
        assert_eq!(hipMemsetD32(bogus, 0, 16), inv);
        assert_eq!(hipMemsetD16Async(bogus, 0, 16, null_mut()), inv);
        assert_eq!(hipMemset(dev.cast::<u8>().add(128).cast(), 0, 200), inv);
        assert_eq!(hipMemset2D(null_mut(), 64, 0, 64, 2), inv);
        assert_eq!(hipMemset2DAsync(bogus, 64, 0, 64, 2, null_mut()), inv);
        assert_eq!(hipMemset2D(dev, 64, 0, 64, 5), inv, "past the allocation");
        assert_eq!(hipMemset(null_mut(), 0, 0), hipSuccess);

        // Copies: kinds and host sides.
        let (h2d, d2h, d2d, default) = (1, 2, 3, 4);
        assert_eq!(hipMemcpy(bogus, h, 64, h2d), inv);
        assert_eq!(hipMemcpy(h, bogus, 64, d2h), inv);
        assert_eq!(hipMemcpy(dev, h, 64, d2d), inv);
        assert_eq!(hipMemcpyAsync(h, bogus, 64, d2h, null_mut()), inv);
        assert_eq!(hipMemcpyHtoD(h, h, 64), inv);
        assert_eq!(hipMemcpyDtoHAsync(h, bogus, 64, null_mut()), inv);
        assert_eq!(hipMemcpy2D(dev, 64, bogus, 64, 64, 2, d2d), inv);
        assert_eq!(hipMemcpy(dev, bogus, 64, h2d), inv, "unmapped source");
        assert_eq!(
            hipMemcpy(dev, none.cast(), 64, default),
            inv,
            "PROT_NONE source"
        );
        assert_eq!(
            hipMemcpy(ro.cast(), dev, 64, d2h),
            inv,
            "read-only destination"
        );
        assert_eq!(
            hipMemcpy(dev, rw.add(page - 32).cast(), 64, h2d),
            inv,
            "a source running into unmapped memory"
        );
        assert!(
            last_message().contains("nothing is mapped"),
            "{}",
            last_message()
        );

        // Registration.
        assert_eq!(hipHostRegister(none.cast(), page, 0), inv);
        assert_eq!(hipHostRegister(bogus, page, 0), inv);
        assert_eq!(hipHostRegister(rw.cast(), 2 * page, 0), inv);
        assert_eq!(hipHostRegister(rw.cast(), usize::MAX, 0), inv);
        assert_eq!(
            hipHostRegister(ro.cast(), page, 0),
            inv,
            "read-only, for writing"
        );
        assert_eq!(hipHostRegister(rw.cast(), page, 0), hipSuccess);
        assert_eq!(
            hipHostRegister(rw.cast(), page, 0),
            hipErrorHostMemoryAlreadyRegistered
        );
        assert_eq!(hipHostUnregister(null_mut()), inv);
        assert_eq!(hipHostUnregister(rw.cast()), hipSuccess);
        assert_eq!(
            hipHostUnregister(rw.cast()),
            hipErrorHostMemoryNotRegistered
        );

        // Nothing reached the device; valid calls work.
        assert_eq!(hipDeviceSynchronize(), hipSuccess);
        assert_eq!(hipMemset(dev, 0x3c, 256), hipSuccess);
        assert_eq!(hipMemcpy(h, dev, 256, d2h), hipSuccess);
        assert!(host.iter().all(|&b| b == 0x3c));
        assert_eq!(hipFree(dev), hipSuccess);
        for p in [none, ro] {
            libc::munmap(p.cast(), 2 * page);
        }
        libc::munmap(rw.cast(), page);
    }
}

/// The rest of the context API and the device lookups of HIP 5.2.
#[test]
fn contexts_push_and_pop_and_devices_are_found_by_bus_id() {
    unsafe {
        assert_eq!(hipSetDevice(0), hipSuccess);
        let mut primary: hipCtx_t = null_mut();
        assert_eq!(hipDevicePrimaryCtxRetain(&mut primary, 0), hipSuccess);
        let mut popped: hipCtx_t = null_mut();
        assert_eq!(
            hipCtxPopCurrent(&mut popped),
            hipErrorInvalidContext,
            "nothing pushed"
        );
        assert_eq!(hipCtxPushCurrent(primary), hipSuccess);
        assert_eq!(hipCtxPushCurrent(0xbad as hipCtx_t), hipErrorInvalidContext);
        assert_eq!(hipCtxPopCurrent(&mut popped), hipSuccess);
        assert_eq!(popped, primary);
        let mut version = 0;
        assert_eq!(hipCtxGetApiVersion(primary, &mut version), hipSuccess);
        assert_eq!(version / 10_000_000, 5);
        assert_eq!(
            hipDevicePrimaryCtxSetFlags(0, 0),
            hipErrorContextAlreadyInUse
        );

        let mut bus = [0 as c_char; 32];
        assert_eq!(hipDeviceGetPCIBusId(bus.as_mut_ptr(), 32, 0), hipSuccess);
        let mut found = -1;
        assert_eq!(hipDeviceGetByPCIBusId(&mut found, bus.as_ptr()), hipSuccess);
        assert_eq!(found, 0);
        assert_eq!(
            hipDeviceGetByPCIBusId(&mut found, c"ffff:ff:1f.0".as_ptr()),
            hipErrorInvalidDevice
        );
        assert_eq!(
            hipDeviceGetByPCIBusId(&mut found, c"not a bus".as_ptr()),
            hipErrorInvalidValue
        );
        let (mut a, mut b) = ([0 as c_char; 16], [0 as c_char; 16]);
        assert_eq!(hipDeviceGetUuid(&mut a, 0), hipSuccess);
        assert_eq!(hipDeviceGetUuid(&mut b, 0), hipSuccess);
        assert_eq!(a, b, "stable");
        assert_ne!(a, [0; 16]);
        let mut v = -1;
        assert_eq!(
            hipDeviceGetP2PAttribute(&mut v, 1, 0, 0),
            hipErrorInvalidDevice
        );
    }
}

#[test]
fn the_legacy_launch_forms_run_a_registered_kernel() {
    unsafe {
        // The clang-19 fat binary of vadd, registered as its program would register it.
        let bytes: &'static [u8] = Box::leak(fixture("hip/vadd.hip_fatbin").into_boxed_slice());
        let wrapper: &'static [usize; 3] = Box::leak(Box::new([
            0x4849_5046 | (1 << 32),
            bytes.as_ptr() as usize,
            0,
        ]));
        let h = __hipRegisterFatBinary(wrapper.as_ptr().cast());
        let host_stub: &'static u8 = Box::leak(Box::new(0u8));
        let stub = (host_stub as *const u8).cast::<c_void>();
        let name = c"vadd";
        __hipRegisterFunction(
            h,
            stub,
            name.as_ptr() as *mut c_char,
            name.as_ptr(),
            u32::MAX,
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
        );
        assert_eq!(hipGetLastError(), hipSuccess);

        const N: usize = 77;
        let a: Vec<f32> = (0..N).map(|i| i as f32 * 0.25).collect();
        let b: Vec<f32> = (0..N).map(|i| 3.0 * i as f32 - 9.0).collect();
        let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        let (mut da, mut db, mut dc): (*mut c_void, *mut c_void, *mut c_void) =
            (null_mut(), null_mut(), null_mut());
        for p in [&mut da, &mut db, &mut dc] {
            assert_eq!(hipMalloc(p, N * 4), hipSuccess);
        }
        assert_eq!(hipMemcpy(da, a.as_ptr().cast(), N * 4, 1), hipSuccess);
        assert_eq!(hipMemcpy(db, b.as_ptr().cast(), N * 4, 1), hipSuccess);

        // No configuration: refused, nothing runs.
        assert_eq!(hipLaunchByPtr(stub), hipErrorMissingConfiguration);
        let one = dim3 { x: 1, y: 1, z: 1 };
        assert_eq!(
            hipConfigureCall(
                dim3 { x: 3, y: 1, z: 1 },
                dim3 { x: 32, ..one },
                0,
                null_mut()
            ),
            hipSuccess
        );
        let n = N as i32;
        for (i, p) in [da, db, dc].iter().enumerate() {
            let p = *p as u64;
            assert_eq!(
                hipSetupArgument((&p as *const u64).cast(), 8, i * 8),
                hipSuccess
            );
        }
        assert_eq!(
            hipSetupArgument((&n as *const i32).cast(), 4, 24),
            hipSuccess
        );
        assert_eq!(
            hipSetupArgument((&n as *const i32).cast(), 4, 4094),
            hipErrorInvalidValue,
            "past the argument segment"
        );
        assert_eq!(hipSetupArgument(null(), 4, 0), hipErrorInvalidValue);
        assert_eq!(hipLaunchByPtr(stub), hipSuccess, "{}", last_message());
        assert_eq!(hipDeviceSynchronize(), hipSuccess, "{}", last_message());
        let mut c = vec![0f32; N];
        assert_eq!(hipMemcpy(c.as_mut_ptr().cast(), dc, N * 4, 2), hipSuccess);
        assert_eq!(c, expected);
        // The configuration was used up.
        assert_eq!(hipLaunchByPtr(stub), hipErrorMissingConfiguration);
        // A pointer that is no registered kernel.
        assert_eq!(hipConfigureCall(one, one, 0, null_mut()), hipSuccess);
        assert_eq!(
            hipLaunchByPtr((&n as *const i32).cast()),
            hipErrorInvalidDeviceFunction
        );
        for p in [da, db, dc] {
            assert_eq!(hipFree(p), hipSuccess);
        }
        __hipUnregisterFatBinary(h);
    }
}

#[test]
fn cu_masks_link_queries_and_occupancy_flags() {
    unsafe {
        let mut units = 0;
        assert_eq!(
            hipDeviceGetAttribute(&mut units, 63, 0), // multiProcessorCount
            hipSuccess
        );
        assert!(units > 0);
        let words = (units as usize).div_ceil(32);
        // Every CU of a stream made without a mask, of the null stream, and of hipStreamPerThread.
        let all: Vec<u32> = (0..words)
            .map(|i| {
                let here = (units as usize - i * 32).min(32);
                if here == 32 {
                    u32::MAX
                } else {
                    (1u32 << here) - 1
                }
            })
            .collect();
        let mut plain: hipStream_t = null_mut();
        assert_eq!(hipStreamCreate(&mut plain), hipSuccess);
        for s in [plain, null_mut(), 2usize as hipStream_t] {
            let mut got = vec![0xdead_beefu32; words + 1];
            assert_eq!(
                hipExtStreamGetCUMask(s, got.len() as u32, got.as_mut_ptr()),
                hipSuccess,
                "{}",
                last_message()
            );
            assert_eq!(&got[..words], &all[..], "stream {s:p}");
            assert_eq!(
                got[words], 0xdead_beef,
                "the word past the device's CUs is untouched"
            );
        }
        // A mask: kept, clipped to the device's CUs; a longer mask's extra words ignored.
        let mut mask = vec![0u32; words + 3];
        mask[0] = 0b1011;
        mask[words + 2] = u32::MAX;
        let mut masked: hipStream_t = null_mut();
        assert_eq!(
            hipExtStreamCreateWithCUMask(&mut masked, mask.len() as u32, mask.as_ptr()),
            hipSuccess,
            "{}",
            last_message()
        );
        let mut got = vec![0u32; words];
        assert_eq!(
            hipExtStreamGetCUMask(masked, words as u32, got.as_mut_ptr()),
            hipSuccess
        );
        let mut want = vec![0u32; words];
        want[0] = 0b1011 & all[0];
        assert_eq!(got, want);
        // A stream with a CU mask runs work like any other.
        let mut flag = 0u32;
        let mut d: *mut c_void = null_mut();
        assert_eq!(hipMalloc(&mut d, 4), hipSuccess);
        assert_eq!(hipMemsetAsync(d, 0x5a, 4, masked), hipSuccess);
        assert_eq!(
            hipMemcpyAsync((&mut flag as *mut u32).cast(), d, 4, 2, masked),
            hipSuccess
        );
        assert_eq!(hipStreamSynchronize(masked), hipSuccess);
        assert_eq!(flag, 0x5a5a_5a5a);
        assert_eq!(hipFree(d), hipSuccess);
        // Refusals: too few words to answer, NULL, an empty mask.
        if words > 0 {
            assert_eq!(
                hipExtStreamGetCUMask(masked, words as u32 - 1, got.as_mut_ptr()),
                hip("hipErrorInvalidValue")
            );
        }
        assert_eq!(
            hipExtStreamGetCUMask(masked, words as u32, null_mut()),
            hip("hipErrorInvalidValue")
        );
        let mut none: hipStream_t = null_mut();
        assert_eq!(
            hipExtStreamCreateWithCUMask(&mut none, 0, mask.as_ptr()),
            hip("hipErrorInvalidValue")
        );
        assert_eq!(
            hipExtStreamCreateWithCUMask(&mut none, 1, null()),
            hip("hipErrorInvalidValue")
        );
        assert!(none.is_null(), "no stream is made for a refused mask");
        // A mask with none of the device's CUs: every CU, as clr (HIP's AllCUsMasked test).
        let zeros = vec![0u32; words];
        let mut unmasked: hipStream_t = null_mut();
        assert_eq!(
            hipExtStreamCreateWithCUMask(&mut unmasked, words as u32, zeros.as_ptr()),
            hipSuccess
        );
        let mut got = vec![0u32; words];
        assert_eq!(
            hipExtStreamGetCUMask(unmasked, words as u32, got.as_mut_ptr()),
            hipSuccess
        );
        assert_eq!(got, all);
        assert_eq!(hipStreamDestroy(unmasked), hipSuccess);
        // Priorities as clr numbers them: least 1, greatest -1, normal (the default, and a
        // CU-mask stream's) 0 = least + greatest; others clamped.
        let (mut least, mut greatest) = (7, 7);
        assert_eq!(
            hipDeviceGetStreamPriorityRange(&mut least, &mut greatest),
            hipSuccess
        );
        assert_eq!((least, greatest), (1, -1));
        let mut p = 7;
        assert_eq!(hipStreamGetPriority(masked, &mut p), hipSuccess);
        assert_eq!(p, least + greatest);
        for (asked, want) in [(i32::MAX, least), (i32::MIN, greatest), (0, 0)] {
            let mut s: hipStream_t = null_mut();
            assert_eq!(hipStreamCreateWithPriority(&mut s, 0, asked), hipSuccess);
            assert_eq!(hipStreamGetPriority(s, &mut p), hipSuccess);
            assert_eq!(p, want, "priority {asked}");
            assert_eq!(hipStreamDestroy(s), hipSuccess);
        }
        assert_eq!(hipStreamDestroy(masked), hipSuccess);
        assert_eq!(hipStreamDestroy(plain), hipSuccess);

        // Link queries: clr's argument rules, then no link information.
        let (mut t, mut h) = (7u32, 7u32);
        let mut count = 0;
        assert_eq!(hipGetDeviceCount(&mut count), hipSuccess);
        assert_eq!(
            hipExtGetLinkTypeAndHopCount(0, 0, &mut t, &mut h),
            hip("hipErrorInvalidValue")
        );
        assert_eq!(
            hipExtGetLinkTypeAndHopCount(0, -1, &mut t, &mut h),
            hip("hipErrorInvalidValue")
        );
        assert_eq!(
            hipExtGetLinkTypeAndHopCount(0, count, &mut t, &mut h),
            hip("hipErrorInvalidDevice")
        );
        assert_eq!(
            hipExtGetLinkTypeAndHopCount(0, 1, null_mut(), &mut h),
            hip("hipErrorInvalidValue")
        );
        assert_eq!((t, h), (7, 7), "nothing written");

        // Occupancy with flags: the module forms answer as the plain ones; unknown flags refused.
        let co_bytes = fixture("codeobj/kernels_static.co");
        let mut m: hipModule_t = null_mut();
        assert_eq!(
            hipModuleLoadData(&mut m, co_bytes.as_ptr().cast()),
            hipSuccess
        );
        let co = CodeObject::parse(&co_bytes).unwrap();
        let name = CString::new(co.kernels()[0].name).unwrap();
        let mut f: hipFunction_t = null_mut();
        assert_eq!(hipModuleGetFunction(&mut f, m, name.as_ptr()), hipSuccess);
        let (mut plain_blocks, mut flagged_blocks) = (0, 0);
        assert_eq!(
            hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&mut plain_blocks, f, 128, 0),
            hipSuccess
        );
        assert_eq!(
            hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
                &mut flagged_blocks,
                f,
                128,
                0,
                1
            ),
            hipSuccess
        );
        assert!(plain_blocks > 0);
        assert_eq!(plain_blocks, flagged_blocks);
        let (mut g1, mut b1, mut g2, mut b2) = (0, 0, 0, 0);
        assert_eq!(
            hipModuleOccupancyMaxPotentialBlockSize(&mut g1, &mut b1, f, 0, 0),
            hipSuccess
        );
        assert_eq!(
            hipModuleOccupancyMaxPotentialBlockSizeWithFlags(&mut g2, &mut b2, f, 0, 0, 0),
            hipSuccess
        );
        assert_eq!((g1, b1), (g2, b2));
        assert!(b1 > 0 && g1 > 0);
        assert_eq!(
            hipModuleOccupancyMaxPotentialBlockSizeWithFlags(&mut g2, &mut b2, f, 0, 0, 2),
            hip("hipErrorInvalidValue")
        );
        assert_eq!(
            hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
                &mut flagged_blocks,
                f,
                128,
                0,
                4
            ),
            hip("hipErrorInvalidValue")
        );
        assert_eq!(hipModuleUnload(m), hipSuccess);
    }
}

#[test]
fn gl_interop_is_refused_with_hips_codes() {
    unsafe {
        let mut count = 7u32;
        let mut devices = [0i32; 4];
        assert_eq!(
            hipGLGetDevices(&mut count, devices.as_mut_ptr(), 4, 1),
            hip("hipErrorNoDevice")
        );
        assert_eq!(count, 0, "no device corresponds to a GL context");
        assert_eq!(
            hipGLGetDevices(null_mut(), devices.as_mut_ptr(), 4, 1),
            hip("hipErrorInvalidValue")
        );
        let mut resource: *mut c_void = null_mut();
        assert_eq!(
            hipGraphicsGLRegisterBuffer(&mut resource, 1, 0),
            hip("hipErrorInvalidGraphicsContext")
        );
        assert_eq!(
            hipGraphicsGLRegisterImage(&mut resource, 1, 0x0DE1, 0),
            hip("hipErrorInvalidGraphicsContext")
        );
        assert!(resource.is_null(), "nothing registered");
        assert_eq!(
            hipGraphicsGLRegisterBuffer(null_mut(), 1, 0),
            hip("hipErrorInvalidValue")
        );
        let mut forged = [0x1234usize as *mut c_void];
        assert_eq!(
            hipGraphicsMapResources(1, forged.as_mut_ptr(), null_mut()),
            hip("hipErrorInvalidHandle")
        );
        assert_eq!(
            hipGraphicsUnmapResources(0, forged.as_mut_ptr(), null_mut()),
            hip("hipErrorInvalidValue")
        );
        let (mut p, mut size) = (null_mut(), 0usize);
        assert_eq!(
            hipGraphicsResourceGetMappedPointer(&mut p, &mut size, forged[0]),
            hip("hipErrorInvalidHandle")
        );
        let mut array: *mut c_void = null_mut();
        assert_eq!(
            hipGraphicsSubResourceGetMappedArray(&mut array, null_mut(), 0, 0),
            hip("hipErrorInvalidValue")
        );
        assert_eq!(
            hipGraphicsUnregisterResource(forged[0]),
            hip("hipErrorInvalidHandle")
        );
    }
}

/// The driver API's allocation forms are their runtime twins (clr: `hipMemAllocHost` is
/// `hipHostMalloc(ptr, size, 0)`, `hipMemAllocPitch` `hipMallocPitch`): pinned memory the host
/// writes and a copy reads back, the same pitch, rows that hold what was copied; NULL outputs
/// are refused. The debugger's build queries name rocload; `__hipGetPCH` hands out an empty
/// header and tolerates NULL.
#[test]
fn driver_allocations_and_small_exports() {
    use super::array::{hipMallocPitch, hipMemAllocPitch};
    use super::names::{
        __hipGetPCH, amd_dbgapi_get_build_id, amd_dbgapi_get_build_name, amd_dbgapi_get_git_hash,
    };
    unsafe {
        let inv = hip("hipErrorInvalidValue");
        let mut host: *mut c_void = null_mut();
        assert_eq!(hipMemAllocHost(&mut host, 1000), hipSuccess);
        assert!(!host.is_null());
        let bytes: Vec<u8> = (0..1000).map(|i| (i * 7 % 251) as u8).collect();
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), host.cast::<u8>(), 1000);
        let mut dev: *mut c_void = null_mut();
        assert_eq!(hipMalloc(&mut dev, 1000), hipSuccess);
        assert_eq!(hipMemcpy(dev, host, 1000, 1), hipSuccess);
        let mut back = vec![0u8; 1000];
        assert_eq!(
            hipMemcpy(back.as_mut_ptr().cast(), dev, 1000, 2),
            hipSuccess
        );
        assert_eq!(back, bytes);
        let mut attr: hipPointerAttribute_t = std::mem::zeroed();
        assert_eq!(hipPointerGetAttributes(&mut attr, host), hipSuccess);
        assert_eq!(
            attr.memoryType,
            super::pointer::memory_type_of(rocload_lib::device::MemoryKind::PinnedHost)
        );
        assert_eq!(hipMemAllocHost(null_mut(), 16), inv);
        assert_eq!(hipHostFree(host), hipSuccess);
        assert_eq!(hipFree(dev), hipSuccess);

        let (width, height) = (100usize, 7usize);
        let (mut a, mut b): (hipDeviceptr_t, *mut c_void) = (null_mut(), null_mut());
        let (mut pitch_a, mut pitch_b) = (0usize, 0usize);
        assert_eq!(
            hipMemAllocPitch(&mut a, &mut pitch_a, width, height, 4),
            hipSuccess
        );
        assert_eq!(
            hipMallocPitch(&mut b, &mut pitch_b, width, height),
            hipSuccess
        );
        assert_eq!(pitch_a, pitch_b, "the same pitch as hipMallocPitch");
        assert!(pitch_a >= width);
        let rows: Vec<u8> = (0..width * height).map(|i| (i % 253) as u8).collect();
        let a_ptr = a;
        assert_eq!(
            hipMemcpy2D(
                a_ptr,
                pitch_a,
                rows.as_ptr().cast(),
                width,
                width,
                height,
                1
            ),
            hipSuccess
        );
        let mut out = vec![0u8; width * height];
        assert_eq!(
            hipMemcpy2D(
                out.as_mut_ptr().cast(),
                width,
                a_ptr,
                pitch_a,
                width,
                height,
                2
            ),
            hipSuccess
        );
        assert_eq!(out, rows);
        assert_eq!(hipMemAllocPitch(&mut a, null_mut(), width, height, 4), inv);
        assert_eq!(
            hipMemAllocPitch(null_mut(), &mut pitch_a, width, height, 4),
            inv
        );
        assert_eq!(hipFree(a_ptr), hipSuccess);
        assert_eq!(hipFree(b), hipSuccess);

        let name = CStr::from_ptr(amd_dbgapi_get_build_name())
            .to_str()
            .unwrap();
        assert_eq!(name, format!("rocload {}", env!("CARGO_PKG_VERSION")));
        let hash = CStr::from_ptr(amd_dbgapi_get_git_hash()).to_str().unwrap();
        assert_eq!(hash, env!("CARGO_PKG_VERSION"));
        let v: Vec<usize> = env!("CARGO_PKG_VERSION")
            .split('.')
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(
            amd_dbgapi_get_build_id(),
            v[0] * 1_000_000 + v[1] * 1_000 + v[2]
        );
        let mut pch: *const c_char = null();
        let mut size = 99u32;
        __hipGetPCH(&mut pch, &mut size);
        assert!(!pch.is_null() && *pch == 0 && size == 0);
        __hipGetPCH(null_mut(), null_mut());
    }
}
