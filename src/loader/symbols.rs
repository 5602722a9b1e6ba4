//! The symbol table of a linked executable: every kernel, device function and variable of
//! every code object, looked up by raw or demangled name (kernels also by `name.kd`) and by
//! address. Built once at link time and immutable afterwards, so lookups from any number of
//! threads take no lock.

use rustc_hash::FxHashMap;

use super::module::SymbolClass;
use crate::code_object::{Binding, Visibility};

/// A symbol of a loaded executable.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct LoadedSymbol {
    /// Raw name (kernels without `.kd`).
    pub name: String,
    /// Demangled C++ name, if mangled.
    pub demangled: Option<String>,
    /// Kernel, function or variable.
    #[serde(rename = "kind")]
    pub class: SymbolClass,
    /// Address on the agent (a kernel's descriptor, what a dispatch packet takes).
    pub address: u64,
    /// Size in bytes.
    pub size: u64,
    /// For kernels, the address of the code.
    pub code_address: Option<u64>,
    /// Index of the code object in [`super::Executable::code_objects`].
    pub code_object: usize,
    /// Visible to other code objects.
    pub exported: bool,
    /// ELF binding.
    #[serde(skip)]
    pub binding: Binding,
    /// ELF visibility.
    #[serde(skip)]
    pub visibility: Visibility,
}

/// Name and address indexes over the symbols.
#[derive(Debug, Default)]
pub struct SymbolTable {
    symbols: Vec<LoadedSymbol>,
    /// Fx hashing: names are short and trusted enough (our own symbol table), and the hash
    /// dominates a lookup.
    by_name: FxHashMap<Box<str>, u32>,
    /// (start address, symbol index), sorted.
    by_address: Vec<(u64, u32)>,
}

impl SymbolTable {
    /// Indexes `symbols`. When names collide, an exported symbol wins over a local one, then
    /// the earlier code object.
    pub fn new(symbols: Vec<LoadedSymbol>) -> Self {
        let mut by_name: FxHashMap<Box<str>, u32> = FxHashMap::default();
        by_name.reserve(symbols.len() * 2);
        let mut insert = |key: &str, i: u32, symbols: &[LoadedSymbol]| match by_name.get(key) {
            Some(&old) if symbols[old as usize].exported || !symbols[i as usize].exported => {}
            _ => {
                by_name.insert(key.into(), i);
            }
        };
        for (i, s) in symbols.iter().enumerate() {
            insert(&s.name, i as u32, &symbols);
            if let Some(d) = &s.demangled {
                insert(d, i as u32, &symbols);
                // Also as tools usually ask: `foo` for `foo(int)`, `axpy<float>` for
                // `void axpy<float>(float, ...)`.
                if let Some(short) = short_name(d) {
                    insert(short, i as u32, &symbols);
                }
            }
        }
        let mut by_address: Vec<(u64, u32)> = symbols
            .iter()
            .enumerate()
            .map(|(i, s)| (s.address, i as u32))
            .collect();
        by_address.sort_unstable();
        SymbolTable {
            symbols,
            by_name,
            by_address,
        }
    }

    /// All symbols, in code-object order.
    pub fn iter(&self) -> std::slice::Iter<'_, LoadedSymbol> {
        self.symbols.iter()
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The symbol called `name` (raw, demangled, or demangled without parameters); a kernel
    /// also answers to `name.kd`.
    pub fn get(&self, name: &str) -> Option<&LoadedSymbol> {
        if let Some(&i) = self.by_name.get(name) {
            return Some(&self.symbols[i as usize]);
        }
        let kernel = name.strip_suffix(".kd")?;
        self.by_name
            .get(kernel)
            .map(|&i| &self.symbols[i as usize])
            .filter(|s| s.class == SymbolClass::Kernel)
    }

    /// Every symbol called `name`, across code objects (local names may repeat).
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a LoadedSymbol> + 'a {
        self.symbols
            .iter()
            .filter(move |s| s.name == name || s.demangled.as_deref() == Some(name))
    }

    /// The symbol containing `address`, and the offset into it. A zero-size symbol contains
    /// only its own address; where symbols overlap, the nearest start wins.
    pub fn at(&self, address: u64) -> Option<(&LoadedSymbol, u64)> {
        let end = self
            .by_address
            .partition_point(|&(start, _)| start <= address);
        // Walk back over candidates starting at or before `address`; the nearest one that
        // contains it wins. Symbols rarely nest, so this stops after a step or two.
        for &(start, i) in self.by_address[..end].iter().rev().take(8) {
            let s = &self.symbols[i as usize];
            let offset = address - start;
            if offset < s.size || (offset == 0 && s.size == 0) {
                return Some((s, offset));
            }
        }
        None
    }
}

/// A demangled name without its parameter list and template function return type:
/// `ns::f<int>` from `void ns::f<int>(int, float)`. `None` when there is nothing to strip.
fn short_name(demangled: &str) -> Option<&str> {
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in demangled.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ' ' if depth == 0 => start = i + 1,
            '(' if depth == 0 => {
                return (start > 0 || i < demangled.len())
                    .then(|| &demangled[start..i])
                    .filter(|s| !s.is_empty())
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::short_name;

    #[test]
    fn short_names_drop_parameters_and_return_types() {
        assert_eq!(short_name("dl::mix(int, float)"), Some("dl::mix"));
        assert_eq!(
            short_name("void axpy<float>(float, float const*, float*, int)"),
            Some("axpy<float>")
        );
        assert_eq!(
            short_name("std::pair<int, int> f<std::pair<int, int> >(int)"),
            Some("f<std::pair<int, int> >")
        );
        assert_eq!(short_name("plain"), None);
    }
}
