//! Plain offload bundles (`__CLANG_OFFLOAD_BUNDLE__`): a table of `(offset, size, id)` and the
//! entries' bytes, borrowed from the input.
//!
//! The table reader works through a [`Probe`], so the same code lists a plain bundle, the
//! inflated prefix of a compressed one, and a bundle behind a raw pointer. It does not pick
//! targets (see `crate::target`) and does not look inside entries.

use std::borrow::Cow;

use super::probe::{FieldReader, Probe};
use super::{ContainerError, EntryInfo, Format, Limits};

/// The 24-byte magic that starts a plain bundle (no NUL).
pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";

/// Bytes before the first table entry: magic and entry count.
const TABLE_START: u64 = 32;
/// Fixed bytes of one table entry before its id: offset, size, id length.
const ENTRY_FIXED: u64 = 24;

/// One table entry as read, before its id is turned into text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawEntry {
    pub id_offset: u64,
    pub id_len: u64,
    pub offset: u64,
    pub size: u64,
}

/// The parsed entry table of a bundle.
#[derive(Debug)]
pub(crate) struct Table {
    pub entries: Vec<RawEntry>,
    /// First byte after the bundle: the table or the farthest payload, whichever ends later.
    pub extent: u64,
}

/// Reads and checks a bundle's entry table. Every size is checked before use: the entry count
/// against the limit and the bytes available, each id length against the limit, each payload
/// against the bytes available. Ids must be UTF-8.
pub(crate) fn read_table<P: Probe + ?Sized>(
    probe: &mut P,
    limits: &Limits,
) -> Result<Table, ContainerError> {
    let available = probe.known_len();
    let mut r = FieldReader {
        probe,
        format: Format::Bundle,
    };
    let magic: [u8; 24] = r.bytes(0, "magic", None)?;
    if &magic != BUNDLE_MAGIC {
        return Err(ContainerError::invalid(
            Format::Bundle,
            "magic",
            None,
            0,
            "not __CLANG_OFFLOAD_BUNDLE__",
        ));
    }
    let count = r.u64(24, "entry count", None)?;
    if count > limits.max_entries {
        return Err(ContainerError::LimitExceeded {
            format: Format::Bundle,
            field: "entry count",
            entry: super::error::EntryIndex(None),
            offset: 24,
            value: count,
            limit: limits.max_entries,
        });
    }
    // Each entry takes at least ENTRY_FIXED + 1 bytes, so a count the input cannot hold is
    // refused before anything is reserved for it.
    if let Some(len) = available {
        let min_table = count
            .checked_mul(ENTRY_FIXED + 1)
            .and_then(|t| t.checked_add(TABLE_START));
        if min_table.is_none_or(|t| t > len) {
            return Err(ContainerError::truncated(
                Format::Bundle,
                "entry table",
                None,
                TABLE_START,
                count.saturating_mul(ENTRY_FIXED + 1),
                len,
            ));
        }
    }
    // Reserve for what is likely; the vector grows with entries actually read (behind a raw
    // pointer the input length is unknown, so `count` is bounded only by the limit).
    let mut entries = Vec::with_capacity(count.min(1024) as usize);
    let mut pos = TABLE_START;
    let mut id_buf = Vec::new();
    for index in 0..count {
        let entry = Some(index);
        let offset = r.u64(pos, "entry offset", entry)?;
        let size = r.u64(pos + 8, "entry size", entry)?;
        let id_len = r.u64(pos + 16, "entry id length", entry)?;
        let id_offset = pos + ENTRY_FIXED;
        if id_len == 0 {
            return Err(ContainerError::invalid(
                Format::Bundle,
                "entry id length",
                entry,
                pos + 16,
                "empty id",
            ));
        }
        if id_len > limits.max_id_len {
            return Err(ContainerError::LimitExceeded {
                format: Format::Bundle,
                field: "entry id length",
                entry: super::error::EntryIndex(entry),
                offset: pos + 16,
                value: id_len,
                limit: limits.max_id_len,
            });
        }
        id_buf.resize(id_len as usize, 0);
        if !r.probe.read_at(id_offset, &mut id_buf)? {
            return Err(ContainerError::truncated(
                Format::Bundle,
                "entry id",
                entry,
                id_offset,
                id_len,
                available.unwrap_or(id_offset),
            ));
        }
        if let Err(e) = std::str::from_utf8(&id_buf) {
            return Err(ContainerError::invalid(
                Format::Bundle,
                "entry id",
                entry,
                id_offset,
                format!("not UTF-8 ({e})"),
            ));
        }
        let end = offset.checked_add(size).ok_or_else(|| {
            ContainerError::invalid(
                Format::Bundle,
                "entry size",
                entry,
                pos + 8,
                format!("offset {offset:#x} + size {size:#x} overflows"),
            )
        })?;
        if let Some(len) = available {
            if offset > len {
                // Nothing of it is there: "needs N bytes, 0 available" would hide where it is.
                return Err(ContainerError::invalid(
                    Format::Bundle,
                    "entry payload",
                    entry,
                    offset,
                    format!(
                        "its {size} bytes start past the end of the data, which ends at {len:#x}"
                    ),
                ));
            }
            if end > len {
                return Err(ContainerError::truncated(
                    Format::Bundle,
                    "entry payload",
                    entry,
                    offset,
                    size,
                    len,
                ));
            }
        }
        entries.push(RawEntry {
            id_offset,
            id_len,
            offset,
            size,
        });
        pos = id_offset + id_len;
    }
    let table_end = pos;
    let mut extent = table_end;
    for (index, e) in entries.iter().enumerate() {
        // Empty entries (the host entry) carry no bytes, so where they point does not matter.
        if e.size > 0 && e.offset < table_end {
            return Err(ContainerError::invalid(
                Format::Bundle,
                "entry offset",
                Some(index as u64),
                e.id_offset - ENTRY_FIXED,
                format!(
                    "payload at {:#x} overlaps the entry table, which ends at {table_end:#x}",
                    e.offset
                ),
            ));
        }
        extent = extent.max(e.offset + e.size);
    }
    Ok(Table { entries, extent })
}

/// A plain offload bundle borrowed from its input.
#[derive(Debug, Clone)]
pub struct Bundle<'a> {
    data: &'a [u8],
    entries: Vec<EntryInfo<'a>>,
}

impl<'a> Bundle<'a> {
    /// Parses the bundle that starts at `data[0]` with the default [`Limits`]. `data` may run
    /// past the bundle's end (a section of many bundles); the bundle keeps only its own extent.
    pub fn parse(data: &'a [u8]) -> Result<Self, ContainerError> {
        Self::parse_with(data, &Limits::default())
    }

    /// [`Bundle::parse`] with explicit limits.
    pub fn parse_with(data: &'a [u8], limits: &Limits) -> Result<Self, ContainerError> {
        let mut probe = data;
        let table = read_table(&mut probe, limits)?;
        // read_table checked every range against data.len(), so these slices exist.
        let data = data.get(..table.extent as usize).ok_or_else(|| {
            ContainerError::truncated(
                Format::Bundle,
                "bundle",
                None,
                0,
                table.extent,
                data.len() as u64,
            )
        })?;
        let entries = table
            .entries
            .iter()
            .map(|e| EntryInfo {
                id: Cow::Borrowed(id_str(data, e)),
                offset: e.offset,
                size: e.size,
            })
            .collect();
        Ok(Bundle { data, entries })
    }

    /// The bundle's bytes, from its magic to its extent.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.data
    }

    /// Size of the bundle in bytes (its extent).
    pub fn size(&self) -> u64 {
        self.data.len() as u64
    }

    /// The entries in table order.
    pub fn entries(&self) -> &[EntryInfo<'a>] {
        &self.entries
    }

    /// The bytes of `entry` (which must come from this bundle's [`Bundle::entries`]).
    pub fn entry_data(&self, entry: &EntryInfo<'_>) -> &'a [u8] {
        crate::bytes::slice_at(self.data, entry.offset, entry.size).unwrap_or(&[])
    }

    /// The first entry whose id is exactly `id`.
    pub fn find(&self, id: &str) -> Option<&EntryInfo<'a>> {
        self.entries.iter().find(|e| e.id == id)
    }
}

/// The id of a checked table entry. `read_table` verified range and UTF-8 already, so the
/// fallback is never taken; it only keeps this function total.
fn id_str<'a>(data: &'a [u8], e: &RawEntry) -> &'a str {
    crate::bytes::slice_at(data, e.id_offset, e.id_len)
        .and_then(|b| std::str::from_utf8(b).ok())
        .unwrap_or("")
}

/// Owned ids of a table read from an inflated prefix.
pub(crate) fn owned_entries(prefix: &[u8], table: &Table) -> Vec<EntryInfo<'static>> {
    table
        .entries
        .iter()
        .map(|e| EntryInfo {
            id: Cow::Owned(id_str(prefix, e).to_string()),
            offset: e.offset,
            size: e.size,
        })
        .collect()
}

/// Writes a plain bundle: the inverse of [`Bundle::parse`], used to build test inputs and
/// synthetic containers. Payloads are aligned to `align` (a power of two, clang uses 4096).
pub fn write_bundle(entries: &[(&str, &[u8])], align: u64) -> Vec<u8> {
    let align = align.max(1).next_power_of_two();
    let table_len: u64 = TABLE_START
        + entries
            .iter()
            .map(|(id, _)| ENTRY_FIXED + id.len() as u64)
            .sum::<u64>();
    let mut offsets = Vec::with_capacity(entries.len());
    let mut pos = table_len;
    for (_, data) in entries {
        pos = crate::bytes::align_up(pos, align).unwrap_or(pos);
        offsets.push(pos);
        pos += data.len() as u64;
    }
    let mut out = Vec::with_capacity(pos as usize);
    out.extend_from_slice(BUNDLE_MAGIC);
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for ((id, data), off) in entries.iter().zip(&offsets) {
        out.extend_from_slice(&off.to_le_bytes());
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        out.extend_from_slice(&(id.len() as u64).to_le_bytes());
        out.extend_from_slice(id.as_bytes());
    }
    for ((_, data), off) in entries.iter().zip(&offsets) {
        out.resize(*off as usize, 0);
        out.extend_from_slice(data);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_trims_to_extent() {
        let mut bytes = write_bundle(
            &[
                ("host-x86_64-unknown-linux-gnu-", b""),
                ("hipv4-amdgcn-amd-amdhsa--gfx1030", b"\x7fELFcode"),
            ],
            4096,
        );
        let extent = bytes.len();
        bytes.extend_from_slice(&[0u8; 100]);
        let b = Bundle::parse(&bytes).unwrap();
        assert_eq!(b.size() as usize, extent);
        assert_eq!(b.entries().len(), 2);
        assert_eq!(b.entries()[1].id, "hipv4-amdgcn-amd-amdhsa--gfx1030");
        assert_eq!(b.entry_data(&b.entries()[1]), b"\x7fELFcode");
        assert_eq!(b.entries()[1].offset, 4096);
    }

    #[test]
    fn huge_count_is_refused_before_allocation() {
        let mut bytes = BUNDLE_MAGIC.to_vec();
        bytes.extend_from_slice(&(1u64 << 60).to_le_bytes());
        let err = Bundle::parse(&bytes).unwrap_err();
        assert!(
            matches!(
                err,
                ContainerError::LimitExceeded {
                    field: "entry count",
                    ..
                }
            ),
            "{err}"
        );
        let limits = Limits {
            max_entries: u64::MAX,
            ..Limits::default()
        };
        let err = Bundle::parse_with(&bytes, &limits).unwrap_err();
        assert!(
            matches!(
                err,
                ContainerError::Truncated {
                    field: "entry table",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn lying_sizes_are_typed_errors() {
        let good = write_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx900", b"abcd")], 8);
        // size field of entry 0 is at 32 + 8
        let mut too_big = good.clone();
        too_big[40..48].copy_from_slice(&1000u64.to_le_bytes());
        assert!(matches!(
            Bundle::parse(&too_big).unwrap_err(),
            ContainerError::Truncated {
                field: "entry payload",
                entry: super::super::error::EntryIndex(Some(0)),
                ..
            }
        ));
        let mut overflow = good.clone();
        overflow[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            Bundle::parse(&overflow).unwrap_err(),
            ContainerError::Invalid {
                field: "entry size",
                ..
            }
        ));
        let mut overlap = good.clone();
        overlap[32..40].copy_from_slice(&8u64.to_le_bytes());
        assert!(matches!(
            Bundle::parse(&overlap).unwrap_err(),
            ContainerError::Invalid {
                field: "entry offset",
                ..
            }
        ));
        let mut bad_utf8 = good.clone();
        bad_utf8[56] = 0xff;
        assert!(matches!(
            Bundle::parse(&bad_utf8).unwrap_err(),
            ContainerError::Invalid {
                field: "entry id",
                ..
            }
        ));
        for cut in 0..good.len() {
            assert!(
                Bundle::parse(&good[..cut]).is_err(),
                "truncated at {cut} parsed"
            );
        }
    }
}
