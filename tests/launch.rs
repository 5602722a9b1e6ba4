//! The Rust launch API on the software agent: typed device buffers, streams and events, and
//! the launch builder's checks against the kernel's metadata (clang-19's `vadd.hip`), all made
//! before anything is submitted.

mod common;

use std::sync::Arc;

use rocload::backend::soft::{EmulatorOptions, SignalTable};
use rocload::backend::SoftAgent;
use rocload::device::memory::ViolationReason;
use rocload::device::{Device, DeviceError, ExecutionError, KernargError, MemoryKind};
use rocload::runtime::{
    DeviceBuffer, DevicePtr, Event, LaunchConfigError, Runtime, RuntimeError, RuntimeOptions,
    StreamKind,
};

/// The device error inside a runtime error, if that is what it is.
fn device_error(e: &RuntimeError) -> Option<&DeviceError> {
    match e {
        RuntimeError::Device { error, .. } => Some(error),
        _ => None,
    }
}

/// The argument error inside a runtime error, if that is what it is.
fn kernarg_error(e: &RuntimeError) -> Option<&KernargError> {
    match e {
        RuntimeError::Arguments(error) => Some(error),
        _ => None,
    }
}

fn runtime() -> Runtime {
    runtime_checking(false)
}

/// A runtime whose software agent checks every lane's access (`ROCLOAD_MEMCHECK=every-access`)
/// or, by default, one per instruction.
fn runtime_checking(every_access: bool) -> Runtime {
    let options = EmulatorOptions {
        check_every_access: every_access,
        ..EmulatorOptions::default()
    };
    let agent: Arc<dyn Device> = SoftAgent::with_options(
        "gfx1030".parse().unwrap(),
        Arc::new(SignalTable::new()),
        &options,
    )
    .device();
    Runtime::with_devices(vec![agent], RuntimeOptions::default())
}

#[test]
fn buffers_round_trip_and_are_freed_with_the_device_idle() {
    let rt = runtime();
    let dev = rt.device(0).unwrap().clone();
    let host: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
    let buf = DeviceBuffer::from_slice(&dev, &host).unwrap();
    assert_eq!(buf.len(), 1000);
    assert_eq!(buf.to_vec().unwrap(), host);
    let info = rt.pointer_info(buf.address() + 40).unwrap();
    assert_eq!(info.allocation.base, buf.address());
    assert_eq!(info.allocation.kind, MemoryKind::Device);
    let address = buf.address();
    drop(buf);
    assert!(rt.pointer_info(address).is_none());
    let mut wrong = vec![0f32; 3];
    let small = DeviceBuffer::<f32>::zeroed(&dev, 4).unwrap();
    assert!(matches!(
        small.copy_to(&mut wrong),
        Err(RuntimeError::LengthMismatch { host: 3, buffer: 4 })
    ));
}

#[test]
fn copies_and_fills_run_in_stream_order_and_events_time_them() {
    let rt = runtime();
    let dev = rt.device(0).unwrap().clone();
    let a = rt.allocate(0, 4096, MemoryKind::Device).unwrap();
    let b = rt.allocate(0, 4096, MemoryKind::Device).unwrap();
    let s = dev.create_stream(StreamKind::NonBlocking, 0).unwrap();
    let (start, end) = (Event::new(true), Event::new(true));
    let mut out = vec![0u8; 4096];
    start.record(&s).unwrap();
    // SAFETY: `a` and `b` are live allocations of 4096 bytes; `out` outlives the wait below.
    unsafe {
        rt.fill(&s, a, 0x5a, 1, 4096, false).unwrap();
        rt.copy(&s, b, a, 4096, false).unwrap();
        rt.copy(&s, out.as_mut_ptr() as u64, b, 4096, false)
            .unwrap();
    }
    end.record(&s).unwrap();
    s.synchronize().unwrap();
    assert!(out.iter().all(|&x| x == 0x5a));
    assert!(end.is_complete());
    assert!(end.elapsed_ms(&start).unwrap() >= 0.0);
    // A copy that runs past an allocation is refused before it is queued, naming it.
    // SAFETY: the device side is checked and refused.
    let e = unsafe { rt.copy(&s, a + 4000, out.as_ptr() as u64, 200, true) }.unwrap_err();
    assert!(
        matches!(device_error(&e), Some(DeviceError::Access(v))
            if v.address == a + 4000 && matches!(&v.reason, ViolationReason::PastEnd(x) if x.base == a)),
        "{e}"
    );
    rt.free(a).unwrap();
    let again = rt.free(a).unwrap_err();
    assert!(
        matches!(device_error(&again), Some(DeviceError::AlreadyFreed { address, allocation })
            if *address == a && allocation.base == a),
        "{again}"
    );
    rt.free(b).unwrap();
}

#[test]
fn the_launch_builder_checks_arguments_and_vadd_runs_on_the_emulator() {
    let rt = runtime();
    let dev = rt.device(0).unwrap().clone();
    let m = rt
        .load_module(Arc::from(common::read("hip/vadd.device.ccob")), 0)
        .unwrap();
    let vadd = m.function("vadd").unwrap();
    let a = DeviceBuffer::<f32>::zeroed(&dev, 64).unwrap();
    let b = DeviceBuffer::<f32>::zeroed(&dev, 64).unwrap();
    let c = DeviceBuffer::<f32>::zeroed(&dev, 64).unwrap();
    // Wrong count, wrong size, value for pointer: refused before submission.
    let e = vadd.launch().arg(&a).arg(&b).submit(&rt).unwrap_err();
    assert!(
        matches!(
            kernarg_error(&e),
            Some(KernargError::Count {
                expected: 4,
                given: 2,
                ..
            })
        ),
        "{e}"
    );
    let e = vadd
        .launch()
        .arg(&a)
        .arg(&b)
        .arg(&c)
        .arg(64u64)
        .submit(&rt)
        .unwrap_err();
    assert!(
        matches!(
            kernarg_error(&e),
            Some(KernargError::Size {
                index: 3,
                expected: 4,
                given: 8,
                ..
            })
        ),
        "{e}"
    );
    let e = vadd
        .launch()
        .arg(7u64)
        .arg(&b)
        .arg(&c)
        .arg(64i32)
        .submit(&rt)
        .unwrap_err();
    assert!(
        matches!(
            kernarg_error(&e),
            Some(KernargError::PointerExpected { index: 0, .. })
        ),
        "{e}"
    );
    let e = vadd
        .launch()
        .grid([0, 1, 1])
        .arg(&a)
        .arg(&b)
        .arg(&c)
        .arg(64i32)
        .submit(&rt)
        .unwrap_err();
    assert!(
        matches!(
            e,
            RuntimeError::InvalidConfiguration(LaunchConfigError::ZeroDimension {
                what: "grid",
                dimension: 0,
                ..
            })
        ),
        "{e}"
    );
    let e = vadd
        .launch()
        .block([2048, 1, 1])
        .arg(&a)
        .arg(&b)
        .arg(&c)
        .arg(64i32)
        .submit(&rt)
        .unwrap_err();
    assert!(
        matches!(
            e,
            RuntimeError::InvalidConfiguration(LaunchConfigError::BlockTooLarge {
                work_items: 2048,
                ..
            })
        ),
        "{e}"
    );
    // A well-formed launch runs on the emulator; the result is the host's sum.
    let xs: Vec<f32> = (0..64).map(|i| i as f32 * 0.25).collect();
    let ys: Vec<f32> = (0..64).map(|i| 100.0 - i as f32).collect();
    let a = DeviceBuffer::from_slice(&dev, &xs).unwrap();
    let b = DeviceBuffer::from_slice(&dev, &ys).unwrap();
    vadd.launch()
        .grid([2, 1, 1])
        .block([32, 1, 1])
        .arg(&a)
        .arg(DevicePtr(b.address()))
        .arg(&c)
        .arg(64i32)
        .submit(&rt)
        .unwrap();
    dev.synchronize().unwrap();
    let expected: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| x + y).collect();
    assert_eq!(c.to_vec().unwrap(), expected);
}

/// vadd's `n` larger than its buffers: the kernel writes past `c`'s end.
fn launch_vadd(rt: &Runtime, vadd: &rocload::runtime::KernelRef, x: u64, y: u64, z: u64, n: i32) {
    vadd.launch()
        .grid([(n as u32).div_ceil(32), 1, 1])
        .block([32, 1, 1])
        .arg(DevicePtr(x))
        .arg(DevicePtr(y))
        .arg(DevicePtr(z))
        .arg(n)
        .submit(rt)
        .unwrap();
}

#[test]
fn the_memory_checker_names_the_allocation_of_an_out_of_bounds_write() {
    for every_access in [false, true] {
        out_of_bounds_write_is_reported(every_access);
    }
}

fn out_of_bounds_write_is_reported(every_access: bool) {
    let rt = runtime_checking(every_access);
    let dev = rt.device(0).unwrap().clone();
    let m = rt
        .load_module(Arc::from(common::read("hip/vadd.device.ccob")), 0)
        .unwrap();
    let vadd = m.function("vadd").unwrap();
    let big = DeviceBuffer::<f32>::zeroed(&dev, 4096).unwrap();
    let small = DeviceBuffer::<f32>::zeroed(&dev, 100).unwrap();
    launch_vadd(
        &rt,
        &vadd,
        big.address(),
        big.address(),
        small.address(),
        4096,
    );
    let e = dev.synchronize().unwrap_err();
    let RuntimeError::KernelFailed { error, .. } = &e else {
        panic!("{e}")
    };
    let ExecutionError::MemoryFault {
        kernel,
        pc,
        violation,
        instruction,
        ..
    } = &**error
    else {
        panic!("{error}")
    };
    assert_eq!(kernel, "vadd");
    assert!(*pc >= vadd.code_address().unwrap(), "{e}");
    assert!(instruction.starts_with("global_store"), "{e}");
    assert_eq!(violation.access, rocload::device::AccessKind::Write);
    // The allocation it ran past: `small`, 400 bytes.
    let near = match &violation.reason {
        ViolationReason::PastEnd(a) => Some(a),
        ViolationReason::Unmapped { nearest } => nearest.as_ref().map(|(a, _)| a),
        _ => None,
    };
    assert!(
        near.is_some_and(|a| a.base == small.address() && a.size == 400),
        "{e}"
    );
    // Sticky: the device reports it until reset.
    assert!(dev.synchronize().is_err());
}

#[test]
fn the_memory_checker_names_a_freed_allocation() {
    let rt = runtime();
    let dev = rt.device(0).unwrap().clone();
    let m = rt
        .load_module(Arc::from(common::read("hip/vadd.device.ccob")), 0)
        .unwrap();
    let vadd = m.function("vadd").unwrap();
    let x = DeviceBuffer::<f32>::zeroed(&dev, 64).unwrap();
    let freed = rt.allocate(0, 256, MemoryKind::Device).unwrap();
    rt.free(freed).unwrap();
    launch_vadd(&rt, &vadd, freed, x.address(), x.address(), 64);
    let e = dev.synchronize().unwrap_err();
    assert!(
        matches!(&e, RuntimeError::KernelFailed { error, .. }
            if matches!(&**error, ExecutionError::MemoryFault { violation, .. }
                if matches!(&violation.reason, ViolationReason::Freed(a) if a.base == freed))),
        "{e}"
    );
}

#[test]
fn memory_released_from_quarantine_is_host_memory_again() {
    // A freed block larger than the quarantine goes straight back to the host allocator, which
    // may hand its addresses out as ordinary host memory: copies to and from it must work
    // (a benchmark's host vector landed there and its copy was refused as a use after free).
    let rt = runtime();
    let dev = rt.device(0).unwrap().clone();
    let size = rocload::backend::soft::QUARANTINE_BYTES + (1 << 20);
    let big = rt.allocate(0, size, MemoryKind::Device).unwrap();
    rt.free(big).unwrap();
    let small = rt.allocate(0, 64, MemoryKind::Device).unwrap();
    let stream = dev.null_stream().unwrap();
    let host = [7u8; 64];
    // SAFETY: `host` is a live host buffer of 64 bytes standing in for one the host allocator
    // placed where `big` was; the device side is `small`.
    unsafe { rt.copy(&stream, small, host.as_ptr() as u64, 64, true) }.unwrap();
    let table = dev.device().allocations();
    let v = table.violation(big, 8, rocload::device::AccessKind::Write);
    assert!(
        !matches!(v.reason, rocload::device::memory::ViolationReason::Freed(_)),
        "released memory is still reported as freed: {v}"
    );
    rt.free(small).unwrap();
}

/// A software agent of a processor no emulator implements loads and inspects its code, but a
/// launch is refused before anything is submitted, saying which ISAs the emulator runs; the
/// same kernel built for gfx1030 runs on a gfx1030 agent.
#[test]
fn launches_of_an_isa_the_emulator_does_not_execute_are_refused_before_running() {
    let fixture = |name: &str| std::fs::read(common::fixture(&format!("codeobj/{name}"))).unwrap();
    for (isa, file, runs) in [
        ("gfx900:xnack-", "hf_cov5.gfx900_xnack-.co", false),
        ("gfx1030", "hf_cov5.gfx1030.co", true),
    ] {
        let agent: Arc<dyn Device> = SoftAgent::new(isa.parse().unwrap()).device();
        let rt = Runtime::with_devices(vec![agent], RuntimeOptions::default());
        let dev = rt.device(0).unwrap().clone();
        let module = rt.load_module(fixture(file), 0).unwrap();
        let fill = module
            .function("hf_fill")
            .expect("the kernel loads and can be inspected");
        let out = DeviceBuffer::<i32>::zeroed(&dev, 64).unwrap();
        let result = fill
            .launch()
            .grid([1, 1, 1])
            .block([64, 1, 1])
            .arg(&out)
            .arg(64i32)
            .submit(&rt);
        if runs {
            result.unwrap();
            dev.synchronize().unwrap();
            assert!(out.to_vec().unwrap().iter().any(|&v| v != 0));
            continue;
        }
        match result {
            Err(RuntimeError::Device { error, .. }) => {
                let text = error.to_string();
                assert!(text.contains("gfx900 code cannot run"), "{text}");
                assert!(text.contains("RDNA2"), "{text}");
            }
            other => panic!("{isa}: {other:?}"),
        }
        // Nothing was submitted: the device is idle and has no error.
        dev.synchronize().unwrap();
        assert_eq!(out.to_vec().unwrap(), vec![0; 64]);
    }
}

#[test]
fn bad_memory_arguments_are_typed_errors() {
    let rt = runtime();
    let dev = rt.device(0).unwrap().clone();
    let s = dev.null_stream().unwrap();
    let mut host = [0u8; 64];
    let base = host.as_mut_ptr() as u64;
    assert!(matches!(
        rt.register_host(0, 64),
        Err(RuntimeError::NullPointer { .. })
    ));
    assert!(matches!(
        rt.register_host(base, 0),
        Err(RuntimeError::ZeroSize { .. })
    ));
    let a = rt.allocate(0, 4096, MemoryKind::Device).unwrap();
    // SAFETY: every call below is refused before any memory is touched.
    unsafe {
        assert!(matches!(
            rt.copy_2d(&s, a, 8, base, 16, 16, 2, true),
            Err(RuntimeError::PitchTooSmall {
                side: "destination",
                pitch: 8,
                width: 16,
            })
        ));
        assert!(matches!(
            rt.copy_2d(&s, a, 16, base, 8, 16, 2, true),
            Err(RuntimeError::PitchTooSmall { side: "source", .. })
        ));
        assert!(matches!(
            rt.copy_2d(&s, a, u64::MAX / 2, base, 16, 16, 4, true),
            Err(RuntimeError::ExtentOverflow { height: 4, .. })
        ));
        assert!(matches!(
            rt.copy_2d(&s, u64::MAX - 8, 16, base, 16, 16, 2, true),
            Err(RuntimeError::AddressWraps { address, size: 32 }) if address == u64::MAX - 8
        ));
    }
    rt.free(a).unwrap();
    let h = rt.register_bytes(common::read("hip/vadd.device.ccob"));
    assert!(matches!(
        rt.register_managed_variable(h.id(), 0x1000, "v", &[0; 8], 3),
        Err(RuntimeError::BadAlignment { alignment: 3, .. })
    ));
}

#[test]
fn a_kernel_of_one_runtime_does_not_run_on_another_runtimes_stream() {
    let (rt_a, rt_b) = (runtime(), runtime());
    let vadd = |rt: &Runtime| {
        rt.load_module(Arc::from(common::read("hip/vadd.device.ccob")), 0)
            .unwrap()
            .function("vadd")
            .unwrap()
    };
    let (kernel_of_a, kernel_of_b) = (vadd(&rt_a), vadd(&rt_b));
    let dev_b = rt_b.device(0).unwrap().clone();
    let xs: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let a = DeviceBuffer::from_slice(&dev_b, &xs).unwrap();
    let c = DeviceBuffer::<f32>::zeroed(&dev_b, 64).unwrap();
    let stream_b = dev_b.create_stream(StreamKind::NonBlocking, 0).unwrap();
    let launch = |kernel: &rocload::runtime::KernelRef,
                  stream: Option<&rocload::runtime::Stream>,
                  rt: &Runtime| {
        let builder = kernel
            .launch()
            .grid([2, 1, 1])
            .block([32, 1, 1])
            .arg(&a)
            .arg(&a)
            .arg(&c)
            .arg(64i32);
        match stream {
            Some(s) => builder.stream(s).submit(rt),
            None => builder.submit(rt),
        }
    };
    // Same device ordinal (0), different runtimes: refused on B's stream and on B's null stream.
    for e in [
        launch(&kernel_of_a, Some(&stream_b), &rt_a).unwrap_err(),
        launch(&kernel_of_a, None, &rt_b).unwrap_err(),
    ] {
        assert!(
            matches!(
                &e,
                RuntimeError::WrongDevice {
                    kernel_device: 0,
                    stream_device: 0,
                    ..
                }
            ),
            "{e}"
        );
    }
    // Nothing ran: `c` is still zero, and B's device has no error.
    dev_b.synchronize().unwrap();
    stream_b.synchronize().unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![0.0; 64]);
    // B's own kernel, with the same arguments, runs on B's stream: the refusal was the kernel's.
    launch(&kernel_of_b, Some(&stream_b), &rt_b).unwrap();
    stream_b.synchronize().unwrap();
    let doubled: Vec<f32> = xs.iter().map(|x| x + x).collect();
    assert_eq!(c.to_vec().unwrap(), doubled);
}

#[test]
fn dropping_a_runtime_frees_its_device_contexts_once_its_code_is_gone() {
    let rt = runtime();
    let ctx = rt.device(0).unwrap().clone();
    let weak = Arc::downgrade(&ctx);
    // The runtime's reference and ours.
    assert_eq!(Arc::strong_count(&ctx), 2);
    let module = rt
        .load_module(Arc::from(common::read("hip/vadd.device.ccob")), 0)
        .unwrap();
    let kernel = module.function("vadd").unwrap();
    // The loaded code holds its context (as a CUDA function holds its module's context).
    assert_eq!(Arc::strong_count(&ctx), 3);
    assert!(Arc::ptr_eq(kernel.loaded().context().unwrap(), &ctx));
    drop(ctx);
    drop(rt);
    // The kernel keeps the context alive after its runtime is gone...
    assert_eq!(weak.strong_count(), 1);
    drop(module);
    assert_eq!(weak.strong_count(), 1);
    // ...and nothing else does: no cycle through the loaded code.
    drop(kernel);
    assert!(weak.upgrade().is_none());
}

/// An executor that panics on its first dispatch (a bug in it, say), then runs the emulator.
#[derive(Debug)]
struct PanicsOnce {
    panicked: std::sync::atomic::AtomicBool,
    inner: Arc<dyn rocload::backend::soft::KernelExecutor>,
}

impl rocload::backend::soft::KernelExecutor for PanicsOnce {
    fn run(
        &self,
        job: &rocload::backend::soft::Job<'_>,
    ) -> Result<rocload::device::DispatchReport, rocload::device::ExecutionError> {
        if !self
            .panicked
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            panic!("executor bug while running {}", job.label);
        }
        self.inner.run(job)
    }
}

/// A panic in what the queue runs fails that dispatch (typed, its completion signalled, so
/// synchronisation returns) and the queue goes on: after a reset the next launch runs.
#[test]
fn a_panicking_executor_fails_the_dispatch_and_the_queue_goes_on() {
    let executor = Arc::new(PanicsOnce {
        panicked: Default::default(),
        inner: rocload::backend::soft::builtin_executor(&EmulatorOptions::default()),
    });
    let agent: Arc<dyn Device> = SoftAgent::with_executor(
        "gfx1030".parse().unwrap(),
        Arc::new(SignalTable::new()),
        executor,
    )
    .device();
    let rt = Arc::new(Runtime::with_devices(
        vec![agent],
        RuntimeOptions::default(),
    ));
    let dev = rt.device(0).unwrap().clone();
    let m = rt
        .load_module(Arc::from(common::read("hip/vadd.device.ccob")), 0)
        .unwrap();
    let vadd = m.function("vadd").unwrap();
    let xs: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let (a, c) = (
        DeviceBuffer::from_slice(&dev, &xs).unwrap(),
        DeviceBuffer::<f32>::zeroed(&dev, 64).unwrap(),
    );
    // Bounded: before the fix the processor thread died and this waited for an hour.
    let synchronize = |dev: &Arc<rocload::runtime::DeviceContext>| {
        let (tx, rx) = std::sync::mpsc::channel();
        let d = dev.clone();
        std::thread::spawn(move || {
            let _ = tx.send(d.synchronize());
        });
        rx.recv_timeout(std::time::Duration::from_secs(30))
            .expect("synchronisation returns after a panicking dispatch")
    };
    launch_vadd(&rt, &vadd, a.address(), a.address(), c.address(), 64);
    let e = synchronize(&dev).unwrap_err();
    let RuntimeError::KernelFailed { error, .. } = &e else {
        panic!("{e}")
    };
    let rocload::device::ExecutionError::Internal { what, detail } = &**error else {
        panic!("{error}")
    };
    assert_eq!(what, "vadd");
    assert!(
        detail.contains("executor bug while running vadd"),
        "{detail}"
    );
    rt.reset_device(0).unwrap();
    launch_vadd(&rt, &vadd, a.address(), a.address(), c.address(), 64);
    synchronize(&dev).unwrap();
    let want: Vec<f32> = xs.iter().map(|x| x + x).collect();
    assert_eq!(c.to_vec().unwrap(), want);
}

/// An executor that notes the compute units each dispatch was given, then runs the emulator.
#[derive(Debug)]
struct NotesUnits {
    seen: parking_lot::Mutex<Vec<Option<Vec<u32>>>>,
    inner: Arc<dyn rocload::backend::soft::KernelExecutor>,
}

impl rocload::backend::soft::KernelExecutor for NotesUnits {
    fn run(
        &self,
        job: &rocload::backend::soft::Job<'_>,
    ) -> Result<rocload::device::DispatchReport, rocload::device::ExecutionError> {
        self.seen.lock().push(job.compute_units.clone());
        self.inner.run(job)
    }
}

/// A stream's CU mask (`hipExtStreamCreateWithCUMask`) reaches its dispatches as the compute
/// units they may run on (the emulator then runs one worker per unit, pinned to its CPU); a
/// stream without one, or with every unit set, restricts nothing. Results are the same.
#[test]
fn a_streams_cu_mask_chooses_the_compute_units_of_its_dispatches() {
    let executor = Arc::new(NotesUnits {
        seen: Default::default(),
        inner: rocload::backend::soft::builtin_executor(&EmulatorOptions::default()),
    });
    let agent: Arc<dyn Device> = SoftAgent::with_executor(
        "gfx1030".parse().unwrap(),
        Arc::new(SignalTable::new()),
        executor.clone(),
    )
    .device();
    let units = agent.compute_units();
    let rt = Arc::new(Runtime::with_devices(
        vec![agent],
        RuntimeOptions::default(),
    ));
    let dev = rt.device(0).unwrap().clone();
    let m = rt
        .load_module(Arc::from(common::read("hip/vadd.device.ccob")), 0)
        .unwrap();
    let vadd = m.function("vadd").unwrap();
    let xs: Vec<f32> = (0..1024).map(|i| i as f32).collect();
    let want: Vec<f32> = xs.iter().map(|x| x + x).collect();
    let a = DeviceBuffer::from_slice(&dev, &xs).unwrap();
    let last = units - 1;
    let masks: [(Vec<u32>, Option<Vec<u32>>); 3] = [
        // The last unit only.
        (
            {
                let mut m = vec![0u32; units.div_ceil(32) as usize];
                m[(last / 32) as usize] = 1 << (last % 32);
                m
            },
            (units > 1).then(|| vec![last]),
        ),
        // Every unit: no restriction.
        (vec![u32::MAX; units.div_ceil(32) as usize], None),
        // Unit 0 and bits past the device's units (clipped away).
        (vec![1, u32::MAX], (units > 1).then(|| vec![0])),
    ];
    for (mask, expect) in masks {
        let stream = dev
            .create_stream_with_cu_mask(StreamKind::NonBlocking, 0, &mask)
            .unwrap();
        let c = DeviceBuffer::<f32>::zeroed(&dev, 1024).unwrap();
        vadd.launch()
            .grid([32, 1, 1])
            .block([32, 1, 1])
            .arg(DevicePtr(a.address()))
            .arg(DevicePtr(a.address()))
            .arg(DevicePtr(c.address()))
            .arg(1024i32)
            .stream(&stream)
            .submit(&rt)
            .unwrap();
        stream.synchronize().unwrap();
        assert_eq!(c.to_vec().unwrap(), want);
        assert_eq!(
            executor.seen.lock().last().cloned().flatten(),
            expect,
            "mask {mask:x?} on {units} units"
        );
    }
}

/// The program unmaps registered host memory without unregistering it, then a kernel writes
/// there: a memory fault naming the registration (it crashed the host before: the emulator
/// stored through the vanished pages), with both ways of checking, and the host carries on.
#[test]
fn a_kernel_on_registered_memory_the_program_unmapped_faults_without_a_crash() {
    for every_access in [false, true] {
        let rt = runtime_checking(every_access);
        let dev = rt.device(0).unwrap().clone();
        let m = rt
            .load_module(Arc::from(common::read("hip/vadd.device.ccob")), 0)
            .unwrap();
        let vadd = m.function("vadd").unwrap();
        let len = 1 << 16;
        // SAFETY: a fresh anonymous mapping of `len` bytes, unmapped below by this test only.
        let host = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(host, libc::MAP_FAILED);
        let base = host as u64;
        rt.register_host(base, len as u64).unwrap();
        let a = DeviceBuffer::<f32>::zeroed(&dev, 64).unwrap();
        // Mapped: the kernel writes the registered pages.
        launch_vadd(&rt, &vadd, a.address(), a.address(), base, 64);
        dev.synchronize().unwrap();
        // SAFETY: the mapping made above; nothing of this test reads it afterwards.
        assert_eq!(unsafe { libc::munmap(host, len) }, 0);
        launch_vadd(&rt, &vadd, a.address(), a.address(), base, 64);
        let e = dev.synchronize().unwrap_err();
        let RuntimeError::KernelFailed { error, .. } = &e else {
            panic!("{e}")
        };
        let ExecutionError::MemoryFault { violation, .. } = &**error else {
            panic!("{error}")
        };
        assert!(
            matches!(&violation.reason, ViolationReason::HostUnmapped(r) if r.base == base),
            "{e}"
        );
        assert!(e.to_string().contains("unmapped the host pages"), "{e}");
        // The reset forgets the registration too (one device: clr purges host memory).
        rt.reset_device(0).unwrap();
    }
}
