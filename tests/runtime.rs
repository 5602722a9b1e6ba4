//! The runtime's Rust API on real clang-19 fat binaries (committed fixtures): O(1)
//! registration that never fails, lazy loading exactly once under concurrency, sharing of
//! extracted entries and inflated bundles between agents, failures at first use with the
//! target layer's explanation, unregistering while code is in use, the module API and
//! device-function lookup.
// Test code: every unsafe call passes pointers and buffers the test itself owns.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::sync::{Arc, Barrier};

use rocload::backend::SoftAgent;
use rocload::code_object::CodeObject;
use rocload::container::hipf::{FatbinWrapper, HIPF_MAGIC};
use rocload::container::{read_containers, ReadOptions};
use rocload::loader::Agent;
use rocload::runtime::{Loading, Runtime, RuntimeError, RuntimeOptions};
use rocload::target::{select, AgentIsa, Policy};

fn agent(isa: &str) -> Arc<dyn Agent> {
    SoftAgent::new(isa.parse::<AgentIsa>().unwrap()).shared()
}

fn runtime(isas: &[&str]) -> Runtime {
    Runtime::new(
        isas.iter().map(|i| agent(i)).collect(),
        RuntimeOptions::default(),
    )
}

fn leaked(rel: &str) -> &'static [u8] {
    Box::leak(common::read(rel).into_boxed_slice())
}

/// A code object of `rel` for `target`, extracted by the container layer, and parsed.
fn code_object_bytes(rel: &str, target: &str) -> Vec<u8> {
    let data = common::read(rel);
    let containers = read_containers(&data, &ReadOptions::default()).unwrap();
    let (pos, i) = rocload::container::find_entry(&containers, target, None).unwrap();
    containers[pos].extract(i).unwrap().into_owned()
}

/// A distinct fake host pointer per test.
fn host(n: usize) -> usize {
    0x1000_0000 + n * 16
}

#[test]
fn registration_reads_nothing_and_bad_input_fails_at_first_use() {
    let rt = runtime(&["gfx1030"]);
    let garbage: &'static [u8] = b"definitely not a fat binary";
    let h = rt.register_static(garbage);
    let unmapped = unsafe { rt.register_wrapper(16 as *const std::ffi::c_void) };
    assert_eq!(rt.stats().registered, 2);
    assert_eq!(
        rt.stats().loads + rt.stats().load_failures,
        0,
        "registration loads nothing"
    );
    assert!(!rt.is_loaded(h.id(), 0));
    match rt.load(h.id(), 0) {
        Err(RuntimeError::Load { source, .. }) => {
            assert!(matches!(*source, rocload::Error::Container(_)), "{source}")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        rt.load(unmapped.id(), 0),
        Err(RuntimeError::Load { .. })
    ));
    assert_eq!(rt.stats().load_failures, 2);
    // Failures are cached, not retried.
    assert!(rt.load(h.id(), 0).is_err());
    assert_eq!(rt.stats().load_failures, 2);
}

#[test]
fn a_real_hipf_wrapper_registers_and_loads() {
    let rt = runtime(&["gfx1030"]);
    let bundle = leaked("hip/vadd.hip_fatbin");
    let wrapper: &'static FatbinWrapper = Box::leak(Box::new(FatbinWrapper {
        magic: HIPF_MAGIC,
        version: 1,
        binary: bundle.as_ptr().cast(),
        unused: std::ptr::null(),
    }));
    let h = unsafe { rt.register_wrapper((wrapper as *const FatbinWrapper).cast()) };
    rt.register_function(h.id(), host(1), "vadd").unwrap();
    let k = rt.kernel(host(1), 0).unwrap();
    let co_bytes = code_object_bytes("hip/vadd.hip_fatbin", "gfx1030");
    let co = CodeObject::parse(&co_bytes).unwrap();
    let md = co.kernel_metadata(co.kernel("vadd").unwrap()).unwrap();
    assert_eq!(k.info().kernarg_segment_size, md.kernarg_segment_size);
    assert_eq!(
        k.info().group_segment_fixed_size,
        md.group_segment_fixed_size
    );
    assert_eq!(k.info().vgpr_count, md.vgpr_count);
    assert!(k.info().from_metadata);
    // The descriptor lives in the software agent's (host) memory: its kernarg_size agrees.
    let kd = unsafe { std::slice::from_raw_parts(k.descriptor_address() as *const u8, 64) };
    assert_eq!(
        u64::from(u32::from_le_bytes(kd[8..12].try_into().unwrap())),
        md.kernarg_segment_size
    );
}

#[test]
fn concurrent_first_use_loads_exactly_once() {
    let rt = Arc::new(runtime(&["gfx1030"]));
    let h = rt.register_static(leaked("hip/vadd.compressed.hip_fatbin"));
    rt.register_function(h.id(), host(2), "vadd").unwrap();
    rt.register_function(h.id(), host(3), "block_sum").unwrap();
    let threads = 16;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let rt = rt.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let k = rt
                    .kernel(if t % 2 == 0 { host(2) } else { host(3) }, 0)
                    .unwrap();
                (
                    t % 2,
                    k.descriptor_address(),
                    Arc::as_ptr(k.loaded()) as usize,
                )
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let s = rt.stats();
    assert_eq!(s.loads, 1, "{s:?}");
    assert_eq!(s.extractions, 1);
    assert_eq!(
        s.full_inflations, 0,
        "one agent: the entry is streamed out, the bundle not inflated whole"
    );
    for r in &results {
        assert_eq!(r.2, results[0].2, "every thread sees the same loaded code");
        let same_kernel = results.iter().find(|o| o.0 == r.0).unwrap();
        assert_eq!(r.1, same_kernel.1);
    }
}

#[test]
fn agents_share_extracted_entries_and_inflate_a_ccob_once() {
    // Two identical agents and a third needing another entry of the same CCOB.
    let rt = runtime(&["gfx1030", "gfx1030", "gfx906"]);
    let h = rt.register_static(leaked("hip/vadd.compressed.hip_fatbin"));
    rt.register_function(h.id(), host(4), "vadd").unwrap();
    let loaded: Vec<_> = (0..3).map(|d| rt.load(h.id(), d).unwrap()).collect();
    let s = rt.stats();
    assert_eq!(s.loads, 3);
    assert_eq!(s.full_inflations, 1, "{s:?}");
    assert_eq!(
        s.extractions, 2,
        "gfx1030 once (shared by two agents), gfx906 once"
    );
    let module = |d: usize| loaded[d].executable().code_objects()[0].module.clone();
    assert!(
        module(0).same(&module(1)),
        "agents choosing one entry share its module"
    );
    assert!(!module(0).same(&module(2)));
    // Each agent got the entry the target layer ranks first, byte for byte.
    for (d, target) in [(0usize, "gfx1030"), (2, "gfx906")] {
        assert_eq!(
            module(d).bytes(),
            &code_object_bytes("hip/vadd.compressed.hip_fatbin", target)[..]
        );
    }
    // Different agents, different images and addresses.
    let k0 = rt.kernel(host(4), 0).unwrap();
    let k2 = rt.kernel(host(4), 2).unwrap();
    assert_ne!(k0.descriptor_address(), k2.descriptor_address());
    assert_eq!(k2.info().wavefront_size, 64);
}

#[test]
fn no_compatible_target_is_reported_at_first_use_with_the_explanation() {
    let rt = runtime(&["gfx1100", "gfx1030"]);
    let bytes = leaked("hip/vadd.hip_fatbin");
    let h = rt.register_static(bytes);
    rt.register_function(h.id(), host(5), "vadd").unwrap();
    let err = rt.kernel(host(5), 0).unwrap_err();
    let explanation = err.selection_error().expect("a selection failure").clone();
    // The same explanation the target layer gives for this bundle and agent.
    let containers = read_containers(bytes, &ReadOptions::default()).unwrap();
    let ids: Vec<String> = containers[0]
        .entries()
        .unwrap()
        .iter()
        .map(|e| e.id.to_string())
        .collect();
    let agent: AgentIsa = "gfx1100".parse().unwrap();
    assert_eq!(
        explanation,
        select(&agent, &ids, Policy::Strict).no_match_error()
    );
    assert!(err.to_string().contains("gfx1100"), "{err}");
    // The other agent is unaffected.
    assert!(rt.kernel(host(5), 1).is_ok());
    assert_eq!((rt.stats().loads, rt.stats().load_failures), (1, 1));
}

#[test]
fn unregistering_keeps_code_in_use_alive() {
    let rt = runtime(&["gfx1030"]);
    let h = rt
        .register_bytes(Arc::from(common::read("hip/vadd.hip_fatbin")))
        .id();
    rt.register_function(h, host(6), "vadd").unwrap();
    rt.register_variable(h, host(7), "dev_counter", 4).unwrap();
    let k = rt.kernel(host(6), 0).unwrap();
    let (var_addr, var_size) = rt.variable(host(7), 0).unwrap();
    rt.unregister(h).unwrap();
    // The registry forgot everything...
    assert!(matches!(
        rt.kernel(host(6), 0),
        Err(RuntimeError::UnknownFunction { .. })
    ));
    assert!(matches!(
        rt.variable(host(7), 0),
        Err(RuntimeError::UnknownVariable { .. })
    ));
    assert!(matches!(
        rt.load(h, 0),
        Err(RuntimeError::InvalidHandle { .. })
    ));
    assert!(matches!(
        rt.unregister(h),
        Err(RuntimeError::InvalidHandle { .. })
    ));
    // ...but the kernel reference still owns the loaded image: its memory is still readable
    // and holds the descriptor and the variable.
    assert_eq!(
        Arc::strong_count(k.loaded()),
        1,
        "only our reference is left"
    );
    let kd = unsafe { std::slice::from_raw_parts(k.descriptor_address() as *const u8, 64) };
    assert_eq!(
        u64::from(u32::from_le_bytes(kd[8..12].try_into().unwrap())),
        k.info().kernarg_segment_size
    );
    let s = k.loaded().executable().symbol("dev_counter").unwrap();
    assert_eq!((s.address, s.size), (var_addr, var_size));
}

#[test]
fn variables_resolve_to_their_loaded_addresses() {
    let rt = runtime(&["gfx1030"]);
    let h = rt.register_static(leaked("hip/vadd.hip_fatbin"));
    rt.register_function(h.id(), host(8), "vadd").unwrap();
    rt.register_variable(h.id(), host(9), "dev_coeffs", 16)
        .unwrap();
    let (address, size) = rt.variable(host(9), 0).unwrap();
    let k = rt.kernel(host(8), 0).unwrap();
    let co_bytes = code_object_bytes("hip/vadd.hip_fatbin", "gfx1030");
    let co = CodeObject::parse(&co_bytes).unwrap();
    let v = co
        .variables()
        .iter()
        .find(|s| s.name == "dev_coeffs")
        .unwrap();
    assert_eq!(size, v.size);
    assert_eq!(
        address.wrapping_sub(k.descriptor_address()),
        v.value
            .wrapping_sub(co.kernel("vadd").unwrap().descriptor_address)
    );
    // The initial values from the source, in the loaded image.
    let values = unsafe { std::slice::from_raw_parts(address as *const f32, 4) };
    assert_eq!(values, &[1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn several_containers_in_one_range_load_together() {
    let rt = runtime(&["gfx1030"]);
    let h = rt.register_static(leaked("hip/libvk.hip_fatbin"));
    let loaded = rt.load(h.id(), 0).unwrap();
    assert_eq!(loaded.executable().code_objects().len(), 2);
    let names: Vec<String> = loaded.kernels().map(|k| k.info().name.clone()).collect();
    assert!(
        names.iter().any(|n| n == "vadd") && names.iter().any(|n| n == "vscale"),
        "{names:?}"
    );
}

#[test]
fn eager_mode_loads_at_registration() {
    let options = RuntimeOptions {
        loading: Loading::Eager,
        ..RuntimeOptions::default()
    };
    let rt = Runtime::new(vec![agent("gfx1030")], options);
    let h = rt.register_static(leaked("hip/vadd.hip_fatbin"));
    assert!(rt.is_loaded(h.id(), 0));
    assert_eq!(rt.stats().loads, 1);
    // A bad fat binary still registers; the failure is recorded for its first use.
    let bad = rt.register_static(b"junk");
    assert!(rt.is_loaded(bad.id(), 0));
    assert!(rt.load(bad.id(), 0).is_err());
}

#[test]
fn module_api_and_device_function_lookup() {
    let rt = runtime(&["gfx1030"]);
    // Nothing loaded, nothing registered: not found.
    assert!(matches!(
        rt.device_function("dl_add", 0),
        Err(RuntimeError::NotFound { .. })
    ));
    let lib = rt
        .load_module(Arc::from(common::read("codeobj/devlib_math.co")), 0)
        .unwrap();
    let f = rt.device_function("dl_add", 0).unwrap();
    let co = CodeObjectFile::new("codeobj/devlib_math.co");
    let sym = co.function("dl_add");
    assert_eq!(f.size, sym.1);
    assert_eq!(lib.global("dl_add").unwrap(), (f.address, f.size));
    // Demangled names work too.
    assert!(rt.device_function("dl::mix", 0).is_ok());
    // A bundle through the module API picks its gfx1030 entry.
    let m = rt
        .load_module(Arc::from(common::read("hip/vadd.device.ccob")), 0)
        .unwrap();
    assert!(m.function("vadd").is_ok());
    assert!(m.function("axpy<float>").is_ok(), "demangled kernel names");
    assert!(matches!(
        m.function("nope"),
        Err(RuntimeError::NotFound { .. })
    ));
    // Unloading forgets the module; the Arc we hold keeps its code usable.
    let handle = lib.id();
    rt.unload_module(handle).unwrap();
    assert!(rt.module(handle).is_err());
    assert!(matches!(
        rt.device_function("dl_add", 0),
        Err(RuntimeError::NotFound { .. })
    ));
    assert_eq!(lib.global("dl_add").unwrap().0, f.address);
}

#[test]
fn device_function_lookup_is_a_first_use_of_registered_fat_binaries() {
    let rt = runtime(&["gfx1030"]);
    let h = rt.register_static(leaked("hip/vadd.hip_fatbin"));
    assert!(!rt.is_loaded(h.id(), 0));
    let f = rt.device_function("dev_scale", 0).unwrap();
    assert!(rt.is_loaded(h.id(), 0));
    let co = CodeObjectFile::from_bytes(code_object_bytes("hip/vadd.hip_fatbin", "gfx1030"));
    assert_eq!(f.size, co.function("dev_scale").1);
}

#[test]
fn bad_handles_and_devices_are_errors() {
    let rt = runtime(&["gfx1030"]);
    assert!(matches!(
        rt.register_function(12345, host(10), "k"),
        Err(RuntimeError::InvalidHandle { .. })
    ));
    assert!(matches!(
        rt.kernel(host(11), 0),
        Err(RuntimeError::UnknownFunction { .. })
    ));
    assert!(matches!(
        rt.agent(1),
        Err(RuntimeError::InvalidDevice { .. })
    ));
    assert!(matches!(
        rt.agent(-1),
        Err(RuntimeError::InvalidDevice { .. })
    ));
    let none = Runtime::new(Vec::new(), RuntimeOptions::default());
    assert!(matches!(none.agent(0), Err(RuntimeError::NoDevice { .. })));
    let h = none.register_static(leaked("hip/vadd.hip_fatbin"));
    assert!(matches!(
        none.load(h.id(), 0),
        Err(RuntimeError::NoDevice { .. })
    ));
}

/// A code object's function symbols, by the code-object layer.
struct CodeObjectFile(Vec<u8>);

impl CodeObjectFile {
    fn new(rel: &str) -> Self {
        CodeObjectFile(common::read(rel))
    }
    fn from_bytes(b: Vec<u8>) -> Self {
        CodeObjectFile(b)
    }
    /// (value, size) of function `name`.
    fn function(&self, name: &str) -> (u64, u64) {
        let co = CodeObject::parse(&self.0).unwrap();
        let s = co
            .functions()
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name}"));
        (s.value, s.size)
    }
}
