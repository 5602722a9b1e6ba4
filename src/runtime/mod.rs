//! The runtime a HIP-style program uses: a registry of fat binaries, kernels and device
//! variables, loaded lazily per agent, a module API for code loaded at run time, device memory,
//! streams and events, and kernel launches on the devices that run code.
//!
//! What it is for:
//! - registration in O(1) (`__hipRegisterFatBinary` records a pointer; nothing is read, measured
//!   or inflated), which never fails hard: a bad fat binary is reported at its first use;
//! - first use of a fat binary on an agent (a kernel or variable lookup, a device-function
//!   lookup) selects, extracts, loads and links it exactly once, however many threads arrive
//!   together (one once-cell per fat binary and agent);
//! - entries of one compressed bundle needed by several agents are inflated once (see
//!   [`fat_binary`] for the policy);
//! - loaded code is owned through `Arc`s: unregistering a fat binary (e.g. at `dlclose`) drops
//!   the registry's reference, and code stays alive while any [`KernelRef`], [`Module`],
//!   dispatch in flight or C handle still uses it;
//! - launches ([`LaunchBuilder`], [`Runtime::launch`]) form real AQL packets and kernarg
//!   segments for the device's queues; memory ([`DeviceBuffer`], the memory table, stream-ordered
//!   pools: [`mempool`]) and streams ([`Stream`], [`Event`]) follow HIP's ordering rules; arrays
//!   ([`Array`]) and pitched and 3D copies are checked whole before anything is queued.
//!
//! What it is not: it holds no C types. The HIP C ABI over it is the `rocload-capi` crate
//! (`capi/`, built as `librocload.so`).
//!
//! Agents are `Arc<dyn Agent>`; device ordinal `i` is the `i`-th agent given to
//! [`Runtime::new`] (or device given to [`Runtime::with_devices`]). The process-wide runtime
//! ([`Runtime::global`]) uses the agents named by the environment ([`agents_from_env`]).

pub mod array;
pub mod attributes;
pub mod buffer;
pub mod capture;
pub mod config;
mod device;
mod error;
mod external;
pub mod fat_binary;
pub mod graph;
pub mod hostcall;
mod images;
mod ipc_event;
mod kernel;
mod launch;
mod memops;
mod memory;
pub mod mempool;
mod module;
mod multi_device;
pub mod occupancy;
mod options;
mod printf;
mod registry;
mod reset;
mod stats;
pub mod stream;
pub mod tools;
mod vmm;

pub use array::{
    Array, ArrayDescriptor, ArrayFlags, ArrayFormat, ArrayShape, ArrayView, CopyEnd, Extent, Level,
    Origin, RegionPlace,
};
pub use buffer::{DeviceBuffer, DeviceCopy};
pub use device::DeviceContext;
pub use error::{RuntimeError, RuntimeResult};
pub use external::{ExternalMemory, ExternalSemaphore};
pub use fat_binary::FatBinary;
pub use graph::{Graph, GraphError, GraphExec, Node, NodeKind, NodeOp};
pub use kernel::{KernelRef, LoadedFatBinary};
pub use launch::{
    ArgValue, DevicePtr, KernelArg, LaunchBuilder, LaunchConfig, LaunchConfigError,
    DYNAMIC_STACK_BYTES, MAX_BLOCK_SIZE, MAX_LDS,
};
pub use memops::{MemOp, WaitCondition};
pub use memory::PointerInfo;
pub use mempool::{MemPool, Pool, PoolAccess, PoolError};
pub use module::{FatBinaryHandle, Module};
pub use multi_device::{DeviceLaunch, MultiDeviceOrder, MAX_DEVICES};
pub use options::{Loading, RuntimeOptions};
pub use registry::{agents_from_env, Runtime};
pub use reset::DeviceReset;
pub use stats::{Stats, StatsSnapshot};
pub use stream::{Event, Stream, StreamKind};
pub use tools::{CodeObjectEvent, DispatchEvent, Tool, ToolId, ToolSymbol, Tools};
pub use vmm::{AllocationProps, HANDLE_TYPE_POSIX_FD};
