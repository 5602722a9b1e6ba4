//! Graph calls HIP added after 5.2 (nodes 5.3 to 6.2): per-thread-stream spellings, nodes
//! enabled and disabled in an executable, upload, instantiation with parameters, kernel node
//! attributes, user objects, DOT output, capture into an existing graph, the graph memory
//! attributes of a device that has no graph memory, and nodes from generic parameters
//! (`hipGraphAddNode`). Each is checked as clr checks it; what the
//! software agent cannot do (device launch, access-policy windows) is `hipErrorNotSupported`.
//!
//! The `_spt` calls are their plain forms with NULL meaning the calling thread's per-thread
//! default stream (`per_thread.rs`), which captures like any blocking stream.

use rocload_ffi::export;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::fmt::Write as _;
use std::sync::Arc;

use parking_lot::Mutex;
use rocload_lib::runtime::capture::{self, CaptureMode};
use rocload_lib::runtime::graph::{Held, KernelNode};
use rocload_lib::runtime::{Graph, NodeKind, NodeOp};

use crate::graph::{
    exec_of, graph_failure, graph_handle, graph_of, hipGraphExec_t, hipGraphNode_t, hipGraph_t,
    instantiate, launch_exec, node_of, node_type,
};
use crate::per_thread::spt;
use crate::stream::stream_of;
use crate::*;

// ------------------------------------------------------------------------------ _spt spellings

/// `hipError_t hipGraphLaunch_spt(hipGraphExec_t, hipStream_t)` (HIP 5.3).
#[export]
pub unsafe extern "C" fn hipGraphLaunch_spt(
    exec: hipGraphExec_t,
    stream: hipStream_t,
) -> hipError_t {
    call("hipGraphLaunch_spt", || launch_exec(exec, spt(stream)))
}

/// `hipError_t hipStreamBeginCapture_spt(hipStream_t, hipStreamCaptureMode)` (HIP 5.3).
#[export]
pub unsafe extern "C" fn hipStreamBeginCapture_spt(stream: hipStream_t, mode: c_int) -> hipError_t {
    // SAFETY: forwarded.
    unsafe { crate::capture::hipStreamBeginCapture(spt(stream), mode) }
}

/// `hipError_t hipStreamEndCapture_spt(hipStream_t, hipGraph_t*)` (HIP 5.3).
#[export]
pub unsafe extern "C" fn hipStreamEndCapture_spt(
    stream: hipStream_t,
    graph: *mut hipGraph_t,
) -> hipError_t {
    // SAFETY: forwarded.
    unsafe { crate::capture::hipStreamEndCapture(spt(stream), graph) }
}

/// `hipError_t hipStreamIsCapturing_spt(hipStream_t, hipStreamCaptureStatus*)` (HIP 5.3).
#[export]
pub unsafe extern "C" fn hipStreamIsCapturing_spt(
    stream: hipStream_t,
    status: *mut c_int,
) -> hipError_t {
    // SAFETY: forwarded.
    unsafe { crate::capture::hipStreamIsCapturing(spt(stream), status) }
}

/// `hipError_t hipStreamGetCaptureInfo_spt(hipStream_t, hipStreamCaptureStatus*, unsigned long
/// long*)` (HIP 5.3).
#[export]
pub unsafe extern "C" fn hipStreamGetCaptureInfo_spt(
    stream: hipStream_t,
    status: *mut c_int,
    id: *mut u64,
) -> hipError_t {
    // SAFETY: forwarded.
    unsafe { crate::capture::hipStreamGetCaptureInfo(spt(stream), status, id) }
}

/// `hipError_t hipStreamGetCaptureInfo_v2_spt(...)` (HIP 5.3).
#[export]
pub unsafe extern "C" fn hipStreamGetCaptureInfo_v2_spt(
    stream: hipStream_t,
    status: *mut c_int,
    id: *mut u64,
    graph: *mut hipGraph_t,
    deps: *mut *const hipGraphNode_t,
    num: *mut usize,
) -> hipError_t {
    // SAFETY: forwarded.
    unsafe { crate::capture::hipStreamGetCaptureInfo_v2(spt(stream), status, id, graph, deps, num) }
}

// ------------------------------------------------------------------------------ executables

/// Kinds `hipGraphNodeSetEnabled` takes, as clr: kernels, copies, fills.
fn can_disable(kind: NodeKind) -> bool {
    matches!(
        kind,
        NodeKind::Kernel
            | NodeKind::Memcpy
            | NodeKind::Memcpy1D
            | NodeKind::MemcpyFromSymbol
            | NodeKind::MemcpyToSymbol
            | NodeKind::Memset
    )
}

/// `hipError_t hipGraphNodeSetEnabled(hipGraphExec_t, hipGraphNode_t, unsigned int isEnabled)`
/// (HIP 5.5): a disabled node runs as an empty one in later launches.
#[export]
pub unsafe extern "C" fn hipGraphNodeSetEnabled(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    enabled: c_uint,
) -> hipError_t {
    call("hipGraphNodeSetEnabled", || {
        let e = exec_of(exec)?;
        let (g, n) = node_of(node)?;
        let kind = g.kind(&n).map_err(graph_failure)?;
        if !can_disable(kind) {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("a {kind} node cannot be disabled"),
            ));
        }
        e.set_enabled(&n, enabled != 0).map_err(graph_failure)
    })
}

/// `hipError_t hipGraphNodeGetEnabled(hipGraphExec_t, hipGraphNode_t, unsigned int*
/// isEnabled)` (HIP 5.5).
#[export]
pub unsafe extern "C" fn hipGraphNodeGetEnabled(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    enabled: *mut c_uint,
) -> hipError_t {
    call("hipGraphNodeGetEnabled", || {
        if enabled.is_null() {
            return Err(Failure::null("isEnabled"));
        }
        let e = exec_of(exec)?;
        let (g, n) = node_of(node)?;
        let kind = g.kind(&n).map_err(graph_failure)?;
        if !can_disable(kind) {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("a {kind} node has no enabled state"),
            ));
        }
        let on = e.enabled(&n).map_err(graph_failure)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { enabled.write(c_uint::from(on)) };
        Ok(())
    })
}

/// `hipError_t hipGraphUpload(hipGraphExec_t, hipStream_t)` (HIP 5.5): forms the executable's
/// kernel dispatches for the stream's queue now, so its first launch there submits at once.
#[export]
pub unsafe extern "C" fn hipGraphUpload(exec: hipGraphExec_t, stream: hipStream_t) -> hipError_t {
    call("hipGraphUpload", || {
        let e = exec_of(exec)?;
        let s = stream_of(stream)?;
        Ok(e.upload(&s)?)
    })
}

/// `hipError_t hipGraphExecGetFlags(hipGraphExec_t, unsigned long long* flags)` (HIP 6.2).
#[export]
pub unsafe extern "C" fn hipGraphExecGetFlags(exec: hipGraphExec_t, flags: *mut u64) -> hipError_t {
    call("hipGraphExecGetFlags", || {
        let e = exec_of(exec)?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(flags, "flags", e.flags()) }
    })
}

/// `hipGraphInstantiateParams` (HIP 6.1, 32 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipGraphInstantiateParams {
    /// The node where instantiation failed.
    pub errNode_out: hipGraphNode_t,
    /// `hipGraphInstantiateFlags`.
    pub flags: u64,
    /// `hipGraphInstantiateResult`.
    pub result_out: c_int,
    /// The stream to upload to with `hipGraphInstantiateFlagUpload`.
    pub uploadStream: hipStream_t,
}
const _: () = assert!(std::mem::size_of::<hipGraphInstantiateParams>() == 32);
const _: () = assert!(std::mem::offset_of!(hipGraphInstantiateParams, result_out) == 16);

/// `hipGraphInstantiateResult`.
mod instantiate_result {
    pub const SUCCESS: i32 = 0;
    pub const ERROR: i32 = 1;
    pub const INVALID_STRUCTURE: i32 = 2;
}
/// `hipGraphInstantiateFlag*`.
const FLAG_AUTO_FREE: u64 = 1;
const FLAG_UPLOAD: u64 = 2;
const FLAG_DEVICE_LAUNCH: u64 = 4;
const FLAG_USE_NODE_PRIORITY: u64 = 8;

/// `hipError_t hipGraphInstantiateWithParams(hipGraphExec_t*, hipGraph_t,
/// hipGraphInstantiateParams*)` (HIP 6.1): the flags of `hipGraphInstantiateWithFlags` plus
/// upload; device launch is `hipErrorNotSupported` (no kernel launches graphs here).
#[export]
pub unsafe extern "C" fn hipGraphInstantiateWithParams(
    p_exec: *mut hipGraphExec_t,
    graph: hipGraph_t,
    params: *mut hipGraphInstantiateParams,
) -> hipError_t {
    call("hipGraphInstantiateWithParams", || {
        if params.is_null() {
            return Err(Failure::null("instantiateParams"));
        }
        // SAFETY: non-null, readable and writable by the caller's contract.
        let p = unsafe { &mut *params };
        p.errNode_out = std::ptr::null_mut();
        p.result_out = instantiate_result::ERROR;
        if p.flags == FLAG_DEVICE_LAUNCH {
            return Err(Failure::new(
                hipErrorNotSupported,
                "hipGraphInstantiateFlagDeviceLaunch: kernels cannot launch graphs here",
            ));
        }
        if ![0, FLAG_AUTO_FREE, FLAG_UPLOAD, FLAG_USE_NODE_PRIORITY].contains(&p.flags) {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("instantiate flags {:#x}", p.flags),
            ));
        }
        let mut error_node: hipGraphNode_t = std::ptr::null_mut();
        // SAFETY: the outputs are the caller's, checked by `instantiate`.
        let r = unsafe {
            instantiate(
                p_exec,
                graph,
                p.flags,
                &mut error_node,
                std::ptr::null_mut(),
                0,
            )
        };
        if let Err(f) = r {
            p.errNode_out = error_node;
            if !error_node.is_null() {
                p.result_out = instantiate_result::INVALID_STRUCTURE;
            }
            return Err(f);
        }
        p.result_out = instantiate_result::SUCCESS;
        if p.flags == FLAG_UPLOAD {
            // SAFETY: written by `instantiate` just now.
            let exec = unsafe { p_exec.read() };
            let e = exec_of(exec)?;
            e.upload(&stream_of(p.uploadStream)?)?;
        }
        Ok(())
    })
}

// ------------------------------------------------------------------------------ attributes

/// `hipKernelNodeAttrID` / `hipLaunchAttributeID` values kernel nodes take.
const ATTR_ACCESS_POLICY_WINDOW: c_int = 1;
const ATTR_COOPERATIVE: c_int = 2;
const ATTR_PRIORITY: c_int = 8;
/// Bytes of `hipAccessPolicyWindow` (every HIP version).
const ACCESS_POLICY_WINDOW_SIZE: usize = 32;

fn kernel_of_node(
    node: hipGraphNode_t,
) -> Result<(Graph, rocload_lib::runtime::Node, KernelNode), Failure> {
    let (g, n) = node_of(node)?;
    match g.op(&n).map_err(graph_failure)? {
        NodeOp::Kernel(k) => Ok((g, n, k)),
        op => Err(Failure::new(
            hipErrorInvalidValue,
            format!("{node:p} is a {} node, not a kernel node", op.kind()),
        )),
    }
}

/// `hipError_t hipGraphKernelNodeSetAttribute(hipGraphNode_t, hipKernelNodeAttrID, const
/// hipKernelNodeAttrValue*)` (HIP 5.3): cooperative (checked against the device's residency
/// when launched) and priority (kept: one packet processor per stream orders nothing by it);
/// an access-policy window only when empty (no L2 persistence on the software agent).
#[export]
pub unsafe extern "C" fn hipGraphKernelNodeSetAttribute(
    node: hipGraphNode_t,
    attr: c_int,
    value: *const c_void,
) -> hipError_t {
    call("hipGraphKernelNodeSetAttribute", || {
        if value.is_null() {
            return Err(Failure::null("value"));
        }
        let (g, n, mut k) = kernel_of_node(node)?;
        // SAFETY: `value` points to a hipKernelNodeAttrValue (at least 32 bytes) by the
        // caller's contract; what is read is the member the attribute names.
        unsafe {
            match attr {
                ATTR_COOPERATIVE => k.cooperative = value.cast::<c_int>().read_unaligned() != 0,
                ATTR_PRIORITY => k.priority = value.cast::<c_int>().read_unaligned(),
                ATTR_ACCESS_POLICY_WINDOW => {
                    let bytes =
                        std::slice::from_raw_parts(value.cast::<u8>(), ACCESS_POLICY_WINDOW_SIZE);
                    let num_bytes =
                        u64::from_le_bytes(bytes[24..32].try_into().unwrap_or_default());
                    if num_bytes != 0 {
                        return Err(Failure::new(
                            hipErrorNotSupported,
                            "access-policy windows: the software agent has no L2 persistence",
                        ));
                    }
                }
                other => {
                    return Err(Failure::new(
                        hipErrorInvalidValue,
                        format!("kernel node attribute {other}"),
                    ))
                }
            }
        }
        g.set_op(&n, NodeOp::Kernel(k))
            .map(drop)
            .map_err(graph_failure)
    })
}

/// `hipError_t hipGraphKernelNodeGetAttribute(hipGraphNode_t, hipKernelNodeAttrID,
/// hipKernelNodeAttrValue*)` (HIP 5.3): writes only the member the attribute names (so a HIP 6
/// caller's 32-byte union and a HIP 7 caller's 64-byte one are both safe).
#[export]
pub unsafe extern "C" fn hipGraphKernelNodeGetAttribute(
    node: hipGraphNode_t,
    attr: c_int,
    value: *mut c_void,
) -> hipError_t {
    call("hipGraphKernelNodeGetAttribute", || {
        if value.is_null() {
            return Err(Failure::null("value"));
        }
        let (_, _, k) = kernel_of_node(node)?;
        // SAFETY: as for the setter, for writing.
        unsafe {
            match attr {
                ATTR_COOPERATIVE => value
                    .cast::<c_int>()
                    .write_unaligned(c_int::from(k.cooperative)),
                ATTR_PRIORITY => value.cast::<c_int>().write_unaligned(k.priority),
                ATTR_ACCESS_POLICY_WINDOW => {
                    std::ptr::write_bytes(value.cast::<u8>(), 0, ACCESS_POLICY_WINDOW_SIZE)
                }
                other => {
                    return Err(Failure::new(
                        hipErrorInvalidValue,
                        format!("kernel node attribute {other}"),
                    ))
                }
            }
        }
        Ok(())
    })
}

/// `hipError_t hipGraphKernelNodeCopyAttributes(hipGraphNode_t hSrc, hipGraphNode_t hDst)`
/// (HIP 5.5).
#[export]
pub unsafe extern "C" fn hipGraphKernelNodeCopyAttributes(
    src: hipGraphNode_t,
    dst: hipGraphNode_t,
) -> hipError_t {
    call("hipGraphKernelNodeCopyAttributes", || {
        let (_, _, from) = kernel_of_node(src)?;
        let (g, n, mut to) = kernel_of_node(dst)?;
        to.cooperative = from.cooperative;
        to.priority = from.priority;
        g.set_op(&n, NodeOp::Kernel(to))
            .map(drop)
            .map_err(graph_failure)
    })
}

// ------------------------------------------------------------------------------ user objects

/// A pointer the destructor gets back (the caller vouches for it).
struct UserPtr(*mut c_void);
// SAFETY: HIP hands the pointer to the destructor on whichever thread drops the last
// reference, by definition.
unsafe impl Send for UserPtr {}
// SAFETY: as above; only passed on.
unsafe impl Sync for UserPtr {}

/// A user object: a reference count and the destructor run when it reaches 0.
struct UserObject {
    refs: Mutex<u64>,
    destroy: unsafe extern "C" fn(*mut c_void),
    ptr: UserPtr,
}

impl UserObject {
    fn retain(&self, n: u64) {
        let mut r = self.refs.lock();
        *r = r.saturating_add(n);
    }

    /// Drops `n` references; `false` when fewer are held. The destructor runs at 0.
    fn release(&self, n: u64) -> bool {
        let zero = {
            let mut r = self.refs.lock();
            if *r < n {
                return false;
            }
            *r -= n;
            *r == 0
        };
        if zero {
            // SAFETY: the application's destructor with its own pointer, once, as HIP runs it.
            unsafe { (self.destroy)(self.ptr.0) };
        }
        true
    }
}

/// References a graph holds: released when the graph, its clones and executables (and their
/// launches) are all gone.
struct GraphReference {
    object: Arc<UserObject>,
    count: Mutex<u64>,
}

impl Drop for GraphReference {
    fn drop(&mut self) {
        let n = *self.count.lock();
        if n > 0 {
            self.object.release(n);
        }
    }
}

static USER_OBJECTS: HandleTable<Arc<UserObject>> = HandleTable::new(kind::USER_OBJECT);

/// `hipUserObjectNoDestructorSync`, the only flag HIP takes; `hipGraphUserObjectMove`.
const NO_DESTRUCTOR_SYNC: c_uint = 1;
const USER_OBJECT_MOVE: c_uint = 1;
/// Most references one call may add or drop (HIP's `INT_MAX`).
const MAX_REFS: c_uint = i32::MAX as c_uint;

fn user_object(object: *mut c_void) -> Result<Arc<UserObject>, Failure> {
    if object.is_null() {
        return Err(Failure::null("object"));
    }
    // The handle stays valid after the last reference went (the object is then spent), so a
    // stale use is an error rather than a dangling one.
    USER_OBJECTS.get(object as u64).ok_or_else(|| {
        Failure::new(
            hipErrorInvalidValue,
            format!("{object:p} is not a user object"),
        )
    })
}

fn count_arg(count: c_uint) -> Result<u64, Failure> {
    if count == 0 || count > MAX_REFS {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("count {count}: 1 to {MAX_REFS}"),
        ));
    }
    Ok(u64::from(count))
}

/// `hipError_t hipUserObjectCreate(hipUserObject_t* object_out, void* ptr, hipHostFn_t destroy,
/// unsigned int initialRefcount, unsigned int flags)` (HIP 5.3): the destructor runs on the
/// thread that drops the last reference (a graph's last launch: a queue thread); it must not
/// call HIP.
#[export]
pub unsafe extern "C" fn hipUserObjectCreate(
    object_out: *mut *mut c_void,
    ptr: *mut c_void,
    destroy: hipHostFn_t,
    initial: c_uint,
    flags: c_uint,
) -> hipError_t {
    call("hipUserObjectCreate", || {
        if object_out.is_null() {
            return Err(Failure::null("object_out"));
        }
        let Some(destroy) = destroy else {
            return Err(Failure::null("destroy"));
        };
        if flags != NO_DESTRUCTOR_SYNC {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("flags {flags:#x}: hipUserObjectNoDestructorSync"),
            ));
        }
        let refs = count_arg(initial)?;
        let o = Arc::new(UserObject {
            refs: Mutex::new(refs),
            destroy,
            ptr: UserPtr(ptr),
        });
        let h = USER_OBJECTS
            .insert(o)
            .ok_or_else(|| Failure::new(hipErrorOutOfMemory, "2^24 user objects are live"))?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { object_out.write(h as *mut c_void) };
        Ok(())
    })
}

/// `hipError_t hipUserObjectRetain(hipUserObject_t, unsigned int count)` (HIP 5.3).
#[export]
pub unsafe extern "C" fn hipUserObjectRetain(object: *mut c_void, count: c_uint) -> hipError_t {
    call("hipUserObjectRetain", || {
        let o = user_object(object)?;
        let n = count_arg(count)?;
        if *o.refs.lock() == 0 {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "the user object was already destroyed",
            ));
        }
        o.retain(n);
        Ok(())
    })
}

/// `hipError_t hipUserObjectRelease(hipUserObject_t, unsigned int count)` (HIP 5.3): releasing
/// more references than are held is `hipErrorInvalidValue` (clr ignores it).
#[export]
pub unsafe extern "C" fn hipUserObjectRelease(object: *mut c_void, count: c_uint) -> hipError_t {
    call("hipUserObjectRelease", || {
        let o = user_object(object)?;
        let n = count_arg(count)?;
        if !o.release(n) {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("{n} references released; fewer are held"),
            ));
        }
        Ok(())
    })
}

/// `hipError_t hipGraphRetainUserObject(hipGraph_t, hipUserObject_t, unsigned int count,
/// unsigned int flags)` (HIP 5.3): the graph holds `count` references (moved from the caller
/// with `hipGraphUserObjectMove`); its clones and executables share them, and they are dropped
/// when the last of those (and their launches) is gone.
#[export]
pub unsafe extern "C" fn hipGraphRetainUserObject(
    graph: hipGraph_t,
    object: *mut c_void,
    count: c_uint,
    flags: c_uint,
) -> hipError_t {
    call("hipGraphRetainUserObject", || {
        let g = graph_of(graph)?;
        let o = user_object(object)?;
        let n = count_arg(count)?;
        if flags != 0 && flags != USER_OBJECT_MOVE {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("flags {flags:#x}"),
            ));
        }
        if flags != USER_OBJECT_MOVE {
            o.retain(n);
        }
        g.hold(Arc::new(GraphReference {
            object: o,
            count: Mutex::new(n),
        }));
        Ok(())
    })
}

/// `hipError_t hipGraphReleaseUserObject(hipGraph_t, hipUserObject_t, unsigned int count)` (HIP
/// 5.3): drops references the graph holds (shared with its clones and executables, which see
/// the drop too); more than it holds is `hipErrorInvalidValue`.
#[export]
pub unsafe extern "C" fn hipGraphReleaseUserObject(
    graph: hipGraph_t,
    object: *mut c_void,
    count: c_uint,
) -> hipError_t {
    call("hipGraphReleaseUserObject", || {
        let g = graph_of(graph)?;
        let o = user_object(object)?;
        let mut n = count_arg(count)?;
        let refs: Vec<Held> = g.held();
        let mine: Vec<&GraphReference> = refs
            .iter()
            .filter_map(|h| h.downcast_ref::<GraphReference>())
            .filter(|r| Arc::ptr_eq(&r.object, &o))
            .collect();
        let held: u64 = mine.iter().map(|r| *r.count.lock()).sum();
        if held < n {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("{n} references released; the graph holds {held}"),
            ));
        }
        for r in mine {
            let take = {
                let mut c = r.count.lock();
                let t = (*c).min(n);
                *c -= t;
                t
            };
            n -= take;
            if take > 0 {
                o.release(take);
            }
        }
        g.retain_held(|h| {
            h.downcast_ref::<GraphReference>()
                .is_none_or(|r| *r.count.lock() > 0)
        });
        Ok(())
    })
}

// ------------------------------------------------------------------------------ DOT output

/// The graph in Graphviz's language: one node per graph node (kind, handle-free id, and the
/// kernel for kernel nodes), child graphs as clusters, edges.
fn dot(graph: &Graph, out: &mut String, prefix: &str) {
    for n in graph.nodes() {
        let op = graph.op(&n).ok();
        let kind = op.as_ref().map(NodeOp::kind);
        let label = match &op {
            Some(NodeOp::Kernel(k)) => format!(
                "kernel\\n{}\\ngrid {:?} block {:?}",
                k.kernel.info().name,
                k.config.grid,
                k.config.block
            ),
            Some(NodeOp::Child(_)) => "child graph".to_owned(),
            Some(op) => op.kind().to_string(),
            None => "?".to_owned(),
        };
        let _ = writeln!(
            out,
            "  {prefix}n{} [label=\"{label}\\n(type {})\"];",
            n.id(),
            kind.map_or(-1, |k| node_type(k, crate::generation::current()))
        );
        if let Some(NodeOp::Child(c)) = &op {
            let _ = writeln!(out, "  subgraph cluster_{prefix}n{} {{", n.id());
            dot(c, out, &format!("{prefix}n{}_", n.id()));
            let _ = writeln!(out, "  }}");
        }
    }
    for (f, t) in graph.edges() {
        let _ = writeln!(out, "  {prefix}n{} -> {prefix}n{};", f.id(), t.id());
    }
}

/// `hipError_t hipGraphDebugDotPrint(hipGraph_t, const char* path, unsigned int flags)` (HIP
/// 5.5): writes the graph as a DOT file (the flags choose details in HIP; every node's kind and
/// kernels' names and geometry are always written here). A file that cannot be written is
/// `hipErrorOperatingSystem`, as in clr.
#[export]
pub unsafe extern "C" fn hipGraphDebugDotPrint(
    graph: hipGraph_t,
    path: *const c_char,
    _flags: c_uint,
) -> hipError_t {
    call("hipGraphDebugDotPrint", || {
        let g = graph_of(graph)?;
        // SAFETY: a NUL-terminated path by the caller's contract (NULL rejected).
        let path = unsafe { c_str(path, "path") }?.into_owned();
        let mut text = String::from("digraph dot {\n");
        dot(&g, &mut text, "");
        text.push_str("}\n");
        std::fs::write(&path, text)
            .map_err(|e| Failure::new(HIP_ERROR_OPERATING_SYSTEM, format!("writing {path}: {e}")))
    })
}

/// `hipErrorOperatingSystem`.
const HIP_ERROR_OPERATING_SYSTEM: hipError_t = 304;

// ------------------------------------------------------------------------------ capture

/// `hipError_t hipStreamBeginCaptureToGraph(hipStream_t, hipGraph_t, const hipGraphNode_t*
/// dependencies, const hipGraphEdgeData* dependencyData, size_t numDependencies,
/// hipStreamCaptureMode)` (HIP 6.1): captures into an existing graph, the first node after
/// `dependencies`; edge data is `hipErrorNotSupported`, as in clr.
#[export]
pub unsafe extern "C" fn hipStreamBeginCaptureToGraph(
    stream: hipStream_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    edge_data: *const c_void,
    n: usize,
    mode: c_int,
) -> hipError_t {
    call("hipStreamBeginCaptureToGraph", || {
        if !edge_data.is_null() {
            return Err(Failure::new(
                hipErrorNotSupported,
                "hipGraphEdgeData: programmatic dependencies are not supported",
            ));
        }
        if deps.is_null() != (n == 0) {
            return Err(Failure::new(
                hipErrorInvalidValue,
                "dependencies and numDependencies disagree",
            ));
        }
        let g = graph_of(graph)?;
        let s = stream_of(stream)?;
        let mode = match mode {
            0 => CaptureMode::Global,
            1 => CaptureMode::ThreadLocal,
            2 => CaptureMode::Relaxed,
            m => {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("hipStreamCaptureMode {m}"),
                ))
            }
        };
        let mut list = Vec::new();
        for i in 0..n {
            // SAFETY: `n` handles by the caller's contract.
            let h = unsafe { *deps.add(i) };
            list.push(node_of(h)?.1);
        }
        // The graph keeps its handle: hipStreamEndCapture returns it.
        graph_handle(&g, false)?;
        capture::begin_into(&s, mode, g, list)?;
        Ok(())
    })
}

// ------------------------------------------------------------------------------ generic nodes

/// `hipGraphNodeParams` (HIP 6.2, 256 bytes): the node's type (HIP 5.5+'s numbering, the only
/// one headers declaring these calls have), then the parameters of that type at 16.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipGraphNodeParams {
    /// `hipGraphNodeType`.
    pub type_: c_int,
    /// Reserved.
    pub reserved0: [c_int; 3],
    /// The union of every type's parameters (232 bytes).
    pub params: [u64; 29],
    /// Reserved.
    pub reserved2: i64,
}
const _: () = assert!(std::mem::size_of::<hipGraphNodeParams>() == 256);
const _: () = assert!(std::mem::offset_of!(hipGraphNodeParams, params) == 16);

/// `hipMemcpyNodeParams` (176 bytes): flags, reserved, the 3D copy.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct hipMemcpyNodeParams {
    flags: c_int,
    reserved: [c_int; 3],
    copy: crate::graph::hipMemcpy3DParms,
}
const _: () = assert!(std::mem::size_of::<hipMemcpyNodeParams>() == 176);

/// Reads member `T` of the parameters' union.
///
/// # Safety
/// The union holds a `T` (every member fits its 232 bytes).
unsafe fn member<T: Copy>(p: &hipGraphNodeParams) -> T {
    const { assert!(std::mem::size_of::<T>() <= 232) };
    // SAFETY: `params` is 232 readable bytes and holds a `T` by the caller's contract.
    unsafe { p.params.as_ptr().cast::<T>().read_unaligned() }
}

/// The node operation `hipGraphNodeParams` describes (an allocation node is made by
/// `hipGraphAddNode` itself, which writes its address back).
///
/// # Safety
/// `p`'s union holds the parameters of its type (and a kernel's argument arrays as
/// `hipGraphAddKernelNode` takes them).
unsafe fn op_of(p: &hipGraphNodeParams) -> Result<NodeOp, Failure> {
    use crate::graph::node_type_6 as t;
    let op = match p.type_ {
        t::KERNEL => {
            // SAFETY: the caller's contract (for this and every read below).
            let k: crate::graph::hipKernelNodeParams = unsafe { member(p) };
            // SAFETY: forwarded.
            NodeOp::Kernel(unsafe { crate::graph::kernel_node(&k) }?)
        }
        t::MEMCPY => {
            // SAFETY: as above.
            let m: hipMemcpyNodeParams = unsafe { member(p) };
            if m.flags != 0 {
                return Err(Failure::new(
                    hipErrorInvalidValue,
                    format!("hipMemcpyNodeParams.flags {:#x}", m.flags),
                ));
            }
            NodeOp::Copy(crate::graph::copy3d_node(&m.copy)?)
        }
        t::MEMSET => {
            // SAFETY: as above.
            let m: crate::graph::hipMemsetParams = unsafe { member(p) };
            NodeOp::Memset(crate::graph::memset_node(&m)?)
        }
        t::HOST => {
            // SAFETY: as above.
            let h: crate::graph::hipHostNodeParams = unsafe { member(p) };
            NodeOp::Host(crate::graph::host_node(h.fn_, h.userData)?)
        }
        t::GRAPH => {
            // SAFETY: as above.
            let g: hipGraph_t = unsafe { member(p) };
            NodeOp::Child(graph_of(g)?.deep_clone().0)
        }
        t::EMPTY => NodeOp::Empty,
        t::WAIT_EVENT | t::EVENT_RECORD => {
            // SAFETY: as above.
            let e: hipEvent_t = unsafe { member(p) };
            if e.is_null() {
                return Err(Failure::null("event"));
            }
            let e = crate::stream::event_of(e)?;
            if p.type_ == t::WAIT_EVENT {
                NodeOp::EventWait(e)
            } else {
                NodeOp::EventRecord(e)
            }
        }
        t::EXT_SEMAPHORE_SIGNAL | t::EXT_SEMAPHORE_WAIT => {
            // SAFETY: as above.
            let m: crate::graph_nodes::hipExternalSemaphoreNodeParams = unsafe { member(p) };
            crate::graph_nodes::semaphore_op(&m, p.type_ == t::EXT_SEMAPHORE_WAIT)?
        }
        t::MEM_FREE => {
            // SAFETY: as above (`hipMemFreeNodeParams` is one pointer).
            let dptr: *mut c_void = unsafe { member(p) };
            NodeOp::MemFree(crate::graph_nodes::block_at(dptr)?)
        }
        t::BATCH_MEM_OP => {
            // SAFETY: as above.
            let m: crate::graph_nodes::hipBatchMemOpNodeParams = unsafe { member(p) };
            crate::graph_nodes::batch_node(&m)?
        }
        t::MEM_ALLOC => {
            // Made by hipGraphAddNode itself (it writes the address back); never replaced.
            return Err(Failure::new(
                hipErrorInvalidValue,
                "an allocation node's parameters cannot be set",
            ));
        }
        other => {
            return Err(Failure::new(
                hipErrorInvalidValue,
                format!("node type {other}"),
            ))
        }
    };
    Ok(op)
}

/// `hipError_t hipGraphAddNode(hipGraphNode_t* pGraphNode, hipGraph_t graph, const
/// hipGraphNode_t* pDependencies, size_t numDependencies, hipGraphNodeParams* nodeParams)`
/// (HIP 6.2): a node of any type rocload has, from the generic parameters.
#[export]
pub unsafe extern "C" fn hipGraphAddNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    params: *mut hipGraphNodeParams,
) -> hipError_t {
    call("hipGraphAddNode", || {
        if params.is_null() {
            return Err(Failure::null("nodeParams"));
        }
        // SAFETY: non-null, readable by the caller's contract.
        let p = unsafe { params.read_unaligned() };
        if p.type_ == crate::graph::node_type_6::MEM_ALLOC {
            // The address goes back into the caller's parameters.
            // SAFETY: the union at byte 16 holds `hipMemAllocNodeParams` for this type.
            let alloc = unsafe { params.cast::<u8>().add(16) }.cast();
            // SAFETY: forwarded.
            let code =
                unsafe { crate::graph_nodes::hipGraphAddMemAllocNode(out, graph, deps, n, alloc) };
            return match code {
                hipSuccess => Ok(()),
                code => Err(Failure::new(code, "adding the allocation node")),
            };
        }
        // SAFETY: HIP's contract on the parameters and the outputs.
        unsafe { crate::graph::add_node(out, graph, deps, n, || op_of(&p)) }
    })
}

/// Replaces a node's operation from generic parameters: the type must be the node's.
fn set_generic(
    node: hipGraphNode_t,
    exec: Option<hipGraphExec_t>,
    params: *mut hipGraphNodeParams,
) -> Result<(), Failure> {
    if params.is_null() {
        return Err(Failure::null("nodeParams"));
    }
    // SAFETY: non-null, readable by the caller's contract.
    let p = unsafe { params.read_unaligned() };
    let (_, _, old) = crate::graph::current_op(node, exec)?;
    let have = node_type(old.kind(), crate::generation::Generation::Hip7);
    if have != p.type_ {
        return Err(Failure::new(
            hipErrorInvalidValue,
            format!("node type {} given for a {} node", p.type_, old.kind()),
        ));
    }
    // SAFETY: HIP's contract on the parameters.
    let mut op = unsafe { op_of(&p) }?;
    if let (NodeOp::Kernel(new), NodeOp::Kernel(old)) = (&mut op, &old) {
        new.cooperative = old.cooperative;
        new.priority = old.priority;
    }
    crate::graph::set_node_op(node, exec, op)
}

/// `hipError_t hipGraphNodeSetParams(hipGraphNode_t, hipGraphNodeParams*)` (HIP 6.2).
#[export]
pub unsafe extern "C" fn hipGraphNodeSetParams(
    node: hipGraphNode_t,
    params: *mut hipGraphNodeParams,
) -> hipError_t {
    call("hipGraphNodeSetParams", || set_generic(node, None, params))
}

/// `hipError_t hipGraphExecNodeSetParams(hipGraphExec_t, hipGraphNode_t, hipGraphNodeParams*)`
/// (HIP 6.2): as the per-type executable calls (a copy keeps its direction, a child graph its
/// shape).
#[export]
pub unsafe extern "C" fn hipGraphExecNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    params: *mut hipGraphNodeParams,
) -> hipError_t {
    call("hipGraphExecNodeSetParams", || {
        set_generic(node, Some(exec), params)
    })
}
