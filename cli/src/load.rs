//! `rocload load FILE... --agent ISA [--policy strict|extended] [--json] [--dump-dir DIR]
//! [--define NAME=ADDR]...`: loads code objects, or the agent's best entries of fat
//! binaries, into one executable on the software agent, in dependency order.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use rocload::backend::SoftAgent;
use rocload::container::{MappedFile, ReadOptions};
use rocload::loader::fat_binary::modules_for_agent;
use rocload::loader::Linker;
use rocload::runtime::config;
use rocload::target::{AgentIsa, Policy};
use serde::Serialize;

use super::CliResult;

/// Arguments of `rocload load`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Code objects or fat binaries (bundles, compressed bundles, host ELF files).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The software agent's ISA: a target id (`gfx90a:xnack+`) or full ISA name. Default:
    /// `ROCLOAD_SOFT_ISA`, else gfx1030.
    #[arg(long)]
    agent: Option<String>,
    /// ISA compatibility policy (default: `ROCLOAD_ISA_POLICY`, else strict).
    #[arg(long, value_parser = ["strict", "extended"])]
    policy: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Write each code object's loaded, relocated image to DIR/<index>.bin.
    #[arg(long)]
    dump_dir: Option<PathBuf>,
    /// Define NAME at ADDR (hex with 0x, or decimal) for imports, like
    /// `hsa_executable_agent_global_variable_define`.
    #[arg(long = "define", value_name = "NAME=ADDR")]
    defines: Vec<String>,
}

#[derive(Serialize)]
struct Report<'a> {
    agent: String,
    policy: &'static str,
    code_objects: Vec<CodeObjectRow>,
    symbols: Vec<&'a rocload::loader::LoadedSymbol>,
}

#[derive(Serialize)]
struct CodeObjectRow {
    source: String,
    target: String,
    base: u64,
    size: u64,
    load_delta: u64,
    load_order: usize,
    uri: String,
}

pub(super) fn parse_agent(agent: Option<&str>) -> Result<AgentIsa, Box<dyn std::error::Error>> {
    Ok(match agent {
        Some(text) => config::apply_override(text.parse::<AgentIsa>()?)?,
        None => config::soft_agent_isa()?,
    })
}

pub(super) fn parse_policy(policy: Option<&str>) -> Result<Policy, Box<dyn std::error::Error>> {
    Ok(match policy {
        Some(p) => Policy::from_env_value(Some(p))?,
        None => config::policy()?,
    })
}

fn parse_address(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// Runs `rocload load`.
pub fn run(args: Args) -> CliResult {
    let isa = parse_agent(args.agent.as_deref())?;
    let policy = parse_policy(args.policy.as_deref())?;
    let mut linker = Linker::new();
    linker.policy(policy);
    for d in &args.defines {
        let (name, addr) = d
            .split_once('=')
            .ok_or_else(|| format!("--define {d:?}: expected NAME=ADDR"))?;
        let addr = parse_address(addr)
            .ok_or_else(|| format!("--define {d:?}: {addr:?} is not an address"))?;
        linker.define(name, addr)?;
    }
    let mut modules = Vec::new();
    for path in &args.files {
        let file = MappedFile::open(path)?;
        let label = path.display().to_string();
        modules.extend(
            modules_for_agent(file.bytes(), &label, &isa, policy, &ReadOptions::default())
                .map_err(|e| format!("{label}: {e}"))?,
        );
    }
    let agent = SoftAgent::new(isa).shared();
    let exe = linker.link(&agent, &modules)?;
    if let Some(dir) = &args.dump_dir {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for i in 0..exe.code_objects().len() {
            let image = exe.image(i).ok_or("backend cannot read images back")?;
            let path = dir.join(format!("{i}.bin"));
            std::fs::write(&path, image).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    let rows: Vec<CodeObjectRow> = exe
        .code_objects()
        .iter()
        .map(|c| CodeObjectRow {
            source: c.module.source().to_string(),
            target: c.module.target().target.to_string(),
            base: c.base,
            size: c.size,
            load_delta: c.load_delta,
            load_order: c.load_order,
            uri: c.uri.clone(),
        })
        .collect();
    let report = Report {
        agent: agent.isa().isa_name(),
        policy: policy.as_str(),
        code_objects: rows,
        symbols: exe.symbols().iter().collect(),
    };
    if args.json {
        super::print(&(serde_json::to_string_pretty(&report)? + "\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = format!(
        "agent {} (software), policy {}\n",
        report.agent, report.policy
    );
    for (i, c) in report.code_objects.iter().enumerate() {
        writeln!(
            text,
            "code object {i}: {} ({}) at {:#x}, {} bytes, loaded #{}",
            c.source, c.target, c.base, c.size, c.load_order
        )?;
    }
    for s in &report.symbols {
        let name = s.demangled.as_deref().unwrap_or(&s.name);
        writeln!(
            text,
            "  {:<8} {:#014x} {:>6}  [{}] {name}",
            s.class.to_string(),
            s.address,
            s.size,
            s.code_object
        )?;
    }
    super::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
