//! `rocload select FILE --agent ISA [--policy strict|extended] [--json]`: for every bundle in
//! FILE, the entry the agent should run, and why each entry was accepted or refused.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use rocload::container::{read_containers, MappedFile, ReadOptions};
use rocload::target::{select, AgentIsa, BundleChoice, SelectReport};

use super::CliResult;

/// Arguments of `rocload select`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A host ELF file, bundle, compressed bundle, section dump or code object.
    file: PathBuf,
    /// The agent: a target id (`gfx90a:xnack+`) or full ISA name. Features left out take
    /// the defaults: xnack off, sramecc on where the processor has it.
    #[arg(long, value_parser = super::load::parse_isa)]
    agent: AgentIsa,
    /// ISA compatibility policy (default: `ROCLOAD_ISA_POLICY`, else strict).
    #[arg(long, value_parser = ["strict", "extended"])]
    policy: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `rocload select`: exit 0 when every bundle has a choice, 1 otherwise (with the
/// explanation on stderr).
pub fn run(args: Args, options: &ReadOptions) -> CliResult {
    let agent = super::load::parse_agent(Some(args.agent))?;
    let policy = super::load::parse_policy(args.policy.as_deref())?;
    let file = MappedFile::open(&args.file)?;
    let containers = read_containers(file.bytes(), options)?;
    let entries = containers
        .iter()
        .map(|l| l.entries())
        .collect::<Result<Vec<_>, _>>()?;
    let ids: Vec<Vec<&str>> = entries
        .iter()
        .map(|e| e.iter().map(|e| e.id.as_ref()).collect())
        .collect();
    let bundles: Vec<BundleChoice<'_>> = containers
        .iter()
        .zip(&ids)
        .map(|(l, ids)| BundleChoice {
            index: l.index,
            selection: select(&agent, ids, policy),
        })
        .collect();
    let all_chosen = bundles.iter().all(|b| b.selection.chosen.is_some());
    let report = SelectReport {
        agent,
        policy,
        bundles,
    };
    if args.json {
        super::print(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    } else {
        let mut text = format!("agent {}, policy {}\n", agent.isa_name(), policy.as_str());
        for b in &report.bundles {
            let chosen = b.selection.chosen_candidate().map_or("none", |c| c.id);
            writeln!(text, "bundle {}: {chosen}", b.index)?;
            for c in &b.selection.candidates {
                writeln!(
                    text,
                    "  {} {:<48} {}",
                    if Some(c.index) == b.selection.chosen {
                        "*"
                    } else {
                        " "
                    },
                    c.id,
                    c.verdict
                )?;
            }
        }
        super::print(&text)?;
    }
    if !all_chosen {
        for b in report
            .bundles
            .iter()
            .filter(|b| b.selection.chosen.is_none())
        {
            eprintln!(
                "rocload: bundle {}: {}",
                b.index,
                b.selection.no_match_error()
            );
        }
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
