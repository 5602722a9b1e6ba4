//! The Rust launch API on the software agent: typed device buffers, streams and events, and
//! the launch builder's checks against the kernel's metadata (clang-19's `vadd.hip`), all made
//! before anything is submitted.

mod common;

use std::sync::Arc;

use rocload::backend::SoftAgent;
use rocload::device::{Device, MemoryKind};
use rocload::runtime::{
    DeviceBuffer, DevicePtr, Event, Runtime, RuntimeError, RuntimeOptions, StreamKind,
};

fn runtime() -> Runtime {
    let agent: Arc<dyn Device> = SoftAgent::new("gfx1030".parse().unwrap()).device();
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
fn the_launch_builder_checks_arguments_and_a_launch_without_executor_is_sticky() {
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
    // A well-formed launch is submitted; with no executor the dispatch fails on the device,
    // and the failure is sticky: it is never reported as success.
    vadd.launch()
        .grid([2, 1, 1])
        .block([32, 1, 1])
        .arg(&a)
        .arg(DevicePtr(b.address()))
        .arg(&c)
        .arg(64i32)
        .submit(&rt)
        .unwrap();
    let e = dev.synchronize().unwrap_err();
    assert!(matches!(e, RuntimeError::KernelFailed { .. }), "{e}");
    assert!(e.to_string().contains("no kernel executor"), "{e}");
    assert!(a.to_vec().is_err(), "later work reports the sticky error");
}
