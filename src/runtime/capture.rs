//! Stream capture (`hipStreamBeginCapture` ... `hipStreamEndCapture`): while a stream
//! captures, the work submitted to it becomes nodes of a graph instead of running, each after
//! the stream's current dependency set (its last node, or the nodes an event or
//! `hipStreamUpdateCaptureDependencies` gave it). An event recorded in a capturing stream
//! remembers that set; another stream waiting for it joins the capture (a fork), and its work
//! must join back into the stream that began the capture before the capture ends.
//!
//! The rules follow clr's (the HIP runtime): operations that would wait for or depend on a
//! capture's work from outside it invalidate the capture and fail with HIP's codes
//! ([`CaptureError`]): synchronising a capturing stream, the legacy null stream meeting a
//! capturing blocking stream, a synchronous copy or fill during any capture, querying an
//! event recorded in a capture, and "potentially unsafe" calls (allocation, freeing) as the
//! thread's capture mode says: `Global` refuses them while any global capture is in progress
//! or while this thread captures, `ThreadLocal` only while this thread captures, `Relaxed`
//! never. Capture state is kept here, by stream and event id, so streams and events know
//! nothing of it. Not for the graphs themselves ([`super::graph`]) or for the C ABI's
//! parameter forms.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::thread::ThreadId;

use parking_lot::Mutex;

use super::device::DeviceContext;
use super::graph::{Graph, Node, NodeId, NodeOp};
use super::stream::{Event, Stream, StreamKind};
use super::RuntimeResult;

/// How a capture treats potentially unsafe calls (`hipStreamCaptureMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureMode {
    /// Unsafe calls are refused while any global capture is in progress, or while the
    /// calling thread captures.
    Global,
    /// Unsafe calls are refused while the calling thread captures.
    ThreadLocal,
    /// Unsafe calls are never refused.
    Relaxed,
}

/// Whether a stream captures (`hipStreamCaptureStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureStatus {
    /// Not capturing.
    None,
    /// Capturing.
    Active,
    /// Part of a capture that an error invalidated (it ends with an error).
    Invalidated,
}

/// A capture rule broken, or a capture call in the wrong state; each is one of HIP's codes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CaptureError {
    /// `hipErrorStreamCaptureUnsupported`: the operation is not permitted during capture.
    #[error("{what} is not permitted while {why}")]
    Unsupported {
        /// The operation.
        what: String,
        /// Which capture forbids it.
        why: String,
    },
    /// `hipErrorStreamCaptureInvalidated`: an earlier error invalidated the capture.
    #[error("the capture on stream {stream} was invalidated by an earlier error")]
    Invalidated {
        /// The stream.
        stream: u64,
    },
    /// `hipErrorStreamCaptureMerge`: a wait would merge two captures.
    #[error("stream {stream} (capture {capture}) waited for event {event}, recorded in capture {other}: two captures cannot merge")]
    Merge {
        /// The waiting stream.
        stream: u64,
        /// Its capture.
        capture: u64,
        /// The event.
        event: u64,
        /// The event's capture.
        other: u64,
    },
    /// `hipErrorStreamCaptureUnmatched`: the capture was not begun on this stream.
    #[error("the capture was begun on stream {origin}, not stream {stream}")]
    Unmatched {
        /// The stream given.
        stream: u64,
        /// The stream the capture began on.
        origin: u64,
    },
    /// `hipErrorStreamCaptureUnjoined`: a forked stream's work did not join back.
    #[error("capture {capture}: work forked from stream {origin} (node {node}) was not joined back into it")]
    Unjoined {
        /// The capture.
        capture: u64,
        /// The stream it began on.
        origin: u64,
        /// A node nothing after it joins.
        node: NodeId,
    },
    /// `hipErrorStreamCaptureIsolation`: a dependency across the capture's boundary.
    #[error("stream {stream} captures, and event {event} was recorded outside the capture and is not complete: a captured graph cannot wait for it")]
    Isolation {
        /// The capturing stream.
        stream: u64,
        /// The event.
        event: u64,
    },
    /// `hipErrorStreamCaptureImplicit`: the legacy null stream would synchronise with a
    /// capturing stream, or a synchronous call would wait for a capture's work.
    #[error("{what} would wait for capture {capture} (stream {stream}), which has no work to wait for yet")]
    Implicit {
        /// The operation.
        what: String,
        /// The capture.
        capture: u64,
        /// A stream of it.
        stream: u64,
    },
    /// `hipErrorCapturedEvent`: the event was recorded in a capture in progress.
    #[error("event {event} was last recorded in capture {capture}, which is in progress")]
    CapturedEvent {
        /// The event.
        event: u64,
        /// The capture.
        capture: u64,
    },
    /// `hipErrorStreamCaptureWrongThread`: a non-relaxed capture ended by another thread.
    #[error("capture {capture} was begun by another thread in {mode:?} mode; only that thread can end it")]
    WrongThread {
        /// The capture.
        capture: u64,
        /// Its mode.
        mode: CaptureMode,
    },
    /// `hipErrorIllegalState`: a capture call in the wrong state.
    #[error("{0}")]
    IllegalState(String),
    /// A node that is not in the capture's graph (`hipStreamUpdateCaptureDependencies`).
    #[error("node {node} is not a node of the graph stream {stream} captures into")]
    NotInCapture {
        /// The node.
        node: NodeId,
        /// The stream.
        stream: u64,
    },
}

/// One stream in a capture.
#[derive(Debug)]
struct Member {
    stream: u64,
    /// A blocking stream (the legacy null stream would synchronise with it).
    blocking: bool,
    device: Weak<DeviceContext>,
    /// What the stream's next node depends on.
    deps: Vec<NodeId>,
}

#[derive(Debug)]
struct State {
    invalidated: bool,
    ended: bool,
    members: Vec<Member>,
    /// Nodes the capture made (nodes added through the graph API are not checked for joins).
    captured: HashSet<NodeId>,
    /// Nodes `hipStreamUpdateCaptureDependencies` dropped from a dependency set (not checked
    /// for joins either, as in clr).
    released: HashSet<NodeId>,
}

#[derive(Debug)]
struct Inner {
    id: u64,
    graph: Graph,
    mode: CaptureMode,
    origin: u64,
    thread: ThreadId,
    state: Mutex<State>,
}

/// One capture sequence: its graph and the streams capturing into it. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Capture(Arc<Inner>);

#[derive(Default)]
struct Registry {
    /// Capturing streams (members of live captures) by stream id.
    streams: BTreeMap<u64, Capture>,
    /// Events recorded in captures: the capture and the dependency set at the record.
    events: BTreeMap<u64, (Weak<Inner>, Vec<NodeId>)>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    streams: BTreeMap::new(),
    events: BTreeMap::new(),
});
/// Streams in captures: the hooks of ordinary stream operations look no further when 0.
static CAPTURING: AtomicUsize = AtomicUsize::new(0);
static NEXT_CAPTURE: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The thread's mode for unsafe calls (`hipThreadExchangeStreamCaptureMode`).
    static MODE: Cell<CaptureMode> = const { Cell::new(CaptureMode::Global) };
    /// Captures this thread began in global or thread-local mode.
    static MINE: RefCell<Vec<Weak<Inner>>> = const { RefCell::new(Vec::new()) };
}

impl Capture {
    /// The capture's id (`hipStreamGetCaptureInfo`'s), unique for the process's lifetime.
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// The graph it captures into.
    pub fn graph(&self) -> &Graph {
        &self.0.graph
    }

    /// Its mode.
    pub fn mode(&self) -> CaptureMode {
        self.0.mode
    }

    /// Whether it is invalidated (it can only end, with an error).
    pub fn is_invalidated(&self) -> bool {
        self.0.state.lock().invalidated
    }

    /// The status a member stream reports.
    pub fn status(&self) -> CaptureStatus {
        let state = self.0.state.lock();
        if state.ended {
            CaptureStatus::None
        } else if state.invalidated {
            CaptureStatus::Invalidated
        } else {
            CaptureStatus::Active
        }
    }

    /// Marks the capture invalidated: its streams' operations fail until it ends.
    pub fn invalidate(&self) {
        let mut state = self.0.state.lock();
        if !state.invalidated {
            tracing::debug!(capture = self.0.id, "capture invalidated");
        }
        state.invalidated = true;
    }

    /// The dependency set of `stream` (a member): what its next node will depend on.
    pub fn dependencies(&self, stream: &Stream) -> Vec<Node> {
        let state = self.0.state.lock();
        let ids = state
            .members
            .iter()
            .find(|m| m.stream == stream.id())
            .map(|m| m.deps.clone())
            .unwrap_or_default();
        ids.into_iter()
            .filter_map(|id| self.0.graph.node_by_id(id))
            .collect()
    }

    /// Adds `op` as the next node of `stream` (a member): after its dependency set, which
    /// becomes that node.
    ///
    /// # Errors
    /// [`CaptureError::Invalidated`]; graph errors (too many nodes).
    pub fn add(&self, stream: &Stream, op: NodeOp) -> RuntimeResult<Node> {
        let mut state = self.0.state.lock();
        if state.invalidated || state.ended {
            return Err(CaptureError::Invalidated {
                stream: stream.id(),
            }
            .into());
        }
        let Some(m) = state.members.iter_mut().find(|m| m.stream == stream.id()) else {
            return Err(CaptureError::IllegalState(format!(
                "stream {} is not part of capture {}",
                stream.id(),
                self.0.id
            ))
            .into());
        };
        let kind = op.kind();
        let node = self.0.graph.add_after(op, &m.deps)?;
        m.deps = vec![node.id()];
        state.captured.insert(node.id());
        tracing::debug!(capture = self.0.id, stream = stream.id(), node = node.id(), %kind, "captured");
        Ok(node)
    }
}

/// The thread's capture mode for unsafe calls, replaced by `mode`; the old one is returned
/// (`hipThreadExchangeStreamCaptureMode`).
pub fn exchange_mode(mode: CaptureMode) -> CaptureMode {
    MODE.with(|m| m.replace(mode))
}

/// Begins a capture on `stream` (`hipStreamBeginCapture`).
///
/// # Errors
/// [`CaptureError::Unsupported`] on the null stream, [`CaptureError::IllegalState`] when the
/// stream already captures.
pub fn begin(stream: &Stream, mode: CaptureMode) -> RuntimeResult<Capture> {
    begin_into(stream, mode, Graph::new(), Vec::new())
}

/// Begins a capture on `stream` into an existing graph, its first node after `deps` (nodes of
/// that graph) (`hipStreamBeginCaptureToGraph`). The graph's nodes so far count as added by
/// hand (they are not checked for joins).
///
/// # Errors
/// As [`begin`]; [`CaptureError::NotInCapture`] for a dependency of another graph.
pub fn begin_into(
    stream: &Stream,
    mode: CaptureMode,
    graph: Graph,
    deps: Vec<Node>,
) -> RuntimeResult<Capture> {
    for d in &deps {
        if !graph.contains(d) {
            return Err(CaptureError::NotInCapture {
                node: d.id(),
                stream: stream.id(),
            }
            .into());
        }
    }
    if stream.kind() == StreamKind::Null {
        return Err(CaptureError::Unsupported {
            what: "capture".into(),
            why: "on the legacy null stream".into(),
        }
        .into());
    }
    let device = Arc::downgrade(&stream.context()?);
    let mut reg = REGISTRY.lock();
    if let Some(c) = reg.streams.get(&stream.id()) {
        return Err(CaptureError::IllegalState(format!(
            "stream {} already captures (capture {})",
            stream.id(),
            c.id()
        ))
        .into());
    }
    let capture = Capture(Arc::new(Inner {
        id: NEXT_CAPTURE.fetch_add(1, Ordering::Relaxed),
        graph,
        mode,
        origin: stream.id(),
        thread: std::thread::current().id(),
        state: Mutex::new(State {
            invalidated: false,
            ended: false,
            members: vec![Member {
                stream: stream.id(),
                blocking: stream.kind() == StreamKind::Blocking,
                device,
                deps: deps.iter().map(Node::id).collect(),
            }],
            captured: HashSet::new(),
            released: HashSet::new(),
        }),
    }));
    reg.streams.insert(stream.id(), capture.clone());
    CAPTURING.fetch_add(1, Ordering::Release);
    drop(reg);
    if mode != CaptureMode::Relaxed {
        let _ = MINE.try_with(|m| {
            let mut m = m.borrow_mut();
            m.retain(|w| w.strong_count() > 0);
            m.push(Arc::downgrade(&capture.0));
        });
    }
    tracing::debug!(
        capture = capture.id(),
        stream = stream.id(),
        ?mode,
        "capture begins"
    );
    Ok(capture)
}

/// Takes every stream of `capture` out of the registry and forgets its events.
fn terminate(reg: &mut Registry, capture: &Capture) {
    let mut state = capture.0.state.lock();
    state.ended = true;
    for m in &state.members {
        if reg.streams.remove(&m.stream).is_some() {
            CAPTURING.fetch_sub(1, Ordering::Release);
        }
    }
    reg.events
        .retain(|_, (w, _)| w.upgrade().is_some_and(|c| !Arc::ptr_eq(&c, &capture.0)));
    let _ = MINE.try_with(|m| {
        m.borrow_mut()
            .retain(|w| w.upgrade().is_some_and(|c| !Arc::ptr_eq(&c, &capture.0)))
    });
}

/// Ends the capture begun on `stream` and returns its graph (`hipStreamEndCapture`); every
/// stream that joined it stops capturing.
///
/// # Errors
/// [`CaptureError::IllegalState`] when the stream does not capture,
/// [`CaptureError::Unmatched`] when the capture began on another stream,
/// [`CaptureError::WrongThread`], [`CaptureError::Invalidated`] (the capture ends and its graph
/// is dropped), [`CaptureError::Unjoined`] (likewise).
pub fn end(stream: &Stream) -> RuntimeResult<Graph> {
    let mut reg = REGISTRY.lock();
    let capture = reg.streams.get(&stream.id()).cloned().ok_or_else(|| {
        CaptureError::IllegalState(format!("stream {} is not capturing", stream.id()))
    })?;
    if capture.0.origin != stream.id() {
        return Err(CaptureError::Unmatched {
            stream: stream.id(),
            origin: capture.0.origin,
        }
        .into());
    }
    if capture.0.mode != CaptureMode::Relaxed && capture.0.thread != std::thread::current().id() {
        return Err(CaptureError::WrongThread {
            capture: capture.id(),
            mode: capture.0.mode,
        }
        .into());
    }
    terminate(&mut reg, &capture);
    drop(reg);
    let state = capture.0.state.lock();
    if state.invalidated {
        return Err(CaptureError::Invalidated {
            stream: stream.id(),
        }
        .into());
    }
    let origin_deps: HashSet<NodeId> = state
        .members
        .iter()
        .find(|m| m.stream == stream.id())
        .map(|m| m.deps.iter().copied().collect())
        .unwrap_or_default();
    let mut unjoined: Vec<NodeId> = capture
        .0
        .graph
        .leaf_ids()
        .into_iter()
        .filter(|n| {
            state.captured.contains(n) && !origin_deps.contains(n) && !state.released.contains(n)
        })
        .collect();
    unjoined.sort_unstable();
    if let Some(&node) = unjoined.first() {
        return Err(CaptureError::Unjoined {
            capture: capture.id(),
            origin: stream.id(),
            node,
        }
        .into());
    }
    tracing::debug!(
        capture = capture.id(),
        nodes = capture.0.graph.len(),
        "capture ends"
    );
    Ok(capture.0.graph.clone())
}

/// The capture `stream` is part of, if any (ended captures excluded).
pub fn of(stream: &Stream) -> Option<Capture> {
    if CAPTURING.load(Ordering::Acquire) == 0 {
        return None;
    }
    REGISTRY.lock().streams.get(&stream.id()).cloned()
}

/// Captures with a blocking stream on `device`: what work on the legacy null stream would
/// wait for implicitly.
fn blocking_on(reg: &Registry, device: &Weak<DeviceContext>) -> Vec<(Capture, u64)> {
    let mut out: Vec<(Capture, u64)> = Vec::new();
    for (&id, c) in &reg.streams {
        let state = c.0.state.lock();
        let hit = state
            .members
            .iter()
            .any(|m| m.stream == id && m.blocking && Weak::ptr_eq(&m.device, device));
        drop(state);
        if hit && !out.iter().any(|(o, _)| Arc::ptr_eq(&o.0, &c.0)) {
            out.push((c.clone(), id));
        }
    }
    out
}

/// The legacy null stream's rule: work on it would wait for blocking streams that capture,
/// so it invalidates their captures and fails.
fn implicit(stream: &Stream, what: &str) -> RuntimeResult<()> {
    let device = Arc::downgrade(&stream.context()?);
    let reg = REGISTRY.lock();
    let hits = blocking_on(&reg, &device);
    drop(reg);
    match hits.first() {
        None => Ok(()),
        Some((c, s)) => {
            for (c, _) in &hits {
                c.invalidate();
            }
            Err(CaptureError::Implicit {
                what: what.to_owned(),
                capture: c.id(),
                stream: *s,
            }
            .into())
        }
    }
}

/// The hook at the start of every stream operation: the capture to add the operation to
/// when `stream` captures, `None` when the operation runs.
///
/// # Errors
/// [`CaptureError::Invalidated`] when the stream's capture was invalidated (the operation
/// neither runs nor is captured), [`CaptureError::Implicit`] for work on the null stream while
/// a blocking stream of its device captures (that capture is invalidated).
pub fn intercept(stream: &Stream, what: &str) -> RuntimeResult<Option<Capture>> {
    if CAPTURING.load(Ordering::Acquire) == 0 {
        return Ok(None);
    }
    if let Some(c) = of(stream) {
        if c.is_invalidated() {
            return Err(CaptureError::Invalidated {
                stream: stream.id(),
            }
            .into());
        }
        return Ok(Some(c));
    }
    if stream.kind() == StreamKind::Null {
        implicit(stream, what)?;
    }
    Ok(None)
}

/// `hipStreamIsCapturing` / `hipStreamGetCaptureInfo`: the stream's status and capture.
///
/// # Errors
/// [`CaptureError::Implicit`] for the null stream while a blocking stream of its device
/// captures (the capture is not invalidated by asking).
pub fn status(stream: &Stream) -> RuntimeResult<(CaptureStatus, Option<Capture>)> {
    if stream.kind() == StreamKind::Null {
        if CAPTURING.load(Ordering::Acquire) > 0 {
            let device = Arc::downgrade(&stream.context()?);
            let reg = REGISTRY.lock();
            if let Some((c, s)) = blocking_on(&reg, &device).into_iter().next() {
                return Err(CaptureError::Implicit {
                    what: "asking the legacy null stream's capture status".into(),
                    capture: c.id(),
                    stream: s,
                }
                .into());
            }
        }
        return Ok((CaptureStatus::None, None));
    }
    Ok(match of(stream) {
        Some(c) => (c.status(), Some(c)),
        None => (CaptureStatus::None, None),
    })
}

/// `hipEventRecord` on `stream`: when it captures, the event remembers the stream's
/// dependency set (and nothing runs); returns whether it was captured.
///
/// # Errors
/// As [`intercept`].
pub fn record_event(stream: &Stream, event: &Event) -> RuntimeResult<bool> {
    // No capture: no event is captured either (a capture's events go when it ends).
    if CAPTURING.load(Ordering::Acquire) == 0 {
        return Ok(false);
    }
    let captured = intercept(stream, "recording an event")?;
    let mut reg = REGISTRY.lock();
    match captured {
        Some(c) => {
            let deps =
                c.0.state
                    .lock()
                    .members
                    .iter()
                    .find(|m| m.stream == stream.id())
                    .map(|m| m.deps.clone())
                    .unwrap_or_default();
            reg.events.insert(event.id(), (Arc::downgrade(&c.0), deps));
            Ok(true)
        }
        None => {
            reg.events.remove(&event.id());
            Ok(false)
        }
    }
}

/// The live capture an event was recorded in, and the dependency set it remembers.
fn event_capture(reg: &Registry, event: &Event) -> Option<(Capture, Vec<NodeId>)> {
    let (w, deps) = reg.events.get(&event.id())?;
    let c = Capture(w.upgrade()?);
    let ended = c.0.state.lock().ended;
    (!ended).then(|| (c, deps.clone()))
}

/// `hipStreamWaitEvent(stream, event)` under capture: a capturing stream waiting for an
/// event of its capture adds the event's set to its dependencies; a stream that does not
/// capture joins the event's capture (a fork). Returns whether the wait was captured (else it
/// is an ordinary wait).
///
/// # Errors
/// [`CaptureError::Merge`] for an event of another capture, [`CaptureError::Isolation`] for a
/// capturing stream waiting for an incomplete event recorded outside any capture (both
/// invalidate the stream's capture); as [`intercept`].
pub fn wait_event(stream: &Stream, event: &Event) -> RuntimeResult<bool> {
    if CAPTURING.load(Ordering::Acquire) == 0 {
        return Ok(false);
    }
    let mine = intercept(stream, "waiting for an event")?;
    let mut reg = REGISTRY.lock();
    let theirs = event_capture(&reg, event);
    match (mine, theirs) {
        (Some(m), Some((t, deps))) if Arc::ptr_eq(&m.0, &t.0) => {
            let mut state = m.0.state.lock();
            if let Some(member) = state.members.iter_mut().find(|x| x.stream == stream.id()) {
                for d in deps {
                    if !member.deps.contains(&d) {
                        member.deps.push(d);
                    }
                }
            }
            Ok(true)
        }
        (Some(m), Some((t, _))) => {
            m.invalidate();
            Err(CaptureError::Merge {
                stream: stream.id(),
                capture: m.id(),
                event: event.id(),
                other: t.id(),
            }
            .into())
        }
        (None, Some((t, deps))) => {
            let device = Arc::downgrade(&stream.context()?);
            t.0.state.lock().members.push(Member {
                stream: stream.id(),
                blocking: stream.kind() == StreamKind::Blocking,
                device,
                deps,
            });
            reg.streams.insert(stream.id(), t.clone());
            CAPTURING.fetch_add(1, Ordering::Release);
            tracing::debug!(
                capture = t.id(),
                stream = stream.id(),
                "stream joins a capture"
            );
            Ok(true)
        }
        (Some(m), None) => {
            drop(reg);
            if event.pending_signal().is_some() {
                m.invalidate();
                return Err(CaptureError::Isolation {
                    stream: stream.id(),
                    event: event.id(),
                }
                .into());
            }
            // A complete (or never recorded) event orders nothing: no node.
            Ok(true)
        }
        (None, None) => Ok(false),
    }
}

/// `hipEventQuery` / `hipEventSynchronize`: an event recorded in a capture in progress has no
/// completion to report; asking invalidates its capture.
///
/// # Errors
/// [`CaptureError::CapturedEvent`].
pub fn check_event(event: &Event) -> RuntimeResult<()> {
    if CAPTURING.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    let reg = REGISTRY.lock();
    if let Some((c, _)) = event_capture(&reg, event) {
        drop(reg);
        c.invalidate();
        return Err(CaptureError::CapturedEvent {
            event: event.id(),
            capture: c.id(),
        }
        .into());
    }
    Ok(())
}

/// Live captures, each once.
fn live(reg: &Registry) -> Vec<Capture> {
    let mut out: Vec<Capture> = Vec::new();
    for c in reg.streams.values() {
        if !out.iter().any(|o| Arc::ptr_eq(&o.0, &c.0)) {
            out.push(c.clone());
        }
    }
    out
}

/// Captures this thread began in global or thread-local mode that are still in progress.
fn mine() -> Vec<Capture> {
    MINE.try_with(|m| {
        m.borrow()
            .iter()
            .filter_map(Weak::upgrade)
            .map(Capture)
            .filter(|c| !c.0.state.lock().ended)
            .collect()
    })
    .unwrap_or_default()
}

fn refuse(captures: &[Capture], what: &str, why: &str) -> RuntimeResult<()> {
    for c in captures {
        c.invalidate();
    }
    Err(CaptureError::Unsupported {
        what: what.to_owned(),
        why: format!(
            "{why} (capture {})",
            captures.first().map_or(0, Capture::id)
        ),
    }
    .into())
}

/// A potentially unsafe call (allocation, freeing, a host wait) under the thread's mode:
/// refused, invalidating the captures concerned, while a capture the mode protects is in
/// progress.
///
/// # Errors
/// [`CaptureError::Unsupported`].
pub fn check_unsafe(what: &str) -> RuntimeResult<()> {
    if CAPTURING.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    let mode = MODE.try_with(Cell::get).unwrap_or(CaptureMode::Global);
    if mode == CaptureMode::Relaxed {
        return Ok(());
    }
    let own = mine();
    if !own.is_empty() {
        return refuse(&own, what, "this thread captures");
    }
    if mode == CaptureMode::Global {
        let global: Vec<Capture> = live(&REGISTRY.lock())
            .into_iter()
            .filter(|c| c.0.mode == CaptureMode::Global)
            .collect();
        if !global.is_empty() {
            return refuse(&global, what, "a global-mode capture is in progress");
        }
    }
    Ok(())
}

/// A synchronous copy or fill: it would wait for the capturing streams' work (clr's rule for
/// every mode): every capture is invalidated.
///
/// # Errors
/// [`CaptureError::Implicit`].
pub fn check_synchronous(what: &str) -> RuntimeResult<()> {
    if CAPTURING.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    let reg = REGISTRY.lock();
    let all = live(&reg);
    let first = reg.streams.keys().next().copied().unwrap_or(0);
    drop(reg);
    match all.first() {
        None => Ok(()),
        Some(c) => {
            let id = c.id();
            for c in &all {
                c.invalidate();
            }
            Err(CaptureError::Implicit {
                what: what.to_owned(),
                capture: id,
                stream: first,
            }
            .into())
        }
    }
}

/// `hipDeviceSynchronize` during any capture: refused, every capture invalidated.
///
/// # Errors
/// [`CaptureError::Unsupported`].
pub fn check_device_synchronize(what: &str) -> RuntimeResult<()> {
    if CAPTURING.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    let all = live(&REGISTRY.lock());
    if all.is_empty() {
        return Ok(());
    }
    refuse(&all, what, "a capture is in progress")
}

/// `hipStreamSynchronize` / `hipStreamQuery` on `stream`: a capturing stream has nothing to
/// wait for (its capture is invalidated); the legacy null stream follows the implicit rule;
/// another stream is a potentially unsafe call.
///
/// # Errors
/// [`CaptureError::Unsupported`], [`CaptureError::Implicit`].
pub fn check_stream_wait(stream: &Stream, what: &str) -> RuntimeResult<()> {
    if CAPTURING.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    if let Some(c) = of(stream) {
        return refuse(&[c], what, &format!("stream {} captures", stream.id()));
    }
    if stream.kind() == StreamKind::Null {
        implicit(stream, what)?;
    }
    check_unsafe(what)
}

/// Replaces or extends `stream`'s dependency set (`hipStreamUpdateCaptureDependencies`).
///
/// # Errors
/// [`CaptureError::IllegalState`] when the stream does not capture,
/// [`CaptureError::NotInCapture`] for a node of another graph.
pub fn update_dependencies(stream: &Stream, nodes: &[Node], replace: bool) -> RuntimeResult<()> {
    let c = of(stream).ok_or_else(|| {
        CaptureError::IllegalState(format!("stream {} is not capturing", stream.id()))
    })?;
    for n in nodes {
        if !c.0.graph.contains(n) {
            return Err(CaptureError::NotInCapture {
                node: n.id(),
                stream: stream.id(),
            }
            .into());
        }
    }
    let mut state = c.0.state.lock();
    let State {
        members, released, ..
    } = &mut *state;
    let member = members
        .iter_mut()
        .find(|m| m.stream == stream.id())
        .ok_or_else(|| {
            CaptureError::IllegalState(format!("stream {} left its capture", stream.id()))
        })?;
    let given: Vec<NodeId> = nodes.iter().map(Node::id).collect();
    if replace {
        released.extend(member.deps.iter().filter(|d| !given.contains(d)));
        member.deps.clear();
    }
    for id in given {
        if !member.deps.contains(&id) {
            member.deps.push(id);
        }
    }
    Ok(())
}

/// A stream is destroyed: it leaves its capture; a capture whose origin goes ends, and its
/// graph (returned, for the API layer to forget) is dropped.
pub fn forget_stream(stream: &Stream) -> Option<Graph> {
    if CAPTURING.load(Ordering::Acquire) == 0 {
        return None;
    }
    let mut reg = REGISTRY.lock();
    let c = reg.streams.get(&stream.id()).cloned()?;
    if c.0.origin == stream.id() {
        c.invalidate();
        terminate(&mut reg, &c);
        return Some(c.0.graph.clone());
    }
    if reg.streams.remove(&stream.id()).is_some() {
        CAPTURING.fetch_sub(1, Ordering::Release);
        c.0.state.lock().members.retain(|m| m.stream != stream.id());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::SoftAgent;
    use crate::runtime::graph::{HostNode, NodeKind};
    use crate::runtime::{Runtime, RuntimeError, RuntimeOptions};

    fn host() -> NodeOp {
        NodeOp::Host(HostNode {
            call: Arc::new(|| {}),
            function: 0,
            data: 0,
        })
    }

    fn code(e: RuntimeError) -> CaptureError {
        match e {
            RuntimeError::Capture(c) => c,
            e => panic!("not a capture error: {e}"),
        }
    }

    /// One test: capture state is the process's, and the modes' rules look at every capture.
    #[test]
    fn capture_rules() {
        let agent = SoftAgent::new("gfx1030".parse().unwrap()).device();
        let rt = Runtime::with_devices(vec![agent], RuntimeOptions::default());
        let ctx = rt.device(0).unwrap().clone();
        let null = ctx.null_stream().unwrap();
        let s1 = ctx.create_stream(StreamKind::Blocking, 0).unwrap();
        let s2 = ctx.create_stream(StreamKind::Blocking, 0).unwrap();
        let s3 = ctx.create_stream(StreamKind::NonBlocking, 0).unwrap();

        // Not on the null stream; not twice; end only what began.
        assert!(matches!(
            code(begin(&null, CaptureMode::Global).unwrap_err()),
            CaptureError::Unsupported { .. }
        ));
        assert!(matches!(
            code(end(&s1).unwrap_err()),
            CaptureError::IllegalState(_)
        ));
        let c = begin(&s1, CaptureMode::Global).unwrap();
        assert!(matches!(
            code(begin(&s1, CaptureMode::Global).unwrap_err()),
            CaptureError::IllegalState(_)
        ));
        assert_eq!(status(&s1).unwrap().0, CaptureStatus::Active);
        assert_eq!(status(&s2).unwrap().0, CaptureStatus::None);

        // Operations become nodes, each after the last.
        let k1 = intercept(&s1, "op")
            .unwrap()
            .unwrap()
            .add(&s1, host())
            .unwrap();
        let k2 = c.add(&s1, host()).unwrap();
        assert_eq!(c.graph().dependency_ids(k2.id()), [k1.id()]);
        assert_eq!(
            c.dependencies(&s1).iter().map(Node::id).collect::<Vec<_>>(),
            [k2.id()]
        );

        // Fork through an event, join back.
        let fork = Event::new(false);
        assert!(record_event(&s1, &fork).unwrap());
        assert!(wait_event(&s2, &fork).unwrap());
        assert_eq!(status(&s2).unwrap().0, CaptureStatus::Active);
        let side = c.add(&s2, host()).unwrap();
        assert_eq!(c.graph().dependency_ids(side.id()), [k2.id()]);
        // A captured event has no completion to ask about (but asking would invalidate: not
        // here).
        let join = Event::new(false);
        assert!(record_event(&s2, &join).unwrap());
        assert!(wait_event(&s1, &join).unwrap());
        let last = c.add(&s1, host()).unwrap();
        let mut deps = c.graph().dependency_ids(last.id());
        deps.sort_unstable();
        assert_eq!(deps, [k2.id(), side.id()]);
        // The null stream meets a capturing blocking stream: refused, and the capture dies.
        let probe = begin(&s3, CaptureMode::Relaxed).unwrap();
        assert!(matches!(
            code(status(&null).unwrap_err()),
            CaptureError::Implicit { .. }
        ));
        // Ending on the forked stream is refused.
        assert!(matches!(
            code(end(&s2).unwrap_err()),
            CaptureError::Unmatched { .. }
        ));
        let g = end(&s1).unwrap();
        assert_eq!(g.len(), 4);
        assert!(g
            .nodes()
            .iter()
            .all(|n| g.kind(n).unwrap() == NodeKind::Host));
        assert_eq!(status(&s2).unwrap().0, CaptureStatus::None);
        assert!(!record_event(&s1, &fork).unwrap());
        assert!(check_event(&fork).is_ok());
        // A non-blocking capture leaves the null stream alone.
        assert!(intercept(&null, "op").unwrap().is_none());
        assert!(end(&s3).is_ok());
        drop(probe);

        // Unjoined forks end the capture with an error.
        begin(&s1, CaptureMode::Relaxed).unwrap();
        assert!(record_event(&s1, &fork).unwrap());
        assert!(wait_event(&s2, &fork).unwrap());
        let c = of(&s2).unwrap();
        c.add(&s2, host()).unwrap();
        assert!(matches!(
            code(end(&s1).unwrap_err()),
            CaptureError::Unjoined { .. }
        ));
        assert!(of(&s2).is_none());

        // Unsafe calls by mode: global captures refuse them anywhere; relaxed threads never.
        let c = begin(&s1, CaptureMode::Global).unwrap();
        let other = std::thread::spawn(|| check_unsafe("allocating").map_err(code))
            .join()
            .unwrap();
        assert!(matches!(other, Err(CaptureError::Unsupported { .. })));
        assert!(c.is_invalidated());
        assert!(matches!(
            code(intercept(&s1, "op").unwrap_err()),
            CaptureError::Invalidated { .. }
        ));
        assert!(matches!(
            code(end(&s1).unwrap_err()),
            CaptureError::Invalidated { .. }
        ));
        let c = begin(&s1, CaptureMode::ThreadLocal).unwrap();
        let other = std::thread::spawn(|| check_unsafe("allocating").map_err(code))
            .join()
            .unwrap();
        assert!(other.is_ok(), "another thread's thread-local capture");
        assert!(check_unsafe("allocating").is_err());
        assert!(c.is_invalidated());
        assert!(end(&s1).is_err());
        let c = begin(&s1, CaptureMode::Global).unwrap();
        assert_eq!(exchange_mode(CaptureMode::Relaxed), CaptureMode::Global);
        assert!(check_unsafe("allocating").is_ok());
        assert_eq!(exchange_mode(CaptureMode::Global), CaptureMode::Relaxed);
        // Synchronous calls and device synchronisation are refused in every mode.
        assert!(matches!(
            code(check_synchronous("a copy").unwrap_err()),
            CaptureError::Implicit { .. }
        ));
        assert!(c.is_invalidated());
        assert!(end(&s1).is_err());

        // A captured event asked about; waits across captures.
        let c = begin(&s1, CaptureMode::Relaxed).unwrap();
        assert!(record_event(&s1, &fork).unwrap());
        assert!(matches!(
            code(check_event(&fork).unwrap_err()),
            CaptureError::CapturedEvent { .. }
        ));
        assert!(c.is_invalidated());
        assert!(end(&s1).is_err());
        begin(&s1, CaptureMode::Relaxed).unwrap();
        let d = begin(&s2, CaptureMode::Relaxed).unwrap();
        assert!(record_event(&s1, &fork).unwrap());
        assert!(matches!(
            code(wait_event(&s2, &fork).unwrap_err()),
            CaptureError::Merge { .. }
        ));
        assert!(d.is_invalidated());
        assert!(end(&s1).is_ok());
        assert!(end(&s2).is_err());
        // An event never recorded orders nothing: waiting for it adds no node.
        let c = begin(&s1, CaptureMode::Relaxed).unwrap();
        assert!(wait_event(&s1, &Event::new(false)).unwrap());
        assert!(!c.is_invalidated());

        // Dependencies replaced by hand; a destroyed origin drops the capture.
        let a = c.add(&s1, host()).unwrap();
        let manual = c.graph().add(NodeOp::Empty, &[]).unwrap();
        update_dependencies(&s1, std::slice::from_ref(&manual), true).unwrap();
        let b = c.add(&s1, host()).unwrap();
        assert_eq!(c.graph().dependency_ids(b.id()), [manual.id()]);
        let outside = Graph::new().add(NodeOp::Empty, &[]).unwrap();
        assert!(matches!(
            code(update_dependencies(&s1, &[outside], false).unwrap_err()),
            CaptureError::NotInCapture { .. }
        ));
        let _ = a;
        assert!(forget_stream(&s1).is_some());
        assert!(of(&s1).is_none());
        assert!(matches!(
            code(update_dependencies(&s1, &[], false).unwrap_err()),
            CaptureError::IllegalState(_)
        ));
        assert_eq!(CAPTURING.load(Ordering::Acquire), 0);
        // Nothing captures: a record is an ordinary one, and the event is no captured event.
        assert!(!record_event(&s1, &fork).unwrap());
        assert!(!record_event(&null, &fork).unwrap());
        assert!(check_event(&fork).is_ok());
    }
}
