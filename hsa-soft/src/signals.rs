//! Signals (`core/runtime/signal.cpp`, `default_signal.cpp`, `interrupt_signal.cpp`): 64-bit
//! values in the software agents' shared signal table, so packets on any agent's queue can name
//! them. Waits follow `hsa_signal_wait_*`: the condition against the value, a timeout hint in
//! timestamp ticks (nanoseconds here; `UINT64_MAX` waits for ever), the value observed last
//! returned whether or not the condition held. Loads and stores of an unknown handle do nothing
//! and read 0 (the API has no way to fail them; ROCr would crash).
//!
//! Handles are the addresses of the signals' `amd_signal_t` layout, as ROCr's are, and those
//! 64 bytes are in every GPU agent's allocation table: device code uses signals (a hostcall
//! doorbell is one, which `__ockl_hsa_signal_add` increments).
//!
//! Interrupt signals have an event mailbox, as ROCr's have a slot of the kernel driver's event
//! page (`core/runtime/interrupt_signal.cpp`, `hsaKmtCreateEvent`): the signal's
//! `amd_signal_t` names a 64-bit slot of the runtime's [`EventPage`] and an event id. Device
//! code that stores to or adds to the signal (`__ockl_hsa_signal_store`/`add`, a hostcall
//! doorbell) writes the id to the slot and sends `s_sendmsg sendmsg(MSG_INTERRUPT)`; the
//! agent's interrupt listener then finds the posted slots, as the driver's interrupt handler
//! scans its event page when the id in M0 is too short to name the event, and wakes those
//! signals' waiters at once instead of at their next timeout.
//!
//! ROCr makes two kinds of signal (`hsa_amd_signal_create` in `hsa_ext_amd.cpp`, with its
//! default of interrupt waits): an *interrupt* signal unless the signal is for IPC, for GPUs
//! only (`HSA_AMD_SIGNAL_AMD_GPU_ONLY`), or its consumers name no CPU agent; else a *default*
//! (busy-wait) signal. Only interrupt signals take asynchronous handlers
//! (`hsa_amd_signal_async_handler`), only default ones give their value's address
//! (`hsa_amd_signal_value_pointer`). Asynchronous handlers run on one thread of the runtime, as
//! ROCr's async-events thread runs them: a handler returning true stays registered.

use hsa_sys::*;
use parking_lot::{Condvar, Mutex};
use rocload::device::{Condition, Device, MemoryKind, Signal, SignalHandle};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::agents::agent_index;
use crate::runtime::runtime;
use crate::util::{guard, guard_value, put, Status};

/// A signal `hsa_signal_create`, `hsa_amd_signal_create` or `hsa_amd_ipc_signal_attach` made,
/// kept until destroyed.
pub(crate) struct OwnedSignal {
    /// Keeps the table entry alive.
    _handle: SignalHandle,
    /// ROCr's `InterruptSignal` (else `DefaultSignal`).
    interrupt: bool,
    /// Its slot of the event page (interrupt signals while slots last).
    event: Option<u32>,
    /// An IPC signal's shared block (`ipc_signals.rs`), mapped while the signal lives.
    ipc: Option<Arc<crate::ipc_signals::SharedBlock>>,
}

/// Keeps a new signal until `hsa_signal_destroy` and makes its `amd_signal_t` reachable by
/// every GPU agent (device code may use it); returns its handle.
pub(crate) fn own(
    rt: &crate::runtime::Runtime,
    created: SignalHandle,
    interrupt: bool,
    event: Option<u32>,
    ipc: Option<Arc<crate::ipc_signals::SharedBlock>>,
) -> u64 {
    let handle = created.handle;
    for agent in &rt.agents {
        if let Some((soft, _)) = agent.gpu() {
            if let Err(e) =
                soft.allocations()
                    .insert(handle, Signal::ABI_SIZE, MemoryKind::PinnedHost, true)
            {
                tracing::debug!(error = %e, "a signal's amd_signal_t is not reachable by an agent");
            }
        }
    }
    rt.owned_signals.lock().insert(
        handle,
        OwnedSignal {
            _handle: created,
            interrupt,
            event,
            ipc,
        },
    );
    handle
}

/// The shared block of the IPC signal `handle`, if it is one.
pub(crate) fn ipc_block(
    rt: &crate::runtime::Runtime,
    handle: u64,
) -> Option<Arc<crate::ipc_signals::SharedBlock>> {
    rt.owned_signals.lock().get(&handle)?.ipc.clone()
}

/// Slots of the event page: the kernel driver's limit of events per process
/// (`KFD_SIGNAL_EVENT_LIMIT`), past which ROCr cannot make an event either.
const EVENT_SLOTS: usize = 4096;
/// A slot nobody posted to (the driver's `UNSIGNALED_EVENT_SLOT`).
const UNSIGNALED: u64 = u64::MAX;

/// The interrupt signals' mailboxes: one 64-bit slot per event, in every GPU agent's
/// allocation table so device code may post to it.
pub(crate) struct EventPage {
    slots: Box<[AtomicU64]>,
    owners: Mutex<EventOwners>,
}

#[derive(Default)]
struct EventOwners {
    /// Slots never used or given back.
    free: Vec<u32>,
    /// The signal of each slot in use.
    live: HashMap<u32, Weak<Signal>>,
}

impl EventPage {
    pub(crate) fn new() -> EventPage {
        EventPage {
            slots: (0..EVENT_SLOTS)
                .map(|_| AtomicU64::new(UNSIGNALED))
                .collect(),
            owners: Mutex::new(EventOwners {
                free: (0..EVENT_SLOTS as u32).rev().collect(),
                live: HashMap::new(),
            }),
        }
    }

    /// Where the page is, and its length in bytes.
    pub(crate) fn range(&self) -> (u64, u64) {
        (
            self.slots.as_ptr() as u64,
            (self.slots.len() * std::mem::size_of::<AtomicU64>()) as u64,
        )
    }

    /// A free slot's event id and mailbox address; `None` when every slot is taken.
    fn reserve(&self) -> Option<(u32, u64)> {
        let id = self.owners.lock().free.pop()?;
        let slot = self.slots.get(id as usize)?;
        slot.store(UNSIGNALED, Ordering::Relaxed);
        Some((id, slot as *const AtomicU64 as u64))
    }

    fn bind(&self, id: u32, signal: &Arc<Signal>) {
        self.owners.lock().live.insert(id, Arc::downgrade(signal));
    }

    fn release(&self, id: u32) {
        let mut owners = self.owners.lock();
        if owners.live.remove(&id).is_some() {
            owners.free.push(id);
        }
    }

    /// An agent's interrupt: wakes the waiters of every signal whose slot was posted to,
    /// and clears those slots. M0 carries 8 bits of the id, too few to name one of 4,096
    /// events, so every slot in use is looked at (the driver scans its page the same way).
    pub(crate) fn interrupt(&self, _m0: u32) {
        let posted: Vec<Arc<Signal>> = {
            let owners = self.owners.lock();
            owners
                .live
                .iter()
                .filter(|(&id, _)| {
                    self.slots
                        .get(id as usize)
                        .is_some_and(|s| s.swap(UNSIGNALED, Ordering::AcqRel) != UNSIGNALED)
                })
                .filter_map(|(_, w)| w.upgrade())
                .collect()
        };
        for s in posted {
            s.wake();
        }
    }
}

/// Most asynchronous handlers one runtime holds at once (ROCr's are bounded by its signals).
const MAX_ASYNC_HANDLERS: usize = 1 << 16;
/// How long the handler thread waits on one pending signal before looking at the others.
const HANDLER_POLL: Duration = Duration::from_micros(500);

struct AsyncHandler {
    signal: Arc<Signal>,
    condition: Condition,
    value: i64,
    handler: unsafe extern "C" fn(hsa_signal_value_t, *mut c_void) -> bool,
    arg: usize,
}

/// `hsa_amd_signal_async_handler`'s registrations and the thread that runs them.
#[derive(Default)]
pub(crate) struct AsyncHandlers {
    state: Arc<HandlerState>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Default)]
struct HandlerState {
    pending: Mutex<Vec<AsyncHandler>>,
    added: Condvar,
    stop: AtomicBool,
}

impl AsyncHandlers {
    fn register(&self, handler: AsyncHandler) -> Status {
        {
            let mut pending = self.state.pending.lock();
            if pending.len() >= MAX_ASYNC_HANDLERS {
                return Err(HSA_STATUS_ERROR_OUT_OF_RESOURCES);
            }
            pending.push(handler);
            self.state.added.notify_all();
        }
        let mut thread = self.thread.lock();
        if thread.is_none() {
            let state = self.state.clone();
            *thread = Some(
                std::thread::Builder::new()
                    .name("hsa-soft-async".into())
                    .spawn(move || run_handlers(&state))
                    .map_err(|_| HSA_STATUS_ERROR_OUT_OF_RESOURCES)?,
            );
        }
        Ok(())
    }

    /// Stops the thread (at `hsa_shut_down`); handlers still pending never run.
    pub(crate) fn stop(&self) {
        self.state.stop.store(true, Ordering::Release);
        {
            let _pending = self.state.pending.lock();
            self.state.added.notify_all();
        }
        if let Some(t) = self.thread.lock().take() {
            let _ = t.join();
        }
    }
}

/// The handler thread: runs every handler whose condition holds (outside the lock, since a
/// handler may register another), keeps those that return true, and waits for the rest.
fn run_handlers(state: &HandlerState) {
    while !state.stop.load(Ordering::Acquire) {
        let (ready, first) = {
            let mut pending = state.pending.lock();
            if pending.is_empty() {
                state
                    .added
                    .wait_for(&mut pending, Duration::from_millis(50));
                continue;
            }
            let mut ready = Vec::new();
            let mut i = 0;
            while i < pending.len() {
                let h = &pending[i];
                let value = h.signal.load();
                if h.condition.holds(value, h.value) {
                    ready.push((pending.swap_remove(i), value));
                } else {
                    i += 1;
                }
            }
            let first = pending
                .first()
                .map(|h| (h.signal.clone(), h.condition, h.value));
            (ready, first)
        };
        if ready.is_empty() {
            if let Some((signal, condition, value)) = first {
                signal.wait(condition, value, Some(HANDLER_POLL));
            }
            continue;
        }
        for (h, value) in ready {
            // SAFETY: the application's handler with its own argument, as registered.
            let again = unsafe { (h.handler)(value, h.arg as *mut c_void) };
            if again {
                let mut pending = state.pending.lock();
                if pending.len() < MAX_ASYNC_HANDLERS {
                    pending.push(h);
                }
            }
        }
    }
}

/// Makes the event page reachable by every GPU agent's device code and has their interrupts
/// delivered to it.
pub(crate) fn attach_event_page(
    agents: &[crate::agents::AgentEntry],
    page: &Arc<EventPage>,
) -> Status {
    let (base, len) = page.range();
    for agent in agents {
        if let Some((soft, _)) = agent.gpu() {
            soft.allocations()
                .insert(base, len, MemoryKind::PinnedHost, true)
                .map_err(|e| {
                    tracing::debug!(error = %e, "the event page is not reachable by an agent");
                    HSA_STATUS_ERROR_OUT_OF_RESOURCES
                })?;
            let page = page.clone();
            soft.listen_to_interrupts(Arc::new(move |m0| page.interrupt(m0)))
                .map_err(|e| {
                    tracing::debug!(error = %e, "an agent's interrupts cannot be heard");
                    HSA_STATUS_ERROR_OUT_OF_RESOURCES
                })?;
        }
    }
    Ok(())
}

fn condition_of(condition: hsa_signal_condition_t) -> Option<Condition> {
    Some(match condition {
        HSA_SIGNAL_CONDITION_EQ => Condition::Eq,
        HSA_SIGNAL_CONDITION_NE => Condition::Ne,
        HSA_SIGNAL_CONDITION_LT => Condition::Lt,
        HSA_SIGNAL_CONDITION_GTE => Condition::Gte,
        _ => return None,
    })
}

/// `hsa_amd_signal_create`'s work (`hsa_signal_create` is it with no attributes).
///
/// # Safety
/// `consumers` holds `num_consumers` agents when non-NULL; `signal` is writable.
unsafe fn create(
    initial_value: hsa_signal_value_t,
    num_consumers: u32,
    consumers: *const hsa_agent_t,
    attributes: u64,
    signal: *mut hsa_signal_t,
) -> Status {
    let rt = runtime()?;
    if signal.is_null() || (num_consumers > 0 && consumers.is_null()) {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    if num_consumers as usize > rt.agents.len() * 4 {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    let ipc = attributes & u64::from(HSA_AMD_SIGNAL_IPC) != 0;
    let mut interrupt = !ipc && attributes & u64::from(HSA_AMD_SIGNAL_AMD_GPU_ONLY) == 0;
    if interrupt && num_consumers > 0 {
        // SAFETY: `num_consumers` agents by the API's contract (bounded above).
        let list = unsafe { std::slice::from_raw_parts(consumers, num_consumers as usize) };
        let mut indices = Vec::with_capacity(list.len());
        for &a in list {
            indices.push(agent_index(a, rt.agents.len())?);
        }
        let mut unique = indices.clone();
        unique.sort_unstable();
        unique.dedup();
        if unique.len() != indices.len() {
            return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
        }
        interrupt = indices.iter().any(|&i| rt.agents[i].gpu().is_none());
    }
    // ROCr's handle is the address of the signal's amd_signal_t, which device code uses (a
    // hostcall doorbell): the same here, and every GPU agent may reach those 64 bytes.
    // Interrupt signals get an event mailbox while the page has slots (past the driver's
    // limit, one without: its device-side updates then wake waiters at their next timeout).
    let event = if interrupt {
        let slot = rt.event_page.reserve();
        if slot.is_none() {
            tracing::debug!("event page full: an interrupt signal without a mailbox");
        }
        slot
    } else {
        None
    };
    // An IPC signal's block is a page other processes can map (ROCr allocates it with
    // `AllocateIPC`); its handle is that page's address.
    if ipc {
        let block = crate::ipc_signals::create_block(initial_value)?;
        let created = crate::ipc_signals::signal_over(&rt, &block)?;
        let handle = own(&rt, created, false, None, Some(block));
        // SAFETY: non-NULL out-pointer.
        return unsafe { put(signal.cast(), hsa_signal_t { handle }) };
    }
    let created = match event {
        Some((id, mailbox)) => {
            let created = rt
                .signals
                .create_addressed_with_mailbox(initial_value, mailbox, id);
            rt.event_page.bind(id, &created.signal);
            created
        }
        None => rt.signals.create_addressed(initial_value),
    };
    let handle = own(&rt, created, interrupt, event.map(|(id, _)| id), None);
    // SAFETY: non-NULL out-pointer.
    unsafe { put(signal.cast(), hsa_signal_t { handle }) }
}

fn find(handle: u64) -> Option<Arc<Signal>> {
    let rt = runtime().ok()?;
    let s = rt.signals.get(handle);
    if s.is_none() {
        tracing::debug!(handle, "unknown signal");
    }
    s
}

fn load(signal: hsa_signal_t) -> hsa_signal_value_t {
    guard_value(0, || find(signal.handle).map_or(0, |s| s.load()))
}

fn store(signal: hsa_signal_t, value: hsa_signal_value_t) {
    guard_value((), || {
        if let Some(s) = find(signal.handle) {
            s.store(value)
        }
    })
}

fn add(signal: hsa_signal_t, value: hsa_signal_value_t) {
    guard_value((), || {
        if let Some(s) = find(signal.handle) {
            s.add(value);
        }
    })
}

fn wait(
    signal: hsa_signal_t,
    condition: hsa_signal_condition_t,
    compare: hsa_signal_value_t,
    timeout_hint: u64,
) -> hsa_signal_value_t {
    guard_value(0, || {
        let Some(s) = find(signal.handle) else {
            return 0;
        };
        let Some(c) = condition_of(condition) else {
            return s.load();
        };
        let timeout = (timeout_hint != u64::MAX).then(|| Duration::from_nanos(timeout_hint));
        s.wait(c, compare, timeout).0
    })
}

hsa_api! {
    /// `hsa_signal_create`: a signal holding `initial_value`; consumers decide its kind (see
    /// the module documentation), they do not restrict who may wait on it.
    fn hsa_signal_create(initial_value: hsa_signal_value_t, num_consumers: u32, consumers: *const hsa_agent_t, signal: *mut hsa_signal_t) -> hsa_status_t {
        // SAFETY: the API's contract for the pointers.
        guard(|| unsafe { create(initial_value, num_consumers, consumers, 0, signal) })
    }

    /// `hsa_amd_signal_create`: as `hsa_signal_create`, with ROCr's attributes
    /// (`HSA_AMD_SIGNAL_AMD_GPU_ONLY`, `HSA_AMD_SIGNAL_IPC`: default signals).
    fn hsa_amd_signal_create(initial_value: hsa_signal_value_t, num_consumers: u32, consumers: *const hsa_agent_t, attributes: u64, signal: *mut hsa_signal_t) -> hsa_status_t {
        // SAFETY: the API's contract for the pointers.
        guard(|| unsafe { create(initial_value, num_consumers, consumers, attributes, signal) })
    }

    /// `hsa_amd_signal_value_pointer`: the address of a default signal's value; an interrupt
    /// signal is `INVALID_ARGUMENT`, as in ROCr (only busy-wait signals expose it).
    fn hsa_amd_signal_value_pointer(signal: hsa_signal_t, value_ptr: *mut *mut hsa_signal_value_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if value_ptr.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            let (interrupt, shared) = rt
                .owned_signals
                .lock()
                .get(&signal.handle)
                .map(|s| (s.interrupt, s.ipc.as_ref().map(|b| b.value_address())))
                .unzip();
            let s = rt.signals.get(signal.handle).ok_or(HSA_STATUS_ERROR_INVALID_SIGNAL)?;
            if interrupt != Some(false) {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            // An IPC signal's value is in its shared block.
            let address = match shared.flatten() {
                Some(a) => a as *const std::sync::atomic::AtomicI64,
                None => s.value_address().ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?,
            };
            // SAFETY: non-NULL out-pointer; the value lives as long as the signal.
            unsafe { put(value_ptr.cast(), address as *mut hsa_signal_value_t) }
        })
    }

    /// `hsa_amd_signal_async_handler`: runs `handler(value, arg)` on the runtime's handler
    /// thread once `condition` holds for `value`; again while it returns true. Interrupt
    /// signals only (`INVALID_SIGNAL` otherwise), as ROCr with interrupt waits.
    fn hsa_amd_signal_async_handler(signal: hsa_signal_t, cond: hsa_signal_condition_t, value: hsa_signal_value_t, handler: hsa_amd_signal_handler, arg: *mut c_void) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let handler = handler.ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let s = rt.signals.get(signal.handle).ok_or(HSA_STATUS_ERROR_INVALID_SIGNAL)?;
            let interrupt = rt.owned_signals.lock().get(&signal.handle).map(|s| s.interrupt);
            if interrupt != Some(true) {
                return Err(HSA_STATUS_ERROR_INVALID_SIGNAL);
            }
            let condition = condition_of(cond).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            rt.async_handlers.register(AsyncHandler { signal: s, condition, value, handler, arg: arg as usize })
        })
    }

    /// `hsa_signal_destroy`: only signals `hsa_signal_create` made.
    fn hsa_signal_destroy(signal: hsa_signal_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            let removed = rt.owned_signals.lock().remove(&signal.handle);
            let removed = removed.ok_or(HSA_STATUS_ERROR_INVALID_SIGNAL)?;
            if let Some(id) = removed.event {
                rt.event_page.release(id);
            }
            for agent in &rt.agents {
                if let Some((soft, _)) = agent.gpu() {
                    soft.allocations().remove(signal.handle, false);
                }
            }
            Ok(())
        })
    }

    /// `hsa_signal_load_scacquire`.
    fn hsa_signal_load_scacquire(signal: hsa_signal_t) -> hsa_signal_value_t { load(signal) }
    /// `hsa_signal_load_relaxed`.
    fn hsa_signal_load_relaxed(signal: hsa_signal_t) -> hsa_signal_value_t { load(signal) }
    /// `hsa_signal_load_acquire` (deprecated name).
    fn hsa_signal_load_acquire(signal: hsa_signal_t) -> hsa_signal_value_t { load(signal) }

    /// `hsa_signal_store_screlease`.
    fn hsa_signal_store_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { store(signal, value) }
    /// `hsa_signal_store_relaxed`.
    fn hsa_signal_store_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { store(signal, value) }
    /// `hsa_signal_store_release` (deprecated name).
    fn hsa_signal_store_release(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { store(signal, value) }
    /// `hsa_signal_silent_store_screlease`.
    fn hsa_signal_silent_store_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { store(signal, value) }
    /// `hsa_signal_silent_store_relaxed`.
    fn hsa_signal_silent_store_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { store(signal, value) }

    /// `hsa_signal_add_screlease`.
    fn hsa_signal_add_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value) }
    /// `hsa_signal_add_relaxed`.
    fn hsa_signal_add_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value) }
    /// `hsa_signal_add_scacq_screl`.
    fn hsa_signal_add_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value) }
    /// `hsa_signal_add_scacquire`.
    fn hsa_signal_add_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value) }
    /// `hsa_signal_subtract_screlease`.
    fn hsa_signal_subtract_screlease(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value.wrapping_neg()) }
    /// `hsa_signal_subtract_relaxed`.
    fn hsa_signal_subtract_relaxed(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value.wrapping_neg()) }
    /// `hsa_signal_subtract_scacq_screl`.
    fn hsa_signal_subtract_scacq_screl(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value.wrapping_neg()) }
    /// `hsa_signal_subtract_scacquire`.
    fn hsa_signal_subtract_scacquire(signal: hsa_signal_t, value: hsa_signal_value_t) -> () { add(signal, value.wrapping_neg()) }

    /// `hsa_signal_wait_scacquire`.
    fn hsa_signal_wait_scacquire(signal: hsa_signal_t, condition: hsa_signal_condition_t, compare_value: hsa_signal_value_t, timeout_hint: u64, wait_state_hint: hsa_wait_state_t) -> hsa_signal_value_t {
        let _ = wait_state_hint;
        wait(signal, condition, compare_value, timeout_hint)
    }
    /// `hsa_signal_wait_relaxed`.
    fn hsa_signal_wait_relaxed(signal: hsa_signal_t, condition: hsa_signal_condition_t, compare_value: hsa_signal_value_t, timeout_hint: u64, wait_state_hint: hsa_wait_state_t) -> hsa_signal_value_t {
        let _ = wait_state_hint;
        wait(signal, condition, compare_value, timeout_hint)
    }
    /// `hsa_signal_wait_acquire` (deprecated name).
    fn hsa_signal_wait_acquire(signal: hsa_signal_t, condition: hsa_signal_condition_t, compare_value: hsa_signal_value_t, timeout_hint: u64, wait_state_hint: hsa_wait_state_t) -> hsa_signal_value_t {
        let _ = wait_state_hint;
        wait(signal, condition, compare_value, timeout_hint)
    }
}
