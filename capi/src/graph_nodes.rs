//! Graph nodes HIP added from 5.3 on that rocload's first graph API lacked: graph memory
//! (`hipGraphAddMemAllocNode`, `hipGraphAddMemFreeNode`, `hipDrvGraphAddMemFreeNode`, and
//! `hipMallocAsync`/`hipFreeAsync` captured into them), the driver-style copy and fill nodes
//! (`hipDrvGraph*`, over `HIP_MEMCPY3D` in the caller's generation's layout and
//! `HIP_MEMSET_NODE_PARAMS`), external-semaphore nodes, and stream memory operations in
//! batches (`hipStreamBatchMemOp` and its graph node, HIP 6.4).
//!
//! What a node runs is the runtime's (`rocload::runtime::graph`, `graph::memory`, `memops`);
//! this module reads and writes HIP's structures. Getters hand back pointers into the node's
//! own copies of what the caller gave, as HIP's do.

use rocload_ffi::export;
use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use rocload_lib::runtime::graph::{BatchMemOpNode, GraphAllocation, SemaphoreNode};
use rocload_lib::runtime::{MemOp, NodeKind, NodeOp, WaitCondition};

use crate::external::{hipExternalSemaphore_t, params_layout, semaphores_of};
use crate::graph::{
    current_op, exec_of, hipGraphExec_t, hipGraphNode_t, hipGraph_t, node_of_kind, set_node_op,
};
use crate::stream::stream_of;
use crate::types::{hipMemAccessDesc, hipMemPoolProps};
use crate::*;

fn invalid(message: impl Into<String>) -> Failure {
    Failure::new(hipErrorInvalidValue, message)
}

/// A context argument of the driver-style calls: NULL (the current device) or a live context.
fn check_context(ctx: *mut c_void) -> Result<(), Failure> {
    if !ctx.is_null() {
        crate::device::context_device(ctx)?;
    }
    Ok(())
}

// ------------------------------------------------------------------------------ graph memory

/// `hipMemAllocNodeParams` (120 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipMemAllocNodeParams {
    /// Where the memory is (`allocType` pinned, `location` a device).
    pub poolProps: hipMemPoolProps,
    /// Access for other devices.
    pub accessDescs: *const hipMemAccessDesc,
    /// How many.
    pub accessDescCount: usize,
    /// Bytes.
    pub bytesize: usize,
    /// Out: the allocation's address.
    pub dptr: *mut c_void,
}
const _: () = {
    assert!(std::mem::size_of::<hipMemAllocNodeParams>() == 120);
    assert!(std::mem::offset_of!(hipMemAllocNodeParams, accessDescs) == 88);
    assert!(std::mem::offset_of!(hipMemAllocNodeParams, dptr) == 112);
};

/// What an allocation node was made with, by block address, for its getter (the access
/// descriptors copied: the getter hands back a pointer to them).
struct AllocParams {
    block: Weak<GraphAllocation>,
    props: hipMemPoolProps,
    access: Box<[hipMemAccessDesc]>,
}
// SAFETY: `props.win32SecurityAttributes` is a pointer the caller gave, never dereferenced here.
unsafe impl Send for AllocParams {}

static ALLOC_PARAMS: Mutex<Vec<(u64, AllocParams)>> = Mutex::new(Vec::new());

/// `hipMemAllocationTypePinned`, `hipMemLocationTypeDevice`.
const ALLOCATION_PINNED: c_int = 1;
const LOCATION_DEVICE: c_int = 1;

/// Checks an allocation node's parameters and reserves its block.
///
/// # Safety
/// `accessDescs` holds `accessDescCount` entries when not NULL.
unsafe fn reserve(p: &hipMemAllocNodeParams) -> Result<Arc<GraphAllocation>, Failure> {
    if p.bytesize == 0 {
        return Err(invalid("bytesize is 0"));
    }
    if p.poolProps.allocType != ALLOCATION_PINNED {
        return Err(invalid(format!(
            "poolProps.allocType {} (only hipMemAllocationTypePinned, 1)",
            p.poolProps.allocType
        )));
    }
    let loc = p.poolProps.location;
    if loc.type_ != LOCATION_DEVICE {
        return Err(invalid(format!(
            "poolProps.location.type {} (only a device, 1)",
            loc.type_
        )));
    }
    let devices = runtime().agents().len();
    if loc.id < 0 || runtime().device(i64::from(loc.id)).is_err() {
        return Err(invalid(format!("device {} does not exist", loc.id)));
    }
    if p.accessDescCount > devices || (p.accessDescCount != 0 && p.accessDescs.is_null()) {
        return Err(invalid(format!(
            "{} access descriptors for {devices} devices",
            p.accessDescCount
        )));
    }
    for i in 0..p.accessDescCount {
        // SAFETY: the caller's contract.
        let a = unsafe { p.accessDescs.add(i).read_unaligned() };
        let device_ok = a.location.type_ == LOCATION_DEVICE
            && runtime().device(i64::from(a.location.id)).is_ok();
        if !device_ok || !matches!(a.flags, 0 | 1 | 3) {
            return Err(invalid(format!(
                "accessDescs[{i}]: location type {} id {}, flags {}",
                a.location.type_, a.location.id, a.flags
            )));
        }
    }
    Ok(runtime().reserve_graph_memory(loc.id as usize, p.bytesize as u64)?)
}

fn remember_alloc(
    block: &Arc<GraphAllocation>,
    props: hipMemPoolProps,
    access: Box<[hipMemAccessDesc]>,
) {
    let mut list = ALLOC_PARAMS.lock();
    list.retain(|(_, p)| p.block.strong_count() > 0);
    list.push((
        block.address(),
        AllocParams {
            block: Arc::downgrade(block),
            props,
            access,
        },
    ));
}

/// `hipError_t hipGraphAddMemAllocNode(hipGraphNode_t* pGraphNode, hipGraph_t graph, const
/// hipGraphNode_t* pDependencies, size_t numDependencies, hipMemAllocNodeParams* pNodeParams)`
/// (HIP 5.3): the block's address is fixed now and written to `pNodeParams->dptr`; kernels
/// reach it once the node has run, until a free.
#[export]
pub unsafe extern "C" fn hipGraphAddMemAllocNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    params: *mut hipMemAllocNodeParams,
) -> hipError_t {
    call("hipGraphAddMemAllocNode", || {
        // SAFETY: readable by the caller's contract when not NULL.
        let Some(p) = (unsafe { params.as_ref() }).copied() else {
            return Err(Failure::null("pNodeParams"));
        };
        // SAFETY: the caller's contract on the access descriptors.
        let block = unsafe { reserve(&p) }?;
        let access: Box<[hipMemAccessDesc]> = (0..p.accessDescCount)
            // SAFETY: checked by `reserve`.
            .map(|i| unsafe { p.accessDescs.add(i).read_unaligned() })
            .collect();
        let b = block.clone();
        // SAFETY: HIP's contract on the outputs and dependencies.
        unsafe { crate::graph::add_node(out, graph, deps, n, || Ok(NodeOp::MemAlloc(b))) }?;
        remember_alloc(&block, p.poolProps, access);
        // SAFETY: non-null (read above), writable by the caller's contract.
        unsafe { (*params).dptr = block.address() as *mut c_void };
        Ok(())
    })
}

/// `hipError_t hipGraphMemAllocNodeGetParams(hipGraphNode_t node, hipMemAllocNodeParams*
/// pNodeParams)` (HIP 5.3): what the node was made with, its address included.
#[export]
pub unsafe extern "C" fn hipGraphMemAllocNodeGetParams(
    node: hipGraphNode_t,
    params: *mut hipMemAllocNodeParams,
) -> hipError_t {
    call("hipGraphMemAllocNodeGetParams", || {
        if params.is_null() {
            return Err(Failure::null("pNodeParams"));
        }
        let (_, _, op) = current_op(node, None)?;
        let NodeOp::MemAlloc(block) = op else {
            return Err(invalid(format!("{node:p} is a {} node", op.kind())));
        };
        let list = ALLOC_PARAMS.lock();
        let Some((_, a)) = list.iter().find(|(at, _)| *at == block.address()) else {
            return Err(invalid("the node's parameters are gone"));
        };
        let p = hipMemAllocNodeParams {
            poolProps: a.props,
            accessDescs: if a.access.is_empty() {
                std::ptr::null()
            } else {
                a.access.as_ptr()
            },
            accessDescCount: a.access.len(),
            bytesize: block.size() as usize,
            dptr: block.address() as *mut c_void,
        };
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { params.write_unaligned(p) };
        Ok(())
    })
}

/// The graph memory a free names.
pub(crate) fn block_at(dptr: *mut c_void) -> Result<Arc<GraphAllocation>, Failure> {
    if dptr.is_null() {
        return Err(Failure::null("dptr"));
    }
    GraphAllocation::find(dptr as u64).ok_or_else(|| {
        Failure::new(
            hipErrorInvalidValue,
            format!(
                "{dptr:p} is not the address of graph memory (an allocation node's): a free node \
                 frees only those"
            ),
        )
    })
}

fn add_free_node(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    dptr: *mut c_void,
) -> Result<(), Failure> {
    let block = block_at(dptr)?;
    // SAFETY: HIP's contract on the outputs and dependencies.
    unsafe { crate::graph::add_node(out, graph, deps, n, || Ok(NodeOp::MemFree(block))) }
}

/// `hipError_t hipGraphAddMemFreeNode(hipGraphNode_t* pGraphNode, hipGraph_t graph, const
/// hipGraphNode_t* pDependencies, size_t numDependencies, void* dev_ptr)` (HIP 5.3): frees
/// graph memory (an allocation node's, of this graph or another) when it runs.
#[export]
pub unsafe extern "C" fn hipGraphAddMemFreeNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    dptr: *mut c_void,
) -> hipError_t {
    call("hipGraphAddMemFreeNode", || {
        add_free_node(out, graph, deps, n, dptr)
    })
}

/// `hipError_t hipDrvGraphAddMemFreeNode(hipGraphNode_t*, hipGraph_t, const hipGraphNode_t*,
/// size_t, hipDeviceptr_t dptr)` (HIP 6.0): as `hipGraphAddMemFreeNode`.
#[export]
pub unsafe extern "C" fn hipDrvGraphAddMemFreeNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    dptr: *mut c_void,
) -> hipError_t {
    call("hipDrvGraphAddMemFreeNode", || {
        add_free_node(out, graph, deps, n, dptr)
    })
}

/// `hipError_t hipGraphMemFreeNodeGetParams(hipGraphNode_t node, void* dev_ptr)` (HIP 5.3):
/// writes the address the node frees to `*(void**)dev_ptr`.
#[export]
pub unsafe extern "C" fn hipGraphMemFreeNodeGetParams(
    node: hipGraphNode_t,
    dev_ptr: *mut c_void,
) -> hipError_t {
    call("hipGraphMemFreeNodeGetParams", || {
        if dev_ptr.is_null() {
            return Err(Failure::null("dev_ptr"));
        }
        let (_, _, op) = current_op(node, None)?;
        let NodeOp::MemFree(block) = op else {
            return Err(invalid(format!("{node:p} is a {} node", op.kind())));
        };
        // SAFETY: a pointer's worth, writable by the caller's contract.
        unsafe {
            dev_ptr
                .cast::<*mut c_void>()
                .write_unaligned(block.address() as *mut c_void)
        };
        Ok(())
    })
}

/// `hipMallocAsync` on a capturing stream: an allocation node on the stream's device (the
/// pool given names the device only), its address handed back now.
pub(crate) fn capture_malloc(
    c: &rocload_lib::runtime::capture::Capture,
    stream: &rocload_lib::runtime::Stream,
    device: usize,
    size: usize,
) -> Result<u64, Failure> {
    let block = match runtime().reserve_graph_memory(device, size as u64) {
        Ok(b) => b,
        Err(e) => {
            c.invalidate();
            return Err(e.into());
        }
    };
    let props = hipMemPoolProps {
        allocType: ALLOCATION_PINNED,
        handleTypes: 0,
        location: crate::types::hipMemLocation {
            type_: LOCATION_DEVICE,
            id: device as c_int,
        },
        win32SecurityAttributes: std::ptr::null_mut(),
        reserved: [0; 64],
    };
    crate::capture::add(c, stream, NodeOp::MemAlloc(block.clone()))?;
    remember_alloc(&block, props, Box::new([]));
    Ok(block.address())
}

/// `hipFreeAsync` on a capturing stream: a free node for graph memory; other memory cannot be
/// freed by a graph here (`hipErrorNotSupported`, the capture invalidated).
pub(crate) fn capture_free(
    c: &rocload_lib::runtime::capture::Capture,
    stream: &rocload_lib::runtime::Stream,
    dptr: *mut c_void,
) -> Result<(), Failure> {
    let Some(block) = GraphAllocation::find(dptr as u64) else {
        c.invalidate();
        return Err(Failure::new(
            hipErrorNotSupported,
            format!(
                "hipFreeAsync({dptr:p}) while capturing: only graph memory (allocated in a \
                 capture or by an allocation node) can become a free node"
            ),
        ));
    };
    crate::capture::add(c, stream, NodeOp::MemFree(block))
}

/// `hipGraphMemAttributeType`: used and reserved, current and high-water.
const MEM_ATTR_USED_HIGH: c_int = 1;
const MEM_ATTR_RESERVED_HIGH: c_int = 3;

/// `hipError_t hipDeviceGetGraphMemAttribute(int device, hipGraphMemAttributeType attr, void*
/// value)` (HIP 5.3): graph memory reachable now (0), its high-water mark (1), graph memory
/// held by graphs (2), its high-water mark (3).
#[export]
pub unsafe extern "C" fn hipDeviceGetGraphMemAttribute(
    device: c_int,
    attr: c_int,
    value: *mut c_void,
) -> hipError_t {
    call("hipDeviceGetGraphMemAttribute", || {
        let ctx = runtime().device(i64::from(device))?;
        if value.is_null() {
            return Err(Failure::null("value"));
        }
        let stats = rocload_lib::runtime::graph::graph_memory_stats(ctx.index());
        let v = usize::try_from(attr)
            .ok()
            .and_then(|a| stats.get(a).copied())
            .ok_or_else(|| invalid(format!("graph memory attribute {attr}")))?;
        // SAFETY: the attributes are 64-bit values by HIP's contract.
        unsafe { value.cast::<u64>().write_unaligned(v) };
        Ok(())
    })
}

/// `hipError_t hipDeviceSetGraphMemAttribute(int device, hipGraphMemAttributeType attr, void*
/// value)` (HIP 5.3): only the high-water marks can be set, and only to 0 (a reset to the
/// current value).
#[export]
pub unsafe extern "C" fn hipDeviceSetGraphMemAttribute(
    device: c_int,
    attr: c_int,
    value: *mut c_void,
) -> hipError_t {
    call("hipDeviceSetGraphMemAttribute", || {
        let ctx = runtime().device(i64::from(device))?;
        if value.is_null() {
            return Err(Failure::null("value"));
        }
        // SAFETY: as above, for reading.
        let v = unsafe { value.cast::<u64>().read_unaligned() };
        if (attr == MEM_ATTR_USED_HIGH || attr == MEM_ATTR_RESERVED_HIGH) && v == 0 {
            rocload_lib::runtime::graph::reset_graph_memory_high(
                ctx.index(),
                attr == MEM_ATTR_USED_HIGH,
            );
            Ok(())
        } else {
            Err(invalid(format!(
                "graph memory attribute {attr} cannot be set to {v}"
            )))
        }
    })
}

/// `hipError_t hipDeviceGraphMemTrim(int device)` (HIP 5.3): graph memory is each allocation
/// node's block, held while a graph, clone or executable has the node and released when the
/// last goes; nothing is cached beyond that, so there is nothing to give back.
#[export]
pub unsafe extern "C" fn hipDeviceGraphMemTrim(device: c_int) -> hipError_t {
    call("hipDeviceGraphMemTrim", || {
        let ctx = runtime().device(i64::from(device))?;
        tracing::debug!(
            device,
            held = rocload_lib::runtime::graph::graph_memory_stats(ctx.index())[2],
            "graph memory trim: blocks are released with their graphs, none is cached"
        );
        Ok(())
    })
}

// ------------------------------------------------------------------------------ hipDrvGraph*

/// Copies of the `HIP_MEMCPY3D` a driver-style copy node was given, by node id, for its getter.
static DRV_COPIES: Mutex<Option<HashMap<u64, Box<[u8]>>>> = Mutex::new(None);

/// The caller's `HIP_MEMCPY3D` as bytes (its generation's size).
fn memcpy3d_bytes(p: *const c_void) -> Result<Box<[u8]>, Failure> {
    if p.is_null() {
        return Err(Failure::null("copyParams"));
    }
    let n = crate::array::memcpy3d_size();
    // SAFETY: `n` readable bytes by the caller's contract (the struct of its generation).
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) }.into())
}

/// Forgets the `HIP_MEMCPY3D` of node `id` (the node is going), so the copies live no longer
/// than their nodes.
pub(crate) fn forget_copy(id: u64) {
    if let Some(copies) = DRV_COPIES.lock().as_mut() {
        copies.remove(&id);
    }
}

fn remember_copy(node: u64, bytes: Box<[u8]>) {
    DRV_COPIES
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(node, bytes);
}

/// `hipError_t hipDrvGraphAddMemcpyNode(hipGraphNode_t* phGraphNode, hipGraph_t hGraph, const
/// hipGraphNode_t* dependencies, size_t numDependencies, const HIP_MEMCPY3D* copyParams,
/// hipCtx_t ctx)` (HIP 6.0; `HIP_MEMCPY3D` in the caller's generation's layout).
#[export]
pub unsafe extern "C" fn hipDrvGraphAddMemcpyNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    params: *const c_void,
    ctx: *mut c_void,
) -> hipError_t {
    call("hipDrvGraphAddMemcpyNode", || {
        check_context(ctx)?;
        let bytes = memcpy3d_bytes(params)?;
        let node = crate::array::drv_copy_node(params)?;
        // SAFETY: HIP's contract on the outputs and dependencies.
        unsafe { crate::graph::add_node(out, graph, deps, n, || Ok(NodeOp::Copy(node))) }?;
        // SAFETY: written by `add_node` just now.
        let (_, made) = crate::graph::node_of(unsafe { *out })?;
        remember_copy(made.id(), bytes);
        Ok(())
    })
}

/// `hipError_t hipDrvGraphMemcpyNodeGetParams(hipGraphNode_t hNode, HIP_MEMCPY3D* nodeParams)`
/// (HIP 6.0): the structure the node was made (or last set) with.
#[export]
pub unsafe extern "C" fn hipDrvGraphMemcpyNodeGetParams(
    node: hipGraphNode_t,
    params: *mut c_void,
) -> hipError_t {
    call("hipDrvGraphMemcpyNodeGetParams", || {
        if params.is_null() {
            return Err(Failure::null("nodeParams"));
        }
        let (_, n) = node_of_kind(node, &[NodeKind::Memcpy], "driver-style copy")?;
        let copies = DRV_COPIES.lock();
        let Some(bytes) = copies.as_ref().and_then(|m| m.get(&n.id())) else {
            return Err(invalid(format!(
                "{node:p} was not made by hipDrvGraphAddMemcpyNode: its copy has no HIP_MEMCPY3D"
            )));
        };
        if bytes.len() != crate::array::memcpy3d_size() {
            return Err(invalid(
                "the node's HIP_MEMCPY3D was given in another generation's layout",
            ));
        }
        // SAFETY: `bytes.len()` writable bytes by the caller's contract (its generation's
        // struct, of that size).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), params.cast::<u8>(), bytes.len()) };
        Ok(())
    })
}

fn set_drv_copy(
    node: hipGraphNode_t,
    exec: Option<hipGraphExec_t>,
    params: *const c_void,
) -> Result<(), Failure> {
    let (_, n) = node_of_kind(node, &[NodeKind::Memcpy, NodeKind::Memcpy1D], "copy")?;
    let bytes = memcpy3d_bytes(params)?;
    let copy = crate::array::drv_copy_node(params)?;
    set_node_op(node, exec, NodeOp::Copy(copy))?;
    if exec.is_none() {
        remember_copy(n.id(), bytes);
    }
    Ok(())
}

/// `hipError_t hipDrvGraphMemcpyNodeSetParams(hipGraphNode_t hNode, const HIP_MEMCPY3D*
/// nodeParams)` (HIP 6.0).
#[export]
pub unsafe extern "C" fn hipDrvGraphMemcpyNodeSetParams(
    node: hipGraphNode_t,
    params: *const c_void,
) -> hipError_t {
    call("hipDrvGraphMemcpyNodeSetParams", || {
        set_drv_copy(node, None, params)
    })
}

/// `hipError_t hipDrvGraphExecMemcpyNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t
/// hNode, const HIP_MEMCPY3D* copyParams, hipCtx_t ctx)` (HIP 6.0): later launches of the
/// executable copy as given.
#[export]
pub unsafe extern "C" fn hipDrvGraphExecMemcpyNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    params: *const c_void,
    ctx: *mut c_void,
) -> hipError_t {
    call("hipDrvGraphExecMemcpyNodeSetParams", || {
        check_context(ctx)?;
        exec_of(exec)?;
        set_drv_copy(node, Some(exec), params)
    })
}

/// `HIP_MEMSET_NODE_PARAMS` (40 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HIP_MEMSET_NODE_PARAMS {
    /// Destination.
    pub dst: *mut c_void,
    /// Bytes from row to row.
    pub pitch: usize,
    /// The element's value.
    pub value: c_uint,
    /// 1, 2 or 4.
    pub elementSize: c_uint,
    /// Elements per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
}
const _: () = assert!(std::mem::size_of::<HIP_MEMSET_NODE_PARAMS>() == 40);

fn drv_memset(p: *const HIP_MEMSET_NODE_PARAMS) -> Result<NodeOp, Failure> {
    // SAFETY: readable by the caller's contract when not NULL.
    let Some(p) = (unsafe { p.as_ref() }).copied() else {
        return Err(Failure::null("memsetParams"));
    };
    let m = crate::graph::hipMemsetParams {
        dst: p.dst,
        elementSize: p.elementSize,
        height: p.height,
        pitch: p.pitch,
        value: p.value,
        width: p.width,
    };
    Ok(NodeOp::Memset(crate::graph::memset_node(&m)?))
}

/// `hipError_t hipDrvGraphAddMemsetNode(hipGraphNode_t* phGraphNode, hipGraph_t hGraph, const
/// hipGraphNode_t* dependencies, size_t numDependencies, const HIP_MEMSET_NODE_PARAMS*
/// memsetParams, hipCtx_t ctx)` (HIP 6.0).
#[export]
pub unsafe extern "C" fn hipDrvGraphAddMemsetNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    params: *const HIP_MEMSET_NODE_PARAMS,
    ctx: *mut c_void,
) -> hipError_t {
    call("hipDrvGraphAddMemsetNode", || {
        check_context(ctx)?;
        // SAFETY: HIP's contract on the outputs and dependencies.
        unsafe { crate::graph::add_node(out, graph, deps, n, || drv_memset(params)) }
    })
}

/// `hipError_t hipDrvGraphExecMemsetNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t
/// hNode, const HIP_MEMSET_NODE_PARAMS* memsetParams, hipCtx_t ctx)` (HIP 6.0).
#[export]
pub unsafe extern "C" fn hipDrvGraphExecMemsetNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    params: *const HIP_MEMSET_NODE_PARAMS,
    ctx: *mut c_void,
) -> hipError_t {
    call("hipDrvGraphExecMemsetNodeSetParams", || {
        check_context(ctx)?;
        exec_of(exec)?;
        node_of_kind(node, &[NodeKind::Memset], "memset")?;
        set_node_op(node, Some(exec), drv_memset(params)?)
    })
}

// ------------------------------------------------------------------------------ semaphores

/// `hipExternalSemaphoreSignalNodeParams` and `...WaitNodeParams` (24 bytes): the semaphores,
/// their parameter structures (the caller's generation's layout) and how many.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipExternalSemaphoreNodeParams {
    /// The semaphores.
    pub extSemArray: *mut hipExternalSemaphore_t,
    /// One parameter structure each.
    pub paramsArray: *const c_void,
    /// How many.
    pub numExtSems: c_uint,
}
const _: () = assert!(std::mem::size_of::<hipExternalSemaphoreNodeParams>() == 24);

fn semaphore_node(p: *const hipExternalSemaphoreNodeParams) -> Result<SemaphoreNode, Failure> {
    // SAFETY: readable by the caller's contract when not NULL.
    let Some(p) = (unsafe { p.as_ref() }).copied() else {
        return Err(Failure::null("nodeParams"));
    };
    if p.numExtSems == 0 {
        return Err(invalid("numExtSems is 0"));
    }
    // SAFETY: the caller's arrays of `numExtSems` entries.
    let semaphores = unsafe { semaphores_of(p.extSemArray, p.paramsArray, p.numExtSems) }?;
    let count = p.numExtSems as usize;
    // SAFETY: `count` handles, checked readable by `semaphores_of`.
    let handles: Arc<[u64]> = (0..count)
        .map(|i| unsafe { p.extSemArray.add(i).read() } as u64)
        .collect();
    let (_, stride) = params_layout();
    let len = count
        .checked_mul(stride)
        .ok_or_else(|| invalid("the parameters' size overflows"))?;
    // SAFETY: `count` structures of `stride` bytes by the caller's contract.
    let params: Arc<[u8]> =
        unsafe { std::slice::from_raw_parts(p.paramsArray.cast::<u8>(), len) }.into();
    Ok(SemaphoreNode {
        semaphores,
        handles,
        params,
    })
}

pub(crate) fn semaphore_op(
    p: *const hipExternalSemaphoreNodeParams,
    wait: bool,
) -> Result<NodeOp, Failure> {
    let n = semaphore_node(p)?;
    Ok(if wait {
        NodeOp::SemaphoreWait(n)
    } else {
        NodeOp::SemaphoreSignal(n)
    })
}

fn get_semaphores(
    node: hipGraphNode_t,
    out: *mut hipExternalSemaphoreNodeParams,
    wait: bool,
) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::null("params_out"));
    }
    let (_, _, op) = current_op(node, None)?;
    let n = match (op, wait) {
        (NodeOp::SemaphoreWait(n), true) | (NodeOp::SemaphoreSignal(n), false) => n,
        (op, _) => return Err(invalid(format!("{node:p} is a {} node", op.kind()))),
    };
    let p = hipExternalSemaphoreNodeParams {
        // The node's own copies, alive while the node keeps them (as HIP's getters return).
        extSemArray: n.handles.as_ptr() as *mut hipExternalSemaphore_t,
        paramsArray: n.params.as_ptr().cast(),
        numExtSems: n.semaphores.len() as c_uint,
    };
    // SAFETY: non-null, writable by the caller's contract.
    unsafe { out.write_unaligned(p) };
    Ok(())
}

fn set_semaphores(
    node: hipGraphNode_t,
    exec: Option<hipGraphExec_t>,
    p: *const hipExternalSemaphoreNodeParams,
    wait: bool,
) -> Result<(), Failure> {
    let kind = if wait {
        NodeKind::SemaphoreWait
    } else {
        NodeKind::SemaphoreSignal
    };
    node_of_kind(node, &[kind], "external semaphore")?;
    if let Some(e) = exec {
        exec_of(e)?;
    }
    set_node_op(node, exec, semaphore_op(p, wait)?)
}

/// Declares the external-semaphore node calls of one direction.
macro_rules! semaphore_entries {
    ($wait:literal, $add:ident, $get:ident, $set:ident, $exec_set:ident) => {
        #[doc = concat!("`hipError_t ", stringify!($add), "(hipGraphNode_t* pGraphNode, hipGraph_t graph, const hipGraphNode_t* pDependencies, size_t numDependencies, const hipExternalSemaphore*NodeParams* nodeParams)` (HIP 5.3): the semaphores' parameters in the caller's generation's layout (flags 0).")]
        #[export]
        pub unsafe extern "C" fn $add(
            out: *mut hipGraphNode_t,
            graph: hipGraph_t,
            deps: *const hipGraphNode_t,
            n: usize,
            params: *const hipExternalSemaphoreNodeParams,
        ) -> hipError_t {
            call(stringify!($add), || {
                // SAFETY: HIP's contract on the outputs and dependencies.
                unsafe { crate::graph::add_node(out, graph, deps, n, || semaphore_op(params, $wait)) }
            })
        }

        #[doc = concat!("`", stringify!($get), "(hipGraphNode_t, params_out*)` (HIP 5.3): pointers into the node's copies.")]
        #[export]
        pub unsafe extern "C" fn $get(
            node: hipGraphNode_t,
            out: *mut hipExternalSemaphoreNodeParams,
        ) -> hipError_t {
            call(stringify!($get), || get_semaphores(node, out, $wait))
        }

        #[doc = concat!("`", stringify!($set), "(hipGraphNode_t, const params*)` (HIP 5.3).")]
        #[export]
        pub unsafe extern "C" fn $set(
            node: hipGraphNode_t,
            params: *const hipExternalSemaphoreNodeParams,
        ) -> hipError_t {
            call(stringify!($set), || set_semaphores(node, None, params, $wait))
        }

        #[doc = concat!("`", stringify!($exec_set), "(hipGraphExec_t, hipGraphNode_t, const params*)` (HIP 5.3): later launches use the new semaphores.")]
        #[export]
        pub unsafe extern "C" fn $exec_set(
            exec: hipGraphExec_t,
            node: hipGraphNode_t,
            params: *const hipExternalSemaphoreNodeParams,
        ) -> hipError_t {
            call(stringify!($exec_set), || set_semaphores(node, Some(exec), params, $wait))
        }
    };
}

semaphore_entries!(
    false,
    hipGraphAddExternalSemaphoresSignalNode,
    hipGraphExternalSemaphoresSignalNodeGetParams,
    hipGraphExternalSemaphoresSignalNodeSetParams,
    hipGraphExecExternalSemaphoresSignalNodeSetParams
);
semaphore_entries!(
    true,
    hipGraphAddExternalSemaphoresWaitNode,
    hipGraphExternalSemaphoresWaitNodeGetParams,
    hipGraphExternalSemaphoresWaitNodeSetParams,
    hipGraphExecExternalSemaphoresWaitNodeSetParams
);

// ------------------------------------------------------------------------------ batch memory ops

/// `hipStreamBatchMemOpParams` (48 bytes): the operation, then (for waits and writes) the
/// address at 8, the 32- or 64-bit value at 16, the flags at 24, an alias at 32 (unused).
const MEM_OP_SIZE: usize = 48;

/// `hipBatchMemOpNodeParams` (32 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipBatchMemOpNodeParams {
    /// `hipCtx_t` (NULL or a context).
    pub ctx: *mut c_void,
    /// How many operations.
    pub count: c_uint,
    /// The operations.
    pub paramArray: *const c_void,
    /// Flags (0).
    pub flags: c_uint,
}
const _: () = assert!(std::mem::size_of::<hipBatchMemOpNodeParams>() == 32);

/// The most operations one batch may hold (CUDA documents 256 per call).
const MAX_MEM_OPS: c_uint = 256;

/// Reads and checks `count` operations; returns them and the caller's bytes.
///
/// # Safety
/// `params` holds `count` operations when not NULL.
unsafe fn mem_ops(
    params: *const c_void,
    count: c_uint,
) -> Result<(Vec<MemOp>, Arc<[u8]>), Failure> {
    if count == 0 || count > MAX_MEM_OPS {
        return Err(invalid(format!("count {count} (1 to {MAX_MEM_OPS})")));
    }
    if params.is_null() {
        return Err(Failure::null("paramArray"));
    }
    let len = count as usize * MEM_OP_SIZE;
    // SAFETY: `count` operations of 48 bytes by the caller's contract.
    let bytes: Arc<[u8]> = unsafe { std::slice::from_raw_parts(params.cast::<u8>(), len) }.into();
    let mut ops = Vec::with_capacity(count as usize);
    for (i, op) in bytes.chunks_exact(MEM_OP_SIZE).enumerate() {
        let word = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&op[at..at + 8]);
            u64::from_ne_bytes(b)
        };
        let int = |at: usize| {
            let mut b = [0u8; 4];
            b.copy_from_slice(&op[at..at + 4]);
            u32::from_ne_bytes(b)
        };
        let (kind, address, value64, flags) = (int(0), word(8), word(16), int(24));
        let op = match kind {
            // hipStreamMemOpWaitValue32, ...64.
            1 | 4 => {
                let condition = WaitCondition::from_flags(flags).ok_or_else(|| {
                    invalid(format!("paramArray[{i}]: wait flags {flags:#x} (0 to 3)"))
                })?;
                let width = if kind == 1 { 4 } else { 8 };
                MemOp::Wait {
                    address,
                    condition,
                    value: if width == 4 {
                        value64 & 0xffff_ffff
                    } else {
                        value64
                    },
                    mask: u64::MAX,
                    width,
                }
            }
            // hipStreamMemOpWriteValue32, ...64.
            2 | 5 => {
                if flags > 1 {
                    return Err(invalid(format!(
                        "paramArray[{i}]: write flags {flags:#x} (0 or 1)"
                    )));
                }
                let width = if kind == 2 { 4 } else { 8 };
                MemOp::Write {
                    address,
                    value: if width == 4 {
                        value64 & 0xffff_ffff
                    } else {
                        value64
                    },
                    width,
                }
            }
            // Flushing remote writes and memory barriers order memory the batch's other
            // operations touch; here every operation is a checked access of one address space,
            // complete before the next begins, so they have nothing left to do.
            3 | 6 => {
                tracing::debug!(
                    op = kind,
                    "batch memory operation: already ordered, nothing to run"
                );
                continue;
            }
            other => {
                return Err(invalid(format!(
                    "paramArray[{i}]: hipStreamBatchMemOpType {other}"
                )))
            }
        };
        runtime().check_mem_op(&op).map_err(|e| {
            let f: Failure = e.into();
            Failure::new(f.code, format!("paramArray[{i}]: {}", f.message))
        })?;
        ops.push(op);
    }
    Ok((ops, bytes))
}

/// `hipError_t hipStreamBatchMemOp(hipStream_t stream, unsigned int count,
/// hipStreamBatchMemOpParams* paramArray, unsigned int flags)` (HIP 6.4): the operations in
/// order, in `stream`'s order (waits hold the stream, writes write), every one checked before
/// anything is queued; during a capture, a batch node.
#[export]
pub unsafe extern "C" fn hipStreamBatchMemOp(
    stream: hipStream_t,
    count: c_uint,
    params: *const c_void,
    flags: c_uint,
) -> hipError_t {
    call("hipStreamBatchMemOp", || {
        if flags != 0 {
            return Err(invalid(format!("flags {flags:#x} (must be 0)")));
        }
        let s = stream_of(stream)?;
        // SAFETY: the caller's array of `count` operations.
        let (ops, bytes) = unsafe { mem_ops(params, count) }?;
        if let Some(c) = crate::capture::intercept(&s, "hipStreamBatchMemOp")? {
            let node = BatchMemOpNode {
                ops,
                params: bytes,
                context: 0,
                flags,
            };
            return crate::capture::add(&c, &s, NodeOp::BatchMemOp(node));
        }
        Ok(runtime().batch_mem_op(&s, &ops)?)
    })
}

pub(crate) fn batch_node(p: *const hipBatchMemOpNodeParams) -> Result<NodeOp, Failure> {
    // SAFETY: readable by the caller's contract when not NULL.
    let Some(p) = (unsafe { p.as_ref() }).copied() else {
        return Err(Failure::null("nodeParams"));
    };
    check_context(p.ctx)?;
    if p.flags != 0 {
        return Err(invalid(format!("flags {:#x} (must be 0)", p.flags)));
    }
    // SAFETY: the caller's array of `count` operations.
    let (ops, params) = unsafe { mem_ops(p.paramArray, p.count) }?;
    Ok(NodeOp::BatchMemOp(BatchMemOpNode {
        ops,
        params,
        context: p.ctx as u64,
        flags: p.flags,
    }))
}

/// `hipError_t hipGraphAddBatchMemOpNode(hipGraphNode_t* phGraphNode, hipGraph_t hGraph, const
/// hipGraphNode_t* dependencies, size_t numDependencies, const hipBatchMemOpNodeParams*
/// nodeParams)` (HIP 6.4).
#[export]
pub unsafe extern "C" fn hipGraphAddBatchMemOpNode(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    n: usize,
    params: *const hipBatchMemOpNodeParams,
) -> hipError_t {
    call("hipGraphAddBatchMemOpNode", || {
        // SAFETY: HIP's contract on the outputs and dependencies.
        unsafe { crate::graph::add_node(out, graph, deps, n, || batch_node(params)) }
    })
}

/// `hipError_t hipGraphBatchMemOpNodeGetParams(hipGraphNode_t hNode, hipBatchMemOpNodeParams*
/// nodeParams_out)` (HIP 6.4): `paramArray` points into the node's copy.
#[export]
pub unsafe extern "C" fn hipGraphBatchMemOpNodeGetParams(
    node: hipGraphNode_t,
    out: *mut hipBatchMemOpNodeParams,
) -> hipError_t {
    call("hipGraphBatchMemOpNodeGetParams", || {
        if out.is_null() {
            return Err(Failure::null("nodeParams_out"));
        }
        let (_, _, op) = current_op(node, None)?;
        let NodeOp::BatchMemOp(b) = op else {
            return Err(invalid(format!("{node:p} is a {} node", op.kind())));
        };
        let p = hipBatchMemOpNodeParams {
            ctx: b.context as *mut c_void,
            count: (b.params.len() / MEM_OP_SIZE) as c_uint,
            paramArray: b.params.as_ptr().cast(),
            flags: b.flags,
        };
        // SAFETY: non-null, writable by the caller's contract.
        unsafe { out.write_unaligned(p) };
        Ok(())
    })
}

/// `hipError_t hipGraphBatchMemOpNodeSetParams(hipGraphNode_t hNode, hipBatchMemOpNodeParams*
/// nodeParams)` (HIP 6.4).
#[export]
pub unsafe extern "C" fn hipGraphBatchMemOpNodeSetParams(
    node: hipGraphNode_t,
    params: *const hipBatchMemOpNodeParams,
) -> hipError_t {
    call("hipGraphBatchMemOpNodeSetParams", || {
        node_of_kind(node, &[NodeKind::BatchMemOp], "batch memory operation")?;
        set_node_op(node, None, batch_node(params)?)
    })
}

/// `hipError_t hipGraphExecBatchMemOpNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t
/// hNode, const hipBatchMemOpNodeParams* nodeParams)` (HIP 6.4).
#[export]
pub unsafe extern "C" fn hipGraphExecBatchMemOpNodeSetParams(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    params: *const hipBatchMemOpNodeParams,
) -> hipError_t {
    call("hipGraphExecBatchMemOpNodeSetParams", || {
        exec_of(exec)?;
        node_of_kind(node, &[NodeKind::BatchMemOp], "batch memory operation")?;
        set_node_op(node, Some(exec), batch_node(params)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{
        hipGraphAddEmptyNode, hipGraphCreate, hipGraphDestroy, hipGraphDestroyNode,
    };
    use std::ptr::null;
    use std::sync::atomic::{AtomicBool, Ordering};

    unsafe extern "C" fn slow_then_set(flag: *mut c_void) {
        std::thread::sleep(std::time::Duration::from_millis(300));
        // SAFETY: the test's AtomicBool, alive until the graph is synchronised.
        unsafe { &*flag.cast::<AtomicBool>() }.store(true, Ordering::SeqCst);
    }

    /// A graph's record of an interprocess event is a record of its shared page: until the
    /// graph reaches it the event is pending, and a stream waiting for it waits for the graph
    /// (it looked complete at once, as never recorded, before).
    #[test]
    fn a_graph_records_an_interprocess_event_in_its_shared_page() {
        use crate::graph::{
            hipGraphAddEventRecordNode, hipGraphAddHostNode, hipGraphExecDestroy,
            hipGraphInstantiate, hipGraphLaunch, hipHostNodeParams,
        };
        use crate::stream::{
            hipEventCreateWithFlags, hipEventDestroy, hipEventQuery, hipEventSynchronize,
            hipStreamCreate, hipStreamDestroy, hipStreamSynchronize, hipStreamWaitEvent,
        };
        let flag = AtomicBool::new(false);
        // SAFETY: valid out-pointers, handles made just here, `flag` outlives the launch.
        unsafe {
            let mut event: hipEvent_t = std::ptr::null_mut();
            // hipEventInterprocess | hipEventDisableTiming.
            assert_eq!(hipEventCreateWithFlags(&mut event, 4 | 2), hipSuccess);
            let mut graph: hipGraph_t = std::ptr::null_mut();
            assert_eq!(hipGraphCreate(&mut graph, 0), hipSuccess);
            let params = hipHostNodeParams {
                fn_: Some(slow_then_set),
                userData: (&flag as *const AtomicBool).cast_mut().cast(),
            };
            let mut host: hipGraphNode_t = std::ptr::null_mut();
            assert_eq!(
                hipGraphAddHostNode(&mut host, graph, null(), 0, &params),
                hipSuccess
            );
            let mut record: hipGraphNode_t = std::ptr::null_mut();
            assert_eq!(
                hipGraphAddEventRecordNode(&mut record, graph, &host, 1, event),
                hipSuccess
            );
            let mut exec: hipGraphExec_t = std::ptr::null_mut();
            assert_eq!(
                hipGraphInstantiate(
                    &mut exec,
                    graph,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    0
                ),
                hipSuccess
            );
            let (mut a, mut b): (hipStream_t, hipStream_t) =
                (std::ptr::null_mut(), std::ptr::null_mut());
            assert_eq!(hipStreamCreate(&mut a), hipSuccess);
            assert_eq!(hipStreamCreate(&mut b), hipSuccess);
            assert_eq!(hipGraphLaunch(exec, a), hipSuccess);
            assert_ne!(
                hipEventQuery(event),
                hipSuccess,
                "pending while the graph runs"
            );
            assert_eq!(hipStreamWaitEvent(b, event, 0), hipSuccess);
            assert_eq!(hipStreamSynchronize(b), hipSuccess);
            assert!(
                flag.load(Ordering::SeqCst),
                "stream b waited for the graph's record"
            );
            assert_eq!(hipEventSynchronize(event), hipSuccess);
            assert_eq!(hipEventQuery(event), hipSuccess);
            assert_eq!(hipStreamSynchronize(a), hipSuccess);
            for s in [a, b] {
                assert_eq!(hipStreamDestroy(s), hipSuccess);
            }
            assert_eq!(hipGraphExecDestroy(exec), hipSuccess);
            assert_eq!(hipGraphDestroy(graph), hipSuccess);
            assert_eq!(hipEventDestroy(event), hipSuccess);
        }
    }

    fn kept(id: u64) -> bool {
        DRV_COPIES
            .lock()
            .as_ref()
            .is_some_and(|c| c.contains_key(&id))
    }

    /// A driver-style copy node's `HIP_MEMCPY3D` lives as long as the node: destroying the node,
    /// or the graph holding it, forgets it (it was kept for ever before).
    #[test]
    fn copy_parameters_go_with_their_node_and_graph() {
        // SAFETY: valid out-pointers and handles made just here.
        unsafe {
            let mut graph: hipGraph_t = std::ptr::null_mut();
            assert_eq!(hipGraphCreate(&mut graph, 0), hipSuccess);
            let mut ids = Vec::new();
            for _ in 0..2 {
                let mut node: hipGraphNode_t = std::ptr::null_mut();
                assert_eq!(
                    hipGraphAddEmptyNode(&mut node, graph, null(), 0),
                    hipSuccess
                );
                let Ok((_, made)) = crate::graph::node_of(node) else {
                    panic!("a node just made is live")
                };
                remember_copy(made.id(), vec![0u8; 8].into());
                assert!(kept(made.id()));
                ids.push((node, made.id()));
            }
            assert_eq!(hipGraphDestroyNode(ids[0].0), hipSuccess);
            assert!(!kept(ids[0].1), "destroying the node forgets its copy");
            assert!(kept(ids[1].1));
            assert_eq!(hipGraphDestroy(graph), hipSuccess);
            assert!(
                !kept(ids[1].1),
                "destroying the graph forgets its nodes' copies"
            );
        }
    }
}
