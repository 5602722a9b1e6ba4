//! What can go wrong in a dispatch, as values: a refused dispatch ([`DispatchError`]) before any
//! wave runs, or an [`ExecError`] that ends the running dispatch (memory fault with the
//! embedder's own payload, trap, unsupported or undecodable instruction, timeout). Every variant
//! that comes from an instruction names its PC, its offset from the kernel's entry and its text.
//! Not for host-side failures of the embedder.

use std::fmt;
use std::time::Duration;

use crate::lds::LdsFault;
use crate::scratch::ScratchFault;

/// Why a dispatch could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DispatchError {
    /// The processor's ISA is not one the emulator executes.
    UnsupportedIsa {
        /// The processor.
        processor: &'static str,
    },
    /// The kernel's wave width (ENABLE_WAVEFRONT_SIZE32 in its descriptor) is not one its
    /// processor's family runs (RDNA2 runs wave32 code, CDNA wave64).
    WaveSize {
        /// The processor.
        processor: &'static str,
        /// Lanes per wave the descriptor asks for.
        lanes: u32,
    },
    /// An empty grid or work-group, or a work-group over 1,024 work-items.
    BadSize {
        /// Grid in work-items.
        grid: [u32; 3],
        /// Work-group size.
        workgroup: [u16; 3],
    },
    /// More work-groups than the emulator counts (2^64): a grid of up to (2^32 - 1)^3
    /// work-groups is valid, but one this large could never finish.
    TooManyWorkgroups {
        /// Work-groups in each dimension.
        groups: [u32; 3],
    },
    /// More LDS than a work-group can have.
    TooMuchLds {
        /// Bytes asked for.
        bytes: u32,
    },
    /// More scratch per work-item than the configured cap.
    TooMuchScratch {
        /// Bytes asked for.
        bytes: u32,
        /// [`crate::Config::scratch_cap`].
        cap: u32,
    },
    /// One work-group needs more scratch than the emulator's whole scratch budget
    /// ([`crate::Config::scratch_budget`]): it could never be admitted.
    ScratchTooLarge {
        /// Scratch bytes per work-item.
        per_workitem: u32,
        /// Bytes one work-group needs (its waves x 32 lanes x `per_workitem`).
        workgroup_bytes: u64,
        /// The budget.
        budget: u64,
    },
    /// A descriptor field the emulator cannot honour.
    BadDescriptor(String),
}

impl fmt::Display for DispatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DispatchError::UnsupportedIsa { processor } => write!(
                f,
                "{processor} code cannot run here: the emulator executes {}",
                crate::FAMILIES
            ),
            DispatchError::WaveSize { processor, lanes } => write!(
                f,
                "the kernel is wave{lanes}, which the emulator does not run for {processor}"
            ),
            DispatchError::BadSize { grid, workgroup } => {
                write!(f, "invalid sizes: grid {grid:?}, work-group {workgroup:?} (at most 1024 work-items, none empty)")
            }
            DispatchError::TooManyWorkgroups { groups } => write!(
                f,
                "{} x {} x {} work-groups: more than the emulator counts (2^64)",
                groups[0], groups[1], groups[2]
            ),
            DispatchError::TooMuchLds { bytes } => {
                write!(f, "{bytes} bytes of LDS (at most 65536)")
            }
            DispatchError::TooMuchScratch { bytes, cap } => {
                write!(
                    f,
                    "{bytes} bytes of scratch per work-item (the cap is {cap})"
                )
            }
            DispatchError::ScratchTooLarge {
                per_workitem,
                workgroup_bytes,
                budget,
            } => write!(
                f,
                "a work-group needs {workgroup_bytes} bytes of scratch ({per_workitem} per work-item), more than the whole scratch budget of {budget} bytes"
            ),
            DispatchError::BadDescriptor(why) => write!(f, "kernel descriptor: {why}"),
        }
    }
}

impl std::error::Error for DispatchError {}

/// Where a faulting access went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind<F> {
    /// Global memory (or flat outside the apertures): the embedder refused it, and this is its
    /// payload, untouched.
    Guest(F),
    /// Past the end of the work-group's LDS.
    Lds(LdsFault),
    /// Past the end of the lane's scratch.
    Scratch(ScratchFault),
}

/// Which wave: its work-group and its index in the work-group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaveId {
    /// The work-group's id (x, y, z).
    pub workgroup: [u32; 3],
    /// The wave's index in its work-group (work-items `32 * wave ..`).
    pub wave: u32,
}

impl fmt::Display for WaveId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.workgroup;
        write!(f, "wave {} of work-group ({x}, {y}, {z})", self.wave)
    }
}

/// Where in the code something happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// Absolute PC.
    pub pc: u64,
    /// PC minus the kernel's entry address (negative or beyond the kernel for device
    /// functions placed elsewhere).
    pub offset: i64,
    /// The instruction as llvm-objdump prints it (empty if it could not be decoded).
    pub instruction: String,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `{:+#x}` would print a negative offset as its two's complement.
        let sign = if self.offset < 0 { '-' } else { '+' };
        write!(
            f,
            "pc {:#x} (entry{sign}{:#x})",
            self.pc,
            self.offset.unsigned_abs()
        )?;
        if !self.instruction.is_empty() {
            write!(f, " `{}`", self.instruction)?;
        }
        Ok(())
    }
}

/// Why a running dispatch ended early. `F` is the embedder's memory-fault payload.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExecError<F> {
    /// The dispatch was refused before running.
    Dispatch(DispatchError),
    /// A memory access outside what the dispatch may touch.
    MemoryFault {
        /// The instruction.
        site: Site,
        /// The first faulting lane: the lane (0-31) of `wave` that made the access.
        lane: u32,
        /// The wave.
        wave: Option<WaveId>,
        /// The guest address (flat or global), or the LDS / private offset.
        address: u64,
        /// Which memory refused it, with the embedder's payload for guest memory.
        kind: FaultKind<F>,
    },
    /// Fetching instruction bytes failed (PC outside code the dispatch may read).
    Fetch {
        /// The PC.
        pc: u64,
        /// The embedder's payload.
        fault: F,
    },
    /// `s_trap` (an `assert`, `__builtin_trap`).
    Trap {
        /// The instruction.
        site: Site,
        /// The trap id (`s_trap 2` is what `assert` and `abort` emit).
        code: u16,
    },
    /// An instruction the emulator knows but does not execute.
    Unsupported {
        /// The instruction.
        site: Site,
        /// Its mnemonic.
        mnemonic: String,
        /// Its encoding (SOP2, VOP3, ...).
        encoding: String,
    },
    /// Bytes that decode to no gfx1030 instruction.
    Invalid {
        /// The instruction's position (its text is empty).
        site: Site,
        /// The first instruction word.
        word: u32,
        /// The decoder's explanation.
        detail: String,
    },
    /// A grid-wide barrier (`ds_gws_barrier`, cooperative groups' grid sync) awaits more waves
    /// than can be resident at once, so it could never open.
    GridBarrier {
        /// The instruction.
        site: Site,
        /// Waves the barrier awaits.
        waves: u32,
        /// The most waves resident at once ([`crate::Config`]'s threads x resident
        /// work-groups, bounded by the grid).
        resident: u64,
    },
    /// The emulator itself failed (a worker thread panicked: a bug in the emulator, never
    /// the kernel's doing); the dispatch is stopped and the host carries on.
    Internal {
        /// What the failure said.
        detail: String,
    },
    /// The dispatch ran longer than its timeout ([`crate::Config::timeout`],
    /// [`crate::Emulator::set_timeout`]): a kernel that never ends, or spin-waits that cannot
    /// make progress.
    Timeout {
        /// How long it ran.
        elapsed: Duration,
        /// Work-groups completed.
        workgroups_done: u64,
        /// Work-groups in the grid.
        workgroups: u64,
        /// Where one still-running wave was (preferring one that was running over one asleep
        /// or at a barrier).
        site: Option<Site>,
        /// Which wave that was.
        wave: Option<WaveId>,
    },
}

impl<F: fmt::Display> fmt::Display for ExecError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecError::Internal { detail } => write!(f, "internal emulator error: {detail}"),
            ExecError::Dispatch(e) => write!(f, "dispatch refused: {e}"),
            ExecError::MemoryFault {
                site,
                lane,
                wave,
                address,
                kind,
            } => {
                write!(f, "memory fault at {site}, lane {lane}")?;
                if let Some(w) = wave {
                    write!(f, " of {w}")?;
                }
                write!(f, ", address {address:#x}: ")?;
                match kind {
                    FaultKind::Guest(p) => write!(f, "{p}"),
                    FaultKind::Lds(l) => write!(
                        f,
                        "LDS access of {} bytes at {:#x} past its {} bytes",
                        l.len, l.address, l.size
                    ),
                    FaultKind::Scratch(s) => write!(
                        f,
                        "private offset {:#x} past the work-item's {} bytes of scratch",
                        s.private_offset(),
                        s.per_lane
                    ),
                }
            }
            ExecError::Fetch { pc, fault } => {
                write!(f, "cannot fetch instructions at {pc:#x}: {fault}")
            }
            ExecError::Trap { site, code } => write!(f, "s_trap {code} at {site}"),
            ExecError::Unsupported {
                site,
                mnemonic,
                encoding,
            } => {
                write!(
                    f,
                    "unsupported instruction {mnemonic} ({encoding}) at {site}"
                )
            }
            ExecError::Invalid { site, word, detail } => {
                write!(
                    f,
                    "invalid instruction word {word:#010x} at {site}: {detail}"
                )
            }
            ExecError::GridBarrier {
                site,
                waves,
                resident,
            } => write!(
                f,
                "grid barrier at {site} awaits {waves} waves but at most {resident} can be resident at once (a cooperative launch larger than the device)"
            ),
            ExecError::Timeout {
                elapsed,
                workgroups_done,
                workgroups,
                site,
                wave,
            } => {
                write!(f, "timed out after {elapsed:?} with {workgroups_done} of {workgroups} work-groups done")?;
                match (wave, site) {
                    (Some(w), Some(s)) => write!(f, "; {w} was at {s}"),
                    (None, Some(s)) => write!(f, "; a wave was at {s}"),
                    _ => Ok(()),
                }
            }
        }
    }
}

impl<F: fmt::Debug + fmt::Display> std::error::Error for ExecError<F> {}

impl<F> From<DispatchError> for ExecError<F> {
    fn from(e: DispatchError) -> Self {
        ExecError::Dispatch(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_before_the_entry_print_a_negative_offset() {
        let before = Site {
            pc: 0x1000,
            offset: -0xfd8,
            instruction: String::new(),
        };
        assert_eq!(before.to_string(), "pc 0x1000 (entry-0xfd8)");
        let after = Site {
            pc: 0x1000,
            offset: 0x10,
            instruction: "s_endpgm".into(),
        };
        assert_eq!(after.to_string(), "pc 0x1000 (entry+0x10) `s_endpgm`");
    }
}
