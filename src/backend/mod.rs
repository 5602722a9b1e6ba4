//! The agents code is loaded on: the in-process software agent ([`soft`]) and ROCr's GPU
//! agents through HSA ([`hsa`]), and the choice between them ([`choose`], driven by
//! `ROCLOAD_BACKEND` through `crate::runtime::config`).
//!
//! Each implements the loader's [`Agent`](crate::loader::Agent) and
//! [`ExecutableBackend`](crate::loader::ExecutableBackend) traits; the loader never names them.

pub mod choose;
pub mod hsa;
pub mod soft;

pub use choose::{
    choose_agents, AgentSet, BackendChoice, BackendConfig, BackendError, HsaStatus, HsaUnavailable,
};
pub use hsa::{HsaAgent, HsaExecutable, HsaSystem};
pub use soft::SoftAgent;
