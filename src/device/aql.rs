//! AQL packets as the HSA specification and ROCr define them: the 64-byte kernel dispatch
//! packet a kernel's code reads through its dispatch pointer (code object v4 kernels take
//! their grid and work-group sizes from it), and the barrier-AND packet streams use to wait
//! for other queues. The layouts are hsa-sys's bindgen types (checked there against `hsa.h`);
//! this module builds and decodes packets, and nothing else.
//!
//! The runtime forms these packets for every backend: the software agent's queue processes
//! them itself, ROCr's queues take the same bytes.

use hsa_sys::{
    hsa_barrier_and_packet_t, hsa_kernel_dispatch_packet_t, hsa_signal_t, HSA_FENCE_SCOPE_SYSTEM,
    HSA_PACKET_HEADER_BARRIER, HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE,
    HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE, HSA_PACKET_HEADER_TYPE,
    HSA_PACKET_TYPE_AGENT_DISPATCH, HSA_PACKET_TYPE_BARRIER_AND, HSA_PACKET_TYPE_INVALID,
    HSA_PACKET_TYPE_KERNEL_DISPATCH,
};

/// Size of every AQL packet.
pub const PACKET_SIZE: usize = 64;

/// The kernel dispatch packet (`hsa_kernel_dispatch_packet_t`).
pub type DispatchPacket = hsa_kernel_dispatch_packet_t;
/// The barrier-AND packet (`hsa_barrier_and_packet_t`).
pub type BarrierAndPacket = hsa_barrier_and_packet_t;

const _: () = {
    assert!(std::mem::size_of::<DispatchPacket>() == PACKET_SIZE);
    assert!(std::mem::size_of::<BarrierAndPacket>() == PACKET_SIZE);
};

/// The packet types a queue processor understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketType {
    /// Not yet published (the producer is still writing it) or already consumed.
    Invalid,
    /// A kernel dispatch.
    KernelDispatch,
    /// Waits until up to five signals are 0.
    BarrierAnd,
    /// Work for the agent itself; the software queue runs host work (copies, callbacks) as it.
    AgentDispatch,
    /// Anything else (vendor-specific, agent dispatch, barrier-OR): refused.
    Other(u8),
}

/// A packet header: type, barrier bit, acquire and release fence scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header(pub u16);

impl Header {
    /// What clr writes for every packet: the barrier bit (a packet starts only after the
    /// previous one completed) and system-scope acquire and release fences.
    pub fn ordered(packet_type: u32) -> Header {
        let mut h = (packet_type as u16) << HSA_PACKET_HEADER_TYPE;
        h |= 1 << HSA_PACKET_HEADER_BARRIER;
        h |= (HSA_FENCE_SCOPE_SYSTEM as u16) << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE;
        h |= (HSA_FENCE_SCOPE_SYSTEM as u16) << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
        Header(h)
    }

    /// The header of a packet being written: type INVALID, so a processor does not take it.
    pub fn invalid() -> Header {
        Header((HSA_PACKET_TYPE_INVALID as u16) << HSA_PACKET_HEADER_TYPE)
    }

    /// The packet type.
    pub fn packet_type(self) -> PacketType {
        match u32::from(self.0 & 0xff) {
            HSA_PACKET_TYPE_INVALID => PacketType::Invalid,
            HSA_PACKET_TYPE_KERNEL_DISPATCH => PacketType::KernelDispatch,
            HSA_PACKET_TYPE_BARRIER_AND => PacketType::BarrierAnd,
            HSA_PACKET_TYPE_AGENT_DISPATCH => PacketType::AgentDispatch,
            other => PacketType::Other(other as u8),
        }
    }

    /// Whether the barrier bit is set.
    pub fn barrier(self) -> bool {
        self.0 & (1 << HSA_PACKET_HEADER_BARRIER) != 0
    }
}

/// What a kernel dispatch needs, in HIP's terms (grid in work-groups).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchGeometry {
    /// Whole work-groups in each dimension (`gridDim` for HIP's whole-group grids).
    pub grid: [u32; 3],
    /// Work-items per work-group in each dimension (`blockDim`).
    pub block: [u32; 3],
    /// Work-items of a last, partial work-group in each dimension (0: none). Only launches by
    /// global size (`hipExtModuleLaunchKernel`) have them; the device library counts the
    /// groups as `grid + (remainder != 0)` and sizes the last one from `hidden_remainder_*`.
    pub remainder: [u32; 3],
}

impl DispatchGeometry {
    /// The number of dimensions clr reports (`hidden_grid_dims`, the packet's setup field):
    /// 3 if z is used, else 2 if y is used, else 1.
    pub fn dims(&self) -> u16 {
        if self.grid[2] > 1 || self.block[2] > 1 {
            3
        } else if self.grid[1] > 1 || self.block[1] > 1 {
            2
        } else {
            1
        }
    }

    /// Work-items in each dimension (`grid_size_*` of the packet).
    pub fn grid_size(&self) -> Option<[u32; 3]> {
        let items = |d: usize| {
            self.grid[d]
                .checked_mul(self.block[d])?
                .checked_add(self.remainder[d])
        };
        Some([items(0)?, items(1)?, items(2)?])
    }

    /// Work-items per work-group.
    pub fn block_size(&self) -> u64 {
        self.block.iter().map(|&b| u64::from(b)).product()
    }

    /// Work-groups in the grid, partial ones included (up to (2^32)^3, so a `u128`).
    pub fn block_count(&self) -> u128 {
        (0..3)
            .map(|d| u128::from(self.grid[d]) + u128::from(self.remainder[d] != 0))
            .product()
    }
}

/// The fields of a kernel dispatch packet besides the header.
#[derive(Debug, Clone, Copy)]
pub struct DispatchFields {
    /// Grid and work-group sizes.
    pub geometry: DispatchGeometry,
    /// Scratch bytes per work-item.
    pub private_segment_size: u32,
    /// LDS bytes per work-group: static plus dynamic.
    pub group_segment_size: u32,
    /// Address of the kernel descriptor.
    pub kernel_object: u64,
    /// Address of the kernarg segment.
    pub kernarg_address: u64,
    /// Signal decremented when the dispatch completes (0: none).
    pub completion_signal: u64,
}

/// A dispatch packet with an INVALID header, to be published with [`publish_header`].
///
/// # Panics
/// Never: sizes are checked by the caller ([`DispatchGeometry::grid_size`] must be `Some`);
/// an overflow here yields 0, which a queue processor refuses.
pub fn dispatch_packet(fields: &DispatchFields) -> DispatchPacket {
    let g = &fields.geometry;
    let grid = g.grid_size().unwrap_or([0; 3]);
    DispatchPacket {
        header: Header::invalid().0,
        setup: g.dims(),
        workgroup_size_x: g.block[0].min(u32::from(u16::MAX)) as u16,
        workgroup_size_y: g.block[1].min(u32::from(u16::MAX)) as u16,
        workgroup_size_z: g.block[2].min(u32::from(u16::MAX)) as u16,
        reserved0: 0,
        grid_size_x: grid[0],
        grid_size_y: grid[1],
        grid_size_z: grid[2],
        private_segment_size: fields.private_segment_size,
        group_segment_size: fields.group_segment_size,
        kernel_object: fields.kernel_object,
        kernarg_address: fields.kernarg_address as *mut std::ffi::c_void,
        reserved2: 0,
        completion_signal: hsa_signal_t {
            handle: fields.completion_signal,
        },
    }
}

/// A barrier-AND packet with an INVALID header that waits for `deps` (at most five; zero
/// handles are ignored) and then decrements `completion_signal`.
pub fn barrier_and_packet(deps: &[u64], completion_signal: u64) -> BarrierAndPacket {
    let mut dep_signal = [hsa_signal_t { handle: 0 }; 5];
    for (slot, &d) in dep_signal.iter_mut().zip(deps) {
        slot.handle = d;
    }
    BarrierAndPacket {
        header: Header::invalid().0,
        reserved0: 0,
        reserved1: 0,
        dep_signal,
        reserved2: 0,
        completion_signal: hsa_signal_t {
            handle: completion_signal,
        },
    }
}

/// An agent-dispatch packet (`hsa_agent_dispatch_packet_t` layout: header, type, reserved,
/// return address, four arguments, reserved, completion signal) with an INVALID header:
/// `work_type` says what the agent does (the software queue runs host work with it).
pub fn agent_dispatch_packet(work_type: u16, completion_signal: u64) -> [u8; PACKET_SIZE] {
    let mut p = [0u8; PACKET_SIZE];
    p[0..2].copy_from_slice(&Header::invalid().0.to_le_bytes());
    p[2..4].copy_from_slice(&work_type.to_le_bytes());
    p[56..64].copy_from_slice(&completion_signal.to_le_bytes());
    p
}

/// The first 32 bits of a packet as the producer publishes them last, in one release store:
/// header in the low half, setup (a dispatch's dimensions, 0 for a barrier) in the high half.
pub fn header_word(header: Header, setup: u16) -> u32 {
    u32::from(header.0) | (u32::from(setup) << 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_encode_as_clr_writes_them() {
        let h = Header::ordered(HSA_PACKET_TYPE_KERNEL_DISPATCH);
        // type 2, barrier bit 8, acquire scope system (2) at 9, release scope system at 11.
        assert_eq!(h.0, 2 | 1 << 8 | 2 << 9 | 2 << 11);
        assert_eq!(h.packet_type(), PacketType::KernelDispatch);
        assert!(h.barrier());
        assert_eq!(Header::invalid().packet_type(), PacketType::Invalid);
        assert_eq!(
            Header::ordered(HSA_PACKET_TYPE_BARRIER_AND).packet_type(),
            PacketType::BarrierAnd
        );
    }

    #[test]
    fn dispatch_packets_carry_work_items_not_blocks() {
        let geometry = DispatchGeometry {
            grid: [4, 3, 1],
            block: [64, 2, 1],
            remainder: [0; 3],
        };
        let p = dispatch_packet(&DispatchFields {
            geometry,
            private_segment_size: 16,
            group_segment_size: 1024,
            kernel_object: 0x1000,
            kernarg_address: 0x2000,
            completion_signal: 7,
        });
        assert_eq!(p.header, Header::invalid().0);
        assert_eq!(p.setup, 2);
        assert_eq!((p.grid_size_x, p.grid_size_y, p.grid_size_z), (256, 6, 1));
        assert_eq!(
            (p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z),
            (64, 2, 1)
        );
        assert_eq!(p.kernarg_address as u64, 0x2000);
        assert_eq!(p.completion_signal.handle, 7);
        assert_eq!(header_word(Header(0x1502), 2), 0x0002_1502);
    }
}
