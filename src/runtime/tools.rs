//! Hooks for instrumentation tools: code objects arriving and leaving (with the URI ROCr's
//! loader extension would report and every symbol's address), kernels dispatched and
//! completed (with the duration and, on the software agent, the emulator's instruction count).
//!
//! A [`Tool`] registered with [`Tools::add`] first hears about every code object already
//! loaded, then about every change, so a tool attached late sees the same world as one
//! attached at start. Events about code objects are delivered one at a time, in order; a
//! dispatch event is delivered on the launching thread before the packet is submitted, its
//! completion on the queue's thread. With no tool registered a launch pays one atomic load.
//!
//! Not for logging (every event is also a `tracing` record at debug level, emitted where it
//! happens) or for the C surface (librocload.so's `rocload_tool_register`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{ReentrantMutex, RwLock};

use crate::device::Completion;
use crate::loader::{Executable, SymbolClass};

/// One symbol of a loaded code object, as a tool sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSymbol {
    /// Raw (mangled) name; kernels without `.kd`.
    pub name: Arc<str>,
    /// Demangled name, when the raw one is mangled.
    pub demangled: Option<Arc<str>>,
    /// Kernel, function or variable.
    pub class: SymbolClass,
    /// Address on the device: a kernel's descriptor, a function's first instruction, a
    /// variable's storage.
    pub address: u64,
    /// Size in bytes (a kernel's descriptor is 64 bytes; see `code_address`).
    pub size: u64,
    /// For kernels, the first instruction.
    pub code_address: Option<u64>,
}

/// A code object placed on a device (or removed from it).
#[derive(Debug, Clone)]
pub struct CodeObjectEvent {
    /// Never reused in the process; the load and unload events of one code object share it.
    pub id: u64,
    /// Device ordinal.
    pub device: usize,
    /// Where its bytes came from: `file://PATH#offset=N&size=M` or
    /// `memory://PID#offset=0xADDR&size=N`, as ROCr's loader extension reports.
    pub uri: Arc<str>,
    /// Address of the loaded image (its lowest segment).
    pub load_base: u64,
    /// Bytes of the loaded image.
    pub load_size: u64,
    /// Added to an ELF symbol's value to get its device address.
    pub load_delta: u64,
    /// Kernels, device functions and variables defined by this code object.
    pub symbols: Arc<[ToolSymbol]>,
}

/// A kernel dispatch, as submitted.
#[derive(Debug, Clone)]
pub struct DispatchEvent {
    /// Never reused in the process; the completion carries the same value.
    pub id: u64,
    /// Device ordinal.
    pub device: usize,
    /// The stream's id (0 for a device's null stream is not guaranteed; compare ids only).
    pub stream: u64,
    /// Raw kernel name (without `.kd`).
    pub kernel: Arc<str>,
    /// Demangled kernel name, when the raw one is mangled.
    pub demangled: Option<Arc<str>>,
    /// The kernel descriptor's address (the packet's `kernel_object`).
    pub kernel_object: u64,
    /// The kernel's first instruction, when known.
    pub code_address: Option<u64>,
    /// Work-groups in x, y, z.
    pub grid: [u32; 3],
    /// Work-items per work-group in x, y, z.
    pub block: [u32; 3],
    /// Dynamic LDS bytes.
    pub dynamic_lds: u32,
    /// Address of the kernarg segment.
    pub kernarg: u64,
}

/// What an instrumentation tool wants to hear. Every method has an empty default.
///
/// Callbacks run on runtime threads and must return promptly; they may call the runtime
/// (look up symbols, read memory), but a code-object callback that loads code on another
/// thread and waits for it would deadlock, as it would with ROCr's loader callbacks.
pub trait Tool: Send + Sync {
    /// A code object was loaded on a device.
    fn code_object_loaded(&self, _event: &CodeObjectEvent) {}
    /// A code object is being removed from a device (its addresses are still valid during the
    /// call).
    fn code_object_unloaded(&self, _event: &CodeObjectEvent) {}
    /// A kernel dispatch is about to be submitted.
    fn dispatch(&self, _event: &DispatchEvent) {}
    /// A dispatch completed or failed.
    fn dispatch_completed(&self, _event: &DispatchEvent, _completion: &Completion) {}
}

/// The registered tools and the code objects currently loaded.
pub struct Tools {
    /// True when at least one tool is registered: the one check a launch pays without tools.
    active: AtomicBool,
    tools: RwLock<Vec<(u64, Arc<dyn Tool>)>>,
    /// Code objects loaded now, by event id. Re-entrant so a callback may load code on its
    /// own thread; held while code-object events are delivered so they stay in order and a
    /// tool added meanwhile sees each code object exactly once.
    loaded: ReentrantMutex<RefCell<BTreeMap<u64, CodeObjectEvent>>>,
    next_id: AtomicU64,
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tools")
            .field("tools", &self.tools.read().len())
            .field("loaded", &self.loaded.lock().borrow().len())
            .finish()
    }
}

impl Default for Tools {
    fn default() -> Self {
        Tools {
            active: AtomicBool::new(false),
            tools: RwLock::new(Vec::new()),
            loaded: ReentrantMutex::new(RefCell::new(BTreeMap::new())),
            next_id: AtomicU64::new(1),
        }
    }
}

/// Identifies a registered tool, for [`Tools::remove`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ToolId(pub u64);

impl Tools {
    fn next(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn snapshot(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.read().iter().map(|(_, t)| t.clone()).collect()
    }

    /// Registers `tool`. Before this returns, the tool hears `code_object_loaded` for every
    /// code object loaded now.
    pub fn add(&self, tool: Arc<dyn Tool>) -> ToolId {
        let id = self.next();
        let guard = self.loaded.lock();
        self.tools.write().push((id, tool.clone()));
        self.active.store(true, Ordering::Release);
        let existing: Vec<CodeObjectEvent> = guard.borrow().values().cloned().collect();
        tracing::debug!(tool = id, replayed = existing.len(), "tool registered");
        for event in &existing {
            tool.code_object_loaded(event);
        }
        ToolId(id)
    }

    /// Unregisters a tool; it hears nothing after this returns (except a callback already
    /// running on another thread). False when the id is unknown.
    pub fn remove(&self, id: ToolId) -> bool {
        let _guard = self.loaded.lock();
        let mut tools = self.tools.write();
        let before = tools.len();
        tools.retain(|(i, _)| *i != id.0);
        self.active.store(!tools.is_empty(), Ordering::Release);
        tracing::debug!(tool = id.0, "tool unregistered");
        tools.len() != before
    }

    /// Whether any tool is registered.
    pub fn active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Every code object loaded now, in load order.
    pub fn loaded_code_objects(&self) -> Vec<CodeObjectEvent> {
        self.loaded.lock().borrow().values().cloned().collect()
    }

    /// Records the code objects of `executable` on `device` and tells the tools; returns the
    /// event ids, for [`unloaded`](Self::unloaded).
    pub(crate) fn loaded(&self, device: usize, executable: &Executable) -> Vec<u64> {
        let events: Vec<CodeObjectEvent> = executable
            .code_objects()
            .iter()
            .enumerate()
            .map(|(index, lco)| CodeObjectEvent {
                id: self.next(),
                device,
                uri: lco.uri.as_str().into(),
                load_base: lco.base,
                load_size: lco.size,
                load_delta: lco.load_delta,
                symbols: executable
                    .symbols()
                    .iter()
                    .filter(|s| s.code_object == index)
                    .map(|s| ToolSymbol {
                        name: s.name.as_str().into(),
                        demangled: s.demangled.as_deref().map(Into::into),
                        class: s.class,
                        address: s.address,
                        size: s.size,
                        code_address: s.code_address,
                    })
                    .collect(),
            })
            .collect();
        let guard = self.loaded.lock();
        let tools = if self.active() {
            self.snapshot()
        } else {
            Vec::new()
        };
        for event in &events {
            guard.borrow_mut().insert(event.id, event.clone());
            tracing::debug!(id = event.id, device, uri = %event.uri, base = format_args!("{:#x}", event.load_base), size = event.load_size, "code object loaded");
            for tool in &tools {
                tool.code_object_loaded(event);
            }
        }
        events.iter().map(|e| e.id).collect()
    }

    /// Forgets the code objects recorded under `ids` and tells the tools.
    pub(crate) fn unloaded(&self, ids: &[u64]) {
        let guard = self.loaded.lock();
        let tools = if self.active() {
            self.snapshot()
        } else {
            Vec::new()
        };
        for id in ids.iter().rev() {
            let removed = guard.borrow_mut().remove(id);
            if let Some(event) = removed {
                tracing::debug!(id, device = event.device, uri = %event.uri, "code object unloaded");
                for tool in &tools {
                    tool.code_object_unloaded(&event);
                }
            }
        }
    }

    /// A fresh dispatch id.
    pub(crate) fn dispatch_id(&self) -> u64 {
        self.next()
    }

    /// Tells the tools a dispatch is about to be submitted; returns the tools to tell about
    /// its completion (those registered now), or `None` when there are none.
    pub(crate) fn dispatch(&self, event: &DispatchEvent) -> Option<Vec<Arc<dyn Tool>>> {
        if !self.active() {
            return None;
        }
        let tools = self.snapshot();
        for tool in &tools {
            tool.dispatch(event);
        }
        Some(tools)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl Tool for Recorder {
        fn code_object_loaded(&self, e: &CodeObjectEvent) {
            self.0.lock().push(format!("load {}", e.id));
        }
        fn code_object_unloaded(&self, e: &CodeObjectEvent) {
            self.0.lock().push(format!("unload {}", e.id));
        }
        fn dispatch(&self, e: &DispatchEvent) {
            self.0.lock().push(format!("dispatch {}", e.kernel));
        }
    }

    fn event(tools: &Tools, device: usize) -> CodeObjectEvent {
        CodeObjectEvent {
            id: tools.next(),
            device,
            uri: "memory://1#offset=0x1000&size=16".into(),
            load_base: 0x1000,
            load_size: 16,
            load_delta: 0x1000,
            symbols: Arc::new([]),
        }
    }

    #[test]
    fn late_tools_hear_what_is_loaded_and_removed_tools_hear_nothing() {
        let tools = Tools::default();
        assert!(!tools.active());
        let first = event(&tools, 0);
        tools
            .loaded
            .lock()
            .borrow_mut()
            .insert(first.id, first.clone());
        let recorder = Arc::new(Recorder::default());
        let id = tools.add(recorder.clone());
        assert!(tools.active());
        assert_eq!(*recorder.0.lock(), vec![format!("load {}", first.id)]);
        tools.unloaded(&[first.id]);
        assert_eq!(
            recorder.0.lock().last().unwrap(),
            &format!("unload {}", first.id)
        );
        assert!(tools.loaded_code_objects().is_empty());
        assert!(tools.remove(id));
        assert!(!tools.remove(id));
        assert!(!tools.active());
        let dispatch = DispatchEvent {
            id: tools.dispatch_id(),
            device: 0,
            stream: 1,
            kernel: "k".into(),
            demangled: None,
            kernel_object: 0,
            code_address: None,
            grid: [1; 3],
            block: [1; 3],
            dynamic_lds: 0,
            kernarg: 0,
        };
        assert!(tools.dispatch(&dispatch).is_none());
        assert_eq!(recorder.0.lock().len(), 2);
    }

    #[test]
    fn a_callback_may_reach_the_runtime_on_its_own_thread() {
        struct Reentrant(Arc<Tools>, Mutex<usize>);
        impl Tool for Reentrant {
            fn code_object_loaded(&self, _: &CodeObjectEvent) {
                *self.1.lock() = self.0.loaded_code_objects().len();
            }
        }
        let tools = Arc::new(Tools::default());
        let first = event(&tools, 0);
        tools
            .loaded
            .lock()
            .borrow_mut()
            .insert(first.id, first.clone());
        let tool = Arc::new(Reentrant(tools.clone(), Mutex::new(0)));
        tools.add(tool.clone());
        assert_eq!(*tool.1.lock(), 1);
    }
}
