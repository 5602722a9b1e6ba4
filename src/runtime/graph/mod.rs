//! Graphs (HIP's `hipGraph_t`): work described once as nodes and dependencies, instantiated
//! into an executable ([`GraphExec`]) that a stream runs as many times as it likes.
//!
//! A [`Graph`] holds nodes of every kind HIP 5.2 has (kernel, copies 1D/3D and to or from a
//! device variable, fill, host function, child graph, event record, event wait, empty) and the
//! edges between them; a [`Node`] names one node of one graph (a stale one is an error, never
//! a dangling reference). Node ids are unique in the process; a clone's nodes remember the node
//! they were cloned from ([`Graph::find_in_clone`]). A graph may hold a cycle while it is being
//! built (HIP checks at instantiation, and so does this module).
//!
//! What a node keeps is what its API gave, so the API can hand it back: a kernel node copies
//! its argument values when it is made (as HIP does), a copy node keeps the caller's pointers
//! and pitches. Not for running graphs (the [`exec`] module forms the packets) or for stream
//! capture ([`super::capture`]), and it holds no C types.

pub mod exec;
pub mod memory;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use super::external::ExternalSemaphore;
use super::kernel::KernelRef;
use super::launch::LaunchConfig;
use super::memops::MemOp;
use super::stream::Event;

pub use exec::{GraphExec, UpdateResult};
pub use memory::{graph_memory_stats, reset_graph_memory_high, GraphAllocation};

/// A node's identity: unique among every node the process makes.
pub type NodeId = u64;

/// Nodes one graph may hold (with those of its child graphs): far more than any program
/// builds, and small enough that every walk over a graph stays cheap.
pub const MAX_NODES: usize = 1 << 20;
/// How deep child graphs may nest.
pub const MAX_DEPTH: usize = 64;

static NEXT_NODE: AtomicU64 = AtomicU64::new(1);
static NEXT_GRAPH: AtomicU64 = AtomicU64::new(1);

/// What a graph operation refused, with the node or graph concerned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// A node that is not (or no longer) in the graph given.
    #[error("node {node} is not a node of graph {graph}")]
    NotInGraph {
        /// The node.
        node: NodeId,
        /// The graph.
        graph: u64,
    },
    /// A node whose graph was destroyed.
    #[error("node {node}: its graph no longer exists")]
    GraphGone {
        /// The node.
        node: NodeId,
    },
    /// The same node given twice in one list of dependencies or edges.
    #[error("node {node} is given twice")]
    Duplicate {
        /// The node.
        node: NodeId,
    },
    /// An edge from a node to itself.
    #[error("node {node} cannot depend on itself")]
    SelfDependency {
        /// The node.
        node: NodeId,
    },
    /// An edge that is already there.
    #[error("the edge {from} -> {to} already exists")]
    EdgeExists {
        /// Its source.
        from: NodeId,
        /// Its destination.
        to: NodeId,
    },
    /// An edge to remove that is not there.
    #[error("there is no edge {from} -> {to}")]
    NoSuchEdge {
        /// Its source.
        from: NodeId,
        /// Its destination.
        to: NodeId,
    },
    /// A node of another kind than the operation is for.
    #[error("node {node} is a {found} node, not a {expected} node")]
    WrongKind {
        /// The node.
        node: NodeId,
        /// The kind the operation needs.
        expected: &'static str,
        /// The node's kind.
        found: NodeKind,
    },
    /// A cycle, found when the graph was ordered (instantiation).
    #[error("graph {graph} has a cycle through node {node}")]
    Cycle {
        /// The graph holding the cycle.
        graph: u64,
        /// A node on it.
        node: NodeId,
    },
    /// A graph with more nodes, or child graphs nested deeper, than the limits.
    #[error("graph {graph}: {what}")]
    TooLarge {
        /// The graph.
        graph: u64,
        /// Which limit.
        what: String,
    },
    /// [`Graph::find_in_clone`] on a graph that is not a clone, or for a node it has no copy of.
    #[error("graph {graph} has no node cloned from node {node}")]
    NotInClone {
        /// The graph searched.
        graph: u64,
        /// The original node.
        node: NodeId,
    },
    /// A node the executable graph was not instantiated from.
    #[error("node {node} is not a node of the graph this executable was instantiated from")]
    NotInExec {
        /// The node.
        node: NodeId,
    },
    /// A change an executable graph cannot take (a copy's direction, a child graph of another
    /// shape), or a node that cannot be disabled.
    #[error("node {node}: {reason}")]
    Unsupported {
        /// The node.
        node: NodeId,
        /// Why.
        reason: String,
    },
    /// `hipGraphExecUpdate`'s refusal: which rule, the node where it was found.
    #[error("the graph cannot update the executable ({result:?}{}): {reason}", .node.map(|n| format!(" at node {n}")).unwrap_or_default())]
    Update {
        /// HIP's update result.
        result: UpdateResult,
        /// The node of the new graph where the difference is.
        node: Option<NodeId>,
        /// What differs.
        reason: String,
    },
}

/// The kind of a node, as HIP 5.2 tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// A kernel launch.
    Kernel,
    /// A 3D (pitched) copy.
    Memcpy,
    /// A linear copy.
    Memcpy1D,
    /// A copy out of a device variable.
    MemcpyFromSymbol,
    /// A copy into a device variable.
    MemcpyToSymbol,
    /// A fill of 1D or 2D memory.
    Memset,
    /// A host function.
    Host,
    /// A child graph.
    Graph,
    /// Nothing: a point of dependencies.
    Empty,
    /// A wait for an event.
    EventWait,
    /// An event record.
    EventRecord,
    /// External semaphores signalled.
    SemaphoreSignal,
    /// External semaphores waited for.
    SemaphoreWait,
    /// Graph memory allocated.
    MemAlloc,
    /// Graph memory freed.
    MemFree,
    /// Stream memory operations (writes and waits of values).
    BatchMemOp,
}

impl fmt::Display for NodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            NodeKind::Kernel => "kernel",
            NodeKind::Memcpy => "memcpy",
            NodeKind::Memcpy1D => "1D memcpy",
            NodeKind::MemcpyFromSymbol => "memcpy-from-symbol",
            NodeKind::MemcpyToSymbol => "memcpy-to-symbol",
            NodeKind::Memset => "memset",
            NodeKind::Host => "host",
            NodeKind::Graph => "child graph",
            NodeKind::Empty => "empty",
            NodeKind::EventWait => "event wait",
            NodeKind::EventRecord => "event record",
            NodeKind::SemaphoreSignal => "external semaphore signal",
            NodeKind::SemaphoreWait => "external semaphore wait",
            NodeKind::MemAlloc => "memory allocation",
            NodeKind::MemFree => "memory free",
            NodeKind::BatchMemOp => "batch memory operation",
        };
        f.write_str(name)
    }
}

/// The `extra` words HIP's launch API takes for packed arguments.
const PARAM_BUFFER_POINTER: u64 = 1;
const PARAM_BUFFER_SIZE: u64 = 2;
const PARAM_END: u64 = 3;

/// A kernel node's argument values, copied when the node was made. Besides the values it
/// keeps the arrays HIP hands back for them (`kernelParams`: one pointer per value; `extra`:
/// the packed buffer's words), pointing into its own copies.
pub struct KernelArgs {
    storage: ArgStorage,
    /// `kernelParams` or `extra`, pointing into `storage`.
    table: Box<[u64]>,
}

enum ArgStorage {
    Values(Vec<Box<[u8]>>),
    /// The size lives in a box of its own: `extra` points to it.
    Packed {
        bytes: Box<[u8]>,
        _size: Box<u64>,
    },
}

impl KernelArgs {
    /// One value per explicit argument (`kernelParams`).
    pub fn values(values: Vec<Box<[u8]>>) -> KernelArgs {
        let table = values.iter().map(|v| v.as_ptr() as u64).collect();
        KernelArgs {
            storage: ArgStorage::Values(values),
            table,
        }
    }

    /// The explicit arguments packed as the kernarg segment lays them out (`extra`).
    pub fn packed(bytes: Box<[u8]>) -> KernelArgs {
        let size = Box::new(bytes.len() as u64);
        let table = Box::new([
            PARAM_BUFFER_POINTER,
            bytes.as_ptr() as u64,
            PARAM_BUFFER_SIZE,
            &*size as *const u64 as u64,
            PARAM_END,
        ]);
        KernelArgs {
            storage: ArgStorage::Packed { bytes, _size: size },
            table,
        }
    }

    /// The values as a launch takes them.
    pub fn explicit(&self) -> (Vec<&[u8]>, Option<&[u8]>) {
        match &self.storage {
            ArgStorage::Values(v) => (v.iter().map(|b| &b[..]).collect(), None),
            ArgStorage::Packed { bytes, .. } => (Vec::new(), Some(&bytes[..])),
        }
    }

    /// Whether the values are packed (`extra`) rather than one per argument.
    pub fn is_packed(&self) -> bool {
        matches!(self.storage, ArgStorage::Packed { .. })
    }

    /// The address of the array HIP hands back: one pointer per value, or the `extra` words.
    /// It stays valid while the node keeps these arguments.
    pub fn table_address(&self) -> u64 {
        self.table.as_ptr() as u64
    }
}

impl Clone for KernelArgs {
    fn clone(&self) -> KernelArgs {
        match &self.storage {
            ArgStorage::Values(v) => KernelArgs::values(v.clone()),
            ArgStorage::Packed { bytes, .. } => KernelArgs::packed(bytes.clone()),
        }
    }
}

impl fmt::Debug for KernelArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.storage {
            ArgStorage::Values(v) => write!(f, "KernelArgs({} values)", v.len()),
            ArgStorage::Packed { bytes, .. } => {
                write!(f, "KernelArgs({} packed bytes)", bytes.len())
            }
        }
    }
}

/// A kernel launch.
#[derive(Debug, Clone)]
pub struct KernelNode {
    /// The kernel (loaded in one device context: graphs with it run on that device).
    pub kernel: KernelRef,
    /// Grid, block, dynamic LDS.
    pub config: LaunchConfig,
    /// The argument values.
    pub args: KernelArgs,
    /// Whether every work-group must be resident at once (a cooperative launch).
    pub cooperative: bool,
    /// How the caller named the function (a host stub's address, a function handle), handed
    /// back as it was given.
    pub function: u64,
    /// The node's priority attribute (HIP 6's `hipLaunchAttributePriority`), kept for the API:
    /// each stream of the software agent has one packet processor, so it orders nothing.
    pub priority: i32,
}

/// A pitched pointer of a 3D copy: base, bytes per row, and the allocation's logical width
/// (bytes) and height (rows).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PitchedPtr {
    /// Base address.
    pub ptr: u64,
    /// Bytes from one row to the next.
    pub pitch: u64,
    /// Width in bytes.
    pub xsize: u64,
    /// Rows per slice.
    pub ysize: u64,
}

/// What a copy node copies, as its API described it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyForm {
    /// `len` bytes from `src` to `dst`.
    Linear {
        /// Destination.
        dst: u64,
        /// Source.
        src: u64,
        /// Bytes.
        len: u64,
    },
    /// A box of `extent` (bytes, rows, slices) between pitched layouts, from the positions
    /// given (x in bytes).
    Pitched {
        /// Source layout.
        src: PitchedPtr,
        /// Source position (x bytes, y rows, z slices).
        src_pos: [u64; 3],
        /// Destination layout.
        dst: PitchedPtr,
        /// Destination position.
        dst_pos: [u64; 3],
        /// Bytes, rows, slices.
        extent: [u64; 3],
    },
    /// `len` bytes from a device variable (at `offset` of it) to `dst`.
    FromSymbol {
        /// Destination.
        dst: u64,
        /// The variable's host shadow, as the caller named it.
        symbol: u64,
        /// The variable's device address plus `offset`, resolved when the node was made.
        address: u64,
        /// Offset into the variable.
        offset: u64,
        /// Bytes.
        len: u64,
    },
    /// `len` bytes from `src` into a device variable.
    ToSymbol {
        /// The variable's host shadow.
        symbol: u64,
        /// Its device address plus `offset`.
        address: u64,
        /// Source.
        src: u64,
        /// Offset into the variable.
        offset: u64,
        /// Bytes.
        len: u64,
    },
}

/// A copy: its form and the caller's direction (`hipMemcpyKind`, kept for the API; the
/// pointers decide what is copied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyNode {
    /// What is copied.
    pub form: CopyForm,
    /// The caller's `hipMemcpyKind`.
    pub kind: i32,
}

/// One run of rows of a copy, in bytes: `depth` slices of `height` rows of `width` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyRows {
    /// First destination byte.
    pub dst: u64,
    /// Destination bytes from row to row.
    pub dst_pitch: u64,
    /// Destination bytes from slice to slice.
    pub dst_slice: u64,
    /// First source byte.
    pub src: u64,
    /// Source bytes from row to row.
    pub src_pitch: u64,
    /// Source bytes from slice to slice.
    pub src_slice: u64,
    /// Bytes per row.
    pub width: u64,
    /// Rows per slice.
    pub height: u64,
    /// Slices.
    pub depth: u64,
}

impl CopyRows {
    /// Bytes from the first to one past the last byte of a side (`None` when it overflows).
    pub fn span(pitch: u64, slice: u64, width: u64, height: u64, depth: u64) -> Option<u64> {
        if width == 0 || height == 0 || depth == 0 {
            return Some(0);
        }
        slice
            .checked_mul(depth - 1)?
            .checked_add(pitch.checked_mul(height - 1)?)?
            .checked_add(width)
    }
}

impl CopyNode {
    /// The node's copy as rows (a linear copy is one row), or why it cannot be one.
    pub fn rows(&self) -> Result<CopyRows, String> {
        let linear = |dst: u64, src: u64, len: u64| CopyRows {
            dst,
            dst_pitch: len,
            dst_slice: len,
            src,
            src_pitch: len,
            src_slice: len,
            width: len,
            height: 1,
            depth: 1,
        };
        match self.form {
            CopyForm::Linear { dst, src, len } => Ok(linear(dst, src, len)),
            CopyForm::FromSymbol {
                dst, address, len, ..
            } => Ok(linear(dst, address, len)),
            CopyForm::ToSymbol {
                address, src, len, ..
            } => Ok(linear(address, src, len)),
            CopyForm::Pitched {
                src,
                src_pos,
                dst,
                dst_pos,
                extent: [width, height, depth],
            } => {
                let side =
                    |p: PitchedPtr, pos: [u64; 3], name: &str| -> Result<(u64, u64), String> {
                        if p.ptr == 0 {
                            return Err(format!("the {name} pointer is NULL"));
                        }
                        if p.pitch < width {
                            return Err(format!(
                                "the {name} pitch {} is smaller than the width {width}",
                                p.pitch
                            ));
                        }
                        // Rows per slice: the pointer's height, at least the rows copied.
                        let rows = p.ysize.max(height.saturating_add(pos[1]));
                        let slice = p
                            .pitch
                            .checked_mul(rows)
                            .ok_or_else(|| format!("the {name} slice overflows"))?;
                        let start = pos[2]
                            .checked_mul(slice)
                            .and_then(|z| z.checked_add(pos[1].checked_mul(p.pitch)?))
                            .and_then(|o| o.checked_add(pos[0]))
                            .and_then(|o| o.checked_add(p.ptr))
                            .ok_or_else(|| format!("the {name} position overflows"))?;
                        Ok((start, slice))
                    };
                let (s, src_slice) = side(src, src_pos, "source")?;
                let (d, dst_slice) = side(dst, dst_pos, "destination")?;
                Ok(CopyRows {
                    dst: d,
                    dst_pitch: dst.pitch,
                    dst_slice,
                    src: s,
                    src_pitch: src.pitch,
                    src_slice,
                    width,
                    height,
                    depth,
                })
            }
        }
    }

    /// The node's kind.
    pub fn kind(&self) -> NodeKind {
        match self.form {
            CopyForm::Linear { .. } => NodeKind::Memcpy1D,
            CopyForm::Pitched { .. } => NodeKind::Memcpy,
            CopyForm::FromSymbol { .. } => NodeKind::MemcpyFromSymbol,
            CopyForm::ToSymbol { .. } => NodeKind::MemcpyToSymbol,
        }
    }
}

/// A fill of `height` rows of `width` elements of `element_size` bytes, `pitch` bytes apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemsetNode {
    /// First byte.
    pub dst: u64,
    /// The element's value (its low `element_size` bytes).
    pub value: u32,
    /// 1, 2 or 4.
    pub element_size: u8,
    /// Elements per row.
    pub width: u64,
    /// Rows.
    pub height: u64,
    /// Bytes from row to row (ignored for one row).
    pub pitch: u64,
}

impl MemsetNode {
    /// Bytes per row.
    pub fn row_bytes(&self) -> Option<u64> {
        self.width.checked_mul(u64::from(self.element_size))
    }
}

/// A host function, run on a host thread in graph order.
#[derive(Clone)]
pub struct HostNode {
    /// What runs.
    pub call: Arc<dyn Fn() + Send + Sync>,
    /// The caller's function and data, handed back as given.
    pub function: u64,
    /// The caller's data pointer.
    pub data: u64,
}

impl fmt::Debug for HostNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostNode")
            .field("function", &format_args!("{:#x}", self.function))
            .field("data", &format_args!("{:#x}", self.data))
            .finish()
    }
}

/// External semaphores a node signals or waits for, with the caller's handles and parameter
/// structures copied (handed back by the API's getters, pointing into these copies).
#[derive(Debug, Clone)]
pub struct SemaphoreNode {
    /// The semaphores, in order.
    pub semaphores: Vec<Arc<ExternalSemaphore>>,
    /// The caller's handles, one per semaphore.
    pub handles: Arc<[u64]>,
    /// The caller's parameter structures, as bytes.
    pub params: Arc<[u8]>,
}

/// Stream memory operations a node runs in order, with the caller's parameters copied.
#[derive(Debug, Clone)]
pub struct BatchMemOpNode {
    /// The operations.
    pub ops: Vec<MemOp>,
    /// The caller's `hipStreamBatchMemOpParams`, as bytes.
    pub params: Arc<[u8]>,
    /// The caller's context, handed back.
    pub context: u64,
    /// The caller's flags, handed back.
    pub flags: u32,
}

/// What a node does.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum NodeOp {
    /// Launch a kernel.
    Kernel(KernelNode),
    /// Copy memory.
    Copy(CopyNode),
    /// Fill memory.
    Memset(MemsetNode),
    /// Call a host function.
    Host(HostNode),
    /// Run a graph (owned by the node: [`Graph::add_child`] clones the graph given).
    Child(Graph),
    /// Record an event.
    EventRecord(Event),
    /// Wait for an event.
    EventWait(Event),
    /// Signal external semaphores.
    SemaphoreSignal(SemaphoreNode),
    /// Wait for external semaphores.
    SemaphoreWait(SemaphoreNode),
    /// Make graph memory reachable (the block is the node's for the graph's lifetime).
    MemAlloc(Arc<GraphAllocation>),
    /// Make graph memory unreachable.
    MemFree(Arc<GraphAllocation>),
    /// Write and wait for values.
    BatchMemOp(BatchMemOpNode),
    /// Nothing.
    Empty,
}

impl NodeOp {
    /// The node's kind.
    pub fn kind(&self) -> NodeKind {
        match self {
            NodeOp::Kernel(_) => NodeKind::Kernel,
            NodeOp::Copy(c) => c.kind(),
            NodeOp::Memset(_) => NodeKind::Memset,
            NodeOp::Host(_) => NodeKind::Host,
            NodeOp::Child(_) => NodeKind::Graph,
            NodeOp::EventRecord(_) => NodeKind::EventRecord,
            NodeOp::EventWait(_) => NodeKind::EventWait,
            NodeOp::SemaphoreSignal(_) => NodeKind::SemaphoreSignal,
            NodeOp::SemaphoreWait(_) => NodeKind::SemaphoreWait,
            NodeOp::MemAlloc(_) => NodeKind::MemAlloc,
            NodeOp::MemFree(_) => NodeKind::MemFree,
            NodeOp::BatchMemOp(_) => NodeKind::BatchMemOp,
            NodeOp::Empty => NodeKind::Empty,
        }
    }

    /// A copy with child graphs cloned too (a graph's clone owns its own children).
    fn deep_clone(&self) -> NodeOp {
        match self {
            NodeOp::Child(g) => NodeOp::Child(g.deep_clone().0),
            op => op.clone(),
        }
    }
}

#[derive(Debug)]
struct Entry {
    /// The node this one was cloned from (its own id when it is no clone), through any
    /// number of clones.
    origin: NodeId,
    op: NodeOp,
    deps: Vec<NodeId>,
    dependents: Vec<NodeId>,
}

#[derive(Debug, Default)]
struct State {
    /// In creation order (ids grow), which [`Graph::nodes`] follows where edges allow.
    nodes: BTreeMap<NodeId, Entry>,
}

/// Something a graph keeps alive for its API (HIP's user objects): shared by the graph's
/// clones and executables, dropped when the last of them goes.
pub type Held = Arc<dyn std::any::Any + Send + Sync>;

struct Inner {
    id: u64,
    /// The graph this one is a clone of.
    cloned_from: Option<u64>,
    /// How many child-graph nodes hold this graph above it (0: a graph of its own). Every way a
    /// child graph enters a graph checks it, so nesting stays below [`MAX_DEPTH`] and the
    /// walks over child graphs stay shallow.
    nesting: AtomicUsize,
    state: Mutex<State>,
    held: Mutex<Vec<Held>>,
}

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("id", &self.id)
            .field("cloned_from", &self.cloned_from)
            .field("state", &self.state)
            .field("held", &self.held.lock().len())
            .finish()
    }
}

/// A graph: nodes and the edges between them. Cheap to clone (clones share the graph; see
/// [`deep_clone`](Self::deep_clone) for a copy).
#[derive(Debug, Clone)]
pub struct Graph(Arc<Inner>);

/// A node of a graph. Holds no reference that keeps the graph alive.
#[derive(Debug, Clone)]
pub struct Node {
    graph: Weak<Inner>,
    id: NodeId,
}

impl PartialEq for Node {
    fn eq(&self, other: &Node) -> bool {
        self.id == other.id
    }
}
impl Eq for Node {}

impl Node {
    /// The node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// Its graph, if it still exists.
    pub fn graph(&self) -> Option<Graph> {
        self.graph.upgrade().map(Graph)
    }

    /// Its graph and whether the node is still in it.
    ///
    /// # Errors
    /// [`GraphError::GraphGone`], [`GraphError::NotInGraph`] for a destroyed node.
    pub fn live_graph(&self) -> Result<Graph, GraphError> {
        let g = self
            .graph()
            .ok_or(GraphError::GraphGone { node: self.id })?;
        if !g.0.state.lock().nodes.contains_key(&self.id) {
            return Err(GraphError::NotInGraph {
                node: self.id,
                graph: g.id(),
            });
        }
        Ok(g)
    }
}

impl Default for Graph {
    fn default() -> Self {
        Graph::new()
    }
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Graph {
        Graph::with_origin(None)
    }

    fn with_origin(cloned_from: Option<u64>) -> Graph {
        Graph(Arc::new(Inner {
            id: NEXT_GRAPH.fetch_add(1, Ordering::Relaxed),
            cloned_from,
            nesting: AtomicUsize::new(0),
            state: Mutex::new(State::default()),
            held: Mutex::new(Vec::new()),
        }))
    }

    /// A number identifying the graph, unique for the process's lifetime.
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// Whether `self` and `other` are the same graph.
    pub fn same(&self, other: &Graph) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    fn node(&self, id: NodeId) -> Node {
        Node {
            graph: Arc::downgrade(&self.0),
            id,
        }
    }

    /// `node`'s id, if it is a node of this graph.
    fn member(&self, state: &State, node: &Node) -> Result<NodeId, GraphError> {
        if !Weak::ptr_eq(&node.graph, &Arc::downgrade(&self.0))
            || !state.nodes.contains_key(&node.id)
        {
            return Err(GraphError::NotInGraph {
                node: node.id,
                graph: self.id(),
            });
        }
        Ok(node.id)
    }

    /// Whether `node` is a node of this graph.
    pub fn contains(&self, node: &Node) -> bool {
        let state = self.0.state.lock();
        self.member(&state, node).is_ok()
    }

    /// How many nodes the graph and its child graphs hold.
    pub fn total_nodes(&self) -> usize {
        let children: Vec<Graph> = {
            let state = self.0.state.lock();
            state
                .nodes
                .values()
                .filter_map(|e| match &e.op {
                    NodeOp::Child(c) => Some(c.clone()),
                    _ => None,
                })
                .collect()
        };
        self.len() + children.iter().map(Graph::total_nodes).sum::<usize>()
    }

    /// How many nodes the graph holds (not counting its child graphs' nodes).
    pub fn len(&self) -> usize {
        self.0.state.lock().nodes.len()
    }

    /// Whether it has no node.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds a node after `deps` (nodes of this graph, each once).
    ///
    /// # Errors
    /// [`GraphError::NotInGraph`] or [`GraphError::Duplicate`] for a dependency,
    /// [`GraphError::TooLarge`] past [`MAX_NODES`].
    pub fn add(&self, op: NodeOp, deps: &[Node]) -> Result<Node, GraphError> {
        let mut state = self.0.state.lock();
        let mut ids = Vec::with_capacity(deps.len());
        for d in deps {
            let id = self.member(&state, d)?;
            if ids.contains(&id) {
                return Err(GraphError::Duplicate { node: id });
            }
            ids.push(id);
        }
        self.insert(&mut state, op, ids, None)
    }

    /// Adds a node after nodes given by id (stream capture's dependency sets), skipping ids
    /// that are no longer in the graph.
    pub(crate) fn add_after(&self, op: NodeOp, deps: &[NodeId]) -> Result<Node, GraphError> {
        let mut state = self.0.state.lock();
        let mut ids: Vec<NodeId> = Vec::with_capacity(deps.len());
        for &d in deps {
            if state.nodes.contains_key(&d) && !ids.contains(&d) {
                ids.push(d);
            }
        }
        self.insert(&mut state, op, ids, None)
    }

    fn insert(
        &self,
        state: &mut State,
        op: NodeOp,
        deps: Vec<NodeId>,
        origin: Option<NodeId>,
    ) -> Result<Node, GraphError> {
        if state.nodes.len() >= MAX_NODES {
            return Err(GraphError::TooLarge {
                graph: self.id(),
                what: format!("more than {MAX_NODES} nodes"),
            });
        }
        if let NodeOp::Child(child) = &op {
            self.adopt(child)?;
        }
        let id = NEXT_NODE.fetch_add(1, Ordering::Relaxed);
        for d in &deps {
            if let Some(e) = state.nodes.get_mut(d) {
                e.dependents.push(id);
            }
        }
        state.nodes.insert(
            id,
            Entry {
                origin: origin.unwrap_or(id),
                op,
                deps,
                dependents: Vec::new(),
            },
        );
        Ok(self.node(id))
    }

    /// Adds a node running a clone of `child` (HIP clones the child graph into the node).
    ///
    /// # Errors
    /// As [`add`](Self::add); [`GraphError::TooLarge`] when the child nests too deep.
    pub fn add_child(&self, child: &Graph, deps: &[Node]) -> Result<Node, GraphError> {
        let total = self.total_nodes().saturating_add(child.total_nodes());
        if total > MAX_NODES {
            return Err(GraphError::TooLarge {
                graph: self.id(),
                what: format!("{total} nodes with the child graph (at most {MAX_NODES})"),
            });
        }
        let (clone, _) = child.deep_clone();
        self.add(NodeOp::Child(clone), deps)
    }

    /// Makes `child` (about to be a child graph of this one) nest under it: refused when that
    /// would nest child graphs deeper than [`MAX_DEPTH`].
    fn adopt(&self, child: &Graph) -> Result<(), GraphError> {
        if child.same(self) {
            return Err(GraphError::TooLarge {
                graph: self.id(),
                what: "a graph cannot hold itself".into(),
            });
        }
        let at = self.0.nesting.load(Ordering::Relaxed) + 1;
        let depth = child.depth();
        if at + depth > MAX_DEPTH {
            return Err(GraphError::TooLarge {
                graph: self.id(),
                what: format!(
                    "child graphs nested {} deep (at most {MAX_DEPTH})",
                    at + depth
                ),
            });
        }
        child.set_nesting(at);
        Ok(())
    }

    /// Records how deep this graph and its children nest.
    fn set_nesting(&self, nesting: usize) {
        self.0.nesting.store(nesting, Ordering::Relaxed);
        for c in self.children() {
            c.set_nesting(nesting + 1);
        }
    }

    /// How deep child graphs nest below this graph (0: none).
    pub fn depth(&self) -> usize {
        let children: Vec<Graph> = self.children();
        children.iter().map(|c| c.depth() + 1).max().unwrap_or(0)
    }

    fn children(&self) -> Vec<Graph> {
        let state = self.0.state.lock();
        state
            .nodes
            .values()
            .filter_map(|e| match &e.op {
                NodeOp::Child(c) => Some(c.clone()),
                _ => None,
            })
            .collect()
    }

    /// Removes `node` and its edges.
    ///
    /// # Errors
    /// [`GraphError::NotInGraph`].
    pub fn remove(&self, node: &Node) -> Result<NodeOp, GraphError> {
        let mut state = self.0.state.lock();
        let id = self.member(&state, node)?;
        let entry = state.nodes.remove(&id).ok_or(GraphError::NotInGraph {
            node: id,
            graph: self.id(),
        })?;
        for d in &entry.deps {
            if let Some(e) = state.nodes.get_mut(d) {
                e.dependents.retain(|&x| x != id);
            }
        }
        for d in &entry.dependents {
            if let Some(e) = state.nodes.get_mut(d) {
                e.deps.retain(|&x| x != id);
            }
        }
        Ok(entry.op)
    }

    /// Adds the edges `from[i] -> to[i]`; all or none.
    ///
    /// # Errors
    /// A node of another graph, an edge from a node to itself, an edge already there or given
    /// twice.
    pub fn add_edges(&self, edges: &[(Node, Node)]) -> Result<(), GraphError> {
        let mut state = self.0.state.lock();
        let mut new: Vec<(NodeId, NodeId)> = Vec::with_capacity(edges.len());
        for (from, to) in edges {
            let (f, t) = (self.member(&state, from)?, self.member(&state, to)?);
            if f == t {
                return Err(GraphError::SelfDependency { node: f });
            }
            let exists = state
                .nodes
                .get(&f)
                .is_some_and(|e| e.dependents.contains(&t));
            if exists || new.contains(&(f, t)) {
                return Err(GraphError::EdgeExists { from: f, to: t });
            }
            new.push((f, t));
        }
        for (f, t) in new {
            if let Some(e) = state.nodes.get_mut(&f) {
                e.dependents.push(t);
            }
            if let Some(e) = state.nodes.get_mut(&t) {
                e.deps.push(f);
            }
        }
        Ok(())
    }

    /// Removes the edges `from[i] -> to[i]`; all or none.
    ///
    /// # Errors
    /// A node of another graph, or an edge that is not there.
    pub fn remove_edges(&self, edges: &[(Node, Node)]) -> Result<(), GraphError> {
        let mut state = self.0.state.lock();
        let mut gone: Vec<(NodeId, NodeId)> = Vec::with_capacity(edges.len());
        for (from, to) in edges {
            let (f, t) = (self.member(&state, from)?, self.member(&state, to)?);
            let exists = state
                .nodes
                .get(&f)
                .is_some_and(|e| e.dependents.contains(&t));
            if !exists || gone.contains(&(f, t)) {
                return Err(GraphError::NoSuchEdge { from: f, to: t });
            }
            gone.push((f, t));
        }
        for (f, t) in gone {
            if let Some(e) = state.nodes.get_mut(&f) {
                e.dependents.retain(|&x| x != t);
            }
            if let Some(e) = state.nodes.get_mut(&t) {
                e.deps.retain(|&x| x != f);
            }
        }
        Ok(())
    }

    /// Every node: in an order where each comes after its dependencies (creation order where
    /// edges allow), or in creation order when the graph holds a cycle.
    pub fn nodes(&self) -> Vec<Node> {
        let state = self.0.state.lock();
        let order = topological(&state).unwrap_or_else(|_| state.nodes.keys().copied().collect());
        order.into_iter().map(|id| self.node(id)).collect()
    }

    /// The nodes without dependencies, in creation order.
    pub fn root_nodes(&self) -> Vec<Node> {
        let state = self.0.state.lock();
        state
            .nodes
            .iter()
            .filter(|(_, e)| e.deps.is_empty())
            .map(|(&id, _)| self.node(id))
            .collect()
    }

    /// The nodes nothing depends on, in creation order.
    pub fn leaf_nodes(&self) -> Vec<Node> {
        let state = self.0.state.lock();
        state
            .nodes
            .iter()
            .filter(|(_, e)| e.dependents.is_empty())
            .map(|(&id, _)| self.node(id))
            .collect()
    }

    /// Every edge, by source in creation order, then in the order the edges were added.
    pub fn edges(&self) -> Vec<(Node, Node)> {
        let state = self.0.state.lock();
        state
            .nodes
            .iter()
            .flat_map(|(&f, e)| e.dependents.iter().map(move |&t| (f, t)))
            .map(|(f, t)| (self.node(f), self.node(t)))
            .collect()
    }

    /// What `node` depends on, in the order the dependencies were added.
    ///
    /// # Errors
    /// [`GraphError::NotInGraph`].
    pub fn dependencies(&self, node: &Node) -> Result<Vec<Node>, GraphError> {
        let state = self.0.state.lock();
        let id = self.member(&state, node)?;
        Ok(state.nodes[&id]
            .deps
            .iter()
            .map(|&d| self.node(d))
            .collect())
    }

    /// What depends on `node`.
    ///
    /// # Errors
    /// [`GraphError::NotInGraph`].
    pub fn dependents(&self, node: &Node) -> Result<Vec<Node>, GraphError> {
        let state = self.0.state.lock();
        let id = self.member(&state, node)?;
        Ok(state.nodes[&id]
            .dependents
            .iter()
            .map(|&d| self.node(d))
            .collect())
    }

    /// What `node` does (a copy; a child graph is shared, not cloned).
    ///
    /// # Errors
    /// [`GraphError::NotInGraph`].
    pub fn op(&self, node: &Node) -> Result<NodeOp, GraphError> {
        let state = self.0.state.lock();
        let id = self.member(&state, node)?;
        Ok(state.nodes[&id].op.clone())
    }

    /// Reads `node`'s operation in place (for arrays the API hands back by address, which
    /// must point into the node itself).
    ///
    /// # Errors
    /// [`GraphError::NotInGraph`].
    pub fn with_op<R>(&self, node: &Node, f: impl FnOnce(&NodeOp) -> R) -> Result<R, GraphError> {
        let state = self.0.state.lock();
        let id = self.member(&state, node)?;
        Ok(f(&state.nodes[&id].op))
    }

    /// The kind of `node`.
    ///
    /// # Errors
    /// [`GraphError::NotInGraph`].
    pub fn kind(&self, node: &Node) -> Result<NodeKind, GraphError> {
        self.with_op(node, NodeOp::kind)
    }

    /// Replaces what `node` does with an operation of the same kind.
    ///
    /// # Errors
    /// [`GraphError::NotInGraph`], [`GraphError::WrongKind`].
    pub fn set_op(&self, node: &Node, op: NodeOp) -> Result<NodeOp, GraphError> {
        let mut state = self.0.state.lock();
        let id = self.member(&state, node)?;
        let entry = state.nodes.get_mut(&id).ok_or(GraphError::NotInGraph {
            node: id,
            graph: self.id(),
        })?;
        let (found, wanted) = (entry.op.kind(), op.kind());
        if !same_family(found, wanted) {
            return Err(GraphError::WrongKind {
                node: id,
                expected: kind_name(wanted),
                found,
            });
        }
        if let NodeOp::Child(child) = &op {
            self.adopt(child)?;
        }
        Ok(std::mem::replace(&mut entry.op, op))
    }

    /// Keeps `object` alive as long as this graph, its clones and executables made after this
    /// call (and their launches) are.
    pub fn hold(&self, object: Held) {
        self.0.held.lock().push(object);
    }

    /// What the graph keeps alive.
    pub fn held(&self) -> Vec<Held> {
        self.0.held.lock().clone()
    }

    /// Keeps only what `keep` accepts of what the graph keeps alive.
    pub fn retain_held(&self, keep: impl FnMut(&Held) -> bool) {
        self.0.held.lock().retain(keep);
    }

    /// A copy of the graph with new nodes (each remembering the node it was cloned from) and
    /// copies of its child graphs; also the map from this graph's node ids to the clone's. What
    /// the graph keeps alive, the clone keeps alive too.
    pub fn deep_clone(&self) -> (Graph, HashMap<NodeId, NodeId>) {
        let clone = Graph::with_origin(Some(self.id()));
        *clone.0.held.lock() = self.held();
        let mut map = HashMap::new();
        let state = self.0.state.lock();
        let mut cs = clone.0.state.lock();
        for (&id, e) in &state.nodes {
            let new = NEXT_NODE.fetch_add(1, Ordering::Relaxed);
            map.insert(id, new);
            cs.nodes.insert(
                new,
                Entry {
                    origin: e.origin,
                    op: e.op.deep_clone(),
                    deps: Vec::new(),
                    dependents: Vec::new(),
                },
            );
        }
        for (id, e) in &state.nodes {
            let new = map[id];
            let deps: Vec<NodeId> = e.deps.iter().filter_map(|d| map.get(d).copied()).collect();
            let dependents: Vec<NodeId> = e
                .dependents
                .iter()
                .filter_map(|d| map.get(d).copied())
                .collect();
            if let Some(c) = cs.nodes.get_mut(&new) {
                c.deps = deps;
                c.dependents = dependents;
            }
        }
        drop(cs);
        drop(state);
        // A clone is a graph of its own; its children nest under it.
        clone.set_nesting(0);
        (clone, map)
    }

    /// The node of this graph (a clone) that was cloned from `original`.
    ///
    /// # Errors
    /// [`GraphError::NotInClone`] when this graph is no clone or has no copy of `original`;
    /// `original`'s own errors when its graph is gone.
    pub fn find_in_clone(&self, original: &Node) -> Result<Node, GraphError> {
        let not_found = GraphError::NotInClone {
            graph: self.id(),
            node: original.id,
        };
        if self.0.cloned_from.is_none() {
            return Err(not_found);
        }
        let source = original.live_graph()?;
        let origin = source
            .0
            .state
            .lock()
            .nodes
            .get(&original.id)
            .map(|e| e.origin);
        let origin = origin.ok_or(not_found.clone())?;
        let state = self.0.state.lock();
        state
            .nodes
            .iter()
            .find(|(_, e)| e.origin == origin)
            .map(|(&id, _)| self.node(id))
            .ok_or(not_found)
    }

    /// The nodes in an order where each comes after its dependencies.
    ///
    /// # Errors
    /// [`GraphError::Cycle`] naming a node on a cycle.
    pub fn topological_order(&self) -> Result<Vec<Node>, GraphError> {
        let state = self.0.state.lock();
        topological(&state)
            .map(|ids| ids.into_iter().map(|id| self.node(id)).collect())
            .map_err(|node| GraphError::Cycle {
                graph: self.id(),
                node,
            })
    }

    /// Every graph below this one (child graphs, theirs, ...), this one first, each with the
    /// ids of its nodes: what an API layer must forget when the graph goes.
    pub fn subgraphs(&self) -> Vec<(Graph, Vec<NodeId>)> {
        let mut out = Vec::new();
        let mut todo = vec![self.clone()];
        while let Some(g) = todo.pop() {
            let ids: Vec<NodeId> = {
                let state = g.0.state.lock();
                state.nodes.keys().copied().collect()
            };
            todo.extend(g.children());
            out.push((g, ids));
        }
        out
    }

    /// Node ids mapped to positions in [`topological_order`](Self::topological_order), with
    /// each node's dependencies as positions: the graph's shape, for comparing two graphs.
    pub(crate) fn shape(&self) -> Result<Vec<(Node, NodeOp, Vec<usize>)>, GraphError> {
        let state = self.0.state.lock();
        let order = topological(&state).map_err(|node| GraphError::Cycle {
            graph: self.id(),
            node,
        })?;
        let position: HashMap<NodeId, usize> =
            order.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        Ok(order
            .iter()
            .map(|id| {
                let e = &state.nodes[id];
                let mut deps: Vec<usize> = e
                    .deps
                    .iter()
                    .filter_map(|d| position.get(d).copied())
                    .collect();
                deps.sort_unstable();
                (self.node(*id), e.op.clone(), deps)
            })
            .collect())
    }

    /// The dependencies of `node` as ids.
    pub(crate) fn dependency_ids(&self, id: NodeId) -> Vec<NodeId> {
        let state = self.0.state.lock();
        state
            .nodes
            .get(&id)
            .map(|e| e.deps.clone())
            .unwrap_or_default()
    }

    /// The ids of the nodes nothing depends on.
    pub(crate) fn leaf_ids(&self) -> HashSet<NodeId> {
        let state = self.0.state.lock();
        state
            .nodes
            .iter()
            .filter(|(_, e)| e.dependents.is_empty())
            .map(|(&id, _)| id)
            .collect()
    }

    /// The node with `id`, if it is in this graph.
    pub fn node_by_id(&self, id: NodeId) -> Option<Node> {
        let state = self.0.state.lock();
        state.nodes.contains_key(&id).then(|| self.node(id))
    }
}

/// Whether an operation of kind `b` may replace one of kind `a`: the same kind, or a linear
/// copy for a pitched one and back (HIP 5.5 and later number them as one kind).
fn same_family(a: NodeKind, b: NodeKind) -> bool {
    a == b
        || matches!(
            (a, b),
            (NodeKind::Memcpy, NodeKind::Memcpy1D) | (NodeKind::Memcpy1D, NodeKind::Memcpy)
        )
}

fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Kernel => "kernel",
        NodeKind::Memcpy => "memcpy",
        NodeKind::Memcpy1D => "1D memcpy",
        NodeKind::MemcpyFromSymbol => "memcpy-from-symbol",
        NodeKind::MemcpyToSymbol => "memcpy-to-symbol",
        NodeKind::Memset => "memset",
        NodeKind::Host => "host",
        NodeKind::Graph => "child graph",
        NodeKind::Empty => "empty",
        NodeKind::EventWait => "event wait",
        NodeKind::EventRecord => "event record",
        NodeKind::SemaphoreSignal => "external semaphore signal",
        NodeKind::SemaphoreWait => "external semaphore wait",
        NodeKind::MemAlloc => "memory allocation",
        NodeKind::MemFree => "memory free",
        NodeKind::BatchMemOp => "batch memory operation",
    }
}

/// Kahn's order, smallest ready id first; `Err` names a node on a cycle.
fn topological(state: &State) -> Result<Vec<NodeId>, NodeId> {
    let mut remaining: HashMap<NodeId, usize> = state
        .nodes
        .iter()
        .map(|(&id, e)| (id, e.deps.len()))
        .collect();
    let mut ready: std::collections::BTreeSet<NodeId> = remaining
        .iter()
        .filter(|(_, &n)| n == 0)
        .map(|(&id, _)| id)
        .collect();
    let mut order = Vec::with_capacity(state.nodes.len());
    while let Some(id) = ready.pop_first() {
        order.push(id);
        for d in &state.nodes[&id].dependents {
            if let Some(n) = remaining.get_mut(d) {
                *n -= 1;
                if *n == 0 {
                    ready.insert(*d);
                }
            }
        }
    }
    if order.len() == state.nodes.len() {
        return Ok(order);
    }
    // A node left over whose dependencies are all left over too lies on (or after) a cycle;
    // walk back through left-over dependencies until a node repeats: that one is on it.
    let done: HashSet<NodeId> = order.into_iter().collect();
    let start = state
        .nodes
        .keys()
        .copied()
        .find(|id| !done.contains(id))
        .unwrap_or_default();
    let mut seen = HashSet::new();
    let mut at = start;
    while seen.insert(at) {
        match state.nodes[&at].deps.iter().find(|d| !done.contains(d)) {
            Some(&d) => at = d,
            None => break,
        }
    }
    Err(at)
}

#[cfg(test)]
mod tests;
