//! Executable graphs (`hipGraphExec_t`): a graph instantiated into a plan of steps that a
//! launch submits to a stream's queue as AQL packets, on the same dispatch path as ordinary
//! launches.
//!
//! Instantiation clones the graph (later changes to it do not reach the executable), checks it
//! (cycles, in child graphs too) and flattens it: child graphs are inlined, empty nodes become
//! pure dependencies, and every remaining node is one step: a kernel dispatch packet, host work
//! for copies, fills and host functions, a barrier-AND packet for an event wait. Steps are laid
//! on lanes: lane 0 is the stream the graph is launched on, and independent branches go to up
//! to [`MAX_LANES`]` - 1` more lanes, non-blocking streams the device keeps for graphs. Within a
//! lane, queue order is the dependency; across lanes, a step waits for the completion signals of
//! the steps it depends on with barrier-AND packets (vector clocks skip waits already implied).
//! Other lanes start behind a fork barrier on the launching stream (so the graph runs after what
//! was submitted before it) and the launching stream ends with a barrier joining them (so what
//! is submitted after the launch, and a synchronisation, waits for the whole graph).
//!
//! A kernel step's kernarg segment is written once per queue it runs on and reused by every
//! launch; changing the node's parameters makes a new segment. A launch holds everything its
//! packets use (segments, code, signals) until its last packet on each lane is done, so an
//! executable graph may be changed or destroyed while launches are in flight. Not for editing
//! graphs ([`super::Graph`]) or for stream capture.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Instant;

use parking_lot::Mutex;

use super::memory::GraphAllocation;
use super::{
    CopyNode, Graph, GraphError, HostNode, KernelNode, MemsetNode, Node, NodeId, NodeKind, NodeOp,
    MAX_DEPTH,
};
use crate::device::aql::{self, Header};
use crate::device::{Completion, Condition, DeviceError, ExplicitArgs, KeepAlive, SignalHandle};
use crate::runtime::device::DeviceContext;
use crate::runtime::launch::{self, KernargSegment};
use crate::runtime::memops::MemOp;
use crate::runtime::stream::{Batch, Event, Stream, StreamKind, REFUSAL_WAIT};
use crate::runtime::{Runtime, RuntimeError, RuntimeResult};

/// Lanes a launch spreads independent branches over, the launching stream included.
pub const MAX_LANES: usize = 4;
/// Signals one barrier-AND packet waits for.
const BARRIER_DEPS: usize = 5;
/// Offset of a packet's completion signal.
const COMPLETION_SIGNAL: usize = 56;
/// Queues a kernel step keeps a kernarg segment for.
const SEGMENTS_PER_STEP: usize = 4;

/// The result of [`GraphExec::update`], numbered as HIP's `hipGraphExecUpdateResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum UpdateResult {
    /// The update succeeded.
    Success = 0,
    /// It failed for a reason the error gives.
    Error = 1,
    /// Nodes or edges differ.
    TopologyChanged = 2,
    /// A node's kind differs.
    NodeTypeChanged = 3,
    /// A kernel node's function differs in a way that cannot be updated.
    FunctionChanged = 4,
    /// Parameters differ in a way that cannot be updated (a copy's direction).
    ParametersChanged = 5,
    /// Something about a node cannot be updated.
    NotSupported = 6,
    /// A kernel node's function moved to another device.
    UnsupportedFunctionChange = 7,
}

/// A graph instantiated for launching. Cheap to clone.
#[derive(Debug, Clone)]
pub struct GraphExec(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    id: u64,
    flags: u64,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The private clone the executable runs (its ops change with set-params calls).
    graph: Graph,
    /// Nodes of the graph it was instantiated from (and of graphs it was updated from) to
    /// the clone's.
    nodes: HashMap<NodeId, NodeId>,
    /// Nodes of the clone that are disabled (run as empty nodes).
    disabled: HashSet<NodeId>,
    /// The steps, formed at instantiation and after changes of shape.
    plan: Plan,
}

static NEXT_EXEC: AtomicU64 = AtomicU64::new(1);

/// What a launch's steps are.
#[derive(Debug)]
struct Plan {
    steps: Vec<Step>,
    lanes: usize,
    /// Step index by the clone's node id (nodes of child graphs included).
    index: HashMap<NodeId, usize>,
    /// Tails of lanes the launching stream waits for at the end.
    join: Vec<usize>,
}

#[derive(Debug)]
struct Step {
    lane: usize,
    /// Steps of other lanes this one waits for.
    waits: Vec<usize>,
    /// The first step of a lane other than 0: it waits for the fork.
    first_in_lane: bool,
    /// Another step, the join, or an event waits for its completion signal.
    signal: bool,
    /// The last step of its lane.
    tail: bool,
    op: StepOp,
}

#[derive(Debug)]
enum StepOp {
    Kernel {
        node: KernelNode,
        /// Formed dispatches by queue address.
        prepared: Vec<(u64, Arc<PreparedKernel>)>,
    },
    Copy(CopyNode),
    Memset(MemsetNode),
    Host(HostNode),
    Record(Event),
    Wait(Event),
    /// Graph memory made reachable; the launch takes it (see [`super::memory`]).
    Alloc(Arc<GraphAllocation>),
    /// Graph memory made unreachable; the launch gives it back.
    Free(Arc<GraphAllocation>),
    /// Host work of the lane: external semaphores.
    Work(Work),
    /// Memory operations, run on the launching device.
    MemOps(Arc<[MemOp]>),
}

/// A step's host work, run once per launch.
#[derive(Clone)]
struct Work {
    what: &'static str,
    run: Arc<dyn Fn() -> Result<(), DeviceError> + Send + Sync>,
}

impl std::fmt::Debug for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.what)
    }
}

/// A kernel step's dispatch formed for one queue.
struct PreparedKernel {
    /// The dispatch packet's bytes (completion signal 0) and its setup word.
    packet: [u8; aql::PACKET_SIZE],
    setup: u16,
    segment: KernargSegment,
    hostcall: bool,
    name: String,
    label: String,
    node: KernelNode,
}

impl std::fmt::Debug for PreparedKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedKernel")
            .field("kernel", &self.name)
            .field("kernarg", &format_args!("{:#x}", self.segment.base))
            .finish()
    }
}

/// A flattened node before lanes are given.
struct Flat {
    node: NodeId,
    op: NodeOp,
    deps: Vec<usize>,
}

/// Why instantiation failed: the error and the node of the instantiated graph it concerns.
#[derive(Debug, Clone)]
pub struct InstantiateError {
    /// What is wrong.
    pub error: GraphError,
    /// The node (of the graph given) it was found at, when there is one.
    pub node: Option<Node>,
}

impl GraphExec {
    /// Instantiates `graph` (a clone of it, as it is now). `flags` are kept for the API.
    ///
    /// # Errors
    /// A cycle (in the graph or a child graph), child graphs nested deeper than
    /// [`MAX_DEPTH`], naming the node of `graph` concerned.
    pub fn instantiate(graph: &Graph, flags: u64) -> Result<GraphExec, InstantiateError> {
        let (clone, map) = graph.deep_clone();
        let back: HashMap<NodeId, NodeId> = map.iter().map(|(&u, &c)| (c, u)).collect();
        let plan = build_plan(&clone, &HashSet::new()).map_err(|(error, at)| InstantiateError {
            node: at
                .and_then(|c| back.get(&c))
                .and_then(|&u| graph.node_by_id(u)),
            error,
        })?;
        tracing::debug!(
            graph = graph.id(),
            steps = plan.steps.len(),
            lanes = plan.lanes,
            "graph instantiated"
        );
        Ok(GraphExec(Arc::new(Inner {
            id: NEXT_EXEC.fetch_add(1, Ordering::Relaxed),
            flags,
            state: Mutex::new(State {
                graph: clone,
                nodes: map,
                disabled: HashSet::new(),
                plan,
            }),
        })))
    }

    /// A number identifying the executable, unique for the process's lifetime.
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// The flags it was instantiated with.
    pub fn flags(&self) -> u64 {
        self.0.flags
    }

    /// How many steps a launch submits and over how many lanes.
    pub fn shape(&self) -> (usize, usize) {
        let state = self.0.state.lock();
        (state.plan.steps.len(), state.plan.lanes)
    }

    /// A copy of the graph the executable runs, as it is now (with its parameter changes).
    pub fn graph(&self) -> Graph {
        self.0.state.lock().graph.deep_clone().0
    }

    /// The clone's node for a node of the graph the executable came from.
    fn clone_of(state: &State, node: &Node) -> Result<NodeId, GraphError> {
        state
            .nodes
            .get(&node.id())
            .copied()
            .filter(|&c| state.graph.node_by_id(c).is_some())
            .ok_or(GraphError::NotInExec { node: node.id() })
    }

    /// What the executable's copy of `node` does now.
    ///
    /// # Errors
    /// [`GraphError::NotInExec`].
    pub fn op(&self, node: &Node) -> Result<NodeOp, GraphError> {
        let state = self.0.state.lock();
        let c = Self::clone_of(&state, node)?;
        let n = state
            .graph
            .node_by_id(c)
            .ok_or(GraphError::NotInExec { node: node.id() })?;
        state.graph.op(&n)
    }

    /// Changes the parameters of the executable's copy of `node` (a node of the graph it was
    /// instantiated from) for later launches; launches in flight keep the old ones. A copy's
    /// direction cannot change; a child graph must keep its shape.
    ///
    /// # Errors
    /// [`GraphError::NotInExec`], [`GraphError::WrongKind`], [`GraphError::Unsupported`].
    pub fn set_op(&self, node: &Node, op: NodeOp) -> Result<(), GraphError> {
        let mut state = self.0.state.lock();
        let c = Self::clone_of(&state, node)?;
        let n = state
            .graph
            .node_by_id(c)
            .ok_or(GraphError::NotInExec { node: node.id() })?;
        let old = state.graph.op(&n)?;
        check_replacement(c, &old, &op)?;
        let op = match op {
            NodeOp::Child(g) => NodeOp::Child(g.deep_clone().0),
            op => op,
        };
        let reshaped = matches!(op, NodeOp::Child(_));
        state.graph.set_op(&n, op.clone())?;
        if reshaped {
            let disabled = state.disabled.clone();
            state.plan = build_plan(&state.graph, &disabled).map_err(|(e, _)| e)?;
        } else if let Some(&i) = state.plan.index.get(&c) {
            state.plan.steps[i].op = step_op(op);
        }
        Ok(())
    }

    /// Whether the executable's copy of `node` runs (`hipGraphNodeGetEnabled`).
    ///
    /// # Errors
    /// [`GraphError::NotInExec`].
    pub fn enabled(&self, node: &Node) -> Result<bool, GraphError> {
        let state = self.0.state.lock();
        let c = Self::clone_of(&state, node)?;
        Ok(!state.disabled.contains(&c))
    }

    /// Enables or disables the executable's copy of `node`: a disabled node runs as an empty
    /// one. Only kernel, copy and fill nodes can be disabled, as in HIP.
    ///
    /// # Errors
    /// [`GraphError::NotInExec`], [`GraphError::Unsupported`] for another kind.
    pub fn set_enabled(&self, node: &Node, enabled: bool) -> Result<(), GraphError> {
        let mut state = self.0.state.lock();
        let c = Self::clone_of(&state, node)?;
        let n = state
            .graph
            .node_by_id(c)
            .ok_or(GraphError::NotInExec { node: node.id() })?;
        let kind = state.graph.kind(&n)?;
        if !matches!(
            kind,
            NodeKind::Kernel
                | NodeKind::Memcpy
                | NodeKind::Memcpy1D
                | NodeKind::MemcpyFromSymbol
                | NodeKind::MemcpyToSymbol
                | NodeKind::Memset
        ) {
            return Err(GraphError::Unsupported {
                node: node.id(),
                reason: format!("a {kind} node cannot be disabled"),
            });
        }
        let changed = if enabled {
            state.disabled.remove(&c)
        } else {
            state.disabled.insert(c)
        };
        if changed {
            let disabled = state.disabled.clone();
            state.plan = build_plan(&state.graph, &disabled).map_err(|(e, _)| e)?;
        }
        Ok(())
    }

    /// Takes the parameters of `graph`'s nodes (`hipGraphExecUpdate`): `graph` must have the
    /// shape of the graph the executable came from, node for node in topological order (kinds,
    /// edges, copy directions, kernels of the same device).
    ///
    /// # Errors
    /// [`GraphError::Update`] with HIP's result and the node of `graph` where it differs; the
    /// executable is unchanged then.
    pub fn update(&self, graph: &Graph) -> Result<(), GraphError> {
        let fail = |result, node: Option<&Node>, reason: String| GraphError::Update {
            result,
            node: node.map(Node::id),
            reason,
        };
        let mut state = self.0.state.lock();
        let new = graph
            .shape()
            .map_err(|e| fail(UpdateResult::Error, None, e.to_string()))?;
        let old = state
            .graph
            .shape()
            .map_err(|e| fail(UpdateResult::Error, None, e.to_string()))?;
        if new.len() != old.len() {
            return Err(fail(
                UpdateResult::TopologyChanged,
                None,
                format!("{} nodes, the executable has {}", new.len(), old.len()),
            ));
        }
        for ((n, nop, ndeps), (_, oop, odeps)) in new.iter().zip(&old) {
            let (nk, ok) = (nop.kind(), oop.kind());
            if nk != ok {
                return Err(fail(
                    UpdateResult::NodeTypeChanged,
                    Some(n),
                    format!("a {nk} node where the executable has a {ok} node"),
                ));
            }
            if ndeps != odeps {
                return Err(fail(
                    UpdateResult::TopologyChanged,
                    Some(n),
                    "its dependencies differ".into(),
                ));
            }
            match (nop, oop) {
                (NodeOp::Kernel(a), NodeOp::Kernel(b)) => {
                    let same_device =
                        match (a.kernel.loaded().context(), b.kernel.loaded().context()) {
                            (Some(x), Some(y)) => Arc::ptr_eq(x, y),
                            _ => false,
                        };
                    if !same_device {
                        return Err(fail(
                            UpdateResult::UnsupportedFunctionChange,
                            Some(n),
                            "its kernel belongs to another device".into(),
                        ));
                    }
                }
                (NodeOp::Copy(a), NodeOp::Copy(b)) if a.kind != b.kind => {
                    return Err(fail(
                        UpdateResult::ParametersChanged,
                        Some(n),
                        format!(
                            "copy direction {} where the executable has {}",
                            a.kind, b.kind
                        ),
                    ));
                }
                (NodeOp::Child(a), NodeOp::Child(b)) => {
                    if let Err(reason) = same_shape(a, b) {
                        return Err(fail(UpdateResult::TopologyChanged, Some(n), reason));
                    }
                }
                _ => {}
            }
        }
        for ((n, nop, _), (o, _, _)) in new.iter().zip(&old) {
            let op = match nop {
                NodeOp::Child(g) => NodeOp::Child(g.deep_clone().0),
                op => op.clone(),
            };
            state
                .graph
                .set_op(o, op)
                .map_err(|e| fail(UpdateResult::Error, Some(n), e.to_string()))?;
            state.nodes.insert(n.id(), o.id());
        }
        let disabled = state.disabled.clone();
        state.plan = build_plan(&state.graph, &disabled)
            .map_err(|(e, _)| fail(UpdateResult::Error, None, e.to_string()))?;
        Ok(())
    }

    /// Forms every kernel dispatch a launch on `stream` needs (kernarg segments for its queue
    /// and the device's graph lanes), so the first launch there submits at once
    /// (`hipGraphUpload`).
    ///
    /// # Errors
    /// As [`launch`](Self::launch), for what is formed.
    pub fn upload(&self, stream: &Stream) -> RuntimeResult<()> {
        let ctx = stream.context()?;
        let mut state = self.0.state.lock();
        let plan = &mut state.plan;
        let pool = (plan.lanes > 1)
            .then(|| lanes(&ctx, plan.lanes - 1))
            .transpose()?;
        let streams: Vec<Stream> = pool.map(|p| p.lock().clone()).unwrap_or_default();
        for step in plan.steps.iter_mut() {
            let queue = match step.lane {
                0 => stream,
                l => streams.get(l - 1).unwrap_or(stream),
            };
            if let StepOp::Kernel { node, prepared } = &mut step.op {
                prepare_for(&ctx, queue, node, prepared)?;
            }
        }
        Ok(())
    }

    /// Launches the graph on `stream`: after everything submitted to it before, and before
    /// everything submitted after.
    ///
    /// # Errors
    /// The device's sticky error; a kernel of another device ([`RuntimeError::WrongDevice`]),
    /// a copy or fill whose memory was freed, device failures. Nothing is submitted when a
    /// step cannot be formed.
    pub fn launch(&self, runtime: &Runtime, stream: &Stream) -> RuntimeResult<()> {
        let ctx = stream.context()?;
        ctx.check_sticky()?;
        let mut state = self.0.state.lock();
        let held = state.graph.held();
        let plan = &mut state.plan;
        if plan.steps.is_empty() {
            return Ok(());
        }
        // Checks first, so that a launch that cannot run submits nothing.
        let mut pageable = false;
        for step in &plan.steps {
            match &step.op {
                StepOp::Copy(c) => {
                    check_copy(runtime, c)?;
                    pageable |= c
                        .rows()
                        .is_ok_and(|r| runtime.is_pageable(r.dst) || runtime.is_pageable(r.src));
                }
                StepOp::Memset(m) => check_memset(runtime, m)?,
                StepOp::MemOps(ops) => {
                    for op in ops.iter() {
                        runtime.check_mem_op(op)?;
                    }
                }
                _ => {}
            }
        }
        // Graph memory: the launch takes what it allocates and gives back what it frees, in
        // step order; a refusal undoes what was taken.
        let mut owned: Vec<(Arc<GraphAllocation>, bool)> = Vec::new();
        for step in &plan.steps {
            let (block, take) = match &step.op {
                StepOp::Alloc(b) => (b, true),
                StepOp::Free(b) => (b, false),
                _ => continue,
            };
            let before = block.owned();
            let r = if take {
                block.take()
            } else {
                block.give_back()
            };
            if let Err(e) = r {
                for (b, was) in owned.iter().rev() {
                    b.set_owned(*was);
                }
                return Err(e);
            }
            owned.push((block.clone(), before));
        }
        let undo = |owned: &[(Arc<GraphAllocation>, bool)]| {
            for (b, was) in owned.iter().rev() {
                b.set_owned(*was);
            }
        };
        let mut started = false;
        let result = self.submit_launch(&ctx, plan, held, stream, pageable, &mut started);
        if result.is_err() && !started {
            undo(&owned);
        }
        drop(state);
        result?;
        // A copy to or from pageable host memory returns once it is done, as hipMemcpyAsync's
        // does (clr copies such memory through a staging buffer before the launch returns):
        // programs read the host side right after hipGraphLaunch.
        if pageable {
            stream.synchronize()?;
        }
        Ok(())
    }

    /// Submits a launch's packets; `started` tells whether any was submitted.
    fn submit_launch(
        &self,
        ctx: &Arc<DeviceContext>,
        plan: &mut Plan,
        held: Vec<super::Held>,
        stream: &Stream,
        pageable: bool,
        started: &mut bool,
    ) -> RuntimeResult<()> {
        let ctx = ctx.clone();
        let pool = (plan.lanes > 1)
            .then(|| lanes(&ctx, plan.lanes - 1))
            .transpose()?;
        // Lock order: the launching stream, then the device's lanes.
        let pool_guard;
        let mut batches: Vec<Batch<'_>> = Vec::with_capacity(plan.lanes);
        batches.push(stream.batch()?);
        pool_guard = pool.as_ref().map(|p| p.lock());
        if let Some(streams) = &pool_guard {
            for s in streams.iter().take(plan.lanes - 1) {
                batches.push(s.batch()?);
            }
        }
        // Kernel dispatches for the queues of their lanes.
        let mut kernels: Vec<Option<Arc<PreparedKernel>>> = Vec::with_capacity(plan.steps.len());
        for step in plan.steps.iter_mut() {
            let queue = batches[step.lane].stream();
            kernels.push(match &mut step.op {
                StepOp::Kernel { node, prepared } => {
                    Some(prepare_for(&ctx, queue, node, prepared)?)
                }
                _ => None,
            });
        }
        let device = ctx.device();
        let mut signals: Vec<Option<SignalHandle>> = Vec::with_capacity(plan.steps.len());
        for step in &plan.steps {
            signals.push(if step.signal {
                Some(
                    device
                        .create_signal(1)
                        .map_err(|e| ctx.error("creating a graph signal", e))?,
                )
            } else {
                None
            });
        }
        let fork = if plan.lanes > 1 {
            Some(
                device
                    .create_signal(1)
                    .map_err(|e| ctx.error("creating a graph signal", e))?,
            )
        } else {
            None
        };
        let mut hostcalls = Vec::new();
        for k in kernels.iter().flatten() {
            if k.hostcall {
                hostcalls.push(ctx.hostcall_buffer()?.dispatch_started());
            }
        }
        let keep = Arc::new(LaunchKeep {
            _held: held,
            _kernels: kernels.iter().flatten().cloned().collect(),
            _signals: signals
                .iter()
                .flatten()
                .cloned()
                .chain(fork.clone())
                .collect(),
            _hostcalls: hostcalls,
        });
        let recorder = Arc::downgrade(&ctx);
        let submit = Submitter {
            ctx: &ctx,
            recorder: &recorder,
            keep: &keep,
            stream_id: stream.id(),
            submitted: std::cell::RefCell::new(Vec::new()),
        };
        *started = true;
        if let Some(f) = &fork {
            submit.barrier(&mut batches[0], &[], Some(f), false)?;
        }
        for (i, step) in plan.steps.iter().enumerate() {
            let mut waits: Vec<SignalHandle> = Vec::new();
            if step.first_in_lane {
                waits.extend(fork.clone());
            }
            waits.extend(step.waits.iter().filter_map(|&w| signals[w].clone()));
            let b = &mut batches[step.lane];
            if !waits.is_empty() {
                submit.barrier(b, &waits, None, false)?;
            }
            // The last packet of a lane holds the launch's resources; lane 0's last packet is
            // the join when there is one.
            let holds = step.tail && (step.lane != 0 || plan.join.is_empty());
            let signal = signals[i].as_ref();
            match &step.op {
                StepOp::Kernel { .. } => {
                    let k = kernels[i].as_ref().ok_or_else(|| RuntimeError::Device {
                        device: ctx.index(),
                        what: "launching a graph".into(),
                        error: Box::new(DeviceError::Queue(
                            "a kernel step was not prepared".into(),
                        )),
                    })?;
                    submit.kernel(b, k, signal, holds)?;
                }
                StepOp::Copy(c) => submit.copy(b, c, signal, holds)?,
                StepOp::Memset(m) => submit.memset(b, m, signal, holds)?,
                StepOp::Host(h) => {
                    let call = h.call.clone();
                    submit.host_work(
                        b,
                        "running a graph's host node",
                        Box::new(move || {
                            call();
                            Ok(())
                        }),
                        signal,
                        holds,
                    )?;
                }
                StepOp::Record(e) => {
                    let time = Arc::new(Mutex::new(None));
                    let stamp = time.clone();
                    // An interprocess event's record is also one of its shared page, completed
                    // when the step is over, run or failed, as a stream's record is.
                    let shared = e.begin_shared_record()?;
                    let shared_done = shared.clone();
                    let submitted = submit.host_work_then(
                        b,
                        "recording an event",
                        Box::new(move || {
                            *stamp.lock() = Some(Instant::now());
                            Ok(())
                        }),
                        signal,
                        holds,
                        Box::new(move || {
                            if let Some((ipc, seq)) = shared_done {
                                ipc.complete(seq);
                            }
                        }),
                    );
                    if let (Err(_), Some((ipc, seq))) = (&submitted, &shared) {
                        ipc.complete(*seq);
                    }
                    submitted?;
                    if let Some(s) = signal {
                        e.recorded_at(s.clone(), time, &ctx);
                    }
                }
                StepOp::Wait(e) => {
                    let pending: Vec<SignalHandle> = e.pending_signal().into_iter().collect();
                    submit.barrier(b, &pending, signal, holds)?;
                }
                StepOp::Alloc(block) => {
                    let block = block.clone();
                    submit.host_work(
                        b,
                        "allocating graph memory",
                        Box::new(move || block.map()),
                        signal,
                        holds,
                    )?;
                }
                StepOp::Free(block) => {
                    let block = block.clone();
                    submit.host_work(
                        b,
                        "freeing graph memory",
                        Box::new(move || block.unmap()),
                        signal,
                        holds,
                    )?;
                }
                StepOp::Work(w) => {
                    let run = w.run.clone();
                    submit.host_work(b, w.what, Box::new(move || run()), signal, holds)?;
                }
                StepOp::MemOps(ops) => {
                    let (ops, device) = (ops.clone(), ctx.device().clone());
                    submit.host_work(
                        b,
                        "running memory operations (a graph node)",
                        Box::new(move || ops.iter().try_for_each(|op| op.run(&*device))),
                        signal,
                        holds,
                    )?;
                }
            }
            // Every lane-0 tail has a signal: the stream's last step is that, or the join.
            if let (true, Some(s)) = (step.tail, signal) {
                b.ends_with(s.clone());
            }
        }
        if !plan.join.is_empty() {
            let joined: Vec<SignalHandle> = plan
                .join
                .iter()
                .filter_map(|&t| signals[t].clone())
                .collect();
            let end = device
                .create_signal(1)
                .map_err(|e| ctx.error("creating a graph signal", e))?;
            submit.barrier(&mut batches[0], &joined, Some(&end), true)?;
            batches[0].ends_with(end);
        }
        drop(batches);
        drop(pool_guard);
        tracing::debug!(
            exec = self.0.id,
            stream = stream.id(),
            steps = plan.steps.len(),
            lanes = plan.lanes,
            pageable,
            "graph launched"
        );
        Ok(())
    }
}

/// Everything a launch's packets use, held by the last packet of each lane (and what the
/// graph keeps alive for its API).
struct LaunchKeep {
    _held: Vec<super::Held>,
    _kernels: Vec<Arc<PreparedKernel>>,
    _signals: Vec<SignalHandle>,
    _hostcalls: Vec<crate::runtime::hostcall::HostcallDispatch>,
}

/// Submits one launch's packets.
struct Submitter<'a> {
    ctx: &'a Arc<DeviceContext>,
    recorder: &'a Weak<DeviceContext>,
    keep: &'a Arc<LaunchKeep>,
    stream_id: u64,
    /// Completion signals of the packets submitted so far.
    submitted: std::cell::RefCell<Vec<SignalHandle>>,
}

impl Submitter<'_> {
    /// Notes that the packet just submitted completes `signal`.
    fn submitted(&self, signal: Option<&SignalHandle>) {
        if let Some(s) = signal {
            self.submitted.borrow_mut().push(s.clone());
        }
    }

    /// The error for a packet a lane's queue refused. A queue refuses once the device failed,
    /// and the failure may come from a packet of this launch on another lane, reported a
    /// moment later: the packets submitted so far end first (done or failed, the failure
    /// recorded), so the launch reports the failure rather than the refusal.
    fn refused(&self, b: &Batch<'_>, what: &str, error: DeviceError) -> RuntimeError {
        let deadline = Instant::now() + REFUSAL_WAIT;
        for s in self.submitted.borrow().iter() {
            let left = deadline.saturating_duration_since(Instant::now());
            s.signal.wait(Condition::Lt, 1, Some(left));
        }
        b.refused(what, error)
    }

    /// What a packet keeps alive: its completion signal, and the launch's resources when it
    /// is the last of its lane.
    fn keep_alive(&self, signal: Option<&SignalHandle>, holds: bool) -> KeepAlive {
        let mut keep: KeepAlive = Vec::new();
        if let Some(s) = signal {
            keep.push(Box::new(s.clone()));
        }
        if holds {
            keep.push(Box::new(self.keep.clone()));
        }
        keep
    }

    /// Records a failed packet as the device's sticky error, as a stream step does.
    fn on_complete(&self) -> Box<dyn FnOnce(Completion) + Send> {
        let recorder = self.recorder.clone();
        Box::new(move |c| {
            if let Completion::Failed(e) = c {
                if let Some(ctx) = recorder.upgrade() {
                    ctx.record_failure(e);
                }
            }
        })
    }

    fn barrier(
        &self,
        b: &mut Batch<'_>,
        waits: &[SignalHandle],
        signal: Option<&SignalHandle>,
        holds: bool,
    ) -> RuntimeResult<()> {
        let chunks: Vec<&[SignalHandle]> = if waits.is_empty() {
            vec![&[]]
        } else {
            waits.chunks(BARRIER_DEPS).collect()
        };
        let n = chunks.len();
        for (i, chunk) in chunks.into_iter().enumerate() {
            let last = i + 1 == n;
            let handles: Vec<u64> = chunk.iter().map(|s| s.handle).collect();
            let completion = if last {
                signal.map_or(0, |s| s.handle)
            } else {
                0
            };
            let packet = aql::barrier_and_packet(&handles, completion);
            // SAFETY: a barrier-AND packet is 64 bytes of plain data.
            let bytes: [u8; aql::PACKET_SIZE] = unsafe { std::mem::transmute(packet) };
            let header = aql::header_word(Header::ordered(hsa_sys::HSA_PACKET_TYPE_BARRIER_AND), 0);
            let mut keep = self.keep_alive(if last { signal } else { None }, last && holds);
            // The barrier keeps the signals it waits on alive until it is done.
            keep.extend(
                chunk
                    .iter()
                    .map(|s| Box::new(s.clone()) as Box<dyn std::any::Any + Send + Sync>),
            );
            b.queue()
                .submit(
                    bytes,
                    header,
                    "graph barrier".into(),
                    keep,
                    self.on_complete(),
                )
                .map_err(|e| self.refused(b, "submitting a graph barrier", e))?;
            if last {
                self.submitted(signal);
            }
        }
        Ok(())
    }

    fn kernel(
        &self,
        b: &mut Batch<'_>,
        k: &Arc<PreparedKernel>,
        signal: Option<&SignalHandle>,
        holds: bool,
    ) -> RuntimeResult<()> {
        let mut bytes = k.packet;
        // The completion signal is the packet's last 8 bytes.
        bytes[COMPLETION_SIGNAL..].copy_from_slice(&signal.map_or(0, |s| s.handle).to_le_bytes());
        let header = aql::header_word(
            Header::ordered(hsa_sys::HSA_PACKET_TYPE_KERNEL_DISPATCH),
            k.setup,
        );
        let record = self.on_complete();
        let on_complete: Box<dyn FnOnce(Completion) + Send> = if self.ctx.tools().active() {
            let watched = launch::watch(
                self.ctx,
                self.stream_id,
                &k.node.kernel,
                &k.node.config,
                k.segment.base,
            );
            let report = launch::completion_report(k.name.clone(), watched);
            Box::new(move |c| {
                report(&c);
                record(c)
            })
        } else {
            record
        };
        b.queue()
            .submit(
                bytes,
                header,
                k.label.clone(),
                self.keep_alive(signal, holds),
                on_complete,
            )
            .map_err(|e| self.refused(b, "submitting a graph's kernel", e))?;
        self.submitted(signal);
        Ok(())
    }

    fn host_work(
        &self,
        b: &mut Batch<'_>,
        what: &'static str,
        work: crate::device::HostWork,
        signal: Option<&SignalHandle>,
        holds: bool,
    ) -> RuntimeResult<()> {
        self.host_work_then(b, what, work, signal, holds, Box::new(|| {}))
    }

    /// [`host_work`](Self::host_work), then `over` once the packet is over, run or failed
    /// (not called when the submission itself fails).
    fn host_work_then(
        &self,
        b: &mut Batch<'_>,
        what: &'static str,
        work: crate::device::HostWork,
        signal: Option<&SignalHandle>,
        holds: bool,
        over: Box<dyn FnOnce() + Send>,
    ) -> RuntimeResult<()> {
        let record = self.on_complete();
        b.queue()
            .submit_host_work(
                work,
                signal.map_or(0, |s| s.handle),
                self.keep_alive(signal, holds),
                Box::new(move |c| {
                    record(c);
                    over();
                }),
            )
            .map_err(|e| self.refused(b, what, e))?;
        self.submitted(signal);
        Ok(())
    }

    fn copy(
        &self,
        b: &mut Batch<'_>,
        c: &CopyNode,
        signal: Option<&SignalHandle>,
        holds: bool,
    ) -> RuntimeResult<()> {
        let rows = c.rows().map_err(|reason| invalid_copy(self.ctx, reason))?;
        let device = self.ctx.device().clone();
        self.host_work(
            b,
            "copying (a graph's copy node)",
            Box::new(move || {
                for z in 0..rows.depth {
                    for y in 0..rows.height {
                        let d = rows.dst + z * rows.dst_slice + y * rows.dst_pitch;
                        let s = rows.src + z * rows.src_slice + y * rows.src_pitch;
                        // SAFETY: both extents were checked when the graph was launched (device
                        // memory stays allocated while the stream runs; host memory is the
                        // caller's, valid whenever the graph runs by HIP's contract); every row
                        // lies inside them and the offsets cannot overflow (checked spans).
                        unsafe { device.copy(d, s, rows.width) }?;
                    }
                }
                Ok(())
            }),
            signal,
            holds,
        )
    }

    fn memset(
        &self,
        b: &mut Batch<'_>,
        m: &MemsetNode,
        signal: Option<&SignalHandle>,
        holds: bool,
    ) -> RuntimeResult<()> {
        let m = *m;
        let width = m
            .row_bytes()
            .ok_or_else(|| invalid_copy(self.ctx, "the fill's row overflows".into()))?;
        let device = self.ctx.device().clone();
        self.host_work(
            b,
            "filling (a graph's memset node)",
            Box::new(move || {
                for y in 0..m.height {
                    // SAFETY: as for copies: the whole extent was checked at launch.
                    unsafe { device.fill(m.dst + y * m.pitch, m.value, m.element_size, width) }?;
                }
                Ok(())
            }),
            signal,
            holds,
        )
    }
}

fn invalid_copy(ctx: &DeviceContext, reason: String) -> RuntimeError {
    ctx.error(
        "launching a graph",
        DeviceError::InvalidAddress {
            address: 0,
            detail: Some(reason),
        },
    )
}

/// Checks both sides of a copy node against the memory the runtime knows now.
fn check_copy(rt: &Runtime, c: &CopyNode) -> RuntimeResult<()> {
    let rows = c.rows().map_err(|reason| RuntimeError::Device {
        device: 0,
        what: "launching a graph's copy".into(),
        error: Box::new(DeviceError::InvalidAddress {
            address: 0,
            detail: Some(reason),
        }),
    })?;
    let side = |start: u64, pitch: u64, slice: u64, write: bool| -> RuntimeResult<()> {
        let span = super::CopyRows::span(pitch, slice, rows.width, rows.height, rows.depth).ok_or(
            RuntimeError::ExtentOverflow {
                pitch,
                width: rows.width,
                height: rows.height,
            },
        )?;
        start.checked_add(span).ok_or(RuntimeError::AddressWraps {
            address: start,
            size: span,
        })?;
        if span == 0 {
            return Ok(());
        }
        rt.check_side(start, span, write)
    };
    side(rows.dst, rows.dst_pitch, rows.dst_slice, true)?;
    side(rows.src, rows.src_pitch, rows.src_slice, false)
}

/// Checks a fill node's extent.
fn check_memset(rt: &Runtime, m: &MemsetNode) -> RuntimeResult<()> {
    let width = m.row_bytes().ok_or(RuntimeError::ExtentOverflow {
        pitch: m.pitch,
        width: m.width,
        height: m.height,
    })?;
    let span = super::CopyRows::span(m.pitch, 0, width, m.height, 1).ok_or(
        RuntimeError::ExtentOverflow {
            pitch: m.pitch,
            width,
            height: m.height,
        },
    )?;
    m.dst.checked_add(span).ok_or(RuntimeError::AddressWraps {
        address: m.dst,
        size: span,
    })?;
    if span == 0 {
        return Ok(());
    }
    rt.check_side(m.dst, span, true)
}

/// The dispatch of a kernel step for the queue of `stream`, formed at its first launch there.
fn prepare_for(
    ctx: &Arc<DeviceContext>,
    stream: &Stream,
    node: &KernelNode,
    prepared: &mut Vec<(u64, Arc<PreparedKernel>)>,
) -> RuntimeResult<Arc<PreparedKernel>> {
    let queue = stream.queue_address();
    if let Some((_, p)) = prepared.iter().find(|(q, _)| *q == queue) {
        if p.node
            .kernel
            .loaded()
            .context()
            .is_some_and(|c| Arc::ptr_eq(c, ctx))
        {
            return Ok(p.clone());
        }
    }
    if node.cooperative {
        launch::check_cooperative(ctx, &node.kernel, &node.config)?;
    }
    let (values, packed) = node.args.explicit();
    let args = match packed {
        Some(p) => ExplicitArgs::Packed(p),
        None => ExplicitArgs::Values(&values),
    };
    // A cooperative node's kernel sees `hidden_multigrid_sync_arg` 1, as a cooperative launch.
    let sync_arg = u64::from(node.cooperative);
    let p = launch::prepare(ctx, queue, &node.kernel, &node.config, args, sync_arg)?;
    let setup = p.packet.setup;
    // SAFETY: a dispatch packet is 64 bytes of plain data (the kernarg pointer is an address).
    let packet: [u8; aql::PACKET_SIZE] = unsafe { std::mem::transmute(p.packet) };
    let k = Arc::new(PreparedKernel {
        packet,
        setup,
        segment: p.segment,
        hostcall: p.hostcall.is_some(),
        name: p.name,
        label: node.kernel.info().name.clone(),
        node: node.clone(),
    });
    if prepared.len() >= SEGMENTS_PER_STEP {
        prepared.remove(0);
    }
    prepared.push((queue, k.clone()));
    Ok(k)
}

/// The device's graph lanes (non-blocking streams), at least `n` of them.
fn lanes(ctx: &Arc<DeviceContext>, n: usize) -> RuntimeResult<Arc<Mutex<Vec<Stream>>>> {
    type Pools = Vec<(Weak<DeviceContext>, Arc<Mutex<Vec<Stream>>>)>;
    static POOLS: Mutex<Pools> = Mutex::new(Vec::new());
    let pool = {
        let mut pools = POOLS.lock();
        pools.retain(|(w, _)| w.strong_count() > 0);
        let weak = Arc::downgrade(ctx);
        match pools.iter().find(|(w, _)| Weak::ptr_eq(w, &weak)) {
            Some((_, p)) => p.clone(),
            None => {
                let p = Arc::new(Mutex::new(Vec::new()));
                pools.push((weak, p.clone()));
                p
            }
        }
    };
    {
        let mut streams = pool.lock();
        while streams.len() < n {
            streams.push(ctx.create_stream(StreamKind::NonBlocking, 0)?);
        }
    }
    Ok(pool)
}

/// What a launch does for a node's operation.
fn step_op(op: NodeOp) -> StepOp {
    match op {
        NodeOp::Kernel(k) => StepOp::Kernel {
            node: k,
            prepared: Vec::new(),
        },
        NodeOp::Copy(c) => StepOp::Copy(c),
        NodeOp::Memset(m) => StepOp::Memset(m),
        NodeOp::Host(h) => StepOp::Host(h),
        NodeOp::EventRecord(e) => StepOp::Record(e),
        NodeOp::EventWait(e) => StepOp::Wait(e),
        NodeOp::MemAlloc(b) => StepOp::Alloc(b),
        NodeOp::MemFree(b) => StepOp::Free(b),
        NodeOp::SemaphoreSignal(n) => StepOp::Work(Work {
            what: "signalling external semaphores (a graph node)",
            run: Arc::new(move || n.semaphores.iter().try_for_each(|s| s.signal())),
        }),
        NodeOp::SemaphoreWait(n) => StepOp::Work(Work {
            what: "waiting for external semaphores (a graph node)",
            run: Arc::new(move || n.semaphores.iter().try_for_each(|s| s.wait())),
        }),
        NodeOp::BatchMemOp(n) => StepOp::MemOps(n.ops.into()),
        // Not steps: flattened away.
        NodeOp::Child(_) | NodeOp::Empty => StepOp::Host(HostNode {
            call: Arc::new(|| {}),
            function: 0,
            data: 0,
        }),
    }
}

/// Whether `new` may replace `old` in an executable graph.
fn check_replacement(node: NodeId, old: &NodeOp, new: &NodeOp) -> Result<(), GraphError> {
    if old.kind() != new.kind() {
        return Err(GraphError::WrongKind {
            node,
            expected: "node of the same kind",
            found: new.kind(),
        });
    }
    match (old, new) {
        (NodeOp::Copy(a), NodeOp::Copy(b)) if a.kind != b.kind => Err(GraphError::Unsupported {
            node,
            reason: format!(
                "an executable graph's copy keeps its direction ({} given, {} instantiated)",
                b.kind, a.kind
            ),
        }),
        (NodeOp::Child(a), NodeOp::Child(b)) => {
            same_shape(a, b).map_err(|reason| GraphError::Unsupported { node, reason })
        }
        _ => Ok(()),
    }
}

/// Whether two graphs have the same nodes (kinds) and edges, node for node in topological
/// order, child graphs included.
fn same_shape(a: &Graph, b: &Graph) -> Result<(), String> {
    let (x, y) = (
        a.shape().map_err(|e| e.to_string())?,
        b.shape().map_err(|e| e.to_string())?,
    );
    if x.len() != y.len() {
        return Err(format!("{} nodes where there were {}", y.len(), x.len()));
    }
    for ((_, xo, xd), (_, yo, yd)) in x.iter().zip(&y) {
        if xo.kind() != yo.kind() || xd != yd {
            return Err("its nodes or edges differ".into());
        }
        if let (NodeOp::Child(p), NodeOp::Child(q)) = (xo, yo) {
            same_shape(p, q)?;
        }
    }
    Ok(())
}

/// Flattens `graph` and lays its steps on lanes. An error names the node of `graph` (at its
/// top level) where it was found.
fn build_plan(
    graph: &Graph,
    disabled: &HashSet<NodeId>,
) -> Result<Plan, (GraphError, Option<NodeId>)> {
    let mut flat: Vec<Flat> = Vec::new();
    flatten(graph, &[], disabled, &mut flat, 0, None)?;
    Ok(lay_out(flat))
}

/// Appends `graph`'s steps to `out`, its roots after `entry`; returns the steps whose
/// completion means the graph is done. `top` is the top-level node being flattened (`None`
/// at the top level itself), for errors.
fn flatten(
    graph: &Graph,
    entry: &[usize],
    disabled: &HashSet<NodeId>,
    out: &mut Vec<Flat>,
    depth: usize,
    top: Option<NodeId>,
) -> Result<Vec<usize>, (GraphError, Option<NodeId>)> {
    if depth > MAX_DEPTH {
        return Err((
            GraphError::TooLarge {
                graph: graph.id(),
                what: format!("child graphs nested deeper than {MAX_DEPTH}"),
            },
            top,
        ));
    }
    let order = graph.topological_order().map_err(|e| {
        let at = match (&e, top) {
            (_, Some(t)) => Some(t),
            (GraphError::Cycle { node, .. }, None) => Some(*node),
            _ => None,
        };
        (e, at)
    })?;
    let mut done: HashMap<NodeId, Vec<usize>> = HashMap::with_capacity(order.len());
    let leaves = graph.leaf_ids();
    let mut exit: Vec<usize> = Vec::new();
    for node in &order {
        let deps = graph.dependency_ids(node.id());
        let mut after: Vec<usize> = if deps.is_empty() {
            entry.to_vec()
        } else {
            deps.iter()
                .flat_map(|d| done.get(d).cloned().unwrap_or_default())
                .collect()
        };
        after.sort_unstable();
        after.dedup();
        let op = graph.op(node).map_err(|e| (e, top.or(Some(node.id()))))?;
        let finished = match op {
            NodeOp::Empty => after,
            _ if disabled.contains(&node.id()) => after,
            NodeOp::Child(child) => flatten(
                &child,
                &after,
                disabled,
                out,
                depth + 1,
                top.or(Some(node.id())),
            )?,
            op => {
                out.push(Flat {
                    node: node.id(),
                    op,
                    deps: after,
                });
                vec![out.len() - 1]
            }
        };
        if leaves.contains(&node.id()) {
            exit.extend(finished.iter().copied());
        }
        done.insert(node.id(), finished);
    }
    if order.is_empty() {
        exit = entry.to_vec();
    }
    exit.sort_unstable();
    exit.dedup();
    Ok(exit)
}

/// Gives flattened steps their lanes and waits (see the module documentation).
fn lay_out(flat: Vec<Flat>) -> Plan {
    type Clock = [usize; MAX_LANES];
    let mut steps: Vec<Step> = Vec::with_capacity(flat.len());
    let mut clocks: Vec<Clock> = Vec::with_capacity(flat.len());
    let mut tails: [Option<usize>; MAX_LANES] = [None; MAX_LANES];
    let mut lanes = 0usize;
    let mut index = HashMap::with_capacity(flat.len());
    for (i, f) in flat.into_iter().enumerate() {
        // Continue the chain of a dependency that ends its lane, the launching stream's first
        // (so the graph tends to end there and needs no join), else start a lane.
        let continued = (0..MAX_LANES).find(|&l| tails[l].is_some_and(|t| f.deps.contains(&t)));
        let lane = match continued {
            Some(l) => l,
            None if lanes < MAX_LANES => {
                lanes += 1;
                lanes - 1
            }
            None => f.deps.first().map_or(0, |&d| steps[d].lane),
        };
        let mut clock: Clock = tails[lane].map_or([0; MAX_LANES], |t| clocks[t]);
        let mut waits = Vec::new();
        for &d in &f.deps {
            let l = steps[d].lane;
            if l == lane || clock[l] > d {
                continue;
            }
            waits.push(d);
            for (c, o) in clock.iter_mut().zip(clocks[d]) {
                *c = (*c).max(o);
            }
        }
        clock[lane] = i + 1;
        let first_in_lane = lane != 0 && tails[lane].is_none();
        if let Some(t) = tails[lane] {
            steps[t].tail = false;
        }
        tails[lane] = Some(i);
        for &w in &waits {
            steps[w].signal = true;
        }
        index.insert(f.node, i);
        clocks.push(clock);
        let op = step_op(f.op);
        let signal = matches!(op, StepOp::Record(_));
        steps.push(Step {
            lane,
            waits,
            first_in_lane,
            signal,
            tail: true,
            op,
        });
    }
    // The launching stream waits for lanes its own last step does not already imply.
    let mut join = Vec::new();
    if let Some(t0) = tails[0] {
        steps[t0].signal = true;
        let end = clocks[t0];
        for (l, tail) in tails.iter().enumerate().skip(1) {
            if let Some(t) = *tail {
                if end[l] <= t {
                    join.push(t);
                    steps[t].signal = true;
                }
            }
        }
    }
    Plan {
        steps,
        lanes: lanes.max(1),
        index,
        join,
    }
}

impl From<InstantiateError> for RuntimeError {
    fn from(e: InstantiateError) -> RuntimeError {
        RuntimeError::Graph(e.error)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::backend::SoftAgent;
    use crate::runtime::RuntimeOptions;

    fn host(call: impl Fn() + Send + Sync + 'static) -> NodeOp {
        NodeOp::Host(HostNode {
            call: Arc::new(call),
            function: 0,
            data: 0,
        })
    }

    fn runtime() -> Runtime {
        let agent = SoftAgent::new("gfx1030".parse().unwrap()).device();
        Runtime::with_devices(vec![agent], RuntimeOptions::default())
    }

    fn plan(g: &Graph) -> Plan {
        build_plan(g, &HashSet::new()).unwrap()
    }

    #[test]
    fn a_chain_stays_on_the_launching_stream() {
        let g = Graph::new();
        let mut prev: Vec<Node> = Vec::new();
        for _ in 0..10 {
            let n = g.add(host(|| {}), &prev).unwrap();
            prev = vec![n];
        }
        let p = plan(&g);
        assert_eq!((p.steps.len(), p.lanes), (10, 1));
        assert!(p.steps.iter().all(|s| s.lane == 0 && s.waits.is_empty()));
        assert!(p.join.is_empty());
        // Only the last step signals (it ends the stream).
        assert_eq!(
            p.steps.iter().map(|s| s.signal).collect::<Vec<_>>(),
            [false, false, false, false, false, false, false, false, false, true]
        );
    }

    #[test]
    fn a_diamond_forks_and_joins() {
        let g = Graph::new();
        let a = g.add(host(|| {}), &[]).unwrap();
        let b = g.add(host(|| {}), std::slice::from_ref(&a)).unwrap();
        let c = g.add(host(|| {}), std::slice::from_ref(&a)).unwrap();
        g.add(host(|| {}), &[b, c]).unwrap();
        let p = plan(&g);
        assert_eq!(p.lanes, 2);
        let lanes: Vec<usize> = p.steps.iter().map(|s| s.lane).collect();
        assert_eq!(lanes, [0, 0, 1, 0]);
        // C waits for A; D (continuing B) waits for C; nothing else crosses lanes.
        assert_eq!(p.steps[2].waits, [0]);
        assert!(p.steps[2].first_in_lane);
        assert_eq!(p.steps[3].waits, [2]);
        assert!(p.steps[0].signal && p.steps[2].signal);
        // D already implies C: no join.
        assert!(p.join.is_empty());
    }

    #[test]
    fn waits_already_implied_are_skipped_and_open_lanes_are_joined() {
        // A -> B -> C (lane 0); A -> X (lane 1); C and Y depend on X; Y -> Z on lane 1.
        let g = Graph::new();
        let a = g.add(host(|| {}), &[]).unwrap();
        let b = g.add(host(|| {}), std::slice::from_ref(&a)).unwrap();
        let x = g.add(host(|| {}), std::slice::from_ref(&a)).unwrap();
        let c = g.add(host(|| {}), &[b.clone(), x.clone()]).unwrap();
        // D depends on X again: C (on its lane) already waited for X.
        g.add(host(|| {}), &[c, x.clone()]).unwrap();
        let y = g.add(host(|| {}), std::slice::from_ref(&x)).unwrap();
        g.add(host(|| {}), &[y]).unwrap();
        let p = plan(&g);
        let steps: Vec<(usize, Vec<usize>)> =
            p.steps.iter().map(|s| (s.lane, s.waits.clone())).collect();
        assert_eq!(
            steps,
            [
                (0, vec![]),
                (0, vec![]),
                (1, vec![0]),
                (0, vec![2]),
                (0, vec![]),
                (1, vec![]),
                (1, vec![])
            ]
        );
        // Lane 1 ends after lane 0 stopped looking: the stream joins it.
        assert_eq!(p.join, [6]);
        assert!(p.steps[6].signal);
    }

    #[test]
    fn empty_nodes_and_child_graphs_are_flattened() {
        let child = Graph::new();
        let c1 = child.add(host(|| {}), &[]).unwrap();
        child.add(host(|| {}), &[c1]).unwrap();
        let g = Graph::new();
        let e = g.add(NodeOp::Empty, &[]).unwrap();
        let k = g.add(host(|| {}), std::slice::from_ref(&e)).unwrap();
        let c = g.add_child(&child, std::slice::from_ref(&k)).unwrap();
        let e2 = g.add(NodeOp::Empty, &[c]).unwrap();
        g.add(host(|| {}), &[e2]).unwrap();
        let p = plan(&g);
        assert_eq!(p.steps.len(), 4);
        assert_eq!(p.lanes, 1);
        // A lone empty child graph and empty nodes make no step at all.
        let g2 = Graph::new();
        g2.add_child(&Graph::new(), &[]).unwrap();
        g2.add(NodeOp::Empty, &[]).unwrap();
        assert!(plan(&g2).steps.is_empty());
    }

    #[test]
    fn lanes_are_bounded() {
        let g = Graph::new();
        let root = g.add(host(|| {}), &[]).unwrap();
        for _ in 0..12 {
            g.add(host(|| {}), std::slice::from_ref(&root)).unwrap();
        }
        let p = plan(&g);
        assert_eq!(p.lanes, MAX_LANES);
        assert!(p.steps.iter().all(|s| s.lane < MAX_LANES));
        // Every step after the root comes after it.
        for s in &p.steps[1..] {
            assert!(s.lane == 0 || s.waits == [0] || !s.first_in_lane);
        }
    }

    #[test]
    fn a_cycle_in_a_child_graph_names_the_child_node() {
        let child = Graph::new();
        let a = child.add(NodeOp::Empty, &[]).unwrap();
        let b = child.add(NodeOp::Empty, std::slice::from_ref(&a)).unwrap();
        child.add_edges(&[(b, a)]).unwrap();
        let g = Graph::new();
        let first = g.add(host(|| {}), &[]).unwrap();
        let c = g.add_child(&child, &[first]).unwrap();
        let e = GraphExec::instantiate(&g, 0).unwrap_err();
        assert!(matches!(e.error, GraphError::Cycle { .. }), "{:?}", e.error);
        assert_eq!(e.node.map(|n| n.id()), Some(c.id()));
    }

    #[test]
    fn launches_run_nodes_in_dependency_order_on_several_queues() {
        let rt = runtime();
        let ctx = rt.device(0).unwrap().clone();
        let stream = ctx.create_stream(StreamKind::Blocking, 0).unwrap();
        let log: Arc<Mutex<Vec<&'static str>>> = Arc::new(Mutex::new(Vec::new()));
        let step = |name: &'static str, pause: u64| {
            let log = log.clone();
            host(move || {
                std::thread::sleep(Duration::from_millis(pause));
                log.lock().push(name);
            })
        };
        let g = Graph::new();
        let a = g.add(step("a", 0), &[]).unwrap();
        let b = g.add(step("b", 0), std::slice::from_ref(&a)).unwrap();
        let c = g.add(step("c", 30), std::slice::from_ref(&a)).unwrap();
        g.add(step("d", 0), &[b, c]).unwrap();
        let exec = GraphExec::instantiate(&g, 0).unwrap();
        assert_eq!(exec.shape(), (4, 2));
        for _ in 0..3 {
            exec.launch(&rt, &stream).unwrap();
            // What is submitted after the launch waits for all of it.
            let after = log.clone();
            stream
                .add_callback(Box::new(move || after.lock().push("after")))
                .unwrap();
        }
        stream.synchronize().unwrap();
        let log = log.lock().clone();
        assert_eq!(log.len(), 15);
        for round in log.chunks(5) {
            assert_eq!(round[0], "a");
            assert_eq!(round[3], "d", "{log:?}");
            assert_eq!(round[4], "after");
            assert!(round[1..3].contains(&"b") && round[1..3].contains(&"c"));
        }
        // Destroying the executable while nothing runs is fine; so is launching a clone.
        drop(exec);
    }

    #[test]
    fn set_op_and_update_change_later_launches() {
        let rt = runtime();
        let ctx = rt.device(0).unwrap().clone();
        let stream = ctx.create_stream(StreamKind::NonBlocking, 0).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let push = |v: u32| {
            let seen = seen.clone();
            host(move || seen.lock().push(v))
        };
        let g = Graph::new();
        let n = g.add(push(1), &[]).unwrap();
        let exec = GraphExec::instantiate(&g, 7).unwrap();
        assert_eq!(exec.flags(), 7);
        exec.launch(&rt, &stream).unwrap();
        exec.set_op(&n, push(2)).unwrap();
        exec.launch(&rt, &stream).unwrap();
        // The graph itself is unchanged.
        let g2 = g.deep_clone().0;
        g2.set_op(&g2.find_in_clone(&n).unwrap(), push(3)).unwrap();
        exec.update(&g2).unwrap();
        exec.launch(&rt, &stream).unwrap();
        // A disabled node runs as an empty one; only some kinds can be disabled.
        assert!(matches!(
            exec.set_enabled(&n, false).unwrap_err(),
            GraphError::Unsupported { .. }
        ));
        stream.synchronize().unwrap();
        assert_eq!(*seen.lock(), [1, 2, 3]);
        // Another shape is refused with HIP's result.
        g2.add(NodeOp::Empty, &[]).unwrap();
        match exec.update(&g2).unwrap_err() {
            GraphError::Update { result, .. } => assert_eq!(result, UpdateResult::TopologyChanged),
            e => panic!("{e}"),
        }
        let other = Graph::new();
        let o = other.add(NodeOp::Empty, &[]).unwrap();
        assert!(matches!(
            exec.set_op(&o, NodeOp::Empty).unwrap_err(),
            GraphError::NotInExec { .. }
        ));
        assert!(matches!(
            exec.set_op(&n, NodeOp::Empty).unwrap_err(),
            GraphError::WrongKind { .. }
        ));
    }
}
