//! The boundary between C and Rust: an entry point runs its body under [`guard`], so a panic
//! (a bug) becomes the API's error value instead of unwinding into C, which would abort the
//! host program.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`; a panic is logged with `op` and gives `on_panic()` instead.
pub fn guard<R>(op: &str, on_panic: impl FnOnce() -> R, body: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!(op, panic = %what, "panic caught at the C boundary");
            on_panic()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_gives_the_fallback_and_values_pass_through() {
        assert_eq!(guard("test", || -1, || 5), 5);
        assert_eq!(guard("test", || -1, || panic!("bug")), -1);
        assert_eq!(guard("test", || "x".to_owned(), || panic!("{}", 3)), "x");
    }
}
