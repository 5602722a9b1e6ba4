//! Logging for the C ABIs (`librocload.so`, `libhsa_soft.so`): each cdylib carries its own copy
//! of `tracing`, so each installs its own subscriber. Events go to stderr, filtered by the
//! caller's filter (`ROCLOAD_LOG`, read by the caller's configuration); nothing is printed
//! without one. Not for deciding what to log.

use std::cell::Cell;

/// Marks whether this thread's thread-locals are still alive: after they are destroyed
/// (at thread exit, and on the main thread at `exit()`, before the atexit handlers that
/// unregister fat binaries), the fmt layer's own thread-local buffer is gone and it would
/// panic, so events are filtered out.
///
/// Thread-local destructors run in the reverse order of registration, so the sentinel is
/// first touched only after the fmt layer has formatted an event on this thread (see
/// [`ArmSentinel`]): it is then destroyed before the fmt layer's buffer.
struct TlsSentinel;

impl Drop for TlsSentinel {
    fn drop(&mut self) {}
}

thread_local! {
    static TLS_SENTINEL: TlsSentinel = const { TlsSentinel };
    /// Whether [`TLS_SENTINEL`] was registered on this thread (no destructor: always readable).
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

/// Drops every event once this thread's thread-locals are gone (a global filter: it needs no
/// thread-local of its own), and registers the thread's sentinel after the fmt layer's first
/// event on the thread.
struct ArmSentinel;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for ArmSentinel {
    fn event_enabled(
        &self,
        _event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        !ARMED.with(Cell::get) || TLS_SENTINEL.try_with(|_| ()).is_ok()
    }

    fn on_event(
        &self,
        _event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if !ARMED.with(Cell::get) && TLS_SENTINEL.try_with(|_| ()).is_ok() {
            ARMED.with(|a| a.set(true));
        }
    }
}

/// Installs a subscriber printing to stderr with `filter` (an `EnvFilter` directive such as
/// `debug` or `hsa_soft=debug`); does nothing without a filter or when one is installed.
pub fn init(filter: Option<&str>) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    if let Some(filter) = filter {
        let layer = tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_filter(tracing_subscriber::EnvFilter::new(filter));
        // Outermost, so its global `event_enabled` decides before any layer (per-layer filter
        // state lives in a thread-local of its own, gone at exit).
        let _ = tracing_subscriber::registry()
            .with(layer)
            .with(ArmSentinel)
            .try_init();
    }
}
