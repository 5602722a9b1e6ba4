//! Launches across devices (`hipLaunchCooperativeKernelMultiDevice`,
//! `hipExtLaunchMultiKernelMultiDevice`): one kernel per device, each on a stream of its own
//! device, ordered with the other streams of the list before and after unless the caller says
//! not to.
//!
//! A multi-device cooperative launch also lets the grids sync with each other
//! (`multi_grid_group::sync()`): the device library's `__ockl_multi_grid_sync` reads, through
//! `hidden_multigrid_sync_arg`, a record per grid `{ u32* counter, u32 grid rank, u32 grids,
//! u64 work-items of the grids before, u64 work-items of all grids }` and counts arrivals at a
//! counter shared by every grid (low 8 bits: arrivals; each completed sync adds 256). Both live
//! in one pinned host allocation, which every device's table holds, made per launch and freed
//! once every grid has ended.

use std::sync::Arc;

use super::device::DeviceContext;
use super::launch::{self, Cooperation};
use super::{Event, KernelRef, LaunchConfig, Runtime, RuntimeError, RuntimeResult, Stream};
use crate::device::{ExplicitArgs, MemoryKind};

/// One device's part of a multi-device launch.
pub struct DeviceLaunch<'a> {
    /// The kernel, loaded on the stream's device.
    pub kernel: KernelRef,
    /// Its grid, block and dynamic LDS.
    pub config: LaunchConfig,
    /// Its arguments.
    pub args: ExplicitArgs<'a>,
    /// The stream it goes to (one device per launch).
    pub stream: Stream,
}

/// How a multi-device launch is ordered with the work around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MultiDeviceOrder {
    /// Each kernel waits for the work already queued on every stream of the list (HIP's
    /// default; `hipCooperativeLaunchMultiDeviceNoPreSync` turns it off).
    pub wait_before: bool,
    /// Work queued later on any stream of the list waits for every kernel (HIP's default;
    /// `hipCooperativeLaunchMultiDeviceNoPostSync` turns it off).
    pub wait_after: bool,
}

/// Bytes of one grid's multi-grid record, and where the first one starts (after the counter,
/// on its own cache line).
const RECORD_BYTES: u64 = 32;
const RECORDS_START: u64 = 64;

/// The most devices one launch may span (the counter's low 8 bits count arrivals).
pub const MAX_DEVICES: usize = 255;

/// The pinned allocation holding the counter and the records; freed when the last grid that
/// holds it ends (the dispatch epochs keep it from the host allocator while any dispatch that
/// began before runs).
struct SyncMemory {
    address: u64,
    owner: Arc<DeviceContext>,
    others: Vec<Arc<DeviceContext>>,
}

impl Drop for SyncMemory {
    fn drop(&mut self) {
        for ctx in &self.others {
            ctx.device().allocations().remove(self.address, true);
        }
        if let Err(e) = self.owner.device().free(self.address) {
            tracing::warn!(address = self.address, error = %e, "freeing a multi-grid sync record");
        }
    }
}

impl Runtime {
    /// Launches one kernel per device (`hipExtLaunchMultiKernelMultiDevice`; with
    /// `cooperative`, `hipLaunchCooperativeKernelMultiDevice`: every grid must fit on its
    /// device at once, and the grids may sync with each other). Everything is checked before
    /// anything is submitted.
    ///
    /// # Errors
    /// [`RuntimeError::MultiDevice`] for an empty list, more than [`MAX_DEVICES`] launches or
    /// two launches on one device; [`RuntimeError::CooperativeLaunchTooLarge`]; then as
    /// [`Runtime::launch`].
    pub fn launch_multi_device(
        &self,
        launches: Vec<DeviceLaunch<'_>>,
        cooperative: bool,
        order: MultiDeviceOrder,
    ) -> RuntimeResult<()> {
        if launches.is_empty() || launches.len() > MAX_DEVICES {
            return Err(RuntimeError::MultiDevice {
                reason: format!("{} launches (1 to {MAX_DEVICES} devices)", launches.len()),
            });
        }
        let mut devices = Vec::with_capacity(launches.len());
        for (i, l) in launches.iter().enumerate() {
            let device = l.stream.device_index()?;
            if let Some(j) = devices.iter().position(|&d| d == device) {
                return Err(RuntimeError::MultiDevice {
                    reason: format!("launches {j} and {i} are both on device {device}"),
                });
            }
            devices.push(device);
            if cooperative {
                super::launch::check_cooperative(&*l.stream.context()?, &l.kernel, &l.config)?;
            }
        }
        tracing::debug!(?devices, cooperative, ?order, "multi-device launch");
        let streams: Vec<Stream> = launches.iter().map(|l| l.stream.clone()).collect();
        if order.wait_before {
            order_after_all(&streams)?;
        }
        let sync = if cooperative {
            Some(self.multi_grid_records(&launches)?)
        } else {
            None
        };
        for (rank, l) in launches.into_iter().enumerate() {
            let cooperation = match &sync {
                Some(memory) => Cooperation::MultiGrid {
                    sync_arg: memory.address + RECORDS_START + rank as u64 * RECORD_BYTES,
                    keep: memory.clone(),
                },
                None => Cooperation::None,
            };
            launch::launch_with(&l.stream, &l.kernel, &l.config, l.args, cooperation)?;
        }
        if order.wait_after {
            order_after_all(&streams)?;
        }
        Ok(())
    }

    /// The counter and one record per grid, in pinned memory every device reaches.
    fn multi_grid_records(&self, launches: &[DeviceLaunch<'_>]) -> RuntimeResult<Arc<SyncMemory>> {
        let work_items: Vec<u64> = launches
            .iter()
            .map(|l| {
                (0..3)
                    .map(|d| {
                        u64::from(l.config.grid[d]) * u64::from(l.config.block[d])
                            + u64::from(l.config.partial[d])
                    })
                    .fold(1u64, u64::saturating_mul)
            })
            .collect();
        let all: u64 = work_items.iter().fold(0, |a, &w| a.saturating_add(w));
        let owner_index = launches[0].stream.device_index()?;
        let size = RECORDS_START + RECORD_BYTES * launches.len() as u64;
        let address = self.allocate(owner_index as i64, size, MemoryKind::PinnedHost)?;
        let owner = self.device(owner_index as i64)?.clone();
        let others = self
            .devices()
            .iter()
            .flatten()
            .filter(|c| c.index() != owner_index)
            .cloned()
            .collect();
        let memory = Arc::new(SyncMemory {
            address,
            owner,
            others,
        });
        let mut bytes = vec![0u8; size as usize];
        let mut before = 0u64;
        for (rank, items) in work_items.iter().enumerate() {
            let at = (RECORDS_START + rank as u64 * RECORD_BYTES) as usize;
            bytes[at..at + 8].copy_from_slice(&address.to_le_bytes());
            bytes[at + 8..at + 12].copy_from_slice(&(rank as u32).to_le_bytes());
            bytes[at + 12..at + 16].copy_from_slice(&(launches.len() as u32).to_le_bytes());
            bytes[at + 16..at + 24].copy_from_slice(&before.to_le_bytes());
            bytes[at + 24..at + 32].copy_from_slice(&all.to_le_bytes());
            before = before.saturating_add(*items);
        }
        let ctx = &memory.owner;
        // SAFETY: the destination is the fresh allocation of `size` bytes (checked by the
        // device); the source is `bytes`, a live buffer of that length.
        unsafe { ctx.device().copy(address, bytes.as_ptr() as u64, size) }
            .map_err(|e| ctx.error("writing multi-grid sync records", e))?;
        Ok(memory)
    }
}

/// Makes every stream of `streams` wait for what every other one has queued so far.
fn order_after_all(streams: &[Stream]) -> RuntimeResult<()> {
    let events: Vec<Event> = streams
        .iter()
        .map(|s| {
            let e = Event::new(false);
            e.record(s).map(|()| e)
        })
        .collect::<RuntimeResult<_>>()?;
    for (i, s) in streams.iter().enumerate() {
        for (j, e) in events.iter().enumerate() {
            if i != j {
                e.make_wait(s)?;
            }
        }
    }
    Ok(())
}
