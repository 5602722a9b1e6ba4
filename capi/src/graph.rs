//! Graphs: `hipGraph*` and `hipGraphExec*`. Graphs, nodes and executable graphs are handles
//! over the runtime's [`Graph`], [`Node`] and [`GraphExec`]; node handles are made when a
//! node is first handed out (a clone's or a capture's nodes too) and go with their node or
//! graph. Parameters cross the boundary in HIP 5.2's structures (`hipKernelNodeParams`,
//! `hipMemcpy3DParms`, `hipMemsetParams`, `hipHostNodeParams`); what a node keeps is what its
//! parameters said, with kernel argument values copied when the node is made, as HIP does.
//!
//! `hipGraphNodeGetType` numbers kinds as the caller's HIP generation does: HIP 5.2's numbering
//! (Debian's headers) for generation 5, HIP 5.5 and later's for 6 and 7, where a 1D copy
//! reports `hipGraphNodeTypeMemcpy` (within one soname the numbering changed at 5.3 and 5.5
//! and cannot be told apart; see `docs/runtime.md`). A copy node naming a `hipArray` is its
//! region of the array's pitched storage, resolved when the node is made.

use rocload_ffi::export;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::Arc;

use parking_lot::Mutex;
use rocload_lib::device::kernarg::explicit_args;
use rocload_lib::runtime::graph::{
    CopyForm, CopyNode, GraphError, HostNode, KernelArgs, KernelNode, MemsetNode, NodeId,
    PitchedPtr, UpdateResult,
};
use rocload_lib::runtime::{Graph, GraphExec, KernelRef, LaunchConfig, Node, NodeKind, NodeOp};

use crate::generation::{self, Generation};
use crate::launch::{dims, read_extra, read_pointers};
use crate::module::function_handle;
use crate::stream::{event_handle, event_of, stream_of};
use crate::*;

/// `hipGraph_t` handles: the graph, and whether a node owns it (a child graph, which only its
/// node's graph may destroy).
#[derive(Clone)]
struct GraphEntry {
    graph: Graph,
    owned: bool,
}

static GRAPHS: HandleTable<GraphEntry> = HandleTable::new(kind::GRAPH);
static NODES: HandleTable<Node> = HandleTable::new(kind::GRAPH_NODE);
static EXECS: HandleTable<GraphExec> = HandleTable::new(kind::GRAPH_EXEC);
/// The handle each node and graph was given, by id.
static NODE_HANDLES: Mutex<BTreeMap<NodeId, u64>> = Mutex::new(BTreeMap::new());
static GRAPH_HANDLES: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());

/// `hipGraphNodeType` in HIP 5.2's numbering.
mod node_type_5 {
    pub const KERNEL: i32 = 1;
    pub const MEMCPY: i32 = 2;
    pub const MEMSET: i32 = 3;
    pub const HOST: i32 = 4;
    pub const GRAPH: i32 = 5;
    pub const EMPTY: i32 = 6;
    pub const WAIT_EVENT: i32 = 7;
    pub const EVENT_RECORD: i32 = 8;
    pub const MEMCPY_1D: i32 = 9;
    pub const MEMCPY_FROM_SYMBOL: i32 = 10;
    pub const MEMCPY_TO_SYMBOL: i32 = 11;
}

/// `hipGraphNodeType` in HIP 5.5 and later's numbering (6.4's, 7.1's).
pub(crate) mod node_type_6 {
    pub const KERNEL: i32 = 0;
    pub const MEMCPY: i32 = 1;
    pub const MEMSET: i32 = 2;
    pub const HOST: i32 = 3;
    pub const GRAPH: i32 = 4;
    pub const EMPTY: i32 = 5;
    pub const WAIT_EVENT: i32 = 6;
    pub const EVENT_RECORD: i32 = 7;
    pub const EXT_SEMAPHORE_SIGNAL: i32 = 8;
    pub const EXT_SEMAPHORE_WAIT: i32 = 9;
    pub const MEM_ALLOC: i32 = 10;
    pub const MEM_FREE: i32 = 11;
    pub const MEMCPY_FROM_SYMBOL: i32 = 12;
    pub const MEMCPY_TO_SYMBOL: i32 = 13;
    pub const BATCH_MEM_OP: i32 = 14;
}

/// The kinds HIP 5.2 has no number for, numbered as 5.5 and later number them (a program using
/// them through `libamdhip64.so.5` was built with 5.3 or later headers).
fn later_node_type(kind: NodeKind) -> Option<c_int> {
    use node_type_6 as t;
    Some(match kind {
        NodeKind::SemaphoreSignal => t::EXT_SEMAPHORE_SIGNAL,
        NodeKind::SemaphoreWait => t::EXT_SEMAPHORE_WAIT,
        NodeKind::MemAlloc => t::MEM_ALLOC,
        NodeKind::MemFree => t::MEM_FREE,
        NodeKind::BatchMemOp => t::BATCH_MEM_OP,
        _ => return None,
    })
}

/// The `hipGraphNodeType` of `kind` for the caller's generation.
pub(crate) fn node_type(kind: NodeKind, g: Generation) -> c_int {
    if let Some(t) = later_node_type(kind) {
        return t;
    }
    if g == Generation::Hip5 {
        use node_type_5 as t;
        match kind {
            NodeKind::Kernel => t::KERNEL,
            NodeKind::Memcpy => t::MEMCPY,
            NodeKind::Memcpy1D => t::MEMCPY_1D,
            NodeKind::MemcpyFromSymbol => t::MEMCPY_FROM_SYMBOL,
            NodeKind::MemcpyToSymbol => t::MEMCPY_TO_SYMBOL,
            NodeKind::Memset => t::MEMSET,
            NodeKind::Host => t::HOST,
            NodeKind::Graph => t::GRAPH,
            NodeKind::Empty => t::EMPTY,
            NodeKind::EventWait => t::WAIT_EVENT,
            NodeKind::EventRecord => t::EVENT_RECORD,
            _ => t::EMPTY,
        }
    } else {
        use node_type_6 as t;
        match kind {
            NodeKind::Kernel => t::KERNEL,
            NodeKind::Memcpy | NodeKind::Memcpy1D => t::MEMCPY,
            NodeKind::MemcpyFromSymbol => t::MEMCPY_FROM_SYMBOL,
            NodeKind::MemcpyToSymbol => t::MEMCPY_TO_SYMBOL,
            NodeKind::Memset => t::MEMSET,
            NodeKind::Host => t::HOST,
            NodeKind::Graph => t::GRAPH,
            NodeKind::Empty => t::EMPTY,
            NodeKind::EventWait => t::WAIT_EVENT,
            NodeKind::EventRecord => t::EVENT_RECORD,
            _ => t::EMPTY,
        }
    }
}

// ------------------------------------------------------------------------------ C structures

/// `hipGraph_t`.
#[allow(non_camel_case_types)]
pub type hipGraph_t = *mut c_void;
/// `hipGraphNode_t`.
#[allow(non_camel_case_types)]
pub type hipGraphNode_t = *mut c_void;
/// `hipGraphExec_t`.
#[allow(non_camel_case_types)]
pub type hipGraphExec_t = *mut c_void;

/// `hipKernelNodeParams` (64 bytes, HIP's own field order, unchanged from 5.2 to 7.2).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipKernelNodeParams {
    /// Work-group size.
    pub blockDim: dim3,
    /// Packed arguments (`HIP_LAUNCH_PARAM_*` words), or NULL.
    pub extra: *mut *mut c_void,
    /// A `__global__` function's host stub or a `hipFunction_t`.
    pub func: *mut c_void,
    /// Grid in work-groups.
    pub gridDim: dim3,
    /// One pointer per argument, or NULL.
    pub kernelParams: *mut *mut c_void,
    /// Dynamic LDS bytes.
    pub sharedMemBytes: c_uint,
}
const _: () = assert!(std::mem::size_of::<hipKernelNodeParams>() == 64);
const _: () = assert!(std::mem::offset_of!(hipKernelNodeParams, extra) == 16);
const _: () = assert!(std::mem::offset_of!(hipKernelNodeParams, gridDim) == 32);
const _: () = assert!(std::mem::offset_of!(hipKernelNodeParams, sharedMemBytes) == 56);

/// `hipMemsetParams` (48 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipMemsetParams {
    /// First byte.
    pub dst: *mut c_void,
    /// 1, 2 or 4.
    pub elementSize: c_uint,
    /// Rows.
    pub height: usize,
    /// Bytes from row to row.
    pub pitch: usize,
    /// The element's value.
    pub value: c_uint,
    /// Elements per row.
    pub width: usize,
}
const _: () = assert!(std::mem::size_of::<hipMemsetParams>() == 48);
const _: () = assert!(std::mem::offset_of!(hipMemsetParams, value) == 32);

/// `hipHostNodeParams` (16 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipHostNodeParams {
    /// The function.
    pub fn_: hipHostFn_t,
    /// Its argument.
    pub userData: *mut c_void,
}
const _: () = assert!(std::mem::size_of::<hipHostNodeParams>() == 16);

/// The 3D copy structures, shared with the array API (`crate::array`).
pub use crate::array::{hipExtent, hipMemcpy3DParms, hipPitchedPtr, hipPos};

/// `hipErrorIllegalState`, `hipErrorGraphExecUpdateFailure` and the capture codes.
pub(crate) const hipErrorIllegalState: hipError_t = 401;
pub(crate) const hipErrorStreamCaptureUnsupported: hipError_t = 900;
pub(crate) const hipErrorGraphExecUpdateFailure: hipError_t = 910;

/// `hipGraphInstantiateFlagAutoFreeOnLaunch` (5.2) and `...UseNodePriority` (5.6): the flags
/// `hipGraphInstantiateWithFlags` takes, as clr does.
const INSTANTIATE_AUTO_FREE: u64 = 1;
const INSTANTIATE_USE_NODE_PRIORITY: u64 = 8;

// ------------------------------------------------------------------------------ handles

fn invalid(message: impl Into<String>) -> Failure {
    Failure::new(hipErrorInvalidValue, message)
}

/// The graph behind a handle.
pub(crate) fn graph_of(graph: hipGraph_t) -> Result<Graph, Failure> {
    graph_entry(graph).map(|e| e.graph)
}

fn graph_entry(graph: hipGraph_t) -> Result<GraphEntry, Failure> {
    if graph.is_null() {
        return Err(Failure::null("graph"));
    }
    GRAPHS
        .get(graph as u64)
        .ok_or_else(|| invalid(format!("{graph:p} is not a live graph")))
}

/// A node handle's node, checked to be still in its graph.
pub(crate) fn node_of(node: hipGraphNode_t) -> Result<(Graph, Node), Failure> {
    if node.is_null() {
        return Err(Failure::null("node"));
    }
    let n = NODES
        .get(node as u64)
        .ok_or_else(|| invalid(format!("{node:p} is not a live graph node")))?;
    let g = n.live_graph().map_err(graph_failure)?;
    Ok((g, n))
}

pub(crate) fn exec_of(exec: hipGraphExec_t) -> Result<GraphExec, Failure> {
    if exec.is_null() {
        return Err(Failure::null("graphExec"));
    }
    EXECS
        .get(exec as u64)
        .ok_or_else(|| invalid(format!("{exec:p} is not a live executable graph")))
}

/// The handle of `node`, made at its first use.
pub(crate) fn node_handle(node: &Node) -> Result<hipGraphNode_t, Failure> {
    let mut handles = NODE_HANDLES.lock();
    if let Some(&h) = handles.get(&node.id()) {
        if NODES.get(h).is_some() {
            return Ok(h as hipGraphNode_t);
        }
    }
    let h = NODES
        .insert(node.clone())
        .ok_or_else(|| Failure::new(hipErrorOutOfMemory, "2^24 graph nodes are live"))?;
    handles.insert(node.id(), h);
    Ok(h as hipGraphNode_t)
}

/// The handle of `graph`, made at its first use; `owned` for a graph a node owns.
pub(crate) fn graph_handle(graph: &Graph, owned: bool) -> Result<hipGraph_t, Failure> {
    let mut handles = GRAPH_HANDLES.lock();
    if let Some(&h) = handles.get(&graph.id()) {
        if GRAPHS.get(h).is_some() {
            return Ok(h as hipGraph_t);
        }
    }
    let h = GRAPHS
        .insert(GraphEntry {
            graph: graph.clone(),
            owned,
        })
        .ok_or_else(|| Failure::new(hipErrorOutOfMemory, "2^24 graphs are live"))?;
    handles.insert(graph.id(), h);
    Ok(h as hipGraph_t)
}

/// Forgets the handles of `graph`, its nodes and its child graphs (it is going).
pub(crate) fn forget(graph: &Graph) {
    for (g, ids) in graph.subgraphs() {
        let mut nodes = NODE_HANDLES.lock();
        for id in ids {
            if let Some(h) = nodes.remove(&id) {
                NODES.remove(h);
            }
            crate::graph_nodes::forget_copy(id);
        }
        drop(nodes);
        if let Some(h) = GRAPH_HANDLES.lock().remove(&g.id()) {
            GRAPHS.remove(h);
        }
    }
}

/// Forgets one node's handle (and, for a child graph node, its graph's).
fn forget_node(node: &Node, op: &NodeOp) {
    if let Some(h) = NODE_HANDLES.lock().remove(&node.id()) {
        NODES.remove(h);
    }
    crate::graph_nodes::forget_copy(node.id());
    if let NodeOp::Child(g) = op {
        forget(g);
    }
}

/// HIP's code for a graph error.
pub(crate) fn graph_failure(e: GraphError) -> Failure {
    RuntimeError::Graph(e).into()
}

/// Reads `n` node handles of `graph` from `p`.
///
/// # Safety
/// Non-null `p` points to `n` handles.
unsafe fn node_list(
    graph: &Graph,
    p: *const hipGraphNode_t,
    n: usize,
    what: &str,
) -> Result<Vec<Node>, Failure> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(Failure::null(what));
    }
    if n > rocload_lib::runtime::graph::MAX_NODES {
        return Err(invalid(format!(
            "{n} {what}: more nodes than a graph can hold"
        )));
    }
    let mut out = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| Failure::new(hipErrorOutOfMemory, format!("{n} {what}")))?;
    for i in 0..n {
        // SAFETY: `p` holds `n` handles by the caller's contract.
        let h = unsafe { *p.add(i) };
        let (g, node) = node_of(h)?;
        if !g.same(graph) {
            return Err(invalid(format!("{what}[{i}] is a node of another graph")));
        }
        out.push(node);
    }
    Ok(out)
}

/// Writes a list of nodes as HIP's query calls do: with `out` NULL only the count; otherwise
/// up to `*count` handles, NULL after the last node, and the count when it was larger.
///
/// # Safety
/// `count` is valid for reads and writes; non-null `out` for `*count` handles.
unsafe fn write_nodes(
    nodes: &[Node],
    out: *mut hipGraphNode_t,
    count: *mut usize,
) -> Result<(), Failure> {
    if count.is_null() {
        return Err(Failure::null("count"));
    }
    if out.is_null() {
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { count.write(nodes.len()) };
        return Ok(());
    }
    // SAFETY: readable by the caller's contract.
    let room = unsafe { count.read() };
    for i in 0..room {
        let h = match nodes.get(i) {
            Some(n) => node_handle(n)?,
            None => std::ptr::null_mut(),
        };
        // SAFETY: `out` holds `room` entries by the caller's contract.
        unsafe { out.add(i).write(h) };
    }
    if room > nodes.len() {
        // SAFETY: as above.
        unsafe { count.write(nodes.len()) };
    }
    Ok(())
}

/// Adds a node to a graph handle after the dependencies given, writing its handle.
///
/// # Safety
/// The pointers as HIP's `hipGraphAdd*Node` calls take them.
pub(crate) unsafe fn add_node(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    op: impl FnOnce() -> Result<NodeOp, Failure>,
) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::null("pGraphNode"));
    }
    let g = graph_of(graph)?;
    // SAFETY: the caller's contract.
    let deps = unsafe { node_list(&g, deps, n, "pDependencies") }?;
    let node = g.add(op()?, &deps).map_err(graph_failure)?;
    let h = node_handle(&node)?;
    // SAFETY: non-null, writable by the caller's contract.
    unsafe { out.write(h) };
    Ok(())
}

/// A node of the kind `want` accepts, else `hipErrorInvalidValue`.
pub(crate) fn node_of_kind(
    node: hipGraphNode_t,
    want: &[NodeKind],
    what: &str,
) -> Result<(Graph, Node), Failure> {
    let (g, n) = node_of(node)?;
    let kind = g.kind(&n).map_err(graph_failure)?;
    if !want.contains(&kind) {
        return Err(invalid(format!(
            "{node:p} is a {kind} node, not a {what} node"
        )));
    }
    Ok((g, n))
}

// ------------------------------------------------------------------------------ parameters

/// The kernel a node's `func` names: a `__global__` function's host stub on the current
/// device, or a `hipFunction_t`.
fn kernel_of(func: *const c_void) -> Result<KernelRef, Failure> {
    if func.is_null() {
        return Err(invalid("func is NULL"));
    }
    match runtime().kernel(func as usize, current_device()) {
        Ok(k) => Ok(k),
        Err(RuntimeError::NotFound { .. } | RuntimeError::UnknownFunction { .. }) => {
            function_handle(func as hipFunction_t).map_err(|_| {
                Failure::new(
                    hipErrorInvalidDeviceFunction,
                    format!("{func:p} is neither a registered kernel nor a function handle"),
                )
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// Copies argument values the way a launch reads them.
///
/// # Safety
/// `params` / `extra` as for `hipModuleLaunchKernel`.
unsafe fn copy_args(
    kernel: &KernelRef,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<KernelArgs, Failure> {
    if !params.is_null() && !extra.is_null() {
        return Err(invalid("both kernelParams and extra are given"));
    }
    if !extra.is_null() {
        // SAFETY: the caller's contract on `extra`.
        let packed = unsafe { read_extra(extra) }?;
        return Ok(KernelArgs::packed(packed.into()));
    }
    // SAFETY: the caller's contract on `params`.
    let values = unsafe { read_pointers(kernel, params) }?;
    debug_assert_eq!(values.len(), explicit_args(kernel.info()).count());
    Ok(KernelArgs::values(
        values.into_iter().map(Box::from).collect(),
    ))
}

/// A kernel node from `hipKernelNodeParams`: the function resolved, the configuration checked,
/// the argument values copied.
///
/// # Safety
/// The argument arrays as `hipModuleLaunchKernel` takes them.
pub(crate) unsafe fn kernel_node(p: &hipKernelNodeParams) -> Result<KernelNode, Failure> {
    let kernel = kernel_of(p.func)?;
    let config = LaunchConfig {
        grid: dims(p.gridDim),
        block: dims(p.blockDim),
        dynamic_lds: p.sharedMemBytes,
        partial: [0; 3],
    };
    kernel.check_launch(&config)?;
    // SAFETY: forwarded.
    let args = unsafe { copy_args(&kernel, p.kernelParams, p.extra) }?;
    Ok(KernelNode {
        kernel,
        config,
        args,
        cooperative: false,
        function: p.func as u64,
        priority: 0,
    })
}

/// A device-side range the runtime knows must lie inside its allocation.
fn check_range(address: u64, len: u64, what: &str) -> Result<(), Failure> {
    if len == 0 {
        return Ok(());
    }
    if let Some(info) = runtime().pointer_info(address) {
        if !info.allocation.contains(address, len) {
            return Err(invalid(format!(
                "{what}: {len} bytes at {address:#x} run past {}",
                info.allocation
            )));
        }
    }
    Ok(())
}

/// Checks a copy node's sides against the memory known now (the launch checks again).
fn check_copy(c: &CopyNode) -> Result<(), Failure> {
    let rows = c.rows().map_err(invalid)?;
    for (start, pitch, slice, what) in [
        (rows.dst, rows.dst_pitch, rows.dst_slice, "destination"),
        (rows.src, rows.src_pitch, rows.src_slice, "source"),
    ] {
        let span = rocload_lib::runtime::graph::CopyRows::span(
            pitch,
            slice,
            rows.width,
            rows.height,
            rows.depth,
        )
        .filter(|&s| start.checked_add(s).is_some())
        .ok_or_else(|| invalid(format!("the {what} extent overflows")))?;
        check_range(start, span, what)?;
    }
    Ok(())
}

/// A copy node from `hipMemcpy3DParms`.
pub(crate) fn copy3d_node(p: &hipMemcpy3DParms) -> Result<CopyNode, Failure> {
    crate::memory::check_kind(p.kind)?;
    if !p.srcArray.is_null() || !p.dstArray.is_null() {
        let c = crate::array::copy3d_array_node(p)?;
        check_copy(&c)?;
        return Ok(c);
    }
    if p.srcPtr.ptr.is_null() || p.dstPtr.ptr.is_null() {
        return Err(invalid("srcPtr.ptr or dstPtr.ptr is NULL"));
    }
    if p.srcPtr.pitch < p.srcPtr.xsize || p.dstPtr.pitch < p.dstPtr.xsize {
        return Err(Failure::new(
            hipErrorInvalidPitchValue,
            "a pitch is smaller than its pointer's width",
        ));
    }
    let e = p.extent;
    if e.width == 0 || e.height == 0 || e.depth == 0 {
        return Err(invalid(format!(
            "extent {}x{}x{} is empty",
            e.width, e.height, e.depth
        )));
    }
    if e.width
        .checked_add(p.dstPos.x)
        .is_none_or(|w| w > p.dstPtr.pitch)
        || e.width
            .checked_add(p.srcPos.x)
            .is_none_or(|w| w > p.srcPtr.pitch)
    {
        return Err(invalid("a row runs past its pitch"));
    }
    let pitched = |q: &hipPitchedPtr| PitchedPtr {
        ptr: q.ptr as u64,
        pitch: q.pitch as u64,
        xsize: q.xsize as u64,
        ysize: q.ysize as u64,
    };
    let pos = |q: &hipPos| [q.x as u64, q.y as u64, q.z as u64];
    let c = CopyNode {
        form: CopyForm::Pitched {
            src: pitched(&p.srcPtr),
            src_pos: pos(&p.srcPos),
            dst: pitched(&p.dstPtr),
            dst_pos: pos(&p.dstPos),
            extent: [e.width as u64, e.height as u64, e.depth as u64],
        },
        kind: p.kind,
    };
    check_copy(&c)?;
    Ok(c)
}

/// A linear copy node.
fn copy1d_node(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
) -> Result<CopyNode, Failure> {
    crate::memory::check_kind(kind)?;
    if dst.is_null() || src.is_null() {
        return Err(invalid("dst or src is NULL"));
    }
    if count == 0 {
        return Err(invalid("count is 0"));
    }
    crate::memory::check_sides(dst, src, kind)?;
    let c = CopyNode {
        form: CopyForm::Linear {
            dst: dst as u64,
            src: src as u64,
            len: count as u64,
        },
        kind,
    };
    check_copy(&c)?;
    Ok(c)
}

/// A copy out of a device variable (resolved on the current device).
fn from_symbol_node(
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: c_int,
) -> Result<CopyNode, Failure> {
    crate::memory::check_kind(kind)?;
    if dst.is_null() || count == 0 {
        return Err(invalid("dst is NULL or count is 0"));
    }
    let address = crate::symbol::symbol_range(symbol, count, offset)?;
    // As hipMemcpyFromSymbol: a side the kind says is the device's must be device memory.
    crate::memory::check_sides(dst, address as *const c_void, kind)?;
    let c = CopyNode {
        form: CopyForm::FromSymbol {
            dst: dst as u64,
            symbol: symbol as u64,
            address,
            offset: offset as u64,
            len: count as u64,
        },
        kind,
    };
    check_copy(&c)?;
    Ok(c)
}

/// A copy into a device variable.
fn to_symbol_node(
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: c_int,
) -> Result<CopyNode, Failure> {
    crate::memory::check_kind(kind)?;
    if src.is_null() || count == 0 {
        return Err(invalid("src is NULL or count is 0"));
    }
    let address = crate::symbol::symbol_range(symbol, count, offset)?;
    // As hipMemcpyToSymbol: a side the kind says is the device's must be device memory (a
    // variable's host shadow, `HIP_SYMBOL(v)`, is not).
    crate::memory::check_sides(address as *const c_void, src, kind)?;
    let c = CopyNode {
        form: CopyForm::ToSymbol {
            symbol: symbol as u64,
            address,
            src: src as u64,
            offset: offset as u64,
            len: count as u64,
        },
        kind,
    };
    check_copy(&c)?;
    Ok(c)
}

/// A fill node from `hipMemsetParams`, checked as clr checks it.
pub(crate) fn memset_node(p: &hipMemsetParams) -> Result<MemsetNode, Failure> {
    if p.dst.is_null() {
        return Err(invalid("dst is NULL"));
    }
    let element_size = match p.elementSize {
        1 => 1u8,
        2 => 2,
        4 => 4,
        other => return Err(invalid(format!("elementSize {other}: 1, 2 or 4"))),
    };
    if p.width == 0 || p.height == 0 {
        return Err(invalid(format!("{} x {} elements", p.width, p.height)));
    }
    let m = MemsetNode {
        dst: p.dst as u64,
        value: p.value,
        element_size,
        width: p.width as u64,
        height: p.height as u64,
        pitch: p.pitch as u64,
    };
    let row = m
        .row_bytes()
        .ok_or_else(|| invalid("the row's size overflows"))?;
    if m.height > 1 && m.pitch < row {
        return Err(invalid(format!(
            "pitch {} is smaller than a row's {row} bytes",
            m.pitch
        )));
    }
    let span = rocload_lib::runtime::graph::CopyRows::span(m.pitch, 0, row, m.height, 1)
        .filter(|&s| m.dst.checked_add(s).is_some())
        .ok_or_else(|| invalid("the fill's extent overflows"))?;
    check_range(m.dst, span, "fill")?;
    Ok(m)
}

/// A pointer the host function gets back, run on the queue's thread (the caller vouches).
struct UserData(*mut c_void);
// SAFETY: HIP hands the user's pointer to the function on another thread by definition.
unsafe impl Send for UserData {}
// SAFETY: as above; the runtime only passes the pointer on.
unsafe impl Sync for UserData {}

/// A host node calling `f(data)`.
pub(crate) fn host_node(f: hipHostFn_t, data: *mut c_void) -> Result<HostNode, Failure> {
    let Some(fun) = f else {
        return Err(invalid("fn is NULL"));
    };
    let user = UserData(data);
    Ok(HostNode {
        call: Arc::new(move || {
            let user = &user;
            // SAFETY: the application's function with its own data, as HIP calls it.
            unsafe { fun(user.0) }
        }),
        function: fun as usize as u64,
        data: data as u64,
    })
}

fn host_params(p: *const hipHostNodeParams) -> Result<HostNode, Failure> {
    if p.is_null() {
        return Err(Failure::null("pNodeParams"));
    }
    // SAFETY: non-null, readable by the caller's contract.
    let p = unsafe { p.read_unaligned() };
    host_node(p.fn_, p.userData)
}

/// The `hipMemcpy3DParms` describing a copy node (a linear one as one row).
fn copy_params(c: &CopyNode) -> hipMemcpy3DParms {
    let linear = |dst: u64, src: u64, len: u64| {
        let ptr = |p: u64| hipPitchedPtr {
            ptr: p as *mut c_void,
            pitch: len as usize,
            xsize: len as usize,
            ysize: 1,
        };
        (
            ptr(src),
            hipPos::default(),
            ptr(dst),
            hipPos::default(),
            hipExtent {
                width: len as usize,
                height: 1,
                depth: 1,
            },
        )
    };
    let (src, src_pos, dst, dst_pos, extent) = match c.form {
        CopyForm::Linear { dst, src, len } => linear(dst, src, len),
        CopyForm::FromSymbol {
            dst, address, len, ..
        } => linear(dst, address, len),
        CopyForm::ToSymbol {
            address, src, len, ..
        } => linear(address, src, len),
        CopyForm::Pitched {
            src,
            src_pos,
            dst,
            dst_pos,
            extent,
        } => {
            let ptr = |p: PitchedPtr| hipPitchedPtr {
                ptr: p.ptr as *mut c_void,
                pitch: p.pitch as usize,
                xsize: p.xsize as usize,
                ysize: p.ysize as usize,
            };
            let pos = |p: [u64; 3]| hipPos {
                x: p[0] as usize,
                y: p[1] as usize,
                z: p[2] as usize,
            };
            (
                ptr(src),
                pos(src_pos),
                ptr(dst),
                pos(dst_pos),
                hipExtent {
                    width: extent[0] as usize,
                    height: extent[1] as usize,
                    depth: extent[2] as usize,
                },
            )
        }
    };
    hipMemcpy3DParms {
        srcArray: std::ptr::null_mut(),
        srcPos: src_pos,
        srcPtr: src,
        dstArray: std::ptr::null_mut(),
        dstPos: dst_pos,
        dstPtr: dst,
        extent,
        kind: c.kind,
    }
}

/// Reads a C structure argument.
///
/// # Safety
/// Non-null `p` points to a `T`.
unsafe fn read<T: Copy>(p: *const T, what: &str) -> Result<T, Failure> {
    if p.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-null, readable by the caller's contract.
    Ok(unsafe { p.read_unaligned() })
}

/// Sets a node's operation (graph or executable), mapping errors to HIP's codes.
pub(crate) fn set_node_op(
    node: hipGraphNode_t,
    exec: Option<hipGraphExec_t>,
    op: NodeOp,
) -> Result<(), Failure> {
    let (g, n) = node_of(node)?;
    match exec {
        None => g.set_op(&n, op).map(drop).map_err(graph_failure),
        Some(e) => exec_of(e)?.set_op(&n, op).map_err(graph_failure),
    }
}

/// The node's operation, as set in the executable when one is given.
pub(crate) fn current_op(
    node: hipGraphNode_t,
    exec: Option<hipGraphExec_t>,
) -> Result<(Graph, Node, NodeOp), Failure> {
    let (g, n) = node_of(node)?;
    let op = match exec {
        None => g.op(&n),
        Some(e) => exec_of(e)?.op(&n),
    }
    .map_err(graph_failure)?;
    Ok((g, n, op))
}

// ------------------------------------------------------------------------------ graphs

/// `hipError_t hipGraphCreate(hipGraph_t* pGraph, unsigned int flags)`: flags must be 0.
#[export]
pub unsafe extern "C" fn hipGraphCreate(p_graph: *mut hipGraph_t, flags: c_uint) -> hipError_t {
    call("hipGraphCreate", || {
        if p_graph.is_null() {
            return Err(Failure::null("pGraph"));
        }
        if flags != 0 {
            return Err(invalid(format!("flags {flags:#x} must be 0")));
        }
        let h = graph_handle(&Graph::new(), false)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { p_graph.write(h) };
        Ok(())
    })
}

/// `hipError_t hipGraphDestroy(hipGraph_t graph)`: the graph, its nodes and child graphs;
/// executable graphs made from it are not affected. A destroyed graph's handle is
/// `hipErrorIllegalState`, as clr reports it; a child graph a node owns cannot be destroyed.
#[export]
pub unsafe extern "C" fn hipGraphDestroy(graph: hipGraph_t) -> hipError_t {
    call("hipGraphDestroy", || {
        if graph.is_null() {
            return Err(Failure::null("graph"));
        }
        let entry = GRAPHS.get(graph as u64).ok_or_else(|| {
            Failure::new(
                hipErrorIllegalState,
                format!("{graph:p} is not a live graph"),
            )
        })?;
        if entry.owned {
            return Err(invalid(
                "the graph belongs to a child graph node; destroy its node or parent graph",
            ));
        }
        forget(&entry.graph);
        GRAPHS.remove(graph as u64);
        Ok(())
    })
}

/// `hipError_t hipGraphAddDependencies(hipGraph_t, const hipGraphNode_t* from, const
/// hipGraphNode_t* to, size_t numDependencies)`: all or none; a cycle is found at
/// instantiation.
#[export]
pub unsafe extern "C" fn hipGraphAddDependencies(
    graph: hipGraph_t,
    from: *const hipGraphNode_t,
    to: *const hipGraphNode_t,
    n: usize,
) -> hipError_t {
    call("hipGraphAddDependencies", || {
        let g = graph_of(graph)?;
        if n == 0 {
            return Ok(());
        }
        // SAFETY: `n` handles each by the caller's contract.
        let (f, t) = unsafe { (node_list(&g, from, n, "from")?, node_list(&g, to, n, "to")?) };
        g.add_edges(&f.into_iter().zip(t).collect::<Vec<_>>())
            .map_err(graph_failure)
    })
}

/// `hipError_t hipGraphRemoveDependencies(hipGraph_t, const hipGraphNode_t* from, const
/// hipGraphNode_t* to, size_t numDependencies)`.
#[export]
pub unsafe extern "C" fn hipGraphRemoveDependencies(
    graph: hipGraph_t,
    from: *const hipGraphNode_t,
    to: *const hipGraphNode_t,
    n: usize,
) -> hipError_t {
    call("hipGraphRemoveDependencies", || {
        let g = graph_of(graph)?;
        if n == 0 {
            return Ok(());
        }
        // SAFETY: `n` handles each by the caller's contract.
        let (f, t) = unsafe { (node_list(&g, from, n, "from")?, node_list(&g, to, n, "to")?) };
        g.remove_edges(&f.into_iter().zip(t).collect::<Vec<_>>())
            .map_err(graph_failure)
    })
}

/// `hipError_t hipGraphGetEdges(hipGraph_t, hipGraphNode_t* from, hipGraphNode_t* to, size_t*
/// numEdges)`: both arrays NULL for the count only.
#[export]
pub unsafe extern "C" fn hipGraphGetEdges(
    graph: hipGraph_t,
    from: *mut hipGraphNode_t,
    to: *mut hipGraphNode_t,
    num: *mut usize,
) -> hipError_t {
    call("hipGraphGetEdges", || {
        let g = graph_of(graph)?;
        if num.is_null() {
            return Err(Failure::null("numEdges"));
        }
        if from.is_null() != to.is_null() {
            return Err(invalid("from and to must both be NULL or both be arrays"));
        }
        let edges = g.edges();
        if from.is_null() {
            // SAFETY: non-null, writable by the caller's contract.
            unsafe { num.write(edges.len()) };
            return Ok(());
        }
        // SAFETY: readable by the caller's contract.
        let room = unsafe { num.read() };
        for i in 0..room {
            let (f, t) = match edges.get(i) {
                Some((f, t)) => (node_handle(f)?, node_handle(t)?),
                None => (std::ptr::null_mut(), std::ptr::null_mut()),
            };
            // SAFETY: both arrays hold `*numEdges` entries by the caller's contract.
            unsafe {
                from.add(i).write(f);
                to.add(i).write(t);
            }
        }
        if room > edges.len() {
            // SAFETY: as above.
            unsafe { num.write(edges.len()) };
        }
        Ok(())
    })
}

/// `hipError_t hipGraphGetNodes(hipGraph_t, hipGraphNode_t* nodes, size_t* numNodes)`: in an
/// order where each node comes after its dependencies.
#[export]
pub unsafe extern "C" fn hipGraphGetNodes(
    graph: hipGraph_t,
    nodes: *mut hipGraphNode_t,
    num: *mut usize,
) -> hipError_t {
    call("hipGraphGetNodes", || {
        let g = graph_of(graph)?;
        // SAFETY: the caller's contract.
        unsafe { write_nodes(&g.nodes(), nodes, num) }
    })
}

/// `hipError_t hipGraphGetRootNodes(hipGraph_t, hipGraphNode_t* pRootNodes, size_t*
/// pNumRootNodes)`.
#[export]
pub unsafe extern "C" fn hipGraphGetRootNodes(
    graph: hipGraph_t,
    nodes: *mut hipGraphNode_t,
    num: *mut usize,
) -> hipError_t {
    call("hipGraphGetRootNodes", || {
        let g = graph_of(graph)?;
        // SAFETY: the caller's contract.
        unsafe { write_nodes(&g.root_nodes(), nodes, num) }
    })
}

/// `hipError_t hipGraphNodeGetDependencies(hipGraphNode_t, hipGraphNode_t* pDependencies,
/// size_t* pNumDependencies)`.
#[export]
pub unsafe extern "C" fn hipGraphNodeGetDependencies(
    node: hipGraphNode_t,
    deps: *mut hipGraphNode_t,
    num: *mut usize,
) -> hipError_t {
    call("hipGraphNodeGetDependencies", || {
        let (g, n) = node_of(node)?;
        let list = g.dependencies(&n).map_err(graph_failure)?;
        // SAFETY: the caller's contract.
        unsafe { write_nodes(&list, deps, num) }
    })
}

/// `hipError_t hipGraphNodeGetDependentNodes(hipGraphNode_t, hipGraphNode_t*
/// pDependentNodes, size_t* pNumDependentNodes)`.
#[export]
pub unsafe extern "C" fn hipGraphNodeGetDependentNodes(
    node: hipGraphNode_t,
    deps: *mut hipGraphNode_t,
    num: *mut usize,
) -> hipError_t {
    call("hipGraphNodeGetDependentNodes", || {
        let (g, n) = node_of(node)?;
        let list = g.dependents(&n).map_err(graph_failure)?;
        // SAFETY: the caller's contract.
        unsafe { write_nodes(&list, deps, num) }
    })
}

/// `hipError_t hipGraphNodeGetType(hipGraphNode_t, hipGraphNodeType* pType)`: numbered as the
/// caller's HIP generation numbers them (see the module documentation).
#[export]
pub unsafe extern "C" fn hipGraphNodeGetType(
    node: hipGraphNode_t,
    p_type: *mut c_int,
) -> hipError_t {
    call("hipGraphNodeGetType", || {
        let (g, n) = node_of(node)?;
        let kind = g.kind(&n).map_err(graph_failure)?;
        // SAFETY: writable by the caller's contract (NULL rejected).
        unsafe { out(p_type, "pType", node_type(kind, generation::current())) }
    })
}

/// `hipError_t hipGraphDestroyNode(hipGraphNode_t)`: the node and its edges.
#[export]
pub unsafe extern "C" fn hipGraphDestroyNode(node: hipGraphNode_t) -> hipError_t {
    call("hipGraphDestroyNode", || {
        let (g, n) = node_of(node)?;
        let op = g.remove(&n).map_err(graph_failure)?;
        forget_node(&n, &op);
        Ok(())
    })
}

/// `hipError_t hipGraphClone(hipGraph_t* pGraphClone, hipGraph_t originalGraph)`.
#[export]
pub unsafe extern "C" fn hipGraphClone(
    p_clone: *mut hipGraph_t,
    original: hipGraph_t,
) -> hipError_t {
    call("hipGraphClone", || {
        if p_clone.is_null() {
            return Err(Failure::null("pGraphClone"));
        }
        let g = graph_of(original)?;
        let (clone, _) = g.deep_clone();
        let h = graph_handle(&clone, false)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { p_clone.write(h) };
        Ok(())
    })
}

/// `hipError_t hipGraphNodeFindInClone(hipGraphNode_t* pNode, hipGraphNode_t originalNode,
/// hipGraph_t clonedGraph)`.
#[export]
pub unsafe extern "C" fn hipGraphNodeFindInClone(
    p_node: *mut hipGraphNode_t,
    original: hipGraphNode_t,
    cloned: hipGraph_t,
) -> hipError_t {
    call("hipGraphNodeFindInClone", || {
        if p_node.is_null() {
            return Err(Failure::null("pNode"));
        }
        let (_, n) = node_of(original)?;
        let g = graph_of(cloned)?;
        let found = g.find_in_clone(&n).map_err(graph_failure)?;
        let h = node_handle(&found)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { p_node.write(h) };
        Ok(())
    })
}

// ------------------------------------------------------------------------------ executables

/// Instantiates, writing the error node and the message on failure.
///
/// # Safety
/// Non-null outputs are writable; `log` holds `log_size` bytes.
pub(crate) unsafe fn instantiate(
    p_exec: *mut hipGraphExec_t,
    graph: hipGraph_t,
    flags: u64,
    error_node: *mut hipGraphNode_t,
    log: *mut c_char,
    log_size: usize,
) -> Result<(), Failure> {
    if p_exec.is_null() {
        return Err(Failure::null("pGraphExec"));
    }
    let g = graph_of(graph)?;
    match GraphExec::instantiate(&g, flags) {
        Ok(exec) => {
            let h = EXECS.insert(exec).ok_or_else(|| {
                Failure::new(hipErrorOutOfMemory, "2^24 executable graphs are live")
            })?;
            // SAFETY: non-null, writable by the caller's contract.
            unsafe {
                p_exec.write(h as hipGraphExec_t);
                if !error_node.is_null() {
                    error_node.write(std::ptr::null_mut());
                }
            }
            if !log.is_null() && log_size > 0 {
                // SAFETY: `log` holds `log_size` bytes by the caller's contract.
                unsafe { log.write(0) };
            }
            Ok(())
        }
        Err(e) => {
            let message = e.error.to_string();
            if !error_node.is_null() {
                let h = match &e.node {
                    Some(n) => node_handle(n)?,
                    None => std::ptr::null_mut(),
                };
                // SAFETY: non-null, writable by the caller's contract.
                unsafe { error_node.write(h) };
            }
            if !log.is_null() && log_size > 0 {
                // SAFETY: `log` holds `log_size` bytes by the caller's contract.
                let buffer = unsafe { std::slice::from_raw_parts_mut(log, log_size) };
                copy_c_string(buffer, &message);
            }
            Err(graph_failure(e.error))
        }
    }
}

/// `hipError_t hipGraphInstantiate(hipGraphExec_t* pGraphExec, hipGraph_t graph,
/// hipGraphNode_t* pErrorNode, char* pLogBuffer, size_t bufferSize)`: checks the graph (a
/// cycle, in it or a child graph, is `hipErrorInvalidValue`, with the node in `pErrorNode` and
/// the reason in the log buffer).
#[export]
pub unsafe extern "C" fn hipGraphInstantiate(
    p_exec: *mut hipGraphExec_t,
    graph: hipGraph_t,
    error_node: *mut hipGraphNode_t,
    log: *mut c_char,
    log_size: usize,
) -> hipError_t {
    call("hipGraphInstantiate", || {
        // SAFETY: HIP's contract on the outputs.
        unsafe { instantiate(p_exec, graph, 0, error_node, log, log_size) }
    })
}

/// `hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t*, hipGraph_t, unsigned long long
/// flags)`: 0, `hipGraphInstantiateFlagAutoFreeOnLaunch` or `...UseNodePriority` (graphs here
/// allocate nothing to free, and nodes have no priorities: both change nothing).
#[export]
pub unsafe extern "C" fn hipGraphInstantiateWithFlags(
    p_exec: *mut hipGraphExec_t,
    graph: hipGraph_t,
    flags: u64,
) -> hipError_t {
    call("hipGraphInstantiateWithFlags", || {
        if ![0, INSTANTIATE_AUTO_FREE, INSTANTIATE_USE_NODE_PRIORITY].contains(&flags) {
            return Err(invalid(format!("instantiate flags {flags:#x}")));
        }
        // SAFETY: HIP's contract on the outputs.
        unsafe {
            instantiate(
                p_exec,
                graph,
                flags,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
            )
        }
    })
}

/// Launches `exec` on `stream`; into a capturing stream, a child graph node of its graph.
pub(crate) fn launch_exec(exec: hipGraphExec_t, stream: hipStream_t) -> Result<(), Failure> {
    let e = exec_of(exec)?;
    let s = stream_of(stream)?;
    if let Some(c) = crate::capture::intercept(&s, "launching a graph")? {
        let child = e.graph();
        c.add(&s, NodeOp::Child(child))?;
        return Ok(());
    }
    Ok(e.launch(runtime(), &s)?)
}

/// `hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream)`: runs the graph
/// after the stream's earlier work and before its later work; may be called again before the
/// last launch finishes.
#[export]
pub unsafe extern "C" fn hipGraphLaunch(exec: hipGraphExec_t, stream: hipStream_t) -> hipError_t {
    call("hipGraphLaunch", || launch_exec(exec, stream))
}

/// `hipError_t hipGraphExecDestroy(hipGraphExec_t)`: launches in flight finish (they hold
/// what they use).
#[export]
pub unsafe extern "C" fn hipGraphExecDestroy(exec: hipGraphExec_t) -> hipError_t {
    call("hipGraphExecDestroy", || {
        if exec.is_null() {
            return Err(Failure::null("graphExec"));
        }
        EXECS
            .remove(exec as u64)
            .map(drop)
            .ok_or_else(|| invalid(format!("{exec:p} is not a live executable graph")))
    })
}

/// `hipError_t hipGraphExecUpdate(hipGraphExec_t hGraphExec, hipGraph_t hGraph,
/// hipGraphNode_t* hErrorNode_out, hipGraphExecUpdateResult* updateResult_out)`: takes
/// `hGraph`'s parameters when it has the executable's shape; otherwise
/// `hipErrorGraphExecUpdateFailure` with HIP's result and the node where it differs.
#[export]
pub unsafe extern "C" fn hipGraphExecUpdate(
    exec: hipGraphExec_t,
    graph: hipGraph_t,
    error_node: *mut hipGraphNode_t,
    result: *mut c_int,
) -> hipError_t {
    call("hipGraphExecUpdate", || {
        if error_node.is_null() || result.is_null() {
            return Err(Failure::null("hErrorNode_out or updateResult_out"));
        }
        let e = exec_of(exec)?;
        let g = graph_of(graph)?;
        match e.update(&g) {
            Ok(()) => {
                // SAFETY: non-null, writable by the caller's contract.
                unsafe {
                    result.write(UpdateResult::Success as c_int);
                    error_node.write(std::ptr::null_mut());
                }
                Ok(())
            }
            Err(err) => {
                let (r, node) = match &err {
                    GraphError::Update { result, node, .. } => (*result, *node),
                    _ => (UpdateResult::Error, None),
                };
                let h = match node.and_then(|id| g.node_by_id(id)) {
                    Some(n) => node_handle(&n)?,
                    None => std::ptr::null_mut(),
                };
                // SAFETY: non-null, writable by the caller's contract.
                unsafe {
                    result.write(r as c_int);
                    error_node.write(h);
                }
                Err(graph_failure(err))
            }
        }
    })
}

// ------------------------------------------------------------------------------ kernel nodes

/// `hipError_t hipGraphAddKernelNode(hipGraphNode_t* pGraphNode, hipGraph_t graph, const
/// hipGraphNode_t* pDependencies, size_t numDependencies, const hipKernelNodeParams*
/// pNodeParams)`: the function is resolved on the current device and the argument values are
/// copied now.
#[export]
pub unsafe extern "C" fn hipGraphAddKernelNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    params: *const hipKernelNodeParams,
) -> hipError_t {
    call("hipGraphAddKernelNode", || {
        // SAFETY: HIP's contract on the parameters and their argument arrays.
        unsafe {
            let p = read(params, "pNodeParams")?;
            add_node(out, graph, deps, n, || Ok(NodeOp::Kernel(kernel_node(&p)?)))
        }
    })
}

/// Writes a kernel node's parameters: `kernelParams` (or `extra`) point to the node's own
/// copies of the values, valid until its parameters change.
fn write_kernel_params(g: &Graph, n: &Node, p: *mut hipKernelNodeParams) -> Result<(), Failure> {
    if p.is_null() {
        return Err(Failure::null("pNodeParams"));
    }
    let fill = |op: &NodeOp| -> Result<hipKernelNodeParams, Failure> {
        let NodeOp::Kernel(k) = op else {
            return Err(invalid(format!(
                "node {} is a {} node, not a kernel node",
                n.id(),
                op.kind()
            )));
        };
        let table = k.args.table_address() as *mut *mut c_void;
        let d = |v: [u32; 3]| dim3 {
            x: v[0],
            y: v[1],
            z: v[2],
        };
        Ok(hipKernelNodeParams {
            blockDim: d(k.config.block),
            gridDim: d(k.config.grid),
            sharedMemBytes: k.config.dynamic_lds,
            func: k.function as *mut c_void,
            kernelParams: if k.args.is_packed() {
                std::ptr::null_mut()
            } else {
                table
            },
            extra: if k.args.is_packed() {
                table
            } else {
                std::ptr::null_mut()
            },
        })
    };
    let v = g.with_op(n, fill).map_err(graph_failure)??;
    // SAFETY: non-null, writable by the caller's contract.
    unsafe { p.write_unaligned(v) };
    Ok(())
}

/// `hipError_t hipGraphKernelNodeGetParams(hipGraphNode_t, hipKernelNodeParams*)`.
#[export]
pub unsafe extern "C" fn hipGraphKernelNodeGetParams(
    node: hipGraphNode_t,
    params: *mut hipKernelNodeParams,
) -> hipError_t {
    call("hipGraphKernelNodeGetParams", || {
        let (g, n) = node_of_kind(node, &[NodeKind::Kernel], "kernel")?;
        write_kernel_params(&g, &n, params)
    })
}

/// Replaces a kernel node's launch (in the graph, or in an executable graph), keeping its
/// cooperative attribute.
///
/// # Safety
/// HIP's contract on the parameters.
unsafe fn set_kernel(
    node: hipGraphNode_t,
    exec: Option<hipGraphExec_t>,
    params: *const hipKernelNodeParams,
) -> Result<(), Failure> {
    // SAFETY: forwarded.
    let p = unsafe { read(params, "pNodeParams") }?;
    let (_, _, old) = current_op(node, exec)?;
    let NodeOp::Kernel(old) = old else {
        return Err(invalid(format!(
            "{node:p} is a {} node, not a kernel node",
            old.kind()
        )));
    };
    // SAFETY: forwarded.
    let mut k = unsafe { kernel_node(&p) }?;
    k.cooperative = old.cooperative;
    k.priority = old.priority;
    set_node_op(node, exec, NodeOp::Kernel(k))
}

/// `hipError_t hipGraphKernelNodeSetParams(hipGraphNode_t, const hipKernelNodeParams*)`.
#[export]
pub unsafe extern "C" fn hipGraphKernelNodeSetParams(
    node: hipGraphNode_t,
    params: *const hipKernelNodeParams,
) -> hipError_t {
    // SAFETY: HIP's contract.
    call("hipGraphKernelNodeSetParams", || unsafe {
        set_kernel(node, None, params)
    })
}

/// `hipError_t hipGraphExecKernelNodeSetParams(hipGraphExec_t, hipGraphNode_t, const
/// hipKernelNodeParams*)`: for later launches of the executable (a new kernarg segment;
/// launches in flight keep theirs).
#[export]
pub unsafe extern "C" fn hipGraphExecKernelNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    params: *const hipKernelNodeParams,
) -> hipError_t {
    // SAFETY: HIP's contract.
    call("hipGraphExecKernelNodeSetParams", || unsafe {
        set_kernel(node, Some(exec), params)
    })
}

// ------------------------------------------------------------------------------ copy nodes

/// `hipError_t hipGraphAddMemcpyNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*,
/// size_t, const hipMemcpy3DParms* pCopyParams)`: pitched copies between pointers and arrays.
#[export]
pub unsafe extern "C" fn hipGraphAddMemcpyNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    params: *const hipMemcpy3DParms,
) -> hipError_t {
    call("hipGraphAddMemcpyNode", || {
        // SAFETY: HIP's contract.
        unsafe {
            let p = read(params, "pCopyParams")?;
            add_node(out, graph, deps, n, || Ok(NodeOp::Copy(copy3d_node(&p)?)))
        }
    })
}

/// `hipError_t hipGraphMemcpyNodeGetParams(hipGraphNode_t, hipMemcpy3DParms*)`: a linear or
/// symbol copy is described as one row.
#[export]
pub unsafe extern "C" fn hipGraphMemcpyNodeGetParams(
    node: hipGraphNode_t,
    params: *mut hipMemcpy3DParms,
) -> hipError_t {
    call("hipGraphMemcpyNodeGetParams", || {
        if params.is_null() {
            return Err(Failure::null("pNodeParams"));
        }
        let (_, _, op) = current_op(node, None)?;
        let NodeOp::Copy(c) = op else {
            return Err(invalid(format!(
                "{node:p} is a {} node, not a memcpy node",
                op.kind()
            )));
        };
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { params.write_unaligned(copy_params(&c)) };
        Ok(())
    })
}

fn set_copy(
    node: hipGraphNode_t,
    exec: Option<hipGraphExec_t>,
    c: CopyNode,
) -> Result<(), Failure> {
    let (_, _, old) = current_op(node, exec)?;
    if !matches!(old.kind(), NodeKind::Memcpy | NodeKind::Memcpy1D)
        || old.kind() != c.kind() && exec.is_some()
    {
        return Err(invalid(format!(
            "{node:p} is a {} node; this call sets a {}",
            old.kind(),
            c.kind()
        )));
    }
    set_node_op(node, exec, NodeOp::Copy(c))
}

/// `hipError_t hipGraphMemcpyNodeSetParams(hipGraphNode_t, const hipMemcpy3DParms*)`.
#[export]
pub unsafe extern "C" fn hipGraphMemcpyNodeSetParams(
    node: hipGraphNode_t,
    params: *const hipMemcpy3DParms,
) -> hipError_t {
    call("hipGraphMemcpyNodeSetParams", || {
        // SAFETY: HIP's contract.
        let p = unsafe { read(params, "pNodeParams") }?;
        set_copy(node, None, copy3d_node(&p)?)
    })
}

/// `hipError_t hipGraphExecMemcpyNodeSetParams(hipGraphExec_t, hipGraphNode_t,
/// hipMemcpy3DParms*)`: the direction (`kind`) cannot change.
#[export]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    params: *mut hipMemcpy3DParms,
) -> hipError_t {
    call("hipGraphExecMemcpyNodeSetParams", || {
        // SAFETY: HIP's contract.
        let p = unsafe { read(params.cast_const(), "pNodeParams") }?;
        set_copy(node, Some(exec), copy3d_node(&p)?)
    })
}

/// `hipError_t hipGraphAddMemcpyNode1D(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*,
/// size_t, void* dst, const void* src, size_t count, hipMemcpyKind kind)`.
#[export]
pub unsafe extern "C" fn hipGraphAddMemcpyNode1D(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
) -> hipError_t {
    call("hipGraphAddMemcpyNode1D", || {
        // SAFETY: HIP's contract.
        unsafe {
            add_node(out, graph, deps, n, || {
                Ok(NodeOp::Copy(copy1d_node(dst, src, count, kind)?))
            })
        }
    })
}

/// `hipError_t hipGraphMemcpyNodeSetParams1D(hipGraphNode_t, void* dst, const void* src,
/// size_t count, hipMemcpyKind kind)`.
#[export]
pub unsafe extern "C" fn hipGraphMemcpyNodeSetParams1D(
    node: hipGraphNode_t,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
) -> hipError_t {
    call("hipGraphMemcpyNodeSetParams1D", || {
        set_copy(node, None, copy1d_node(dst, src, count, kind)?)
    })
}

/// `hipError_t hipGraphExecMemcpyNodeSetParams1D(hipGraphExec_t, hipGraphNode_t, void* dst,
/// const void* src, size_t count, hipMemcpyKind kind)`: the direction cannot change.
#[export]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParams1D(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
) -> hipError_t {
    call("hipGraphExecMemcpyNodeSetParams1D", || {
        set_copy(node, Some(exec), copy1d_node(dst, src, count, kind)?)
    })
}

/// `hipError_t hipGraphAddMemcpyNodeFromSymbol(hipGraphNode_t*, hipGraph_t, const
/// hipGraphNode_t*, size_t, void* dst, const void* symbol, size_t count, size_t offset,
/// hipMemcpyKind kind)`: the variable is resolved on the current device.
#[export]
pub unsafe extern "C" fn hipGraphAddMemcpyNodeFromSymbol(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: c_int,
) -> hipError_t {
    call("hipGraphAddMemcpyNodeFromSymbol", || {
        // SAFETY: HIP's contract.
        unsafe {
            add_node(out, graph, deps, n, || {
                Ok(NodeOp::Copy(from_symbol_node(
                    dst, symbol, count, offset, kind,
                )?))
            })
        }
    })
}

fn set_symbol_copy(
    node: hipGraphNode_t,
    exec: Option<hipGraphExec_t>,
    c: CopyNode,
) -> Result<(), Failure> {
    let (_, _, old) = current_op(node, exec)?;
    if old.kind() != c.kind() {
        return Err(invalid(format!(
            "{node:p} is a {} node; this call sets a {}",
            old.kind(),
            c.kind()
        )));
    }
    set_node_op(node, exec, NodeOp::Copy(c))
}

/// `hipError_t hipGraphMemcpyNodeSetParamsFromSymbol(hipGraphNode_t, void* dst, const void*
/// symbol, size_t count, size_t offset, hipMemcpyKind kind)`.
#[export]
pub unsafe extern "C" fn hipGraphMemcpyNodeSetParamsFromSymbol(
    node: hipGraphNode_t,
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: c_int,
) -> hipError_t {
    call("hipGraphMemcpyNodeSetParamsFromSymbol", || {
        set_symbol_copy(
            node,
            None,
            from_symbol_node(dst, symbol, count, offset, kind)?,
        )
    })
}

/// `hipError_t hipGraphExecMemcpyNodeSetParamsFromSymbol(hipGraphExec_t, hipGraphNode_t, void*
/// dst, const void* symbol, size_t count, size_t offset, hipMemcpyKind kind)`.
#[export]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParamsFromSymbol(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: c_int,
) -> hipError_t {
    call("hipGraphExecMemcpyNodeSetParamsFromSymbol", || {
        set_symbol_copy(
            node,
            Some(exec),
            from_symbol_node(dst, symbol, count, offset, kind)?,
        )
    })
}

/// `hipError_t hipGraphAddMemcpyNodeToSymbol(hipGraphNode_t*, hipGraph_t, const
/// hipGraphNode_t*, size_t, const void* symbol, const void* src, size_t count, size_t offset,
/// hipMemcpyKind kind)`.
#[export]
pub unsafe extern "C" fn hipGraphAddMemcpyNodeToSymbol(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: c_int,
) -> hipError_t {
    call("hipGraphAddMemcpyNodeToSymbol", || {
        // SAFETY: HIP's contract.
        unsafe {
            add_node(out, graph, deps, n, || {
                Ok(NodeOp::Copy(to_symbol_node(
                    symbol, src, count, offset, kind,
                )?))
            })
        }
    })
}

/// `hipError_t hipGraphMemcpyNodeSetParamsToSymbol(hipGraphNode_t, const void* symbol, const
/// void* src, size_t count, size_t offset, hipMemcpyKind kind)`.
#[export]
pub unsafe extern "C" fn hipGraphMemcpyNodeSetParamsToSymbol(
    node: hipGraphNode_t,
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: c_int,
) -> hipError_t {
    call("hipGraphMemcpyNodeSetParamsToSymbol", || {
        set_symbol_copy(
            node,
            None,
            to_symbol_node(symbol, src, count, offset, kind)?,
        )
    })
}

/// `hipError_t hipGraphExecMemcpyNodeSetParamsToSymbol(hipGraphExec_t, hipGraphNode_t, const
/// void* symbol, const void* src, size_t count, size_t offset, hipMemcpyKind kind)`.
#[export]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParamsToSymbol(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: c_int,
) -> hipError_t {
    call("hipGraphExecMemcpyNodeSetParamsToSymbol", || {
        set_symbol_copy(
            node,
            Some(exec),
            to_symbol_node(symbol, src, count, offset, kind)?,
        )
    })
}

// ------------------------------------------------------------------------------ memset nodes

/// `hipError_t hipGraphAddMemsetNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*,
/// size_t, const hipMemsetParams*)`.
#[export]
pub unsafe extern "C" fn hipGraphAddMemsetNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    params: *const hipMemsetParams,
) -> hipError_t {
    call("hipGraphAddMemsetNode", || {
        // SAFETY: HIP's contract.
        unsafe {
            let p = read(params, "pMemsetParams")?;
            add_node(out, graph, deps, n, || Ok(NodeOp::Memset(memset_node(&p)?)))
        }
    })
}

/// `hipError_t hipGraphMemsetNodeGetParams(hipGraphNode_t, hipMemsetParams*)`.
#[export]
pub unsafe extern "C" fn hipGraphMemsetNodeGetParams(
    node: hipGraphNode_t,
    params: *mut hipMemsetParams,
) -> hipError_t {
    call("hipGraphMemsetNodeGetParams", || {
        if params.is_null() {
            return Err(Failure::null("pNodeParams"));
        }
        let (_, _, op) = current_op(node, None)?;
        let NodeOp::Memset(m) = op else {
            return Err(invalid(format!(
                "{node:p} is a {} node, not a memset node",
                op.kind()
            )));
        };
        let p = hipMemsetParams {
            dst: m.dst as *mut c_void,
            elementSize: c_uint::from(m.element_size),
            height: m.height as usize,
            pitch: m.pitch as usize,
            value: m.value,
            width: m.width as usize,
        };
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { params.write_unaligned(p) };
        Ok(())
    })
}

fn set_memset(
    node: hipGraphNode_t,
    exec: Option<hipGraphExec_t>,
    params: *const hipMemsetParams,
) -> Result<(), Failure> {
    // SAFETY: HIP's contract.
    let p = unsafe { read(params, "pNodeParams") }?;
    let m = memset_node(&p)?;
    let (_, _, old) = current_op(node, exec)?;
    if old.kind() != NodeKind::Memset {
        return Err(invalid(format!(
            "{node:p} is a {} node, not a memset node",
            old.kind()
        )));
    }
    set_node_op(node, exec, NodeOp::Memset(m))
}

/// `hipError_t hipGraphMemsetNodeSetParams(hipGraphNode_t, const hipMemsetParams*)`.
#[export]
pub unsafe extern "C" fn hipGraphMemsetNodeSetParams(
    node: hipGraphNode_t,
    params: *const hipMemsetParams,
) -> hipError_t {
    call("hipGraphMemsetNodeSetParams", || {
        set_memset(node, None, params)
    })
}

/// `hipError_t hipGraphExecMemsetNodeSetParams(hipGraphExec_t, hipGraphNode_t, const
/// hipMemsetParams*)`.
#[export]
pub unsafe extern "C" fn hipGraphExecMemsetNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    params: *const hipMemsetParams,
) -> hipError_t {
    call("hipGraphExecMemsetNodeSetParams", || {
        set_memset(node, Some(exec), params)
    })
}

// ------------------------------------------------------------------------------ host nodes

/// `hipError_t hipGraphAddHostNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*,
/// size_t, const hipHostNodeParams*)`: the function runs on a host thread in graph order; it
/// must not call HIP functions that wait for the graph.
#[export]
pub unsafe extern "C" fn hipGraphAddHostNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    params: *const hipHostNodeParams,
) -> hipError_t {
    call("hipGraphAddHostNode", || {
        let h = host_params(params)?;
        // SAFETY: HIP's contract.
        unsafe { add_node(out, graph, deps, n, || Ok(NodeOp::Host(h))) }
    })
}

/// `hipError_t hipGraphHostNodeGetParams(hipGraphNode_t, hipHostNodeParams*)`.
#[export]
pub unsafe extern "C" fn hipGraphHostNodeGetParams(
    node: hipGraphNode_t,
    params: *mut hipHostNodeParams,
) -> hipError_t {
    call("hipGraphHostNodeGetParams", || {
        if params.is_null() {
            return Err(Failure::null("pNodeParams"));
        }
        let (_, _, op) = current_op(node, None)?;
        let NodeOp::Host(h) = op else {
            return Err(invalid(format!(
                "{node:p} is a {} node, not a host node",
                op.kind()
            )));
        };
        // SAFETY: `function` was made from a `hipHostFn_t` (a non-null function pointer) by
        // `host_node`; the same bits are handed back.
        let f: hipHostFn_t =
            unsafe { std::mem::transmute::<usize, hipHostFn_t>(h.function as usize) };
        let p = hipHostNodeParams {
            fn_: f,
            userData: h.data as *mut c_void,
        };
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { params.write_unaligned(p) };
        Ok(())
    })
}

fn set_host(
    node: hipGraphNode_t,
    exec: Option<hipGraphExec_t>,
    params: *const hipHostNodeParams,
) -> Result<(), Failure> {
    let h = host_params(params)?;
    let (_, _, old) = current_op(node, exec)?;
    if old.kind() != NodeKind::Host {
        return Err(invalid(format!(
            "{node:p} is a {} node, not a host node",
            old.kind()
        )));
    }
    set_node_op(node, exec, NodeOp::Host(h))
}

/// `hipError_t hipGraphHostNodeSetParams(hipGraphNode_t, const hipHostNodeParams*)`.
#[export]
pub unsafe extern "C" fn hipGraphHostNodeSetParams(
    node: hipGraphNode_t,
    params: *const hipHostNodeParams,
) -> hipError_t {
    call("hipGraphHostNodeSetParams", || set_host(node, None, params))
}

/// `hipError_t hipGraphExecHostNodeSetParams(hipGraphExec_t, hipGraphNode_t, const
/// hipHostNodeParams*)`.
#[export]
pub unsafe extern "C" fn hipGraphExecHostNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    params: *const hipHostNodeParams,
) -> hipError_t {
    call("hipGraphExecHostNodeSetParams", || {
        set_host(node, Some(exec), params)
    })
}

// ------------------------------------------------------------------------------ child graphs

/// `hipError_t hipGraphAddChildGraphNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*,
/// size_t, hipGraph_t childGraph)`: the node runs a clone of `childGraph`.
#[export]
pub unsafe extern "C" fn hipGraphAddChildGraphNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    child: hipGraph_t,
) -> hipError_t {
    call("hipGraphAddChildGraphNode", || {
        if out.is_null() {
            return Err(Failure::null("pGraphNode"));
        }
        let g = graph_of(graph)?;
        let c = graph_of(child)?;
        // SAFETY: HIP's contract.
        let deps = unsafe { node_list(&g, deps, n, "pDependencies") }?;
        let node = g.add_child(&c, &deps).map_err(graph_failure)?;
        let h = node_handle(&node)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out.write(h) };
        Ok(())
    })
}

/// `hipError_t hipGraphChildGraphNodeGetGraph(hipGraphNode_t, hipGraph_t* pGraph)`: the graph
/// the node owns (not a copy: changes to it change the node; it cannot be destroyed on its
/// own).
#[export]
pub unsafe extern "C" fn hipGraphChildGraphNodeGetGraph(
    node: hipGraphNode_t,
    p_graph: *mut hipGraph_t,
) -> hipError_t {
    call("hipGraphChildGraphNodeGetGraph", || {
        if p_graph.is_null() {
            return Err(Failure::null("pGraph"));
        }
        let (_, _, op) = current_op(node, None)?;
        let NodeOp::Child(c) = op else {
            return Err(invalid(format!(
                "{node:p} is a {} node, not a child graph node",
                op.kind()
            )));
        };
        let h = graph_handle(&c, true)?;
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { p_graph.write(h) };
        Ok(())
    })
}

/// `hipError_t hipGraphExecChildGraphNodeSetParams(hipGraphExec_t, hipGraphNode_t,
/// hipGraph_t childGraph)`: the new graph must have the child's shape.
#[export]
pub unsafe extern "C" fn hipGraphExecChildGraphNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    child: hipGraph_t,
) -> hipError_t {
    call("hipGraphExecChildGraphNodeSetParams", || {
        let (g, _) = node_of(node)?;
        let c = graph_of(child)?;
        if c.same(&g) {
            return Err(invalid("a graph cannot be its own child"));
        }
        set_node_op(node, Some(exec), NodeOp::Child(c))
    })
}

// ------------------------------------------------------------------------------ event nodes

fn event_node(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    event: hipEvent_t,
    record: bool,
) -> Result<(), Failure> {
    if event.is_null() {
        return Err(invalid("event is NULL"));
    }
    let e = event_of(event)?;
    // SAFETY: HIP's contract.
    unsafe {
        add_node(out, graph, deps, n, || {
            Ok(if record {
                NodeOp::EventRecord(e)
            } else {
                NodeOp::EventWait(e)
            })
        })
    }
}

fn get_event(node: hipGraphNode_t, out: *mut hipEvent_t, record: bool) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::null("event_out"));
    }
    let (_, _, op) = current_op(node, None)?;
    let e = match (op, record) {
        (NodeOp::EventRecord(e), true) | (NodeOp::EventWait(e), false) => e,
        (op, _) => {
            return Err(invalid(format!(
                "{node:p} is a {} node, not an event {} node",
                op.kind(),
                if record { "record" } else { "wait" }
            )))
        }
    };
    let h = event_handle(&e).ok_or_else(|| invalid("the node's event was destroyed"))?;
    // SAFETY: non-null, writable by the caller's contract.
    unsafe { out.write(h) };
    Ok(())
}

fn set_event(
    node: hipGraphNode_t,
    exec: Option<hipGraphExec_t>,
    event: hipEvent_t,
    record: bool,
) -> Result<(), Failure> {
    if event.is_null() {
        return Err(invalid("event is NULL"));
    }
    let e = event_of(event)?;
    let (_, _, old) = current_op(node, exec)?;
    let want = if record {
        NodeKind::EventRecord
    } else {
        NodeKind::EventWait
    };
    if old.kind() != want {
        return Err(invalid(format!(
            "{node:p} is a {} node, not a {want} node",
            old.kind()
        )));
    }
    let op = if record {
        NodeOp::EventRecord(e)
    } else {
        NodeOp::EventWait(e)
    };
    set_node_op(node, exec, op)
}

/// `hipError_t hipGraphAddEventRecordNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*,
/// size_t, hipEvent_t event)`.
#[export]
pub unsafe extern "C" fn hipGraphAddEventRecordNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    event: hipEvent_t,
) -> hipError_t {
    call("hipGraphAddEventRecordNode", || {
        event_node(out, graph, deps, n, event, true)
    })
}

/// `hipError_t hipGraphEventRecordNodeGetEvent(hipGraphNode_t, hipEvent_t* event_out)`.
#[export]
pub unsafe extern "C" fn hipGraphEventRecordNodeGetEvent(
    node: hipGraphNode_t,
    event: *mut hipEvent_t,
) -> hipError_t {
    call("hipGraphEventRecordNodeGetEvent", || {
        get_event(node, event, true)
    })
}

/// `hipError_t hipGraphEventRecordNodeSetEvent(hipGraphNode_t, hipEvent_t)`.
#[export]
pub unsafe extern "C" fn hipGraphEventRecordNodeSetEvent(
    node: hipGraphNode_t,
    event: hipEvent_t,
) -> hipError_t {
    call("hipGraphEventRecordNodeSetEvent", || {
        set_event(node, None, event, true)
    })
}

/// `hipError_t hipGraphExecEventRecordNodeSetEvent(hipGraphExec_t, hipGraphNode_t,
/// hipEvent_t)`.
#[export]
pub unsafe extern "C" fn hipGraphExecEventRecordNodeSetEvent(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    event: hipEvent_t,
) -> hipError_t {
    call("hipGraphExecEventRecordNodeSetEvent", || {
        set_event(node, Some(exec), event, true)
    })
}

/// `hipError_t hipGraphAddEventWaitNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*,
/// size_t, hipEvent_t event)`: waits for the event's last record at the time of each launch.
#[export]
pub unsafe extern "C" fn hipGraphAddEventWaitNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    event: hipEvent_t,
) -> hipError_t {
    call("hipGraphAddEventWaitNode", || {
        event_node(out, graph, deps, n, event, false)
    })
}

/// `hipError_t hipGraphEventWaitNodeGetEvent(hipGraphNode_t, hipEvent_t* event_out)`.
#[export]
pub unsafe extern "C" fn hipGraphEventWaitNodeGetEvent(
    node: hipGraphNode_t,
    event: *mut hipEvent_t,
) -> hipError_t {
    call("hipGraphEventWaitNodeGetEvent", || {
        get_event(node, event, false)
    })
}

/// `hipError_t hipGraphEventWaitNodeSetEvent(hipGraphNode_t, hipEvent_t)`.
#[export]
pub unsafe extern "C" fn hipGraphEventWaitNodeSetEvent(
    node: hipGraphNode_t,
    event: hipEvent_t,
) -> hipError_t {
    call("hipGraphEventWaitNodeSetEvent", || {
        set_event(node, None, event, false)
    })
}

/// `hipError_t hipGraphExecEventWaitNodeSetEvent(hipGraphExec_t, hipGraphNode_t, hipEvent_t)`.
#[export]
pub unsafe extern "C" fn hipGraphExecEventWaitNodeSetEvent(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    event: hipEvent_t,
) -> hipError_t {
    call("hipGraphExecEventWaitNodeSetEvent", || {
        set_event(node, Some(exec), event, false)
    })
}

/// `hipError_t hipGraphAddEmptyNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*,
/// size_t)`: a point of dependencies that does nothing.
#[export]
pub unsafe extern "C" fn hipGraphAddEmptyNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
) -> hipError_t {
    call("hipGraphAddEmptyNode", || {
        // SAFETY: HIP's contract.
        unsafe { add_node(out, graph, deps, n, || Ok(NodeOp::Empty)) }
    })
}
