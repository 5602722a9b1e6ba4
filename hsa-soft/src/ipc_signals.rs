//! IPC signals (`hsa_amd_signal_create` with `HSA_AMD_SIGNAL_IPC`, `hsa_amd_ipc_signal_create`,
//! `hsa_amd_ipc_signal_attach`), as ROCr 5.2.3 and 6.2 make them (`core/runtime/ipc_signal.cpp`,
//! `core/inc/signal.h`): the signal's ABI block lives in a page of memory other processes can
//! map, and its handle is the address of the block's `amd_signal_t`. The block follows ROCr's
//! `SharedSignal` layout where it matters: the `amd_signal_t` (kind, value) first, the
//! `core_signal` word at 72 left 0 (what marks a block as IPC), and ROCr's identity word at 80,
//! which an attach checks before it trusts the page.
//!
//! The IPC handle (`hsa_amd_ipc_signal_t`, 32 bytes) is an IPC memory handle of that page, in
//! the layout `hsa_amd_ipc_memory_create` gives (the owning process and descriptor of the
//! memory object, its token, the offset 0 and the size of the page), so
//! `hsa_amd_ipc_memory_attach` maps it too, as in ROCr, where the signal handle is the IPC
//! handle of its 4 KiB block. Attaching maps the page again, at another address in the same
//! process, and the new signal shares its value.
//!
//! IPC signals are busy-wait signals (ROCr's `IPCSignal` is a `BusyWaitSignal`): no process
//! can wake another's waiters, so a wait polls the shared value, yielding first and then
//! sleeping a little longer each time (at most 1 ms between looks).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hsa_sys::*;
use rocload::device::shared::{page_size, Mapping, MemoryObject};
use rocload::device::vmm::{IpcBackend, IpcHandle, IpcKind, RemoteObject};
use rocload::device::{Condition, Signal, SignalBackend};

use crate::runtime::{runtime, Runtime};
use crate::util::{guard, put, Status};

/// Offsets in the block (ROCr's `SharedSignal`).
const KIND: u64 = 0;
const VALUE: u64 = 8;
const CORE_SIGNAL: u64 = 72;
const ID: u64 = 80;
/// ROCr's `Check<0x71FCCA6A3D5D5276>` identity of a shared signal block.
const SHARED_SIGNAL_ID: u64 = 0x71FC_CA6A_3D5D_5276;
/// `AMD_SIGNAL_KIND_USER`.
const KIND_USER: i64 = 1;

/// Payload offsets of the handle (the software agent's IPC memory payload).
const FD_OFFSET: usize = 16;
const SIZE: usize = 24;
/// Bytes of `hsa_amd_ipc_signal_t`.
const HANDLE_BYTES: usize = 32;

/// How long a waiter yields before it starts sleeping, and its longest sleep.
const SPIN: Duration = Duration::from_micros(50);
const LONGEST_SLEEP: Duration = Duration::from_millis(1);

/// One page of a memory object holding an IPC signal's block, mapped in this process.
#[derive(Debug)]
pub(crate) struct SharedBlock {
    object: MemoryObject,
    mapping: Mapping,
}

impl SharedBlock {
    /// The address of the block's `amd_signal_t`: the signal's handle.
    pub(crate) fn handle(&self) -> u64 {
        self.mapping.base()
    }

    fn word(&self, offset: u64) -> &AtomicI64 {
        // SAFETY: the mapping is a whole page, live as long as `self`, page-aligned, so every
        // 8-byte offset below 4096 is an aligned i64 inside it; other processes touch it only
        // through atomics too.
        unsafe { AtomicI64::from_ptr((self.mapping.base() + offset) as *mut i64) }
    }

    /// The value's address (`hsa_amd_signal_value_pointer`).
    pub(crate) fn value_address(&self) -> u64 {
        self.mapping.base() + VALUE
    }

    /// The IPC handle naming the page (see the module documentation).
    fn ipc_handle(&self) -> Status<hsa_amd_ipc_signal_t> {
        use std::os::fd::AsRawFd;
        let mut h = IpcHandle::new(IpcKind::Memory, IpcBackend::Soft);
        RemoteObject {
            pid: std::process::id(),
            fd: self.object.fd().as_raw_fd(),
            token: self.object.token(),
        }
        .put(&mut h);
        h.put_u64(FD_OFFSET, 0);
        h.put_u64(SIZE, self.object.size());
        let mut out = hsa_amd_ipc_memory_t { handle: [0; 8] };
        for (i, w) in out.handle.iter_mut().enumerate() {
            let b = h.bytes_at(4 * i, 4);
            *w = u32::from_le_bytes(b.try_into().map_err(|_| HSA_STATUS_ERROR)?);
        }
        Ok(out)
    }
}

/// A new block holding `initial`.
pub(crate) fn create_block(initial: i64) -> Status<Arc<SharedBlock>> {
    let object = MemoryObject::create(page_size()).map_err(|e| {
        tracing::debug!(error = %e, "no memory object for an IPC signal");
        HSA_STATUS_ERROR_OUT_OF_RESOURCES
    })?;
    let mapping = object.map(0, page_size()).map_err(|e| {
        tracing::debug!(error = %e, "an IPC signal's page cannot be mapped");
        HSA_STATUS_ERROR_OUT_OF_RESOURCES
    })?;
    let block = SharedBlock { object, mapping };
    block.word(KIND).store(KIND_USER, Ordering::Relaxed);
    block.word(VALUE).store(initial, Ordering::Relaxed);
    block.word(CORE_SIGNAL).store(0, Ordering::Relaxed);
    block
        .word(ID)
        .store(SHARED_SIGNAL_ID as i64, Ordering::Release);
    Ok(Arc::new(block))
}

/// Maps the block an IPC handle names and checks it is a shared signal block
/// (`SharedMemorySignal`: `INVALID_ARGUMENT` otherwise).
fn attach_block(handle: &hsa_amd_ipc_signal_t) -> Status<Arc<SharedBlock>> {
    let mut payload = [0u8; HANDLE_BYTES];
    for (i, w) in handle.handle.iter().enumerate() {
        payload[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    let mut h = IpcHandle::new(IpcKind::Memory, IpcBackend::Soft);
    h.put_bytes(0, &payload);
    let remote = RemoteObject::read(&h);
    let page = page_size();
    if h.u64_at(FD_OFFSET) != 0 || h.u64_at(SIZE) != page {
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    let object = MemoryObject::open_remote(remote.pid, remote.fd, remote.token).map_err(|e| {
        tracing::debug!(error = %e, "IPC signal handle names nothing this process can open");
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    })?;
    let mapping = object.map(0, page).map_err(|e| {
        tracing::debug!(error = %e, "an IPC signal's page cannot be mapped");
        HSA_STATUS_ERROR_INVALID_ARGUMENT
    })?;
    let block = SharedBlock { object, mapping };
    let valid = block.word(ID).load(Ordering::Acquire) as u64 == SHARED_SIGNAL_ID
        && block.word(CORE_SIGNAL).load(Ordering::Relaxed) == 0;
    if !valid {
        tracing::debug!("IPC memory does not hold an IPC signal block");
        return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    }
    Ok(Arc::new(block))
}

/// The signal's value in the shared block: what every process's loads, stores and waits use.
#[derive(Debug)]
struct SharedValue(Arc<SharedBlock>);

impl SignalBackend for SharedValue {
    fn load(&self) -> i64 {
        self.0.word(VALUE).load(Ordering::Acquire)
    }

    fn store(&self, value: i64) {
        self.0.word(VALUE).store(value, Ordering::Release);
    }

    fn add(&self, n: i64) -> i64 {
        self.0
            .word(VALUE)
            .fetch_add(n, Ordering::AcqRel)
            .wrapping_add(n)
    }

    fn wait(&self, condition: Condition, compare: i64, timeout: Option<Duration>) -> (i64, bool) {
        let start = Instant::now();
        let mut sleep = Duration::from_micros(10);
        loop {
            let value = self.load();
            if condition.holds(value, compare) {
                return (value, true);
            }
            let elapsed = start.elapsed();
            if timeout.is_some_and(|t| elapsed >= t) {
                return (value, false);
            }
            if elapsed < SPIN {
                std::thread::yield_now();
                continue;
            }
            let nap = timeout.map_or(sleep, |t| sleep.min(t.saturating_sub(elapsed)));
            std::thread::sleep(nap);
            sleep = (sleep * 2).min(LONGEST_SLEEP);
        }
    }
}

/// A signal whose value is `block`'s, entered in the runtime's table under the block's
/// address.
pub(crate) fn signal_over(
    rt: &Runtime,
    block: &Arc<SharedBlock>,
) -> Status<rocload::device::SignalHandle> {
    let signal = Signal::external(Box::new(SharedValue(block.clone())));
    rt.signals
        .insert_at(block.handle(), signal)
        .ok_or(HSA_STATUS_ERROR_OUT_OF_RESOURCES)
}

hsa_api! {
    /// `hsa_amd_ipc_signal_create`: the IPC handle of an IPC signal (made with
    /// `HSA_AMD_SIGNAL_IPC`); another signal is `INVALID_ARGUMENT`.
    fn hsa_amd_ipc_signal_create(signal: hsa_signal_t, handle: *mut hsa_amd_ipc_signal_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if handle.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            rt.signals.get(signal.handle).ok_or(HSA_STATUS_ERROR_INVALID_SIGNAL)?;
            let block = crate::signals::ipc_block(&rt, signal.handle).ok_or(HSA_STATUS_ERROR_INVALID_ARGUMENT)?;
            let out = block.ipc_handle()?;
            // SAFETY: non-NULL out-pointer to a hsa_amd_ipc_signal_t.
            unsafe { put(handle.cast(), out) }
        })
    }

    /// `hsa_amd_ipc_signal_attach`: a signal of this process over the IPC signal a handle
    /// names (another process's, or this one's); destroyed with `hsa_signal_destroy`.
    fn hsa_amd_ipc_signal_attach(handle: *const hsa_amd_ipc_signal_t, signal: *mut hsa_signal_t) -> hsa_status_t {
        guard(|| {
            let rt = runtime()?;
            if handle.is_null() || signal.is_null() {
                return Err(HSA_STATUS_ERROR_INVALID_ARGUMENT);
            }
            // SAFETY: the caller's 32-byte handle.
            let raw = unsafe { std::ptr::read_unaligned(handle) };
            let block = attach_block(&raw)?;
            let created = signal_over(&rt, &block)?;
            let h = crate::signals::own(&rt, created, false, None, Some(block));
            // SAFETY: non-NULL out-pointer.
            unsafe { put(signal.cast(), hsa_signal_t { handle: h }) }
        })
    }
}
