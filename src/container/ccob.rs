//! Compressed offload bundles ("CCOB" v1, v2, v3; zlib or zstd): header parsing, listing
//! that inflates only the entry table, and extraction that stops once its entry is out.
//!
//! The payload inflates to a plain bundle (see `bundle`); decoding itself lives in `inflate`.

use super::bundle::{owned_entries, read_table};
use super::inflate::{
    inflate_all, inflated_len, zlib_stream_len, zstd_frame_len, Inflater, InflatingProbe,
};
use super::probe::{FieldReader, Probe};
use super::{Compression, ContainerError, EntryInfo, Format, HashCheck, ReadOptions};

/// The 4-byte magic of a compressed bundle.
pub const CCOB_MAGIC: &[u8; 4] = b"CCOB";

/// A compressed bundle's header, normalised across versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CcobHeader {
    /// Format version: 1, 2 or 3.
    pub version: u16,
    /// Compression method.
    pub compression: Compression,
    /// Header plus payload, when the version records it (v2, v3).
    pub total_size: Option<u64>,
    /// Size of the inflated bundle.
    pub uncompressed_size: u64,
    /// First 8 bytes of the MD5 of the inflated bundle, little-endian.
    pub hash: u64,
    /// Bytes before the payload: 20, 24 or 32.
    pub header_len: u64,
}

impl CcobHeader {
    /// Reads and checks the header at offset 0 of `probe`.
    pub(crate) fn read<P: Probe + ?Sized>(
        probe: &mut P,
        options: &ReadOptions,
    ) -> Result<Self, ContainerError> {
        let mut r = FieldReader {
            probe,
            format: Format::Ccob,
        };
        let magic: [u8; 4] = r.bytes(0, "magic", None)?;
        if &magic != CCOB_MAGIC {
            return Err(ContainerError::invalid(
                Format::Ccob,
                "magic",
                None,
                0,
                "not CCOB",
            ));
        }
        let version = r.u16(4, "version")?;
        let method = r.u16(6, "compression method")?;
        let (total_size, uncompressed_size, hash, header_len) = match version {
            1 => (
                None,
                u64::from(r.u32(8, "uncompressed size")?),
                r.u64(12, "hash", None)?,
                20,
            ),
            2 => (
                Some(u64::from(r.u32(8, "total size")?)),
                u64::from(r.u32(12, "uncompressed size")?),
                r.u64(16, "hash", None)?,
                24,
            ),
            3 => (
                Some(r.u64(8, "total size", None)?),
                r.u64(16, "uncompressed size", None)?,
                r.u64(24, "hash", None)?,
                32,
            ),
            v => {
                return Err(ContainerError::Unsupported {
                    format: Format::Ccob,
                    field: "version",
                    offset: 4,
                    value: v.into(),
                })
            }
        };
        let compression = match method {
            0 => Compression::Zlib,
            1 => Compression::Zstd,
            m => {
                return Err(ContainerError::Unsupported {
                    format: Format::Ccob,
                    field: "compression method",
                    offset: 6,
                    value: m.into(),
                })
            }
        };
        if let Some(total) = total_size {
            if total < header_len {
                return Err(ContainerError::invalid(
                    Format::Ccob,
                    "total size",
                    None,
                    8,
                    format!("{total} is smaller than the {header_len}-byte header"),
                ));
            }
        }
        if uncompressed_size > options.limits.max_inflated_size {
            return Err(ContainerError::LimitExceeded {
                format: Format::Ccob,
                field: "uncompressed size",
                entry: super::error::EntryIndex(None),
                offset: if version == 1 {
                    8
                } else {
                    12 + 4 * u64::from(version == 3)
                },
                value: uncompressed_size,
                limit: options.limits.max_inflated_size,
            });
        }
        Ok(CcobHeader {
            version,
            compression,
            total_size,
            uncompressed_size,
            hash,
            header_len,
        })
    }

    /// How many bytes the compressed bundle occupies from its magic on. v1 records no total
    /// size: a zstd payload is measured from its frame and block headers; a zlib one only by
    /// decoding it (output discarded), which is slow but rare (LLVM 18 wrote zstd).
    pub(crate) fn extent<P: Probe + ?Sized>(&self, probe: &mut P) -> Result<u64, ContainerError> {
        let extent = match (self.total_size, self.compression) {
            (Some(total), _) => total,
            (None, Compression::Zstd) => self.header_len + zstd_frame_len(probe, self.header_len)?,
            (None, Compression::Zlib) => {
                self.header_len + zlib_stream_len(probe, self.header_len, self.uncompressed_size)?
            }
        };
        if let Some(len) = probe.known_len() {
            if extent > len {
                return Err(ContainerError::truncated(
                    Format::Ccob,
                    "compressed payload",
                    None,
                    self.header_len,
                    extent - self.header_len,
                    len.saturating_sub(self.header_len) + self.header_len,
                ));
            }
        }
        Ok(extent)
    }
}

/// A compressed bundle borrowed from its input. Opening it reads the header only.
#[derive(Debug, Clone)]
pub struct CompressedBundle<'a> {
    data: &'a [u8],
    header: CcobHeader,
    options: ReadOptions,
}

impl<'a> CompressedBundle<'a> {
    /// Parses the header of the compressed bundle at `data[0]`; `data` may run past its end.
    pub fn parse(data: &'a [u8], options: &ReadOptions) -> Result<Self, ContainerError> {
        let mut probe = data;
        let header = CcobHeader::read(&mut probe, options)?;
        let extent = header.extent(&mut probe)?;
        let data = crate::bytes::slice_at(data, 0, extent).ok_or_else(|| {
            ContainerError::truncated(
                Format::Ccob,
                "compressed payload",
                None,
                0,
                extent,
                data.len() as u64,
            )
        })?;
        Ok(CompressedBundle {
            data,
            header,
            options: options.clone(),
        })
    }

    /// The header.
    pub fn header(&self) -> &CcobHeader {
        &self.header
    }

    /// Bytes from the magic to the end of the payload.
    pub fn size(&self) -> u64 {
        self.data.len() as u64
    }

    /// The bundle's bytes, header included.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.data
    }

    /// The compressed payload.
    pub fn payload(&self) -> &'a [u8] {
        self.data
            .get(self.header.header_len as usize..)
            .unwrap_or(&[])
    }

    fn inflater(&self) -> Result<Inflater<'a>, ContainerError> {
        Inflater::new(
            self.payload(),
            self.header.compression,
            self.header.uncompressed_size,
            0,
        )
    }

    fn table(&self) -> Result<(InflatingProbe<'a>, super::bundle::Table), ContainerError> {
        let mut probe = InflatingProbe {
            inflater: self.inflater()?,
            prefix: Vec::new(),
        };
        let table =
            read_table(&mut probe, &self.options.limits).map_err(|e| self.table_error(e))?;
        Ok((probe, table))
    }

    /// The error for a table that does not fit in the declared uncompressed size: the header
    /// may be what lies. The payload is then measured (output discarded, up to the
    /// `max_inflated_size` limit), and a size that differs from the declared one is the error
    /// reported; otherwise the table's own error, with offsets into the inflated data.
    fn table_error(&self, e: ContainerError) -> ContainerError {
        let past_declared = matches!(
            e,
            ContainerError::Truncated { .. }
                | ContainerError::Invalid {
                    field: "entry payload",
                    ..
                }
        );
        if past_declared {
            let declared = self.header.uncompressed_size;
            let cap = self.options.limits.max_inflated_size.max(declared);
            match inflated_len(self.payload(), self.header.compression, cap, 0) {
                Ok((actual, exceeded)) if actual != declared => {
                    tracing::debug!(declared, actual, exceeded, table_error = %e, "ccob header's uncompressed size is wrong");
                    return ContainerError::SizeMismatch {
                        offset: 0,
                        declared,
                        actual,
                        exceeded,
                    };
                }
                Ok(_) => {}
                Err(measuring) => return measuring,
            }
        }
        in_payload(e)
    }

    /// Lists the entries, inflating only up to the end of the entry table.
    pub fn entries(&self) -> Result<Vec<EntryInfo<'static>>, ContainerError> {
        let (probe, table) = self.table()?;
        tracing::debug!(
            inflated = probe.prefix.len(),
            total = self.header.uncompressed_size,
            entries = table.entries.len(),
            "listed ccob entries"
        );
        Ok(owned_entries(&probe.prefix, &table))
    }

    /// Extracts the entry at `index` of the table. Decoding stops once that entry is out,
    /// unless the hash is to be checked: always with [`HashCheck::Always`], and with
    /// [`HashCheck::WhenComplete`] when the entry reaches the end of the payload anyway.
    ///
    /// # Errors
    /// [`ContainerError::EntryTooLarge`] for an entry over the read options'
    /// `max_entry_size`, before any of it is inflated; decoding and hash errors.
    pub fn extract(&self, index: usize) -> Result<Vec<u8>, ContainerError> {
        self.extract_limited(index, self.options.limits.max_entry_size)
    }

    /// [`CompressedBundle::extract`] with the entry size cap `max_entry_size`.
    pub(crate) fn extract_limited(
        &self,
        index: usize,
        max_entry_size: u64,
    ) -> Result<Vec<u8>, ContainerError> {
        let (mut probe, table) = self.table()?;
        let entries = owned_entries(&probe.prefix, &table);
        let entry = entries
            .get(index)
            .ok_or_else(|| ContainerError::EntryNotFound {
                wanted: format!("entry #{index}"),
                available: entries.iter().map(|e| e.id.to_string()).collect(),
            })?;
        if entry.size > max_entry_size {
            tracing::debug!(id = %entry.id, size = entry.size, limit = max_entry_size, "entry over the size cap; refused before inflating");
            return Err(ContainerError::EntryTooLarge {
                entry: entry.id.to_string(),
                index: index as u64,
                size: entry.size,
                limit: max_entry_size,
            });
        }
        let end = entry.offset + entry.size; // checked by read_table
        let declared = self.header.uncompressed_size;
        let verify = match self.options.verify {
            HashCheck::Always => true,
            HashCheck::WhenComplete => declared - end <= COMPLETE_SLACK,
            HashCheck::Never => false,
        };
        let mut inflater = probe.inflater;
        if verify {
            inflater.start_hashing(&probe.prefix);
        }
        let data = if end <= probe.prefix.len() as u64 {
            // The table prefix already holds the entry (small or empty entries).
            let part = &probe.prefix[entry.offset as usize..end as usize];
            let mut data = Vec::new();
            data.try_reserve_exact(part.len())
                .map_err(|_| ContainerError::OutOfMemory {
                    what: "entry",
                    size: entry.size,
                })?;
            data.extend_from_slice(part);
            data
        } else if entry.offset < probe.prefix.len() as u64 {
            // The entry starts inside the table prefix: keep that buffer and decode the rest
            // of the entry onto its end.
            let mut data = std::mem::take(&mut probe.prefix);
            data.drain(..entry.offset as usize);
            let rest = end - inflater.produced();
            inflater.append(&mut data, rest)?;
            data
        } else {
            drop(std::mem::take(&mut probe.prefix));
            inflater.skip_to(entry.offset)?;
            inflater.read_vec(entry.size)?
        };
        if verify {
            inflater.finish(self.header.hash)?;
        }
        tracing::debug!(id = %entry.id, size = entry.size, inflated = inflater.produced(), of = declared, verified = verify, "extracted ccob entry");
        Ok(data)
    }

    /// Extracts the first entry whose id is exactly `id`.
    pub fn extract_id(&self, id: &str) -> Result<Vec<u8>, ContainerError> {
        let entries = self.entries()?;
        match entries.iter().position(|e| e.id == id) {
            Some(i) => self.extract(i),
            None => Err(ContainerError::EntryNotFound {
                wanted: id.to_string(),
                available: entries.iter().map(|e| e.id.to_string()).collect(),
            }),
        }
    }

    /// Streams the whole inflated bundle to `out`, one 128 KiB chunk at a time, checking the
    /// size and (unless [`HashCheck::Never`]) the hash at the end: memory stays at the
    /// decoder's window plus one chunk whatever the size, and no output page is faulted in
    /// (what `rocload inflate` does, like `zstd -d`).
    ///
    /// # Errors
    /// Decoding, size and hash errors; [`ContainerError::Write`] when `out` fails.
    pub fn inflate_to(&self, out: &mut dyn std::io::Write) -> Result<(), ContainerError> {
        let mut inflater = self.inflater()?;
        if self.options.verify != HashCheck::Never {
            inflater.start_hashing(&[]);
        }
        inflater.stream_rest(self.header.hash, &mut |chunk| {
            out.write_all(chunk).map_err(ContainerError::Write)
        })?;
        out.flush().map_err(ContainerError::Write)?;
        tracing::debug!(size = inflater.produced(), method = %self.header.compression, verified = self.options.verify != HashCheck::Never, "streamed inflated ccob");
        Ok(())
    }

    /// Checks the whole payload, whatever the read options say: it is inflated (output
    /// discarded, one chunk of memory) to the declared size and no further, and its MD5-based
    /// hash compared with the header's. What `rocload ls --verify` and `select --verify` do.
    ///
    /// # Errors
    /// [`ContainerError::SizeMismatch`], [`ContainerError::HashMismatch`], decoding errors.
    pub fn verify(&self) -> Result<(), ContainerError> {
        let mut inflater = self.inflater()?;
        inflater.start_hashing(&[]);
        inflater.finish(self.header.hash)?;
        tracing::debug!(
            size = inflater.produced(),
            hash = format_args!("{:#018x}", self.header.hash),
            "ccob verified"
        );
        Ok(())
    }

    /// Inflates the whole payload in one pass, checking size and (unless
    /// [`HashCheck::Never`]) hash.
    pub fn inflate(&self) -> Result<Vec<u8>, ContainerError> {
        let (payload, method, declared) = (
            self.payload(),
            self.header.compression,
            self.header.uncompressed_size,
        );
        // One-shot decoding into the output is the fastest way to inflate everything (the
        // output doubles as the decoder's window). Hashing after it costs more than decoding
        // (MD5 runs at ~0.5 GB/s), which is why it can be turned off.
        let out = inflate_all(payload, method, declared, 0)?;
        if self.options.verify != HashCheck::Never {
            let actual = super::inflate::bundle_hash(&out);
            if actual != self.header.hash {
                return Err(ContainerError::HashMismatch {
                    offset: 0,
                    expected: self.header.hash,
                    actual,
                });
            }
        }
        tracing::debug!(size = out.len(), method = %self.header.compression, "inflated ccob");
        Ok(out)
    }
}

/// When an entry ends this close to the end of the payload, [`HashCheck::WhenComplete`]
/// inflates the rest too and checks the hash: the extra work is negligible.
const COMPLETE_SLACK: u64 = 64 * 1024;

/// Errors in the inflated bundle carry offsets into the inflated data: wrap them so the
/// message says so.
fn in_payload(e: ContainerError) -> ContainerError {
    match e {
        e @ (ContainerError::Truncated { .. }
        | ContainerError::Invalid { .. }
        | ContainerError::LimitExceeded { .. }) => ContainerError::InInflated {
            offset: 0,
            source: Box::new(e),
        },
        other => other,
    }
}

/// Writes a compressed bundle of `bundle` (a plain bundle's bytes): the inverse of
/// [`CompressedBundle::inflate`], for tests and synthetic inputs.
pub fn write_ccob(bundle: &[u8], version: u16, compression: Compression) -> Vec<u8> {
    let payload = match compression {
        Compression::Zstd => zstd::bulk::compress(bundle, 3).unwrap_or_default(),
        Compression::Zlib => {
            use std::io::Write;
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            let _ = e.write_all(bundle);
            e.finish().unwrap_or_default()
        }
    };
    let hash = super::inflate::bundle_hash(bundle);
    let method: u16 = match compression {
        Compression::Zlib => 0,
        Compression::Zstd => 1,
    };
    let mut out = Vec::with_capacity(payload.len() + 32);
    out.extend_from_slice(CCOB_MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&method.to_le_bytes());
    match version {
        1 => out.extend_from_slice(&(bundle.len() as u32).to_le_bytes()),
        2 => {
            out.extend_from_slice(&((payload.len() + 24) as u32).to_le_bytes());
            out.extend_from_slice(&(bundle.len() as u32).to_le_bytes());
        }
        _ => {
            out.extend_from_slice(&((payload.len() + 32) as u64).to_le_bytes());
            out.extend_from_slice(&(bundle.len() as u64).to_le_bytes());
        }
    }
    out.extend_from_slice(&hash.to_le_bytes());
    out.extend_from_slice(&payload);
    out
}
