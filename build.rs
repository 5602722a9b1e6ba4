//! Build script: turns data tables into code. Needs no ROCm, libclang or GPU.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
