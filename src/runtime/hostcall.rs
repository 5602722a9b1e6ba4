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
//! float or pointer argument and padded bytes per string. `runtime::printf` formats them in
//! Rust (never the C library's varargs: the format string is the kernel's), and the text goes
//! to the C `stdout` (or `stderr`) the program uses, in one write per message. Other services
//! are answered with zeros and logged.
//!
//! A kernel may open messages and never end them, so what a buffer holds open is capped:
//! [`MAX_MESSAGE_BYTES`] per message (a message over it prints a marker instead of its text),
//! [`MAX_OPEN_MESSAGES`] messages and [`MAX_OPEN_BYTES`] in all (beyond either, the oldest open
//! messages are dropped); everything still open is dropped when no dispatch that was given the
//! buffer is in flight any more ([`HostcallBuffer::dispatch_started`]). Each drop is logged at debug
//! level. Not for the device side or for queues.

use std::collections::BTreeMap;
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

/// Bytes one open message may hold (a printf's format string and arguments); the words of a
/// longer message are dropped and it prints a marker when it ends.
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;
/// Messages a buffer holds open at once (every lane of 1024 waves may be in the middle of one);
/// opening one more drops the oldest.
pub const MAX_OPEN_MESSAGES: usize = 64 * 1024;
/// Bytes all open messages of a buffer may hold; beyond it the oldest are dropped.
pub const MAX_OPEN_BYTES: usize = 16 << 20;

/// A hostcall buffer on one device, and the messages in flight through it.
#[derive(Debug)]
pub struct HostcallBuffer {
    device: Arc<dyn Device>,
    base: u64,
    messages: Mutex<Messages>,
    /// Event id the device writes to the mailbox with its interrupt (to tell buffers apart).
    event_id: u32,
}

/// The messages a buffer holds open, by id (ids grow, so the first is the oldest).
#[derive(Debug, Default)]
struct Messages {
    next_id: u64,
    open: BTreeMap<u64, Message>,
    /// Bytes of all open messages' words.
    bytes: usize,
    /// Dispatches given this buffer that have not ended ([`HostcallBuffer::dispatch_started`]);
    /// kept under the same lock as the messages, so a dispatch that starts as the last one
    /// ends never loses the messages it opens.
    in_flight: usize,
}

/// One open message.
#[derive(Debug, Default)]
struct Message {
    words: Vec<u64>,
    /// Words were dropped: the message was longer than [`MAX_MESSAGE_BYTES`].
    over: bool,
}

impl Messages {
    /// Opens a message, first dropping the oldest if the buffer holds too many; returns its id.
    fn open(&mut self) -> u64 {
        while self.open.len() >= MAX_OPEN_MESSAGES {
            self.drop_oldest("too many open messages");
        }
        self.next_id += 1;
        let id = self.next_id & ((1 << 56) - 1);
        self.open.insert(id, Message::default());
        id
    }

    /// Drops the oldest open message (a kernel that opened messages and never ended them).
    fn drop_oldest(&mut self, why: &str) {
        if let Some((id, message)) = self.open.pop_first() {
            self.bytes = self.bytes.saturating_sub(message.words.len() * 8);
            tracing::debug!(
                id,
                words = message.words.len(),
                why,
                "hostcall: open message dropped"
            );
        }
    }

    /// Appends `words` to the open message `id`, within the caps; false when `id` is not open.
    fn append(&mut self, id: u64, words: &[u64]) -> bool {
        let len = match self.open.get(&id) {
            None => return false,
            Some(m) if m.over => return true,
            Some(m) => m.words.len(),
        };
        let add = words.len() * 8;
        if (len * 8).saturating_add(add) > MAX_MESSAGE_BYTES {
            tracing::debug!(
                id,
                limit = MAX_MESSAGE_BYTES,
                "hostcall: message too long; its words are dropped"
            );
            self.mark_over(id);
            return true;
        }
        // Older messages make room for this one (which is at most MAX_MESSAGE_BYTES, a
        // fraction of MAX_OPEN_BYTES).
        while self.bytes + add > MAX_OPEN_BYTES
            && self
                .open
                .first_key_value()
                .is_some_and(|(&first, _)| first != id)
        {
            self.drop_oldest("open messages over the byte limit");
        }
        let Some(message) = self.open.get_mut(&id) else {
            return false;
        };
        if message.words.try_reserve(words.len()).is_err() {
            tracing::debug!(
                id,
                "hostcall: no memory for a message; its words are dropped"
            );
            self.mark_over(id);
            return true;
        }
        message.words.extend_from_slice(words);
        self.bytes += add;
        true
    }

    /// Drops every open message; returns how many.
    fn drop_all(&mut self) -> usize {
        let dropped = self.open.len();
        if dropped > 0 {
            tracing::debug!(
                dropped,
                bytes = self.bytes,
                "hostcall: messages opened and never ended dropped"
            );
        }
        self.open.clear();
        self.bytes = 0;
        dropped
    }

    /// Drops the words of message `id` but its control word (where its marker goes).
    fn mark_over(&mut self, id: u64) {
        if let Some(message) = self.open.get_mut(&id) {
            let kept = message.words.len().min(1);
            self.bytes = self.bytes.saturating_sub((message.words.len() - kept) * 8);
            message.words.truncate(kept);
            message.words.shrink_to_fit();
            message.over = true;
        }
    }

    /// Closes message `id`, returning it.
    fn remove(&mut self, id: u64) -> Option<Message> {
        let message = self.open.remove(&id)?;
        self.bytes = self.bytes.saturating_sub(message.words.len() * 8);
        Some(message)
    }
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
        let id = if begin { messages.open() } else { desc >> 8 };
        if !messages.append(id, &words[1..1 + len]) {
            // Never opened, already ended, or dropped by the caps: the device still gets a
            // descriptor to go on with, and its printf returns -1.
            tracing::debug!(id, end, "hostcall: message id not open; ignored");
            let answer = if end { u64::MAX } else { id << 8 };
            self.word(slot).store(answer, Ordering::Relaxed);
            self.word(slot + 8).store(0, Ordering::Relaxed);
            return;
        }
        if end {
            let message = messages.remove(id).unwrap_or_default();
            drop(messages);
            let printed = if message.over {
                let text = format!("%<dropped: printf message over {MAX_MESSAGE_BYTES} bytes>\n");
                write_out(message.words.first() == Some(&1), text.as_bytes())
            } else {
                printf(&message.words)
            };
            self.word(slot).store(printed as u64, Ordering::Relaxed);
            self.word(slot + 8).store(0, Ordering::Relaxed);
        } else {
            // The descriptor for the next packet of this message: its id, flags cleared.
            self.word(slot).store(id << 8, Ordering::Relaxed);
        }
    }

    /// Drops every open message (their kernels are gone); returns how many.
    pub fn drop_open_messages(&self) -> usize {
        self.messages.lock().drop_all()
    }

    /// Messages open now.
    pub fn open_messages(&self) -> usize {
        self.messages.lock().open.len()
    }

    /// Marks a dispatch given this buffer as in flight until the returned guard is dropped
    /// (when the dispatch ends, or is never submitted). Once no such dispatch is in flight, no
    /// wave can go on with a message, so everything still open is dropped: one buffer serves
    /// every dispatch of its device, so it waits for the last.
    pub fn dispatch_started(self: &Arc<Self>) -> HostcallDispatch {
        self.messages.lock().in_flight += 1;
        HostcallDispatch(self.clone())
    }
}

/// A dispatch that was given a hostcall buffer, in flight until dropped
/// ([`HostcallBuffer::dispatch_started`]).
#[derive(Debug)]
pub struct HostcallDispatch(Arc<HostcallBuffer>);

impl HostcallDispatch {
    /// The buffer the dispatch was given.
    pub fn buffer(&self) -> &Arc<HostcallBuffer> {
        &self.0
    }
}

impl Drop for HostcallDispatch {
    fn drop(&mut self) {
        let mut messages = self.0.messages.lock();
        messages.in_flight = messages.in_flight.saturating_sub(1);
        if messages.in_flight == 0 {
            messages.drop_all();
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
/// what printf returns (bytes printed, or negative on error).
pub(crate) fn printf(message: &[u64]) -> i64 {
    let Some((&control, rest)) = message.split_first() else {
        return -1;
    };
    if control & !1 != 0 {
        tracing::debug!(control, "device printf: unknown control word");
        return -1;
    }
    let bytes: Vec<u8> = rest.iter().flat_map(|w| w.to_le_bytes()).collect();
    write_out(control & 1 != 0, &super::printf::format(&bytes))
}

/// Writes `text` to the C library's stdout (or stderr) in one call and flushes it; returns the
/// bytes written, or -1 when the stream failed.
fn write_out(to_stderr: bool, text: &[u8]) -> i64 {
    // SAFETY: the C library's stream globals are initialised before main and never freed;
    // fwrite reads `text.len()` bytes of a live slice, fflush takes the stream as given.
    let (written, flushed) = unsafe {
        let stream = if to_stderr { stderr } else { stdout };
        let written = libc::fwrite(text.as_ptr().cast(), 1, text.len(), stream);
        (written, libc::fflush(stream))
    };
    if written != text.len() || flushed != 0 {
        return -1;
    }
    i64::try_from(written).unwrap_or(i64::MAX)
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

    /// Pushes packet `packet` on the ready stack as ockl does, with `lanes` (lane, words).
    fn push(hc: &HostcallBuffer, packet: u64, service: u32, lanes: &[(u64, [u64; 8])]) {
        let header = hc.headers() + packet * HEADER_SIZE;
        let mask = lanes.iter().fold(0u64, |m, (lane, _)| m | 1 << lane);
        hc.word(header + 8).store(mask, Ordering::Relaxed);
        hc.half(header + 16).store(service, Ordering::Relaxed);
        hc.half(header + 20).store(1, Ordering::Relaxed);
        for (lane, words) in lanes {
            let slot = hc.payloads() + packet * PAYLOAD_SIZE + lane * 64;
            for (i, w) in words.iter().enumerate() {
                hc.word(slot + 8 * i as u64).store(*w, Ordering::Relaxed);
            }
        }
        let top = hc.word(hc.address() + 32).load(Ordering::Relaxed);
        hc.word(header).store(top, Ordering::Relaxed);
        hc.word(hc.address() + 32).store(packet, Ordering::Release);
    }

    /// What the host answered in `lane` of `packet`.
    fn answer(hc: &HostcallBuffer, packet: u64, lane: u64) -> u64 {
        hc.word(hc.payloads() + packet * PAYLOAD_SIZE + lane * 64)
            .load(Ordering::Relaxed)
    }

    fn buffer() -> Arc<HostcallBuffer> {
        let device = SoftAgent::new("gfx1030".parse().unwrap()).device();
        Arc::new(HostcallBuffer::new(device, 7).unwrap())
    }

    /// A kernel that opens messages and never ends them (`__ockl_printf_begin` in a loop)
    /// cannot make the host hold more than the caps.
    #[test]
    fn messages_opened_and_never_ended_are_capped() {
        let hc = buffer();
        // BEGIN with 7 words, in every lane of every packet, three times over.
        let begin = [1 | (7 << 5), 0, 1, 2, 3, 4, 5, 6];
        let lanes: Vec<(u64, [u64; 8])> = (0..64).map(|lane| (lane, begin)).collect();
        let rounds = 3 * MAX_OPEN_MESSAGES / (64 * PACKETS as usize);
        for _ in 0..rounds {
            for packet in 1..=PACKETS {
                push(&hc, packet, SERVICE_PRINTF, &lanes);
            }
            assert_eq!(hc.serve(), PACKETS as usize);
            // Each lane got a descriptor naming its message, to go on with.
            assert_ne!(answer(&hc, 1, 0) >> 8, 0);
        }
        assert_eq!(hc.open_messages(), MAX_OPEN_MESSAGES);
        let bytes = hc.messages.lock().bytes;
        assert_eq!(bytes, MAX_OPEN_MESSAGES * 7 * 8);
        // Continuing one message without end: its words stop at MAX_MESSAGE_BYTES, and
        // messages that keep growing drop the oldest to stay under MAX_OPEN_BYTES.
        let ids: Vec<u64> = (0..64).map(|lane| answer(&hc, 1, lane) >> 8).collect();
        let rounds = 2 * MAX_OPEN_BYTES / (64 * 56 * PACKETS as usize) + 1;
        for _ in 0..rounds {
            for packet in 1..=PACKETS {
                let lanes: Vec<(u64, [u64; 8])> = ids
                    .iter()
                    .enumerate()
                    .map(|(lane, id)| (lane as u64, [id << 8 | 7 << 5, 0, 1, 2, 3, 4, 5, 6]))
                    .collect();
                push(&hc, packet, SERVICE_PRINTF, &lanes);
            }
            hc.serve();
            let messages = hc.messages.lock();
            assert!(
                messages.bytes <= MAX_OPEN_BYTES,
                "{} bytes open",
                messages.bytes
            );
            let counted: usize = messages.open.values().map(|m| m.words.len() * 8).sum();
            assert_eq!(counted, messages.bytes);
            assert!(messages
                .open
                .values()
                .all(|m| m.words.len() * 8 <= MAX_MESSAGE_BYTES));
        }
        assert!(hc.open_messages() < MAX_OPEN_MESSAGES);
    }

    /// A message longer than MAX_MESSAGE_BYTES keeps none of its words past the cap and
    /// prints a marker when it ends.
    #[test]
    fn a_message_over_the_cap_prints_a_marker() {
        let hc = buffer();
        // Control word 1: the marker goes to stderr.
        push(
            &hc,
            1,
            SERVICE_PRINTF,
            &[(0, [1 | (1 << 5), 1, 0, 0, 0, 0, 0, 0])],
        );
        hc.serve();
        let id = answer(&hc, 1, 0) >> 8;
        let words = [b'x' as u64 * 0x0101_0101_0101_0101; 7];
        let mut sent = 8;
        while sent <= MAX_MESSAGE_BYTES {
            let mut lane = [id << 8 | 7 << 5; 8];
            lane[1..].copy_from_slice(&words);
            push(&hc, 1, SERVICE_PRINTF, &[(0, lane)]);
            hc.serve();
            sent += 56;
            assert!(hc.messages.lock().bytes <= MAX_MESSAGE_BYTES);
        }
        assert_eq!(hc.messages.lock().bytes, 8, "only the control word is kept");
        push(
            &hc,
            1,
            SERVICE_PRINTF,
            &[(0, [id << 8 | 2, 0, 0, 0, 0, 0, 0, 0])],
        );
        hc.serve();
        let marker = format!("%<dropped: printf message over {MAX_MESSAGE_BYTES} bytes>\n");
        assert_eq!(answer(&hc, 1, 0), marker.len() as u64);
        assert_eq!(hc.open_messages(), 0);
    }

    /// Messages still open when the dispatches given the buffer end are dropped.
    #[test]
    fn open_messages_go_when_the_last_dispatch_ends() {
        let hc = buffer();
        let (first, second) = (hc.dispatch_started(), hc.dispatch_started());
        let begin = [
            1 | (2 << 5),
            0,
            u64::from_le_bytes(*b"never\0\0\0"),
            0,
            0,
            0,
            0,
            0,
        ];
        push(&hc, 1, SERVICE_PRINTF, &[(0, begin), (5, begin)]);
        assert_eq!(hc.serve(), 1);
        assert_eq!(hc.open_messages(), 2);
        drop(first);
        assert_eq!(hc.open_messages(), 2, "a dispatch is still in flight");
        drop(second);
        assert_eq!(hc.open_messages(), 0);
        // A packet continuing a dropped message is answered, and its printf returns -1.
        let id = answer(&hc, 1, 0) >> 8;
        push(
            &hc,
            1,
            SERVICE_PRINTF,
            &[(0, [id << 8 | 2 | (1 << 5), 0, 0, 0, 0, 0, 0, 0])],
        );
        assert_eq!(hc.serve(), 1);
        assert_eq!(answer(&hc, 1, 0), u64::MAX);
        assert_eq!(hc.open_messages(), 0);
    }
}
