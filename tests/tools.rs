//! Instrumentation hooks on the software agent: a tool hears code objects arrive (URI, load
//! base and size, every symbol with the address the runtime resolves) and leave, and every
//! dispatch (kernel, grid, block, LDS, kernarg) with its completion; a tool added late first
//! hears what is already loaded.

mod common;

use std::sync::Arc;

use parking_lot::Mutex;
use rocload::backend::SoftAgent;
use rocload::device::{Completion, Device};
use rocload::loader::SymbolClass;
use rocload::runtime::{
    CodeObjectEvent, DeviceBuffer, DispatchEvent, Runtime, RuntimeOptions, Tool,
};

fn runtime() -> Runtime {
    let agent: Arc<dyn Device> = SoftAgent::new("gfx1030".parse().unwrap()).device();
    Runtime::with_devices(vec![agent], RuntimeOptions::default())
}

#[derive(Debug, Clone)]
enum Seen {
    Loaded(CodeObjectEvent),
    Unloaded(u64),
    Dispatch(DispatchEvent),
    Completed(u64, Result<u64, String>),
}

#[derive(Default)]
struct Recorder(Mutex<Vec<Seen>>);

impl Tool for Recorder {
    fn code_object_loaded(&self, e: &CodeObjectEvent) {
        self.0.lock().push(Seen::Loaded(e.clone()));
    }
    fn code_object_unloaded(&self, e: &CodeObjectEvent) {
        self.0.lock().push(Seen::Unloaded(e.id));
    }
    fn dispatch(&self, e: &DispatchEvent) {
        self.0.lock().push(Seen::Dispatch(e.clone()));
    }
    fn dispatch_completed(&self, e: &DispatchEvent, c: &Completion) {
        let outcome = match c {
            Completion::Done(r) => Ok(r.instructions),
            Completion::Failed(f) => Err(f.to_string()),
        };
        self.0.lock().push(Seen::Completed(e.id, outcome));
    }
}

#[test]
fn a_tool_sees_code_arrive_kernels_go_and_code_leave() {
    let rt = runtime();
    let tool = Arc::new(Recorder::default());
    let id = rt.tools().add(tool.clone());
    let m = rt
        .load_module(Arc::from(common::read("hip/vadd.device.ccob")), 0)
        .unwrap();
    let vadd = m.function("vadd").unwrap();
    let loaded = match tool.0.lock().as_slice() {
        [Seen::Loaded(e)] => e.clone(),
        other => panic!("expected one load event, got {other:?}"),
    };
    assert_eq!(loaded.device, 0);
    let prefix = format!("memory://{}#offset=0x", std::process::id());
    assert!(loaded.uri.starts_with(&prefix), "{}", loaded.uri);
    assert!(loaded.uri.contains("&size="), "{}", loaded.uri);
    assert!(loaded.load_size > 0);
    let sym = loaded
        .symbols
        .iter()
        .find(|s| &*s.name == "vadd")
        .expect("the kernel is among the symbols");
    assert_eq!(sym.class, SymbolClass::Kernel);
    assert_eq!(sym.address, vadd.descriptor_address());
    assert_eq!(sym.code_address, vadd.code_address());
    assert!(sym.address >= loaded.load_base && sym.address < loaded.load_base + loaded.load_size);

    let dev = rt.device(0).unwrap().clone();
    let a = DeviceBuffer::<f32>::zeroed(&dev, 64).unwrap();
    vadd.launch()
        .grid([2, 1, 1])
        .block([32, 1, 1])
        .shared_bytes(128)
        .arg(&a)
        .arg(&a)
        .arg(&a)
        .arg(64i32)
        .submit(&rt)
        .unwrap();
    let _ = dev.synchronize();
    let seen = tool.0.lock().clone();
    let dispatch = seen
        .iter()
        .find_map(|s| match s {
            Seen::Dispatch(d) => Some(d.clone()),
            _ => None,
        })
        .expect("a dispatch event");
    assert_eq!(&*dispatch.kernel, "vadd");
    assert_eq!(dispatch.grid, [2, 1, 1]);
    assert_eq!(dispatch.block, [32, 1, 1]);
    assert_eq!(dispatch.dynamic_lds, 128);
    assert_eq!(dispatch.kernel_object, vadd.descriptor_address());
    assert!(dispatch.kernarg != 0 && dispatch.kernarg % 16 == 0);
    let completion = seen
        .iter()
        .find_map(|s| match s {
            Seen::Completed(id, outcome) if *id == dispatch.id => Some(outcome.clone()),
            _ => None,
        })
        .expect("the dispatch's completion");
    // The emulator ran it: the tool hears the instruction count.
    match completion {
        Ok(n) => assert!(n > 0, "a completed dispatch ran no instructions"),
        Err(e) => panic!("vadd failed: {e}"),
    }

    // The module goes: its code object is reported once, under the load's id.
    drop(vadd);
    rt.unload_module(m.id()).unwrap();
    drop(m);
    let unloads: Vec<u64> = tool
        .0
        .lock()
        .iter()
        .filter_map(|s| match s {
            Seen::Unloaded(id) => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(unloads, vec![loaded.id]);
    assert!(rt.tools().loaded_code_objects().is_empty());
    assert!(rt.tools().remove(id));
}

#[test]
fn a_late_tool_hears_what_is_already_loaded_and_removed_tools_hear_nothing() {
    let rt = runtime();
    let m = rt
        .load_module(Arc::from(common::read("hip/vadd.device.ccob")), 0)
        .unwrap();
    let late = Arc::new(Recorder::default());
    let id = rt.tools().add(late.clone());
    assert!(matches!(late.0.lock().as_slice(), [Seen::Loaded(_)]));
    assert!(rt.tools().remove(id));
    rt.unload_module(m.id()).unwrap();
    drop(m);
    assert_eq!(late.0.lock().len(), 1);
}

#[test]
fn tools_come_and_go_while_threads_load_code() {
    let rt = Arc::new(runtime());
    let bytes: Arc<[u8]> = Arc::from(common::read("hip/vadd.device.ccob"));
    let registrations = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            let (rt, bytes) = (rt.clone(), bytes.clone());
            s.spawn(move || {
                for _ in 0..20 {
                    let m = rt.load_module(bytes.clone(), 0).unwrap();
                    rt.unload_module(m.id()).unwrap();
                }
            });
        }
        s.spawn(|| {
            for _ in 0..20 {
                let tool = Arc::new(Recorder::default());
                let id = rt.tools().add(tool.clone());
                registrations.lock().push(tool);
                rt.tools().remove(id);
            }
        });
    });
    // Within one registration, every code object is heard loaded at most once and every
    // unload follows its load.
    for tool in registrations.lock().iter() {
        let mut live = std::collections::HashSet::new();
        for s in tool.0.lock().iter() {
            match s {
                Seen::Loaded(e) => assert!(live.insert(e.id), "loaded twice: {}", e.id),
                Seen::Unloaded(id) => assert!(live.remove(id), "unload without load: {id}"),
                _ => {}
            }
        }
    }
    assert!(rt.tools().loaded_code_objects().is_empty());
}
