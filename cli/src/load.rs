//! `rocload load FILE... --agent ISA [--policy strict|extended] [--json] [--dump-dir DIR]
//! [--define NAME=ADDR]...`: loads code objects, or the agent's best entries of fat
//! binaries, on the software agent: explicitly listed files into one executable linked
//! across code objects, each bundle of a host binary into its own (as clr does).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use rocload::backend::SoftAgent;
use rocload::container::{read_containers, MappedFile, ReadOptions};
use rocload::loader::fat_binary::module_for_agent;
use rocload::loader::{Linker, LoadedSymbol, Module};
use rocload::runtime::config::Config;
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
    #[arg(long, value_parser = parse_isa)]
    agent: Option<AgentIsa>,
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
    #[arg(long = "define", value_name = "NAME=ADDR", value_parser = parse_define)]
    defines: Vec<(String, u64)>,
}

#[derive(Serialize)]
struct Report {
    agent: String,
    policy: &'static str,
    executables: usize,
    code_objects: Vec<CodeObjectRow>,
    symbols: Vec<SymbolRow>,
}

#[derive(Serialize)]
struct CodeObjectRow {
    executable: usize,
    source: String,
    target: String,
    base: u64,
    size: u64,
    load_delta: u64,
    load_order: usize,
    uri: String,
}

/// A symbol, with `code_object` numbered across every executable (as in `code_objects`).
#[derive(Serialize)]
struct SymbolRow {
    #[serde(flatten)]
    symbol: LoadedSymbol,
    #[serde(rename = "code_object")]
    global_code_object: usize,
}

/// Parses `--agent` (a usage error when invalid; the override applies later).
pub(super) fn parse_isa(text: &str) -> Result<AgentIsa, String> {
    text.parse::<AgentIsa>().map_err(|e| e.to_string())
}

pub(super) fn parse_agent(agent: Option<AgentIsa>) -> Result<AgentIsa, Box<dyn std::error::Error>> {
    Ok(match agent {
        Some(isa) => Config::global().apply_override(isa)?,
        None => Config::global().soft_agent_isa()?,
    })
}

pub(super) fn parse_policy(policy: Option<&str>) -> Result<Policy, Box<dyn std::error::Error>> {
    Ok(match policy {
        Some(p) => Policy::from_env_value(Some(p))?,
        None => Config::global().policy.clone()?,
    })
}

/// Parses `--define NAME=ADDR` (a usage error when malformed).
fn parse_define(text: &str) -> Result<(String, u64), String> {
    let (name, addr) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: expected NAME=ADDR"))?;
    if name.is_empty() {
        return Err(format!("{text:?}: the name is empty"));
    }
    let value = match addr.strip_prefix("0x").or_else(|| addr.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => addr.parse().ok(),
    };
    let value = value
        .ok_or_else(|| format!("{text:?}: {addr:?} is not an address (hex with 0x, or decimal)"))?;
    Ok((name.to_string(), value))
}

/// Runs `rocload load`. Mirrors what a HIP program gets: every bundle of a host binary is
/// loaded into its own executable, as clr does with each registered fat binary (template
/// kernels instantiated in many translation units are defined in many bundles). The other
/// files given (code objects, bundle and CCOB files, section dumps) contribute one module
/// per container to one executable, linked across code objects.
pub fn run(args: Args, options: &ReadOptions) -> CliResult {
    let isa = parse_agent(args.agent)?;
    let policy = parse_policy(args.policy.as_deref())?;
    let mut linker = Linker::new();
    linker.policy(policy);
    for (name, addr) in &args.defines {
        linker.define(name, *addr)?;
    }
    // (label, modules) per executable; the linked group of explicitly listed files first.
    let mut linked = Vec::new();
    let mut separate: Vec<(String, Vec<Module>)> = Vec::new();
    for path in &args.files {
        let file = MappedFile::open(path)?;
        let label = path.display().to_string();
        let containers =
            read_containers(file.bytes(), options).map_err(|e| format!("{label}: {e}"))?;
        let host_binary = containers.iter().any(|l| l.section.is_some());
        for l in &containers {
            let module = module_for_agent(l, &label, &isa, policy, options).map_err(|e| {
                if containers.len() == 1 {
                    format!("{label}: {e}")
                } else {
                    format!("{label}: bundle {}: {e}", l.index)
                }
            })?;
            if host_binary {
                separate.push((format!("{label} bundle {}", l.index), vec![module]));
            } else {
                linked.push(module);
            }
        }
    }
    let agent = SoftAgent::new(isa).shared();
    let mut executables = Vec::new();
    if !linked.is_empty() {
        executables.push(linker.link(&agent, &linked)?);
    }
    for (label, modules) in &separate {
        executables.push(
            linker
                .link(&agent, modules)
                .map_err(|e| format!("{label}: {e}"))?,
        );
    }
    let mut code_objects = Vec::new();
    let mut symbols = Vec::new();
    let mut images = Vec::new();
    for (x, exe) in executables.iter().enumerate() {
        let first = code_objects.len();
        for (i, c) in exe.code_objects().iter().enumerate() {
            code_objects.push(CodeObjectRow {
                executable: x,
                source: c.module.source().to_string(),
                target: c.module.target().target.to_string(),
                base: c.base,
                size: c.size,
                load_delta: c.load_delta,
                load_order: c.load_order,
                uri: c.uri.clone(),
            });
            images.push((x, i));
        }
        symbols.extend(exe.symbols().iter().map(|s| SymbolRow {
            global_code_object: first + s.code_object,
            symbol: s.clone(),
        }));
    }
    if let Some(dir) = &args.dump_dir {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for (n, &(x, i)) in images.iter().enumerate() {
            let image = executables[x]
                .image(i)
                .ok_or("backend cannot read images back")?;
            let path = dir.join(format!("{n}.bin"));
            std::fs::write(&path, image).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    let report = Report {
        agent: agent.isa().isa_name(),
        policy: policy.as_str(),
        executables: executables.len(),
        code_objects,
        symbols,
    };
    if args.json {
        super::print(&(serde_json::to_string_pretty(&report)? + "\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = format!(
        "agent {} (software), policy {}, {} executable(s)\n",
        report.agent, report.policy, report.executables
    );
    for (i, c) in report.code_objects.iter().enumerate() {
        writeln!(
            text,
            "code object {i}: {} ({}) at {:#x}, {} bytes, executable {}, loaded #{}",
            c.source, c.target, c.base, c.size, c.executable, c.load_order
        )?;
    }
    for row in &report.symbols {
        let s = &row.symbol;
        let name = s.demangled.as_deref().unwrap_or(&s.name);
        writeln!(
            text,
            "  {:<8} {:#014x} {:>6}  [{}] {name}",
            s.class.to_string(),
            s.address,
            s.size,
            row.global_code_object
        )?;
    }
    super::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
