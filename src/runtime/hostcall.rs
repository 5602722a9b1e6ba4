//! The host side of AMD's hostcall protocol, which device `printf` uses in clang-19's HIP with
//! the ROCm device libraries (ockl `hostcall_impl.cl` and `services.cl`; clr's
//! `devhostcall.cpp`, `devhcmessages.cpp` and `devhcprintf.cpp` are the reference consumer).
//!
//! A hostcall buffer in device memory (the kernel's `hidden_hostcall_buffer` argument) holds a
//! `buffer_t` { headers, payloads, doorbell signal, free stack, ready stack, index mask }, an
//! array of packet headers { next, active mask, service, control } and of payloads (64 lanes x
//! 8 words). A wave pops a free packet, fills its lanes' words, pushes it on the ready stack,
//! adds 1 to the doorbell (an `amd_signal_t`; with an event mailbox set, the device also sends
//! `s_sendmsg MSG_INTERRUPT`), then spins until the host clears the packet's ready flag and
//! reads the first two words of its lane back. [`HostcallBuffer::serve`] is that host: it takes
//! the whole ready stack, answers every packet and clears its flag.
//!
//! Services: messages (a stream of words per lane spread over several packets: descriptor bit 0
//! BEGIN, bit 1 END, bits 5-7 word count, bits 8-63 message id) carry `printf` (service 2): a
//! control word (bit 0: stderr), the format string padded to 8 bytes, then one word per integer,
//! float or pointer argument and padded bytes per string, formatted with the C library's own
//! printf one specifier at a time, as clr does, on the C `stdout` the program uses. Other services
//! are answered with zeros and logged. Not for the device side or for queues.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, CString};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::device::{Device, DeviceError, MemoryKind};

/// Packets in a buffer: at least as many as waves that may wait for the host at once.
pub const PACKETS: u64 = 1024;
/// Bits of a packet pointer that hold its index (the rest is the ABA tag).
const INDEX_BITS: u32 = 32;
/// Size of a packet header.
const HEADER_SIZE: u64 = 24;
/// Size of a payload: 64 lanes of 8 words.
const PAYLOAD_SIZE: u64 = 64 * 8 * 8;
/// `buffer_t` is padded to this before the headers.
const BUFFER_T_SIZE: u64 = 64;
/// The `amd_signal_t` used as the doorbell, and its event mailbox.
const SIGNAL_SIZE: u64 = 64;

/// Service numbers shared by the device libraries and clr.
const SERVICE_PRINTF: u32 = 2;

/// A hostcall buffer on one device, and the messages in flight through it.
#[derive(Debug)]
pub struct HostcallBuffer {
    device: Arc<dyn Device>,
    base: u64,
    messages: Mutex<Messages>,
    /// Event id the device writes to the mailbox with its interrupt (to tell buffers apart).
    event_id: u32,
}

#[derive(Debug, Default)]
struct Messages {
    next_id: u64,
    open: HashMap<u64, Vec<u64>>,
}

impl HostcallBuffer {
    /// Allocates and initialises a buffer on `device` (all packets on the free stack).
    ///
    /// # Errors
    /// The device's allocation error.
    pub fn new(device: Arc<dyn Device>, event_id: u32) -> Result<HostcallBuffer, DeviceError> {
        let size = Self::size();
        let allocation = device.allocate(size, MemoryKind::Hostcall)?;
        let base = allocation.base;
        let buffer = HostcallBuffer {
            device,
            base,
            messages: Mutex::new(Messages::default()),
            event_id,
        };
        let (headers, payloads) = (buffer.headers(), buffer.payloads());
        let signal = payloads + (PACKETS + 1) * PAYLOAD_SIZE;
        let mailbox = signal + SIGNAL_SIZE;
        // Packets are numbered 1..=PACKETS (a pointer of 0 ends a stack); each free packet
        // points to the next, the last to 0.
        for i in 1..=PACKETS {
            let next = if i == PACKETS { 0 } else { i + 1 };
            buffer
                .word(headers + i * HEADER_SIZE)
                .store(next, Ordering::Relaxed);
        }
        buffer.word(base).store(headers, Ordering::Relaxed);
        buffer.word(base + 8).store(payloads, Ordering::Relaxed);
        buffer.word(base + 16).store(signal, Ordering::Relaxed);
        buffer.word(base + 24).store(1, Ordering::Relaxed); // free stack: packet 1
        buffer.word(base + 32).store(0, Ordering::Relaxed); // ready stack: empty
                                                            // The mask that takes a packet's index out of a tagged stack pointer (device code reads
                                                            // all 64 bits at offset 40 and ANDs them with the pointer).
        buffer
            .word(base + 40)
            .store((1u64 << INDEX_BITS) - 1, Ordering::Relaxed);
        // amd_signal_t: kind 1 (user), value 0, event mailbox, event id.
        buffer.word(signal).store(1, Ordering::Relaxed);
        buffer.word(signal + 16).store(mailbox, Ordering::Relaxed);
        buffer.half(signal + 24).store(event_id, Ordering::Release);
        tracing::debug!(
            buffer = format_args!("{base:#x}"),
            packets = PACKETS,
            event_id,
            "hostcall buffer"
        );
        Ok(buffer)
    }

    /// Where the packet headers are (fixed by this layout; never read back from device memory,
    /// which a kernel could overwrite).
    fn headers(&self) -> u64 {
        self.base + BUFFER_T_SIZE
    }

    /// Where the payloads are.
    fn payloads(&self) -> u64 {
        (self.headers() + (PACKETS + 1) * HEADER_SIZE).next_multiple_of(64)
    }

    /// Bytes of a buffer.
    fn size() -> u64 {
        let payloads = (BUFFER_T_SIZE + (PACKETS + 1) * HEADER_SIZE).next_multiple_of(64);
        payloads + (PACKETS + 1) * PAYLOAD_SIZE + SIGNAL_SIZE + 8
    }

    /// The device address kernels get as `hidden_hostcall_buffer`.
    pub fn address(&self) -> u64 {
        self.base
    }

    /// The event id the device sends with its interrupt.
    pub fn event_id(&self) -> u32 {
        self.event_id
    }

    /// A 64-bit word of the buffer. Every address passed here is computed from the buffer's
    /// own layout and a packet index checked to lie in `1..=PACKETS`, never read from device
    /// memory.
    fn word(&self, address: u64) -> &AtomicU64 {
        debug_assert!(address >= self.base && address + 8 <= self.base + Self::size());
        debug_assert!(address % 8 == 0);
        // SAFETY: inside this buffer's live allocation and 8-byte aligned (by construction, see
        // above); the allocation outlives `self`, and device code accesses it only atomically
        // or by plain stores the protocol orders with the ready flag.
        unsafe { AtomicU64::from_ptr(address as *mut u64) }
    }

    fn half(&self, address: u64) -> &AtomicU32 {
        debug_assert!(address >= self.base && address + 4 <= self.base + Self::size());
        debug_assert!(address % 4 == 0);
        // SAFETY: as in `word`, for 4 bytes.
        unsafe { AtomicU32::from_ptr(address as *mut u32) }
    }

    /// Answers every packet on the ready stack. Returns how many were served.
    pub fn serve(&self) -> usize {
        let (headers, payloads) = (self.headers(), self.payloads());
        let mut ptr = self.word(self.base + 32).swap(0, Ordering::Acquire);
        let mut ready = Vec::new();
        while ptr != 0 && ready.len() <= PACKETS as usize {
            let index = ptr & ((1 << INDEX_BITS) - 1);
            if index == 0 || index > PACKETS {
                tracing::debug!(ptr, "hostcall: packet pointer outside the buffer; stopping");
                break;
            }
            ready.push(index);
            ptr = self
                .word(headers + index * HEADER_SIZE)
                .load(Ordering::Relaxed);
        }
        // The stack is last-in first-out; serve in submission order.
        for &index in ready.iter().rev() {
            let header = headers + index * HEADER_SIZE;
            let mask = self.word(header + 8).load(Ordering::Relaxed);
            let service = self.half(header + 16).load(Ordering::Relaxed);
            let payload = payloads + index * PAYLOAD_SIZE;
            for lane in 0..64 {
                if mask & (1 << lane) != 0 {
                    self.serve_lane(service, payload + lane * 64);
                }
            }
            // Clear the ready flag (bit 0 of control): the wave may read its results.
            self.half(header + 20).fetch_and(!1, Ordering::Release);
        }
        ready.len()
    }

    fn serve_lane(&self, service: u32, slot: u64) {
        let words: Vec<u64> = (0..8)
            .map(|i| self.word(slot + i * 8).load(Ordering::Relaxed))
            .collect();
        if service != SERVICE_PRINTF {
            tracing::debug!(service, "hostcall: unsupported service answered with zeros");
            self.word(slot).store(0, Ordering::Relaxed);
            self.word(slot + 8).store(0, Ordering::Relaxed);
            return;
        }
        let desc = words[0];
        let (begin, end) = (desc & 1 != 0, desc & 2 != 0);
        let len = ((desc >> 5) & 7) as usize;
        let mut messages = self.messages.lock();
        let id = if begin {
            messages.next_id += 1;
            let id = messages.next_id & ((1 << 56) - 1);
            messages.open.insert(id, Vec::new());
            id
        } else {
            desc >> 8
        };
        let Some(message) = messages.open.get_mut(&id) else {
            tracing::debug!(id, "hostcall: message id not open; ignored");
            return;
        };
        // Bounded: a printf message is a format string and its arguments.
        if message.len() < 1 << 20 {
            message.extend_from_slice(&words[1..1 + len]);
        }
        if end {
            let message = messages.open.remove(&id).unwrap_or_default();
            drop(messages);
            let printed = printf(&message);
            self.word(slot).store(printed as u64, Ordering::Relaxed);
            self.word(slot + 8).store(0, Ordering::Relaxed);
        } else {
            // The descriptor for the next packet of this message: its id, flags cleared.
            self.word(slot).store(id << 8, Ordering::Relaxed);
        }
    }
}

impl Drop for HostcallBuffer {
    fn drop(&mut self) {
        if let Err(e) = self.device.free(self.base) {
            tracing::debug!(error = %e, "freeing a hostcall buffer failed");
        }
    }
}

extern "C" {
    /// The C library's standard output stream, shared with the host program's own `printf`.
    static mut stdout: *mut libc::FILE;
    static mut stderr: *mut libc::FILE;
}

/// Prints one printf message (control word, format string, arguments) as clr does; returns
/// what printf returns (characters printed, or negative on error).
pub(crate) fn printf(message: &[u64]) -> i64 {
    let Some((&control, rest)) = message.split_first() else {
        return -1;
    };
    if control & !1 != 0 {
        return -1;
    }
    let bytes: Vec<u8> = rest.iter().flat_map(|w| w.to_le_bytes()).collect();
    let out = format(&bytes);
    // SAFETY: the C library's stream globals are initialised before main and never freed;
    // fwrite and fflush take them as given.
    unsafe {
        let stream = if control & 1 != 0 { stderr } else { stdout };
        libc::fwrite(out.as_ptr().cast(), 1, out.len(), stream);
        libc::fflush(stream);
    }
    out.len() as i64
}

/// The text a printf message produces: the format string cut at each conversion, each piece
/// formatted by the C library's `snprintf` with its argument.
pub(crate) fn format(bytes: &[u8]) -> Vec<u8> {
    let nul = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let fmt = &bytes[..nul];
    let mut args = &bytes[(nul + 1).next_multiple_of(8).min(bytes.len())..];
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            let next = fmt[i..]
                .iter()
                .position(|&b| b == b'%')
                .map_or(fmt.len(), |p| i + p);
            out.extend_from_slice(&fmt[i..next]);
            i = next;
            continue;
        }
        if fmt.get(i + 1) == Some(&b'%') {
            out.push(b'%');
            i += 2;
            continue;
        }
        let Some(len) = fmt[i + 1..]
            .iter()
            .position(|b| b"diouxXfFeEgGaAcspn".contains(b))
        else {
            break;
        };
        let spec = &fmt[i..i + len + 2];
        i += len + 2;
        if args.is_empty() {
            break;
        }
        let take = |args: &mut &[u8]| -> u64 {
            let (w, rest) = args.split_at(8.min(args.len()));
            *args = rest;
            let mut b = [0u8; 8];
            b[..w.len()].copy_from_slice(w);
            u64::from_le_bytes(b)
        };
        let stars: Vec<c_int> = (0..spec.iter().filter(|&&b| b == b'*').count().min(2))
            .map(|_| take(&mut args) as c_int)
            .collect();
        let conv = spec[spec.len() - 1];
        let text = match conv {
            b's' => {
                let end = args.iter().position(|&b| b == 0).unwrap_or(args.len());
                let s = CString::new(&args[..end]).unwrap_or_default();
                let formatted = c_format(spec, &stars, Arg::Str(&s));
                args = &args[(end + 1).next_multiple_of(8).min(args.len())..];
                formatted
            }
            b'n' => {
                take(&mut args);
                Vec::new()
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                c_format(spec, &stars, Arg::Float(f64::from_bits(take(&mut args))))
            }
            b'p' => c_format(spec, &stars, Arg::Ptr(take(&mut args))),
            _ => c_format(spec, &stars, Arg::Int(take(&mut args))),
        };
        out.extend_from_slice(&text);
    }
    out
}

enum Arg<'a> {
    Int(u64),
    Float(f64),
    Ptr(u64),
    Str(&'a CString),
}

/// One conversion formatted by the C library.
fn c_format(spec: &[u8], stars: &[c_int], arg: Arg<'_>) -> Vec<u8> {
    let Ok(spec) = CString::new(spec) else {
        return Vec::new();
    };
    let mut buf = vec![0u8; 512];
    loop {
        let (p, n) = (buf.as_mut_ptr().cast::<c_char>(), buf.len());
        let f = spec.as_ptr();
        // SAFETY: `f` is a NUL-terminated format holding exactly one conversion (with up to two
        // `*`s), and the arguments match it: `stars` ints, then one value of the type its
        // conversion character takes (64-bit integers are passed for every length modifier,
        // as clr does; the C library reads the width the modifier names). The output buffer
        // is `n` bytes.
        let written = unsafe {
            match (&arg, stars) {
                (Arg::Int(v), []) => libc::snprintf(p, n, f, *v),
                (Arg::Int(v), [a]) => libc::snprintf(p, n, f, *a, *v),
                (Arg::Int(v), [a, b, ..]) => libc::snprintf(p, n, f, *a, *b, *v),
                (Arg::Float(v), []) => libc::snprintf(p, n, f, *v),
                (Arg::Float(v), [a]) => libc::snprintf(p, n, f, *a, *v),
                (Arg::Float(v), [a, b, ..]) => libc::snprintf(p, n, f, *a, *b, *v),
                (Arg::Ptr(v), []) => libc::snprintf(p, n, f, *v as *const u8),
                (Arg::Ptr(v), [a]) => libc::snprintf(p, n, f, *a, *v as *const u8),
                (Arg::Ptr(v), [a, b, ..]) => libc::snprintf(p, n, f, *a, *b, *v as *const u8),
                (Arg::Str(s), []) => libc::snprintf(p, n, f, s.as_ptr()),
                (Arg::Str(s), [a]) => libc::snprintf(p, n, f, *a, s.as_ptr()),
                (Arg::Str(s), [a, b, ..]) => libc::snprintf(p, n, f, *a, *b, s.as_ptr()),
            }
        };
        let Ok(written) = usize::try_from(written) else {
            return Vec::new();
        };
        if written < buf.len() {
            buf.truncate(written);
            return buf;
        }
        if written > 1 << 20 {
            return Vec::new();
        }
        buf = vec![0u8; written + 1];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::SoftAgent;

    #[test]
    fn a_packet_pushed_as_the_device_does_is_answered_and_released() {
        let device = SoftAgent::new("gfx1030".parse().unwrap()).device();
        let hc = HostcallBuffer::new(device.clone(), 7).unwrap();
        let base = hc.address();
        // As ockl does: pop packet 1 from the free stack, fill lane 3, push it ready.
        let packet = hc.word(base + 24).load(Ordering::Acquire);
        assert_eq!(packet, 1);
        let header = hc.headers() + packet * HEADER_SIZE;
        let next_free = hc.word(header).load(Ordering::Relaxed);
        hc.word(base + 24).store(next_free, Ordering::Release);
        hc.word(header + 8).store(1 << 3, Ordering::Relaxed);
        hc.half(header + 16)
            .store(SERVICE_PRINTF, Ordering::Relaxed);
        hc.half(header + 20).store(1, Ordering::Relaxed);
        let slot = hc.payloads() + packet * PAYLOAD_SIZE + 3 * 64;
        // One message: BEGIN|END, 3 words: control 1 (stderr), "hc %d\n\0" padded, 5.
        let fmt = u64::from_le_bytes(*b"hc %d\n\0\0");
        let desc = 1 | 2 | (3 << 5);
        for (i, w) in [desc, 1, fmt, 5].iter().enumerate() {
            hc.word(slot + 8 * i as u64).store(*w, Ordering::Relaxed);
        }
        hc.word(header).store(0, Ordering::Relaxed);
        hc.word(base + 32).store(packet, Ordering::Release);
        assert_eq!(hc.serve(), 1);
        assert_eq!(
            hc.half(header + 20).load(Ordering::Acquire) & 1,
            0,
            "ready flag cleared"
        );
        assert_eq!(
            hc.word(slot).load(Ordering::Relaxed),
            5,
            "printf's return value: 5 chars"
        );
        assert_eq!(hc.word(base + 32).load(Ordering::Relaxed), 0);
        assert_eq!(hc.serve(), 0);
        // A corrupted ready stack (an index outside the buffer) is refused, not followed.
        hc.word(base + 32).store(PACKETS + 5, Ordering::Release);
        assert_eq!(hc.serve(), 0);
    }

    fn message(words: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for w in words {
            out.extend_from_slice(w);
            while out.len() % 8 != 0 {
                out.push(0);
            }
        }
        out
    }

    #[test]
    fn printf_messages_format_as_the_c_library_does() {
        let fmt = b"x=%d y=%5.2f s=%s p=%p %% %x %*d|\0";
        let bytes = message(&[
            fmt,
            &(-7i64 as u64).to_le_bytes(),
            &(-1234.5678f64).to_bits().to_le_bytes(),
            b"hi\0",
            &0x1234u64.to_le_bytes(),
            &255u64.to_le_bytes(),
            &6u64.to_le_bytes(),
            &42u64.to_le_bytes(),
        ]);
        let got = String::from_utf8(format(&bytes)).unwrap();
        // The expected text is what the C library prints for the same call.
        let mut buf = vec![0u8; 256];
        let f = CString::new(&fmt[..fmt.len() - 1]).unwrap();
        let s = CString::new("hi").unwrap();
        // SAFETY: the format matches the arguments; the buffer has 256 bytes.
        let n = unsafe {
            libc::snprintf(
                buf.as_mut_ptr().cast(),
                buf.len(),
                f.as_ptr(),
                -7i32,
                -1234.5678f64,
                s.as_ptr(),
                0x1234usize as *const u8,
                255u32,
                6i32,
                42i32,
            )
        };
        buf.truncate(n as usize);
        assert_eq!(got, String::from_utf8(buf).unwrap());
    }
}
