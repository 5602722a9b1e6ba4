//! Raw HSA runtime bindings, loaded at run time.
//!
//! Not yet generated: the HSA backend issue adds the bindgen output and the loader.
//! Nothing here links against ROCm at build time.
