//! `#[export]`: makes a function a C entry point of the library being built, with the symbol
//! version its data gives it. Used through `rocload_ffi::export`.
//!
//! `#[export]` exports the function under its own name (`#[no_mangle]`); `#[export(name =
//! "_Z24hipExtModuleLaunchKernel...")]` under another (a C++-mangled one). Beside the function
//! it places `.symver NAME, NAME@@NODE` (when the build script set `cfg(rocload_symver)`), NODE
//! being what the merged table the build script wrote to `OUT_DIR` says for NAME (see
//! `rocload_ffi::versions`). A name the table has no node for is a compile error, so an entry
//! point can never be exported at a version nobody chose. The directive sits in the same
//! module as the function, hence in the same object file, where the assembler needs it.

use std::sync::OnceLock;

use proc_macro::{Delimiter, TokenStream, TokenTree};

// The table format is shared with the build scripts that write it.
#[allow(dead_code)]
#[path = "../../src/versions.rs"]
mod versions;

/// See the crate documentation.
#[proc_macro_attribute]
pub fn export(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr, item.clone()) {
        Ok(tokens) => tokens,
        Err(message) => {
            let error: TokenStream = format!("compile_error!({message:?});")
                .parse()
                .expect("a compile_error! invocation");
            error.into_iter().chain(item).collect()
        }
    }
}

fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream, String> {
    let explicit = explicit_name(attr)?;
    let function =
        function_name(&item).ok_or("#[export] applies to a function (`fn NAME(...)`)")?;
    let symbol = explicit.clone().unwrap_or_else(|| function.clone());
    let node = node_of(&symbol)?;
    let attribute = match &explicit {
        Some(name) => format!("#[export_name = {name:?}]"),
        None => "#[no_mangle]".to_owned(),
    };
    let directive = format!(
        "#[cfg({cfg})] ::core::arch::global_asm!({text:?});",
        cfg = versions::CFG,
        text = format!(".symver {symbol}, {symbol}@@{node}")
    );
    let mut out: TokenStream = attribute.parse().map_err(|e| format!("{e}"))?;
    out.extend(item);
    out.extend(
        directive
            .parse::<TokenStream>()
            .map_err(|e| format!("{e}"))?,
    );
    Ok(out)
}

/// `name = "SYMBOL"`, or nothing.
fn explicit_name(attr: TokenStream) -> Result<Option<String>, String> {
    let tokens: Vec<TokenTree> = attr.into_iter().collect();
    match tokens.as_slice() {
        [] => Ok(None),
        [TokenTree::Ident(key), TokenTree::Punct(eq), TokenTree::Literal(value)]
            if key.to_string() == "name" && eq.as_char() == '=' =>
        {
            let text = value.to_string();
            text.strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .filter(|t| !t.is_empty() && !t.contains(['\\', '"', ' ']))
                .map(|t| Some(t.to_owned()))
                .ok_or_else(|| format!("#[export(name = ...)] takes a plain string, not {text}"))
        }
        _ => Err("#[export] takes nothing or `name = \"SYMBOL\"`".to_owned()),
    }
}

/// The identifier after `fn`, outside any group (so not one in the body).
fn function_name(item: &TokenStream) -> Option<String> {
    let mut tokens = item.clone().into_iter();
    while let Some(token) = tokens.next() {
        match token {
            TokenTree::Ident(ident) if ident.to_string() == "fn" => {
                return match tokens.next()? {
                    TokenTree::Ident(name) => Some(name.to_string()),
                    _ => None,
                };
            }
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => return None,
            _ => {}
        }
    }
    None
}

/// The node of `symbol` in the table the crate's build script wrote.
fn node_of(symbol: &str) -> Result<String, String> {
    static TABLE: OnceLock<Result<versions::VersionTable, String>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let dir = std::env::var_os("OUT_DIR").ok_or(
            "#[export] needs the crate's build script to call rocload_ffi::versions::build::configure (OUT_DIR is not set)",
        )?;
        let path = std::path::Path::new(&dir).join(versions::TABLE_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "#[export] reads {} (written by rocload_ffi::versions::build::configure): {e}",
                path.display()
            )
        })?;
        let mut table = versions::VersionTable::new();
        table
            .parse(&path.display().to_string(), &text)
            .map_err(|e| e.to_string())?;
        Ok(table)
    });
    let table = table.as_ref().map_err(Clone::clone)?;
    table
        .node_of(symbol)
        .map(str::to_owned)
        .ok_or_else(|| format!("{symbol} has no symbol version in the library's export tables: add it to the data its build script reads"))
}
