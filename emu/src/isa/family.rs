//! The instruction sets the decoder knows, as values: for each, the processors that
//! implement it, its wave sizes, where its special scalar registers sit in the operand
//! encoding space ([`RegisterMap`]), the generated tables of its opcodes and the encoding
//! layout its words follow. Looked up by processor name ([`for_processor`]). Also the
//! [`IsaFamily`] trait, for code generic over the instruction set at compile time (the
//! decode cache). Not the decoding itself (`decode.rs`) and not execution (the engine's
//! `Family` says which of these it runs).

use super::{DecodeError, Inst, Op, OpInfo, Tables};

/// Which instruction set an [`Inst`] was decoded with (so printing finds its tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum IsaId {
    /// gfx1030 (RDNA2).
    #[default]
    Gfx1030,
}

impl IsaId {
    /// The instruction set.
    pub fn isa(self) -> &'static Isa {
        match self {
            IsaId::Gfx1030 => &GFX1030,
        }
    }
}

/// Where the special scalar registers live in an instruction set's scalar operand encoding
/// (the 7- or 8-bit SGPR fields and the low codes of vector sources). gfx10 and gfx9 agree
/// on VCC, the TTMPs, M0 and EXEC but not on NULL (gfx9 has none) or the registers after the
/// SGPRs (gfx9: FLAT_SCRATCH and XNACK_MASK); gfx11 swaps M0 and NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterMap {
    /// Codes `0..sgprs` are s0, s1, ...
    pub sgprs: u8,
    /// VCC_LO (VCC_HI follows).
    pub vcc: u8,
    /// ttmp0 (the 16 TTMPs follow).
    pub ttmp: u8,
    /// M0.
    pub m0: u8,
    /// NULL (reads 0, drops writes), if the ISA has it.
    pub null: Option<u8>,
    /// EXEC_LO (EXEC_HI follows).
    pub exec: u8,
}

impl RegisterMap {
    /// gfx10's (RDNA1 and RDNA2): s0-s105, VCC 106, TTMPs 108-123, M0 124, NULL 125,
    /// EXEC 126.
    pub const GFX10: RegisterMap = RegisterMap {
        sgprs: 106,
        vcc: 106,
        ttmp: 108,
        m0: 124,
        null: Some(125),
        exec: 126,
    };
}

/// How an instruction set's words are laid out, which picks the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// GFX10's encodings (RDNA1, RDNA2): `decode.rs`.
    Gfx10,
}

/// One instruction set the decoder knows.
#[derive(Debug)]
pub struct Isa {
    /// Which one (stored in every [`Inst`] it decodes).
    pub id: IsaId,
    /// The processor its tables were generated for (`llvm-mc --mcpu`), e.g. "gfx1030".
    pub name: &'static str,
    /// Its family, for reports ("RDNA2").
    pub family: &'static str,
    /// Every processor whose code it decodes (LLVM processor names).
    pub processors: &'static [&'static str],
    /// Wave sizes it has (lanes).
    pub wave_sizes: &'static [u32],
    /// Its special scalar registers.
    pub regs: RegisterMap,
    /// Its encoding layout.
    pub layout: Layout,
    pub(crate) tables: &'static Tables,
}

impl Isa {
    /// Decodes the instruction at the start of `code`, located at `address`.
    ///
    /// # Errors
    /// [`DecodeError`] for bytes that are not an instruction of this ISA.
    pub fn decode(&'static self, code: &[u8], address: u64) -> Result<Inst, DecodeError> {
        match self.layout {
            Layout::Gfx10 => super::decode::decode_gfx10(self, code, address),
        }
    }

    /// The table entry an instruction of this ISA was decoded from.
    pub fn info(&self, inst: &Inst) -> Option<&'static OpInfo> {
        super::decode::info_in(self.tables, inst)
    }

    /// Every operation its decoder produces.
    pub fn ops(&self) -> &'static [Op] {
        self.tables.ops
    }

    /// Whether it runs code built for `processor`.
    pub fn has_processor(&self, processor: &str) -> bool {
        self.processors.contains(&processor)
    }
}

/// gfx1030: RDNA2, wave32 and wave64, tables generated with `llvm-mc --mcpu=gfx1030`.
pub static GFX1030: Isa = Isa {
    id: IsaId::Gfx1030,
    name: "gfx1030",
    family: "RDNA2",
    processors: &[
        "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
    ],
    wave_sizes: &[32, 64],
    regs: RegisterMap::GFX10,
    layout: Layout::Gfx10,
    tables: &super::gfx1030_tables::TABLES,
};

/// Every instruction set the decoder knows.
pub static ISAS: &[&Isa] = &[&GFX1030];

/// The instruction set of `processor`, if the decoder knows it.
pub fn for_processor(processor: &str) -> Option<&'static Isa> {
    ISAS.iter().copied().find(|i| i.has_processor(processor))
}

/// An instruction set as a type, so caches and interpreters can be generic over it.
pub trait IsaFamily: Send + Sync + 'static {
    /// Family name, e.g. "gfx1030".
    const NAME: &'static str;
    /// Lanes per wave (the default wave size).
    const WAVE_SIZE: u32;
    /// The instruction set.
    const ISA: &'static Isa;
    /// Decode the instruction at the start of `code`, located at `address`.
    fn decode(code: &[u8], address: u64) -> Result<Inst, DecodeError> {
        Self::ISA.decode(code, address)
    }
}

/// gfx1030 (RDNA2, wave32).
#[derive(Clone, Copy, Debug, Default)]
pub struct Gfx1030;

impl IsaFamily for Gfx1030 {
    const NAME: &'static str = "gfx1030";
    const WAVE_SIZE: u32 = 32;
    const ISA: &'static Isa = &GFX1030;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processors_find_their_isa() {
        assert_eq!(for_processor("gfx1032").map(|i| i.name), Some("gfx1030"));
        assert!(for_processor("gfx90a").is_none());
        for isa in ISAS {
            assert_eq!(isa.id.isa().name, isa.name);
            // The tables' operations are operations of the one Op space, each once.
            let mut ops = isa.ops().to_vec();
            ops.sort();
            ops.dedup();
            assert_eq!(ops.len(), isa.ops().len());
        }
    }
}
