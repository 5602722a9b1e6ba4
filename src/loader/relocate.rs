//! Applying dynamic relocations to a module's loaded image, as ROCr does for the types it
//! knows (`ABS32_LO`, `ABS32_HI`, `ABS64`, `ABS32`, `RELATIVE64`) plus the PC-relative `REL32`
//! and `REL64` it refuses. Pure: image bytes in, image bytes out, every write bounds-checked.

use super::module::{Module, RelocTarget};
use super::LoadError;
use crate::code_object::RelocationType;

/// One relocation as applied, for tests and tools that compare with a static link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedRelocation {
    /// Address written (in the loaded image).
    pub address: u64,
    /// Relocation type.
    pub r_type: RelocationType,
    /// Symbol name, empty for `RELATIVE64`.
    pub symbol: String,
    /// Value written (before truncation to the field's width).
    pub value: u64,
}

/// Applies `module`'s relocations to `image`, the module loaded at `base` (so the load delta
/// is `base - module.first_vaddr()`). `imports[i]` is the resolved address of import `i`
/// (`None` leaves it unresolved: an error unless weak, where ELF says 0).
pub fn apply(
    module: &Module,
    image: &mut [u8],
    base: u64,
    imports: &[Option<u64>],
    module_index: usize,
) -> Result<Vec<AppliedRelocation>, LoadError> {
    let delta = base.wrapping_sub(module.first_vaddr());
    let mut applied = Vec::with_capacity(module.relocations().len());
    for r in module.relocations() {
        let (symbol, s) = match &r.target {
            RelocTarget::None => (String::new(), 0u64),
            RelocTarget::Local { name, value } => (name.clone(), delta.wrapping_add(*value)),
            RelocTarget::Import(i) => {
                let import = &module.imports()[*i];
                match imports.get(*i).copied().flatten() {
                    Some(addr) => (import.name.clone(), addr),
                    None if import.weak => (import.name.clone(), 0),
                    None => {
                        return Err(LoadError::Unresolved(vec![super::MissingImport {
                            module: module_index,
                            source: module.source().to_string(),
                            name: import.name.clone(),
                        }]))
                    }
                }
            }
        };
        let a = r.addend as u64;
        let place = delta.wrapping_add(r.offset);
        let value = match r.r_type {
            RelocationType::ABS32_LO
            | RelocationType::ABS32_HI
            | RelocationType::ABS64
            | RelocationType::ABS32 => {
                let v = s.wrapping_add(a);
                // ROCr: an absolute relocation resolving to 0 means an undefined variable.
                if v == 0 && !matches!(r.target, RelocTarget::Import(i) if module.imports()[i].weak)
                {
                    return Err(LoadError::ZeroAddress {
                        module: module_index,
                        origin: module.source().to_string(),
                        offset: r.offset,
                        symbol,
                    });
                }
                v
            }
            RelocationType::RELATIVE64 => delta.wrapping_add(a),
            RelocationType::REL32 | RelocationType::REL64 => s.wrapping_add(a).wrapping_sub(place),
            other => {
                return Err(LoadError::UnsupportedRelocation {
                    module: module_index,
                    origin: module.source().to_string(),
                    offset: r.offset,
                    reason: format!(
                        "type {} is not applied by any loader",
                        other.name().unwrap_or("unknown")
                    ),
                })
            }
        };
        let (width, field) = match r.r_type {
            RelocationType::ABS32_LO => (4, value & 0xffff_ffff),
            RelocationType::ABS32_HI => (4, value >> 32),
            RelocationType::ABS32 | RelocationType::REL32 => (4, value & 0xffff_ffff),
            _ => (8, value),
        };
        let image_len = image.len();
        let at = r
            .offset
            .checked_sub(module.first_vaddr())
            .and_then(|o| usize::try_from(o).ok());
        let slot = at
            .and_then(|o| image.get_mut(o..o.checked_add(width)?))
            .ok_or_else(|| LoadError::UnsupportedRelocation {
                module: module_index,
                origin: module.source().to_string(),
                offset: r.offset,
                reason: format!("writes {width} bytes outside the {image_len}-byte image"),
            })?;
        slot.copy_from_slice(&field.to_le_bytes()[..width]);
        applied.push(AppliedRelocation {
            address: place,
            r_type: r.r_type,
            symbol,
            value,
        });
    }
    Ok(applied)
}

/// Builds a module's image: segments copied to their virtual addresses (relative to the
/// first), the rest zero, as ROCr lays out one allocation per code object.
pub fn lay_out(module: &Module, image: &mut [u8]) -> Result<(), LoadError> {
    let bytes = module.bytes();
    for seg in module.segments() {
        let src = crate::bytes::slice_at(bytes, seg.file_offset, seg.file_size);
        let dst_start = seg
            .vaddr
            .checked_sub(module.first_vaddr())
            .and_then(|o| usize::try_from(o).ok());
        let dst = dst_start.and_then(|d| image.get_mut(d..d.checked_add(seg.file_size as usize)?));
        match (src, dst) {
            (Some(src), Some(dst)) => dst.copy_from_slice(src),
            _ => {
                return Err(LoadError::Layout {
                    origin: module.source().to_string(),
                    reason: format!(
                        "segment at vaddr {:#x} ({} file bytes) does not fit the file or the image",
                        seg.vaddr, seg.file_size
                    ),
                })
            }
        }
    }
    Ok(())
}
