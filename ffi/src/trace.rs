//! API callbacks for tracing tools, in the form HIP 5.2's libamdhip64 offers them to roctracer
//! (`hipRegisterApiCallback`, `hipRegisterActivityCallback`, clr's `hip_prof_api.h`):
//!
//! - per API id, an *activity* callback `act(id, record, data, arg)` and an *API* callback
//!   `fun(domain, id, data, arg)`, set and cleared by the library's registration calls
//!   ([`set_activity_callback`], [`set_api_callback`]);
//! - tracing is on while at least one id has an activity callback (clr's
//!   `enabled_api_count_`); a traced call then asks that id's activity callback for the
//!   record to fill (`act(id, NULL, NULL, NULL)`, which returns it), writes its arguments into
//!   the record at the offsets the library's trace table gives, calls the API callback (enter),
//!   sets the record's phase to exit, and when the call returns calls the API callback again
//!   (exit) and the activity callback with its argument (`act(id, NULL, NULL, arg)`). No record,
//!   no callback: an API callback alone is never called, as in clr;
//! - `#[export]` puts a [`Call`] at the start of every entry point the library's trace table
//!   names (written to `OUT_DIR` by [`build::configure`]), with the table's id and, for each
//!   parameter, where its value goes in the record and a compile-time check that the Rust
//!   parameter has the size of the C field. When tracing is off that is one atomic load;
//! - one call is one pair of callbacks: an entry point another one calls on the same thread
//!   is not traced again (clr's internal calls do not go through its exported functions).
//!
//! Not for what the records mean (the library's table and the tool's headers say that) or for
//! activity records of device work.

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::RwLock;

/// The file `#[export]` reads in `OUT_DIR`: `name<TAB>id<TAB>offset:size,...` per traced
/// entry point (one `offset:size` per parameter, in order).
pub const TRACE_FILE: &str = "api-trace.tsv";

/// The domain API callbacks are told (`ACTIVITY_DOMAIN_HIP_API` of HIP 5.2.3's
/// `prof_protocol.h`).
pub const DOMAIN: u32 = 3;

/// Where a record keeps its phase (`hip_api_data_t.phase`, after the 64-bit correlation id)
/// and the value of the exit phase (`ACTIVITY_API_PHASE_EXIT`).
const PHASE_OFFSET: usize = 8;
const PHASE_EXIT: u32 = 1;

/// Ids callbacks may be set for are below this.
pub const MAX_IDS: u32 = 4096;

/// `activity_rtapi_callback_t`: `void (*)(uint32_t domain, uint32_t cid, const void* data,
/// void* arg)`.
pub type ApiCallback = unsafe extern "C" fn(u32, u32, *const c_void, *mut c_void);

/// `activity_sync_callback_t`: `void* (*)(uint32_t cid, activity_record_t* record, const
/// void* data, void* arg)`.
pub type ActivityCallback =
    unsafe extern "C" fn(u32, *mut c_void, *const c_void, *mut c_void) -> *mut c_void;

#[derive(Clone, Copy, Default)]
struct Entry {
    fun: Option<ApiCallback>,
    arg: usize,
    act: Option<ActivityCallback>,
    act_arg: usize,
}

static ENTRIES: RwLock<Vec<Entry>> = RwLock::new(Vec::new());
/// Ids with an activity callback: tracing is on while non-zero.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread is inside a traced call.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
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
        match (e.act.is_some(), act.is_some()) {
            (false, true) => {
                ACTIVE.fetch_add(1, Ordering::AcqRel);
            }
            (true, false) => {
                ACTIVE.fetch_sub(1, Ordering::AcqRel);
            }
            _ => {}
        }
        e.act = act;
        e.act_arg = arg as usize;
    })
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

/// Whether any activity callback is set (tracing is on).
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed) != 0
}

/// One parameter's value and where it goes in the record.
#[derive(Debug, Clone, Copy)]
pub struct Arg {
    value: *const u8,
    len: usize,
    offset: usize,
}

impl Arg {
    /// `value`'s bytes, for `offset` in the record (`#[export]` checks at compile time that
    /// `T` has the size of the field there).
    pub fn of<T>(value: &T, offset: usize) -> Arg {
        Arg {
            value: (value as *const T).cast(),
            len: std::mem::size_of::<T>(),
            offset,
        }
    }
}

/// A traced call in progress: the enter callback has run; dropping it runs the exit ones.
#[derive(Debug)]
pub struct Call {
    id: u32,
    data: *mut u8,
    fun: Option<ApiCallback>,
    arg: usize,
    act: Option<ActivityCallback>,
    act_arg: usize,
}

impl Call {
    /// Enters a call of entry point `id` whose parameters `args` gives (asked for only when
    /// tracing is on); `None` when nothing traces it.
    #[inline]
    pub fn enter<const N: usize>(id: u32, args: impl FnOnce() -> [Arg; N]) -> Option<Call> {
        if !active() {
            return None;
        }
        Call::enter_traced(id, &args())
    }

    fn enter_traced(id: u32, args: &[Arg]) -> Option<Call> {
        if INSIDE.try_with(Cell::get).unwrap_or(true) {
            return None;
        }
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
        let _ = INSIDE.try_with(|i| i.set(true));
        for a in args {
            // SAFETY: `data` is the record the activity callback handed out for this call
            // (HIP's protocol: the runtime fills its arguments); the library's trace table
            // places each argument inside it, with the field's size (checked at compile time
            // against the parameter's type); `value` points to `len` bytes of the parameter.
            unsafe { std::ptr::copy_nonoverlapping(a.value, data.add(a.offset), a.len) };
        }
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
        Some(Call {
            id,
            data,
            fun: entry.fun,
            arg: entry.arg,
            act: entry.act,
            act_arg: entry.act_arg,
        })
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if let Some(fun) = self.fun {
            // SAFETY: as at enter: the tool's callback and its record.
            unsafe { fun(DOMAIN, self.id, self.data.cast(), self.arg as *mut c_void) };
        }
        if let Some(act) = self.act {
            // SAFETY: the tool's activity callback, told the call ended (its argument, NULL
            // record and data), as clr does.
            unsafe {
                act(
                    self.id,
                    std::ptr::null_mut(),
                    std::ptr::null(),
                    self.act_arg as *mut c_void,
                )
            };
        }
        let _ = INSIDE.try_with(|i| i.set(false));
    }
}

/// For build scripts: the trace table `#[export]` reads.
pub mod build {
    use std::path::PathBuf;

    use super::TRACE_FILE;

    /// Copies the trace table `table` (a path relative to the crate) to `OUT_DIR`, where
    /// `#[export]` reads it.
    ///
    /// # Panics
    /// When the table cannot be read or written (a build script reports by panicking).
    pub fn configure(table: &str) {
        println!("cargo:rerun-if-changed={table}");
        let text =
            std::fs::read_to_string(table).unwrap_or_else(|e| panic!("reading {table}: {e}"));
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
        let path = out.join(TRACE_FILE);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

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

    fn traced(a: u64, b: u32) {
        let _call = Call::enter(7, || [Arg::of(&a, 16), Arg::of(&b, 24)]);
        nested(b);
    }

    fn nested(b: u32) {
        let _call = Call::enter(8, || [Arg::of(&b, 16)]);
    }

    /// Enter and exit with the arguments, only with an activity callback, never nested, and
    /// nothing after removal.
    #[test]
    fn callbacks_follow_hips_protocol() {
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
}
