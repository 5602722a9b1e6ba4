//! Bounded decompression of compressed-bundle payloads: streaming (stop as soon as the
//! wanted bytes are out) and whole (one pass into one buffer).
//!
//! Nothing here trusts the header: output past the declared size stops decoding at once, a
//! stream that ends early is an error, buffers grow with the data actually produced rather
//! than with a declared size, and the MD5-based hash is checked whenever every byte passed
//! through. It knows nothing of bundle tables (see `bundle`) or CCOB headers (see `ccob`).

use md5::{Digest, Md5};

use super::probe::Probe;
use super::zstd_stream::{ZstdError, ZstdStream};
use super::{Compression, ContainerError, Format};

/// Largest zstd window accepted (2^30 bytes). LLVM writes long-distance-matching frames with
/// windows up to 2^27; a larger claim is refused rather than allocated.
const ZSTD_WINDOW_LOG_MAX: u32 = 30;
/// Chunk used when measuring a zlib stream.
const CHUNK: usize = 64 * 1024;

/// The LLVM hash of a bundle: first 8 bytes of its MD5, read little-endian.
pub fn bundle_hash(data: &[u8]) -> u64 {
    finish_hash(Md5::new_with_prefix(data))
}

fn finish_hash(h: Md5) -> u64 {
    let digest = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

/// Bytes decoded per call when output is discarded (skipping to an entry) or streamed out: as
/// large as zstd's own output block (`ZSTD_DStreamOutSize`), so each call flushes whole
/// blocks, and small enough to stay in the L2 cache.
const STREAM_CHUNK: usize = 128 * 1024;

enum Decoder<'a> {
    /// zstd through its streaming API: the decoder keeps the window, we hand it the output
    /// memory (spare capacity, never zero-filled first).
    Zstd {
        stream: Box<ZstdStream>,
        input: &'a [u8],
        pos: usize,
        finished: bool,
    },
    Zlib {
        z: Box<flate2::Decompress>,
        input: &'a [u8],
        scratch: Box<[u8]>,
        finished: bool,
    },
}

/// A streaming decoder that counts, bounds and optionally hashes what it produces.
pub(crate) struct Inflater<'a> {
    decoder: Decoder<'a>,
    method: Compression,
    /// Offset of the compressed bundle, for errors.
    origin: u64,
    declared: u64,
    produced: u64,
    hasher: Option<Hasher>,
}

/// Payloads at least this large are hashed on a second thread while decoding goes on: MD5
/// (~600 MB/s) is slower than zstd decoding, so hashing inline would double the time.
const PIPELINE_HASH_FROM: u64 = 16 << 20;
/// Bytes handed to the hashing thread at a time, and how many such chunks may wait.
const HASH_CHUNK: usize = 1 << 20;
const HASH_QUEUE: usize = 4;

/// MD5 of the inflated bytes, inline or pipelined onto a second thread.
enum Hasher {
    Inline(Md5),
    Pipelined {
        pending: Vec<u8>,
        chunks: std::sync::mpsc::SyncSender<Vec<u8>>,
        spare: std::sync::mpsc::Receiver<Vec<u8>>,
        worker: std::thread::JoinHandle<Md5>,
    },
}

impl Hasher {
    fn new(already: &[u8], expected_total: u64) -> Hasher {
        let h = Md5::new_with_prefix(already);
        if expected_total < PIPELINE_HASH_FROM {
            return Hasher::Inline(h);
        }
        let (chunks, incoming) = std::sync::mpsc::sync_channel::<Vec<u8>>(HASH_QUEUE);
        let (recycle, spare) = std::sync::mpsc::sync_channel::<Vec<u8>>(HASH_QUEUE + 2);
        let spawned = std::thread::Builder::new()
            .name("rocload-md5".into())
            .spawn(move || {
                let mut h = h;
                for chunk in incoming {
                    h.update(&chunk);
                    let _ = recycle.try_send(chunk); // buffers go back for reuse; dropped if full
                }
                h
            });
        match spawned {
            Ok(worker) => Hasher::Pipelined {
                pending: Vec::with_capacity(HASH_CHUNK),
                chunks,
                spare,
                worker,
            },
            // No thread to be had: hash inline, slower but the same answer.
            Err(_) => {
                tracing::debug!("no thread for hashing; hashing inline");
                Hasher::Inline(Md5::new_with_prefix(already))
            }
        }
    }

    fn update(&mut self, mut data: &[u8]) {
        match self {
            Hasher::Inline(h) => h.update(data),
            Hasher::Pipelined {
                pending,
                chunks,
                spare,
                ..
            } => {
                while !data.is_empty() {
                    let take = (HASH_CHUNK - pending.len()).min(data.len());
                    pending.extend_from_slice(&data[..take]);
                    data = &data[take..];
                    if pending.len() == HASH_CHUNK {
                        let mut next = spare
                            .try_recv()
                            .unwrap_or_else(|_| Vec::with_capacity(HASH_CHUNK));
                        next.clear();
                        let full = std::mem::replace(pending, next);
                        // The worker only stops when the sender is dropped, so this send
                        // fails only if it panicked; `finish` then reports no digest.
                        let _ = chunks.send(full);
                    }
                }
            }
        }
    }

    /// The digest, or `None` if the hashing thread died.
    fn finish(self) -> Option<u64> {
        match self {
            Hasher::Inline(h) => Some(finish_hash(h)),
            Hasher::Pipelined {
                pending,
                chunks,
                worker,
                ..
            } => {
                let _ = chunks.send(pending);
                drop(chunks);
                worker.join().ok().map(finish_hash)
            }
        }
    }
}

impl<'a> Inflater<'a> {
    pub fn new(
        payload: &'a [u8],
        method: Compression,
        declared: u64,
        origin: u64,
    ) -> Result<Self, ContainerError> {
        let decoder = match method {
            Compression::Zstd => {
                let stream =
                    ZstdStream::new(ZSTD_WINDOW_LOG_MAX).map_err(|e| zstd_error(origin, 0, e))?;
                Decoder::Zstd {
                    stream: Box::new(stream),
                    input: payload,
                    pos: 0,
                    finished: false,
                }
            }
            Compression::Zlib => Decoder::Zlib {
                z: Box::new(flate2::Decompress::new(true)),
                input: payload,
                scratch: vec![0u8; STREAM_CHUNK].into_boxed_slice(),
                finished: false,
            },
        };
        Ok(Inflater {
            decoder,
            method,
            origin,
            declared,
            produced: 0,
            hasher: None,
        })
    }

    /// Starts hashing; `already` are the bytes produced so far (kept by the caller).
    pub fn start_hashing(&mut self, already: &[u8]) {
        self.hasher = Some(Hasher::new(already, self.declared));
    }

    pub fn produced(&self) -> u64 {
        self.produced
    }

    /// Appends up to `want` decoded bytes to `out`, which must have that much spare capacity
    /// (for zlib, any). Returns how many; 0 only at the end of the stream.
    fn fill(&mut self, out: &mut Vec<u8>, want: usize) -> Result<usize, ContainerError> {
        let before = out.len();
        // Never decode more than one byte past the declared size: a bomb stops right there.
        let left = self
            .declared
            .saturating_sub(self.produced)
            .saturating_add(1);
        let want = want.min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = match &mut self.decoder {
            Decoder::Zstd {
                stream,
                input,
                pos,
                finished,
            } => loop {
                if *finished || want == 0 {
                    break 0;
                }
                let (len, at) = (out.len(), *pos);
                let hint = stream
                    .decompress(out, want, input, pos)
                    .map_err(|e| zstd_error(self.origin, self.produced, e))?;
                let (written, consumed) = (out.len() - len, *pos - at);
                if hint == 0 {
                    // The frame is complete and flushed; trailing bytes belong to nobody.
                    *finished = true;
                }
                if written > 0 {
                    break written;
                }
                if !*finished && consumed == 0 && *pos == input.len() {
                    return Err(corrupt(
                        self.origin,
                        self.method,
                        self.produced,
                        "the compressed payload ends before its zstd frame does",
                    ));
                }
            },
            Decoder::Zlib {
                z,
                input,
                scratch,
                finished,
            } => loop {
                if *finished || want == 0 {
                    break 0;
                }
                let room = want.min(scratch.len());
                let (in_before, out_before) = (z.total_in(), z.total_out());
                let status = z
                    .decompress(
                        &input[(in_before as usize).min(input.len())..],
                        &mut scratch[..room],
                        flate2::FlushDecompress::None,
                    )
                    .map_err(|e| corrupt(self.origin, self.method, self.produced, e))?;
                let written = (z.total_out() - out_before) as usize;
                if status == flate2::Status::StreamEnd {
                    *finished = true;
                }
                if written > 0 {
                    reserve(out, written as u64, "inflated bytes")?;
                    out.extend_from_slice(&scratch[..written]);
                    break written;
                }
                if !*finished && z.total_in() == in_before {
                    return Err(corrupt(
                        self.origin,
                        self.method,
                        self.produced,
                        "the compressed payload ends before its zlib stream does",
                    ));
                }
            },
        };
        self.produced += n as u64;
        if self.produced > self.declared {
            return Err(ContainerError::SizeMismatch {
                offset: self.origin,
                declared: self.declared,
                actual: self.produced,
                exceeded: true,
            });
        }
        if let Some(h) = &mut self.hasher {
            h.update(&out[before..]);
        }
        Ok(n)
    }

    /// Appends exactly `size` more bytes to `out` (reserving them fallibly, decoded in place);
    /// the stream ending first is a size mismatch.
    pub fn append(&mut self, out: &mut Vec<u8>, size: u64) -> Result<(), ContainerError> {
        reserve(out, size, "entry")?;
        if size >= HUGE_PAGE_FROM {
            advise_huge_pages(out);
        }
        let mut remaining = size;
        while remaining > 0 {
            let want = usize::try_from(remaining).unwrap_or(usize::MAX);
            let n = self.fill(out, want)?;
            if n == 0 {
                return Err(self.ended_early());
            }
            remaining -= n as u64;
        }
        Ok(())
    }

    /// Reads the next `size` bytes into a new buffer of exactly that size, reserved fallibly
    /// (callers cap `size` first: see `Limits::max_entry_size`).
    pub fn read_vec(&mut self, size: u64) -> Result<Vec<u8>, ContainerError> {
        let mut out = Vec::new();
        self.append(&mut out, size)?;
        Ok(out)
    }

    /// Discards output until `produced() == target`.
    pub fn skip_to(&mut self, target: u64) -> Result<(), ContainerError> {
        let mut scratch = Vec::new();
        reserve(&mut scratch, STREAM_CHUNK as u64, "a decoding buffer")?;
        while self.produced < target {
            scratch.clear();
            let want = (target - self.produced).min(STREAM_CHUNK as u64) as usize;
            if self.fill(&mut scratch, want)? == 0 {
                return Err(self.ended_early());
            }
        }
        Ok(())
    }

    /// Streams everything that is left to `sink`, chunk by chunk, then checks the total size
    /// and, if hashing, the hash.
    pub fn stream_rest(
        &mut self,
        expected_hash: u64,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), ContainerError>,
    ) -> Result<(), ContainerError> {
        let mut chunk = Vec::new();
        reserve(&mut chunk, STREAM_CHUNK as u64, "a decoding buffer")?;
        loop {
            chunk.clear();
            if self.fill(&mut chunk, STREAM_CHUNK)? == 0 {
                break;
            }
            sink(&chunk)?;
        }
        self.finish(expected_hash)
    }

    /// Reads to the end of the stream, checking the total size and, if hashing, the hash.
    pub fn finish(&mut self, expected_hash: u64) -> Result<(), ContainerError> {
        self.skip_to(self.declared)?;
        let mut probe = Vec::with_capacity(1);
        if self.fill(&mut probe, 1)? != 0 {
            // `fill` already reported the overflow; keep the compiler content.
            return Err(ContainerError::SizeMismatch {
                offset: self.origin,
                declared: self.declared,
                actual: self.produced,
                exceeded: true,
            });
        }
        if let Some(h) = self.hasher.take() {
            let actual = h.finish().ok_or(ContainerError::OutOfMemory {
                what: "the hashing thread, which stopped",
                size: 0,
            })?;
            if actual != expected_hash {
                return Err(ContainerError::HashMismatch {
                    offset: self.origin,
                    expected: expected_hash,
                    actual,
                });
            }
            tracing::debug!(
                offset = self.origin,
                hash = format_args!("{actual:#018x}"),
                "ccob hash verified"
            );
        }
        Ok(())
    }

    fn ended_early(&self) -> ContainerError {
        ContainerError::SizeMismatch {
            offset: self.origin,
            declared: self.declared,
            actual: self.produced,
            exceeded: false,
        }
    }
}

fn corrupt(
    origin: u64,
    method: Compression,
    produced: u64,
    e: impl std::fmt::Display,
) -> ContainerError {
    ContainerError::Corrupt {
        offset: origin,
        method,
        produced,
        reason: e.to_string(),
    }
}

/// A zstd error as a typed error: the decoder failing to allocate its window is out of
/// memory, anything else is corruption.
fn zstd_error(origin: u64, produced: u64, e: ZstdError) -> ContainerError {
    if e.out_of_memory {
        return ContainerError::OutOfMemory {
            what: "the zstd decoder's window",
            size: 0,
        };
    }
    corrupt(origin, Compression::Zstd, produced, e.name)
}

fn reserve(v: &mut Vec<u8>, additional: u64, what: &'static str) -> Result<(), ContainerError> {
    let add = usize::try_from(additional).map_err(|_| ContainerError::OutOfMemory {
        what,
        size: additional,
    })?;
    v.try_reserve_exact(add)
        .map_err(|_| ContainerError::OutOfMemory {
            what,
            size: additional,
        })
}

/// How many bytes `payload` really inflates to, output discarded, counting no further than
/// `cap`: `(n, false)`, or `(more than cap, true)` when decoding stopped there. For the error
/// when what a header declares proves wrong (time bounded by `cap`, memory by one chunk).
pub(crate) fn inflated_len(
    payload: &[u8],
    method: Compression,
    cap: u64,
    origin: u64,
) -> Result<(u64, bool), ContainerError> {
    let mut inf = Inflater::new(payload, method, cap, origin)?;
    let mut scratch = Vec::new();
    reserve(&mut scratch, STREAM_CHUNK as u64, "a decoding buffer")?;
    loop {
        scratch.clear();
        match inf.fill(&mut scratch, STREAM_CHUNK) {
            Ok(0) => return Ok((inf.produced, false)),
            Ok(_) => {}
            Err(ContainerError::SizeMismatch {
                exceeded: true,
                actual,
                ..
            }) => return Ok((actual, true)),
            Err(e) => return Err(e),
        }
    }
}

/// Output buffers at least this large ask the kernel for transparent huge pages.
const HUGE_PAGE_FROM: u64 = 4 << 20;

/// Asks for transparent huge pages over `v`'s capacity: a fresh 250 MB buffer otherwise costs
/// 61,000 page faults as decoding first touches it, a large part of decoding time. Advice
/// only: refused advice (THP off, old kernel) changes nothing.
fn advise_huge_pages(v: &mut Vec<u8>) {
    const HUGE: usize = 2 << 20;
    let start = v.as_mut_ptr() as usize;
    let Some(end) = start.checked_add(v.capacity()) else {
        return;
    };
    let (from, to) = ((start + HUGE - 1) & !(HUGE - 1), end & !(HUGE - 1));
    if from >= to {
        return;
    }
    // SAFETY: [from, to) lies inside `v`'s allocation; MADV_HUGEPAGE changes how the kernel
    // backs the pages, never their contents or validity.
    let r = unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE) };
    tracing::debug!(
        bytes = to - from,
        accepted = r == 0,
        "asked for transparent huge pages"
    );
}

/// The inflated prefix of a payload, grown on demand: lets the bundle table reader list a
/// compressed bundle while inflating no further than the end of its table.
pub(crate) struct InflatingProbe<'a> {
    pub inflater: Inflater<'a>,
    pub prefix: Vec<u8>,
}

impl Probe for InflatingProbe<'_> {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<bool, ContainerError> {
        let Some(end) = offset.checked_add(buf.len() as u64) else {
            return Ok(false);
        };
        if end > self.inflater.declared {
            return Ok(false);
        }
        while (self.prefix.len() as u64) < end {
            let start = self.prefix.len() as u64;
            // Inflate a little ahead: tables are read field by field.
            let want = (end - start).max(4096).min(self.inflater.declared - start);
            reserve(&mut self.prefix, want, "bundle table")?;
            if self.inflater.fill(&mut self.prefix, want as usize)? == 0 {
                return Err(self.inflater.ended_early());
            }
        }
        buf.copy_from_slice(&self.prefix[offset as usize..end as usize]);
        Ok(true)
    }

    fn known_len(&self) -> Option<u64> {
        Some(self.inflater.declared)
    }
}

/// Inflates a whole payload in one pass into one buffer of exactly `declared` bytes, which
/// is the fastest way when every byte is wanted in memory.
pub(crate) fn inflate_all(
    payload: &[u8],
    method: Compression,
    declared: u64,
    origin: u64,
) -> Result<Vec<u8>, ContainerError> {
    match method {
        Compression::Zstd => {
            // The frame usually states its content size: a disagreement is caught before any
            // buffer is reserved. Without it, stream (buffers grow with real output).
            match zstd::zstd_safe::get_frame_content_size(payload) {
                Ok(Some(n)) if n != declared => {
                    return Err(ContainerError::SizeMismatch {
                        offset: origin,
                        declared,
                        actual: n,
                        exceeded: n > declared,
                    })
                }
                Ok(Some(_)) => {}
                _ => return inflate_streaming(payload, method, declared, origin),
            }
            let mut out = Vec::new();
            reserve(&mut out, declared, "inflated bundle")?;
            if declared >= HUGE_PAGE_FROM {
                advise_huge_pages(&mut out);
            }
            // One-shot decoding writes straight into the output, which doubles as the window.
            let mut d = zstd::zstd_safe::DCtx::try_create().ok_or(ContainerError::OutOfMemory {
                what: "a zstd decoder",
                size: 0,
            })?;
            d.decompress(&mut out, payload).map_err(|code| {
                corrupt(origin, method, 0, zstd::zstd_safe::get_error_name(code))
            })?;
            if out.len() as u64 != declared {
                return Err(ContainerError::SizeMismatch {
                    offset: origin,
                    declared,
                    actual: out.len() as u64,
                    exceeded: false,
                });
            }
            Ok(out)
        }
        Compression::Zlib => inflate_streaming(payload, method, declared, origin),
    }
}

fn inflate_streaming(
    payload: &[u8],
    method: Compression,
    declared: u64,
    origin: u64,
) -> Result<Vec<u8>, ContainerError> {
    let mut inf = Inflater::new(payload, method, declared, origin)?;
    let out = inf.read_vec(declared)?;
    let mut probe = Vec::with_capacity(1);
    if inf.fill(&mut probe, 1)? != 0 {
        return Err(ContainerError::SizeMismatch {
            offset: origin,
            declared,
            actual: inf.produced(),
            exceeded: true,
        });
    }
    Ok(out)
}

/// Length of the zstd frame starting at `start`, read from its frame and block headers alone
/// (nothing is decoded). Used for CCOB v1, whose header has no total size.
pub(crate) fn zstd_frame_len<P: Probe + ?Sized>(
    probe: &mut P,
    start: u64,
) -> Result<u64, ContainerError> {
    let mut r = super::probe::FieldReader {
        probe,
        format: Format::Ccob,
    };
    let magic = r.u32(start, "zstd frame magic")?;
    if magic != 0xFD2F_B528 {
        return Err(ContainerError::invalid(
            Format::Ccob,
            "zstd frame magic",
            None,
            start,
            format!("{magic:#010x} is not a zstd frame"),
        ));
    }
    let [descriptor] = r.bytes::<1>(start + 4, "zstd frame header", None)?;
    let fcs_flag = descriptor >> 6;
    let single_segment = descriptor & 0x20 != 0;
    let checksum = descriptor & 0x04 != 0;
    if descriptor & 0x08 != 0 {
        return Err(ContainerError::invalid(
            Format::Ccob,
            "zstd frame header",
            None,
            start + 4,
            "reserved bit set",
        ));
    }
    let dict_len = [0u64, 1, 2, 4][(descriptor & 3) as usize];
    let fcs_len = match fcs_flag {
        0 => u64::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let mut pos = start + 5 + u64::from(!single_segment) + dict_len + fcs_len;
    loop {
        let [b0, b1, b2] = r.bytes::<3>(pos, "zstd block header", None)?;
        let header = u32::from(b0) | u32::from(b1) << 8 | u32::from(b2) << 16;
        let last = header & 1 != 0;
        let block_type = (header >> 1) & 3;
        let size = u64::from(header >> 3);
        let content = match block_type {
            0 | 2 => size,
            1 => 1,
            _ => {
                return Err(ContainerError::invalid(
                    Format::Ccob,
                    "zstd block header",
                    None,
                    pos,
                    "reserved block type",
                ))
            }
        };
        pos = pos + 3 + content;
        if last {
            break;
        }
    }
    if checksum {
        pos += 4;
    }
    // The frame must really be there: check its last byte.
    r.bytes::<1>(pos - 1, "zstd frame", None)?;
    Ok(pos - start)
}

/// Length of the zlib stream starting at `start`: v1 zlib bundles record no size, and a
/// deflate stream's end is only known by decoding it. The output is discarded as it comes
/// (bounded by `declared`), so this costs time but no memory.
pub(crate) fn zlib_stream_len<P: Probe + ?Sized>(
    probe: &mut P,
    start: u64,
    declared: u64,
) -> Result<u64, ContainerError> {
    let mut z = flate2::Decompress::new(true);
    let mut input = vec![0u8; CHUNK];
    let mut output = vec![0u8; CHUNK];
    let (mut lo, mut hi) = (0usize, 0usize); // unconsumed input is input[lo..hi]
    let mut next_read = start;
    let mut eof = false;
    loop {
        if lo == hi && !eof {
            // Refill, halving the request near the end of the input.
            let mut want = CHUNK;
            loop {
                if probe.read_at(next_read, &mut input[..want])? {
                    (lo, hi) = (0, want);
                    next_read += want as u64;
                    break;
                }
                if want == 1 {
                    eof = true;
                    break;
                }
                want /= 2;
            }
        }
        let (in_before, out_before) = (z.total_in(), z.total_out());
        let status = z
            .decompress(&input[lo..hi], &mut output, flate2::FlushDecompress::None)
            .map_err(|e| corrupt(0, Compression::Zlib, z.total_out(), e))?;
        lo += (z.total_in() - in_before) as usize;
        if z.total_out() > declared {
            return Err(ContainerError::SizeMismatch {
                offset: 0,
                declared,
                actual: z.total_out(),
                exceeded: true,
            });
        }
        if status == flate2::Status::StreamEnd {
            return Ok(z.total_in());
        }
        let progress = z.total_in() != in_before || z.total_out() != out_before;
        if eof && lo == hi && !progress {
            return Err(ContainerError::truncated(
                Format::Ccob,
                "zlib stream",
                None,
                start,
                z.total_in() + 1,
                start + z.total_in(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_length_matches_libzstd() {
        for size in [0usize, 1, 100, 200_000, 1_000_000] {
            let data: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
            let mut frame = zstd::bulk::compress(&data, 3).unwrap();
            let expected = zstd::zstd_safe::find_frame_compressed_size(&frame).unwrap() as u64;
            frame.extend_from_slice(b"trailing");
            let mut probe: &[u8] = &frame;
            assert_eq!(zstd_frame_len(&mut probe, 0).unwrap(), expected);
        }
    }

    #[test]
    fn bombs_stop_at_the_declared_size() {
        let data = vec![0u8; 10_000_000];
        let frame = zstd::bulk::compress(&data, 3).unwrap();
        let mut inf = Inflater::new(&frame, Compression::Zstd, 1000, 0).unwrap();
        let err = inf.read_vec(10_000_000).unwrap_err();
        assert!(
            matches!(err, ContainerError::SizeMismatch { exceeded: true, .. }),
            "{err}"
        );
        assert!(inf.produced() <= 1000 + STREAM_CHUNK as u64);
        let err = inflate_all(&frame, Compression::Zstd, 1000, 0).unwrap_err();
        assert!(
            matches!(err, ContainerError::SizeMismatch { exceeded: true, .. }),
            "{err}"
        );
    }
}
