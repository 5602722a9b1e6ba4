//! Kernel argument segments, laid out from the kernel's metadata: explicit arguments at their
//! `.offset` with their `.size`, hidden arguments filled by `.value_kind` (code object v5's
//! block counts, group sizes, remainders, grid dimensions, dynamic LDS size, hostcall buffer,
//! heap, queue pointer, apertures; v4's global offsets and hostcall buffer). Offsets always come
//! from the metadata, never from a table of where a compiler usually puts them.
//!
//! Pure: bytes in, bytes out. A launch whose arguments do not match the metadata is refused with
//! a [`KernargError`] before anything is submitted. Not for allocating the segment (the device
//! does) or for typed Rust arguments (the launch builder checks those against the same layout).

use crate::code_object::{KernelArgInfo, KernelInfo};

use super::aql::DispatchGeometry;

/// The explicit arguments of a launch, in one of HIP's three forms.
#[derive(Debug, Clone, Copy)]
pub enum ExplicitArgs<'a> {
    /// One value per explicit argument, in order (`void** args` of `hipLaunchKernel` and the
    /// `kernelParams` of `hipModuleLaunchKernel`, after the caller's pointers were read with
    /// each argument's metadata size).
    Values(&'a [&'a [u8]]),
    /// A buffer already laid out at the metadata offsets (the `extra` form of
    /// `hipModuleLaunchKernel`): copied to the start of the segment.
    Packed(&'a [u8]),
}

/// What the runtime supplies for hidden arguments.
#[derive(Debug, Clone, Copy, Default)]
pub struct HiddenValues {
    /// Work-groups and work-group sizes.
    pub geometry: Option<DispatchGeometry>,
    /// Dynamic LDS bytes of this launch.
    pub dynamic_lds_size: u32,
    /// `hidden_hostcall_buffer` (device `printf` in clang-19's HIP).
    pub hostcall_buffer: u64,
    /// `hidden_heap_v1` (device `malloc`).
    pub heap: u64,
    /// `hidden_queue_ptr`: the `hsa_queue_t` the dispatch was submitted to.
    pub queue_ptr: u64,
    /// `hidden_private_base`: high 32 bits of the private aperture.
    pub private_base: u32,
    /// `hidden_shared_base`: high 32 bits of the shared (LDS) aperture.
    pub shared_base: u32,
    /// `hidden_multigrid_sync_arg` (cooperative launches; 0 otherwise).
    pub multigrid_sync_arg: u64,
}

/// A launch whose arguments do not fit the kernel.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KernargError {
    /// The code object has no argument metadata for the kernel, so nothing can be placed.
    #[error("kernel {kernel}: no argument metadata; pass a packed argument buffer")]
    NoMetadata {
        /// The kernel.
        kernel: String,
    },
    /// Not as many values as explicit arguments.
    #[error("kernel {kernel} takes {expected} explicit argument(s), {given} given")]
    Count {
        /// The kernel.
        kernel: String,
        /// Explicit arguments in the metadata.
        expected: usize,
        /// Values given.
        given: usize,
    },
    /// A value of the wrong size.
    #[error("kernel {kernel}: argument {index} ({name}) is {expected} bytes, {given} given")]
    Size {
        /// The kernel.
        kernel: String,
        /// Position among the explicit arguments.
        index: usize,
        /// Its name in the metadata, or `?`.
        name: String,
        /// Size in the metadata.
        expected: u64,
        /// Size given.
        given: u64,
    },
    /// A typed value whose alignment the argument's offset does not honour.
    #[error("kernel {kernel}: argument {index} ({name}) sits at offset {offset}, not aligned for a {alignment}-byte-aligned value")]
    Misaligned {
        /// The kernel.
        kernel: String,
        /// Position among the explicit arguments.
        index: usize,
        /// Its name in the metadata, or `?`.
        name: String,
        /// Its offset in the segment.
        offset: u64,
        /// The alignment of the value given.
        alignment: u64,
    },
    /// A plain value given for a device-pointer argument.
    #[error("kernel {kernel}: argument {index} ({name}) is a device pointer; pass a DeviceBuffer or DevicePtr")]
    PointerExpected {
        /// The kernel.
        kernel: String,
        /// Position among the explicit arguments.
        index: usize,
        /// Its name in the metadata, or `?`.
        name: String,
    },
    /// A device pointer given for an argument passed by value.
    #[error("kernel {kernel}: argument {index} ({name}) is a {value_kind} value, not a pointer")]
    ValueExpected {
        /// The kernel.
        kernel: String,
        /// Position among the explicit arguments.
        index: usize,
        /// Its name in the metadata, or `?`.
        name: String,
        /// Its value kind in the metadata.
        value_kind: String,
    },
    /// A packed buffer shorter than the explicit arguments, or longer than the segment.
    #[error("kernel {kernel}: packed arguments are {given} bytes, the explicit arguments need {needed} (segment {segment})")]
    PackedSize {
        /// The kernel.
        kernel: String,
        /// Bytes given.
        given: usize,
        /// End of the last explicit argument.
        needed: u64,
        /// The segment's size.
        segment: u64,
    },
    /// An argument that lies outside the kernarg segment the metadata declares.
    #[error("kernel {kernel}: argument at offset {offset} size {size} lies outside the {segment}-byte segment")]
    OutOfSegment {
        /// The kernel.
        kernel: String,
        /// Its offset.
        offset: u64,
        /// Its size.
        size: u64,
        /// The segment's size.
        segment: u64,
    },
    /// A segment larger than any kernel can have (the hardware limit is 4 KiB on older
    /// processors; code object metadata allows more, rocload caps at 1 MiB).
    #[error("kernel {kernel}: kernarg segment of {size} bytes is larger than {limit}")]
    TooLarge {
        /// The kernel.
        kernel: String,
        /// Its declared size.
        size: u64,
        /// The cap.
        limit: u64,
    },
}

/// Largest kernarg segment accepted.
pub const MAX_KERNARG_SIZE: u64 = 1 << 20;

/// The explicit (caller-supplied) arguments of `kernel`, in order.
pub fn explicit_args(kernel: &KernelInfo) -> impl Iterator<Item = &KernelArgInfo> {
    kernel.args.iter().filter(|a| !a.is_hidden())
}

/// Size of the segment to allocate for `kernel`: its declared kernarg size, at least the end of
/// every argument, at least 16 bytes (so a pointer to it is never to an empty allocation).
pub fn segment_size(kernel: &KernelInfo) -> Result<u64, KernargError> {
    let end = kernel
        .args
        .iter()
        .map(|a| a.offset.saturating_add(a.size))
        .max()
        .unwrap_or(0);
    let size = kernel.kernarg_segment_size.max(end).max(16);
    if size > MAX_KERNARG_SIZE {
        return Err(KernargError::TooLarge {
            kernel: kernel.name.clone(),
            size,
            limit: MAX_KERNARG_SIZE,
        });
    }
    Ok(size)
}

/// Lays out the kernarg segment of one launch of `kernel`.
///
/// # Errors
/// A [`KernargError`] naming what does not match the metadata.
pub fn pack(
    kernel: &KernelInfo,
    explicit: ExplicitArgs<'_>,
    hidden: &HiddenValues,
) -> Result<Vec<u8>, KernargError> {
    let size = segment_size(kernel)?;
    // Bounded by MAX_KERNARG_SIZE above.
    let mut segment = vec![0u8; size as usize];
    let place = |segment: &mut [u8], arg: &KernelArgInfo, bytes: &[u8]| {
        let out_of_segment = || KernargError::OutOfSegment {
            kernel: kernel.name.clone(),
            offset: arg.offset,
            size: arg.size,
            segment: size,
        };
        let start = usize::try_from(arg.offset).map_err(|_| out_of_segment())?;
        let end = start.checked_add(bytes.len()).ok_or_else(out_of_segment)?;
        segment
            .get_mut(start..end)
            .ok_or_else(out_of_segment)?
            .copy_from_slice(bytes);
        Ok(())
    };
    match explicit {
        ExplicitArgs::Values(values) => {
            if !kernel.from_metadata {
                return Err(KernargError::NoMetadata {
                    kernel: kernel.name.clone(),
                });
            }
            let args: Vec<&KernelArgInfo> = explicit_args(kernel).collect();
            if args.len() != values.len() {
                return Err(KernargError::Count {
                    kernel: kernel.name.clone(),
                    expected: args.len(),
                    given: values.len(),
                });
            }
            for (index, (arg, value)) in args.iter().zip(values).enumerate() {
                if value.len() as u64 != arg.size {
                    return Err(KernargError::Size {
                        kernel: kernel.name.clone(),
                        index,
                        name: arg.name.clone().unwrap_or_else(|| "?".into()),
                        expected: arg.size,
                        given: value.len() as u64,
                    });
                }
                place(&mut segment, arg, value)?;
            }
        }
        ExplicitArgs::Packed(bytes) => {
            let needed = kernel.explicit_args_size();
            if (bytes.len() as u64) < needed || bytes.len() as u64 > size {
                return Err(KernargError::PackedSize {
                    kernel: kernel.name.clone(),
                    given: bytes.len(),
                    needed,
                    segment: size,
                });
            }
            segment[..bytes.len()].copy_from_slice(bytes);
        }
    }
    for arg in kernel.args.iter().filter(|a| a.is_hidden()) {
        if let Some(value) = hidden_value(arg, hidden) {
            let bytes = value.to_le_bytes();
            let width = (arg.size as usize).min(8);
            place(&mut segment, arg, &bytes[..width])?;
        }
    }
    Ok(segment)
}

/// The value of one hidden argument, `None` for kinds left at zero (global offsets, default
/// queue, completion action, and kinds this runtime does not know, which are logged).
fn hidden_value(arg: &KernelArgInfo, h: &HiddenValues) -> Option<u64> {
    let g = h.geometry;
    let axis = |name: &str| match name.as_bytes().last() {
        Some(b'x') => Some(0),
        Some(b'y') => Some(1),
        Some(b'z') => Some(2),
        _ => None,
    };
    let kind = arg.value_kind.as_str();
    let value = match kind {
        k if k.starts_with("hidden_block_count_") => u64::from(g?.grid[axis(k)?]),
        k if k.starts_with("hidden_group_size_") => u64::from(g?.block[axis(k)?]),
        k if k.starts_with("hidden_remainder_") => u64::from(g?.remainder[axis(k)?]),
        k if k.starts_with("hidden_global_offset_") => 0,
        "hidden_grid_dims" => u64::from(g?.dims()),
        "hidden_dynamic_lds_size" => u64::from(h.dynamic_lds_size),
        "hidden_hostcall_buffer" => h.hostcall_buffer,
        "hidden_heap_v1" => h.heap,
        "hidden_queue_ptr" => h.queue_ptr,
        "hidden_private_base" => u64::from(h.private_base),
        "hidden_shared_base" => u64::from(h.shared_base),
        "hidden_multigrid_sync_arg" => h.multigrid_sync_arg,
        "hidden_none" | "hidden_default_queue" | "hidden_completion_action" => 0,
        "hidden_printf_buffer" => {
            tracing::debug!(kind, "OpenCL printf buffer not provided; left 0");
            0
        }
        other => {
            tracing::debug!(
                kind = other,
                offset = arg.offset,
                "unknown hidden argument left 0"
            );
            0
        }
    };
    (value != 0).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code_object::CodeObject;
    use crate::container::{read_containers, ReadOptions};

    fn vadd_kernels() -> Vec<KernelInfo> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/hip/vadd.hip_fatbin"
        );
        let data = std::fs::read(path).unwrap();
        let containers = read_containers(&data, &ReadOptions::default()).unwrap();
        let (pos, entry) = crate::container::find_entry(&containers, "gfx1030", None).unwrap();
        let bytes = containers[pos].extract(entry).unwrap();
        let co = CodeObject::parse(&bytes).unwrap();
        co.kernels().iter().map(|k| co.kernel_info(k)).collect()
    }

    fn kernel<'a>(all: &'a [KernelInfo], name: &str) -> &'a KernelInfo {
        all.iter().find(|k| k.name == name).unwrap()
    }

    fn arg<'a>(k: &'a KernelInfo, kind: &str) -> &'a KernelArgInfo {
        k.args.iter().find(|a| a.value_kind == kind).unwrap()
    }

    fn read(segment: &[u8], a: &KernelArgInfo) -> u64 {
        let mut bytes = [0u8; 8];
        let n = a.size as usize;
        bytes[..n].copy_from_slice(&segment[a.offset as usize..a.offset as usize + n]);
        u64::from_le_bytes(bytes)
    }

    #[test]
    fn explicit_and_hidden_arguments_land_where_the_metadata_says() {
        let all = vadd_kernels();
        let k = kernel(&all, "block_sum");
        let geometry = DispatchGeometry {
            grid: [7, 1, 1],
            block: [256, 1, 1],
            remainder: [0; 3],
        };
        let hidden = HiddenValues {
            geometry: Some(geometry),
            dynamic_lds_size: 1024,
            ..Default::default()
        };
        let a = 0x1111_2222_3333_4444u64.to_le_bytes();
        let b = 0x5555_6666_7777_8888u64.to_le_bytes();
        let n = 12345i32.to_le_bytes();
        let seg = pack(k, ExplicitArgs::Values(&[&a, &b, &n]), &hidden).unwrap();
        assert_eq!(seg.len() as u64, k.kernarg_segment_size);
        let explicit: Vec<&KernelArgInfo> = explicit_args(k).collect();
        assert_eq!(read(&seg, explicit[0]), 0x1111_2222_3333_4444);
        assert_eq!(read(&seg, explicit[1]), 0x5555_6666_7777_8888);
        assert_eq!(read(&seg, explicit[2]), 12345);
        assert_eq!(read(&seg, arg(k, "hidden_block_count_x")), 7);
        assert_eq!(read(&seg, arg(k, "hidden_block_count_y")), 1);
        assert_eq!(read(&seg, arg(k, "hidden_group_size_x")), 256);
        assert_eq!(read(&seg, arg(k, "hidden_grid_dims")), 1);
        assert_eq!(read(&seg, arg(k, "hidden_dynamic_lds_size")), 1024);
        assert_eq!(read(&seg, arg(k, "hidden_remainder_x")), 0);
    }

    #[test]
    fn mismatched_arguments_are_refused_naming_the_argument() {
        let all = vadd_kernels();
        let k = kernel(&all, "vadd");
        let p = 0u64.to_le_bytes();
        let n = 1i32.to_le_bytes();
        let hidden = HiddenValues::default();
        assert!(matches!(
            pack(k, ExplicitArgs::Values(&[&p, &p]), &hidden),
            Err(KernargError::Count {
                expected: 4,
                given: 2,
                ..
            })
        ));
        assert!(matches!(
            pack(k, ExplicitArgs::Values(&[&p, &p, &p, &p]), &hidden),
            Err(KernargError::Size {
                index: 3,
                expected: 4,
                given: 8,
                ..
            })
        ));
        assert!(pack(k, ExplicitArgs::Values(&[&p, &p, &p, &n]), &hidden).is_ok());
        assert!(matches!(
            pack(k, ExplicitArgs::Packed(&[0; 8]), &hidden),
            Err(KernargError::PackedSize { .. })
        ));
        assert!(pack(k, ExplicitArgs::Packed(&[0; 28]), &hidden).is_ok());
    }
}
