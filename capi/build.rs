//! Gives librocload.so its SONAME and the symbol versions of AMD's libamdhip64, so programs
//! and libraries linked against it bind to ours without "no version information available".
//! The versions are data: `hip-exports.tsv` (Debian's libamdhip64.so.5, from
//! `scripts/gen-hip-exports.sh`) and `abi/own.tsv` (rocload's own API, and the node of HIP
//! entry points the tables do not list). `rocload_ffi`'s `#[export]` attribute places each
//! entry point's `.symver` from the merged table. Needs no ROCm.

fn main() {
    rocload_ffi::versions::build::configure(&["hip-exports.tsv", "abi/own.tsv"], "librocload.so");
}
