//! Everything a module hands out or writes through must lie inside its loaded image: every
//! defined symbol, every kernel descriptor (all 64 bytes), every kernel's code entry, every
//! relocation's place and target. Checked once when a [`Module`](super::Module) is made, so
//! no executable, runtime query or managed-variable write ever sees an address outside the
//! memory the loader allocated for the code object.
//!
//! ROCr does not check these: `ExecutableImpl::ApplyDynamicRelocation` and `SymbolAddress`
//! (`loader/executable.cpp`) dereference the segment a value falls in without testing that
//! there is one. Not for relocation types or import resolution (see `relocate`, `plan`).

use super::module::{LoadSegment, ModuleSymbol, Reloc, RelocTarget, SymbolClass};
use crate::code_object::{CodeObjectError, KernelInfo, RelocationType};

/// Size of a kernel descriptor, all of which a dispatch reads.
const DESCRIPTOR_SIZE: u64 = crate::code_object::KERNEL_DESCRIPTOR_SIZE as u64;

/// Checks every address of a module against its `PT_LOAD` segments.
///
/// # Errors
/// [`CodeObjectError::OutsideImage`] for the first address that lies outside, naming it and
/// its value.
pub(super) fn check(
    segments: &[LoadSegment],
    symbols: &[ModuleSymbol],
    kernels: &[KernelInfo],
    relocations: &[Reloc],
) -> Result<(), CodeObjectError> {
    let outside =
        |what: &'static str, name: &str, value: u64, size: u64| CodeObjectError::OutsideImage {
            what,
            name: name.to_string(),
            value,
            size,
            segments: describe(segments),
        };
    for s in symbols {
        // A zero-size symbol still names a byte: it must be one of the image's.
        if !inside(segments, s.value, s.size.max(1)) {
            let what = match s.class {
                SymbolClass::Kernel => "kernel descriptor",
                SymbolClass::Function => "function",
                SymbolClass::Variable => "variable",
            };
            return Err(outside(what, &s.name, s.value, s.size));
        }
        if let Some(code) = s.code_value {
            if !inside(segments, code, 1) {
                return Err(outside("kernel code symbol", &s.name, code, 1));
            }
        }
    }
    for k in kernels {
        if !inside(segments, k.descriptor_offset, DESCRIPTOR_SIZE) {
            return Err(outside(
                "kernel descriptor",
                &k.symbol,
                k.descriptor_offset,
                DESCRIPTOR_SIZE,
            ));
        }
        if let Some(d) = &k.descriptor {
            // Descriptor address + kernel_code_entry_byte_offset, where a dispatch jumps.
            let entry = d.entry_address(k.descriptor_offset);
            if !entry.is_some_and(|e| inside(segments, e, 1)) {
                let value = k
                    .descriptor_offset
                    .wrapping_add_signed(d.kernel_code_entry_byte_offset);
                return Err(outside("kernel code entry", &k.name, value, 1));
            }
        }
    }
    for r in relocations {
        let width = match r.r_type {
            RelocationType::ABS32_LO
            | RelocationType::ABS32_HI
            | RelocationType::ABS32
            | RelocationType::REL32 => 4,
            _ => 8,
        };
        if !inside(segments, r.offset, width) {
            return Err(outside(
                "relocation place",
                &format!("{} at {:#x}", r.r_type, r.offset),
                r.offset,
                width,
            ));
        }
        if let RelocTarget::Local { name, value } = &r.target {
            // A pointer may point just past an object (`&array[n]`), so the end counts.
            if !inside_or_end(segments, *value) {
                return Err(outside("relocation target", name, *value, 0));
            }
        }
    }
    Ok(())
}

/// Whether `[value, value + size)` lies inside one segment's memory.
fn inside(segments: &[LoadSegment], value: u64, size: u64) -> bool {
    let Some(end) = value.checked_add(size) else {
        return false;
    };
    segments
        .iter()
        .any(|s| value >= s.vaddr && s.vaddr.checked_add(s.mem_size).is_some_and(|e| end <= e))
}

fn inside_or_end(segments: &[LoadSegment], value: u64) -> bool {
    segments
        .iter()
        .any(|s| value >= s.vaddr && s.vaddr.checked_add(s.mem_size).is_some_and(|e| value <= e))
}

fn describe(segments: &[LoadSegment]) -> String {
    if segments.is_empty() {
        return "none".to_string();
    }
    segments
        .iter()
        .map(|s| format!("{:#x}..{:#x}", s.vaddr, s.vaddr.saturating_add(s.mem_size)))
        .collect::<Vec<_>>()
        .join(", ")
}
