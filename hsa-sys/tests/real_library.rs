// Tests against the real ROCr runtime installed from Debian (libhsa-runtime64-1 5.2.3 here).
// Without an AMD GPU driver only loading, symbol resolution and hsa_init's failure can be
// exercised; the GPU tests below skip with a message in that case.

mod common;

use hsa_sys::*;

#[test]
fn loads_from_the_default_soname_and_reports_the_mapped_file() {
    let _serial = common::runtime_lock();
    let Some(lib) = common::system_library("loads_from_the_default_soname") else {
        return;
    };
    assert_eq!(lib.name(), "libhsa-runtime64.so.1");
    let file = lib
        .file()
        .expect("dladdr finds the file that defines hsa_init");
    let file_name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    assert!(
        file_name.starts_with("libhsa-runtime64.so"),
        "mapped file {}",
        file.display()
    );
    assert!(file.is_absolute(), "{}", file.display());
}

#[test]
fn load_uses_the_default_sonames_when_no_path_is_configured() {
    let _serial = common::runtime_lock();
    let Some(_) = common::system_library("load_uses_the_default_sonames") else {
        return;
    };
    let lib =
        HsaLibrary::load(None).expect("the default soname loads when the library is installed");
    assert_eq!(lib.name(), DEFAULT_LIBRARY_NAMES[0]);
    assert_eq!(lib.source(), CandidateSource::Default);
}

#[test]
fn a_bogus_path_is_a_typed_error_naming_the_path_and_the_loader_message() {
    let _serial = common::runtime_lock();
    let bogus = "/nonexistent/rocload/libhsa-runtime64.so.1";
    let err = HsaLibrary::load_from(bogus).unwrap_err();
    assert_eq!(err.attempts.len(), 1);
    let attempt = &err.attempts[0];
    assert_eq!(attempt.path, bogus);
    assert_eq!(attempt.source, CandidateSource::Caller);
    assert!(
        attempt.reason.contains("No such file"),
        "dlopen message kept: {}",
        attempt.reason
    );
    let text = err.to_string();
    assert!(
        text.starts_with("could not load the HSA runtime (tried /nonexistent/"),
        "{text}"
    );
}

#[test]
fn a_library_without_hsa_init_is_not_accepted_as_a_runtime() {
    let _serial = common::runtime_lock();
    // libc is always present and exports no hsa_* function.
    let err = HsaLibrary::load_from("libc.so.6").unwrap_err();
    assert!(
        err.attempts[0].reason.contains("does not export hsa_init"),
        "{err}"
    );
}

#[test]
fn every_function_the_backend_uses_resolves() {
    let _serial = common::runtime_lock();
    let Some(lib) = common::system_library("every_function_the_backend_uses_resolves") else {
        return;
    };
    assert_eq!(
        lib.missing_backend_functions(),
        Vec::<&str>::new(),
        "missing in {}",
        lib.name()
    );
    // Independently of the generated table: ask the dynamic loader for each name.
    // SAFETY: the library was just loaded successfully by HsaLibrary; opening it again only
    // bumps its reference count.
    let raw = unsafe { libloading::Library::new("libhsa-runtime64.so.1") }.expect("loads");
    for name in BACKEND_FUNCTIONS {
        let symbol = format!("{name}\0");
        // SAFETY: only the address is looked up; it is never called through this type.
        let found = unsafe { raw.get::<*const ()>(symbol.as_bytes()) };
        assert!(found.is_ok(), "dlsym({name}) failed: {:?}", found.err());
        assert_eq!(lib.has_function(name), Some(true), "{name}");
    }
    assert_eq!(lib.has_function("hsa_not_a_function"), None);
}

#[test]
fn hsa_init_without_a_gpu_driver_is_out_of_resources_and_says_so() {
    let _serial = common::runtime_lock();
    if common::has_kfd() {
        eprintln!("skipped: /dev/kfd exists, hsa_init is expected to succeed here");
        return;
    }
    let Some(lib) = common::system_library("hsa_init_without_a_gpu_driver") else {
        return;
    };
    let err = result::init(&lib).unwrap_err();
    assert_eq!(err.call, "hsa_init");
    assert_eq!(err.kind, HsaErrorKind::Status);
    assert_eq!(err.status, HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    assert!(err.is_status(0x1008));
    assert_eq!(err.status_name(), Some("HSA_STATUS_ERROR_OUT_OF_RESOURCES"));
    let text = err.to_string();
    assert!(text.contains("hsa_init"), "{text}");
    assert!(
        text.contains("HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)"),
        "{text}"
    );
    assert!(text.contains("/dev/kfd does not exist"), "{text}");
    eprintln!("hsa_init error as reported: {text}");
}

#[test]
fn calls_after_a_failed_init_report_not_initialized() {
    let _serial = common::runtime_lock();
    if common::has_kfd() {
        eprintln!("skipped: /dev/kfd exists, hsa_init is expected to succeed here");
        return;
    }
    let Some(lib) = common::system_library("calls_after_a_failed_init") else {
        return;
    };
    assert!(result::init(&lib).is_err());
    let err = result::iterate_agents(&lib).unwrap_err();
    assert_eq!(err.call, "hsa_iterate_agents");
    assert!(err.is_status(HSA_STATUS_ERROR_NOT_INITIALIZED), "{err}");
    assert!(
        err.to_string().contains("HSA_STATUS_ERROR_NOT_INITIALIZED"),
        "{err}"
    );
    // The loader extension table needs an initialised runtime too.
    let err = result::amd_loader_table(&lib).unwrap_err();
    assert_eq!(err.call, "hsa_system_get_major_extension_table");
    assert!(err.is_status(HSA_STATUS_ERROR_NOT_INITIALIZED), "{err}");
    // Handle-free calls that need no handle from the runtime fail the same way.
    let err = result::executable_create_alt(
        &lib,
        HSA_PROFILE_FULL,
        HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
        None,
    )
    .unwrap_err();
    assert!(err.is_status(HSA_STATUS_ERROR_NOT_INITIALIZED), "{err}");
    let err =
        result::system_major_extension_supported(&lib, HSA_EXTENSION_AMD_LOADER, 1).unwrap_err();
    assert!(err.is_status(HSA_STATUS_ERROR_NOT_INITIALIZED), "{err}");
}

#[test]
fn the_safe_api_reports_init_failure_and_never_shuts_down_what_it_did_not_init() {
    let _serial = common::runtime_lock();
    if common::has_kfd() {
        eprintln!("skipped: /dev/kfd exists, hsa_init is expected to succeed here");
        return;
    }
    let Some(lib) = common::system_library("the_safe_api_reports_init_failure") else {
        return;
    };
    let lib = std::sync::Arc::new(lib);
    let err = Hsa::init(lib.clone()).unwrap_err();
    assert!(err.is_status(HSA_STATUS_ERROR_OUT_OF_RESOURCES), "{err}");
    assert!(
        lib.take_deferred_errors().is_empty(),
        "no Hsa existed, so nothing was shut down"
    );
}

#[test]
fn runtime_status_strings_work_without_an_initialised_runtime() {
    let _serial = common::runtime_lock();
    let Some(lib) = common::system_library("runtime_status_strings") else {
        return;
    };
    if common::has_kfd() {
        eprintln!("skipped: /dev/kfd exists, the runtime may be initialised by another test");
        return;
    }
    // ROCr 5.2.3 answers hsa_status_string without hsa_init; error_for uses that text, minus
    // the status name it repeats.
    let runtime =
        result::status_string(&lib, HSA_STATUS_ERROR_OUT_OF_RESOURCES).expect("runtime text");
    assert!(
        runtime.starts_with("HSA_STATUS_ERROR_OUT_OF_RESOURCES"),
        "{runtime}"
    );
    let err = result::error_for(&lib, "hsa_init", HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    assert!(
        !err.message.is_empty() && runtime.ends_with(&err.message),
        "{runtime} / {}",
        err.message
    );
    assert_ne!(
        err.message,
        status_description(HSA_STATUS_ERROR_OUT_OF_RESOURCES)
    );
}

// ----- Tests that need a GPU agent: they skip with a message where there is none. -----

#[test]
fn gpu_agents_have_amdgcn_isas() {
    let _serial = common::runtime_lock();
    let Some((hsa, gpus)) = common::gpu_runtime("gpu_agents_have_amdgcn_isas") else {
        return;
    };
    for gpu in &gpus {
        assert!(gpu.name.starts_with("gfx"), "GPU agent name {:?}", gpu.name);
        assert!(!gpu.isas.is_empty(), "{} has no ISA", gpu.name);
        assert!(
            gpu.isas
                .iter()
                .any(|isa| isa.starts_with("amdgcn-amd-amdhsa--") && isa.contains(&gpu.name)),
            "{}: {:?}",
            gpu.name,
            gpu.isas
        );
    }
    hsa.shut_down().expect("hsa_shut_down");
}

#[test]
fn gpu_loader_extension_table_is_complete() {
    let _serial = common::runtime_lock();
    let Some((hsa, _gpus)) = common::gpu_runtime("gpu_loader_extension_table_is_complete") else {
        return;
    };
    let lib = hsa.library();
    assert!(
        result::system_major_extension_supported(lib, HSA_EXTENSION_AMD_LOADER, 1)
            .expect("query")
            .is_some()
    );
    let table = result::amd_loader_table(lib).expect("loader extension table");
    // An executable with nothing loaded has no loaded code objects.
    let exec = result::executable_create_alt(
        lib,
        HSA_PROFILE_FULL,
        HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
        None,
    )
    .expect("executable");
    // SAFETY: `exec` was just created under `hsa`.
    unsafe {
        assert!(table.loaded_code_objects(exec).expect("iterate").is_empty());
        result::executable_destroy(lib, exec).expect("destroy");
    }
}

#[test]
fn gpu_kernarg_pool_allocates() {
    let _serial = common::runtime_lock();
    let Some((hsa, _gpus)) = common::gpu_runtime("gpu_kernarg_pool_allocates") else {
        return;
    };
    let lib = hsa.library();
    let agents = result::iterate_agents(lib).expect("agents");
    let mut found = false;
    for agent in agents {
        // SAFETY: handles come from the runtime `hsa` keeps initialised.
        unsafe {
            if result::agent_device_type(lib, agent).expect("device") != HSA_DEVICE_TYPE_CPU {
                continue;
            }
            for pool in result::agent_memory_pools(lib, agent).expect("pools") {
                if result::memory_pool_segment(lib, pool).expect("segment")
                    != HSA_AMD_SEGMENT_GLOBAL
                {
                    continue;
                }
                let flags = result::memory_pool_global_flags(lib, pool).expect("flags");
                if flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT == 0
                    || !result::memory_pool_alloc_allowed(lib, pool).expect("alloc allowed")
                {
                    continue;
                }
                let ptr = result::memory_pool_allocate(lib, pool, 256, 0).expect("allocate");
                assert!(!ptr.is_null());
                result::memory_pool_free(lib, ptr).expect("free");
                found = true;
            }
        }
    }
    assert!(found, "no kernarg-capable system memory pool");
}

#[test]
fn gpu_loads_a_code_object_and_finds_its_kernel() {
    let _serial = common::runtime_lock();
    let Some((hsa, gpus)) = common::gpu_runtime("gpu_loads_a_code_object") else {
        return;
    };
    let lib = hsa.library();
    let gpu = &gpus[0];
    let Some(code_object) = compile_kernel(&gpu.name) else {
        if std::env::var_os("CI").is_some() {
            panic!(
                "CI is set but clang-19/ld.lld-19 could not build a code object for {}",
                gpu.name
            );
        }
        eprintln!(
            "skipped: clang-19/ld.lld-19 could not build a code object for {}",
            gpu.name
        );
        return;
    };
    // SAFETY: every handle comes from the runtime `hsa` keeps initialised; `code_object`
    // outlives the reader.
    unsafe {
        let reader =
            result::code_object_reader_create_from_memory(lib, &code_object).expect("reader");
        let exec = result::executable_create_alt(
            lib,
            HSA_PROFILE_FULL,
            HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
            None,
        )
        .expect("executable");
        result::executable_load_agent_code_object(lib, exec, gpu.handle, reader, None)
            .expect("load");
        result::executable_freeze(lib, exec, None).expect("freeze");
        let symbol = result::executable_get_symbol_by_name(lib, exec, "k.kd", Some(gpu.handle))
            .expect("k.kd");
        assert_eq!(
            result::symbol_kind(lib, symbol).expect("kind"),
            HSA_SYMBOL_KIND_KERNEL
        );
        assert_eq!(result::symbol_name(lib, symbol).expect("name"), "k.kd");
        let info = result::kernel_info(lib, symbol).expect("kernel info");
        assert_ne!(info.kernel_object, 0);
        // One pointer and no hidden arguments (checked with llvm-readelf --notes on gfx1030 output).
        assert_eq!(info.kernarg_segment_size, 8, "one pointer argument");
        let symbols = result::executable_agent_symbols(lib, exec, gpu.handle).expect("symbols");
        assert!(symbols.contains(&symbol));
        let table = result::amd_loader_table(lib).expect("loader table");
        let loaded = table
            .loaded_code_objects(exec)
            .expect("loaded code objects");
        assert_eq!(loaded.len(), 1);
        let base = table.load_base(loaded[0]).expect("base");
        let size = table.load_size(loaded[0]).expect("size");
        assert!(info.kernel_object >= base && info.kernel_object < base + size);
        assert!(table.uri(loaded[0]).expect("uri").starts_with("memory://"));
        result::executable_destroy(lib, exec).expect("destroy");
        result::code_object_reader_destroy(lib, reader).expect("reader destroy");
    }
    hsa.shut_down().expect("hsa_shut_down");
}

// Builds a one-kernel code object for `gpu` with Debian's clang-19 (scripts/setup.sh installs it).
fn compile_kernel(gpu: &str) -> Option<Vec<u8>> {
    let dir = tempfile::tempdir().ok()?;
    let src = dir.path().join("k.cl");
    std::fs::write(
        &src,
        "__kernel void k(__global int *p) { p[__builtin_amdgcn_workitem_id_x()] = 1; }\n",
    )
    .ok()?;
    let obj = dir.path().join("k.o");
    let co = dir.path().join("k.co");
    let bin = std::path::Path::new("/usr/lib/llvm-19/bin");
    let ok = std::process::Command::new(bin.join("clang"))
        .args([
            "--target=amdgcn-amd-amdhsa",
            &format!("-mcpu={gpu}"),
            "-nogpulib",
            "-O2",
            "-c",
        ])
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .status()
        .ok()?
        .success()
        && std::process::Command::new(bin.join("ld.lld"))
            .arg("-shared")
            .arg(&obj)
            .arg("-o")
            .arg(&co)
            .status()
            .ok()?
            .success();
    if !ok {
        return None;
    }
    std::fs::read(&co).ok()
}
