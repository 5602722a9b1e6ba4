//! `rocload agents [--json]`: the agents available to load code on.

use std::process::ExitCode;

use rocload::loader::{Agent, SoftAgent};
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
    backend: rocload::loader::BackendKind,
}

#[derive(Serialize)]
struct Report {
    agents: Vec<Row>,
}

/// Runs `rocload agents`. The software agent only, until the HSA backend lands.
pub fn run(args: Args) -> CliResult {
    let soft = SoftAgent::from_env()?;
    let report = Report { agents: vec![Row { name: soft.isa().isa_name(), backend: soft.backend() }] };
    if args.json {
        super::print(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    } else {
        let text: String = report.agents.iter().map(|a| format!("{} ({:?})\n", a.name, a.backend).to_lowercase()).collect();
        super::print(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
