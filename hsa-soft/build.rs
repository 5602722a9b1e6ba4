//! Links libhsa_soft.so as a drop-in for ROCr's libhsa-runtime64.so.1: SONAME
//! `libhsa-runtime64.so.1`, so programs linked against ROCr (rocminfo) load it, and every
//! `hsa_*` symbol at version `ROCR_1`, as ROCr exports them (programs linked against ROCr ask
//! for `hsa_init@ROCR_1`; the dynamic loader refuses a library that lacks the version). The
//! versions are data (`rocr-exports.tsv`), placed by `rocload_ffi`'s `#[export]`.

fn main() {
    rocload_ffi::versions::build::configure(&["rocr-exports.tsv"], "libhsa-runtime64.so.1");
}
