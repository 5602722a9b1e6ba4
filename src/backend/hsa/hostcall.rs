//! Hostcall on ROCr's agents (device `printf`): a host thread serves the registered buffers.
//! clr runs such a listener too; it waits on the buffer's doorbell signal through the driver's
//! event. Here the doorbell is the buffer's own user-mode signal in fine-grained host memory
//! (`runtime::hostcall`), which the device updates with atomics, so the listener polls the
//! buffers instead: at once again after it served a packet, backing off to a millisecond when
//! idle. It needs no driver event, and never ran on a GPU (see docs/hsa.md).

use std::sync::{Arc, Weak};
use std::time::Duration;

use once_cell::sync::OnceCell;
use parking_lot::Mutex;

use crate::device::HostcallHandler;

/// Longest pause between two polls when nothing is served.
const MAX_IDLE: Duration = Duration::from_millis(1);

type Handlers = Mutex<Vec<(u32, HostcallHandler)>>;

/// An agent's hostcall buffers and the thread that serves them (started with the first).
#[derive(Default)]
pub(crate) struct HostcallListener {
    handlers: Arc<Handlers>,
    thread: OnceCell<()>,
}

impl HostcallListener {
    /// Has the listener serve `handler` (replacing one for the same `event_id`).
    pub(crate) fn add(&self, event_id: u32, handler: HostcallHandler) -> std::io::Result<()> {
        {
            let mut list = self.handlers.lock();
            list.retain(|(id, _)| *id != event_id);
            list.push((event_id, handler));
        }
        self.thread
            .get_or_try_init(|| {
                let weak = Arc::downgrade(&self.handlers);
                std::thread::Builder::new()
                    .name("rocload-hostcall".into())
                    .spawn(move || listen(weak))
                    .map(|_| ())
            })
            .map(|_| ())
    }
}

/// Serves every buffer until the agent is gone.
fn listen(handlers: Weak<Handlers>) {
    let mut idle = Duration::from_micros(20);
    loop {
        let Some(list) = handlers.upgrade() else {
            return;
        };
        // Clone the handlers out, so one that takes long never blocks registration.
        let current: Vec<HostcallHandler> = list.lock().iter().map(|(_, h)| h.clone()).collect();
        drop(list);
        let served: usize = current.iter().map(|h| h()).sum();
        if served > 0 {
            tracing::trace!(served, "hostcall packets served");
            idle = Duration::from_micros(20);
            continue;
        }
        std::thread::sleep(idle);
        idle = (idle * 2).min(MAX_IDLE);
    }
}
