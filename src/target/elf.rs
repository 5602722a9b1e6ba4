//! The target an AMDGPU code object's ELF header declares: `EI_OSABI`, `EI_ABIVERSION` and
//! `e_flags` of code objects v3 to v6, decoded and encoded.
//!
//! Layout (LLVM `llvm/include/llvm/BinaryFormat/ELF.h`, AMDGPUUsage "ELF Header"):
//! bits 0–7 `EF_AMDGPU_MACH`; v3: 0x100 xnack on, 0x200 sramecc on (clear = off where the
//! processor has the feature, as comgr and ROCr read it); v4+: bits 8–9 xnack and 10–11 sramecc
//! (0 unsupported, 1 any, 2 off, 3 on); v6: bits 24–31 the generic version.
//!
//! Decoding is strict about bits no LLVM writes (reserved bits, a feature the processor lacks,
//! a generic version outside v6 generic targets) but follows comgr/ROCr in reading a v4+
//! feature field of 0 on a processor that has the feature as "any". A generic version of 0 on
//! a generic target decodes, so that [`super::check`] can refuse it with a reason.
//! This module does not read ELF files; the code-object layer passes the three header fields.

use super::{Feature, FeatureMode, Processor, TargetError, TargetId};

/// `EI_OSABI` of HSA code objects.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;

const MACH_MASK: u32 = 0xff;
const V3_XNACK_ON: u32 = 0x100;
const V3_SRAMECC_ON: u32 = 0x200;
const V4_XNACK_SHIFT: u32 = 8;
const V4_SRAMECC_SHIFT: u32 = 10;
const V4_RESERVED: u32 = 0x00ff_f000;
const GENERIC_VERSION_SHIFT: u32 = 24;

/// What a code object's header says about its target.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ElfTarget {
    /// Processor and feature settings. The processor is always known (unknown mach values are
    /// errors).
    pub target: TargetId,
    /// Code object version, 3 to 6 (`EI_ABIVERSION` + 2).
    pub code_object_version: u32,
    /// Generic version (v6 generic targets; 0 otherwise).
    pub generic_version: u32,
}

fn bad_flags(e_flags: u32, reason: impl Into<String>) -> TargetError {
    TargetError::InvalidElfFlags {
        e_flags,
        reason: reason.into(),
    }
}

impl ElfTarget {
    /// Decodes the header fields of an AMDGPU code object.
    ///
    /// # Errors
    /// - [`TargetError::UnsupportedOsAbi`] unless `os_abi` is 64 (AMDGPU HSA);
    /// - [`TargetError::UnsupportedCodeObjectVersion`] for v2 (`abi_version` 0) and anything
    ///   after v6;
    /// - [`TargetError::UnknownMach`] for a processor not in the table;
    /// - [`TargetError::InvalidElfFlags`] for reserved bits, a feature the processor lacks, a
    ///   generic target before v6, or a generic version on a non-generic target.
    pub fn from_header(
        os_abi: u8,
        abi_version: u8,
        e_flags: u32,
    ) -> Result<ElfTarget, TargetError> {
        if os_abi != ELFOSABI_AMDGPU_HSA {
            return Err(TargetError::UnsupportedOsAbi { os_abi });
        }
        let code_object_version = match abi_version {
            1..=4 => u32::from(abi_version) + 2,
            _ => return Err(TargetError::UnsupportedCodeObjectVersion { abi_version }),
        };
        let mach = e_flags & MACH_MASK;
        let processor = Processor::by_mach(mach).ok_or(TargetError::UnknownMach { mach })?;
        if processor.generic && code_object_version < 6 {
            return Err(bad_flags(
                e_flags,
                format!(
                    "generic target {} needs code object v6, not v{code_object_version}",
                    processor.name
                ),
            ));
        }
        let mut modes = [None, None]; // indexed by Feature as usize
        let mut generic_version = 0;
        if code_object_version == 3 {
            if e_flags & !(MACH_MASK | V3_XNACK_ON | V3_SRAMECC_ON) != 0 {
                return Err(bad_flags(
                    e_flags,
                    "bits above 0x200 are reserved in code object v3",
                ));
            }
            for (feature, bit) in [
                (Feature::Xnack, V3_XNACK_ON),
                (Feature::Sramecc, V3_SRAMECC_ON),
            ] {
                let on = e_flags & bit != 0;
                if processor.supports(feature) {
                    modes[feature as usize] = Some(FeatureMode::from_bool(on));
                } else if on {
                    return Err(bad_flags(
                        e_flags,
                        format!("{feature} on, but {} has no {feature}", processor.name),
                    ));
                }
            }
        } else {
            if e_flags & V4_RESERVED != 0 {
                return Err(bad_flags(e_flags, "bits 12-23 are reserved"));
            }
            for (feature, shift) in [
                (Feature::Xnack, V4_XNACK_SHIFT),
                (Feature::Sramecc, V4_SRAMECC_SHIFT),
            ] {
                let field = (e_flags >> shift) & 3;
                if processor.supports(feature) {
                    modes[feature as usize] = Some(match field {
                        // 0 ("unsupported") on a processor that has the feature: comgr and ROCr
                        // name the ISA without the feature, i.e. any.
                        0 | 1 => FeatureMode::Any,
                        2 => FeatureMode::Off,
                        _ => FeatureMode::On,
                    });
                } else if field != 0 {
                    return Err(bad_flags(
                        e_flags,
                        format!(
                            "{feature} field set, but {} has no {feature}",
                            processor.name
                        ),
                    ));
                }
            }
            generic_version = e_flags >> GENERIC_VERSION_SHIFT;
            if generic_version != 0 && !(processor.generic && code_object_version == 6) {
                return Err(bad_flags(
                    e_flags,
                    format!("generic version {generic_version} on non-generic target {} (v{code_object_version})", processor.name),
                ));
            }
        }
        let target = TargetId::new(
            processor,
            modes[Feature::Xnack as usize],
            modes[Feature::Sramecc as usize],
        )?;
        Ok(ElfTarget {
            target,
            code_object_version,
            generic_version,
        })
    }

    /// An ELF target to encode (for tests and synthetic objects).
    ///
    /// # Errors
    /// [`TargetError::UnencodableTarget`] for an unknown processor, a version outside 3..=6, a
    /// generic target before v6, a generic version above 255 or on a non-generic target, or an
    /// "any" feature in v3 (which can only say on or off).
    pub fn new(
        target: TargetId,
        code_object_version: u32,
        generic_version: u32,
    ) -> Result<ElfTarget, TargetError> {
        let fail = |reason: &str| TargetError::UnencodableTarget {
            target: target.to_string(),
            code_object_version,
            reason: reason.to_string(),
        };
        let Some(processor) = target.known_processor() else {
            return Err(fail("unknown processor"));
        };
        if !(3..=6).contains(&code_object_version) {
            return Err(fail("code object versions 3 to 6 only"));
        }
        if processor.generic && code_object_version < 6 {
            return Err(fail("generic targets need v6"));
        }
        if generic_version > 0xff {
            return Err(fail("generic version above 255"));
        }
        if generic_version != 0 && !(processor.generic && code_object_version == 6) {
            return Err(fail("generic version on a non-generic target"));
        }
        if code_object_version == 3
            && Feature::ALL
                .iter()
                .any(|&f| target.feature(f) == Some(FeatureMode::Any))
        {
            return Err(fail("v3 cannot say any; give xnack and sramecc as + or -"));
        }
        Ok(ElfTarget {
            target,
            code_object_version,
            generic_version,
        })
    }

    /// `EI_ABIVERSION` for this code object version (v3 → 1 … v6 → 4).
    pub fn abi_version(&self) -> u8 {
        // code_object_version is 3..=6 by construction.
        u8::try_from(self.code_object_version.saturating_sub(2)).unwrap_or(0)
    }

    /// The `e_flags` word LLVM would write for this target.
    pub fn e_flags(&self) -> u32 {
        let mach = self.target.known_processor().map_or(0, |p| p.mach);
        let mut flags = mach;
        if self.code_object_version == 3 {
            if self.target.xnack() == Some(FeatureMode::On) {
                flags |= V3_XNACK_ON;
            }
            if self.target.sramecc() == Some(FeatureMode::On) {
                flags |= V3_SRAMECC_ON;
            }
            return flags;
        }
        let field = |mode: Option<FeatureMode>| match mode {
            None => 0,
            Some(FeatureMode::Any) => 1,
            Some(FeatureMode::Off) => 2,
            Some(FeatureMode::On) => 3,
        };
        flags |= field(self.target.xnack()) << V4_XNACK_SHIFT;
        flags |= field(self.target.sramecc()) << V4_SRAMECC_SHIFT;
        flags | (self.generic_version << GENERIC_VERSION_SHIFT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(abi: u8, flags: u32) -> Result<String, TargetError> {
        ElfTarget::from_header(64, abi, flags).map(|t| {
            format!(
                "v{} {} g{}",
                t.code_object_version, t.target, t.generic_version
            )
        })
    }

    // Expected values below come from llvm-readelf 19 on clang 19 output (see
    // tests/fixtures/targets/readelf.txt): e.g. 0xE3F = "gfx90a, xnack-, sramecc+".
    #[test]
    fn decodes_v4_v5_v6() {
        assert_eq!(decode(3, 0xE3F).unwrap(), "v5 gfx90a:sramecc+:xnack- g0");
        assert_eq!(decode(2, 0x72F).unwrap(), "v4 gfx906:xnack+ g0");
        assert_eq!(decode(4, 0xB2F).unwrap(), "v6 gfx906:sramecc-:xnack+ g0");
        assert_eq!(decode(3, 0x36).unwrap(), "v5 gfx1030 g0");
        assert_eq!(decode(4, 0x0100_0053).unwrap(), "v6 gfx10-3-generic g1");
        assert_eq!(decode(4, 0x0100_0351).unwrap(), "v6 gfx9-generic:xnack+ g1");
        let t = ElfTarget::from_header(64, 3, 0x52F).unwrap();
        assert_eq!(t.target.xnack(), Some(FeatureMode::Any));
        assert_eq!(t.target.sramecc(), Some(FeatureMode::Any));
        // Feature field 0 on a processor with the feature reads as any (comgr, ROCr).
        assert_eq!(
            ElfTarget::from_header(64, 3, 0x3F).unwrap().target.xnack(),
            Some(FeatureMode::Any)
        );
        // A generic version of 0 decodes; check() refuses it.
        assert_eq!(decode(4, 0x53).unwrap(), "v6 gfx10-3-generic g0");
    }

    #[test]
    fn decodes_v3() {
        // v3: bit set = on, clear = off where the processor has the feature (comgr, ROCr).
        assert_eq!(decode(1, 0x32F).unwrap(), "v3 gfx906:sramecc+:xnack+ g0");
        assert_eq!(decode(1, 0x2F).unwrap(), "v3 gfx906:sramecc-:xnack- g0");
        assert_eq!(decode(1, 0x12C).unwrap(), "v3 gfx900:xnack+ g0");
        assert_eq!(decode(1, 0x36).unwrap(), "v3 gfx1030 g0");
    }

    #[test]
    fn rejects_what_llvm_never_writes() {
        assert!(matches!(
            ElfTarget::from_header(0, 3, 0x36),
            Err(TargetError::UnsupportedOsAbi { os_abi: 0 })
        ));
        assert!(matches!(
            decode(0, 0x36),
            Err(TargetError::UnsupportedCodeObjectVersion { abi_version: 0 })
        ));
        assert!(matches!(
            decode(5, 0x36),
            Err(TargetError::UnsupportedCodeObjectVersion { abi_version: 5 })
        ));
        assert!(matches!(
            decode(3, 0x49),
            Err(TargetError::UnknownMach { mach: 0x49 })
        ));
        assert!(matches!(
            decode(3, 0x00),
            Err(TargetError::UnknownMach { mach: 0 })
        ));
        for (abi, flags) in [
            (1, 0x436),       // v3 reserved bit
            (1, 0x136),       // v3 xnack on gfx1030
            (1, 0x22C),       // v3 sramecc on gfx900
            (3, 0x136),       // v5 xnack field on gfx1030
            (3, 0x42C),       // v5 sramecc field on gfx900
            (3, 0x1036),      // reserved bit 12
            (3, 0x0100_0036), // generic version in v5
            (4, 0x0100_0036), // generic version on a non-generic target
            (3, 0x0100_0053), // generic target in v5
            (3, 0x53),
        ] {
            assert!(
                matches!(decode(abi, flags), Err(TargetError::InvalidElfFlags { .. })),
                "{abi} {flags:#x}"
            );
        }
        let msg = decode(1, 0x136).unwrap_err().to_string();
        assert!(msg.contains("gfx1030 has no xnack"), "{msg}");
        let msg = decode(0, 0).unwrap_err().to_string();
        assert!(msg.contains("code object v2"), "{msg}");
    }

    #[test]
    fn encodes_what_it_decodes() {
        for (abi, flags) in [
            (3u8, 0xE3Fu32),
            (2, 0x72F),
            (4, 0xB2F),
            (3, 0x36),
            (4, 0x0100_0053),
            (4, 0x0200_0351),
            (1, 0x32F),
            (1, 0x2F),
            (1, 0x36),
            (4, 0x54),
        ] {
            let t = ElfTarget::from_header(64, abi, flags).unwrap();
            assert_eq!((t.abi_version(), t.e_flags()), (abi, flags), "{flags:#x}");
        }
        let any = TargetId::any(Processor::by_name("gfx906").unwrap());
        assert!(ElfTarget::new(any.clone(), 3, 0).is_err());
        assert!(ElfTarget::new(any.clone(), 2, 0).is_err());
        assert!(ElfTarget::new(any.clone(), 7, 0).is_err());
        assert!(ElfTarget::new(any.clone(), 6, 1).is_err());
        assert_eq!(ElfTarget::new(any, 5, 0).unwrap().e_flags(), 0x52F);
        let generic = TargetId::any(Processor::by_name("gfx11-generic").unwrap());
        assert!(ElfTarget::new(generic.clone(), 5, 0).is_err());
        assert!(ElfTarget::new(generic.clone(), 6, 256).is_err());
        assert_eq!(
            ElfTarget::new(generic, 6, 1).unwrap().e_flags(),
            0x0100_0054
        );
        let unknown: TargetId = "gfx1250".parse().unwrap();
        assert!(ElfTarget::new(unknown, 6, 0).is_err());
    }
}
