//! API callbacks for tracing tools, in the two forms libamdhip64 offers them:
//!
//! - HIP 5.2's (`hipRegisterApiCallback`, `hipRegisterActivityCallback`, what roctracer 5.2
//!   drives; clr 5.2's `hip_prof_api.h`): per API id, an *activity* callback
//!   `act(id, record, data, arg)` and an *API* callback `fun(domain, id, data, arg)`, set and
//!   cleared by the library's registration calls ([`set_activity_callback`],
//!   [`set_api_callback`]). A traced call of an id with an activity callback asks it for the
//!   record to fill (`act(id, NULL, NULL, NULL)`, which returns it), writes its arguments into
//!   the record at the offsets of HIP 5.2.3's table, calls the API callback (enter), sets the
//!   record's phase to exit, and when the call returns calls the API callback again (exit) and
//!   the activity callback with its argument (`act(id, NULL, NULL, arg)`). No record, no
//!   callback: an API callback alone is never called, as in clr;
//! - HIP 5.3 and later's single tracer (`hipRegisterTracerCallback(f)`, what roctracer 5.3+
//!   registers; clr's `api_callbacks_spawner_t`): the *runtime* owns the record, a
//!   `hip_api_trace_data_t` (the tracer's `hip_api_data_t`, then the enter timestamp, a word
//!   of phase data, and `phase_enter` and `phase_exit` function pointers, all the tracer's to
//!   fill). A traced call asks `f(ACTIVITY_DOMAIN_HIP_API, id, record)`; 0 means the tracer
//!   wants the call and has filled the correlation id and the phase functions. When
//!   `phase_enter` is set the call writes its arguments (at the offsets of the table of the
//!   program's HIP generation, [`set_tracer`]) and calls `phase_enter(id, record)`; when the
//!   call returns, `phase_exit(id, record)` if set. The phases themselves are the tracer's to
//!   write. While the call runs, [`correlation_id`] is the tracer's id (clr stamps the
//!   commands the call makes with it);
//! - `#[export]` puts a [`Call`] at the start of every entry point the library's trace tables
//!   name (written to `OUT_DIR` by [`build::configure`]), with a [`Site`] giving its id and
//!   each parameter's place in every table, beside a compile-time check that the Rust
//!   parameter has the size of each C field. When tracing is off that is one atomic load;
//! - one call is one pair of callbacks: an entry point another one calls on the same thread
//!   is not traced again (clr's internal calls do not go through its exported functions).
//!
//! Not for what the records mean (the library's tables and the tool's headers say that) or for
//! activity records of device work.

use std::cell::{Cell, UnsafeCell};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::RwLock;

/// The file `#[export]` reads in `OUT_DIR` for HIP 5.2's callbacks: `name<TAB>id<TAB>
/// offset:size,...` per traced entry point (one `offset:size` per parameter, in order).
pub const TRACE_FILE: &str = "api-trace.tsv";

/// How many tracer tables [`Site`] carries (one per layout of HIP 5.3+'s records the library
/// serves); `#[export]` reads `api-tracer-0.tsv` and on, in the same format as [`TRACE_FILE`]
/// with a `%record` line.
pub const TRACER_TABLES: usize = 2;

/// The name of tracer table `n` in `OUT_DIR`.
pub fn tracer_file(n: usize) -> String {
    format!("api-tracer-{n}.tsv")
}

/// The domain API callbacks are told (`ACTIVITY_DOMAIN_HIP_API` of `prof_protocol.h`).
pub const DOMAIN: u32 = 3;

/// Where a HIP 5.2 record keeps its phase (`hip_api_data_t.phase`, after the 64-bit
/// correlation id) and the value of the exit phase (`ACTIVITY_API_PHASE_EXIT`).
const PHASE_OFFSET: usize = 8;
const PHASE_EXIT: u32 = 1;

/// Ids callbacks may be set for are below this.
pub const MAX_IDS: u32 = 4096;

/// Bytes of the record a tracer is handed: more than any `hip_api_trace_data_t` known (HIP
/// 6.2's is 1552), so a tracer built with a larger one writes inside it; the phase functions
/// are read where the program's generation puts them, and a zeroed word there is none.
const TRACER_RECORD: usize = 4096;

/// `activity_rtapi_callback_t`: `void (*)(uint32_t domain, uint32_t cid, const void* data,
/// void* arg)`.
pub type ApiCallback = unsafe extern "C" fn(u32, u32, *const c_void, *mut c_void);

/// `activity_sync_callback_t`: `void* (*)(uint32_t cid, activity_record_t* record, const
/// void* data, void* arg)`.
pub type ActivityCallback =
    unsafe extern "C" fn(u32, *mut c_void, *const c_void, *mut c_void) -> *mut c_void;

/// HIP 5.3+'s tracer: `int (*)(activity_domain_t domain, uint32_t operation_id, void* data)`.
pub type TracerCallback = unsafe extern "C" fn(u32, u32, *mut c_void) -> c_int;

/// `void (*)(hip_api_id_t operation_id, hip_api_trace_data_t* data)`: a tracer's phase
/// function.
type PhaseFunction = unsafe extern "C" fn(u32, *mut c_void);

/// Where one entry point's record is filled in one table: its API id and, for each parameter
/// the table stores, its index among the parameters [`Call::enter`] is given and its byte
/// offset in `hip_api_data_t` (empty: the table stores none).
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// The API id.
    pub id: u32,
    /// `(parameter index, offset)` of each stored parameter.
    pub fields: &'static [(u8, u32)],
}

/// One traced entry point in every table: HIP 5.2.3's and each tracer table's (`None`: that
/// table has no id for it).
#[derive(Debug, Clone, Copy)]
pub struct Site {
    /// HIP 5.2.3's (`hipRegisterApiCallback`).
    pub legacy: Option<Layout>,
    /// HIP 5.3+'s, one per tracer table.
    pub tracer: [Option<Layout>; TRACER_TABLES],
}

/// The shape of the tracer's records: which table's ids and offsets, and the size of that
/// table's `hip_api_data_t` (its `%record` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TracerLayout {
    /// Index of the table (below [`TRACER_TABLES`]).
    pub table: usize,
    /// `sizeof(hip_api_data_t)`, a multiple of 8.
    pub data_size: usize,
}

impl TracerLayout {
    /// Offsets of `phase_enter` and `phase_exit` in `hip_api_trace_data_t`: after the data,
    /// the enter timestamp and the phase data (two 64-bit words); `None` when they would not
    /// fit the record handed out.
    fn phase_offsets(self) -> Option<(usize, usize)> {
        let enter = self
            .data_size
            .checked_next_multiple_of(8)?
            .checked_add(16)?;
        let exit = enter.checked_add(8)?;
        (exit + 8 <= TRACER_RECORD).then_some((enter, exit))
    }
}

#[derive(Clone, Copy, Default)]
struct Entry {
    fun: Option<ApiCallback>,
    arg: usize,
    act: Option<ActivityCallback>,
    act_arg: usize,
}

static ENTRIES: RwLock<Vec<Entry>> = RwLock::new(Vec::new());
/// Ids with an activity callback, plus one while a tracer is set: tracing is on while non-zero.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
static TRACER: RwLock<Option<(TracerCallback, TracerLayout)>> = RwLock::new(None);

thread_local! {
    /// Whether this thread is inside a traced call.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
    /// The tracer's correlation id of the call this thread is in (0: none).
    static CORRELATION: Cell<u64> = const { Cell::new(0) };
    /// The record a tracer fills for this thread's traced call (one at a time: calls do not
    /// nest).
    static RECORD: UnsafeCell<[u64; TRACER_RECORD / 8]> = const {
        UnsafeCell::new([0; TRACER_RECORD / 8])
    };
}

/// Sets (or, with `None`, clears) the API callback of `id`; false for an id at or past
/// [`MAX_IDS`] (or when the table cannot grow).
pub fn set_api_callback(id: u32, fun: Option<ApiCallback>, arg: *mut c_void) -> bool {
    update(id, |e| {
        e.fun = fun;
        e.arg = arg as usize;
    })
}

/// Sets (or, with `None`, clears) the activity callback of `id`, counting the ids that have
/// one; false for an id at or past [`MAX_IDS`].
pub fn set_activity_callback(id: u32, act: Option<ActivityCallback>, arg: *mut c_void) -> bool {
    update(id, |e| {
        count(e.act.is_some(), act.is_some());
        e.act = act;
        e.act_arg = arg as usize;
    })
}

/// Sets (or, with `None`, clears) HIP 5.3+'s tracer and the layout of its records; false
/// (and nothing set) when the layout names no table or its phase functions would lie outside
/// the record.
pub fn set_tracer(tracer: Option<(TracerCallback, TracerLayout)>) -> bool {
    if let Some((_, layout)) = tracer {
        if layout.table >= TRACER_TABLES || layout.phase_offsets().is_none() {
            return false;
        }
    }
    let mut current = TRACER.write();
    count(current.is_some(), tracer.is_some());
    *current = tracer;
    true
}

/// The tracer set, if any.
pub fn tracer() -> Option<TracerCallback> {
    TRACER.read().map(|(f, _)| f)
}

/// The tracer's correlation id of the API call in progress on this thread (0 outside one):
/// what clr stamps the commands a call makes with.
pub fn correlation_id() -> u64 {
    CORRELATION.try_with(Cell::get).unwrap_or(0)
}

fn count(was: bool, is: bool) {
    match (was, is) {
        (false, true) => {
            ACTIVE.fetch_add(1, Ordering::AcqRel);
        }
        (true, false) => {
            ACTIVE.fetch_sub(1, Ordering::AcqRel);
        }
        _ => {}
    }
}

fn update(id: u32, change: impl FnOnce(&mut Entry)) -> bool {
    if id >= MAX_IDS {
        return false;
    }
    let mut entries = ENTRIES.write();
    let index = id as usize;
    if entries.len() <= index {
        let more = index + 1 - entries.len();
        if entries.try_reserve(more).is_err() {
            return false;
        }
        entries.resize(index + 1, Entry::default());
    }
    change(&mut entries[index]);
    true
}

/// Whether any activity callback or a tracer is set (tracing is on).
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed) != 0
}

/// One parameter's value.
#[derive(Debug, Clone, Copy)]
pub struct Arg {
    value: *const u8,
    len: usize,
}

impl Arg {
    /// `value`'s bytes (`#[export]` checks at compile time that `T` has the size of the field
    /// each table gives it).
    pub fn of<T>(value: &T) -> Arg {
        Arg {
            value: (value as *const T).cast(),
            len: std::mem::size_of::<T>(),
        }
    }
}

/// Copies the parameters `layout` stores into the record at `data`, none past `limit` bytes.
///
/// # Safety
/// `data` is valid for writes of `limit` bytes; each `Arg` points to its `len` bytes.
unsafe fn fill(data: *mut u8, limit: usize, layout: &Layout, args: &[Arg]) {
    for &(index, offset) in layout.fields {
        let Some(a) = args.get(usize::from(index)) else {
            continue;
        };
        let offset = offset as usize;
        if offset.checked_add(a.len).is_none_or(|end| end > limit) {
            continue;
        }
        // SAFETY: inside the record (checked above); `value` points to `len` bytes.
        unsafe { std::ptr::copy_nonoverlapping(a.value, data.add(offset), a.len) };
    }
}

/// A traced call in progress: the enter callbacks have run; dropping it runs the exit ones.
#[derive(Debug)]
pub struct Call {
    legacy: Option<LegacyCall>,
    tracer: Option<TracerCall>,
}

#[derive(Debug)]
struct LegacyCall {
    id: u32,
    data: *mut u8,
    fun: Option<ApiCallback>,
    arg: usize,
    act: ActivityCallback,
    act_arg: usize,
}

#[derive(Debug)]
struct TracerCall {
    id: u32,
    data: *mut u8,
    exit_offset: usize,
}

impl Call {
    /// Enters a call of the entry point `site` describes, whose parameters `args` gives
    /// (asked for only when tracing is on); `None` when nothing traces it.
    #[inline]
    pub fn enter<const N: usize>(site: &Site, args: impl FnOnce() -> [Arg; N]) -> Option<Call> {
        if !active() {
            return None;
        }
        Call::enter_traced(site, &args())
    }

    fn enter_traced(site: &Site, args: &[Arg]) -> Option<Call> {
        if INSIDE.try_with(|i| i.replace(true)).unwrap_or(true) {
            return None;
        }
        // Callbacks that call HIP from here on are not traced (INSIDE is set).
        let tracer = enter_tracer(site, args);
        let legacy = site.legacy.and_then(|l| enter_legacy(&l, args));
        if tracer.is_none() && legacy.is_none() {
            let _ = INSIDE.try_with(|i| i.set(false));
            return None;
        }
        Some(Call { legacy, tracer })
    }
}

fn enter_tracer(site: &Site, args: &[Arg]) -> Option<TracerCall> {
    let (f, layout) = (*TRACER.read())?;
    let entry = site.tracer.get(layout.table).copied().flatten()?;
    let (enter_offset, exit_offset) = layout.phase_offsets()?;
    let data: *mut u8 = RECORD
        .try_with(|r| {
            let p = r.get();
            // SAFETY: this thread's record, used by one call at a time (INSIDE), not
            // borrowed: cleared so that a phase function the tracer does not set reads NULL.
            unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, TRACER_RECORD) };
            p.cast::<u8>()
        })
        .ok()?;
    // SAFETY: the tracer registered `f` with HIP's signature; `data` is a record of
    // TRACER_RECORD bytes, more than any hip_api_trace_data_t, as clr hands its own.
    if unsafe { f(DOMAIN, entry.id, data.cast()) } != 0 {
        return None;
    }
    // SAFETY: the record's first word, the correlation id the tracer filled.
    let correlation = unsafe { data.cast::<u64>().read() };
    let _ = CORRELATION.try_with(|c| c.set(correlation));
    // SAFETY: `enter_offset` is 8-aligned and inside the record (phase_offsets); an
    // `Option` of a function pointer has the layout of a pointer, NULL being `None`.
    let phase_enter = unsafe {
        data.add(enter_offset)
            .cast::<Option<PhaseFunction>>()
            .read()
    };
    if let Some(phase_enter) = phase_enter {
        // SAFETY: the record has `layout.data_size` bytes of hip_api_data_t and more.
        unsafe { fill(data, layout.data_size, &entry, args) };
        // SAFETY: the tracer's phase function with the id and record it was set for.
        unsafe { phase_enter(entry.id, data.cast()) };
    }
    Some(TracerCall {
        id: entry.id,
        data,
        exit_offset,
    })
}

fn enter_legacy(layout: &Layout, args: &[Arg]) -> Option<LegacyCall> {
    let id = layout.id;
    let entry = ENTRIES.read().get(id as usize).copied()?;
    let act = entry.act?;
    // SAFETY: the tool registered `act` as HIP's activity callback; NULL record, data and
    // argument ask it for the record of a new call, as clr does.
    let data = unsafe {
        act(
            id,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    }
    .cast::<u8>();
    if data.is_null() {
        return None;
    }
    // SAFETY: `data` is the record the activity callback handed out for this call (HIP's
    // protocol: the runtime fills its arguments), which holds HIP 5.2.3's hip_api_data_t; the
    // table places each argument inside it.
    unsafe { fill(data, usize::MAX, layout, args) };
    if let Some(fun) = entry.fun {
        // SAFETY: the tool registered `fun` as HIP's API callback; `data` is its record.
        unsafe { fun(DOMAIN, id, data.cast(), entry.arg as *mut c_void) };
        // SAFETY: the record's phase word, as clr sets it after the enter callback.
        unsafe {
            data.add(PHASE_OFFSET)
                .cast::<u32>()
                .write_unaligned(PHASE_EXIT)
        };
    }
    Some(LegacyCall {
        id,
        data,
        fun: entry.fun,
        arg: entry.arg,
        act,
        act_arg: entry.act_arg,
    })
}

impl Drop for Call {
    fn drop(&mut self) {
        if let Some(t) = &self.tracer {
            // SAFETY: the exit phase function the tracer left in this thread's record
            // (8-aligned, inside it), read after the enter phase as clr reads it.
            let phase_exit = unsafe {
                t.data
                    .add(t.exit_offset)
                    .cast::<Option<PhaseFunction>>()
                    .read()
            };
            if let Some(phase_exit) = phase_exit {
                // SAFETY: the tracer's phase function with its id and record.
                unsafe { phase_exit(t.id, t.data.cast()) };
            }
            let _ = CORRELATION.try_with(|c| c.set(0));
        }
        if let Some(l) = &self.legacy {
            if let Some(fun) = l.fun {
                // SAFETY: as at enter: the tool's callback and its record.
                unsafe { fun(DOMAIN, l.id, l.data.cast(), l.arg as *mut c_void) };
            }
            // SAFETY: the tool's activity callback, told the call ended (its argument, NULL
            // record and data), as clr does.
            unsafe {
                (l.act)(
                    l.id,
                    std::ptr::null_mut(),
                    std::ptr::null(),
                    l.act_arg as *mut c_void,
                )
            };
        }
        let _ = INSIDE.try_with(|i| i.set(false));
    }
}

/// For build scripts: the trace table `#[export]` reads.
pub mod build {
    use std::path::PathBuf;

    use super::{tracer_file, TRACER_TABLES, TRACE_FILE};

    /// Copies the trace tables to `OUT_DIR`, where `#[export]` reads them: `table`, HIP
    /// 5.2.3's, and `tracers`, HIP 5.3+'s (paths relative to the crate).
    ///
    /// # Panics
    /// When a table cannot be read or written, or `tracers` are not [`TRACER_TABLES`] (a
    /// build script reports by panicking).
    pub fn configure(table: &str, tracers: &[&str]) {
        assert_eq!(
            tracers.len(),
            TRACER_TABLES,
            "rocload_ffi::trace serves {TRACER_TABLES} tracer tables"
        );
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
        let names =
            std::iter::once(TRACE_FILE.to_owned()).chain((0..tracers.len()).map(tracer_file));
        for (from, name) in std::iter::once(&table).chain(tracers).zip(names) {
            println!("cargo:rerun-if-changed={from}");
            let text =
                std::fs::read_to_string(from).unwrap_or_else(|e| panic!("reading {from}: {e}"));
            let path = out.join(name);
            std::fs::write(&path, text)
                .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The callback tables are the process's: one test at a time.
    static SERIAL: Mutex<()> = Mutex::new(());

    /// What the callbacks saw: (phase at the API callback, id, first argument's value).
    static SEEN: Mutex<Vec<(u32, u32, u64)>> = Mutex::new(Vec::new());
    static ENDED: Mutex<Vec<(u32, usize)>> = Mutex::new(Vec::new());

    #[repr(C)]
    struct Record {
        correlation: u64,
        phase: u32,
        _pad: u32,
        first: u64,
        second: u32,
    }

    thread_local! {
        static RECORD: std::cell::UnsafeCell<Record> = const {
            std::cell::UnsafeCell::new(Record { correlation: 0, phase: 0, _pad: 0, first: 0, second: 0 })
        };
    }

    unsafe extern "C" fn act(
        id: u32,
        _: *mut c_void,
        _: *const c_void,
        arg: *mut c_void,
    ) -> *mut c_void {
        if arg.is_null() {
            RECORD.with(|r| {
                // SAFETY: this thread's record, not borrowed elsewhere.
                unsafe {
                    let r = &mut *r.get();
                    (r.phase, r.first, r.second) = (0, 0, 0);
                }
                r.get().cast()
            })
        } else {
            ENDED.lock().unwrap().push((id, arg as usize));
            std::ptr::null_mut()
        }
    }

    unsafe extern "C" fn fun(domain: u32, id: u32, data: *const c_void, _: *mut c_void) {
        assert_eq!(domain, DOMAIN);
        // SAFETY: the record `act` handed out.
        let r = unsafe { &*data.cast::<Record>() };
        SEEN.lock()
            .unwrap()
            .push((r.phase, id, r.first ^ u64::from(r.second)));
    }

    /// Id 7 (tracer tables: 70 and 71, the latter storing the second argument only) and id 8
    /// (unknown to the second tracer table).
    const SEVEN: Site = Site {
        legacy: Some(Layout {
            id: 7,
            fields: &[(0, 16), (1, 24)],
        }),
        tracer: [
            Some(Layout {
                id: 70,
                fields: &[(0, 16), (1, 24)],
            }),
            Some(Layout {
                id: 71,
                fields: &[(1, 40)],
            }),
        ],
    };
    const EIGHT: Site = Site {
        legacy: Some(Layout {
            id: 8,
            fields: &[(0, 16)],
        }),
        tracer: [
            Some(Layout {
                id: 80,
                fields: &[(0, 16)],
            }),
            None,
        ],
    };

    fn traced(a: u64, b: u32) {
        let _call = Call::enter(&SEVEN, || [Arg::of(&a), Arg::of(&b)]);
        nested(b);
        assert_eq!(
            correlation_id() != 0,
            TRACER.read().is_some(),
            "a call the tracer traces has its correlation id, still after a nested one"
        );
    }

    fn nested(b: u32) {
        let _call = Call::enter(&EIGHT, || [Arg::of(&b)]);
    }

    /// Enter and exit with the arguments, only with an activity callback, never nested, and
    /// nothing after removal.
    #[test]
    fn callbacks_follow_hips_protocol() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        assert!(set_api_callback(7, Some(fun), std::ptr::null_mut()));
        assert!(set_api_callback(8, Some(fun), std::ptr::null_mut()));
        traced(1, 2);
        assert!(
            SEEN.lock().unwrap().is_empty(),
            "no activity callback: nothing"
        );
        assert!(set_activity_callback(7, Some(act), 0x55 as *mut c_void));
        assert!(set_activity_callback(8, Some(act), 0x66 as *mut c_void));
        traced(0x1000, 3);
        assert_eq!(*SEEN.lock().unwrap(), [(0, 7, 0x1003), (1, 7, 0x1003)]);
        assert_eq!(*ENDED.lock().unwrap(), [(7, 0x55)]);
        nested(9);
        assert_eq!(SEEN.lock().unwrap()[2..], [(0, 8, 9), (1, 8, 9)]);
        assert!(set_api_callback(7, None, std::ptr::null_mut()));
        assert!(set_activity_callback(7, None, std::ptr::null_mut()));
        assert!(set_activity_callback(8, None, std::ptr::null_mut()));
        SEEN.lock().unwrap().clear();
        traced(5, 5);
        assert!(SEEN.lock().unwrap().is_empty(), "removed");
        assert!(!active());
        assert!(!set_api_callback(MAX_IDS, Some(fun), std::ptr::null_mut()));
    }

    /// One phase the tracer saw: (phase, id, correlation id, the record's words 2 to 5).
    type Phase = (u32, u32, u64, [u64; 4]);
    static TRACED: Mutex<Vec<Phase>> = Mutex::new(Vec::new());
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(100);
    /// The data size of the layout in use (where the phase functions go).
    static DATA_SIZE: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn phase(id: u32, data: *mut c_void, exit: bool) {
        let d = data.cast::<u64>();
        // SAFETY: the record the runtime handed to `tracer`, at least 48 bytes.
        let words = unsafe {
            [
                d.add(2).read(),
                d.add(3).read(),
                d.add(4).read(),
                d.add(5).read(),
            ]
        };
        // SAFETY: as above.
        let correlation = unsafe { d.read() };
        TRACED
            .lock()
            .unwrap()
            .push((u32::from(exit), id, correlation, words));
    }
    unsafe extern "C" fn enter_phase(id: u32, data: *mut c_void) {
        // SAFETY: forwarded.
        unsafe { phase(id, data, false) };
        // The exit phase is set by the enter phase, as roctracer does.
        let at = DATA_SIZE.load(Ordering::Relaxed) + 24;
        // SAFETY: the record's phase_exit word.
        unsafe {
            data.cast::<u8>()
                .add(at)
                .cast::<PhaseFunction>()
                .write(exit_phase)
        };
    }
    unsafe extern "C" fn exit_phase(id: u32, data: *mut c_void) {
        // SAFETY: forwarded.
        unsafe { phase(id, data, true) };
    }

    /// Wants every id but 80; hands out a correlation id and the enter phase.
    unsafe extern "C" fn tracer(domain: u32, id: u32, data: *mut c_void) -> c_int {
        assert_eq!(domain, DOMAIN);
        if id == 80 {
            return 1;
        }
        let d = data.cast::<u8>();
        // SAFETY: the record: correlation id first, phase_enter after the data and two words.
        unsafe {
            d.cast::<u64>().write(NEXT.fetch_add(1, Ordering::Relaxed));
            d.add(DATA_SIZE.load(Ordering::Relaxed) + 16)
                .cast::<PhaseFunction>()
                .write(enter_phase);
        }
        0
    }

    /// The tracer is asked, fills the correlation id and phase functions; the arguments go
    /// where the table of the layout in use says; a refused id and nested calls are not traced.
    #[test]
    fn tracer_follows_clrs_protocol() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        DATA_SIZE.store(64, Ordering::Relaxed);
        let layout = TracerLayout {
            table: 0,
            data_size: 64,
        };
        assert!(!set_tracer(Some((
            tracer,
            TracerLayout {
                table: TRACER_TABLES,
                ..layout
            }
        ))));
        assert!(!set_tracer(Some((
            tracer,
            TracerLayout {
                data_size: TRACER_RECORD,
                ..layout
            }
        ))));
        assert!(set_tracer(Some((tracer, layout))));
        traced(0x1000, 3);
        let first = NEXT.load(Ordering::Relaxed) - 1;
        assert_eq!(
            *TRACED.lock().unwrap(),
            [
                (0, 70, first, [0x1000, 3, 0, 0]),
                (1, 70, first, [0x1000, 3, 0, 0])
            ]
        );
        assert_eq!(correlation_id(), 0, "no call in progress");
        TRACED.lock().unwrap().clear();
        nested(4);
        assert!(TRACED.lock().unwrap().is_empty(), "id 80 refused");
        DATA_SIZE.store(48, Ordering::Relaxed);
        assert!(set_tracer(Some((
            tracer,
            TracerLayout {
                table: 1,
                data_size: 48
            }
        ))));
        traced(0x2000, 5);
        let second = NEXT.load(Ordering::Relaxed) - 1;
        assert_eq!(
            *TRACED.lock().unwrap(),
            [(0, 71, second, [0, 0, 0, 5]), (1, 71, second, [0, 0, 0, 5])]
        );
        assert!(set_tracer(None));
        assert!(!active());
        TRACED.lock().unwrap().clear();
        traced(1, 1);
        assert!(TRACED.lock().unwrap().is_empty(), "removed");
    }
}
