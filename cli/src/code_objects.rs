//! The code objects of a file that `--target ID` and `--bundle N` select: shared by the
//! subcommands that look inside code objects (`symbols`, `disasm`). `--target` names, in each
//! bundle, the entry `extract --target` would take (clang-offload-bundler's rule).

use std::borrow::Cow;
use std::path::Path;

use rocload::container::{read_containers, ReadOptions};
use rocload::target::Request;

/// One selected code object.
pub struct Selected<'a> {
    /// Bundle number, as `rocload ls` numbers them.
    pub bundle: usize,
    /// The entry id (`hipv4-amdgcn-amd-amdhsa--gfx1030`, ...).
    pub id: String,
    /// The ELF image.
    pub bytes: Cow<'a, [u8]>,
}

/// Every code-object entry of `data` (a code object, or anything holding bundles) matching
/// `target` and `bundle`. None found is an error that lists the entries passed over and why.
pub fn select<'a>(
    file: &Path,
    data: &'a [u8],
    target: Option<&str>,
    bundle: Option<usize>,
    options: &ReadOptions,
) -> Result<Vec<Selected<'a>>, Box<dyn std::error::Error>> {
    let containers = read_containers(data, options)?;
    let request = target.map(Request::parse).transpose()?;
    let mut selected = Vec::new();
    // Entries passed over, with why, for the error when no code object is found.
    let mut skipped = Vec::new();
    for l in containers
        .iter()
        .filter(|l| bundle.is_none_or(|b| b == l.index))
    {
        let entries = l.entries()?;
        let chosen = request.as_ref().map(|r| {
            let choice = r.choose(entries.iter().map(|e| e.id.as_ref()));
            if choice.chosen.is_none() {
                skipped.extend(choice.candidates.iter().filter_map(|(id, verdict)| {
                    let reason = verdict.as_ref().err()?;
                    Some(format!("bundle {}: {id} ({reason})", l.index))
                }));
            }
            choice.chosen
        });
        for (i, e) in entries.iter().enumerate() {
            if chosen.is_some_and(|c| c != Some(i)) {
                continue;
            }
            // Host entries and bitcode are not code objects.
            if e.size == 0 {
                skipped.push(format!("bundle {}: {} (empty)", l.index, e.id));
                continue;
            }
            let bytes = l.extract_with(i, &options.limits)?;
            if !bytes.starts_with(b"\x7fELF") {
                let what = if bytes.starts_with(b"BC\xc0\xde") {
                    "LLVM bitcode".to_string()
                } else {
                    format!("not ELF: starts with {:02x?}", &bytes[..bytes.len().min(4)])
                };
                skipped.push(format!("bundle {}: {} ({what})", l.index, e.id));
                continue;
            }
            selected.push(Selected {
                bundle: l.index,
                id: e.id.to_string(),
                bytes,
            });
        }
    }
    if selected.is_empty() {
        let file = file.display();
        let seen = if skipped.is_empty() {
            String::new()
        } else {
            format!("; entries: {}", skipped.join(", "))
        };
        return Err(match (target, bundle) {
            (Some(t), _) => format!("{file}: no code object entry matches {t:?}{seen}").into(),
            (None, Some(b)) => format!("{file}: no code object in bundle {b}{seen}").into(),
            (None, None) => format!(
                "{file}: no code object in {} bundle(s){seen}",
                containers.len()
            )
            .into(),
        });
    }
    Ok(selected)
}
