//! The Rust launch API on the software agent: typed device buffers, streams and events, and
//! the launch builder's checks against the kernel's metadata (clang-19's `vadd.hip`), all made
//! before anything is submitted.

mod common;

use std::sync::Arc;

use rocload::backend::soft::{EmulatorOptions, SignalTable};
use rocload::backend::SoftAgent;
use rocload::device::{Device, MemoryKind};
use rocload::runtime::{
    DeviceBuffer, DevicePtr, Event, Runtime, RuntimeError, RuntimeOptions, StreamKind,
};

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
        Err(RuntimeError::InvalidValue(_))
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
    assert!(e.to_string().contains("past the end"), "{e}");
    rt.free(a).unwrap();
    let again = rt.free(a).unwrap_err();
    assert!(again.to_string().contains("already freed"), "{again}");
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
        e.to_string().contains("takes 4 argument(s), 2 given"),
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
    assert!(e.to_string().contains("is 4 bytes, 8 given"), "{e}");
    let e = vadd
        .launch()
        .arg(7u64)
        .arg(&b)
        .arg(&c)
        .arg(64i32)
        .submit(&rt)
        .unwrap_err();
    assert!(e.to_string().contains("device pointer"), "{e}");
    let e = vadd
        .launch()
        .grid([0, 1, 1])
        .arg(&a)
        .arg(&b)
        .arg(&c)
        .arg(64i32)
        .submit(&rt)
        .unwrap_err();
    assert!(matches!(e, RuntimeError::InvalidConfiguration(_)), "{e}");
    let e = vadd
        .launch()
        .block([2048, 1, 1])
        .arg(&a)
        .arg(&b)
        .arg(&c)
        .arg(64i32)
        .submit(&rt)
        .unwrap_err();
    assert!(matches!(e, RuntimeError::InvalidConfiguration(_)), "{e}");
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
    let rocload::device::ExecutionError::MemoryFault {
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
    assert!(violation.write);
    let text = e.to_string();
    // The allocation it ran past: `small`, 400 bytes.
    assert!(text.contains(&format!("{:#x}", small.address())), "{text}");
    assert!(text.contains("400"), "{text}");
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
    let text = e.to_string();
    assert!(text.contains("use after free"), "{text}");
    assert!(text.contains(&format!("{freed:#x}")), "{text}");
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
    let v = table.violation(big, 8, true);
    assert!(
        !matches!(v.reason, rocload::device::memory::ViolationReason::Freed(_)),
        "released memory is still reported as freed: {v}"
    );
    rt.free(small).unwrap();
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
    dev.reset().unwrap();
    launch_vadd(&rt, &vadd, a.address(), a.address(), c.address(), 64);
    synchronize(&dev).unwrap();
    let want: Vec<f32> = xs.iter().map(|x| x + x).collect();
    assert_eq!(c.to_vec().unwrap(), want);
}
