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

/// Runs `rocload select`: exit 0 when every bundle has a choice, the table (or JSON) on
/// standard output. Otherwise exit 1 with the explanation on stderr and nothing on standard
/// output, except that `--json` still prints its document there.
pub fn run(args: Args, options: &ReadOptions) -> CliResult {
    let agent = super::load::parse_agent(Some(args.agent))?;
    let policy = super::load::parse_policy(args.policy.as_deref())?;
    let file = MappedFile::open(&args.file)?;
    let containers = read_containers(file.bytes(), options)?;
    super::verify_all(&containers, options)?;
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
    let failed: Vec<String> = bundles
        .iter()
        .filter(|b| b.selection.chosen.is_none())
        .map(|b| b.index.to_string())
        .collect();
    let report = SelectReport {
        agent,
        policy,
        bundles,
    };
    if args.json {
        // The document is the answer either way; the failure is its exit status.
        super::print(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    } else if failed.is_empty() {
        let mut text = format!("agent {}, policy {}\n", agent.isa_name(), policy.as_str());
        table(&mut text, &report, false)?;
        super::print(&text)?;
    }
    if failed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    // One explanation, on stderr: what failed, then (in text mode) every bundle's verdicts
    // with the hints of those that failed. Standard output stays empty.
    let mut text = format!(
        "rocload: {}: no code object can run on agent {} (policy {}) in bundle{} {}\n",
        args.file.display(),
        agent.isa_name(),
        policy.as_str(),
        if failed.len() == 1 { "" } else { "s" },
        failed.join(", ")
    );
    if !args.json {
        table(&mut text, &report, true)?;
    }
    use std::io::Write as _;
    std::io::stderr().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::from(1))
}

/// The verdicts of every bundle, one entry a line, the chosen one starred; with `hints`, the
/// hints of bundles without a choice.
fn table(text: &mut String, report: &SelectReport<'_>, hints: bool) -> std::fmt::Result {
    for b in &report.bundles {
        let chosen = b.selection.chosen_candidate().map_or("none", |c| c.id);
        writeln!(text, "bundle {}: {chosen}", b.index)?;
        for c in &b.selection.candidates {
            let star = if Some(c.index) == b.selection.chosen {
                "*"
            } else {
                " "
            };
            writeln!(text, "  {star} {:<48} {}", c.id, c.verdict)?;
        }
        if hints && b.selection.chosen.is_none() {
            for line in b.selection.hint().iter().flat_map(|h| h.lines()) {
                writeln!(text, "hint: {line}")?;
            }
        }
    }
    Ok(())
}
