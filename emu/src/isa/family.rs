//! The instruction sets the decoder knows (gfx1030, gfx90a, gfx942), as values: for each, the processors that
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
    /// gfx90a (CDNA2).
    Gfx90a,
    /// gfx942 (CDNA3).
    Gfx942,
}

impl IsaId {
    /// The instruction set.
    pub fn isa(self) -> &'static Isa {
        match self {
            IsaId::Gfx1030 => &GFX1030,
            IsaId::Gfx90a => &GFX90A,
            IsaId::Gfx942 => &GFX942,
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
    /// FLAT_SCRATCH_LO (FLAT_SCRATCH_HI follows), if the ISA has it as an operand (gfx9).
    pub flat_scratch: Option<u8>,
    /// XNACK_MASK_LO (XNACK_MASK_HI follows), if the ISA has it as an operand (gfx9).
    pub xnack_mask: Option<u8>,
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
        flat_scratch: None,
        xnack_mask: None,
    };

    /// gfx9's (GCN5, CDNA): s0-s101, FLAT_SCRATCH 102, XNACK_MASK 104, VCC 106, TTMPs
    /// 108-123, M0 124, EXEC 126. Code 125 is reserved on the hardware; LLVM's disassembler
    /// prints it as `null`, so the decoder does too.
    pub const GFX9: RegisterMap = RegisterMap {
        sgprs: 102,
        vcc: 106,
        ttmp: 108,
        m0: 124,
        null: Some(125),
        exec: 126,
        flat_scratch: Some(102),
        xnack_mask: Some(104),
    };
}

/// How an instruction set's words are laid out, which picks the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// GFX10's encodings (RDNA1, RDNA2): `decode.rs`.
    Gfx10,
    /// GFX9's encodings as CDNA2 and CDNA3 have them (AGPR bits in VOP3P-MAI, DS, FLAT and
    /// MUBUF words): `decode_gfx9.rs`.
    Gfx9,
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
    /// Whether bit 13 of a SCRATCH word says a VGPR address is used (gfx940's SVE) rather
    /// than selecting LDS DMA.
    pub scratch_sve: bool,
    /// Whether waves start with the work-item ids packed in v0 (x in bits 9:0, y 19:10, z
    /// 29:20: gfx90a and later) rather than in v0, v1 and v2.
    pub packed_workitem_ids: bool,
    /// Whether its kernel descriptors give AGPRs their own share of the VGPRs
    /// (COMPUTE_PGM_RSRC3's ACCUM_OFFSET; GRANULATED_WORKITEM_VGPR_COUNT then counts both in
    /// granules of 8).
    pub agprs: bool,
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
            Layout::Gfx9 => super::decode_gfx9::decode_gfx9(self, code, address),
        }
    }

    /// Decodes `code` (located at `address`) instruction by instruction, as
    /// [`disassemble`](super::disassemble) does for gfx1030.
    pub fn disassemble<'a>(&'static self, code: &'a [u8], address: u64) -> super::Disassembly<'a> {
        super::print::disassemble_with(self, code, address)
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
    scratch_sve: false,
    packed_workitem_ids: false,
    agprs: false,
    tables: &super::gfx1030_tables::TABLES,
};

/// gfx90a: CDNA2 (MI200), wave64, tables generated with `llvm-mc --mcpu=gfx90a`.
pub static GFX90A: Isa = Isa {
    id: IsaId::Gfx90a,
    name: "gfx90a",
    family: "CDNA2",
    processors: &["gfx90a"],
    wave_sizes: &[64],
    regs: RegisterMap::GFX9,
    layout: Layout::Gfx9,
    scratch_sve: false,
    packed_workitem_ids: true,
    agprs: true,
    tables: &super::gfx90a_tables::TABLES,
};

/// gfx942: CDNA3 (MI300), wave64, tables generated with `llvm-mc --mcpu=gfx942`.
pub static GFX942: Isa = Isa {
    id: IsaId::Gfx942,
    name: "gfx942",
    family: "CDNA3",
    processors: &["gfx942"],
    wave_sizes: &[64],
    regs: RegisterMap::GFX9,
    layout: Layout::Gfx9,
    scratch_sve: true,
    packed_workitem_ids: true,
    agprs: true,
    tables: &super::gfx942_tables::TABLES,
};

/// Every instruction set the decoder knows.
pub static ISAS: &[&Isa] = &[&GFX1030, &GFX90A, &GFX942];

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
        assert_eq!(for_processor("gfx90a").map(|i| i.name), Some("gfx90a"));
        assert_eq!(for_processor("gfx942").map(|i| i.name), Some("gfx942"));
        assert!(for_processor("gfx908").is_none());
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
