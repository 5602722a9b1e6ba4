//! Reads the GNU-style text of `llvm-readelf --syms --dyn-syms --notes --relocs`.

/// One symbol line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sym {
    pub num: u32,
    pub value: u64,
    pub size: u64,
    pub kind: String,
    pub bind: String,
    pub vis: String,
    pub ndx: String,
    pub name: String,
}

/// One relocation line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reloc {
    pub offset: u64,
    pub r_type: u32,
    pub type_name: String,
    pub symbol: Option<String>,
    pub addend: i64,
}

/// Everything read from one output.
#[derive(Debug, Default)]
pub struct Readelf {
    /// Symbol tables by section name (`.dynsym`, `.symtab`).
    pub symbols: Vec<(String, Vec<Sym>)>,
    /// Relocation sections by name.
    pub relocations: Vec<(String, Vec<Reloc>)>,
    /// The YAML text of each AMDGPU metadata note.
    pub metadata_yaml: Vec<String>,
    /// `ABI Version:` of the file header (`-h`), when printed.
    pub abi_version: Option<u8>,
    /// `Flags:` of the file header: the value and the names readelf decodes from it.
    pub flags: Option<(u32, Vec<String>)>,
}

impl Readelf {
    pub fn symbols(&self, table: &str) -> Option<&[Sym]> {
        self.symbols
            .iter()
            .find(|(n, _)| n == table)
            .map(|(_, s)| s.as_slice())
    }
}

fn quoted(line: &str) -> Option<String> {
    let start = line.find('\'')? + 1;
    let end = start + line[start..].find('\'')?;
    Some(line[start..end].to_owned())
}

fn size(text: &str) -> u64 {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
        None => text.parse().unwrap(),
    }
}

/// Parses the whole output.
pub fn parse(text: &str) -> Readelf {
    let mut out = Readelf::default();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if let Some(v) = trimmed.strip_prefix("ABI Version:") {
            out.abi_version = Some(v.trim().parse().unwrap());
        } else if let Some(v) = trimmed.strip_prefix("Flags:") {
            let mut parts = v.split(',').map(str::trim);
            let value =
                u32::from_str_radix(parts.next().unwrap().trim_start_matches("0x"), 16).unwrap();
            out.flags = Some((value, parts.map(str::to_owned).collect()));
        } else if trimmed.starts_with("Symbol table '") {
            let name = quoted(trimmed).unwrap();
            let mut syms = Vec::new();
            // Header line, then entries until a blank line.
            lines.next();
            while let Some(l) = lines.peek() {
                let l = l.trim();
                let is_entry = l
                    .split_once(':')
                    .is_some_and(|(n, _)| n.trim().parse::<u32>().is_ok());
                if !is_entry {
                    break;
                }
                lines.next();
                let (num, rest) = l.split_once(':').unwrap();
                let f: Vec<&str> = rest.split_whitespace().collect();
                syms.push(Sym {
                    num: num.trim().parse().unwrap_or_else(|e| panic!("{e}: {l:?}")),
                    value: u64::from_str_radix(f[0], 16).unwrap(),
                    size: size(f[1]),
                    kind: f[2].to_owned(),
                    bind: f[3].to_owned(),
                    vis: f[4].to_owned(),
                    ndx: f[5].to_owned(),
                    name: f.get(6..).map(|n| n.join(" ")).unwrap_or_default(),
                });
            }
            out.symbols.push((name, syms));
        } else if trimmed.starts_with("Relocation section '") {
            let name = quoted(trimmed).unwrap();
            let mut relocs = Vec::new();
            lines.next();
            while let Some(l) = lines.peek() {
                let l = l.trim();
                if l.is_empty() || !l.bytes().next().is_some_and(|b| b.is_ascii_hexdigit()) {
                    break;
                }
                lines.next();
                let f: Vec<&str> = l.split_whitespace().collect();
                let offset = u64::from_str_radix(f[0], 16).unwrap();
                let info = u64::from_str_radix(f[1], 16).unwrap();
                let r_type = (info & 0xffff_ffff) as u32;
                let (symbol, addend) = if info >> 32 == 0 {
                    // No symbol: the addend alone, in hex, maybe negative.
                    let a = f.get(3).copied().unwrap_or("0");
                    (None, parse_addend(None, a))
                } else {
                    // value name [+|-] addend
                    let n = f.len();
                    let sign = f[n - 2];
                    let name = f[4..n - 2].join(" ");
                    (Some(name), parse_addend(Some(sign), f[n - 1]))
                };
                relocs.push(Reloc {
                    offset,
                    r_type,
                    type_name: f[2].to_owned(),
                    symbol,
                    addend,
                });
            }
            out.relocations.push((name, relocs));
        } else if trimmed == "AMDGPU Metadata:" {
            let mut yaml = String::new();
            let mut started = false;
            for l in lines.by_ref() {
                if !started {
                    if l.trim() == "---" {
                        started = true;
                    }
                    continue;
                }
                if l.trim() == "..." {
                    break;
                }
                yaml.push_str(l);
                yaml.push('\n');
            }
            out.metadata_yaml.push(yaml);
        }
    }
    out
}

fn parse_addend(sign: Option<&str>, text: &str) -> i64 {
    let (neg, digits) = match (sign, text.strip_prefix('-')) {
        (Some("-"), _) => (true, text),
        (_, Some(d)) => (true, d),
        _ => (false, text),
    };
    let v = u64::from_str_radix(digits, 16).unwrap() as i64;
    if neg {
        v.wrapping_neg()
    } else {
        v
    }
}
