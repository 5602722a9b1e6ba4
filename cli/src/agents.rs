//! `rocload agents [--json]`: the agents code would be loaded on, as `ROCLOAD_BACKEND` chooses
//! them (auto, hsa, soft), and what happened with the HSA runtime: the library found, whether
//! it is in use, and why not.

use std::fmt::Write as _;
use std::process::ExitCode;

use rocload::backend::HsaStatus;
use rocload::loader::BackendKind;
use rocload::runtime::config::Config;
use serde::Serialize;

use super::CliResult;

/// Arguments of `rocload agents`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Row {
    name: String,
    backend: BackendKind,
}

#[derive(Serialize)]
struct Report {
    agents: Vec<Row>,
    hsa: HsaStatus,
}

/// Runs `rocload agents`. With `ROCLOAD_BACKEND=hsa` an unusable HSA runtime is an error.
pub fn run(args: Args) -> CliResult {
    let set = Config::global().agents()?;
    let report = Report {
        agents: set
            .agents
            .iter()
            .map(|a| Row {
                name: a.isa().isa_name(),
                backend: a.backend(),
            })
            .collect(),
        hsa: set.hsa,
    };
    if args.json {
        super::print(&(serde_json::to_string_pretty(&report)? + "\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    for a in &report.agents {
        let backend = match a.backend {
            BackendKind::Soft => "soft",
            BackendKind::Hsa => "hsa",
        };
        writeln!(text, "{} ({backend})", a.name)?;
    }
    let hsa = &report.hsa;
    let library = hsa.library.as_deref().unwrap_or("no library");
    match (hsa.tried, hsa.available, &hsa.error) {
        (false, _, _) => writeln!(text, "HSA runtime: not tried (ROCLOAD_BACKEND=soft)")?,
        (true, true, _) => writeln!(text, "HSA runtime: {library}, in use")?,
        (true, false, Some(error)) => writeln!(text, "HSA runtime: unavailable: {error}")?,
        (true, false, None) => writeln!(text, "HSA runtime: {library}, unavailable")?,
    }
    super::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
